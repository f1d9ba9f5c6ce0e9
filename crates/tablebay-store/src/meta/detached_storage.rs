//! Storage of tables without a table row that must still resolve on the data plane ([`MetaStore::table_owner`]):
//! staged creates and tables dropped without purge.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::MetaStore;
use crate::StoreError;

impl MetaStore {
    /// Records that the storage of `table_id` belongs to `account_id`'s bucket `bucket_name` although the table
    /// has no row; `reason` says why (`staged`, `dropped`).
    pub async fn record_detached_storage(
        &self,
        table_id: Uuid,
        account_id: &str,
        bucket_name: &str,
        reason: &str,
        since: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO detached_storage (table_id, account_id, bucket_name, reason, since_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (table_id) DO UPDATE SET reason = $4, since_ms = $5",
        )
        .bind(table_id.to_string())
        .bind(account_id)
        .bind(bucket_name)
        .bind(reason)
        .bind(since.timestamp_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Forgets the record once the table has a row again, or its storage is purged.
    pub async fn forget_detached_storage(&self, table_id: Uuid) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM detached_storage WHERE table_id = $1")
            .bind(table_id.to_string())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
