//! Multipart uploads: create, upload part (numbers 1–10000 in any order, a re-upload replaces the part), complete
//! (validates the part list, derives the ETag and checksum, and publishes the object atomically), abort, list
//! parts, list uploads, and the expiry of abandoned uploads.
//!
//! Each part is its own blob, verified before its row commits. A completed object keeps its parts' blobs as its
//! segments in order, so completion copies no bytes and a ranged GET reads across part boundaries.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tablebay_store::StoreError;
use tablebay_store::meta::{BlobSegment, ObjectRecord, PartRecord, StoredChecksum, UploadRecord};
use uuid::Uuid;

use crate::checksum::{self, Checksum, ChecksumAlgorithm, ChecksumType};
use crate::listing::prefix_end;
use crate::object::object_info;
use crate::{
    ObjectAttributes, ObjectBody, ObjectEncryption, ObjectError, ObjectInfo, ObjectKey, Objects,
    PutCondition, RequestedEncryption, Storage,
};

/// Largest part: 5 GiB.
pub const MAX_PART_BYTES: u64 = 5 * 1024 * 1024 * 1024;
/// Smallest part other than the last: 5 MiB.
pub const MIN_PART_BYTES: u64 = 5 * 1024 * 1024;
/// Highest part number.
pub const MAX_PART_NUMBER: u32 = 10_000;
/// Largest object a multipart upload may produce: 5 TiB.
pub const MAX_OBJECT_BYTES: u64 = 5 * 1024 * 1024 * 1024 * 1024;
/// Most parts or uploads one listing page returns.
pub const MAX_LIST_PARTS: u32 = 1000;

/// A multipart upload in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upload {
    /// The upload id.
    pub upload_id: String,
    /// The key of the object to be.
    pub key: String,
    /// The checksum algorithm and type chosen at creation.
    pub checksum: Option<(ChecksumAlgorithm, ChecksumType)>,
    /// Who started it.
    pub initiator: String,
    /// When.
    pub initiated_at: DateTime<Utc>,
    /// The encryption its parts get (the table's), in the answer of `create_upload` only.
    pub encryption: Option<ObjectEncryption>,
}

/// An uploaded part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its number.
    pub part_number: u32,
    /// Its size.
    pub size: u64,
    /// Its ETag (MD5 hex, no quotes).
    pub etag: String,
    /// Its checksum, when one was computed.
    pub checksum: Option<Checksum>,
    /// When it was uploaded.
    pub last_modified: DateTime<Utc>,
    /// How its stored bytes are encrypted (an upload's answer reports it, as S3's does).
    pub encryption: Option<ObjectEncryption>,
}

/// A part as a completion lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedPart {
    /// Its number.
    pub part_number: u32,
    /// The ETag the client got for it (quotes allowed).
    pub etag: String,
    /// The checksum the client got for it, if it lists one (base64).
    pub checksum: Option<(ChecksumAlgorithm, String)>,
}

/// What a completion asks for.
#[derive(Clone, Debug, Default)]
pub struct CompleteRequest {
    /// The parts, in ascending order.
    pub parts: Vec<CompletedPart>,
    /// A whole-object checksum the client claims with the completion.
    pub checksum: Option<(ChecksumAlgorithm, String)>,
    /// Conditional write.
    pub condition: PutCondition,
}

/// A page of parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartListing {
    /// The upload.
    pub upload: Option<Upload>,
    /// Parts in order.
    pub parts: Vec<Part>,
    /// Whether more follow.
    pub truncated: bool,
    /// The last part number returned, when truncated.
    pub next_marker: Option<u32>,
}

/// A page of uploads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UploadListing {
    /// Uploads by key, then id.
    pub uploads: Vec<Upload>,
    /// Whether more follow.
    pub truncated: bool,
    /// Where the next page starts (key, upload id), when truncated.
    pub next_marker: Option<(String, String)>,
}

/// An upload listing request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UploadListRequest {
    /// Only keys starting with this.
    pub prefix: String,
    /// `key-marker`.
    pub key_marker: Option<String>,
    /// `upload-id-marker` (only with a key marker).
    pub upload_id_marker: Option<String>,
    /// Page size.
    pub max_uploads: u32,
}

impl Objects {
    /// Starts an upload of `key` and returns it with its id.
    pub async fn create_upload(
        &self,
        storage: &Storage,
        key: &ObjectKey,
        attributes: ObjectAttributes,
        checksum: Option<(ChecksumAlgorithm, Option<ChecksumType>)>,
        encryption: Option<RequestedEncryption>,
        initiator: &str,
    ) -> Result<Upload, ObjectError> {
        if let Some(requested) = &encryption {
            requested.check(&storage.encryption)?;
        }
        let checksum = match checksum {
            None => None,
            Some((algorithm, kind)) => {
                // S3's defaults: CRC64NVME is whole-object, the others composite.
                let kind = kind.unwrap_or(if algorithm == ChecksumAlgorithm::Crc64Nvme {
                    ChecksumType::FullObject
                } else {
                    ChecksumType::Composite
                });
                let supported = match kind {
                    ChecksumType::FullObject => algorithm.supports_full_object(),
                    ChecksumType::Composite => algorithm != ChecksumAlgorithm::Crc64Nvme,
                };
                if !supported {
                    return Err(ObjectError::UnsupportedChecksumType { algorithm, kind });
                }
                Some((algorithm, kind))
            }
        };
        let record = UploadRecord {
            upload_id: Uuid::new_v4().simple().to_string(),
            table_id: storage.table_id,
            key: key.as_str().to_string(),
            content_type: attributes.content_type,
            headers: attributes.headers,
            user_metadata: attributes.user_metadata,
            checksum_algorithm: checksum.map(|(a, _)| a.as_str().to_string()),
            checksum_type: checksum.map(|(_, t)| t.as_str().to_string()),
            initiator: initiator.to_string(),
            initiated_at: Utc::now(),
        };
        self.meta.insert_upload(&record).await?;
        Ok(Upload {
            encryption: Some(storage.encryption.clone()),
            ..upload_from_record(record)?
        })
    }

    /// The upload `upload_id` of `key` in this table; `UploadNotFound` if it is gone or belongs elsewhere.
    async fn upload_of(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        upload_id: &str,
    ) -> Result<UploadRecord, ObjectError> {
        match self.meta.upload(upload_id).await? {
            Some(upload) if upload.table_id == table_id && upload.key == key.as_str() => Ok(upload),
            _ => Err(ObjectError::UploadNotFound),
        }
    }

    /// Stores one part (replacing an earlier upload of the same number) and returns it.
    pub async fn upload_part(
        &self,
        storage: &Storage,
        key: &ObjectKey,
        upload_id: &str,
        part_number: u32,
        body: ObjectBody,
    ) -> Result<Part, ObjectError> {
        if !(1..=MAX_PART_NUMBER).contains(&part_number) {
            return Err(ObjectError::Invalid(format!(
                "Part number must be an integer between 1 and {MAX_PART_NUMBER}, inclusive"
            )));
        }
        let upload = self.upload_of(storage.table_id, key, upload_id).await?;
        let upload_algorithm = upload
            .checksum_algorithm
            .as_deref()
            .map(str::parse::<ChecksumAlgorithm>)
            .transpose()?;
        let claimed = body.checksum.as_ref().map(|(algorithm, _)| *algorithm);
        if let (Some(expected), Some(got)) = (upload_algorithm, claimed)
            && expected != got
        {
            return Err(ObjectError::ChecksumAlgorithmMismatch { expected, got });
        }
        let algorithm = upload_algorithm.or(claimed);
        let algorithms: Vec<ChecksumAlgorithm> = algorithm.into_iter().collect();
        let ingested = self
            .ingest(storage, body, MAX_PART_BYTES, &algorithms, None)
            .await?;
        let checksum_value = algorithm
            .and_then(|a| ingested.digests.checksum(a))
            .map(checksum::base64);
        let record = PartRecord {
            upload_id: upload_id.to_string(),
            part_number,
            size: ingested.size,
            etag: hex::encode(ingested.digests.md5),
            checksum_algorithm: algorithm.map(|a| a.as_str().to_string()),
            checksum_value,
            blob_key: ingested.blob_key,
            uploaded_at: Utc::now(),
            encryption: ingested.encryption,
        };
        match self.meta.put_part(&record).await {
            // A replaced part's blob is queued for deletion by the store.
            Ok(_replaced) => {}
            Err(e) => {
                self.delete_blobs_now(vec![record.blob_key.clone()]).await;
                return Err(match e {
                    StoreError::NotFound => ObjectError::UploadNotFound,
                    other => other.into(),
                });
            }
        }
        part_from_record(record)
    }

    /// Checks the listed parts (ascending, uploaded, matching ETags and checksums, all but the last at least
    /// 5 MiB), derives the object's ETag and checksum, and publishes the object while removing the upload, in one
    /// transaction. Unlisted parts are deleted.
    pub async fn complete_upload(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        upload_id: &str,
        request: CompleteRequest,
    ) -> Result<ObjectInfo, ObjectError> {
        if request.parts.is_empty() {
            return Err(ObjectError::NoParts);
        }
        if request
            .parts
            .windows(2)
            .any(|w| matches!(w, [a, b] if a.part_number >= b.part_number))
        {
            return Err(ObjectError::PartsOutOfOrder);
        }
        let upload = self.upload_of(table_id, key, upload_id).await?;
        let stored = self
            .meta
            .list_parts(upload_id, 0, MAX_PART_NUMBER + 1)
            .await?;
        let mut chosen = Vec::with_capacity(request.parts.len());
        let last_index = request.parts.len() - 1;
        for listed in &request.parts {
            let invalid = || ObjectError::PartMismatch(listed.part_number);
            let part = stored
                .iter()
                .find(|p| p.part_number == listed.part_number)
                .ok_or_else(invalid)?;
            if listed.etag.trim().trim_matches('"') != part.etag {
                return Err(invalid());
            }
            if let Some((algorithm, value)) = &listed.checksum
                && (part.checksum_algorithm.as_deref() != Some(algorithm.as_str())
                    || part.checksum_value.as_deref() != Some(value.trim()))
            {
                return Err(invalid());
            }
            chosen.push(part);
        }
        // Sizes only once every listed part is known to exist, as S3 reports a part mismatch first.
        if chosen
            .iter()
            .take(last_index)
            .any(|part| part.size < MIN_PART_BYTES)
        {
            return Err(ObjectError::PartTooSmall);
        }
        let size: u64 = chosen.iter().map(|p| p.size).sum();
        if size > MAX_OBJECT_BYTES {
            return Err(ObjectError::TooLarge(MAX_OBJECT_BYTES));
        }
        let etag = checksum::multipart_etag(chosen.iter().map(|p| p.etag.as_str()))
            .ok_or_else(|| ObjectError::Internal("a stored part ETag is not an MD5".to_string()))?;
        let checksum = object_checksum(&upload, &chosen, request.checksum.as_ref())?;
        let now = Utc::now();
        let record = ObjectRecord {
            table_id,
            key: key.as_str().to_string(),
            size,
            etag,
            content_type: upload.content_type,
            headers: upload.headers,
            user_metadata: upload.user_metadata,
            checksum,
            parts_count: u32::try_from(chosen.len()).ok(),
            blobs: chosen
                .iter()
                .map(|p| BlobSegment {
                    key: p.blob_key.clone(),
                    size: p.size,
                    encryption: p.encryption.clone(),
                })
                .collect(),
            created_at: now,
            modified_at: now,
        };
        let expected: Vec<(u32, String)> = chosen
            .iter()
            .map(|p| (p.part_number, p.blob_key.clone()))
            .collect();
        let condition = request.condition.to_store();
        let completed = self
            .meta
            .complete_upload(upload_id, &expected, &record, &condition)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => ObjectError::UploadNotFound,
                other => other.into(),
            })?;
        // The store queued the replaced object's blobs (after the grace period) and the unused parts (due now,
        // deleted here at once; the queue row is the backstop).
        self.delete_blobs_now(completed.unused_parts).await;
        object_info(record)
    }

    /// Deletes the upload and its parts.
    pub async fn abort_upload(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        upload_id: &str,
    ) -> Result<(), ObjectError> {
        self.upload_of(table_id, key, upload_id).await?;
        // The store queues the parts' blobs for deletion after the grace period (a part upload racing the abort
        // may still be reading its blob's row), in the transaction that removes them: a crash loses none.
        self.meta
            .abort_upload(upload_id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => ObjectError::UploadNotFound,
                other => other.into(),
            })?;
        Ok(())
    }

    /// Up to `max_parts` parts of the upload after part `marker`.
    pub async fn list_parts(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        upload_id: &str,
        marker: u32,
        max_parts: u32,
    ) -> Result<PartListing, ObjectError> {
        let upload = self.upload_of(table_id, key, upload_id).await?;
        let max = max_parts.min(MAX_LIST_PARTS);
        let mut records = self.meta.list_parts(upload_id, marker, max + 1).await?;
        let truncated = records.len() > max as usize;
        records.truncate(max as usize);
        let parts = records
            .into_iter()
            .map(part_from_record)
            .collect::<Result<Vec<_>, _>>()?;
        let next_marker = if truncated {
            parts.last().map(|p| p.part_number)
        } else {
            None
        };
        Ok(PartListing {
            upload: Some(upload_from_record(upload)?),
            parts,
            truncated,
            next_marker,
        })
    }

    /// Uploads in progress in the table, by key then upload id.
    pub async fn list_uploads(
        &self,
        table_id: Uuid,
        request: &UploadListRequest,
    ) -> Result<UploadListing, ObjectError> {
        let max = request.max_uploads.min(MAX_LIST_PARTS);
        let prefix = (!request.prefix.is_empty()).then_some(request.prefix.as_str());
        let end = prefix.and_then(prefix_end);
        let marker = request
            .key_marker
            .as_deref()
            .map(|key| (key, request.upload_id_marker.as_deref()));
        let mut records = self
            .meta
            .list_uploads(table_id, prefix, end.as_deref(), marker, max + 1)
            .await?;
        let truncated = records.len() > max as usize;
        records.truncate(max as usize);
        let uploads = records
            .into_iter()
            .map(upload_from_record)
            .collect::<Result<Vec<_>, _>>()?;
        let next_marker = if truncated {
            uploads.last().map(|u| (u.key.clone(), u.upload_id.clone()))
        } else {
            None
        };
        Ok(UploadListing {
            uploads,
            truncated,
            next_marker,
        })
    }

    /// Aborts every upload started more than `max_age` ago; returns how many. Run periodically by the server.
    pub async fn expire_uploads(&self, max_age: Duration) -> Result<usize, ObjectError> {
        let age = chrono::Duration::from_std(max_age)
            .map_err(|e| ObjectError::Internal(e.to_string()))?;
        let cutoff = Utc::now() - age;
        let mut expired = 0;
        loop {
            let ids = self.meta.uploads_started_before(cutoff, 100).await?;
            if ids.is_empty() {
                return Ok(expired);
            }
            // The abort queues the parts' blobs for deletion.
            let (aborted, _queued) = self.abort_uploads(ids).await?;
            expired += aborted;
        }
    }

    /// Aborts the table's uploads started before `cutoff` (abandoned, as maintenance judges them) and deletes
    /// their parts' blobs at once; returns how many.
    pub async fn abort_stale_uploads(
        &self,
        table_id: Uuid,
        cutoff: DateTime<Utc>,
    ) -> Result<u64, ObjectError> {
        let mut aborted = 0;
        loop {
            let ids = self
                .meta
                .table_uploads_started_before(table_id, cutoff, 100)
                .await?;
            if ids.is_empty() {
                return Ok(aborted);
            }
            let (count, blobs) = self.abort_uploads(ids).await?;
            self.delete_blobs_now(blobs).await;
            aborted += count as u64;
        }
    }

    /// Aborts the uploads `ids`, skipping those completed or aborted meanwhile; returns how many it aborted and
    /// the blobs of their parts (queued for deletion by the store).
    async fn abort_uploads(&self, ids: Vec<String>) -> Result<(usize, Vec<String>), ObjectError> {
        let mut aborted = 0;
        let mut blobs = Vec::new();
        for id in ids {
            match self.meta.abort_upload(&id).await {
                Ok(queued) => {
                    aborted += 1;
                    blobs.extend(queued);
                }
                // Completed or aborted meanwhile.
                Err(StoreError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok((aborted, blobs))
    }
}

/// The checksum of a completed object: the upload's algorithm over the chosen parts (composite or combined
/// whole-object), checked against a whole-object value the client claims.
fn object_checksum(
    upload: &UploadRecord,
    parts: &[&PartRecord],
    claimed: Option<&(ChecksumAlgorithm, String)>,
) -> Result<Option<StoredChecksum>, ObjectError> {
    let Some(algorithm) = upload
        .checksum_algorithm
        .as_deref()
        .map(str::parse::<ChecksumAlgorithm>)
        .transpose()?
    else {
        return Ok(None);
    };
    let kind = upload
        .checksum_type
        .as_deref()
        .map(str::parse::<ChecksumType>)
        .transpose()?
        .unwrap_or(ChecksumType::Composite);
    let raw: Vec<(Vec<u8>, u64)> = parts
        .iter()
        .map(|p| {
            p.checksum_value
                .as_deref()
                .filter(|_| p.checksum_algorithm.as_deref() == Some(algorithm.as_str()))
                .and_then(|v| algorithm.decode(v))
                .map(|raw| (raw, p.size))
                .ok_or(ObjectError::PartWithoutChecksum {
                    part_number: p.part_number,
                    algorithm,
                })
        })
        .collect::<Result<_, _>>()?;
    let value = match kind {
        ChecksumType::Composite => checksum::composite_checksum(
            algorithm,
            &raw.into_iter().map(|(raw, _)| raw).collect::<Vec<_>>(),
        ),
        ChecksumType::FullObject => {
            let combined = checksum::combined_crc(algorithm, &raw).ok_or_else(|| {
                ObjectError::Internal(format!("cannot combine {algorithm} checksums"))
            })?;
            checksum::base64(&combined)
        }
    };
    if let Some((claimed_algorithm, claimed_value)) = claimed {
        let matches = *claimed_algorithm == algorithm
            && claimed_value.trim().split('-').next() == value.split('-').next();
        if !matches {
            return Err(ObjectError::ChecksumMismatch(*claimed_algorithm));
        }
    }
    Ok(Some(StoredChecksum {
        algorithm: algorithm.as_str().to_string(),
        value,
        kind: kind.as_str().to_string(),
    }))
}

fn upload_from_record(record: UploadRecord) -> Result<Upload, ObjectError> {
    let algorithm = record
        .checksum_algorithm
        .as_deref()
        .map(str::parse::<ChecksumAlgorithm>)
        .transpose()?;
    let kind = record
        .checksum_type
        .as_deref()
        .map(str::parse::<ChecksumType>)
        .transpose()?;
    Ok(Upload {
        upload_id: record.upload_id,
        key: record.key,
        checksum: algorithm.map(|a| (a, kind.unwrap_or(ChecksumType::Composite))),
        initiator: record.initiator,
        initiated_at: record.initiated_at,
        encryption: None,
    })
}

fn part_from_record(record: PartRecord) -> Result<Part, ObjectError> {
    let checksum = match (record.checksum_algorithm.as_deref(), record.checksum_value) {
        (Some(algorithm), Some(value)) => Some(Checksum {
            algorithm: algorithm.parse()?,
            value,
            kind: ChecksumType::FullObject,
        }),
        _ => None,
    };
    Ok(Part {
        part_number: record.part_number,
        size: record.size,
        etag: record.etag,
        checksum,
        last_modified: record.uploaded_at,
        encryption: record.encryption.as_ref().map(ObjectEncryption::of_blob),
    })
}
