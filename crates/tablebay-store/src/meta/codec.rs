//! What the per-noun files share: column decoding (UUID text, unix-millisecond integers), the refinement of
//! constraint errors on inserts, and the start of write transactions.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::error::ErrorKind;
use std::sync::Arc;

use sqlx::{Any, AnyConnection, Row, Transaction};
use uuid::Uuid;

use super::connect::WalSync;
use super::{Backend, MetaStore};
use crate::StoreError;

/// A write transaction on the store's pool; rolled back when dropped without [`Tx::commit`]. On SQLite it also
/// holds the store's in-process writer slot (see [`MetaStore::begin_write`]). Derefs to the connection, so
/// statements run on `&mut *tx`.
pub(super) struct Tx {
    tx: Transaction<'static, Any>,
    writer: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// The group commit this transaction's durability waits for (see `connect::WalSync`).
    wal: Option<Arc<WalSync>>,
}

impl Tx {
    /// Commits and releases the writer slot, so the next writer can go on; then returns once the commit is
    /// durable (a WAL sync shared with the commits around it).
    pub(super) async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await?;
        drop(self.writer);
        match self.wal {
            Some(wal) => wal.sync().await,
            None => Ok(()),
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.tx
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }
}

impl MetaStore {
    /// Starts a read-modify-write transaction. On SQLite it is `BEGIN IMMEDIATE`, which takes the write lock
    /// up front: a deferred transaction that reads and then writes fails at once with `SQLITE_BUSY_SNAPSHOT`
    /// when another writer committed in between (trap T13). SQLite has one writer at a time anyway, so writers
    /// of this process first queue for an in-process slot: waiting there wakes each in turn as soon as the
    /// previous one commits, where contending for the file lock would sleep in SQLite's busy handler (1, 2, 5,
    /// 10 … 100 ms steps) and collapse throughput under many concurrent writers. Other processes sharing the
    /// file still meet the busy timeout. On Postgres a plain READ COMMITTED transaction suffices, because every
    /// write re-checks its condition in its `WHERE` clause (or locks the row it reads) and foreign keys guard the
    /// parent rows.
    pub(super) async fn begin_write(&self) -> Result<Tx, StoreError> {
        let tx = match self.backend {
            Backend::Sqlite => {
                let writer = self.writer_slot().await;
                let tx = self.writes.begin_with("BEGIN IMMEDIATE").await?;
                return Ok(Tx {
                    tx,
                    writer,
                    wal: self.wal.clone(),
                });
            }
            Backend::Postgres => self.writes.begin().await?,
        };
        Ok(Tx {
            tx,
            writer: None,
            wal: None,
        })
    }

    /// Returns once everything committed on the write pool so far is durable (a shared WAL sync; nothing to do
    /// where commits sync themselves). A statement run on `self.writes` outside a [`Tx`] calls it before it
    /// reports success.
    pub(super) async fn wait_durable(&self) -> Result<(), StoreError> {
        match &self.wal {
            Some(wal) => Arc::clone(wal).sync().await,
            None => Ok(()),
        }
    }

    /// The in-process writer slot of SQLite (see [`MetaStore::begin_write`]), for a write outside a
    /// transaction; `None` on Postgres.
    pub(super) async fn writer_slot(&self) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        match self.backend {
            Backend::Sqlite => Some(Arc::clone(&self.writer).lock_owned().await),
            Backend::Postgres => None,
        }
    }
}

/// Unix milliseconds, the stored form of every timestamp (sub-millisecond precision is dropped).
pub(super) fn millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

/// The text column `column`.
pub(super) fn text(row: &AnyRow, column: &str) -> Result<String, StoreError> {
    Ok(row.try_get(column)?)
}

/// The UUID stored as text in `column`.
pub(super) fn uuid(row: &AnyRow, column: &str) -> Result<Uuid, StoreError> {
    let raw: String = row.try_get(column)?;
    Uuid::parse_str(&raw).map_err(|e| StoreError::Corrupt(format!("{column} {raw:?}: {e}")))
}

/// The timestamp stored as unix milliseconds in `column`.
pub(super) fn time(row: &AnyRow, column: &str) -> Result<DateTime<Utc>, StoreError> {
    let ms: i64 = row.try_get(column)?;
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| StoreError::Corrupt(format!("{column} {ms} out of range")))
}

/// Classifies the failure of an `INSERT` of `what`: a unique violation means `what` already exists, a
/// foreign-key violation that its parent row is gone (`NotFound`); anything else as usual.
pub(super) fn insert_error(err: sqlx::Error, what: impl FnOnce() -> String) -> StoreError {
    match err.as_database_error().map(|db| db.kind()) {
        Some(ErrorKind::UniqueViolation) => StoreError::AlreadyExists(what()),
        Some(ErrorKind::ForeignKeyViolation) => StoreError::NotFound,
        _ => StoreError::from(err),
    }
}
