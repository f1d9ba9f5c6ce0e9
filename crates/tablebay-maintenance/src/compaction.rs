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
    let mut outcome = JobOutcome::default();
    // The engine's future is not `Send` (iceberg-rust's manifest iterators), so it runs to completion on a
    // blocking-pool thread driven by this runtime's handle; the worker's semaphore slot bounds how many do.
    let (catalog, table) = (catalog.clone(), TableRef::Arn(loaded.table.arn.clone()));
    let handle = tokio::runtime::Handle::current();
    let result = tokio::task::spawn_blocking(move || {
        handle.block_on(compact_table(&catalog, &table, &engine))
    })
    .await
    .map_err(|e| MaintenanceError::Unreadable(format!("the compaction task failed: {e}")))?;
    let report = match result {
        Ok(report) => report,
        Err(CompactionError::Conflict(why)) => {
            outcome.backed_off = Some(format!(
                "the table changed while compacting; retrying later ({why})"
            ));
            return Ok(outcome);
        }
        Err(CompactionError::Unavailable(why)) => {
            outcome.backed_off = Some(format!(
                "a store was unavailable while compacting; retrying later ({why})"
            ));
            return Ok(outcome);
        }
        Err(CompactionError::NotFound(m)) => return Err(MaintenanceError::NotFound(m)),
        Err(CompactionError::Invalid(m)) => return Err(MaintenanceError::Invalid(m)),
        Err(CompactionError::Internal(m)) => return Err(MaintenanceError::Unreadable(m)),
    };
    outcome.files_in = report.files_in;
    outcome.bytes_in = report.bytes_in;
    outcome.files_out = report.files_out;
    outcome.bytes_out = report.bytes_out;
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
