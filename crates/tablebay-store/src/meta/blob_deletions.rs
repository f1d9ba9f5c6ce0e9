//! The queue of blobs to delete: what keeps a deletion from being lost when the process dies.
//!
//! Every write that unlinks blobs queues them in its own transaction ([`MetaStore::queue_blob_deletions_in`]), so
//! a committed overwrite, delete or abort always has its old blobs queued. A background task claims the due rows
//! ([`MetaStore::claim_blob_deletions`]), deletes the blobs and removes the rows
//! ([`MetaStore::finish_blob_deletions`]); a blob that fails is retried later ([`MetaStore::retry_blob_deletion`]).
//! A claim moves the row's due time forward by a lease, so a drainer that dies mid-way leaves the row to be
//! claimed again, and several instances draining at once do not take the same rows.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::MetaStore;
use super::codec::{self, Tx};
use crate::StoreError;

/// How long a blob unlinked by an overwrite, a delete or an abort stays readable: a read that fetched the old
/// row just before the write may still be opening it.
pub const UNLINKED_BLOB_GRACE: Duration = Duration::from_secs(30);

/// How long a claimed deletion is left to its drainer before another may claim it.
const CLAIM_LEASE: Duration = Duration::from_secs(60);

/// Rows per `INSERT` statement when queueing many blobs (an aborted upload of thousands of parts).
const INSERT_BATCH: usize = 200;

/// A claimed deletion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobDeletion {
    /// The blob store key.
    pub blob_key: String,
    /// How many times it has been claimed, this claim included.
    pub attempts: u32,
}

/// `now` plus a duration, saturating.
pub(super) fn after(now: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(wait)
        .ok()
        .and_then(|wait| now.checked_add_signed(wait))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl MetaStore {
    /// Queues `keys` for deletion at `due`, inside the caller's transaction (a key queued already keeps its row).
    pub(super) async fn queue_blob_deletions_in(
        &self,
        tx: &mut Tx,
        keys: &[&str],
        due: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        for batch in keys.chunks(INSERT_BATCH) {
            let values: Vec<String> = (0..batch.len())
                .map(|i| format!("(${}, ${}, 0)", 2 * i + 1, 2 * i + 2))
                .collect();
            let sql = format!(
                "INSERT INTO blob_deletions (blob_key, due_at_ms, attempts) VALUES {} \
                 ON CONFLICT (blob_key) DO NOTHING",
                values.join(", ")
            );
            // The text holds only generated placeholders; every value is bound.
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for key in batch {
                query = query.bind(*key).bind(codec::millis(due));
            }
            query.execute(&mut **tx).await?;
        }
        Ok(())
    }

    /// Queues `keys` for deletion at `due`, in a transaction of its own (blobs that no row ever referenced and that
    /// the caller could not delete at once).
    pub async fn queue_blob_deletions(
        &self,
        keys: &[&str],
        due: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        self.queue_blob_deletions_in(&mut tx, keys, due).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Claims up to `limit` deletions due at `now`, oldest first: each is pushed a lease into the future and its
    /// attempt count raised, so no other drainer takes it meanwhile.
    pub async fn claim_blob_deletions(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<BlobDeletion>, StoreError> {
        // The common case, nothing due, is one indexed read that does not queue for SQLite's writer slot.
        let any_due =
            sqlx::query("SELECT blob_key FROM blob_deletions WHERE due_at_ms <= $1 LIMIT 1")
                .bind(codec::millis(now))
                .fetch_optional(&self.pool)
                .await?
                .is_some();
        if !any_due {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        // The outer `due_at_ms <= $2` is re-checked by Postgres on a row another drainer claimed while this one
        // waited for its lock, so such a row is skipped rather than claimed twice.
        let rows = sqlx::query(
            "UPDATE blob_deletions SET due_at_ms = $1, attempts = attempts + 1 \
             WHERE due_at_ms <= $2 AND blob_key IN \
               (SELECT blob_key FROM blob_deletions WHERE due_at_ms <= $2 ORDER BY due_at_ms LIMIT $3) \
             RETURNING blob_key, attempts",
        )
        .bind(codec::millis(after(now, CLAIM_LEASE)))
        .bind(codec::millis(now))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.iter()
            .map(|row| {
                let attempts: i64 = row.try_get("attempts")?;
                Ok(BlobDeletion {
                    blob_key: codec::text(row, "blob_key")?,
                    attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
                })
            })
            .collect()
    }

    /// Removes the rows of deletions done (the blobs are gone).
    pub async fn finish_blob_deletions(&self, keys: &[&str]) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        for batch in keys.chunks(INSERT_BATCH) {
            let placeholders: Vec<String> = (1..=batch.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "DELETE FROM blob_deletions WHERE blob_key IN ({})",
                placeholders.join(", ")
            );
            // The text holds only generated placeholders; every value is bound.
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for key in batch {
                query = query.bind(*key);
            }
            query.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Puts a deletion that failed back in the queue, due at `due`.
    pub async fn retry_blob_deletion(
        &self,
        key: &str,
        due: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let _writer = self.writer_slot().await;
        sqlx::query("UPDATE blob_deletions SET due_at_ms = $1 WHERE blob_key = $2")
            .bind(codec::millis(due))
            .bind(key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The queued deletions, due or not, as (blob key, due time), in key order (for operators and tests).
    pub async fn queued_blob_deletions(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, DateTime<Utc>)>, StoreError> {
        sqlx::query("SELECT blob_key, due_at_ms FROM blob_deletions ORDER BY blob_key LIMIT $1")
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok((
                    codec::text(row, "blob_key")?,
                    codec::time(row, "due_at_ms")?,
                ))
            })
            .collect()
    }
}
