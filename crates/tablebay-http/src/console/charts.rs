//! The table page's charts, drawn on the server as inline SVG (no script): the snapshot timeline (records,
//! data files and bytes after each snapshot, over time, each point coloured by the snapshot's operation) and the
//! histogram of live data-file sizes, whose bars below the compaction target's small-file threshold stand out.
//! Each point and bar carries a `<title>` (a tooltip and its accessible name) and `data-*` values; a table beside
//! each chart gives the same numbers as text.

use maud::{Markup, html};

use super::layout::{bytes, when_ms};

/// One snapshot as the timeline shows it (from its summary's totals).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SnapshotPoint {
    pub id: i64,
    pub timestamp_ms: i64,
    pub operation: String,
    pub records: u64,
    pub data_files: u64,
    pub bytes: u64,
}

/// One panel of the timeline: its label, the value it plots, and how a value reads.
type Series = (&'static str, fn(&SnapshotPoint) -> u64, fn(u64) -> String);

const WIDTH: f64 = 1000.0;
const PANEL: f64 = 120.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 15.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 18.0;

/// The CSS class of an operation's colour.
pub(super) fn operation_class(operation: &str) -> &'static str {
    match operation {
        "append" => "op-append",
        "replace" => "op-replace",
        "overwrite" => "op-overwrite",
        "delete" => "op-delete",
        _ => "op-other",
    }
}

fn operation_colour(operation: &str) -> &'static str {
    match operation {
        "append" => "#1f5fbf",
        "replace" => "#1e7b34",
        "overwrite" => "#9a6700",
        "delete" => "#b3261e",
        _ => "#6b7280",
    }
}

/// The timeline of `points` (in commit order): three panels sharing the time axis.
pub(super) fn timeline(points: &[SnapshotPoint]) -> Markup {
    let panels: [Series; 3] = [
        ("Records", |p| p.records, |v| v.to_string()),
        ("Data files", |p| p.data_files, |v| v.to_string()),
        ("Bytes", |p| p.bytes, bytes),
    ];
    let first = points.iter().map(|p| p.timestamp_ms).min().unwrap_or(0);
    let last = points.iter().map(|p| p.timestamp_ms).max().unwrap_or(0);
    let count = points.len();
    // Snapshots committed within the same millisecond: spread by position instead of time.
    let x_of = |index: usize, point: &SnapshotPoint| -> f64 {
        let span = WIDTH - LEFT - RIGHT;
        if last > first {
            LEFT + span * (point.timestamp_ms - first) as f64 / (last - first) as f64
        } else if count > 1 {
            LEFT + span * index as f64 / (count - 1) as f64
        } else {
            LEFT + span / 2.0
        }
    };
    let height = PANEL * panels.len() as f64 + BOTTOM;
    // Markers are drawn for every snapshot up to this many; beyond, the line alone (plus the table) tells.
    let markers = count <= 400;
    html! {
        figure {
            svg class="chart" id="snapshot-timeline" viewBox=(format!("0 0 {WIDTH} {height}")) role="img"
                aria-labelledby="timeline-caption" data-snapshots=(count) {
                @for (panel, (label, value, format)) in panels.iter().enumerate() {
                    @let top = PANEL * panel as f64;
                    @let max = points.iter().map(value).max().unwrap_or(0).max(1);
                    @let y_of = |v: u64| top + TOP + (PANEL - TOP - 10.0) * (1.0 - v as f64 / max as f64);
                    g class="panel" data-series=(label) {
                        text x="4" y=(top + 14.0) font-weight="600" { (label) }
                        text x=(LEFT - 6.0) y=(top + TOP + 4.0) text-anchor="end" { (format(max)) }
                        text x=(LEFT - 6.0) y=(top + PANEL - 10.0) text-anchor="end" { "0" }
                        line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(top + PANEL - 10.0) y2=(top + PANEL - 10.0) stroke="#c4cad4" {}
                        line x1=(LEFT) x2=(LEFT) y1=(top + TOP) y2=(top + PANEL - 10.0) stroke="#c4cad4" {}
                        @if count > 1 {
                            polyline fill="none" stroke="#7d8796" stroke-width="1.5" points=(
                                points.iter().enumerate()
                                    .map(|(i, p)| format!("{:.1},{:.1}", x_of(i, p), y_of(value(p))))
                                    .collect::<Vec<_>>().join(" ")
                            ) {}
                        }
                        @if markers {
                            @for (i, point) in points.iter().enumerate() {
                                circle cx=(format!("{:.1}", x_of(i, point))) cy=(format!("{:.1}", y_of(value(point)))) r="4"
                                    fill=(operation_colour(&point.operation))
                                    data-snapshot-id=(point.id) data-operation=(point.operation)
                                    data-value=(value(point)) {
                                    title { (format!("{} · {} · {} · {label} {}", point.id, point.operation, when_ms(point.timestamp_ms), format(value(point)))) }
                                }
                            }
                        }
                    }
                }
                @if let (Some(_), true) = (points.first(), count > 0) {
                    text x=(LEFT) y=(height - 4.0) { (when_ms(first)) }
                    text x=(WIDTH - RIGHT) y=(height - 4.0) text-anchor="end" { (when_ms(last)) }
                }
            }
            figcaption id="timeline-caption" {
                "Snapshot timeline: records, data files and bytes after each of " (count) " snapshots, coloured by operation."
            }
            div class="legend" aria-hidden="true" {
                @for op in ["append", "overwrite", "replace", "delete"] {
                    span { span class=(format!("swatch {}", operation_class(op))) {} (op) }
                }
            }
        }
    }
}

/// The upper bounds of the histogram's bins (the last bin is open).
const BIN_EDGES: [u64; 10] = [
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
    64 << 20,
    128 << 20,
    256 << 20,
    512 << 20,
    1 << 30,
];

/// The count of sizes in each bin, with its label and upper edge.
pub(super) fn bins(sizes: &[u64]) -> Vec<(String, u64, u64)> {
    let mut counts = vec![0u64; BIN_EDGES.len() + 1];
    for size in sizes {
        let bin = BIN_EDGES
            .iter()
            .position(|edge| size < edge)
            .unwrap_or(BIN_EDGES.len());
        if let Some(count) = counts.get_mut(bin) {
            *count += 1;
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| {
            let upper = BIN_EDGES.get(i).copied().unwrap_or(u64::MAX);
            let label = match (
                i.checked_sub(1).and_then(|j| BIN_EDGES.get(j)),
                BIN_EDGES.get(i),
            ) {
                (None, Some(hi)) => format!("< {}", short(*hi)),
                (Some(lo), Some(hi)) => format!("{}–{}", short(*lo), short(*hi)),
                (Some(lo), None) => format!("≥ {}", short(*lo)),
                (None, None) => String::new(),
            };
            (label, count, upper)
        })
        .collect()
}

fn short(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{}G", n >> 30),
        n if n >= 1 << 20 => format!("{}M", n >> 20),
        n => format!("{}K", n >> 10),
    }
}

/// The histogram of live data-file sizes; bins entirely below `small_below` bytes are the small files
/// compaction rewrites.
pub(super) fn histogram(sizes: &[u64], small_below: u64) -> Markup {
    let bins = bins(sizes);
    let max = bins.iter().map(|(_, c, _)| *c).max().unwrap_or(0).max(1);
    let height = 200.0;
    let plot = height - 50.0;
    let slot = (WIDTH - LEFT - RIGHT) / bins.len() as f64;
    let small = sizes.iter().filter(|s| **s < small_below).count();
    html! {
        figure {
            svg class="chart" id="file-size-histogram" viewBox=(format!("0 0 {WIDTH} {height}")) role="img"
                aria-labelledby="histogram-caption" data-files=(sizes.len()) data-small-files=(small) {
                text x=(LEFT - 6.0) y="24" text-anchor="end" { (max) }
                text x=(LEFT - 6.0) y=(plot + 10.0) text-anchor="end" { "0" }
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(plot + 10.0) y2=(plot + 10.0) stroke="#c4cad4" {}
                @for (i, (label, count, upper)) in bins.iter().enumerate() {
                    @let h = (plot - 10.0) * *count as f64 / max as f64;
                    @let x = LEFT + slot * i as f64 + 4.0;
                    @let is_small = *upper <= small_below;
                    rect x=(format!("{x:.1}")) y=(format!("{:.1}", plot + 10.0 - h)) width=(format!("{:.1}", slot - 8.0))
                        height=(format!("{h:.1}")) fill=(if is_small { "#c77700" } else { "#1f5fbf" })
                        data-bin=(label) data-count=(count) {
                        title { (format!("{label}: {count} files")) }
                    }
                    @if *count > 0 {
                        text x=(format!("{:.1}", x + (slot - 8.0) / 2.0)) y=(format!("{:.1}", plot + 6.0 - h)) text-anchor="middle" { (count) }
                    }
                    text x=(format!("{:.1}", x + (slot - 8.0) / 2.0)) y=(plot + 28.0) text-anchor="middle" { (label) }
                }
            }
            figcaption id="histogram-caption" {
                (sizes.len()) " live data files; " (small) " of them smaller than " (bytes(small_below))
                " (orange: the small files compaction rewrites)."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_their_bins() {
        let b = bins(&[0, 1000, 65_536, 2 << 20, 600 << 20, 5 << 30]);
        let counts: Vec<u64> = b.iter().map(|(_, c, _)| *c).collect();
        assert_eq!(counts, vec![2, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(b.first().map(|(l, _, _)| l.as_str()), Some("< 64K"));
        assert_eq!(b.last().map(|(l, _, _)| l.as_str()), Some("≥ 1G"));
    }

    #[test]
    fn charts_escape_and_count() {
        let points = vec![
            SnapshotPoint {
                id: 1,
                timestamp_ms: 1000,
                operation: "append".into(),
                records: 3,
                data_files: 3,
                bytes: 300,
            },
            SnapshotPoint {
                id: 2,
                timestamp_ms: 2000,
                operation: "<script>".into(),
                records: 3,
                data_files: 1,
                bytes: 200,
            },
        ];
        let svg = timeline(&points).into_string();
        assert!(svg.contains("data-snapshots=\"2\""));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(!svg.contains("<script>"));
        let histogram = histogram(&[10, 20, 30 << 20], 1 << 20).into_string();
        assert!(histogram.contains("data-small-files=\"2\""));
    }
}
