//! Remembered answers of mutations that carried an `Idempotency-Key` (Iceberg REST, `reference/iceberg-rest.md`
//! §2 "idempotency-key-lifetime"): the first answer is stored, retries with the same key get it back until it
//! expires, and expired rows are swept.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::MetaStore;
use super::codec::{self, Tx};
use crate::StoreError;

/// The remembered answer to one idempotent request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// Who the key belongs to (the caller's account): keys of different scopes never collide.
    pub scope: String,
    /// The `Idempotency-Key` header value.
    pub key: String,
    /// What the original request was (method and path), so a key reused for another request is recognised.
    pub fingerprint: String,
    /// HTTP status of the original answer.
    pub status: u16,
    /// Body of the original answer.
    pub body: String,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
    /// When it may be forgotten.
    pub expires_at: DateTime<Utc>,
}

impl MetaStore {
    /// The unexpired record of `key` in `scope`, if any.
    pub async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        sqlx::query(
            "SELECT scope, key, fingerprint, status, body, created_at_ms, expires_at_ms FROM idempotency_keys \
             WHERE scope = $1 AND key = $2 AND expires_at_ms > $3",
        )
        .bind(scope)
        .bind(key)
        .bind(codec::millis(now))
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(record_from_row)
        .transpose()
    }

    /// Stores a record unless an unexpired one of the same key exists (the first answer wins); an expired one
    /// is replaced. Returns whether this record was stored.
    pub async fn insert_idempotency_record(
        &self,
        record: &IdempotencyRecord,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let inserted = insert_idempotency(&mut tx, record).await?;
        tx.commit().await?;
        Ok(inserted)
    }

    /// Deletes every record expired at `now`; returns how many.
    pub async fn sweep_idempotency_records(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let deleted = sqlx::query("DELETE FROM idempotency_keys WHERE expires_at_ms <= $1")
            .bind(codec::millis(now))
            .execute(&self.pool)
            .await?;
        Ok(deleted.rows_affected())
    }
}

/// Inserts `record` in a transaction unless an unexpired record of its key exists (an expired one is replaced);
/// whether it was inserted.
pub(super) async fn insert_idempotency(
    tx: &mut Tx,
    record: &IdempotencyRecord,
) -> Result<bool, StoreError> {
    sqlx::query("DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at_ms <= $3")
        .bind(record.scope.as_str())
        .bind(record.key.as_str())
        .bind(codec::millis(record.created_at))
        .execute(&mut **tx)
        .await?;
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at_ms, expires_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (scope, key) DO NOTHING",
    )
    .bind(record.scope.as_str())
    .bind(record.key.as_str())
    .bind(record.fingerprint.as_str())
    .bind(i64::from(record.status))
    .bind(record.body.as_str())
    .bind(codec::millis(record.created_at))
    .bind(codec::millis(record.expires_at))
    .execute(&mut **tx)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

fn record_from_row(row: &AnyRow) -> Result<IdempotencyRecord, StoreError> {
    let status: i64 = row.try_get("status")?;
    Ok(IdempotencyRecord {
        scope: codec::text(row, "scope")?,
        key: codec::text(row, "key")?,
        fingerprint: codec::text(row, "fingerprint")?,
        status: u16::try_from(status)
            .map_err(|_| StoreError::Corrupt(format!("idempotency status {status}")))?,
        body: codec::text(row, "body")?,
        created_at: codec::time(row, "created_at_ms")?,
        expires_at: codec::time(row, "expires_at_ms")?,
    })
}
