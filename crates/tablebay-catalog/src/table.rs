//! Tables: create (optionally with a first Iceberg metadata file), resolve, list, rename, delete, and the
//! compare-and-swap of the metadata pointer that `UpdateTableMetadataLocation` and Iceberg commits share.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tablebay_store::StoreError;
use tablebay_store::meta::{AttributeKey, PointerSwap, TableRecord};
use uuid::Uuid;

use crate::catalog::new_version_token;
use crate::metadata::metadata_file_location;
use crate::{
    AccountId, BucketArn, Catalog, ContinuationToken, Encryption, NamespaceName, Page, PageRequest,
    ServiceError, StorageClass, TableArn, TableBucket, TableDefinition, TableName, Tags,
};
use tablebay_objects::warehouse_location;

/// A table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The table id (also its Iceberg table UUID when the server created the metadata).
    pub id: Uuid,
    /// Its ARN (kept across renames).
    pub arn: TableArn,
    /// The bucket it lives in.
    pub bucket: TableBucket,
    /// Id of its namespace.
    pub namespace_id: Uuid,
    /// Name of its namespace.
    pub namespace: NamespaceName,
    /// Its name.
    pub name: TableName,
    /// Open table format (`ICEBERG`).
    pub format: String,
    /// Changes on every metadata commit.
    pub version_token: String,
    /// Current metadata file; absent until the first commit.
    pub metadata_location: Option<String>,
    /// `s3://<id>--table-s3`.
    pub warehouse_location: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Creator's account.
    pub created_by: String,
    /// Time of the last change.
    pub modified_at: DateTime<Utc>,
    /// Account of the last change.
    pub modified_by: String,
}

/// How a request names a table: by ARN, or by bucket, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableRef {
    /// By table ARN.
    Arn(TableArn),
    /// By bucket ARN, namespace and name.
    Name {
        /// The bucket.
        bucket: BucketArn,
        /// The namespace.
        namespace: NamespaceName,
        /// The table name.
        name: TableName,
    },
}

/// What CreateTable asks for.
#[derive(Clone, Debug)]
pub struct NewTable {
    /// The name.
    pub name: TableName,
    /// Open table format; only `ICEBERG`.
    pub format: String,
    /// Schema and layout: when given, the server writes the first metadata file.
    pub definition: Option<TableDefinition>,
    /// Encryption; the bucket's default when absent. Fixed for the table's life.
    pub encryption: Option<Encryption>,
    /// Storage class; the bucket's when absent.
    pub storage_class: Option<StorageClass>,
    /// Tags.
    pub tags: Tags,
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("The specified table does not exist.".to_string())
}

fn stale_token() -> ServiceError {
    ServiceError::Conflict(
        "The provided version token does not match the table version token.".to_string(),
    )
}

/// Sort key of a table in a bucket-wide listing: namespace, then name.
fn listing_key(table: &Table) -> String {
    format!("{}\u{0}{}", table.namespace, table.name)
}

impl Catalog {
    pub(crate) fn table_from_record(
        bucket: &TableBucket,
        record: TableRecord,
    ) -> Result<Table, ServiceError> {
        Ok(Table {
            id: record.id,
            arn: TableArn {
                bucket: bucket.arn.clone(),
                table_id: record.id,
            },
            bucket: bucket.clone(),
            namespace_id: record.namespace_id,
            namespace: NamespaceName::parse(&record.namespace_name)?,
            name: TableName::parse(&record.name)?,
            format: record.format,
            version_token: record.version_token,
            metadata_location: record.metadata_location,
            warehouse_location: record.warehouse_location,
            created_at: record.created_at,
            created_by: record.created_by,
            modified_at: record.modified_at,
            modified_by: record.modified_by,
        })
    }

    /// Creates a table. With a definition, the first metadata file is written before the row commits, so the
    /// table is never visible without it.
    pub async fn create_table(
        &self,
        bucket: &BucketArn,
        namespace: &NamespaceName,
        new: NewTable,
        created_by: &AccountId,
    ) -> Result<Table, ServiceError> {
        if new.format != "ICEBERG" {
            return Err(ServiceError::invalid(format!(
                "Invalid format '{}': expected ICEBERG",
                new.format
            )));
        }
        let namespace = self.namespace(bucket, namespace).await?;
        let bucket = &namespace.bucket;
        if self
            .meta
            .table_by_name(namespace.id, new.name.as_str())
            .await?
            .is_some()
        {
            return Err(table_exists());
        }
        let id = Uuid::now_v7();
        let location = warehouse_location(id);
        let encryption = match new.encryption {
            Some(encryption) => encryption,
            None => self.bucket_encryption(bucket).await?,
        };
        // Stored before the first metadata file is written, so that file is encrypted as the table's other files
        // (with its KMS key, for one); removed again if the create fails.
        self.set_setting(id, AttributeKey::Encryption, &encryption)
            .await?;
        let metadata_file = match new.definition {
            None => None,
            Some(definition) => match self.write_first_metadata(id, &location, definition).await {
                Ok(file) => Some(file),
                Err(e) => {
                    self.forget_encryption(id).await;
                    return Err(e);
                }
            },
        };
        let now = Utc::now();
        let record = TableRecord {
            id,
            bucket_id: bucket.id,
            namespace_id: namespace.id,
            namespace_name: namespace.name.to_string(),
            name: new.name.to_string(),
            format: new.format,
            version_token: new_version_token(),
            metadata_location: metadata_file.clone(),
            warehouse_location: location,
            created_at: now,
            created_by: created_by.to_string(),
            modified_at: now,
            modified_by: created_by.to_string(),
        };
        if let Err(e) = self.meta.insert_table(&record).await {
            if let Some(file) = &metadata_file {
                self.table_files(id).discard(file).await;
            }
            self.forget_encryption(id).await;
            return Err(match e {
                StoreError::AlreadyExists(_) => table_exists(),
                StoreError::NotFound => {
                    ServiceError::NotFound("The specified namespace does not exist.".to_string())
                }
                other => other.into(),
            });
        }
        let storage_class = match new.storage_class {
            Some(class) => class,
            None => self.bucket_storage_class(bucket).await?,
        };
        self.set_setting(id, AttributeKey::StorageClass, &storage_class)
            .await?;
        if !new.tags.0.is_empty() {
            self.set_setting(id, AttributeKey::Tags, &new.tags).await?;
        }
        Self::table_from_record(bucket, record)
    }

    /// Writes the first metadata file of a new table (`…/metadata/00000-<uuid>.metadata.json`); returns its
    /// location. A definition whose properties send files outside the table's storage is refused.
    async fn write_first_metadata(
        &self,
        id: Uuid,
        location: &str,
        definition: TableDefinition,
    ) -> Result<String, ServiceError> {
        let metadata = definition.build_metadata(id, location)?;
        let files = self.table_files(id);
        files.check_metadata(&metadata)?;
        let file = metadata_file_location(location, 0);
        let json = crate::metadata::metadata_json(&metadata)
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        files.put(&file, Bytes::from(json)).await?;
        Ok(file)
    }

    /// Removes the encryption setting of a table that was not created after all (best effort: an orphan
    /// setting of an unused id is harmless).
    async fn forget_encryption(&self, id: Uuid) {
        if let Err(e) = self
            .meta
            .delete_attribute(id, AttributeKey::Encryption)
            .await
        {
            tracing::warn!(error = %e, table = %id, "could not remove the setting of a table not created");
        }
    }

    /// Resolves a table reference: the one lookup of a table row every surface makes once per request. By name it
    /// is one query; only a miss asks again, to name what is missing (the bucket, the namespace or the table).
    pub async fn table(&self, table: &TableRef) -> Result<Table, ServiceError> {
        match table {
            TableRef::Arn(arn) => {
                let bucket = self.bucket(&arn.bucket).await?;
                let record = self
                    .meta
                    .table_by_id(arn.table_id)
                    .await?
                    .ok_or_else(not_found)?;
                if record.bucket_id != bucket.id {
                    return Err(not_found());
                }
                Self::table_from_record(&bucket, record)
            }
            TableRef::Name {
                bucket,
                namespace,
                name,
            } => {
                let found = if bucket.region == self.config.region {
                    self.meta
                        .table_by_path(
                            bucket.account.as_str(),
                            bucket.name.as_str(),
                            namespace.as_str(),
                            name.as_str(),
                        )
                        .await?
                } else {
                    None
                };
                let Some((bucket, record)) = found else {
                    self.namespace(bucket, namespace).await?;
                    return Err(not_found());
                };
                let bucket = self.bucket_from_record(bucket)?;
                Self::table_from_record(&bucket, record)
            }
        }
    }

    /// Lists the tables of a bucket (or of one of its namespaces), by namespace then name.
    pub async fn list_tables(
        &self,
        bucket: &BucketArn,
        namespace: Option<&NamespaceName>,
        page: &PageRequest,
    ) -> Result<Page<Table>, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        let namespace_id = match namespace {
            Some(name) => Some(self.namespace_in(&bucket, name).await?.id),
            None => None,
        };
        let after = page.token.as_ref().map(ContinuationToken::key);
        let after = match &after {
            None => None,
            Some(key) => Some(key.split_once('\u{0}').ok_or_else(|| {
                ServiceError::invalid("The continuation token provided is invalid")
            })?),
        };
        let records = self
            .meta
            .list_tables(
                bucket.id,
                namespace_id,
                page.prefix.as_deref(),
                after,
                page.limit + 1,
            )
            .await?;
        let tables = records
            .into_iter()
            .map(|r| Self::table_from_record(&bucket, r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_overfetch(tables, page.limit, listing_key))
    }

    /// Deletes a table and, in the background, its files (S3 Tables' DeleteTable removes the data too); with a
    /// version token, only if current.
    pub async fn delete_table(
        &self,
        table: &TableRef,
        version_token: Option<&str>,
    ) -> Result<Table, ServiceError> {
        let current = self.table(table).await?;
        let record = self
            .meta
            .delete_table(current.id, version_token)
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => stale_token(),
                StoreError::NotFound => not_found(),
                other => other.into(),
            })?;
        self.spawn_purge(record.id);
        Self::table_from_record(&current.bucket, record)
    }

    /// Renames and/or moves a table within its bucket, keeping its ARN and location.
    pub async fn rename_table(
        &self,
        table: &TableRef,
        new_namespace: Option<&NamespaceName>,
        new_name: Option<&TableName>,
        version_token: Option<&str>,
        by: &AccountId,
    ) -> Result<(), ServiceError> {
        let current = self.table(table).await?;
        let namespace_id = match new_namespace {
            Some(name) => self.namespace_in(&current.bucket, name).await?.id,
            None => current.namespace_id,
        };
        let name = new_name.unwrap_or(&current.name);
        self.meta
            .rename_table(
                current.id,
                namespace_id,
                name.as_str(),
                version_token,
                &new_version_token(),
                Utc::now(),
                by.as_str(),
            )
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => stale_token(),
                StoreError::AlreadyExists(_) => table_exists(),
                StoreError::NotFound => not_found(),
                other => other.into(),
            })
    }

    /// Points the table at a new metadata file if its version token is still `expected`; returns the table as
    /// it now is. A location outside the table's own storage is `Invalid`; a stale token is a `Conflict`.
    pub async fn update_metadata_location(
        &self,
        table: &TableRef,
        expected: &str,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<Table, ServiceError> {
        self.update_metadata_location_as(table, expected, metadata_location, by, None)
            .await
    }

    /// [`Catalog::update_metadata_location`] by a caller that may be a session of a role (`role`: its account
    /// and role name). A read-only replica takes new metadata only from a session of the role its metadata names
    /// (its replication worker); anyone else is `Denied`.
    pub async fn update_metadata_location_as(
        &self,
        table: &TableRef,
        expected: &str,
        metadata_location: &str,
        by: &AccountId,
        role: Option<(&str, &str)>,
    ) -> Result<Table, ServiceError> {
        if metadata_location.is_empty() || metadata_location.len() > 2048 {
            return Err(ServiceError::invalid(
                "metadataLocation must be between 1 and 2048 characters long",
            ));
        }
        if expected.is_empty() || expected.len() > 2048 {
            return Err(ServiceError::invalid(
                "versionToken must be between 1 and 2048 characters long",
            ));
        }
        let mut current = self.table(table).await?;
        self.check_writable(current.id).await?;
        // A table's metadata lies in its own storage: the server reads it on the callers' behalf (loads,
        // commits, maintenance), so another table's file here would let them read that table's rows.
        self.table_files(current.id)
            .resolve_as("metadataLocation", metadata_location)?;
        if current.version_token != expected {
            self.table_counters.commit_failed(current.id);
            return Err(stale_token());
        }
        // The current metadata decides whether the table is a replica; a pointer to a file that is missing or
        // not Iceberg metadata (the API allows any location in the table's storage) is not a replica's.
        let loaded = match current.metadata_location {
            None => None,
            Some(_) => match self.with_metadata(current.clone()).await {
                Ok(loaded) => Some(loaded),
                Err(e @ (ServiceError::Unavailable(_) | ServiceError::Store(_))) => return Err(e),
                Err(_) => None,
            },
        };
        if let Some(loaded) = loaded {
            let properties = loaded.metadata.metadata.properties();
            if let Some(why) = crate::replica_refusal(properties) {
                let writer = properties
                    .get(crate::REPLICA_ROLE_PROPERTY)
                    .and_then(|r| crate::role_parts(r));
                if writer.is_none() || writer != role {
                    return Err(ServiceError::Denied(why));
                }
            }
        }
        let swap = PointerSwap {
            table_id: current.id,
            expected_version_token: expected.to_string(),
            new_version_token: new_version_token(),
            new_metadata_location: metadata_location.to_string(),
            modified_at: Utc::now(),
            modified_by: by.to_string(),
        };
        self.meta
            .swap_table_pointers(std::slice::from_ref(&swap))
            .await
            .map_err(|e| {
                self.table_counters.commit_failed(current.id);
                match e {
                    StoreError::Conflict(_) => stale_token(),
                    StoreError::NotFound => not_found(),
                    other => other.into(),
                }
            })?;
        self.table_counters.committed(current.id);
        current.version_token = swap.new_version_token;
        current.metadata_location = Some(swap.new_metadata_location);
        current.modified_at = swap.modified_at;
        current.modified_by = swap.modified_by;
        Ok(current)
    }
}

fn table_exists() -> ServiceError {
    ServiceError::AlreadyExists(
        "A table with an identical name already exists in the namespace.".to_string(),
    )
}
