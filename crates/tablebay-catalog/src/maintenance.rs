//! Maintenance configuration (per bucket and per table, defaults filled in as S3 Tables does) and the job
//! status that `GetTableMaintenanceJobStatus` reports (`reference/s3tables-api.md` §4).

use std::collections::BTreeMap;

use uuid::Uuid;

use tablebay_store::meta::{AttributeKey, RunRecord};

use crate::settings::JobConfig;
use crate::{
    BucketArn, BucketMaintenance, Catalog, CompactionSettings, JobState, JobStatus,
    MaintenanceJobType, MaintenanceStatus, RecordExpiration, ServiceError,
    SnapshotManagementSettings, Table, TableMaintenance, TableRef, UnreferencedFileRemovalSettings,
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
    ) -> Result<BucketMaintenance, ServiceError> {
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
    ) -> Result<(), ServiceError> {
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
    ) -> Result<(Table, TableMaintenance), ServiceError> {
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
    ) -> Result<(), ServiceError> {
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

    /// The status of every job type of the maintenance configuration (record expiration has its own
    /// operation): `Disabled` when configured off, else the outcome of the last run recorded in the maintenance
    /// run records, or `Not_Yet_Run`.
    pub async fn maintenance_job_status(
        &self,
        table: &TableRef,
    ) -> Result<(Table, BTreeMap<MaintenanceJobType, JobStatus>), ServiceError> {
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
            let (entry, _) = self.last_run_status(&table, job, enabled).await?;
            status.insert(job, entry);
        }
        Ok((table, status))
    }
}

/// The status of a table's record expiration job and what its last successful run removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordExpirationStatus {
    /// The job status (as for the other job types).
    pub status: JobStatus,
    /// What the last run removed, when it succeeded.
    pub metrics: Option<RecordExpirationMetrics>,
}

/// What one record expiration run removed (`GetTableRecordExpirationJobStatus`'s `metrics`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordExpirationMetrics {
    /// Data files removed from the table (dropped whole or replaced by a rewrite).
    pub deleted_data_files: u64,
    /// Records removed.
    pub deleted_records: u64,
    /// Bytes of the data files removed.
    pub removed_files_size: u64,
}

/// The run-record detail holding the records a record expiration run removed.
pub const DELETED_RECORDS_DETAIL: &str = "deletedRecords";

impl Catalog {
    /// Replaces the table's record expiration configuration.
    pub async fn put_record_expiration(
        &self,
        table: &TableRef,
        config: RecordExpiration,
    ) -> Result<(), ServiceError> {
        let (table, mut maintenance) = self.table_maintenance(table).await?;
        maintenance.record_expiration = config;
        self.set_setting(table.id, AttributeKey::Maintenance, &maintenance)
            .await
    }

    /// The status of the table's record expiration job, with the metrics of its last run (from the run record
    /// maintenance wrote: files and bytes taken in, and the `deletedRecords` detail).
    pub async fn record_expiration_status(
        &self,
        table: &TableRef,
    ) -> Result<(Table, RecordExpirationStatus), ServiceError> {
        let (table, maintenance) = self.table_maintenance(table).await?;
        let (status, run) = self
            .last_run_status(
                &table,
                MaintenanceJobType::IcebergRecordExpiration,
                maintenance.record_expiration.status,
            )
            .await?;
        let metrics = run
            .filter(|_| status.state == JobState::Successful)
            .map(|run| {
                let details: BTreeMap<String, u64> =
                    serde_json::from_str(&run.details).unwrap_or_default();
                RecordExpirationMetrics {
                    deleted_data_files: run.files_in,
                    deleted_records: details.get(DELETED_RECORDS_DETAIL).copied().unwrap_or(0),
                    removed_files_size: run.bytes_in,
                }
            });
        Ok((table, RecordExpirationStatus { status, metrics }))
    }

    /// One job type's status: `Disabled` when configured off, else the outcome of the last decided run (a
    /// backed-off run changes nothing), or `Not_Yet_Run`; with that run's record.
    async fn last_run_status(
        &self,
        table: &Table,
        job: MaintenanceJobType,
        configured: MaintenanceStatus,
    ) -> Result<(JobStatus, Option<RunRecord>), ServiceError> {
        let idle = |state| JobStatus {
            state,
            last_run: None,
            failure_message: None,
        };
        if configured == MaintenanceStatus::Disabled {
            return Ok((idle(JobState::Disabled), None));
        }
        let Some(run) = self.meta.last_decided_run(table.id, job.as_str()).await? else {
            return Ok((idle(JobState::NotYetRun), None));
        };
        let took =
            chrono::Duration::milliseconds(i64::try_from(run.duration_ms).unwrap_or(i64::MAX));
        let failed = run.outcome == JobState::Failed.as_str();
        let status = JobStatus {
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
            failure_message: if failed { run.message.clone() } else { None },
        };
        Ok((status, Some(run)))
    }
}

/// What the maintenance service reads through the catalog: tables by id (their files and abandoned uploads are
/// reached through `Catalog::table_files`).
impl Catalog {
    /// The table with this id, `None` when it was dropped.
    pub async fn table_by_id(&self, id: Uuid) -> Result<Option<Table>, ServiceError> {
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
