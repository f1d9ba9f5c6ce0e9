//! The metadata store: the single source of truth for what exists.
//!
//! One code path for SQLite and PostgreSQL (sqlx `Any` with runtime queries and `$N` placeholders, which both
//! drivers accept). Timestamps are stored as INTEGER unix milliseconds, ids as TEXT (UUID strings), structured
//! values as JSON text. One file per noun below; each takes `&MetaStore`. `connect.rs` opens the pool and runs
//! the migrations, `codec.rs` turns rows into records and starts write transactions (`BEGIN IMMEDIATE` on SQLite).

mod attributes;
mod blob_deletions;
mod buckets;
mod codec;
mod connect;
mod detached_storage;
mod encryption_keys;
mod iam;
mod idempotency;
mod jobs;
mod multipart;
mod namespaces;
mod objects;
mod table_migrations;
mod tables;
mod views;

pub use attributes::AttributeKey;
pub use blob_deletions::{BlobDeletion, UNLINKED_BLOB_GRACE};
pub use buckets::BucketRecord;
pub use encryption_keys::KeyCheck;
pub use iam::{AccountRecord, CredentialRecord, PrincipalRecord};
pub use idempotency::IdempotencyRecord;
pub use jobs::{JobRecord, REPLICATION_JOB_TYPE, RunRecord};
pub use multipart::{CompletedUpload, PartRecord, UploadRecord};
pub use namespaces::NamespaceRecord;
pub use objects::{
    BlobSegment, KeyRange, KeyStart, ObjectRecord, RowSync, StoredChecksum, WriteCondition,
};
pub use table_migrations::TableMigrationRecord;
pub use tables::{PointerSwap, TableRecord};
pub use views::ViewRecord;

use crate::StoreError;
use crate::durability::Durability;

/// Handle to the metadata database (cheap to clone; a connection pool inside).
#[derive(Clone, Debug)]
pub struct MetaStore {
    pub(crate) pool: sqlx::AnyPool,
    /// The pool of write transactions: on a durable SQLite file its connections commit at synchronous=NORMAL
    /// and share WAL syncs ([`connect::WalSync`]); otherwise the main pool.
    pub(crate) writes: sqlx::AnyPool,
    /// The group commit of `writes`, when it has one.
    pub(crate) wal: Option<std::sync::Arc<connect::WalSync>>,
    pub(crate) backend: Backend,
    /// SQLite's single writer slot, taken by every write transaction of this process (`codec::begin_write`).
    pub(crate) writer: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// Which database the store talks to; the few statements that differ branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite in WAL mode.
    Sqlite,
    /// PostgreSQL (or a compatible cluster).
    Postgres,
}

impl MetaStore {
    /// Connects to `url` (`sqlite://path?mode=rwc` or `postgres://…`), applies the backend's migrations and
    /// returns the store. SQLite gets WAL mode and a busy timeout.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        connect::open(url, Durability::Full).await
    }

    /// [`MetaStore::connect`] with SQLite commits synced as `durability` says: `synchronous=FULL` (every commit
    /// syncs the WAL) or `NORMAL` (the WAL is synced at checkpoints). PostgreSQL keeps its own setting.
    pub async fn connect_with(url: &str, durability: Durability) -> Result<Self, StoreError> {
        connect::open(url, durability).await
    }

    /// Which backend this store uses.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Closes the pool: new calls fail, and this waits until the connections in use are returned and closed. For
    /// a clean shutdown (SQLite checkpoints its WAL when the last connection closes).
    pub async fn close(&self) {
        self.writes.close().await;
        self.pool.close().await;
    }
}
