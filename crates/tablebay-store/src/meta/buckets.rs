//! Table bucket rows.
//!
//! A bucket is deleted only when it is empty; the emptiness check and the delete run in one write transaction,
//! and on Postgres the foreign key from `namespaces` catches a namespace created concurrently.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::MetaStore;
use super::codec::{self, insert_error};
use crate::StoreError;

/// A table bucket as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketRecord {
    /// Opaque id (UUID v7).
    pub id: Uuid,
    /// Owning account.
    pub account_id: String,
    /// Bucket name, unique per account.
    pub name: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

impl MetaStore {
    /// Inserts a bucket; `AlreadyExists` when the account already has a bucket of that name.
    pub async fn insert_bucket(&self, bucket: &BucketRecord) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO table_buckets (id, account_id, name, created_at_ms) VALUES ($1, $2, $3, $4)")
            .bind(bucket.id.to_string())
            .bind(bucket.account_id.as_str())
            .bind(bucket.name.as_str())
            .bind(codec::millis(bucket.created_at))
            .execute(&self.pool)
            .await
            .map_err(|e| insert_error(e, || format!("table bucket {:?}", bucket.name)))?;
        Ok(())
    }

    /// The bucket `name` of `account_id`, if any.
    pub async fn bucket_by_name(
        &self,
        account_id: &str,
        name: &str,
    ) -> Result<Option<BucketRecord>, StoreError> {
        sqlx::query("SELECT id, account_id, name, created_at_ms FROM table_buckets WHERE account_id = $1 AND name = $2")
            .bind(account_id)
            .bind(name)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(bucket_from_row)
            .transpose()
    }

    /// The bucket with this id, if any.
    pub async fn bucket_by_id(&self, id: Uuid) -> Result<Option<BucketRecord>, StoreError> {
        sqlx::query("SELECT id, account_id, name, created_at_ms FROM table_buckets WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(bucket_from_row)
            .transpose()
    }

    /// Up to `limit` buckets of `account_id` ordered by name, names starting with `prefix` (if given) and
    /// strictly after `after` (if given).
    pub async fn list_buckets(
        &self,
        account_id: &str,
        prefix: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<BucketRecord>, StoreError> {
        // `substr(name, 1, length(p)) = p` rather than LIKE: `%` and `_` stay literal, and SQLite's LIKE would
        // also ignore ASCII case.
        sqlx::query(
            "SELECT id, account_id, name, created_at_ms FROM table_buckets \
             WHERE account_id = $1 \
               AND ($2 IS NULL OR substr(name, 1, length($2)) = $2) \
               AND ($3 IS NULL OR name > $3) \
             ORDER BY name LIMIT $4",
        )
        .bind(account_id)
        .bind(prefix)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(bucket_from_row)
        .collect()
    }

    /// Deletes the bucket and its attributes in one transaction. `NotFound` if it does not exist, `Conflict` if
    /// it still has namespaces.
    pub async fn delete_bucket(&self, id: Uuid) -> Result<(), StoreError> {
        let id = id.to_string();
        let mut tx = self.begin_write().await?;
        let namespace = sqlx::query("SELECT id FROM namespaces WHERE bucket_id = $1 LIMIT 1")
            .bind(id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if namespace.is_some() {
            return Err(StoreError::Conflict(format!(
                "table bucket {id} still has namespaces"
            )));
        }
        let deleted = sqlx::query("DELETE FROM table_buckets WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        sqlx::query("DELETE FROM resource_attributes WHERE resource_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Decodes a `table_buckets` row.
fn bucket_from_row(row: &AnyRow) -> Result<BucketRecord, StoreError> {
    Ok(BucketRecord {
        id: codec::uuid(row, "id")?,
        account_id: codec::text(row, "account_id")?,
        name: codec::text(row, "name")?,
        created_at: codec::time(row, "created_at_ms")?,
    })
}
