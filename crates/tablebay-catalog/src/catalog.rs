//! The [`Catalog`] service handle, its configuration, and the plumbing every operation family shares:
//! JSON-valued settings and version tokens. Table files are reached through `TableFiles` (`table_files.rs`), which
//! stores them with the object service the catalog holds.

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tablebay_objects::Objects;
use tablebay_store::encryption::KeyProvider;
use tablebay_store::meta::AttributeKey;
use tablebay_store::{BlobStore, MetaStore};
use uuid::Uuid;

use crate::commit_observer::CommitObservers;
use crate::encryption::{EncryptionCache, new_encryption_cache};
use crate::metadata_cache::MetadataCache;
use crate::{ArnFlavor, ServiceError};

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
    /// The table files (metadata files included) and their bytes.
    pub(crate) objects: Objects,
    pub(crate) config: Arc<CatalogConfig>,
    pub(crate) metadata_cache: MetadataCache,
    pub(crate) commit_observers: CommitObservers,
    /// This instance's per-table counters (`/metrics`).
    pub(crate) table_counters: Arc<crate::TableCounters>,
    /// Master keys of encryption at rest.
    pub(crate) keys: Arc<dyn KeyProvider>,
    pub(crate) encryption_cache: EncryptionCache,
}

impl Catalog {
    /// The master keys (encryption at rest; IAM secrets are sealed with them too).
    pub fn key_provider(&self) -> &dyn KeyProvider {
        self.keys.as_ref()
    }

    /// A catalog over the given stores, with its object service over the same stores, encrypting at rest with
    /// `keys` (check them with [`Catalog::verify_keys`]). The keys are not optional: a catalog that silently used
    /// some other key would write table files nothing else can read.
    pub fn new(
        meta: MetaStore,
        blobs: BlobStore,
        config: CatalogConfig,
        keys: Arc<dyn KeyProvider>,
    ) -> Self {
        Self {
            objects: Objects::new(meta.clone(), blobs, keys.clone()),
            meta,
            config: Arc::new(config),
            metadata_cache: MetadataCache::new(),
            commit_observers: CommitObservers::default(),
            table_counters: Arc::default(),
            keys,
            encryption_cache: new_encryption_cache(),
        }
    }

    /// The deployment configuration.
    pub fn config(&self) -> &CatalogConfig {
        &self.config
    }

    /// The object service the catalog stores table files with: the same one the data plane serves, so a surface
    /// or the server's sweeps reach objects through it without going through the catalog.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Reads a JSON-valued setting of a bucket or table.
    pub(crate) async fn setting<T: DeserializeOwned>(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
    ) -> Result<Option<T>, ServiceError> {
        match self.meta.attribute(resource_id, key).await? {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                ServiceError::Internal(format!(
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
    ) -> Result<(), ServiceError> {
        let text =
            serde_json::to_string(value).map_err(|e| ServiceError::Internal(e.to_string()))?;
        self.meta.set_attribute(resource_id, key, &text).await?;
        Ok(())
    }
}

/// A fresh opaque version token: 20 lowercase hex characters, as S3 Tables issues them.
pub(crate) fn new_version_token() -> String {
    let bytes: [u8; 10] = rand::random();
    hex::encode(bytes)
}
