//! What a table migration (the `tablebay-migration` crate) needs of the catalog: a storage reserved for a table
//! that has no row yet, the row published in one step once its first metadata file is written, later metadata
//! swapped in by the migration alone, and the write lock that keeps clients (and maintenance) from committing
//! to a table a migration still owns. Reading the source and rewriting its files is the migration crate's job.

use chrono::Utc;
use iceberg::spec::TableMetadata;
use serde::{Deserialize, Serialize};
use tablebay_store::StoreError;
use tablebay_store::meta::{AttributeKey, PointerSwap};
use uuid::Uuid;

use crate::catalog::new_version_token;
use crate::{AccountId, Catalog, Namespace, ServiceError, Table, TableName};

/// The write lock of a table a migration owns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationLock {
    /// The migration (start run) that created the table.
    pub migration_id: String,
}

impl Catalog {
    /// Reserves a fresh storage `s3://<id>--table-s3` in `namespace` for a table that has no row yet (the one a
    /// migration fills before it publishes the table), encrypted as the bucket says, and write-locked for
    /// `lock` before any row can exist. Returns its id. A storage never published is removed by
    /// [`Catalog::discard_reserved_storage`].
    pub async fn reserve_table_storage(
        &self,
        namespace: &Namespace,
        lock: &MigrationLock,
    ) -> Result<Uuid, ServiceError> {
        let table_id = Uuid::now_v7();
        self.set_setting(table_id, AttributeKey::MigrationLock, lock)
            .await?;
        self.detach_new_storage(namespace, table_id, "migrating")
            .await?;
        Ok(table_id)
    }

    /// Removes everything of a reserved storage that was never published: its files, its settings and its
    /// reservation. Nothing of it was ever visible as a table.
    pub async fn discard_reserved_storage(&self, table_id: Uuid) -> Result<(), ServiceError> {
        if self.meta.table_by_id(table_id).await?.is_some() {
            return Err(ServiceError::Internal(format!(
                "storage {table_id} belongs to a published table"
            )));
        }
        self.purge_table_storage(table_id).await?;
        for key in [AttributeKey::Encryption, AttributeKey::MigrationLock] {
            self.meta.delete_attribute(table_id, key).await?;
        }
        self.meta.forget_detached_storage(table_id).await?;
        Ok(())
    }

    /// Publishes the row of a migrated table whose first metadata file is written in its reserved storage:
    /// the metadata must keep to that storage (as a registered table's must). `AlreadyExists` when the name was
    /// taken meanwhile.
    pub async fn publish_migrated_table(
        &self,
        namespace: &Namespace,
        table_id: Uuid,
        name: &TableName,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<Table, ServiceError> {
        self.check_no_view(namespace, name).await?;
        self.check_migrated_metadata(table_id, metadata_location)
            .await?;
        self.insert_iceberg_table(namespace, table_id, name, metadata_location, by)
            .await
    }

    /// Points a migrated table at a new metadata file (a sync), if it still has the version `table` was read
    /// at: only the migration that owns the table writes it, so a changed token is a `Conflict`.
    pub async fn swap_migrated_metadata(
        &self,
        table: &Table,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<(), ServiceError> {
        self.check_migrated_metadata(table.id, metadata_location)
            .await?;
        let swap = PointerSwap {
            table_id: table.id,
            expected_version_token: table.version_token.clone(),
            new_version_token: new_version_token(),
            new_metadata_location: metadata_location.to_string(),
            modified_at: Utc::now(),
            modified_by: by.to_string(),
        };
        self.meta
            .swap_table_pointers(std::slice::from_ref(&swap))
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) | StoreError::NotFound => ServiceError::Conflict(
                    "the destination table changed or was dropped during the sync".into(),
                ),
                other => other.into(),
            })
    }

    /// The write lock of a table, if a migration still owns it.
    pub async fn migration_lock(
        &self,
        table_id: Uuid,
    ) -> Result<Option<MigrationLock>, ServiceError> {
        self.setting(table_id, AttributeKey::MigrationLock).await
    }

    /// Lifts a table's write lock (CompleteTableMigration): from now on it is an ordinary table.
    pub async fn release_migration_lock(&self, table_id: Uuid) -> Result<(), ServiceError> {
        self.meta
            .delete_attribute(table_id, AttributeKey::MigrationLock)
            .await?;
        Ok(())
    }

    /// `Denied` when a migration still owns the table: clients read it, but only the migration writes it
    /// until CompleteTableMigration (so that a later sync cannot overwrite their changes).
    pub(crate) async fn check_writable(&self, table_id: Uuid) -> Result<(), ServiceError> {
        match self.migration_lock(table_id).await? {
            None => Ok(()),
            Some(lock) => Err(ServiceError::Denied(format!(
                "The table is the destination of migration {} and is read-only until the migration is \
                 completed (CompleteTableMigration)",
                lock.migration_id
            ))),
        }
    }

    async fn check_migrated_metadata(
        &self,
        table_id: Uuid,
        metadata_location: &str,
    ) -> Result<TableMetadata, ServiceError> {
        let files = self.table_files(table_id);
        let json = files.read(metadata_location).await?.ok_or_else(|| {
            ServiceError::Internal(format!("metadata file {metadata_location} is missing"))
        })?;
        let metadata = serde_json::from_slice::<TableMetadata>(&json).map_err(|e| {
            ServiceError::invalid(format!(
                "the migrated metadata {metadata_location} is not valid table metadata: {e}"
            ))
        })?;
        files.check_metadata(&metadata)?;
        Ok(metadata)
    }
}
