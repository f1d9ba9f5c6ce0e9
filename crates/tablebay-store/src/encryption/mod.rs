//! Encryption at rest of blobs: master keys and their providers ([`keys`]) and the chunked authenticated
//! format of an encrypted blob ([`chunks`]); the same format seals the IAM secrets the meta store keeps
//! ([`secrets`]). The blob store applies them ([`crate::BlobStore::sealed_writer`],
//! [`crate::BlobStore::read_sealed`]); the catalog decides which blobs are encrypted, with which key, and
//! records each blob's [`BlobEncryption`] in the row that points at it.

mod chunks;
mod keys;
mod secrets;

pub use chunks::{BlobEncryption, CHUNK_BYTES, sealed_len};
pub(crate) use chunks::{ChunkCipher, Sealer, StoredBytes, open_range};
pub use keys::{
    DataKey, KeyError, KeyId, KeyProvider, KeyVersion, LocalKeys, MasterKey, WrappedKey,
};
pub(crate) use secrets::SEALED_PREFIX as SEALED_SECRET_PREFIX;
pub use secrets::{open_secret, seal_secret};
