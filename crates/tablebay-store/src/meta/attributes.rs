//! Per-resource settings kept as JSON text: policies, encryption, maintenance configuration, storage class,
//! metrics configuration and tags. One generic key-value table so that a new setting needs no migration.

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
