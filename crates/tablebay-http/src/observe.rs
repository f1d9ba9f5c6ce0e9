//! Request observability shared by every surface: request ids, one structured log line per request, and the
//! Prometheus metrics served at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the request latency histogram.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default, Debug)]
struct Series {
    count: u64,
    sum_seconds: f64,
    buckets: [u64; LATENCY_BUCKETS.len()],
}

/// Request counters and latency histograms by surface, operation and status.
#[derive(Default, Debug)]
pub struct Metrics {
    series: Mutex<BTreeMap<(&'static str, &'static str, u16), Series>>,
}

impl Metrics {
    /// Records one finished request.
    pub fn record(
        &self,
        surface: &'static str,
        operation: &'static str,
        status: u16,
        latency: Duration,
    ) {
        let seconds = latency.as_secs_f64();
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        let entry = series.entry((surface, operation, status)).or_default();
        entry.count += 1;
        entry.sum_seconds += seconds;
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(entry.buckets.iter_mut()) {
            if seconds <= *bound {
                *bucket += 1;
            }
        }
    }

    /// The Prometheus text exposition of every series.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(series) = self.series.lock() else {
            return out;
        };
        out.push_str(
            "# HELP tablebay_requests_total Requests answered, by surface, operation and status.\n",
        );
        out.push_str("# TYPE tablebay_requests_total counter\n");
        for ((surface, operation, status), s) in series.iter() {
            let _ = writeln!(
                out,
                "tablebay_requests_total{{surface=\"{surface}\",operation=\"{operation}\",status=\"{status}\"}} {}",
                s.count
            );
        }
        out.push_str("# HELP tablebay_request_duration_seconds Request latency.\n");
        out.push_str("# TYPE tablebay_request_duration_seconds histogram\n");
        let mut by_op: BTreeMap<(&str, &str), Series> = BTreeMap::new();
        for ((surface, operation, _), s) in series.iter() {
            let agg = by_op.entry((surface, operation)).or_default();
            agg.count += s.count;
            agg.sum_seconds += s.sum_seconds;
            for (a, b) in agg.buckets.iter_mut().zip(s.buckets.iter()) {
                *a += b;
            }
        }
        for ((surface, operation), s) in by_op {
            let labels = format!("surface=\"{surface}\",operation=\"{operation}\"");
            for (bound, count) in LATENCY_BUCKETS.iter().zip(s.buckets.iter()) {
                let _ = writeln!(
                    out,
                    "tablebay_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "tablebay_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                s.count
            );
            let _ = writeln!(
                out,
                "tablebay_request_duration_seconds_sum{{{labels}}} {}",
                s.sum_seconds
            );
            let _ = writeln!(
                out,
                "tablebay_request_duration_seconds_count{{{labels}}} {}",
                s.count
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histograms() {
        let metrics = Metrics::default();
        metrics.record("control_plane", "GetTable", 200, Duration::from_millis(3));
        metrics.record("control_plane", "GetTable", 404, Duration::from_millis(30));
        let text = metrics.render();
        assert!(text.contains("tablebay_requests_total{surface=\"control_plane\",operation=\"GetTable\",status=\"200\"} 1"));
        assert!(text.contains("tablebay_request_duration_seconds_bucket{surface=\"control_plane\",operation=\"GetTable\",le=\"0.005\"} 1"));
        assert!(text.contains("tablebay_request_duration_seconds_count{surface=\"control_plane\",operation=\"GetTable\"} 2"));
    }
}
