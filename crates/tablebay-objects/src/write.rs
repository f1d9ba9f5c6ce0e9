//! Single-request writes: put and copy.
//!
//! Write path (DESIGN.md "Layers"): the body streams into a fresh blob and is verified (`body.rs`); only then does
//! one short transaction make the object row point at the blob. Blobs the row no longer references are queued for
//! deletion in the same transaction (the meta store's `blob_deletions`), due after a grace period (readers that
//! fetched the old row may still be opening them); [`Objects::delete_unlinked_blobs`] deletes them, so a crash
//! loses no deletion and never leaves a half-visible object.

use chrono::Utc;
use futures::stream::{StreamExt, TryStreamExt};
use tablebay_store::meta::{ObjectRecord, RowSync, StoredChecksum, WriteCondition};
use uuid::Uuid;

use crate::checksum::{self, ChecksumAlgorithm, ChecksumType};
use crate::object::object_info;
use crate::{
    BodyError, ObjectAttributes, ObjectBody, ObjectError, ObjectInfo, ObjectKey, Objects,
    PutCondition, PutOptions, ReadRequest, RequestedEncryption, Storage,
};

/// Largest object a single PUT (or a copy) may write: 5 GiB, as S3.
pub const MAX_PUT_BYTES: u64 = 5 * 1024 * 1024 * 1024;

impl Objects {
    /// Streams `body` into the storage at `key`, verifies it, and makes it visible atomically.
    pub async fn put_object(
        &self,
        storage: &Storage,
        key: &ObjectKey,
        body: ObjectBody,
        options: PutOptions,
    ) -> Result<ObjectInfo, ObjectError> {
        let algorithm = body
            .checksum
            .as_ref()
            .map(|(algorithm, _)| *algorithm)
            .or(options.checksum_algorithm)
            .unwrap_or(ChecksumAlgorithm::Crc64Nvme);
        let ingested = self
            .ingest(
                storage,
                body,
                MAX_PUT_BYTES,
                &[algorithm],
                options.encryption.as_ref(),
            )
            .await?;
        let checksum = ingested
            .digests
            .checksum(algorithm)
            .map(|raw| StoredChecksum {
                algorithm: algorithm.as_str().to_string(),
                value: checksum::base64(raw),
                kind: ChecksumType::FullObject.as_str().to_string(),
            });
        let now = Utc::now();
        let record = ObjectRecord {
            table_id: storage.table_id,
            key: key.as_str().to_string(),
            size: ingested.size,
            etag: hex::encode(ingested.digests.md5),
            content_type: options.attributes.content_type,
            headers: options.attributes.headers,
            user_metadata: options.attributes.user_metadata,
            checksum,
            parts_count: None,
            blobs: vec![ingested.segment()],
            created_at: now,
            modified_at: now,
        };
        self.commit_object(&record, &options.condition.to_store(), options.row_sync)
            .await?;
        object_info(record)
    }

    /// Makes `record` the current row of its key (the store queues what it replaced for deletion); on failure the
    /// record's own blobs are deleted (they were never visible).
    pub(crate) async fn commit_object(
        &self,
        record: &ObjectRecord,
        condition: &WriteCondition,
        sync: RowSync,
    ) -> Result<(), ObjectError> {
        match self.meta.put_object_synced(record, condition, sync).await {
            Ok(_queued) => Ok(()),
            Err(e) => {
                self.delete_blobs_now(record.blobs.iter().map(|s| s.key.clone()).collect())
                    .await;
                Err(e.into())
            }
        }
    }

    /// Writes a new object at `target` with the bytes of `source` (checked against `request`'s preconditions),
    /// its attributes unless `attributes` replaces them. The bytes are copied into a fresh blob, so the copy is
    /// independent of later changes to the source.
    pub async fn copy_object(
        &self,
        source: (Uuid, &ObjectKey),
        target: (&Storage, &ObjectKey),
        request: &ReadRequest,
        attributes: Option<ObjectAttributes>,
        condition: PutCondition,
        encryption: Option<RequestedEncryption>,
    ) -> Result<ObjectInfo, ObjectError> {
        let (view, stream) = self.get_object(source.0, source.1, request).await?;
        if view.partial {
            return Err(ObjectError::Invalid(
                "a copy takes whole objects".to_string(),
            ));
        }
        let algorithm = view
            .info
            .checksum
            .as_ref()
            .map_or(ChecksumAlgorithm::Crc64Nvme, |c| c.algorithm);
        let body = ObjectBody {
            stream: stream.map_err(|e| Box::new(e) as BodyError).boxed(),
            content_length: Some(view.info.size),
            content_md5: None,
            checksum: None,
        };
        let options = PutOptions {
            attributes: attributes.unwrap_or(view.info.attributes),
            checksum_algorithm: Some(algorithm),
            condition,
            encryption,
            row_sync: RowSync::Now,
        };
        self.put_object(target.0, target.1, body, options).await
    }
}
