//! Maintenance counters for `/metrics` (Prometheus text): runs by job type and outcome, and the files and bytes
//! runs took in (removed or rewritten) and wrote, by job type.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use crate::MaintenanceRun;

#[derive(Default, Debug)]
struct Totals {
    runs: BTreeMap<(&'static str, &'static str), u64>,
    // (job type, direction) → (files, bytes)
    volume: BTreeMap<(&'static str, &'static str), (u64, u64)>,
    seconds: BTreeMap<&'static str, f64>,
}

/// Maintenance counters of this instance.
#[derive(Default, Debug)]
pub struct MaintenanceMetrics {
    totals: Mutex<Totals>,
}

impl MaintenanceMetrics {
    /// Counts one finished run.
    pub fn record(&self, run: &MaintenanceRun) {
        let Ok(mut totals) = self.totals.lock() else {
            return;
        };
        let job = run.job_type.as_str();
        *totals.runs.entry((job, run.outcome.as_str())).or_default() += 1;
        for (direction, files, bytes) in [
            ("in", run.files_in, run.bytes_in),
            ("out", run.files_out, run.bytes_out),
        ] {
            let entry = totals.volume.entry((job, direction)).or_default();
            entry.0 += files;
            entry.1 += bytes;
        }
        *totals.seconds.entry(job).or_default() += run.duration_ms as f64 / 1000.0;
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(totals) = self.totals.lock() else {
            return out;
        };
        out.push_str(
            "# HELP tablebay_maintenance_runs_total Maintenance runs, by job type and outcome.\n",
        );
        out.push_str("# TYPE tablebay_maintenance_runs_total counter\n");
        for ((job, outcome), n) in &totals.runs {
            let _ = writeln!(
                out,
                "tablebay_maintenance_runs_total{{type=\"{job}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP tablebay_maintenance_files_total Files maintenance took in (direction=in: deleted by expiration \
             and unreferenced-file removal, rewritten by compaction) and wrote (direction=out).\n",
        );
        out.push_str("# TYPE tablebay_maintenance_files_total counter\n");
        for ((job, direction), (files, _)) in &totals.volume {
            let _ = writeln!(
                out,
                "tablebay_maintenance_files_total{{type=\"{job}\",direction=\"{direction}\"}} {files}"
            );
        }
        out.push_str("# HELP tablebay_maintenance_bytes_total Bytes of those files.\n");
        out.push_str("# TYPE tablebay_maintenance_bytes_total counter\n");
        for ((job, direction), (_, bytes)) in &totals.volume {
            let _ = writeln!(
                out,
                "tablebay_maintenance_bytes_total{{type=\"{job}\",direction=\"{direction}\"}} {bytes}"
            );
        }
        out.push_str(
            "# HELP tablebay_maintenance_run_seconds_total Time spent in maintenance runs.\n",
        );
        out.push_str("# TYPE tablebay_maintenance_run_seconds_total counter\n");
        for (job, seconds) in &totals.seconds {
            let _ = writeln!(
                out,
                "tablebay_maintenance_run_seconds_total{{type=\"{job}\"}} {seconds}"
            );
        }
        out
    }
}
