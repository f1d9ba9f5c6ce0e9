//! Object rows of the S3 data plane: one row per visible object, keyed by (table id, key).
//!
//! The row is the object: its bytes are the blob segments it lists, written (and verified) by the caller before
//! the row commits, so an object appears, changes or disappears atomically with its row. A write that unlinks
//! segments (the replaced or deleted object's) queues them for deletion in the same transaction
//! (`blob_deletions.rs`), due after [`UNLINKED_BLOB_GRACE`], so no crash can lose a deletion; it also returns them.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::blob_deletions::{UNLINKED_BLOB_GRACE, after};
use super::codec::{self, Tx};
use super::{Backend, MetaStore};
use crate::StoreError;
use crate::encryption::BlobEncryption;

/// Every column of `objects`, in `ObjectRecord` order.
macro_rules! object_columns {
    () => {
        "table_id, key, size, etag, content_type, headers, user_metadata, checksum_algorithm, checksum_value, \
         checksum_type, parts_count, blobs, created_at_ms, modified_at_ms"
    };
}

/// One blob holding a contiguous run of an object's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobSegment {
    /// The blob store key.
    pub key: String,
    /// Its length in bytes (of plaintext, for an encrypted blob).
    pub size: u64,
    /// How the blob is encrypted; absent for a plaintext blob (and in rows written before encryption).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<BlobEncryption>,
}

impl BlobSegment {
    /// A plaintext blob of `size` bytes at `key`.
    pub fn plain(key: impl Into<String>, size: u64) -> Self {
        Self {
            key: key.into(),
            size,
            encryption: None,
        }
    }
}

/// A checksum as stored: algorithm name (`CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`, `SHA256`), base64 value and
/// type (`FULL_OBJECT` or `COMPOSITE`). The catalog gives the strings their meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredChecksum {
    /// Algorithm name.
    pub algorithm: String,
    /// Base64 value (with a `-N` suffix for composite checksums).
    pub value: String,
    /// `FULL_OBJECT` or `COMPOSITE`.
    pub kind: String,
}

/// An object as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRecord {
    /// The table whose storage holds it.
    pub table_id: Uuid,
    /// The key inside the table's storage.
    pub key: String,
    /// Length in bytes (the sum of the segments' sizes).
    pub size: u64,
    /// The ETag without quotes.
    pub etag: String,
    /// `Content-Type` given at upload.
    pub content_type: Option<String>,
    /// Other content headers given at upload (`cache-control`, `content-encoding`, …), lowercase names.
    pub headers: BTreeMap<String, String>,
    /// `x-amz-meta-*` metadata, without the prefix.
    pub user_metadata: BTreeMap<String, String>,
    /// The checksum verified at upload, if any.
    pub checksum: Option<StoredChecksum>,
    /// Number of parts for an object completed from a multipart upload.
    pub parts_count: Option<u32>,
    /// The bytes, in order.
    pub blobs: Vec<BlobSegment>,
    /// When the key was first written (kept across overwrites).
    pub created_at: DateTime<Utc>,
    /// When this version was written (S3's `LastModified`).
    pub modified_at: DateTime<Utc>,
}

/// When a write may replace the current row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteCondition {
    /// Unconditionally.
    Always,
    /// Only if no object has the key (`If-None-Match: *`).
    IfAbsent,
    /// Only if the current object has this ETag (`If-Match`).
    IfEtag(String),
}

/// When the commit of an object row must be durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowSync {
    /// Before the write returns: an object a client is told about.
    #[default]
    Now,
    /// With the next durable commit of this store: a file that only a later commit makes reachable (an Iceberg
    /// metadata file before the pointer swap that names it). The WAL is ordered, so that commit's sync covers this
    /// row; if it never happens, nothing refers to the row and nothing was acknowledged.
    WithNextCommit,
}

/// Where a key listing starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyStart<'a> {
    /// Keys strictly greater.
    After(&'a str),
    /// Keys greater or equal.
    AtOrAfter(&'a str),
}

/// A half-open range of keys in byte order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyRange<'a> {
    /// Lower bound, if any.
    pub start: Option<KeyStart<'a>>,
    /// Exclusive upper bound, if any.
    pub end: Option<&'a str>,
}

/// What a write does when the key has a row already.
#[derive(Clone, Copy)]
enum OnExisting {
    /// Nothing.
    Keep,
    /// Replace every column but the creation time.
    Replace,
}

/// Writes `object` as its key's row, as `on_existing` says when the key has one; whether a row was written.
async fn write_row<'c, E>(
    executor: E,
    object: &ObjectRecord,
    on_existing: OnExisting,
) -> Result<bool, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let sql = match on_existing {
        OnExisting::Keep => concat!(
            "INSERT INTO objects (",
            object_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
             ON CONFLICT (table_id, key) DO NOTHING"
        ),
        OnExisting::Replace => concat!(
            "INSERT INTO objects (",
            object_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
             ON CONFLICT (table_id, key) DO UPDATE SET size = excluded.size, etag = excluded.etag, \
               content_type = excluded.content_type, headers = excluded.headers, \
               user_metadata = excluded.user_metadata, checksum_algorithm = excluded.checksum_algorithm, \
               checksum_value = excluded.checksum_value, checksum_type = excluded.checksum_type, \
               parts_count = excluded.parts_count, blobs = excluded.blobs, modified_at_ms = excluded.modified_at_ms"
        ),
    };
    let (algorithm, value, kind) = match &object.checksum {
        Some(c) => (
            Some(c.algorithm.as_str()),
            Some(c.value.as_str()),
            Some(c.kind.as_str()),
        ),
        None => (None, None, None),
    };
    let written = sqlx::query(sql)
        .bind(object.table_id.to_string())
        .bind(object.key.as_str())
        .bind(to_i64(object.size)?)
        .bind(object.etag.as_str())
        .bind(object.content_type.as_deref())
        .bind(map_json(&object.headers)?)
        .bind(map_json(&object.user_metadata)?)
        .bind(algorithm)
        .bind(value)
        .bind(kind)
        .bind(object.parts_count.map(i64::from))
        .bind(blobs_json(&object.blobs)?)
        .bind(codec::millis(object.created_at))
        .bind(codec::millis(object.modified_at))
        .execute(executor)
        .await?;
    Ok(written.rows_affected() == 1)
}

impl MetaStore {
    /// Makes `object` the current row of its key, if `condition` holds (else `PreconditionFailed`), and returns
    /// the segments of the row it replaced (empty if none). One short transaction; no blob I/O inside.
    pub async fn put_object(
        &self,
        object: &ObjectRecord,
        condition: &WriteCondition,
    ) -> Result<Vec<BlobSegment>, StoreError> {
        self.put_object_synced(object, condition, RowSync::Now)
            .await
    }

    /// [`MetaStore::put_object`], durable as `sync` says (a replacing write, in a transaction, is always synced
    /// at once).
    pub async fn put_object_synced(
        &self,
        object: &ObjectRecord,
        condition: &WriteCondition,
        sync: RowSync,
    ) -> Result<Vec<BlobSegment>, StoreError> {
        // Most writes create their key (every Iceberg file is a new one): then the insert, atomic by itself, is
        // the whole write, one statement under the writer slot instead of a transaction of four.
        if !matches!(condition, WriteCondition::IfEtag(_)) {
            // On the write pool, so the statement joins the group commit of transactions (`Tx::commit`).
            let inserted = {
                let _writer = self.writer_slot().await;
                write_row(&self.writes, object, OnExisting::Keep).await?
            };
            if sync == RowSync::Now {
                self.wait_durable().await?;
            }
            match (inserted, condition) {
                (true, _) => return Ok(Vec::new()),
                (false, WriteCondition::IfAbsent) => {
                    return Err(StoreError::PreconditionFailed(format!(
                        "{:?} exists",
                        object.key
                    )));
                }
                (false, _) => {}
            }
        }
        let mut tx = self.begin_write().await?;
        let replaced = self.replace_object_in(&mut tx, object, condition).await?;
        tx.commit().await?;
        Ok(replaced)
    }

    /// The body of [`MetaStore::put_object`] inside a caller's transaction (also used by multipart completion).
    pub(super) async fn replace_object_in(
        &self,
        tx: &mut Tx,
        object: &ObjectRecord,
        condition: &WriteCondition,
    ) -> Result<Vec<BlobSegment>, StoreError> {
        let table_id = object.table_id.to_string();
        // Postgres locks the current row so that two overwrites cannot both see (and later delete) the same old
        // segments; SQLite's BEGIN IMMEDIATE already serialises writers. A key with no row yet has nothing to
        // lock: the insert below does nothing if another writer created the row meanwhile, and the loop then
        // locks that row and replaces it, so its blobs are handed back too.
        let select = match self.backend {
            Backend::Sqlite => "SELECT etag, blobs FROM objects WHERE table_id = $1 AND key = $2",
            Backend::Postgres => {
                "SELECT etag, blobs FROM objects WHERE table_id = $1 AND key = $2 FOR UPDATE"
            }
        };
        loop {
            let current = sqlx::query(select)
                .bind(table_id.as_str())
                .bind(object.key.as_str())
                .fetch_optional(&mut **tx)
                .await?;
            let current_etag = current
                .as_ref()
                .map(|row| codec::text(row, "etag"))
                .transpose()?;
            match (condition, current_etag.as_deref()) {
                (WriteCondition::Always, _) | (WriteCondition::IfAbsent, None) => {}
                (WriteCondition::IfEtag(want), Some(have)) if want == have => {}
                (WriteCondition::IfAbsent, Some(_)) => {
                    return Err(StoreError::PreconditionFailed(format!(
                        "{:?} exists",
                        object.key
                    )));
                }
                (WriteCondition::IfEtag(_), _) => {
                    return Err(StoreError::PreconditionFailed(format!(
                        "{:?} has another ETag",
                        object.key
                    )));
                }
            }
            let Some(row) = current else {
                if write_row(&mut **tx, object, OnExisting::Keep).await? {
                    return Ok(Vec::new());
                }
                continue;
            };
            let replaced = blobs_from_json(&codec::text(&row, "blobs")?)?;
            write_row(&mut **tx, object, OnExisting::Replace).await?;
            self.queue_unlinked_in(tx, &replaced, after(Utc::now(), UNLINKED_BLOB_GRACE))
                .await?;
            return Ok(replaced);
        }
    }

    /// The current object at `key`, if any.
    pub async fn object(
        &self,
        table_id: Uuid,
        key: &str,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            object_columns!(),
            " FROM objects WHERE table_id = $1 AND key = $2"
        ))
        .bind(table_id.to_string())
        .bind(key)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(object_from_row)
        .transpose()
    }

    /// Removes the object at `key` and returns it (`None` if there was none).
    pub async fn delete_object(
        &self,
        table_id: Uuid,
        key: &str,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        let mut tx = self.begin_write().await?;
        let deleted = sqlx::query(concat!(
            "DELETE FROM objects WHERE table_id = $1 AND key = $2 RETURNING ",
            object_columns!()
        ))
        .bind(table_id.to_string())
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?
        .as_ref()
        .map(object_from_row)
        .transpose()?;
        if let Some(object) = &deleted {
            self.queue_unlinked_in(
                &mut tx,
                &object.blobs,
                after(Utc::now(), UNLINKED_BLOB_GRACE),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(deleted)
    }

    /// Queues `segments` for deletion at `due` inside the caller's transaction.
    pub(super) async fn queue_unlinked_in(
        &self,
        tx: &mut Tx,
        segments: &[BlobSegment],
        due: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let keys: Vec<&str> = segments.iter().map(|s| s.key.as_str()).collect();
        self.queue_blob_deletions_in(tx, &keys, due).await
    }

    /// Removes every object row and multipart upload of a table (dropped or purged), in one transaction;
    /// returns how many objects there were. The blobs are the caller's to delete afterwards.
    pub async fn delete_table_objects(&self, table_id: Uuid) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM multipart_parts WHERE upload_id IN (SELECT upload_id FROM multipart_uploads WHERE table_id = $1)")
            .bind(table_id.to_string())
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM multipart_uploads WHERE table_id = $1")
            .bind(table_id.to_string())
            .execute(&mut *tx)
            .await?;
        let objects = sqlx::query("DELETE FROM objects WHERE table_id = $1")
            .bind(table_id.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(objects.rows_affected())
    }

    /// Removes the objects at `keys` in one transaction and returns those that existed.
    pub async fn delete_objects(
        &self,
        table_id: Uuid,
        keys: &[&str],
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let table_id = table_id.to_string();
        let mut tx = self.begin_write().await?;
        let mut deleted = Vec::new();
        for key in keys {
            let row = sqlx::query(concat!(
                "DELETE FROM objects WHERE table_id = $1 AND key = $2 RETURNING ",
                object_columns!()
            ))
            .bind(table_id.as_str())
            .bind(*key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = row {
                deleted.push(object_from_row(&row)?);
            }
        }
        let unlinked: Vec<BlobSegment> = deleted.iter().flat_map(|o| o.blobs.clone()).collect();
        self.queue_unlinked_in(&mut tx, &unlinked, after(Utc::now(), UNLINKED_BLOB_GRACE))
            .await?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// Removes the object at `key` only if it is still the version last modified at `modified` (unreferenced-file
    /// removal must not delete an object rewritten since it was judged); returns the removed row.
    pub async fn delete_object_if_unmodified(
        &self,
        table_id: Uuid,
        key: &str,
        modified: DateTime<Utc>,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(concat!(
            "DELETE FROM objects WHERE table_id = $1 AND key = $2 AND modified_at_ms = $3 RETURNING ",
            object_columns!()
        ))
        .bind(table_id.to_string())
        .bind(key)
        .bind(codec::millis(modified))
        .fetch_optional(&mut *tx)
        .await?
        .as_ref()
        .map(object_from_row)
        .transpose()?;
        // Due at once: the caller deletes the blobs right away; the queue row is the backstop for a crash.
        if let Some(object) = &row {
            self.queue_unlinked_in(&mut tx, &object.blobs, Utc::now())
                .await?;
        }
        tx.commit().await?;
        Ok(row)
    }

    /// Up to `limit` objects of the table with keys in `range`, in byte order of their keys.
    pub async fn list_objects(
        &self,
        table_id: Uuid,
        range: KeyRange<'_>,
        limit: u32,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let (after, at_or_after) = match range.start {
            None => (None, None),
            Some(KeyStart::After(key)) => (Some(key), None),
            Some(KeyStart::AtOrAfter(key)) => (None, Some(key)),
        };
        sqlx::query(concat!(
            "SELECT ",
            object_columns!(),
            " FROM objects WHERE table_id = $1 \
               AND ($2 IS NULL OR key > $2) AND ($3 IS NULL OR key >= $3) AND ($4 IS NULL OR key < $4) \
             ORDER BY key LIMIT $5"
        ))
        .bind(table_id.to_string())
        .bind(after)
        .bind(at_or_after)
        .bind(range.end)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(object_from_row)
        .collect()
    }
}

/// `u64` sizes as the databases' signed 64-bit integers.
pub(super) fn to_i64(n: u64) -> Result<i64, StoreError> {
    i64::try_from(n).map_err(|_| StoreError::Corrupt(format!("size {n} out of range")))
}

/// A stored non-negative integer column as `u64`.
pub(super) fn size(row: &AnyRow, column: &str) -> Result<u64, StoreError> {
    let n: i64 = row.try_get(column)?;
    u64::try_from(n).map_err(|_| StoreError::Corrupt(format!("{column} {n} is negative")))
}

pub(super) fn map_json(map: &BTreeMap<String, String>) -> Result<String, StoreError> {
    serde_json::to_string(map).map_err(|e| StoreError::Corrupt(format!("metadata: {e}")))
}

pub(super) fn map_from_json(text: &str) -> Result<BTreeMap<String, String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("metadata {text:?}: {e}")))
}

fn blobs_json(blobs: &[BlobSegment]) -> Result<String, StoreError> {
    serde_json::to_string(blobs).map_err(|e| StoreError::Corrupt(format!("blob list: {e}")))
}

fn blobs_from_json(text: &str) -> Result<Vec<BlobSegment>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("blob list {text:?}: {e}")))
}

fn object_from_row(row: &AnyRow) -> Result<ObjectRecord, StoreError> {
    let algorithm: Option<String> = row.try_get("checksum_algorithm")?;
    let value: Option<String> = row.try_get("checksum_value")?;
    let kind: Option<String> = row.try_get("checksum_type")?;
    let checksum = match (algorithm, value) {
        (Some(algorithm), Some(value)) => Some(StoredChecksum {
            algorithm,
            value,
            kind: kind.unwrap_or_else(|| "FULL_OBJECT".to_owned()),
        }),
        _ => None,
    };
    let parts_count: Option<i64> = row.try_get("parts_count")?;
    Ok(ObjectRecord {
        table_id: codec::uuid(row, "table_id")?,
        key: codec::text(row, "key")?,
        size: size(row, "size")?,
        etag: codec::text(row, "etag")?,
        content_type: row.try_get("content_type")?,
        headers: map_from_json(&codec::text(row, "headers")?)?,
        user_metadata: map_from_json(&codec::text(row, "user_metadata")?)?,
        checksum,
        parts_count: parts_count
            .map(|n| u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("parts_count {n}"))))
            .transpose()?,
        blobs: blobs_from_json(&codec::text(row, "blobs")?)?,
        created_at: codec::time(row, "created_at_ms")?,
        modified_at: codec::time(row, "modified_at_ms")?,
    })
}
