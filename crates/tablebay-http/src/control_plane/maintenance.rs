//! Put/GetTableBucketMaintenanceConfiguration, Put/GetTableMaintenanceConfiguration and
//! GetTableMaintenanceJobStatus. Gets return every job type with defaults filled in (§4: a fresh table shows
//! both table job types enabled with default settings).

use std::collections::BTreeMap;
use std::str::FromStr;

use axum::response::Response;
use tablebay_catalog::{
    BucketMaintenance, Catalog, CompactionSettings, CompactionStrategy, JobConfig,
    MaintenanceJobType, MaintenanceStatus, SnapshotManagementSettings, TableMaintenance,
    TableMaintenanceUpdate, TableRef, UnreferencedFileRemovalSettings,
};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content};

use super::wire::{
    CompactionSettingsWire, GetTableBucketMaintenanceResponse,
    GetTableMaintenanceJobStatusResponse, GetTableMaintenanceResponse, JobStatusWire,
    MaintenanceSettings, MaintenanceValue, PutMaintenanceRequest, SnapshotManagementWire,
    UnreferencedFileRemovalWire, timestamp,
};

fn status(value: &MaintenanceValue) -> Result<MaintenanceStatus, ControlPlaneError> {
    Ok(value
        .status
        .as_deref()
        .map(MaintenanceStatus::from_str)
        .transpose()?
        .unwrap_or(MaintenanceStatus::Enabled))
}

fn job_type(raw: &str) -> Result<MaintenanceJobType, ControlPlaneError> {
    MaintenanceJobType::from_str(raw)
        .map_err(|_| ControlPlaneError::BadRequest(format!("Invalid maintenance type '{raw}'")))
}

/// The settings union must hold only the member named by the path's job type.
fn only(
    settings: &MaintenanceSettings,
    expected: MaintenanceJobType,
) -> Result<(), ControlPlaneError> {
    let present = [
        (
            MaintenanceJobType::IcebergCompaction,
            settings.iceberg_compaction.is_some(),
        ),
        (
            MaintenanceJobType::IcebergSnapshotManagement,
            settings.iceberg_snapshot_management.is_some(),
        ),
        (
            MaintenanceJobType::IcebergUnreferencedFileRemoval,
            settings.iceberg_unreferenced_file_removal.is_some(),
        ),
    ];
    match present.iter().find(|(job, set)| *set && *job != expected) {
        Some((job, _)) => Err(ControlPlaneError::BadRequest(format!(
            "The settings member {job} does not match the maintenance type {expected}"
        ))),
        None => Ok(()),
    }
}

/// `PUT /buckets/{arn}/maintenance/{type}`.
pub(super) async fn put_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    raw_type: &str,
    request: PutMaintenanceRequest,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let job = job_type(raw_type)?;
    if job != MaintenanceJobType::IcebergUnreferencedFileRemoval {
        return Err(ControlPlaneError::BadRequest(format!(
            "Invalid table bucket maintenance type '{raw_type}'"
        )));
    }
    let PutMaintenanceRequest { value } = request;
    let settings = value.settings.as_ref();
    if let Some(settings) = settings {
        only(settings, job)?;
    }
    let leaves = settings.and_then(|s| s.iceberg_unreferenced_file_removal.as_ref());
    let config = JobConfig {
        status: status(&value)?,
        settings: UnreferencedFileRemovalSettings::new(
            leaves.and_then(|l| l.unreferenced_days),
            leaves.and_then(|l| l.non_current_days),
        )?,
    };
    catalog.put_bucket_maintenance(&bucket, config).await?;
    no_content()
}

fn bucket_configuration(
    maintenance: &BucketMaintenance,
) -> BTreeMap<&'static str, MaintenanceValue> {
    let job = &maintenance.unreferenced_file_removal;
    let value = MaintenanceValue {
        status: Some(job.status.to_string()),
        settings: Some(MaintenanceSettings {
            iceberg_unreferenced_file_removal: Some(UnreferencedFileRemovalWire {
                unreferenced_days: Some(job.settings.unreferenced_days.into()),
                non_current_days: Some(job.settings.non_current_days.into()),
            }),
            ..MaintenanceSettings::default()
        }),
    };
    BTreeMap::from([(
        MaintenanceJobType::IcebergUnreferencedFileRemoval.as_str(),
        value,
    )])
}

/// `GET /buckets/{arn}/maintenance`.
pub(super) async fn get_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    let arn = ctx.bucket_arn(bucket)?;
    let maintenance = catalog.bucket_maintenance(&arn).await?;
    let arn = catalog.bucket(&arn).await?.arn;
    json(&GetTableBucketMaintenanceResponse {
        table_bucket_arn: arn.to_string(),
        configuration: bucket_configuration(&maintenance),
    })
}

/// `PUT /tables/{arn}/{ns}/{name}/maintenance/{type}`.
pub(super) async fn put_table(
    catalog: &Catalog,
    table: &TableRef,
    raw_type: &str,
    request: PutMaintenanceRequest,
) -> Result<Response, ControlPlaneError> {
    let job = job_type(raw_type)?;
    let PutMaintenanceRequest { value } = request;
    if let Some(settings) = &value.settings {
        only(settings, job)?;
    }
    let status = status(&value)?;
    let settings = value.settings.unwrap_or_default();
    let update = match job {
        MaintenanceJobType::IcebergCompaction => {
            let leaves = settings.iceberg_compaction;
            let strategy = leaves
                .as_ref()
                .and_then(|l| l.strategy.as_deref())
                .map(CompactionStrategy::from_str)
                .transpose()?;
            TableMaintenanceUpdate::Compaction(JobConfig {
                status,
                settings: CompactionSettings::new(
                    leaves.and_then(|l| l.target_file_size_mb),
                    strategy,
                )?,
            })
        }
        MaintenanceJobType::IcebergSnapshotManagement => {
            let leaves = settings.iceberg_snapshot_management;
            TableMaintenanceUpdate::SnapshotManagement(JobConfig {
                status,
                settings: SnapshotManagementSettings::new(
                    leaves.as_ref().and_then(|l| l.min_snapshots_to_keep),
                    leaves.and_then(|l| l.max_snapshot_age_hours),
                )?,
            })
        }
        MaintenanceJobType::IcebergUnreferencedFileRemoval => {
            return Err(ControlPlaneError::BadRequest(format!(
                "Invalid table maintenance type '{raw_type}': it is configured on the table bucket"
            )));
        }
        MaintenanceJobType::IcebergRecordExpiration => {
            return Err(ControlPlaneError::BadRequest(format!(
                "Invalid table maintenance type '{raw_type}': it is configured with \
                 PutTableRecordExpirationConfiguration"
            )));
        }
    };
    catalog.put_table_maintenance(table, update).await?;
    no_content()
}

fn table_configuration(maintenance: &TableMaintenance) -> BTreeMap<&'static str, MaintenanceValue> {
    let compaction = &maintenance.compaction;
    let snapshots = &maintenance.snapshot_management;
    BTreeMap::from([
        (
            MaintenanceJobType::IcebergCompaction.as_str(),
            MaintenanceValue {
                status: Some(compaction.status.to_string()),
                settings: Some(MaintenanceSettings {
                    iceberg_compaction: Some(CompactionSettingsWire {
                        target_file_size_mb: Some(compaction.settings.target_file_size_mb.into()),
                        strategy: Some(compaction.settings.strategy.to_string()),
                    }),
                    ..MaintenanceSettings::default()
                }),
            },
        ),
        (
            MaintenanceJobType::IcebergSnapshotManagement.as_str(),
            MaintenanceValue {
                status: Some(snapshots.status.to_string()),
                settings: Some(MaintenanceSettings {
                    iceberg_snapshot_management: Some(SnapshotManagementWire {
                        min_snapshots_to_keep: Some(
                            snapshots.settings.min_snapshots_to_keep.into(),
                        ),
                        max_snapshot_age_hours: Some(
                            snapshots.settings.max_snapshot_age_hours.into(),
                        ),
                    }),
                    ..MaintenanceSettings::default()
                }),
            },
        ),
    ])
}

/// `GET /tables/{arn}/{ns}/{name}/maintenance`.
pub(super) async fn get_table(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (table, maintenance) = catalog.table_maintenance(table).await?;
    json(&GetTableMaintenanceResponse {
        table_arn: table.arn.to_string(),
        configuration: table_configuration(&maintenance),
    })
}

/// `GET /tables/{arn}/{ns}/{name}/maintenance-job-status`.
pub(super) async fn job_status(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (table, statuses) = catalog.maintenance_job_status(table).await?;
    json(&GetTableMaintenanceJobStatusResponse {
        table_arn: table.arn.to_string(),
        status: statuses
            .into_iter()
            .map(|(job, s)| {
                (
                    job.as_str(),
                    JobStatusWire {
                        status: s.state.as_str(),
                        last_run_timestamp: s.last_run.as_ref().map(timestamp),
                        failure_message: s.failure_message,
                    },
                )
            })
            .collect(),
    })
}
