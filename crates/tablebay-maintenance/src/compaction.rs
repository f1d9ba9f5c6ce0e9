//! The `icebergCompaction` job type: the one place that calls the compaction engine (`tablebay-compaction`)
//! with the table's effective settings and turns its report into a run outcome. A compaction that lost its
//! race with writers commits nothing and backs off, like the other jobs.

use tablebay_catalog::{Catalog, CompactionStrategy, IcebergTable, TableRef};
use tablebay_compaction::{CompactionError, CompactionSettings, Strategy, compact_table};

use crate::MaintenanceError;
use crate::run::JobOutcome;
use crate::settings::EffectiveCompaction;

/// Whether this build has a compaction engine (commit triggers and the sweep queue compaction only then).
pub(crate) const AVAILABLE: bool = true;

/// Compacts one table with its effective settings.
pub(crate) async fn compact(
    catalog: &Catalog,
    loaded: IcebergTable,
    settings: &EffectiveCompaction,
) -> Result<JobOutcome, MaintenanceError> {
    let strategy = match settings.strategy {
        CompactionStrategy::Auto => Strategy::Auto,
        CompactionStrategy::Binpack => Strategy::Binpack,
        CompactionStrategy::Sort => Strategy::Sort,
        CompactionStrategy::ZOrder => Strategy::ZOrder,
    };
    let engine = CompactionSettings {
        target_file_size_bytes: settings.target_file_size_bytes,
        strategy,
    };
    let (catalog, table) = (catalog.clone(), TableRef::Arn(loaded.table.arn.clone()));
    let report =
        match on_blocking(move || async move { compact_table(&catalog, &table, &engine).await })
            .await?
        {
            Ok(report) => report,
            Err(e) => return engine_failure(e, "compacting"),
        };
    let mut outcome = JobOutcome {
        files_in: report.files_in,
        bytes_in: report.bytes_in,
        files_out: report.files_out,
        bytes_out: report.bytes_out,
        ..JobOutcome::default()
    };
    outcome.detail("deleteFilesRemoved", report.delete_files_removed);
    outcome.detail("groupsCommitted", report.groups_committed);
    outcome.detail("groupsSkipped", report.groups_skipped);
    outcome.message = Some(match report.snapshot_id {
        Some(id) => format!(
            "rewrote {} files into {} (snapshot {id})",
            report.files_in, report.files_out
        ),
        None => "nothing to compact".to_string(),
    });
    Ok(outcome)
}

/// Runs an engine future to completion on a blocking-pool thread driven by this runtime's handle: the engines'
/// futures are not `Send` (iceberg-rust's manifest iterators); the worker's semaphore slot bounds how many run.
pub(crate) async fn on_blocking<T, F, Fut>(engine: F) -> Result<T, MaintenanceError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
    T: Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(engine()))
        .await
        .map_err(|e| MaintenanceError::Unreadable(format!("the maintenance task failed: {e}")))
}

/// An engine run that did not complete: a lost race or an unreachable store backs off (nothing was committed;
/// the job runs again later), anything else fails the run.
pub(crate) fn engine_failure(
    e: CompactionError,
    doing: &str,
) -> Result<JobOutcome, MaintenanceError> {
    let why = match e {
        CompactionError::Conflict(why) => {
            format!("the table changed while {doing}; retrying later ({why})")
        }
        CompactionError::Unavailable(why) => {
            format!("a store was unavailable while {doing}; retrying later ({why})")
        }
        CompactionError::NotFound(m) => return Err(MaintenanceError::NotFound(m)),
        CompactionError::Invalid(m) => return Err(MaintenanceError::Invalid(m)),
        CompactionError::Internal(m) => return Err(MaintenanceError::Unreadable(m)),
    };
    Ok(JobOutcome {
        backed_off: Some(why),
        ..JobOutcome::default()
    })
}
