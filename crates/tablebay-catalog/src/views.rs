//! Iceberg views: create, register, load, list, replace (a commit of view updates), drop and rename. A view is a row
//! pointing at its current view-metadata file, which lives in the view's own storage (`s3://<id>--table-s3`,
//! like a table's), and is replaced with the same compare-and-swap on a version token as a table.
//!
//! Views and tables share one name space per namespace, as in Java's catalogs.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use iceberg::ViewUpdate;
use iceberg::spec::{Schema, ViewFormatVersion, ViewMetadata, ViewMetadataBuilder, ViewVersion};
use serde::Deserialize;
use tablebay_store::StoreError;
use tablebay_store::meta::ViewRecord;
use uuid::Uuid;

use crate::catalog::new_version_token;
use crate::metadata::metadata_file_location;
use crate::{AccountId, Catalog, Namespace, ServiceError, TableName};
use tablebay_objects::{TableLocation, warehouse_location};

/// The Iceberg property that, set to `false`, forbids deleting an entity's files (`gc.enabled`).
const GC_ENABLED: &str = "gc.enabled";

/// How many times a replace is rebased onto a view that moved before giving up with a conflict.
const MAX_ATTEMPTS: u32 = 8;

/// A view with its current metadata.
#[derive(Clone, Debug)]
pub struct IcebergView {
    /// The view id (its view UUID).
    pub id: Uuid,
    /// Its namespace.
    pub namespace: Namespace,
    /// Its name.
    pub name: TableName,
    /// Where its current metadata file is.
    pub metadata_location: String,
    /// The metadata.
    pub metadata: Arc<ViewMetadata>,
    /// The metadata file's bytes (a JSON document).
    pub json: Bytes,
    version_token: String,
}

/// What creating a view takes (`CreateViewRequest` minus the name and the ignored location).
#[derive(Clone, Debug)]
pub struct ViewDefinition {
    /// The schema of the first version.
    pub schema: Schema,
    /// The first version.
    pub version: ViewVersion,
    /// View properties.
    pub properties: HashMap<String, String>,
}

/// A requirement of a view commit.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type")]
pub enum ViewRequirement {
    /// The view's UUID must be this one.
    #[serde(rename = "assert-view-uuid")]
    AssertViewUuid {
        /// The expected UUID.
        uuid: Uuid,
    },
}

/// The requirements and updates of a view commit (replace).
#[derive(Clone, Debug, Default)]
pub struct ViewChange {
    /// What must hold.
    pub requirements: Vec<ViewRequirement>,
    /// What to change, in order.
    pub updates: Vec<ViewUpdate>,
}

fn view_not_found() -> ServiceError {
    ServiceError::NotFound("The specified view does not exist.".to_string())
}

/// The row of a new view `id`, created now by `by`, pointing at `location`.
fn new_view_record(
    id: Uuid,
    namespace: &Namespace,
    name: &TableName,
    location: &str,
    by: &AccountId,
) -> ViewRecord {
    let now = Utc::now();
    ViewRecord {
        id,
        bucket_id: namespace.bucket.id,
        namespace_id: namespace.id,
        namespace_name: namespace.name.to_string(),
        name: name.to_string(),
        version_token: new_version_token(),
        metadata_location: location.to_string(),
        created_at: now,
        created_by: by.to_string(),
        modified_at: now,
        modified_by: by.to_string(),
    }
}

/// A failed view insert, as the caller sees it.
fn insert_error(e: StoreError, namespace: &Namespace, name: &TableName) -> ServiceError {
    match e {
        StoreError::AlreadyExists(_) => {
            ServiceError::AlreadyExists(format!("View already exists: {}.{name}", namespace.name))
        }
        StoreError::NotFound => {
            ServiceError::NotFound("The specified namespace does not exist.".into())
        }
        other => other.into(),
    }
}

fn invalid(e: iceberg::Error) -> ServiceError {
    ServiceError::invalid(e.message().to_string())
}

/// Applies view updates on a builder (iceberg-rust has no `ViewUpdate::apply`).
fn apply_view_updates(
    current: &ViewMetadata,
    updates: Vec<ViewUpdate>,
) -> Result<ViewMetadata, ServiceError> {
    let mut builder = ViewMetadataBuilder::new_from_metadata(current.clone());
    for update in updates {
        builder = match update {
            ViewUpdate::AssignUuid { uuid } if uuid != current.uuid() => {
                return Err(ServiceError::invalid(format!(
                    "Cannot reassign the uuid of view {} to {uuid}",
                    current.uuid()
                )));
            }
            ViewUpdate::AssignUuid { .. } => builder,
            // Requested locations are overridden: a view lives in its own storage.
            ViewUpdate::SetLocation { .. } => builder,
            ViewUpdate::UpgradeFormatVersion { format_version } => builder
                .upgrade_format_version(format_version)
                .map_err(invalid)?,
            ViewUpdate::AddSchema { schema, .. } => builder.add_schema(schema),
            ViewUpdate::SetProperties { updates } => {
                builder.set_properties(updates).map_err(invalid)?
            }
            ViewUpdate::RemoveProperties { removals } => builder.remove_properties(&removals),
            ViewUpdate::AddViewVersion { view_version } => {
                builder.add_version(view_version).map_err(invalid)?
            }
            ViewUpdate::SetCurrentViewVersion { view_version_id } => builder
                .set_current_version_id(view_version_id)
                .map_err(invalid)?,
        };
    }
    Ok(builder.build().map_err(invalid)?.metadata)
}

impl Catalog {
    async fn view_from_record(
        &self,
        namespace: &Namespace,
        record: ViewRecord,
    ) -> Result<IcebergView, ServiceError> {
        // A view's metadata lies in its own storage, like a table's: the handle refuses anything else.
        let json = self
            .table_files(record.id)
            .read(&record.metadata_location)
            .await?
            .ok_or_else(|| {
                ServiceError::Internal(format!(
                    "view metadata {} does not exist",
                    record.metadata_location
                ))
            })?;
        let metadata: ViewMetadata = serde_json::from_slice(&json).map_err(|e| {
            ServiceError::Internal(format!(
                "unreadable view metadata {}: {e}",
                record.metadata_location
            ))
        })?;
        Ok(IcebergView {
            id: record.id,
            namespace: namespace.clone(),
            name: TableName::parse(&record.name)?,
            metadata_location: record.metadata_location,
            metadata: Arc::new(metadata),
            json,
            version_token: record.version_token,
        })
    }

    /// Writes a view's metadata file; returns its location and bytes.
    async fn write_view_metadata(
        &self,
        view_id: Uuid,
        version: u64,
        metadata: &ViewMetadata,
    ) -> Result<(String, Bytes), ServiceError> {
        let location = metadata_file_location(&warehouse_location(view_id), version);
        let json = Bytes::from(
            crate::metadata::metadata_json(metadata)
                .map_err(|e| ServiceError::Internal(e.to_string()))?,
        );
        self.table_files(view_id)
            .put(&location, json.clone())
            .await?;
        Ok((location, json))
    }

    /// Creates a view in a resolved namespace. `AlreadyExists` when a view or a table has the name.
    pub async fn create_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
        definition: ViewDefinition,
        by: &AccountId,
    ) -> Result<IcebergView, ServiceError> {
        self.check_name_free(namespace, name).await?;
        let id = Uuid::now_v7();
        let metadata = ViewMetadataBuilder::new(
            warehouse_location(id),
            definition.schema,
            definition.version,
            ViewFormatVersion::V1,
            definition.properties,
        )
        .map_err(invalid)?
        .assign_uuid(id)
        .build()
        .map_err(invalid)?
        .metadata;
        let (location, json) = self.write_view_metadata(id, 0, &metadata).await?;
        let record = new_view_record(id, namespace, name, &location, by);
        if let Err(e) = self.meta.insert_view(&record).await {
            self.table_files(id).discard(&location).await;
            return Err(insert_error(e, namespace, name));
        }
        Ok(IcebergView {
            id,
            namespace: namespace.clone(),
            name: name.clone(),
            metadata_location: location,
            metadata: Arc::new(metadata),
            json,
            version_token: record.version_token,
        })
    }

    /// Registers an existing view-metadata file as a new view (Iceberg REST `registerView`). As for tables
    /// (`register_iceberg_table`), a storage belongs to one table or view: the file must lie in the storage of a
    /// table of this account that has no row (dropped without purge, or unregistered), the view adopts that
    /// storage and its id, and its metadata must keep to it. `AlreadyExists` when a table or view has the name.
    pub async fn register_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
        metadata_location: &str,
        by: &AccountId,
    ) -> Result<IcebergView, ServiceError> {
        let file = TableLocation::parse(metadata_location).ok_or_else(|| {
            ServiceError::invalid(format!(
                "metadata-location {metadata_location} is not inside a table's storage (s3://<uuid>--table-s3/…)"
            ))
        })?;
        self.check_name_free(namespace, name).await?;
        self.check_adoptable(file.table_id, &namespace.bucket.arn, by, metadata_location)
            .await?;
        let json = self
            .table_files(file.table_id)
            .read(metadata_location)
            .await?
            .ok_or_else(|| {
                ServiceError::invalid(format!("metadata file {metadata_location} does not exist"))
            })?;
        let metadata: ViewMetadata = serde_json::from_slice(&json).map_err(|e| {
            ServiceError::invalid(format!(
                "{metadata_location} is not valid view metadata: {e}"
            ))
        })?;
        let storage = warehouse_location(file.table_id);
        let inside = metadata.location().trim_end_matches('/') == storage
            || metadata.location().starts_with(&format!("{storage}/"));
        if !inside {
            return Err(ServiceError::invalid(format!(
                "the view location {} is outside the view's storage {storage}",
                metadata.location()
            )));
        }
        let location = file.uri();
        let record = new_view_record(file.table_id, namespace, name, &location, by);
        self.meta
            .insert_view(&record)
            .await
            .map_err(|e| insert_error(e, namespace, name))?;
        // The view owns the storage now: it is no longer a dropped table's to register.
        self.meta.forget_detached_storage(file.table_id).await?;
        Ok(IcebergView {
            id: record.id,
            namespace: namespace.clone(),
            name: name.clone(),
            metadata_location: location,
            metadata: Arc::new(metadata),
            json,
            version_token: record.version_token,
        })
    }

    /// `AlreadyExists` when a table or a view of the namespace has the name (they share one name space).
    async fn check_name_free(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<(), ServiceError> {
        if self.table_named(namespace, name).await? {
            return Err(ServiceError::AlreadyExists(format!(
                "Table with same name already exists: {}.{name}",
                namespace.name
            )));
        }
        if self.view_exists(namespace, name).await? {
            return Err(ServiceError::AlreadyExists(format!(
                "View already exists: {}.{name}",
                namespace.name
            )));
        }
        Ok(())
    }

    /// The view `name` of a resolved namespace.
    pub async fn view(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<IcebergView, ServiceError> {
        let record = self
            .meta
            .view_by_name(namespace.id, name.as_str())
            .await?
            .ok_or_else(view_not_found)?;
        self.view_from_record(namespace, record).await
    }

    /// Whether the view exists (HEAD), without reading its metadata.
    pub async fn view_exists(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<bool, ServiceError> {
        Ok(self
            .meta
            .view_by_name(namespace.id, name.as_str())
            .await?
            .is_some())
    }

    /// The names of every view of a resolved namespace, in name order.
    pub async fn list_views(&self, namespace: &Namespace) -> Result<Vec<TableName>, ServiceError> {
        let mut names = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = self
                .meta
                .list_views(namespace.id, after.as_deref(), 1000)
                .await?;
            let done = page.len() < 1000;
            after = page.last().map(|v| v.name.clone());
            for record in page {
                names.push(TableName::parse(&record.name)?);
            }
            if done {
                return Ok(names);
            }
        }
    }

    /// Replaces a view: checks the requirements against its current metadata, applies the updates, writes the
    /// new metadata file and swaps the pointer (rebased when another replace won the race).
    pub async fn replace_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
        change: ViewChange,
        by: &AccountId,
    ) -> Result<IcebergView, ServiceError> {
        for attempt in 1..=MAX_ATTEMPTS {
            let current = self.view(namespace, name).await?;
            for requirement in &change.requirements {
                match requirement {
                    ViewRequirement::AssertViewUuid { uuid }
                        if *uuid != current.metadata.uuid() =>
                    {
                        return Err(ServiceError::Conflict(format!(
                            "Requirement failed: view UUID does not match: expected {} != {uuid}",
                            current.metadata.uuid()
                        )));
                    }
                    ViewRequirement::AssertViewUuid { .. } => {}
                }
            }
            let metadata = apply_view_updates(&current.metadata, change.updates.clone())?;
            let version = metadata.versions().len() as u64 + u64::from(attempt);
            let (location, json) = self
                .write_view_metadata(current.id, version, &metadata)
                .await?;
            let token = new_version_token();
            match self
                .meta
                .swap_view_pointer(
                    current.id,
                    &current.version_token,
                    &token,
                    &location,
                    Utc::now(),
                    by.as_str(),
                )
                .await
            {
                Ok(()) => {
                    return Ok(IcebergView {
                        metadata_location: location,
                        metadata: Arc::new(metadata),
                        json,
                        version_token: token,
                        ..current
                    });
                }
                Err(StoreError::Conflict(_)) => {
                    self.table_files(current.id).discard(&location).await
                }
                Err(StoreError::NotFound) => {
                    self.table_files(current.id).discard(&location).await;
                    return Err(view_not_found());
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(ServiceError::Conflict(
            "The view changed concurrently while replacing it; retry".into(),
        ))
    }

    /// Drops a view and deletes its storage (only its metadata files live there) in the background, unless the
    /// view says `gc.enabled=false` (Iceberg's switch for "never delete my files"): then its storage stays, detached
    /// as a table's dropped without purge, and `register_view` (or `register`) can adopt it again.
    pub async fn drop_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
    ) -> Result<(), ServiceError> {
        let record = self
            .meta
            .view_by_name(namespace.id, name.as_str())
            .await?
            .ok_or_else(view_not_found)?;
        // Unreadable metadata (a broken view) keeps nothing: the drop must still clean up.
        let keep_files = match self.view_from_record(namespace, record.clone()).await {
            Ok(view) => view
                .metadata
                .properties()
                .get(GC_ENABLED)
                .is_some_and(|v| v.eq_ignore_ascii_case("false")),
            Err(_) => false,
        };
        self.meta
            .delete_view(record.id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => view_not_found(),
                other => other.into(),
            })?;
        if keep_files {
            let owner = &namespace.bucket.arn;
            self.meta
                .record_detached_storage(
                    record.id,
                    owner.account.as_str(),
                    owner.name.as_str(),
                    "dropped",
                    Utc::now(),
                )
                .await?;
            return Ok(());
        }
        let catalog = self.clone();
        tokio::spawn(async move {
            if let Err(e) = catalog.purge_table_storage(record.id).await {
                tracing::warn!(view_id = %record.id, error = %e, "could not delete the storage of a dropped view");
            }
        });
        Ok(())
    }

    /// Renames and/or moves a view within its bucket. `AlreadyExists` when a view or table has the new name.
    pub async fn rename_view(
        &self,
        namespace: &Namespace,
        name: &TableName,
        target: &Namespace,
        new_name: &TableName,
        by: &AccountId,
    ) -> Result<(), ServiceError> {
        let record = self
            .meta
            .view_by_name(namespace.id, name.as_str())
            .await?
            .ok_or_else(view_not_found)?;
        if self
            .meta
            .table_by_name(target.id, new_name.as_str())
            .await?
            .is_some()
        {
            return Err(ServiceError::AlreadyExists(format!(
                "Cannot rename {}.{name} to {}.{new_name}. Table already exists",
                namespace.name, target.name
            )));
        }
        self.meta
            .rename_view(
                record.id,
                target.id,
                new_name.as_str(),
                Utc::now(),
                by.as_str(),
            )
            .await
            .map_err(|e| match e {
                StoreError::AlreadyExists(_) => ServiceError::AlreadyExists(format!(
                    "Cannot rename {}.{name} to {}.{new_name}. View already exists",
                    namespace.name, target.name
                )),
                StoreError::NotFound => view_not_found(),
                other => other.into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_parse() {
        let req: ViewRequirement = serde_json::from_str(
            r#"{"type":"assert-view-uuid","uuid":"8ab7b6a8-1c2d-4e5f-9a0b-123456789abc"}"#,
        )
        .unwrap();
        assert!(matches!(req, ViewRequirement::AssertViewUuid { .. }));
        assert!(
            serde_json::from_str::<ViewRequirement>(r#"{"type":"assert-table-uuid","uuid":"x"}"#)
                .is_err()
        );
    }

    fn version(id: i64, sql: &str) -> ViewVersion {
        serde_json::from_value(serde_json::json!({
            "version-id": id, "timestamp-ms": 1_700_000_000_000_i64 + id, "schema-id": 0,
            "summary": {"engine-name": "test"}, "default-namespace": ["ns"],
            "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}]}))
        .unwrap()
    }

    #[tokio::test]
    async fn views_lifecycle() {
        use std::collections::BTreeMap;

        use tablebay_store::{BlobStore, BlobUrl, MetaStore};

        use crate::{ArnFlavor, BucketName, CatalogConfig, NamespaceName, NewBucket, Tags};

        let dir = tempfile::tempdir().unwrap();
        let meta = MetaStore::connect(&format!(
            "sqlite://{}",
            dir.path().join("meta.db").display()
        ))
        .await
        .unwrap();
        let blobs = BlobStore::open(&BlobUrl::Local(dir.path().join("blobs"))).unwrap();
        let catalog = Catalog::new(
            meta,
            blobs,
            CatalogConfig {
                region: "us-east-1".into(),
                flavor: ArnFlavor::Aws,
            },
            std::sync::Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
        );
        let account = AccountId::parse("111122223333").unwrap();
        let new = NewBucket {
            name: BucketName::parse("bucket").unwrap(),
            encryption: None,
            storage_class: None,
            tags: Tags::default(),
        };
        let bucket = catalog.create_bucket(&account, new).await.unwrap();
        let ns = catalog
            .create_namespace(
                &bucket.arn,
                NamespaceName::parse("ns").unwrap(),
                BTreeMap::new(),
                &account,
            )
            .await
            .unwrap();
        let schema: Schema = serde_json::from_value(
            serde_json::json!({"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "x", "type": "long", "required": false}]}),
        )
        .unwrap();
        let name = TableName::parse("v").unwrap();
        let definition = ViewDefinition {
            schema: schema.clone(),
            version: version(1, "select 1"),
            properties: HashMap::new(),
        };
        let created = catalog
            .create_view(&ns, &name, definition.clone(), &account)
            .await
            .unwrap();
        assert_eq!(created.metadata.uuid(), created.id);
        assert!(matches!(
            catalog.create_view(&ns, &name, definition, &account).await,
            Err(ServiceError::AlreadyExists(_))
        ));

        // Replace: a second version becomes current; the versions list is in version order.
        let change = ViewChange {
            requirements: vec![ViewRequirement::AssertViewUuid { uuid: created.id }],
            updates: vec![
                ViewUpdate::AddViewVersion {
                    view_version: version(2, "select 2"),
                },
                ViewUpdate::SetCurrentViewVersion {
                    view_version_id: -1,
                },
            ],
        };
        let replaced = catalog
            .replace_view(&ns, &name, change, &account)
            .await
            .unwrap();
        assert_eq!(replaced.metadata.current_version_id(), 2);
        let doc: serde_json::Value = serde_json::from_slice(&replaced.json).unwrap();
        let ids: Vec<i64> = doc["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["version-id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [1, 2]);
        let stale = ViewChange {
            requirements: vec![ViewRequirement::AssertViewUuid { uuid: Uuid::nil() }],
            updates: vec![],
        };
        assert!(matches!(
            catalog.replace_view(&ns, &name, stale, &account).await,
            Err(ServiceError::Conflict(_))
        ));

        // Views and tables share names; rename; drop.
        assert_eq!(catalog.list_views(&ns).await.unwrap(), vec![name.clone()]);
        let renamed = TableName::parse("w").unwrap();
        catalog
            .rename_view(&ns, &name, &ns, &renamed, &account)
            .await
            .unwrap();
        assert!(!catalog.view_exists(&ns, &name).await.unwrap());
        assert_eq!(
            catalog
                .view(&ns, &renamed)
                .await
                .unwrap()
                .metadata
                .current_version_id(),
            2
        );
        catalog.drop_view(&ns, &renamed).await.unwrap();
        assert!(matches!(
            catalog.view(&ns, &renamed).await,
            Err(ServiceError::NotFound(_))
        ));
        assert!(matches!(
            catalog.drop_view(&ns, &renamed).await,
            Err(ServiceError::NotFound(_))
        ));
    }
}
