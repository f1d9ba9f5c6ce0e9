//! The [`Catalog`] service handle, its configuration, and the plumbing every operation family shares:
//! JSON-valued settings, version tokens, and writing table files.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tablebay_store::encryption::KeyProvider;
use tablebay_store::meta::AttributeKey;
use tablebay_store::{BlobStore, MetaStore};
use uuid::Uuid;

use crate::commit_observer::CommitObservers;
use crate::encryption::{EncryptionCache, new_encryption_cache};
use crate::metadata_cache::MetadataCache;
use crate::objects::TableLocation;
use crate::{ArnFlavor, CatalogError, ObjectAttributes, ObjectBody, ObjectKey, PutOptions};

/// What the catalog needs to know about the deployment.
#[derive(Clone, Debug)]
pub struct CatalogConfig {
    /// The region this instance serves; ARNs of other regions resolve to nothing.
    pub region: String,
    /// The ARN spelling of responses.
    pub flavor: ArnFlavor,
}

/// The catalog service: buckets, namespaces, tables and their settings. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Catalog {
    pub(crate) meta: MetaStore,
    pub(crate) blobs: BlobStore,
    pub(crate) config: Arc<CatalogConfig>,
    pub(crate) metadata_cache: MetadataCache,
    pub(crate) commit_observers: CommitObservers,
    /// Master keys of encryption at rest.
    pub(crate) keys: Arc<dyn KeyProvider>,
    pub(crate) encryption_cache: EncryptionCache,
}

impl Catalog {
    /// The master keys (encryption at rest; IAM secrets are sealed with them too).
    pub fn key_provider(&self) -> &dyn KeyProvider {
        self.keys.as_ref()
    }

    /// A catalog over the given stores, encrypting at rest with `keys` (check them with
    /// [`Catalog::verify_keys`]). The keys are not optional: a catalog that silently used some other key would
    /// write table files nothing else can read.
    pub fn new(
        meta: MetaStore,
        blobs: BlobStore,
        config: CatalogConfig,
        keys: Arc<dyn KeyProvider>,
    ) -> Self {
        Self {
            meta,
            blobs,
            config: Arc::new(config),
            metadata_cache: MetadataCache::new(),
            commit_observers: CommitObservers::default(),
            keys,
            encryption_cache: new_encryption_cache(),
        }
    }

    /// The deployment configuration.
    pub fn config(&self) -> &CatalogConfig {
        &self.config
    }

    /// Reads a JSON-valued setting of a bucket or table.
    pub(crate) async fn setting<T: DeserializeOwned>(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
    ) -> Result<Option<T>, CatalogError> {
        match self.meta.attribute(resource_id, key).await? {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                CatalogError::Internal(format!(
                    "stored {} of {resource_id} is unreadable: {e}",
                    key.as_str()
                ))
            }),
        }
    }

    /// Stores a JSON-valued setting of a bucket or table.
    pub(crate) async fn set_setting<T: Serialize>(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
        value: &T,
    ) -> Result<(), CatalogError> {
        let text =
            serde_json::to_string(value).map_err(|e| CatalogError::Internal(e.to_string()))?;
        self.meta.set_attribute(resource_id, key, &text).await?;
        Ok(())
    }

    /// Writes a file into a table's storage through the object service, so it is visible and readable on the
    /// data plane like any client-written file. The write is atomic: readers see all of it or nothing.
    pub(crate) async fn put_table_file(
        &self,
        location: &TableLocation,
        bytes: Bytes,
    ) -> Result<(), CatalogError> {
        let key = ObjectKey::parse(&location.key)?;
        let content_type = location
            .key
            .ends_with(".json")
            .then(|| "application/json".to_string());
        let options = PutOptions {
            attributes: ObjectAttributes {
                content_type,
                ..ObjectAttributes::default()
            },
            ..PutOptions::default()
        };
        let record = self
            .put_object_row(
                location.table_id,
                &key,
                ObjectBody::from_bytes(bytes),
                options,
            )
            .await?;
        drop(record);
        Ok(())
    }

    /// Reads a whole file of a table's storage through the object rows (the counterpart of
    /// [`Catalog::put_table_file`], for metadata the server parses); `None` when no object is there. Files larger
    /// than `MAX_TABLE_FILE_READ` are refused rather than buffered.
    pub(crate) async fn read_table_file(
        &self,
        location: &TableLocation,
    ) -> Result<Option<Bytes>, CatalogError> {
        use futures::TryStreamExt;
        let Some(record) = self.meta.object(location.table_id, &location.key).await? else {
            return Ok(None);
        };
        if record.size > MAX_TABLE_FILE_READ {
            return Err(CatalogError::invalid(format!(
                "{} is {} bytes, more than the {MAX_TABLE_FILE_READ} bytes a metadata file may have",
                location.uri(),
                record.size
            )));
        }
        let size = record.size;
        let chunks: Vec<Bytes> = self
            .read_segments(record.blobs, 0..size)
            .try_collect()
            .await
            .map_err(|e| CatalogError::Internal(format!("reading {}: {e}", location.uri())))?;
        Ok(Some(chunks.concat().into()))
    }

    /// Best-effort removal of a file the server wrote but could not publish; unreferenced-file removal
    /// collects whatever this misses.
    pub(crate) async fn discard_table_file(&self, location: &TableLocation) {
        let removed = match ObjectKey::parse(&location.key) {
            Ok(key) => self.delete_object_row(location.table_id, &key).await,
            Err(e) => Err(e),
        };
        if let Err(e) = removed {
            tracing::warn!(error = %e, location = %location.uri(), "could not remove an unpublished table file");
        }
    }
}

/// The largest table file the server reads whole (S3 Tables refuses metadata files over 50 MB).
const MAX_TABLE_FILE_READ: u64 = 64 * 1024 * 1024;

/// A fresh opaque version token: 20 lowercase hex characters, as S3 Tables issues them.
pub(crate) fn new_version_token() -> String {
    let bytes: [u8; 10] = rand::random();
    hex::encode(bytes)
}
