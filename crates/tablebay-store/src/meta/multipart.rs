//! Multipart uploads and their parts.
//!
//! Each uploaded part is its own blob, written and verified before its row commits; re-uploading a part number
//! replaces the row and queues the old blob for deletion. Completion turns a chosen list of parts into one object
//! row in a single transaction that also deletes the upload, so the object appears exactly when the upload
//! disappears; the object keeps the parts' blobs as its segments (no copy). Blobs a write unlinks are queued for
//! deletion in its own transaction (`blob_deletions.rs`), and also handed back.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::blob_deletions::{UNLINKED_BLOB_GRACE, after};
use super::codec::{self, Tx};
use super::objects::{map_from_json, map_json, size, to_i64};
use super::{BlobSegment, MetaStore, ObjectRecord, WriteCondition};
use crate::StoreError;
use crate::encryption::BlobEncryption;

/// Every column of `multipart_uploads`, in `UploadRecord` order.
macro_rules! upload_columns {
    () => {
        "upload_id, table_id, key, content_type, headers, user_metadata, checksum_algorithm, checksum_type, \
         initiator, initiated_at_ms"
    };
}

/// Every column of `multipart_parts`, in `PartRecord` order.
macro_rules! part_columns {
    () => {
        "upload_id, part_number, size, etag, checksum_algorithm, checksum_value, blob_key, uploaded_at_ms, encryption"
    };
}

/// A multipart upload in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadRecord {
    /// The opaque upload id.
    pub upload_id: String,
    /// The table whose storage the object goes to.
    pub table_id: Uuid,
    /// The key of the object to be.
    pub key: String,
    /// `Content-Type` of the object to be.
    pub content_type: Option<String>,
    /// Other content headers of the object to be.
    pub headers: BTreeMap<String, String>,
    /// `x-amz-meta-*` metadata of the object to be.
    pub user_metadata: BTreeMap<String, String>,
    /// The checksum algorithm requested at creation.
    pub checksum_algorithm: Option<String>,
    /// `FULL_OBJECT` or `COMPOSITE`, when an algorithm was requested.
    pub checksum_type: Option<String>,
    /// Who started it (principal ARN).
    pub initiator: String,
    /// When it started.
    pub initiated_at: DateTime<Utc>,
}

/// One uploaded part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartRecord {
    /// The upload it belongs to.
    pub upload_id: String,
    /// 1 to 10000.
    pub part_number: u32,
    /// Length in bytes.
    pub size: u64,
    /// MD5 of the part, hex, without quotes.
    pub etag: String,
    /// Algorithm of `checksum_value`.
    pub checksum_algorithm: Option<String>,
    /// Base64 checksum of the part.
    pub checksum_value: Option<String>,
    /// Where its bytes are.
    pub blob_key: String,
    /// When it was uploaded.
    pub uploaded_at: DateTime<Utc>,
    /// How its blob is encrypted; `None` for a plaintext blob.
    pub encryption: Option<BlobEncryption>,
}

/// What completing an upload unlinked: the replaced object's segments and the parts left out of the object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletedUpload {
    /// Segments of the object the completion replaced.
    pub replaced: Vec<BlobSegment>,
    /// Blob keys of uploaded parts that the completed object does not use.
    pub unused_parts: Vec<String>,
}

impl MetaStore {
    /// Records a new upload.
    pub async fn insert_upload(&self, upload: &UploadRecord) -> Result<(), StoreError> {
        sqlx::query(concat!(
            "INSERT INTO multipart_uploads (",
            upload_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(upload.upload_id.as_str())
        .bind(upload.table_id.to_string())
        .bind(upload.key.as_str())
        .bind(upload.content_type.as_deref())
        .bind(map_json(&upload.headers)?)
        .bind(map_json(&upload.user_metadata)?)
        .bind(upload.checksum_algorithm.as_deref())
        .bind(upload.checksum_type.as_deref())
        .bind(upload.initiator.as_str())
        .bind(codec::millis(upload.initiated_at))
        .execute(&self.pool)
        .await
        .map_err(|e| codec::insert_error(e, || format!("upload {}", upload.upload_id)))?;
        Ok(())
    }

    /// The upload with this id, if it is still in progress.
    pub async fn upload(&self, upload_id: &str) -> Result<Option<UploadRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            upload_columns!(),
            " FROM multipart_uploads WHERE upload_id = $1"
        ))
        .bind(upload_id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(upload_from_row)
        .transpose()
    }

    /// Records a part, replacing an earlier upload of the same part number; returns the replaced part's blob key.
    /// `NotFound` if the upload is gone (completed, aborted or expired).
    pub async fn put_part(&self, part: &PartRecord) -> Result<Option<String>, StoreError> {
        let mut tx = self.begin_write().await?;
        let replaced: Option<String> = sqlx::query(
            "SELECT blob_key FROM multipart_parts WHERE upload_id = $1 AND part_number = $2",
        )
        .bind(part.upload_id.as_str())
        .bind(i64::from(part.part_number))
        .fetch_optional(&mut *tx)
        .await?
        .map(|row| row.try_get("blob_key"))
        .transpose()?;
        // INSERT … SELECT from the upload row: no row is inserted once the upload is gone.
        let inserted = sqlx::query(concat!(
            "INSERT INTO multipart_parts (",
            part_columns!(),
            ") SELECT u.upload_id, $2, $3, $4, $5, $6, $7, $8, $9 FROM multipart_uploads u WHERE u.upload_id = $1 \
             ON CONFLICT (upload_id, part_number) DO UPDATE SET size = excluded.size, etag = excluded.etag, \
               checksum_algorithm = excluded.checksum_algorithm, checksum_value = excluded.checksum_value, \
               blob_key = excluded.blob_key, uploaded_at_ms = excluded.uploaded_at_ms, encryption = excluded.encryption"
        ))
        .bind(part.upload_id.as_str())
        .bind(i64::from(part.part_number))
        .bind(to_i64(part.size)?)
        .bind(part.etag.as_str())
        .bind(part.checksum_algorithm.as_deref())
        .bind(part.checksum_value.as_deref())
        .bind(part.blob_key.as_str())
        .bind(codec::millis(part.uploaded_at))
        .bind(part.encryption.as_ref().map(serde_json::to_string).transpose().map_err(|e| StoreError::Corrupt(e.to_string()))?)
        .execute(&mut *tx)
        .await
        .map_err(|e| codec::insert_error(e, || format!("part {}", part.part_number)))?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        if let Some(old) = &replaced {
            self.queue_blob_deletions_in(
                &mut tx,
                &[old.as_str()],
                after(Utc::now(), UNLINKED_BLOB_GRACE),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(replaced)
    }

    /// Up to `limit` parts of the upload with numbers above `after`, in order.
    pub async fn list_parts(
        &self,
        upload_id: &str,
        after: u32,
        limit: u32,
    ) -> Result<Vec<PartRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            part_columns!(),
            " FROM multipart_parts WHERE upload_id = $1 AND part_number > $2 ORDER BY part_number LIMIT $3"
        ))
        .bind(upload_id)
        .bind(i64::from(after))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(part_from_row)
        .collect()
    }

    /// Up to `limit` uploads of the table whose keys start at or after `from_key` and are below `end_key`, ordered
    /// by key then upload id, strictly after the (key, upload id) marker if given; a marker without an upload id
    /// skips every upload of that key.
    pub async fn list_uploads(
        &self,
        table_id: Uuid,
        from_key: Option<&str>,
        end_key: Option<&str>,
        marker: Option<(&str, Option<&str>)>,
        limit: u32,
    ) -> Result<Vec<UploadRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            upload_columns!(),
            " FROM multipart_uploads WHERE table_id = $1 \
               AND ($2 IS NULL OR key >= $2) AND ($3 IS NULL OR key < $3) \
               AND ($4 IS NULL OR key > $4 OR (key = $4 AND $5 IS NOT NULL AND upload_id > $5)) \
             ORDER BY key, upload_id LIMIT $6"
        ))
        .bind(table_id.to_string())
        .bind(from_key)
        .bind(end_key)
        .bind(marker.map(|(key, _)| key))
        .bind(marker.and_then(|(_, upload)| upload))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(upload_from_row)
        .collect()
    }

    /// Completes an upload: in one transaction, checks that the parts the caller validated are still the
    /// uploaded ones (`expected`: part number and blob key; `Conflict` if one was replaced meanwhile), makes
    /// `object` the current row of its key (honouring `condition`), and deletes the upload and its parts.
    /// `NotFound` if the upload is gone.
    pub async fn complete_upload(
        &self,
        upload_id: &str,
        expected: &[(u32, String)],
        object: &ObjectRecord,
        condition: &WriteCondition,
    ) -> Result<CompletedUpload, StoreError> {
        let mut tx = self.begin_write().await?;
        if !lock_upload(self, &mut tx, upload_id).await? {
            return Err(StoreError::NotFound);
        }
        let rows =
            sqlx::query("SELECT part_number, blob_key FROM multipart_parts WHERE upload_id = $1")
                .bind(upload_id)
                .fetch_all(&mut *tx)
                .await?;
        let mut current = BTreeMap::new();
        for row in &rows {
            let number: i64 = row.try_get("part_number")?;
            let key: String = row.try_get("blob_key")?;
            current.insert(number, key);
        }
        for (number, key) in expected {
            if current.remove(&i64::from(*number)).as_deref() != Some(key.as_str()) {
                return Err(StoreError::Conflict(format!(
                    "part {number} changed while the upload was completing"
                )));
            }
        }
        let replaced = self.replace_object_in(&mut tx, object, condition).await?;
        sqlx::query("DELETE FROM multipart_parts WHERE upload_id = $1")
            .bind(upload_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM multipart_uploads WHERE upload_id = $1")
            .bind(upload_id)
            .execute(&mut *tx)
            .await?;
        // Parts left out were never readable as an object: due at once.
        let unused_parts: Vec<String> = current.into_values().collect();
        let unused: Vec<&str> = unused_parts.iter().map(String::as_str).collect();
        self.queue_blob_deletions_in(&mut tx, &unused, Utc::now())
            .await?;
        tx.commit().await?;
        Ok(CompletedUpload {
            replaced,
            unused_parts,
        })
    }

    /// Deletes an upload and its parts, returning the parts' blob keys. `NotFound` if it is gone.
    pub async fn abort_upload(&self, upload_id: &str) -> Result<Vec<String>, StoreError> {
        let mut tx = self.begin_write().await?;
        if !lock_upload(self, &mut tx, upload_id).await? {
            return Err(StoreError::NotFound);
        }
        let keys =
            sqlx::query("DELETE FROM multipart_parts WHERE upload_id = $1 RETURNING blob_key")
                .bind(upload_id)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|row| row.try_get("blob_key").map_err(StoreError::from))
                .collect::<Result<Vec<String>, _>>()?;
        sqlx::query("DELETE FROM multipart_uploads WHERE upload_id = $1")
            .bind(upload_id)
            .execute(&mut *tx)
            .await?;
        // A part upload racing the abort may still be reading its blob's row: the grace period.
        let unlinked: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.queue_blob_deletions_in(&mut tx, &unlinked, after(Utc::now(), UNLINKED_BLOB_GRACE))
            .await?;
        tx.commit().await?;
        Ok(keys)
    }

    /// Ids of up to `limit` uploads of one table started before `cutoff`, oldest first (abandoned uploads that
    /// unreferenced-file removal aborts).
    pub async fn table_uploads_started_before(
        &self,
        table_id: Uuid,
        cutoff: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        sqlx::query(
            "SELECT upload_id FROM multipart_uploads WHERE table_id = $1 AND initiated_at_ms < $2 \
             ORDER BY initiated_at_ms LIMIT $3",
        )
        .bind(table_id.to_string())
        .bind(codec::millis(cutoff))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| row.try_get("upload_id").map_err(StoreError::from))
        .collect()
    }

    /// Ids of up to `limit` uploads started before `cutoff`, oldest first (for the expiry sweep).
    pub async fn uploads_started_before(
        &self,
        cutoff: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        sqlx::query("SELECT upload_id FROM multipart_uploads WHERE initiated_at_ms < $1 ORDER BY initiated_at_ms LIMIT $2")
            .bind(codec::millis(cutoff))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| row.try_get("upload_id").map_err(StoreError::from))
            .collect()
    }
}

/// Whether the upload exists; on Postgres its row is locked for the rest of the transaction, so a part insert
/// (whose `INSERT … SELECT` reads the row) waits for completion or abort and then finds it gone.
async fn lock_upload(store: &MetaStore, tx: &mut Tx, upload_id: &str) -> Result<bool, StoreError> {
    let select = match store.backend {
        super::Backend::Sqlite => "SELECT upload_id FROM multipart_uploads WHERE upload_id = $1",
        super::Backend::Postgres => {
            "SELECT upload_id FROM multipart_uploads WHERE upload_id = $1 FOR UPDATE"
        }
    };
    Ok(sqlx::query(select)
        .bind(upload_id)
        .fetch_optional(&mut **tx)
        .await?
        .is_some())
}

fn upload_from_row(row: &AnyRow) -> Result<UploadRecord, StoreError> {
    Ok(UploadRecord {
        upload_id: codec::text(row, "upload_id")?,
        table_id: codec::uuid(row, "table_id")?,
        key: codec::text(row, "key")?,
        content_type: row.try_get("content_type")?,
        headers: map_from_json(&codec::text(row, "headers")?)?,
        user_metadata: map_from_json(&codec::text(row, "user_metadata")?)?,
        checksum_algorithm: row.try_get("checksum_algorithm")?,
        checksum_type: row.try_get("checksum_type")?,
        initiator: codec::text(row, "initiator")?,
        initiated_at: codec::time(row, "initiated_at_ms")?,
    })
}

fn part_from_row(row: &AnyRow) -> Result<PartRecord, StoreError> {
    let number: i64 = row.try_get("part_number")?;
    Ok(PartRecord {
        upload_id: codec::text(row, "upload_id")?,
        part_number: u32::try_from(number)
            .map_err(|_| StoreError::Corrupt(format!("part number {number}")))?,
        size: size(row, "size")?,
        etag: codec::text(row, "etag")?,
        checksum_algorithm: row.try_get("checksum_algorithm")?,
        checksum_value: row.try_get("checksum_value")?,
        blob_key: codec::text(row, "blob_key")?,
        uploaded_at: codec::time(row, "uploaded_at_ms")?,
        encryption: row
            .try_get::<Option<String>, _>("encryption")?
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("part encryption: {e}")))?,
    })
}
