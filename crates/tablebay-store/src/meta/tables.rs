//! Table rows and the compare-and-swap of their metadata pointer.
//!
//! Every change to a table row is conditional on its version token in the `UPDATE`/`DELETE` itself
//! (`… WHERE id = $ AND version_token = $expected`), so a lost race shows as zero affected rows on both
//! backends; a follow-up read inside the same transaction tells `Conflict` (row moved on) from `NotFound`.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::codec::{self, Tx, insert_error};
use super::idempotency::{IdempotencyRecord, insert_idempotency};
use super::{BucketRecord, MetaStore};
use crate::StoreError;

/// `SELECT` of every `TableRecord` column from `tables t JOIN namespaces n`; append the `WHERE`.
macro_rules! select_tables {
    () => {
        "SELECT t.id AS id, t.bucket_id AS bucket_id, t.namespace_id AS namespace_id, n.name AS namespace_name, \
                t.name AS name, t.format AS format, t.version_token AS version_token, \
                t.metadata_location AS metadata_location, t.warehouse_location AS warehouse_location, \
                t.created_at_ms AS created_at_ms, t.created_by AS created_by, \
                t.modified_at_ms AS modified_at_ms, t.modified_by AS modified_by \
         FROM tables t JOIN namespaces n ON n.id = t.namespace_id "
    };
}

/// A table as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRecord {
    /// The table id (UUID v4/v7); the table ARN and the warehouse location are derived from it.
    pub id: Uuid,
    /// The bucket it lives in.
    pub bucket_id: Uuid,
    /// The namespace it lives in.
    pub namespace_id: Uuid,
    /// The namespace's name (filled from a join on reads; ignored on insert).
    pub namespace_name: String,
    /// Table name, unique within the namespace.
    pub name: String,
    /// Open table format (`ICEBERG`).
    pub format: String,
    /// Opaque token that changes on every pointer swap.
    pub version_token: String,
    /// Current metadata file, absent until the first commit.
    pub metadata_location: Option<String>,
    /// `s3://<id>--table-s3`.
    pub warehouse_location: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Account that created it.
    pub created_by: String,
    /// Time of the last change to the row.
    pub modified_at: DateTime<Utc>,
    /// Account that made the last change.
    pub modified_by: String,
}

/// One compare-and-swap of a table's metadata pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerSwap {
    /// The table.
    pub table_id: Uuid,
    /// The version token the caller read; the swap fails if the row has moved on.
    pub expected_version_token: String,
    /// The new token.
    pub new_version_token: String,
    /// The new metadata file.
    pub new_metadata_location: String,
    /// When.
    pub modified_at: DateTime<Utc>,
    /// Who.
    pub modified_by: String,
}

impl MetaStore {
    /// Inserts a table; `AlreadyExists` if the namespace has one of that name, `NotFound` if the namespace is gone.
    ///
    /// `NotFound` also when the namespace is not in `table.bucket_id`, so a row can never point at a namespace of
    /// another bucket.
    pub async fn insert_table(&self, table: &TableRecord) -> Result<(), StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO tables (id, bucket_id, namespace_id, name, format, version_token, metadata_location, \
                                 warehouse_location, created_at_ms, created_by, modified_at_ms, modified_by) \
             SELECT $1, n.bucket_id, n.id, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
             FROM namespaces n WHERE n.id = $3 AND n.bucket_id = $2",
        )
        .bind(table.id.to_string())
        .bind(table.bucket_id.to_string())
        .bind(table.namespace_id.to_string())
        .bind(table.name.as_str())
        .bind(table.format.as_str())
        .bind(table.version_token.as_str())
        .bind(table.metadata_location.as_deref())
        .bind(table.warehouse_location.as_str())
        .bind(codec::millis(table.created_at))
        .bind(table.created_by.as_str())
        .bind(codec::millis(table.modified_at))
        .bind(table.modified_by.as_str())
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("table {:?}", table.name)))?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// The table `name` in namespace `namespace_id`, if any.
    pub async fn table_by_name(
        &self,
        namespace_id: Uuid,
        name: &str,
    ) -> Result<Option<TableRecord>, StoreError> {
        sqlx::query(concat!(
            select_tables!(),
            "WHERE t.namespace_id = $1 AND t.name = $2"
        ))
        .bind(namespace_id.to_string())
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(table_from_row)
        .transpose()
    }

    /// The table with this id, if any.
    pub async fn table_by_id(&self, id: Uuid) -> Result<Option<TableRecord>, StoreError> {
        sqlx::query(concat!(select_tables!(), "WHERE t.id = $1"))
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(table_from_row)
            .transpose()
    }

    /// The owning account and bucket name of the table with this id, if any: what the data plane needs to
    /// authorize a request on the table's storage, in one indexed read.
    pub async fn table_owner(&self, id: Uuid) -> Result<Option<(String, String)>, StoreError> {
        let row = sqlx::query(
            "SELECT b.account_id AS account_id, b.name AS bucket_name \
             FROM tables t JOIN table_buckets b ON b.id = t.bucket_id WHERE t.id = $1 \
             UNION ALL SELECT account_id, bucket_name FROM detached_storage WHERE table_id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok((
                codec::text(&row, "account_id")?,
                codec::text(&row, "bucket_name")?,
            ))
        })
        .transpose()
    }

    /// Up to `limit` tables of the bucket ordered by (namespace name, table name): only namespace `namespace_id`
    /// if given, names starting with `prefix`, strictly after the (namespace name, table name) pair `after`.
    pub async fn list_tables(
        &self,
        bucket_id: Uuid,
        namespace_id: Option<Uuid>,
        prefix: Option<&str>,
        after: Option<(&str, &str)>,
        limit: u32,
    ) -> Result<Vec<TableRecord>, StoreError> {
        // substr, not LIKE: see `list_buckets`.
        sqlx::query(concat!(
            select_tables!(),
            "WHERE t.bucket_id = $1 \
               AND ($2 IS NULL OR t.namespace_id = $2) \
               AND ($3 IS NULL OR substr(t.name, 1, length($3)) = $3) \
               AND ($4 IS NULL OR n.name > $4 OR (n.name = $4 AND t.name > $5)) \
             ORDER BY n.name, t.name LIMIT $6"
        ))
        .bind(bucket_id.to_string())
        .bind(namespace_id.map(|id| id.to_string()))
        .bind(prefix)
        .bind(after.map(|(namespace, _)| namespace))
        .bind(after.map(|(_, table)| table))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(table_from_row)
        .collect()
    }

    /// Applies every swap in one transaction, all or nothing: `Conflict` if any table's token moved,
    /// `NotFound` if any table is gone.
    pub async fn swap_table_pointers(&self, swaps: &[PointerSwap]) -> Result<(), StoreError> {
        self.swap_table_pointers_remembering(swaps, None).await
    }

    /// [`MetaStore::swap_table_pointers`], remembering the answer to an idempotent request in the same
    /// transaction: the pointers move and the answer is stored together, or neither. `AlreadyExists` (and nothing
    /// changes) when an unexpired answer is already stored under the key: a concurrent request with the same key
    /// got there first.
    pub async fn swap_table_pointers_remembering(
        &self,
        swaps: &[PointerSwap],
        remember: Option<&IdempotencyRecord>,
    ) -> Result<(), StoreError> {
        if swaps.is_empty() && remember.is_none() {
            return Ok(());
        }
        // Rows are updated in id order so that two multi-table commits lock them in the same order and cannot
        // deadlock on Postgres. The sort is stable: two swaps of one table keep the caller's order.
        let mut ordered: Vec<&PointerSwap> = swaps.iter().collect();
        ordered.sort_by_key(|swap| swap.table_id);
        let mut tx = self.begin_write().await?;
        for swap in ordered {
            let id = swap.table_id.to_string();
            let updated = sqlx::query(
                "UPDATE tables SET metadata_location = $1, version_token = $2, modified_at_ms = $3, modified_by = $4 \
                 WHERE id = $5 AND version_token = $6",
            )
            .bind(swap.new_metadata_location.as_str())
            .bind(swap.new_version_token.as_str())
            .bind(codec::millis(swap.modified_at))
            .bind(swap.modified_by.as_str())
            .bind(id.as_str())
            .bind(swap.expected_version_token.as_str())
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() != 1 {
                // Dropping `tx` rolls back the swaps already applied.
                return Err(lost_race(&mut tx, &id).await);
            }
        }
        if let Some(record) = remember
            && !insert_idempotency(&mut tx, record).await?
        {
            return Err(StoreError::AlreadyExists(format!(
                "idempotency key {}",
                record.key
            )));
        }
        tx.commit().await?;
        Ok(())
    }

    /// The version token of table `id` once no transaction is changing it: a no-op update takes the row's write
    /// lock first, so a swap still in flight (its connection lost around `COMMIT`, its backend still finishing)
    /// has ended before the token is read. `None` if the table is gone. What settles a swap whose outcome its
    /// caller could not see.
    pub async fn settled_version_token(&self, id: Uuid) -> Result<Option<String>, StoreError> {
        let id = id.to_string();
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE tables SET version_token = version_token WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        let token = sqlx::query("SELECT version_token FROM tables WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&mut *tx)
            .await?
            .map(|row| codec::text(&row, "version_token"))
            .transpose()?;
        // Nothing changed; dropping the transaction rolls the no-op back and releases the lock.
        drop(tx);
        Ok(token)
    }

    /// Moves and/or renames a table, keeping its id. `Conflict` if `expected_version_token` is given and stale,
    /// `AlreadyExists` if the target name is taken, `NotFound` if the table is gone.
    ///
    /// `NotFound` also when `new_namespace_id` does not exist or belongs to another bucket: a table stays in its
    /// bucket.
    #[allow(clippy::too_many_arguments)]
    pub async fn rename_table(
        &self,
        id: Uuid,
        new_namespace_id: Uuid,
        new_name: &str,
        expected_version_token: Option<&str>,
        new_version_token: &str,
        modified_at: DateTime<Utc>,
        modified_by: &str,
    ) -> Result<(), StoreError> {
        let id = id.to_string();
        let mut tx = self.begin_write().await?;
        let target = sqlx::query(
            "SELECT n.id FROM namespaces n JOIN tables t ON t.bucket_id = n.bucket_id WHERE t.id = $1 AND n.id = $2",
        )
        .bind(id.as_str())
        .bind(new_namespace_id.to_string())
        .fetch_optional(&mut *tx)
        .await?;
        if target.is_none() {
            return Err(StoreError::NotFound);
        }
        let updated = sqlx::query(
            "UPDATE tables SET namespace_id = $1, name = $2, version_token = $3, modified_at_ms = $4, \
                               modified_by = $5 \
             WHERE id = $6 AND ($7 IS NULL OR version_token = $7)",
        )
        .bind(new_namespace_id.to_string())
        .bind(new_name)
        .bind(new_version_token)
        .bind(codec::millis(modified_at))
        .bind(modified_by)
        .bind(id.as_str())
        .bind(expected_version_token)
        .execute(&mut *tx)
        .await
        .map_err(|e| insert_error(e, || format!("table {new_name:?}")))?;
        if updated.rows_affected() != 1 {
            return Err(lost_race(&mut tx, &id).await);
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes the table row and its attributes, returning the deleted row. `Conflict` if
    /// `expected_version_token` is given and stale, `NotFound` if it does not exist.
    pub async fn delete_table(
        &self,
        id: Uuid,
        expected_version_token: Option<&str>,
    ) -> Result<TableRecord, StoreError> {
        let id = id.to_string();
        let mut tx = self.begin_write().await?;
        // RETURNING gives the row as deleted, even if it changed after an earlier read would have run.
        let deleted = sqlx::query(
            "DELETE FROM tables WHERE id = $1 AND ($2 IS NULL OR version_token = $2) \
             RETURNING id, bucket_id, namespace_id, \
                       (SELECT n.name FROM namespaces n WHERE n.id = tables.namespace_id) AS namespace_name, \
                       name, format, version_token, metadata_location, warehouse_location, \
                       created_at_ms, created_by, modified_at_ms, modified_by",
        )
        .bind(id.as_str())
        .bind(expected_version_token)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = deleted else {
            return Err(lost_race(&mut tx, &id).await);
        };
        let table = table_from_row(&row)?;
        sqlx::query("DELETE FROM resource_attributes WHERE resource_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(table)
    }
}

impl MetaStore {
    /// The table `name` of namespace `namespace` of bucket `bucket` of `account_id`, with its bucket, in one
    /// query (the Iceberg REST load path, where a missing bucket, namespace or table are all "no such table").
    pub async fn table_by_path(
        &self,
        account_id: &str,
        bucket: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<(BucketRecord, TableRecord)>, StoreError> {
        let row = sqlx::query(
            "SELECT t.id AS id, t.bucket_id AS bucket_id, t.namespace_id AS namespace_id, n.name AS namespace_name, \
                    t.name AS name, t.format AS format, t.version_token AS version_token, \
                    t.metadata_location AS metadata_location, t.warehouse_location AS warehouse_location, \
                    t.created_at_ms AS created_at_ms, t.created_by AS created_by, \
                    t.modified_at_ms AS modified_at_ms, t.modified_by AS modified_by, \
                    b.account_id AS bucket_account_id, b.name AS bucket_name, b.created_at_ms AS bucket_created_at_ms \
             FROM table_buckets b \
             JOIN namespaces n ON n.bucket_id = b.id \
             JOIN tables t ON t.namespace_id = n.id \
             WHERE b.account_id = $1 AND b.name = $2 AND n.name = $3 AND t.name = $4",
        )
        .bind(account_id)
        .bind(bucket)
        .bind(namespace)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let table = table_from_row(&row)?;
        let bucket = BucketRecord {
            id: table.bucket_id,
            account_id: codec::text(&row, "bucket_account_id")?,
            name: codec::text(&row, "bucket_name")?,
            created_at: codec::time(&row, "bucket_created_at_ms")?,
        };
        Ok(Some((bucket, table)))
    }
}

/// Why a conditional write on table `id` matched no row: `Conflict` if the row is there (its token moved on),
/// `NotFound` if it is gone.
async fn lost_race(tx: &mut Tx, id: &str) -> StoreError {
    let found = sqlx::query("SELECT id FROM tables WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await;
    match found {
        Ok(Some(_)) => StoreError::Conflict(format!("table {id} has a newer version token")),
        Ok(None) => StoreError::NotFound,
        Err(e) => StoreError::from(e),
    }
}

/// Decodes a row of [`select_tables!`] (or the same columns from `RETURNING`).
fn table_from_row(row: &AnyRow) -> Result<TableRecord, StoreError> {
    Ok(TableRecord {
        id: codec::uuid(row, "id")?,
        bucket_id: codec::uuid(row, "bucket_id")?,
        namespace_id: codec::uuid(row, "namespace_id")?,
        namespace_name: codec::text(row, "namespace_name")?,
        name: codec::text(row, "name")?,
        format: codec::text(row, "format")?,
        version_token: codec::text(row, "version_token")?,
        metadata_location: row.try_get("metadata_location")?,
        warehouse_location: codec::text(row, "warehouse_location")?,
        created_at: codec::time(row, "created_at_ms")?,
        created_by: codec::text(row, "created_by")?,
        modified_at: codec::time(row, "modified_at_ms")?,
        modified_by: codec::text(row, "modified_by")?,
    })
}
