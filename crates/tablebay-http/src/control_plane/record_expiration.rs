//! Put/GetTableRecordExpirationConfiguration and GetTableRecordExpirationJobStatus: a table named by
//! `?tableArn=` (botocore's `/table-record-expiration` and `/table-record-expiration-job-status`). The job itself
//! is the maintenance type `icebergRecordExpiration`; the column rule and the run are `docs/record-expiration.md`.

use std::str::FromStr;

use axum::response::Response;
use tablebay_catalog::{
    Catalog, JobState, MaintenanceStatus, RecordExpiration, RecordExpirationMetrics, TableRef,
};

use super::error::ControlPlaneError;
use super::request::{json, no_content};
use super::wire::{
    GetRecordExpirationJobStatusResponse, GetRecordExpirationResponse, PutRecordExpirationRequest,
    RecordExpirationMetricsWire, RecordExpirationSettingsWire, RecordExpirationValue, timestamp,
};

/// `PUT /table-record-expiration?tableArn=`.
pub(super) async fn put(
    catalog: &Catalog,
    table: &TableRef,
    request: PutRecordExpirationRequest,
) -> Result<Response, ControlPlaneError> {
    let PutRecordExpirationRequest { value } = request;
    let status = value
        .status
        .as_deref()
        .map(MaintenanceStatus::from_str)
        .transpose()?
        .unwrap_or(MaintenanceStatus::Enabled);
    let days = value.settings.and_then(|s| s.days);
    let config = RecordExpiration::new(status, days)?;
    catalog.put_record_expiration(table, config).await?;
    no_content()
}

/// `GET /table-record-expiration?tableArn=`: `disabled` until configured.
pub(super) async fn get(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (_, maintenance) = catalog.table_maintenance(table).await?;
    let config = maintenance.record_expiration;
    json(&GetRecordExpirationResponse {
        configuration: RecordExpirationValue {
            status: Some(config.status.to_string()),
            settings: config.days.map(|days| RecordExpirationSettingsWire {
                days: Some(days.into()),
            }),
        },
    })
}

/// `GET /table-record-expiration-job-status?tableArn=`.
pub(super) async fn job_status(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (_, status) = catalog.record_expiration_status(table).await?;
    let job = status.status;
    json(&GetRecordExpirationJobStatusResponse {
        // This operation's enum spells it without underscores (`TableRecordExpirationJobStatus`).
        status: match job.state {
            JobState::NotYetRun => "NotYetRun",
            state => state.as_str(),
        },
        last_run_timestamp: job.last_run.as_ref().map(timestamp),
        failure_message: job.failure_message,
        metrics: status.metrics.map(
            |RecordExpirationMetrics {
                 deleted_data_files,
                 deleted_records,
                 removed_files_size,
             }| RecordExpirationMetricsWire {
                deleted_data_files,
                deleted_records,
                removed_files_size,
            },
        ),
    })
}
