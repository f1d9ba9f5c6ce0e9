//! Table migration runs (StartTableMigration, SyncTableMigration): one row per run, keyed by a UUID v7 (so id
//! order is start order), with the destination bucket, namespace, name and table id as columns for the listings,
//! and the rest as JSON text the migration service owns.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::MetaStore;
use super::codec;
use crate::StoreError;

/// One migration run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMigrationRecord {
    /// The migration id.
    pub id: Uuid,
    /// The destination bucket.
    pub bucket_id: Uuid,
    /// The destination namespace name.
    pub namespace: String,
    /// The destination table name.
    pub name: String,
    /// The destination table's id (its row exists once the start run succeeded).
    pub table_id: Uuid,
    /// `start` or `sync`.
    pub kind: String,
    /// The state (`planning`, `migrating`, `succeeded`, `failed`, …).
    pub state: String,
    /// When the run was started.
    pub created_at: DateTime<Utc>,
    /// When the state last changed.
    pub state_updated_at: DateTime<Utc>,
    /// Everything else, as JSON text.
    pub document: String,
}

/// The columns, as a literal: sqlx takes only `&'static str` statements (trap T14), built with `concat!`.
macro_rules! columns {
    () => {
        "id, bucket_id, namespace, name, table_id, kind, state, created_at_ms, state_updated_at_ms, document"
    };
}

fn record(row: &AnyRow) -> Result<TableMigrationRecord, StoreError> {
    Ok(TableMigrationRecord {
        id: codec::uuid(row, "id")?,
        bucket_id: codec::uuid(row, "bucket_id")?,
        namespace: codec::text(row, "namespace")?,
        name: codec::text(row, "name")?,
        table_id: codec::uuid(row, "table_id")?,
        kind: codec::text(row, "kind")?,
        state: codec::text(row, "state")?,
        created_at: codec::time(row, "created_at_ms")?,
        state_updated_at: codec::time(row, "state_updated_at_ms")?,
        document: row.try_get("document")?,
    })
}

impl MetaStore {
    /// Records a new run.
    pub async fn insert_table_migration(
        &self,
        migration: &TableMigrationRecord,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(concat!(
            "INSERT INTO table_migrations (",
            columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(migration.id.to_string())
        .bind(migration.bucket_id.to_string())
        .bind(migration.namespace.clone())
        .bind(migration.name.clone())
        .bind(migration.table_id.to_string())
        .bind(migration.kind.clone())
        .bind(migration.state.clone())
        .bind(codec::millis(migration.created_at))
        .bind(codec::millis(migration.state_updated_at))
        .bind(migration.document.clone())
        .execute(&mut *tx)
        .await
        .map_err(|e| codec::insert_error(e, || format!("table migration {}", migration.id)))?;
        tx.commit().await
    }

    /// Sets a run's state and document if its state is still `expected` (a compare-and-swap: a cancel and the
    /// runner's next step never both win); `false` when the state had changed.
    pub async fn update_table_migration(
        &self,
        id: Uuid,
        expected: &str,
        state: &str,
        document: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE table_migrations SET state = $1, document = $2, \
             state_updated_at_ms = CASE WHEN state = $1 THEN state_updated_at_ms ELSE $3 END \
             WHERE id = $4 AND state = $5",
        )
        .bind(state.to_string())
        .bind(document.to_string())
        .bind(codec::millis(now))
        .bind(id.to_string())
        .bind(expected.to_string())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(done == 1)
    }

    /// The run `id`, if recorded.
    pub async fn table_migration(
        &self,
        id: Uuid,
    ) -> Result<Option<TableMigrationRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM table_migrations WHERE id = $1"
        ))
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(record)
        .transpose()
    }

    /// The latest run of the destination table `table_id`, if any.
    pub async fn latest_table_migration(
        &self,
        table_id: Uuid,
    ) -> Result<Option<TableMigrationRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM table_migrations WHERE table_id = $1 ORDER BY id DESC LIMIT 1"
        ))
        .bind(table_id.to_string())
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(record)
        .transpose()
    }

    /// The runs of bucket `bucket_id` after `after` in id order, at most `limit`; with `table_id`, only that
    /// destination table's.
    pub async fn table_migrations(
        &self,
        bucket_id: Uuid,
        table_id: Option<Uuid>,
        after: Option<Uuid>,
        limit: u32,
    ) -> Result<Vec<TableMigrationRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM table_migrations WHERE bucket_id = $1 AND id > $2 \
             AND ($3 = '' OR table_id = $3) ORDER BY id LIMIT $4"
        ))
        .bind(bucket_id.to_string())
        .bind(after.map(|id| id.to_string()).unwrap_or_default())
        .bind(table_id.map(|id| id.to_string()).unwrap_or_default())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(record)
        .collect()
    }
}
