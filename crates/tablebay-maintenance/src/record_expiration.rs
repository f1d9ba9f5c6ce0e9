//! The `icebergRecordExpiration` job type: the table's record expiration configuration (days) turned into a
//! cutoff, the compaction crate's expiration engine run with it, and its report turned into a run outcome whose
//! files and bytes taken in, and `deletedRecords` detail, are what `GetTableRecordExpirationJobStatus` reports.
//! An expiration that lost its race with writers commits nothing and backs off, like the other jobs.

use chrono::{DateTime, Utc};
use tablebay_catalog::{Catalog, DELETED_RECORDS_DETAIL, IcebergTable, TableRef};
use tablebay_compaction::expire_records;

use crate::MaintenanceError;
use crate::compaction::{engine_failure, on_blocking};
use crate::run::JobOutcome;

/// Length of the configured `days` (real days: they are compared with the rows' own timestamps).
const DAY_MICROS: i64 = 86_400_000_000;

/// Removes the table's records older than `days` before `now`, rewriting into files of the target size.
pub(crate) async fn expire(
    catalog: &Catalog,
    loaded: IcebergTable,
    days: Option<u32>,
    now: DateTime<Utc>,
    target_file_size_bytes: u64,
) -> Result<JobOutcome, MaintenanceError> {
    let days = days.ok_or_else(|| {
        MaintenanceError::Invalid(
            "record expiration has no retention configured: set settings.days with \
             PutTableRecordExpirationConfiguration"
                .into(),
        )
    })?;
    let cutoff = now
        .timestamp_micros()
        .saturating_sub(i64::from(days).saturating_mul(DAY_MICROS));
    let (catalog, table) = (catalog.clone(), TableRef::Arn(loaded.table.arn.clone()));
    let report = match on_blocking(move || async move {
        expire_records(&catalog, &table, cutoff, target_file_size_bytes).await
    })
    .await?
    {
        Ok(report) => report,
        Err(e) => return engine_failure(e, "expiring records"),
    };
    let mut outcome = JobOutcome {
        files_in: report.deleted_data_files,
        bytes_in: report.removed_files_size,
        files_out: report.files_out,
        bytes_out: report.bytes_out,
        ..JobOutcome::default()
    };
    outcome.detail(DELETED_RECORDS_DETAIL, report.deleted_records);
    outcome.detail("filesDropped", report.files_dropped);
    outcome.detail("filesRewritten", report.files_rewritten);
    outcome.detail("filesReadUnchanged", report.files_read_unchanged);
    outcome.detail("filesSkipped", report.files_skipped);
    let cutoff = DateTime::<Utc>::from_timestamp_micros(cutoff)
        .map(|t| t.to_rfc3339())
        .unwrap_or_default();
    outcome.message = Some(match report.snapshot_id {
        Some(id) => format!(
            "removed {} records older than {cutoff} by column '{}': {} files dropped, {} rewritten (snapshot {id})",
            report.deleted_records, report.column, report.files_dropped, report.files_rewritten
        ),
        None => format!(
            "no records older than {cutoff} by column '{}'",
            report.column
        ),
    });
    Ok(outcome)
}
