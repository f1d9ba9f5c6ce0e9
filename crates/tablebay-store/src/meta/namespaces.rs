//! Namespace rows. Properties are stored as one JSON object of strings.
//!
//! A namespace is deleted only when it holds no tables; the check and the delete run in one write transaction,
//! and on Postgres the foreign key from `tables` catches a table created concurrently.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::MetaStore;
use super::codec::{self, insert_error};
use crate::StoreError;

/// A namespace as stored (one level, as in S3 Tables).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceRecord {
    /// Opaque id (UUID v7).
    pub id: Uuid,
    /// The bucket it lives in.
    pub bucket_id: Uuid,
    /// Name, unique within the bucket.
    pub name: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Account that created it.
    pub created_by: String,
    /// Iceberg namespace properties.
    pub properties: BTreeMap<String, String>,
}

impl MetaStore {
    /// Inserts a namespace; `AlreadyExists` if the bucket has one of that name, `NotFound` if the bucket is gone.
    pub async fn insert_namespace(&self, namespace: &NamespaceRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO namespaces (id, bucket_id, name, created_at_ms, created_by, properties) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(namespace.id.to_string())
        .bind(namespace.bucket_id.to_string())
        .bind(namespace.name.as_str())
        .bind(codec::millis(namespace.created_at))
        .bind(namespace.created_by.as_str())
        .bind(properties_json(&namespace.properties)?)
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("namespace {:?}", namespace.name)))?;
        Ok(())
    }

    /// The namespace `name` in `bucket_id`, if any.
    pub async fn namespace_by_name(
        &self,
        bucket_id: Uuid,
        name: &str,
    ) -> Result<Option<NamespaceRecord>, StoreError> {
        sqlx::query(
            "SELECT id, bucket_id, name, created_at_ms, created_by, properties FROM namespaces \
             WHERE bucket_id = $1 AND name = $2",
        )
        .bind(bucket_id.to_string())
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(namespace_from_row)
        .transpose()
    }

    /// Up to `limit` namespaces of the bucket ordered by name, with `prefix` and strictly after `after`.
    pub async fn list_namespaces(
        &self,
        bucket_id: Uuid,
        prefix: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<NamespaceRecord>, StoreError> {
        // substr, not LIKE: see `list_buckets`.
        sqlx::query(
            "SELECT id, bucket_id, name, created_at_ms, created_by, properties FROM namespaces \
             WHERE bucket_id = $1 \
               AND ($2 IS NULL OR substr(name, 1, length($2)) = $2) \
               AND ($3 IS NULL OR name > $3) \
             ORDER BY name LIMIT $4",
        )
        .bind(bucket_id.to_string())
        .bind(prefix)
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(namespace_from_row)
        .collect()
    }

    /// Replaces the namespace's properties (Iceberg REST update-properties); `NotFound` if it is gone.
    pub async fn set_namespace_properties(
        &self,
        id: Uuid,
        properties: &BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        let updated = sqlx::query("UPDATE namespaces SET properties = $1 WHERE id = $2")
            .bind(properties_json(properties)?)
            .bind(id.to_string())
            .execute(&self.pool)
            .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Deletes the namespace. `NotFound` if it does not exist, `Conflict` if it still holds tables.
    pub async fn delete_namespace(&self, id: Uuid) -> Result<(), StoreError> {
        let id = id.to_string();
        let mut tx = self.begin_write().await?;
        let table = sqlx::query("SELECT id FROM tables WHERE namespace_id = $1 LIMIT 1")
            .bind(id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if table.is_some() {
            return Err(StoreError::Conflict(format!(
                "namespace {id} still holds tables"
            )));
        }
        let deleted = sqlx::query("DELETE FROM namespaces WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The stored form of namespace properties.
fn properties_json(properties: &BTreeMap<String, String>) -> Result<String, StoreError> {
    serde_json::to_string(properties)
        .map_err(|e| StoreError::Corrupt(format!("namespace properties: {e}")))
}

/// Decodes a `namespaces` row.
fn namespace_from_row(row: &AnyRow) -> Result<NamespaceRecord, StoreError> {
    let properties = codec::text(row, "properties")?;
    Ok(NamespaceRecord {
        id: codec::uuid(row, "id")?,
        bucket_id: codec::uuid(row, "bucket_id")?,
        name: codec::text(row, "name")?,
        created_at: codec::time(row, "created_at_ms")?,
        created_by: codec::text(row, "created_by")?,
        properties: serde_json::from_str(&properties).map_err(|e| {
            StoreError::Corrupt(format!("namespace properties {properties:?}: {e}"))
        })?,
    })
}
