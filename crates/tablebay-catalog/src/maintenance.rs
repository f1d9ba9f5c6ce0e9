//! Maintenance configuration (per bucket and per table, defaults filled in as S3 Tables does) and the job
//! status that `GetTableMaintenanceJobStatus` reports (`reference/s3tables-api.md` §4).

use std::collections::BTreeMap;

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

    /// Every job type's status for the table: `Disabled` when configured off, else the last recorded outcome,
    /// or `Not_Yet_Run`.
    pub async fn maintenance_job_status(
        &self,
        table: &TableRef,
    ) -> Result<(Table, BTreeMap<MaintenanceJobType, JobStatus>), CatalogError> {
        let (table, maintenance) = self.table_maintenance(table).await?;
        let bucket_maintenance: BucketMaintenance = self
            .setting(table.bucket.id, AttributeKey::Maintenance)
            .await?
            .unwrap_or_default();
        let recorded: BTreeMap<MaintenanceJobType, JobStatus> = self
            .setting(table.id, AttributeKey::MaintenanceStatus)
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
        let status = configured
            .into_iter()
            .map(|(job, enabled)| {
                let status = match (enabled, recorded.get(&job)) {
                    (MaintenanceStatus::Disabled, _) => JobStatus {
                        state: JobState::Disabled,
                        last_run: None,
                        failure_message: None,
                    },
                    (MaintenanceStatus::Enabled, Some(recorded)) => recorded.clone(),
                    (MaintenanceStatus::Enabled, None) => JobStatus {
                        state: JobState::NotYetRun,
                        last_run: None,
                        failure_message: None,
                    },
                };
                (job, status)
            })
            .collect();
        Ok((table, status))
    }
}
