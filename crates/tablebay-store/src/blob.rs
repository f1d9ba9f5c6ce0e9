//! The blob store: where table files live. A thin wrapper over `object_store`, so the rest of the server never
//! sees the backing store's layout or its error types.

use std::sync::Arc;

use bytes::Bytes;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::StoreError;

/// Where blobs go: a local directory (default) or an S3-compatible bucket and prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobUrl {
    /// A directory on local disk.
    Local(std::path::PathBuf),
    /// `s3://bucket/prefix` on an S3-compatible store.
    S3 {
        /// Bucket name.
        bucket: String,
        /// Key prefix inside the bucket (no leading or trailing `/`; may be empty).
        prefix: String,
        /// Endpoint URL (`http://host:port`); AWS when absent.
        endpoint: Option<String>,
        /// Region.
        region: String,
        /// Access key id.
        access_key_id: Option<String>,
        /// Secret access key.
        secret_access_key: Option<String>,
        /// Path-style addressing.
        path_style: bool,
    },
}

/// Handle to the blob store (cheap to clone).
#[derive(Clone, Debug)]
pub struct BlobStore {
    inner: Arc<dyn ObjectStore>,
    prefix: object_store::path::Path,
}

impl BlobStore {
    /// Opens the store at `url`, creating the local directory if needed.
    pub fn open(url: &BlobUrl) -> Result<Self, StoreError> {
        match url {
            BlobUrl::Local(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Config(format!("{}: {e}", dir.display())))?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(dir).map_err(StoreError::Blob)?;
                Ok(Self { inner: Arc::new(fs), prefix: object_store::path::Path::default() })
            }
            BlobUrl::S3 { bucket, prefix, endpoint, region, access_key_id, secret_access_key, path_style } => {
                let mut builder = object_store::aws::AmazonS3Builder::new()
                    .with_bucket_name(bucket)
                    .with_region(region)
                    .with_virtual_hosted_style_request(!path_style);
                if let Some(endpoint) = endpoint {
                    builder = builder.with_endpoint(endpoint).with_allow_http(endpoint.starts_with("http://"));
                }
                if let (Some(id), Some(secret)) = (access_key_id, secret_access_key) {
                    builder = builder.with_access_key_id(id).with_secret_access_key(secret);
                }
                let s3 = builder.build().map_err(StoreError::Blob)?;
                Ok(Self { inner: Arc::new(s3), prefix: object_store::path::Path::from(prefix.as_str()) })
            }
        }
    }

    fn path(&self, key: &str) -> object_store::path::Path {
        self.prefix.parts().chain(object_store::path::Path::from(key).parts()).collect()
    }

    /// Writes `bytes` at `key` atomically (readers see the old blob or the whole new one).
    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), StoreError> {
        self.inner.put(&self.path(key), bytes.into()).await.map_err(StoreError::Blob)?;
        Ok(())
    }

    /// Reads the whole blob at `key`; `NotFound` if absent.
    pub async fn get(&self, key: &str) -> Result<Bytes, StoreError> {
        match self.inner.get(&self.path(key)).await {
            Ok(result) => result.bytes().await.map_err(StoreError::Blob),
            Err(object_store::Error::NotFound { .. }) => Err(StoreError::NotFound),
            Err(e) => Err(StoreError::Blob(e)),
        }
    }

    /// Deletes every blob whose key lies under the folder `prefix` (segment-wise: `tables/a` covers `tables/a/x`,
    /// not `tables/ab`); returns how many were deleted. A missing folder is not an error. Used to purge a dropped
    /// table's storage (`tables/<table-id>/`).
    pub async fn delete_prefix(&self, prefix: &str) -> Result<u64, StoreError> {
        use futures::StreamExt;
        let folder = self.path(prefix.trim_end_matches('/'));
        if folder.parts().count() <= self.prefix.parts().count() {
            return Err(StoreError::Config(format!("refusing to delete the whole blob store (prefix {prefix:?})")));
        }
        let listed = self.inner.list(Some(&folder)).map(|meta| meta.map(|m| m.location)).boxed();
        let mut deleted = self.inner.delete_stream(listed);
        let mut count = 0;
        while let Some(result) = deleted.next().await {
            match result {
                Ok(_) => count += 1,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(StoreError::Blob(e)),
            }
        }
        Ok(count)
    }

    /// Deletes the blob at `key`; deleting a missing blob is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), StoreError> {
        match self.inner.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::Blob(e)),
        }
    }
}
