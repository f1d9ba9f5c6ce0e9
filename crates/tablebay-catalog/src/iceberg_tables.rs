//! Tables as the Iceberg REST catalog sees them: a table row plus its current metadata file, read through the
//! parsed-metadata cache. Create (with the first metadata file), stage-create (nothing persisted), register an
//! existing metadata file, drop (optionally purging the table's storage in the background).
//!
//! Commits live in `commit.rs`; the rows are the same ones the S3 Tables control plane manages (`table.rs`), so
//! a table created or committed through either API is seen by the other.

use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use iceberg::spec::TableMetadata;
use tablebay_store::StoreError;
use tablebay_store::meta::{AttributeKey, TableRecord};
use uuid::Uuid;

use crate::catalog::new_version_token;
use crate::metadata_cache::LoadedMetadata;
use crate::{
    AccountId, BucketArn, Catalog, Namespace, NewTable, ServiceError, Table, TableDefinition,
    TableName, TableRef, Tags,
};
use tablebay_objects::{TableLocation, warehouse_location};

/// A table with its current Iceberg metadata.
#[derive(Clone, Debug)]
pub struct IcebergTable {
    /// The table row.
    pub table: Table,
    /// Where its current metadata file is.
    pub metadata_location: String,
    /// The parsed metadata (shared with the cache).
    pub metadata: Arc<LoadedMetadata>,
}

/// The metadata of a table that stage-create described but did not persist.
#[derive(Clone, Debug)]
pub struct StagedTable {
    /// The id the table gets if the staged create is committed.
    pub table_id: Uuid,
    /// Its storage, `s3://<id>--table-s3`.
    pub location: String,
    /// The first metadata.
    pub metadata: TableMetadata,
}

/// What dropping a table does to its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropMode {
    /// Keep them (Spark's `DROP TABLE … PURGE` deletes files itself by reading the old metadata: trap 12).
    KeepFiles,
    /// Delete the table's storage in the background.
    Purge,
}

/// Metadata files larger than this are parsed on the blocking pool rather than on a request thread.
const INLINE_PARSE_BYTES: usize = 64 * 1024;

fn table_not_found() -> ServiceError {
    ServiceError::NotFound("The specified table does not exist.".to_string())
}

/// Parses a metadata document, on the blocking pool when it is large.
pub(crate) async fn parse_metadata(json: Bytes) -> Result<TableMetadata, ServiceError> {
    let parse = |json: &Bytes| {
        serde_json::from_slice::<TableMetadata>(json)
            .map_err(|e| ServiceError::Internal(format!("unreadable table metadata: {e}")))
    };
    if json.len() <= INLINE_PARSE_BYTES {
        return parse(&json);
    }
    tokio::task::spawn_blocking(move || parse(&json))
        .await
        .map_err(|e| ServiceError::Internal(format!("metadata parse task failed: {e}")))?
}

impl Catalog {
    /// The table `name` of a resolved namespace with its current metadata. `NotFound` when there is no such
    /// table, or when it has no metadata yet (created through the control plane without a schema).
    pub async fn iceberg_table(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<IcebergTable, ServiceError> {
        let record = self
            .meta
            .table_by_name(namespace.id, name.as_str())
            .await?
            .ok_or_else(table_not_found)?;
        let table = Self::table_from_record(&namespace.bucket, record)?;
        self.with_metadata(table).await
    }

    /// The table row `name` of a resolved namespace, without reading its metadata (HEAD).
    pub async fn table_in(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<Table, ServiceError> {
        let record = self
            .meta
            .table_by_name(namespace.id, name.as_str())
            .await?
            .ok_or_else(table_not_found)?;
        Self::table_from_record(&namespace.bucket, record)
    }

    /// A table with its current metadata, by ARN or name.
    pub async fn load_iceberg_table(&self, table: &TableRef) -> Result<IcebergTable, ServiceError> {
        let table = self.table(table).await?;
        self.with_metadata(table).await
    }

    /// The current metadata of a resolved table row (re-read from the store: the row may be stale).
    pub async fn reload_iceberg_table(&self, table: &Table) -> Result<IcebergTable, ServiceError> {
        let record = self
            .meta
            .table_by_id(table.id)
            .await?
            .ok_or_else(table_not_found)?;
        let table = Self::table_from_record(&table.bucket, record)?;
        self.with_metadata(table).await
    }

    /// Attaches the current metadata to a table row. The metadata file is read through the table's own storage:
    /// a pointer to any other file is refused, never followed.
    pub async fn with_metadata(&self, table: Table) -> Result<IcebergTable, ServiceError> {
        let Some(location) = table.metadata_location.clone() else {
            return Err(ServiceError::NotFound(format!(
                "Table {}.{} has no Iceberg metadata yet",
                table.namespace, table.name
            )));
        };
        let metadata = self.table_files(table.id).read_metadata(&location).await?;
        Ok(IcebergTable {
            table,
            metadata_location: location,
            metadata,
        })
    }

    /// Creates a table in a resolved namespace and writes its first metadata file (fresh column, spec and sort
    /// order ids, as Java's `newTableMetadata`); the requested location is ignored: every table lives in its own
    /// storage `s3://<id>--table-s3`.
    pub async fn create_iceberg_table(
        &self,
        namespace: &Namespace,
        name: TableName,
        definition: TableDefinition,
        by: &AccountId,
    ) -> Result<IcebergTable, ServiceError> {
        self.check_no_view(namespace, &name).await?;
        let new = NewTable {
            name,
            format: "ICEBERG".to_string(),
            definition: Some(definition),
            encryption: None,
            storage_class: None,
            tags: Tags::default(),
        };
        let table = self
            .create_table(&namespace.bucket.arn, &namespace.name, new, by)
            .await?;
        self.with_metadata(table).await
    }

    /// Whether a table of the namespace has the name.
    pub(crate) async fn table_named(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<bool, ServiceError> {
        Ok(self
            .meta
            .table_by_name(namespace.id, name.as_str())
            .await?
            .is_some())
    }

    /// `AlreadyExists` when a view of the namespace has the name: tables and views share one name space.
    pub(crate) async fn check_no_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<(), ServiceError> {
        if self.view_exists(namespace, name).await? {
            return Err(ServiceError::AlreadyExists(format!(
                "View with same name already exists: {}.{name}",
                namespace.name
            )));
        }
        Ok(())
    }

    /// Stage-create: the metadata the table would get, with a fresh id and location; nothing is persisted.
    pub async fn stage_iceberg_table(
        &self,
        namespace: &Namespace,
        definition: TableDefinition,
    ) -> Result<StagedTable, ServiceError> {
        let table_id = Uuid::now_v7();
        let location = warehouse_location(table_id);
        let metadata = definition.build_metadata(table_id, &location)?;
        self.table_files(table_id).check_metadata(&metadata)?;
        // The client writes data files before it commits the create: its storage must resolve already.
        self.detach_new_storage(namespace, table_id, "staged")
            .await?;
        Ok(StagedTable {
            table_id,
            location,
            metadata,
        })
    }

    /// Records the storage of a table that has no row yet (a staged create, a migration) as its bucket's, so
    /// that files can be written to it before the row exists, encrypted as the table will be.
    pub(crate) async fn detach_new_storage(
        &self,
        namespace: &Namespace,
        table_id: Uuid,
        reason: &str,
    ) -> Result<(), ServiceError> {
        let owner = &namespace.bucket.arn;
        self.meta
            .record_detached_storage(
                table_id,
                owner.account.as_str(),
                owner.name.as_str(),
                reason,
                Utc::now(),
            )
            .await?;
        let encryption = self.bucket_encryption(&namespace.bucket).await?;
        self.set_setting(table_id, AttributeKey::Encryption, &encryption)
            .await
    }

    /// Inserts the row of a table whose first metadata file is already written, with the bucket's default
    /// encryption and storage class (the Iceberg create paths: staged create and register).
    pub(crate) async fn insert_iceberg_table(
        &self,
        namespace: &Namespace,
        table_id: Uuid,
        name: &TableName,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<Table, ServiceError> {
        let now = Utc::now();
        let record = TableRecord {
            id: table_id,
            bucket_id: namespace.bucket.id,
            namespace_id: namespace.id,
            namespace_name: namespace.name.to_string(),
            name: name.to_string(),
            format: "ICEBERG".to_string(),
            version_token: new_version_token(),
            metadata_location: Some(metadata_location.to_string()),
            warehouse_location: warehouse_location(table_id),
            created_at: now,
            created_by: by.to_string(),
            modified_at: now,
            modified_by: by.to_string(),
        };
        self.meta.insert_table(&record).await.map_err(|e| match e {
            StoreError::AlreadyExists(_) => ServiceError::AlreadyExists(
                "A table with an identical name already exists in the namespace.".into(),
            ),
            StoreError::NotFound => {
                ServiceError::NotFound("The specified namespace does not exist.".into())
            }
            other => other.into(),
        })?;
        // A staged create or a registered dropped table has a row again.
        self.meta.forget_detached_storage(table_id).await?;
        let encryption = self.bucket_encryption(&namespace.bucket).await?;
        self.set_setting(table_id, AttributeKey::Encryption, &encryption)
            .await?;
        let storage_class = self.bucket_storage_class(&namespace.bucket).await?;
        self.set_setting(table_id, AttributeKey::StorageClass, &storage_class)
            .await?;
        Self::table_from_record(&namespace.bucket, record)
    }

    /// Registers an existing metadata file as a new table. A storage belongs to one table, and to its account
    /// until it is purged: the file must lie in the storage of a table of this account that has no row (dropped
    /// without purge, or staged and never created), and the new table adopts that storage, id and all. See
    /// `check_adoptable` for the refusals. The metadata itself must keep to that storage.
    pub async fn register_iceberg_table(
        &self,
        namespace: &Namespace,
        name: &TableName,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<IcebergTable, ServiceError> {
        let file = TableLocation::parse(metadata_location).ok_or_else(|| {
            ServiceError::invalid(format!(
                "metadata-location {metadata_location} is not inside a table's storage (s3://<uuid>--table-s3/…)"
            ))
        })?;
        if self.table_named(namespace, name).await? {
            return Err(ServiceError::AlreadyExists(format!(
                "Table already exists: {}.{name}",
                namespace.name
            )));
        }
        self.check_no_view(namespace, name).await?;
        self.check_adoptable(file.table_id, &namespace.bucket.arn, by, metadata_location)
            .await?;
        let files = self.table_files(file.table_id);
        let json = files.read(metadata_location).await?.ok_or_else(|| {
            ServiceError::invalid(format!("metadata file {metadata_location} does not exist"))
        })?;
        let metadata = serde_json::from_slice::<TableMetadata>(&json).map_err(|e| {
            ServiceError::invalid(format!(
                "{metadata_location} is not valid table metadata: {e}"
            ))
        })?;
        files.check_metadata(&metadata)?;
        let location = file.uri();
        let table = self
            .insert_iceberg_table(namespace, file.table_id, name, &location, by)
            .await?;
        let loaded = Arc::new(LoadedMetadata::new(metadata, json));
        self.metadata_cache
            .insert(location.clone(), loaded.clone())
            .await;
        Ok(IcebergTable {
            table,
            metadata_location: location,
            metadata: loaded,
        })
    }

    /// Whether a new table of the bucket `destination`, created by `caller`, may adopt the storage of `table_id`
    /// (named by `location`): only a storage no live table owns, of a table of the destination's account that
    /// has no row — dropped without purge, or staged and not yet created. Storage belongs to its account until
    /// it is purged, so another account's (live or not) is `Denied`, and so is a caller of another account
    /// adopting storage of a bucket other than the one its table goes to; a live table's storage is
    /// `AlreadyExists` (two tables never share files); a storage nobody owns (purged, or never a table's) is
    /// `Invalid`.
    pub(crate) async fn check_adoptable(
        &self,
        table_id: Uuid,
        destination: &BucketArn,
        caller: &AccountId,
        location: &str,
    ) -> Result<(), ServiceError> {
        let Some((account, bucket)) = self.meta.table_owner(table_id).await? else {
            return Err(ServiceError::invalid(format!(
                "{location} is not in the storage of a table that exists or was dropped without purge"
            )));
        };
        // A caller of another account, allowed to create tables in the destination bucket, may adopt only the
        // storage of that bucket (its own staged creates there), not the rest of the account's.
        let caller_may = account == caller.as_str() || bucket == destination.name.as_str();
        if account != destination.account.as_str() || !caller_may {
            return Err(ServiceError::Denied(format!(
                "{location} is in the storage of another account's table: storage belongs to its account \
                 until it is purged"
            )));
        }
        if self.meta.table_by_id(table_id).await?.is_some() {
            return Err(ServiceError::AlreadyExists(format!(
                "{location} is in the storage of a live table, and a storage belongs to one table: drop that \
                 table (without purge) to register its files under another name"
            )));
        }
        Ok(())
    }

    /// Drops a resolved table (by its id: the table that was authorized, whatever its name is now). With
    /// [`DropMode::Purge`] its storage is deleted in the background
    /// after the row is gone (a failure is logged; unreferenced-file removal is the backstop).
    pub async fn drop_iceberg_table(
        &self,
        table: &Table,
        mode: DropMode,
    ) -> Result<Table, ServiceError> {
        self.delete_iceberg_table(table, None, mode).await
    }

    /// Unregisters a table (Iceberg REST `unregisterTable`): the catalog forgets it, and its files stay where
    /// they are, so that its storage can be registered again (here or by another catalog). Returns the table as
    /// it was when its row went: the row is deleted only if it still has the version that was read, so the
    /// metadata returned holds every commit that happened before (the spec's requirement); a commit that lands
    /// in between is read again.
    pub async fn unregister_iceberg_table(
        &self,
        table: &Table,
    ) -> Result<IcebergTable, ServiceError> {
        const ATTEMPTS: u32 = 8;
        let mut current = table.clone();
        for _ in 0..ATTEMPTS {
            let loaded = self.with_metadata(current.clone()).await?;
            let expected = current.version_token.clone();
            match self
                .delete_iceberg_table(&current, Some(&expected), DropMode::KeepFiles)
                .await
            {
                Ok(_) => return Ok(loaded),
                Err(ServiceError::Conflict(_)) => {
                    current = self
                        .table(&TableRef::Arn(table.arn.clone()))
                        .await
                        .map_err(|e| match e {
                            ServiceError::NotFound(_) => table_not_found(),
                            other => other,
                        })?;
                }
                Err(other) => return Err(other),
            }
        }
        Err(ServiceError::Conflict(
            "The table changed concurrently while unregistering it; retry".into(),
        ))
    }

    /// Deletes a table's row (only at `expected_version_token` when given), then purges or detaches its storage.
    async fn delete_iceberg_table(
        &self,
        table: &Table,
        expected_version_token: Option<&str>,
        mode: DropMode,
    ) -> Result<Table, ServiceError> {
        let deleted = self
            .meta
            .delete_table(table.id, expected_version_token)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => table_not_found(),
                other => other.into(),
            })?;
        let table = Self::table_from_record(&table.bucket, deleted)?;
        match mode {
            DropMode::Purge => self.spawn_purge(table.id),
            // Keep the storage reachable: engines purge client-side from the old metadata (trap 12).
            DropMode::KeepFiles => {
                let owner = &table.bucket.arn;
                self.meta
                    .record_detached_storage(
                        table.id,
                        owner.account.as_str(),
                        owner.name.as_str(),
                        "dropped",
                        Utc::now(),
                    )
                    .await?;
            }
        }
        Ok(table)
    }

    /// Deletes every file in a table's storage; returns how many. Called after the table's row is gone.
    pub(crate) async fn purge_table_storage(&self, table_id: Uuid) -> Result<u64, ServiceError> {
        Ok(self.objects.purge_table(table_id).await?)
    }

    /// Purges a dropped table's storage in the background; a failure is logged, and unreferenced-file removal
    /// is the backstop.
    pub(crate) fn spawn_purge(&self, table_id: Uuid) {
        let catalog = self.clone();
        tokio::spawn(async move {
            match catalog.purge_table_storage(table_id).await {
                Ok(count) => {
                    tracing::info!(%table_id, files = count, "purged the storage of a dropped table")
                }
                Err(e) => {
                    tracing::warn!(%table_id, error = %e, "could not purge the storage of a dropped table")
                }
            }
        });
    }
}
