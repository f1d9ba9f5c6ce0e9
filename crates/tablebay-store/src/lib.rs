//! Tablebay's storage layer.
//!
//! Owns every byte and row the server keeps: the metadata store ([`MetaStore`], SQLite or PostgreSQL through
//! sqlx, one code path for both) and the blob store ([`BlobStore`], `object_store` over a local directory or an
//! S3-compatible bucket). It knows nothing of ARNs, names or wire formats: the catalog service above validates,
//! and this crate persists. Store errors are classified here, once ([`StoreError`]).
#![warn(missing_docs)]

mod blob;
pub mod durability;
pub mod encryption;
mod error;
pub mod meta;
#[cfg(feature = "test-support")]
pub mod test_support;

pub use blob::{BlobStore, BlobStream, BlobUrl, BlobWriter};
pub use durability::Durability;
pub use error::StoreError;
pub use meta::MetaStore;
