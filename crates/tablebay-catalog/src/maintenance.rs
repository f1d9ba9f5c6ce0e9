//! Maintenance configuration (per bucket and per table, defaults filled in as S3 Tables does) and the job
//! status that `GetTableMaintenanceJobStatus` reports (`reference/s3tables-api.md` §4).

use std::collections::BTreeMap;

use uuid::Uuid;

use tablebay_store::meta::AttributeKey;

use crate::settings::JobConfig;
use crate::{
    BucketArn, BucketMaintenance, Catalog, CatalogError, CompactionSettings, JobState, JobStatus,
    MaintenanceJobType, MaintenanceStatus, SnapshotManagementSettings, Table, TableMaintenance,
    TableRef, UnreferencedFileRemovalSettings,
};

/// One PutTableMaintenanceConfiguration: the job type and its whole new value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableMaintenanceUpdate {
    /// `icebergCompaction`.
    Compaction(JobConfig<CompactionSettings>),
    /// `icebergSnapshotManagement`.
    SnapshotManagement(JobConfig<SnapshotManagementSettings>),
}

impl Catalog {
    /// The bucket's maintenance configuration, defaults filled in.
    pub async fn bucket_maintenance(
        &self,
        bucket: &BucketArn,
    ) -> Result<BucketMaintenance, CatalogError> {
        let bucket = self.bucket(bucket).await?;
        Ok(self
            .setting(bucket.id, AttributeKey::Maintenance)
            .await?
            .unwrap_or_default())
    }

    /// Replaces the bucket's `icebergUnreferencedFileRemoval` configuration.
    pub async fn put_bucket_maintenance(
        &self,
        bucket: &BucketArn,
        config: JobConfig<UnreferencedFileRemovalSettings>,
    ) -> Result<(), CatalogError> {
        let bucket = self.bucket(bucket).await?;
        let maintenance = BucketMaintenance {
            unreferenced_file_removal: config,
        };
        self.set_setting(bucket.id, AttributeKey::Maintenance, &maintenance)
            .await
    }

    /// The table's maintenance configuration, defaults filled in.
    pub async fn table_maintenance(
        &self,
        table: &TableRef,
    ) -> Result<(Table, TableMaintenance), CatalogError> {
        let table = self.table(table).await?;
        let maintenance = self
            .setting(table.id, AttributeKey::Maintenance)
            .await?
            .unwrap_or_default();
        Ok((table, maintenance))
    }

    /// Replaces one job type's configuration of the table.
    pub async fn put_table_maintenance(
        &self,
        table: &TableRef,
        update: TableMaintenanceUpdate,
    ) -> Result<(), CatalogError> {
        let (table, mut maintenance) = self.table_maintenance(table).await?;
        match update {
            TableMaintenanceUpdate::Compaction(config) => maintenance.compaction = config,
            TableMaintenanceUpdate::SnapshotManagement(config) => {
                maintenance.snapshot_management = config
            }
        }
        self.set_setting(table.id, AttributeKey::Maintenance, &maintenance)
            .await
    }

    /// Every job type's status for the table: `Disabled` when configured off, else the outcome of the last run
    /// recorded in the maintenance run records, or `Not_Yet_Run`.
    pub async fn maintenance_job_status(
        &self,
        table: &TableRef,
    ) -> Result<(Table, BTreeMap<MaintenanceJobType, JobStatus>), CatalogError> {
        let (table, maintenance) = self.table_maintenance(table).await?;
        let bucket_maintenance: BucketMaintenance = self
            .setting(table.bucket.id, AttributeKey::Maintenance)
            .await?
            .unwrap_or_default();
        let configured = [
            (
                MaintenanceJobType::IcebergCompaction,
                maintenance.compaction.status,
            ),
            (
                MaintenanceJobType::IcebergSnapshotManagement,
                maintenance.snapshot_management.status,
            ),
            (
                MaintenanceJobType::IcebergUnreferencedFileRemoval,
                bucket_maintenance.unreferenced_file_removal.status,
            ),
        ];
        let mut status = BTreeMap::new();
        for (job, enabled) in configured {
            let entry = match enabled {
                MaintenanceStatus::Disabled => JobStatus {
                    state: JobState::Disabled,
                    last_run: None,
                    failure_message: None,
                },
                // The latest decided run as maintenance recorded it (a backed-off run changes nothing).
                MaintenanceStatus::Enabled => {
                    match self.meta.last_decided_run(table.id, job.as_str()).await? {
                        None => JobStatus {
                            state: JobState::NotYetRun,
                            last_run: None,
                            failure_message: None,
                        },
                        Some(run) => {
                            let took = chrono::Duration::milliseconds(
                                i64::try_from(run.duration_ms).unwrap_or(i64::MAX),
                            );
                            let failed = run.outcome == JobState::Failed.as_str();
                            JobStatus {
                                state: if failed {
                                    JobState::Failed
                                } else {
                                    JobState::Successful
                                },
                                last_run: Some(
                                    run.started_at
                                        .checked_add_signed(took)
                                        .unwrap_or(run.started_at),
                                ),
                                failure_message: if failed { run.message } else { None },
                            }
                        }
                    }
                }
            };
            status.insert(job, entry);
        }
        Ok((table, status))
    }
}

/// What the maintenance service reads through the catalog: tables by id (their files and abandoned uploads are
/// reached through `Catalog::table_files`).
impl Catalog {
    /// The table with this id, `None` when it was dropped.
    pub async fn table_by_id(&self, id: Uuid) -> Result<Option<Table>, CatalogError> {
        let Some(record) = self.meta.table_by_id(id).await? else {
            return Ok(None);
        };
        let Some(bucket) = self.meta.bucket_by_id(record.bucket_id).await? else {
            return Ok(None);
        };
        let bucket = self.bucket_from_record(bucket)?;
        Self::table_from_record(&bucket, record).map(Some)
    }
}
