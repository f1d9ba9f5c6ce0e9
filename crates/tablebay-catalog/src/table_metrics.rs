//! Per-table metrics of the buckets whose metrics configuration is on (`PutTableBucketMetricsConfiguration`):
//! gauges from each table's committed metadata (its current snapshot's summary) and this instance's counters of
//! commits, failed commits, maintenance bytes and data-plane bytes. Rendered as Prometheus text at `/metrics`.
//!
//! Cardinality is bounded: at most [`MAX_BUCKETS`] buckets with metrics on and [`MAX_TABLES_PER_BUCKET`] tables
//! per bucket (the first ones by namespace and table name) get series, labelled by bucket, namespace and table
//! name only. A bucket without the configuration, and a dropped table, have no series. The gauges come from the
//! metadata file the last commit published (parsed-metadata cache, so a scrape reads no table file that has not
//! changed); the counters are what this instance saw since it started.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Mutex;

use iceberg::spec::TableMetadata;
use tablebay_store::meta::AttributeKey;
use uuid::Uuid;

use crate::{Catalog, ServiceError, Table};

/// Most buckets with metrics on that get series.
pub const MAX_BUCKETS: u32 = 100;
/// Most tables of one bucket that get series.
pub const MAX_TABLES_PER_BUCKET: u32 = 1000;
/// Most tables this instance keeps counters for (tables beyond it are not counted until a scrape forgets the
/// counters of tables that have no series).
const MAX_COUNTED_TABLES: usize = (MAX_BUCKETS * MAX_TABLES_PER_BUCKET) as usize;

/// One table's counters.
#[derive(Clone, Debug, Default)]
struct Counts {
    commits: u64,
    failed_commits: u64,
    bytes_in: u64,
    bytes_out: u64,
    /// Maintenance job type → (bytes rewritten, bytes saved).
    maintenance: BTreeMap<&'static str, (u64, u64)>,
}

/// This instance's per-table counters, keyed by table id.
#[derive(Debug, Default)]
pub struct TableCounters {
    tables: Mutex<HashMap<Uuid, Counts>>,
}

impl TableCounters {
    fn update(&self, table: Uuid, f: impl FnOnce(&mut Counts)) {
        let Ok(mut tables) = self.tables.lock() else {
            return;
        };
        if !tables.contains_key(&table) && tables.len() >= MAX_COUNTED_TABLES {
            return;
        }
        f(tables.entry(table).or_default());
    }

    /// One commit published.
    pub(crate) fn committed(&self, table: Uuid) {
        self.update(table, |c| c.commits += 1);
    }

    /// One commit refused or failed.
    pub(crate) fn commit_failed(&self, table: Uuid) {
        self.update(table, |c| c.failed_commits += 1);
    }

    /// Bytes written into the table's storage on the data plane.
    pub fn bytes_in(&self, table: Uuid, bytes: u64) {
        self.update(table, |c| c.bytes_in += bytes);
    }

    /// Bytes read from the table's storage on the data plane.
    pub fn bytes_out(&self, table: Uuid, bytes: u64) {
        self.update(table, |c| c.bytes_out += bytes);
    }

    /// A maintenance run of type `job` rewrote `rewritten` bytes into `written` bytes.
    pub fn maintenance(&self, table: Uuid, job: &'static str, rewritten: u64, written: u64) {
        self.update(table, |c| {
            let entry = c.maintenance.entry(job).or_default();
            entry.0 += rewritten;
            entry.1 += rewritten.saturating_sub(written);
        });
    }

    fn snapshot(&self, keep: &HashSet<Uuid>) -> HashMap<Uuid, Counts> {
        let Ok(mut tables) = self.tables.lock() else {
            return HashMap::new();
        };
        if tables.len() > MAX_COUNTED_TABLES / 2 {
            tables.retain(|id, _| keep.contains(id));
        }
        keep.iter()
            .filter_map(|id| tables.get(id).map(|c| (*id, c.clone())))
            .collect()
    }
}

/// One table's gauges, from its current metadata.
#[derive(Debug, Default)]
struct Gauges {
    data_files: u64,
    data_bytes: u64,
    records: u64,
    snapshots: u64,
}

impl Gauges {
    fn of(metadata: &TableMetadata) -> Self {
        let summary = |key: &str| {
            metadata
                .current_snapshot()
                .and_then(|s| s.summary().additional_properties.get(key))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Self {
            data_files: summary("total-data-files"),
            data_bytes: summary("total-files-size"),
            records: summary("total-records"),
            snapshots: metadata.snapshots().len() as u64,
        }
    }
}

/// A table with series: its labels, gauges and counters.
struct Row {
    labels: String,
    gauges: Gauges,
    counts: Counts,
}

/// (name, type, help, value of a row).
type Family = (&'static str, &'static str, &'static str, fn(&Row) -> u64);

const FAMILIES: [Family; 6] = [
    (
        "tablebay_table_data_files",
        "gauge",
        "Data files of the current snapshot (total-data-files).",
        |r| r.gauges.data_files,
    ),
    (
        "tablebay_table_data_bytes",
        "gauge",
        "Bytes of the current snapshot's files (total-files-size).",
        |r| r.gauges.data_bytes,
    ),
    (
        "tablebay_table_records",
        "gauge",
        "Records of the current snapshot (total-records).",
        |r| r.gauges.records,
    ),
    (
        "tablebay_table_snapshots",
        "gauge",
        "Snapshots in the table's metadata.",
        |r| r.gauges.snapshots,
    ),
    (
        "tablebay_table_commits_total",
        "counter",
        "Commits this instance published.",
        |r| r.counts.commits,
    ),
    (
        "tablebay_table_commit_failures_total",
        "counter",
        "Commits this instance refused or failed.",
        |r| r.counts.failed_commits,
    ),
];

impl Catalog {
    /// This instance's per-table counters (commits, maintenance, data plane).
    pub fn table_counters(&self) -> &TableCounters {
        &self.table_counters
    }

    /// The Prometheus text of every table in a bucket whose metrics configuration is on (see the module doc).
    pub async fn render_table_metrics(&self) -> Result<String, ServiceError> {
        let mut tables: Vec<Table> = Vec::new();
        for bucket_id in self
            .meta
            .resources_with_attribute(AttributeKey::Metrics, MAX_BUCKETS)
            .await?
        {
            let Some(record) = self.meta.bucket_by_id(bucket_id).await? else {
                continue;
            };
            let bucket = self.bucket_from_record(record)?;
            for record in self
                .meta
                .list_tables(bucket.id, None, None, None, MAX_TABLES_PER_BUCKET)
                .await?
            {
                tables.push(Self::table_from_record(&bucket, record)?);
            }
        }
        let keep: HashSet<Uuid> = tables.iter().map(|t| t.id).collect();
        let mut counts = self.table_counters.snapshot(&keep);
        let mut rows = Vec::with_capacity(tables.len());
        for table in tables {
            let gauges = match &table.metadata_location {
                Some(location) => match self.table_files(table.id).read_metadata(location).await {
                    Ok(loaded) => Gauges::of(&loaded.metadata),
                    Err(e) => {
                        tracing::debug!(table = %table.id, error = %e, "metrics: metadata unreadable");
                        Gauges::default()
                    }
                },
                None => Gauges::default(),
            };
            rows.push(Row {
                labels: format!(
                    "bucket=\"{}\",namespace=\"{}\",table=\"{}\"",
                    escape(table.bucket.arn.name.as_str()),
                    escape(&table.namespace.to_string()),
                    escape(table.name.as_str())
                ),
                gauges,
                counts: counts.remove(&table.id).unwrap_or_default(),
            });
        }
        Ok(render(&rows))
    }
}

fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    for (name, kind, help, value) in &FAMILIES {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for row in rows {
            let _ = writeln!(out, "{name}{{{}}} {}", row.labels, value(row));
        }
    }
    let name = "tablebay_table_data_plane_bytes_total";
    let _ = writeln!(
        out,
        "# HELP {name} Bytes this instance's S3 listener took in (PUT, UploadPart) and served (GET) in the table's storage.\n# TYPE {name} counter"
    );
    for row in rows {
        for (direction, bytes) in [("in", row.counts.bytes_in), ("out", row.counts.bytes_out)] {
            let _ = writeln!(
                out,
                "{name}{{{},direction=\"{direction}\"}} {bytes}",
                row.labels
            );
        }
    }
    for (name, help, pick) in [
        (
            "tablebay_table_maintenance_bytes_rewritten_total",
            "Bytes of files maintenance runs on this instance rewrote, by job type.",
            (|(rewritten, _)| rewritten) as fn((u64, u64)) -> u64,
        ),
        (
            "tablebay_table_maintenance_bytes_saved_total",
            "Bytes those runs saved (rewritten minus written), by job type.",
            |(_, saved)| saved,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for row in rows {
            for job in MAINTENANCE_JOBS {
                let bytes = row.counts.maintenance.get(job).copied().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{name}{{{},type=\"{job}\"}} {}",
                    row.labels,
                    pick(bytes)
                );
            }
        }
    }
    out
}

/// The maintenance job types that rewrite data files, whose bytes the table series report.
pub const MAINTENANCE_JOBS: [&str; 2] = ["icebergCompaction", "icebergRecordExpiration"];

/// A Prometheus label value: backslash, quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(counts: Counts) -> Row {
        Row {
            labels: format!("bucket=\"b\",namespace=\"n\",table=\"{}\"", escape("t\"x")),
            gauges: Gauges {
                data_files: 3,
                data_bytes: 300,
                records: 30,
                snapshots: 2,
            },
            counts,
        }
    }

    #[test]
    fn no_tables_no_series() {
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn renders_gauges_and_counters() {
        let counters = TableCounters::default();
        let id = Uuid::now_v7();
        counters.committed(id);
        counters.committed(id);
        counters.commit_failed(id);
        counters.bytes_in(id, 10);
        counters.bytes_out(id, 7);
        counters.maintenance(id, "icebergCompaction", 100, 60);
        counters.committed(Uuid::now_v7());
        let mut counts = counters.snapshot(&HashSet::from([id]));
        assert_eq!(counts.len(), 1, "only the tables with series");
        let text = render(&[row(counts.remove(&id).unwrap_or_default())]);
        let labels = "bucket=\"b\",namespace=\"n\",table=\"t\\\"x\"";
        for line in [
            format!("tablebay_table_data_files{{{labels}}} 3"),
            format!("tablebay_table_snapshots{{{labels}}} 2"),
            format!("tablebay_table_commits_total{{{labels}}} 2"),
            format!("tablebay_table_commit_failures_total{{{labels}}} 1"),
            format!("tablebay_table_data_plane_bytes_total{{{labels},direction=\"in\"}} 10"),
            format!("tablebay_table_data_plane_bytes_total{{{labels},direction=\"out\"}} 7"),
            format!(
                "tablebay_table_maintenance_bytes_rewritten_total{{{labels},type=\"icebergCompaction\"}} 100"
            ),
            format!(
                "tablebay_table_maintenance_bytes_saved_total{{{labels},type=\"icebergCompaction\"}} 40"
            ),
            format!(
                "tablebay_table_maintenance_bytes_saved_total{{{labels},type=\"icebergRecordExpiration\"}} 0"
            ),
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }
}
