//! Per-resource settings kept as JSON text: policies, encryption, maintenance configuration, storage class,
//! metrics configuration and tags. One generic key-value table so that a new setting needs no migration.

use sqlx::Row;
use uuid::Uuid;

use super::MetaStore;
use super::codec;
use crate::StoreError;

/// Which setting of a bucket or table an attribute row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeKey {
    /// The resource policy document (IAM JSON text).
    Policy,
    /// The encryption configuration.
    Encryption,
    /// The maintenance configuration (all job types in one JSON object).
    Maintenance,
    /// The storage class configuration.
    StorageClass,
    /// The metrics configuration (bucket only).
    Metrics,
    /// The tags (a JSON object of key → value).
    Tags,
    /// The maintenance job status (all job types in one JSON object).
    MaintenanceStatus,
    /// The replication configuration of a bucket or table (with its version token).
    Replication,
    /// The replication status of a source table, per destination.
    ReplicationStatus,
    /// The server access logging configuration (bucket only).
    Logging,
    /// The write lock of a table that a migration still owns (`{"migrationId": …}`); absent once completed.
    MigrationLock,
}

impl AttributeKey {
    /// The stored key string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::Encryption => "encryption",
            Self::Maintenance => "maintenance",
            Self::StorageClass => "storage-class",
            Self::Metrics => "metrics",
            Self::Tags => "tags",
            Self::MaintenanceStatus => "maintenance-status",
            Self::Replication => "replication",
            Self::ReplicationStatus => "replication-status",
            Self::Logging => "logging",
            Self::MigrationLock => "migration-lock",
        }
    }
}

impl MetaStore {
    /// The attribute `key` of resource `resource_id` (a bucket or table id), if set.
    pub async fn attribute(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
    ) -> Result<Option<String>, StoreError> {
        let row = sqlx::query(
            "SELECT value FROM resource_attributes WHERE resource_id = $1 AND key = $2",
        )
        .bind(resource_id.to_string())
        .bind(key.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| codec::text(&row, "value")).transpose()
    }

    /// The resources (bucket or table ids) that have attribute `key` set, at most `limit` of them in id order.
    pub async fn resources_with_attribute(
        &self,
        key: AttributeKey,
        limit: u32,
    ) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query(
            "SELECT resource_id FROM resource_attributes WHERE key = $1 ORDER BY resource_id LIMIT $2",
        )
        .bind(key.as_str())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| codec::uuid(row, "resource_id"))
        .collect()
    }

    /// The policy documents of table `table_id` and of its bucket, read together (each `None` when unset), if
    /// the table lies in bucket `bucket_name` of `account_id`: what every request on a table is authorized
    /// against, in one indexed read instead of resolving bucket, table and each policy apart.
    pub async fn table_policies(
        &self,
        account_id: &str,
        bucket_name: &str,
        table_id: Uuid,
    ) -> Result<Option<(Option<String>, Option<String>)>, StoreError> {
        let row = sqlx::query(
            "SELECT \
               (SELECT value FROM resource_attributes WHERE resource_id = b.id AND key = $4) AS bucket_policy, \
               (SELECT value FROM resource_attributes WHERE resource_id = t.id AND key = $4) AS table_policy \
             FROM tables t JOIN table_buckets b ON b.id = t.bucket_id \
             WHERE t.id = $1 AND b.account_id = $2 AND b.name = $3",
        )
        .bind(table_id.to_string())
        .bind(account_id)
        .bind(bucket_name)
        .bind(AttributeKey::Policy.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok((
                row.try_get::<Option<String>, _>("bucket_policy")?,
                row.try_get::<Option<String>, _>("table_policy")?,
            ))
        })
        .transpose()
    }

    /// Sets (inserts or replaces) the attribute.
    ///
    /// The resource is not checked: the catalog resolves it first, and deleting a bucket or table removes its
    /// attributes.
    pub async fn set_attribute(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
        value: &str,
    ) -> Result<(), StoreError> {
        // An upsert, so two concurrent writers both succeed (the last one wins) on either backend.
        sqlx::query(
            "INSERT INTO resource_attributes (resource_id, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (resource_id, key) DO UPDATE SET value = excluded.value",
        )
        .bind(resource_id.to_string())
        .bind(key.as_str())
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Removes the attribute; returns whether it existed.
    pub async fn delete_attribute(
        &self,
        resource_id: Uuid,
        key: AttributeKey,
    ) -> Result<bool, StoreError> {
        let deleted =
            sqlx::query("DELETE FROM resource_attributes WHERE resource_id = $1 AND key = $2")
                .bind(resource_id.to_string())
                .bind(key.as_str())
                .execute(&self.pool)
                .await?;
        Ok(deleted.rows_affected() > 0)
    }
}
