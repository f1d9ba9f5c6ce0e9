//! The [`Objects`] service handle and the [`Storage`] a write goes to.

use std::sync::Arc;

use tablebay_store::encryption::KeyProvider;
use tablebay_store::{BlobStore, MetaStore};
use uuid::Uuid;

use crate::ObjectEncryption;

/// The object service: the files in tables' storage, over the meta store (object rows, uploads, the blob-deletion
/// queue) and the blob store (bytes, sealed with the master keys). Cheap to clone.
///
/// It does not know buckets, tables or their settings: callers resolve a table (the S3 surface from a bucket name,
/// the catalog from a table id) and pass its id, and for writes the encryption its setting gives new bytes.
#[derive(Clone, Debug)]
pub struct Objects {
    pub(crate) meta: MetaStore,
    pub(crate) blobs: BlobStore,
    /// Master keys of encryption at rest.
    pub(crate) keys: Arc<dyn KeyProvider>,
}

impl Objects {
    /// The object service over these stores, sealing new bytes with `keys`.
    pub fn new(meta: MetaStore, blobs: BlobStore, keys: Arc<dyn KeyProvider>) -> Self {
        Self { meta, blobs, keys }
    }
}

/// A table's storage as a write addresses it: the table, and the encryption its setting gives new bytes (the
/// object service never reads settings; the caller resolves them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Storage {
    /// The table whose storage this is.
    pub table_id: Uuid,
    /// How new bytes are encrypted.
    pub encryption: ObjectEncryption,
}
