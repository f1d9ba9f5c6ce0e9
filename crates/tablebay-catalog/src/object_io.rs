//! The object service: single-request reads and writes of the files in a table's storage (put, get, head,
//! delete, delete-many, copy) and the resolution of a data-plane bucket to its table.
//!
//! Write path (DESIGN.md "Layers"): the body streams into a fresh blob (`objects::new_blob_key`) while MD5 and
//! the checksums are computed; the claimed `Content-MD5` / `x-amz-checksum-*` (header or trailer) are verified
//! *before* the blob is finished, so a mismatch leaves nothing; only then does one short transaction make the
//! object row point at the blob. Blobs the row no longer references are queued for deletion in the same
//! transaction (the meta store's `blob_deletions`), due after a grace period (readers that fetched the old row
//! may still be opening them); [`Catalog::delete_unlinked_blobs`], run periodically by the server, deletes them,
//! so a crash loses no deletion and never leaves a half-visible object.

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use tablebay_store::StoreError;
use tablebay_store::encryption::{BlobEncryption, KeyId};
use tablebay_store::meta::{BlobSegment, ObjectRecord, StoredChecksum, WriteCondition};
use uuid::Uuid;

use crate::checksum::{
    self, Checksum, ChecksumAlgorithm, ChecksumType, DigestValues, StreamHasher,
};
use crate::encryption::{self, RequestedEncryption, key_of};
use crate::objects::{TableLocation, new_blob_key};
use crate::reads::{self, ReadRequest};
use crate::{
    AccountId, BucketArn, BucketName, Catalog, Encryption, ObjectError, ObjectKey, TableArn,
};

/// Largest object a single PUT (or a copy) may write: 5 GiB, as S3.
pub const MAX_PUT_BYTES: u64 = 5 * 1024 * 1024 * 1024;

/// Queued blob deletions claimed (and then deleted concurrently) at a time.
const DELETION_BATCH: u32 = 100;

/// Blob deletions in flight at once.
const DELETION_CONCURRENCY: usize = 16;

/// A request body: a stream of chunks plus what the client claims about it.
pub type ByteStream = BoxStream<'static, Result<Bytes, crate::BodyError>>;

/// A stream of an object's bytes.
pub type ObjectStream = BoxStream<'static, Result<Bytes, ObjectError>>;

/// Where the client put the checksum value it claims for a body.
pub enum ChecksumClaim {
    /// In a request header; known before the body.
    Header(String),
    /// In a trailer after an aws-chunked body; the function reads it once the body is consumed (`None` if the
    /// client did not send it).
    Trailer(Box<dyn FnOnce() -> Option<String> + Send>),
}

impl std::fmt::Debug for ChecksumClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Header(value) => f.debug_tuple("Header").field(value).finish(),
            Self::Trailer(_) => f.write_str("Trailer"),
        }
    }
}

/// An upload body and its integrity claims.
pub struct ObjectBody {
    /// The bytes.
    pub stream: ByteStream,
    /// The declared length (`Content-Length` or `x-amz-decoded-content-length`), if known.
    pub content_length: Option<u64>,
    /// `Content-MD5` as sent (base64).
    pub content_md5: Option<String>,
    /// A flexible checksum the body must match.
    pub checksum: Option<(ChecksumAlgorithm, ChecksumClaim)>,
}

impl ObjectBody {
    /// A body of known bytes with no claims (how the server writes its own files).
    pub fn from_bytes(bytes: Bytes) -> Self {
        let len = bytes.len() as u64;
        Self {
            stream: futures::stream::once(async move { Ok(bytes) }).boxed(),
            content_length: Some(len),
            content_md5: None,
            checksum: None,
        }
    }
}

impl std::fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectBody")
            .field("content_length", &self.content_length)
            .field("content_md5", &self.content_md5)
            .field("checksum", &self.checksum)
            .finish_non_exhaustive()
    }
}

/// The headers stored with an object and returned on reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectAttributes {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Cache-Control`, `Content-Disposition`, `Content-Encoding`, `Content-Language`, `Expires` (lowercase names).
    pub headers: BTreeMap<String, String>,
    /// `x-amz-meta-*` (names without the prefix).
    pub user_metadata: BTreeMap<String, String>,
}

/// When a write may replace the object at its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PutCondition {
    /// Always.
    #[default]
    Always,
    /// Only if no object exists (`If-None-Match: *`).
    IfAbsent,
    /// Only if the current object has this ETag (`If-Match`).
    IfMatch(String),
}

impl PutCondition {
    fn to_store(&self) -> WriteCondition {
        match self {
            Self::Always => WriteCondition::Always,
            Self::IfAbsent => WriteCondition::IfAbsent,
            Self::IfMatch(etag) => WriteCondition::IfEtag(etag.trim_matches('"').to_string()),
        }
    }
}

/// What PutObject asks for beyond the body.
#[derive(Clone, Debug, Default)]
pub struct PutOptions {
    /// Stored headers.
    pub attributes: ObjectAttributes,
    /// The checksum to compute and store when the body claims none (`x-amz-checksum-algorithm`); CRC64NVME if
    /// absent, as S3 does.
    pub checksum_algorithm: Option<ChecksumAlgorithm>,
    /// Conditional write.
    pub condition: PutCondition,
    /// The server-side encryption the request asks for; it must be the table's.
    pub encryption: Option<RequestedEncryption>,
}

/// An object as clients see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Its key.
    pub key: String,
    /// Length in bytes.
    pub size: u64,
    /// ETag without quotes (`<md5>` or `<md5-of-md5s>-N`).
    pub etag: String,
    /// Stored headers.
    pub attributes: ObjectAttributes,
    /// The stored checksum.
    pub checksum: Option<Checksum>,
    /// Number of parts, for an object completed from a multipart upload.
    pub parts_count: Option<u32>,
    /// `Last-Modified`.
    pub last_modified: DateTime<Utc>,
    /// How its stored bytes are encrypted (`None` for data written before encryption at rest).
    pub encryption: Option<Encryption>,
}

/// The part of an object a read answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectView {
    /// The object.
    pub info: ObjectInfo,
    /// The bytes returned.
    pub range: Range<u64>,
    /// Whether this is a partial answer (206 with `Content-Range`).
    pub partial: bool,
}

/// A table's storage as the data plane addresses it: the bucket `<table-id>--table-s3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStorage {
    /// The table.
    pub table_id: Uuid,
    /// The table's ARN (owning account, bucket name, table id): what authorization checks.
    pub arn: TableArn,
}

impl TableStorage {
    /// The account owning the table.
    pub fn owner(&self) -> &AccountId {
        &self.arn.bucket.account
    }
}

/// Where the body streamed to and what it hashed to.
pub(crate) struct Ingested {
    pub blob_key: String,
    pub size: u64,
    pub digests: DigestValues,
    pub encryption: Option<BlobEncryption>,
}

impl Ingested {
    /// The blob as an object's segment.
    pub(crate) fn segment(&self) -> BlobSegment {
        BlobSegment {
            key: self.blob_key.clone(),
            size: self.size,
            encryption: self.encryption.clone(),
        }
    }
}

impl Catalog {
    /// Resolves a data-plane bucket name to its table; `NoSuchBucket` unless it is `<table-id>--table-s3` of an
    /// existing table.
    pub async fn table_storage(&self, bucket: &str) -> Result<TableStorage, ObjectError> {
        let table_id = TableLocation::table_of_bucket(bucket).ok_or(ObjectError::NoSuchBucket)?;
        let (account, bucket_name) = self
            .meta
            .table_owner(table_id)
            .await?
            .ok_or(ObjectError::NoSuchBucket)?;
        let arn = TableArn {
            bucket: BucketArn {
                flavor: self.config.flavor,
                region: self.config.region.clone(),
                account: AccountId::parse(&account)?,
                name: BucketName::parse(&bucket_name)?,
            },
            table_id,
        };
        Ok(TableStorage { table_id, arn })
    }

    /// PutObject: streams `body` into the table's storage at `key`, verifies it, and makes it visible atomically.
    pub async fn put_object(
        &self,
        table: &TableStorage,
        key: &ObjectKey,
        body: ObjectBody,
        options: PutOptions,
    ) -> Result<ObjectInfo, ObjectError> {
        self.put_object_row(table.table_id, key, body, options)
            .await
    }

    /// [`Catalog::put_object`] by table id (the server's own writes skip the bucket resolution).
    pub(crate) async fn put_object_row(
        &self,
        table_id: Uuid,
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
                table_id,
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
            table_id,
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
        self.commit_object(&record, &options.condition.to_store())
            .await?;
        object_info(record)
    }

    /// Makes `record` the current row of its key (the store queues what it replaced for deletion); on failure the
    /// record's own blobs are deleted (they were never visible).
    pub(crate) async fn commit_object(
        &self,
        record: &ObjectRecord,
        condition: &WriteCondition,
    ) -> Result<(), ObjectError> {
        match self.meta.put_object(record, condition).await {
            Ok(_queued) => Ok(()),
            Err(e) => {
                self.delete_blobs_now(record.blobs.iter().map(|s| s.key.clone()).collect())
                    .await;
                Err(e.into())
            }
        }
    }

    /// HeadObject: the object and the range a GET with the same headers would return.
    pub async fn head_object(
        &self,
        table: &TableStorage,
        key: &ObjectKey,
        request: &ReadRequest,
    ) -> Result<ObjectView, ObjectError> {
        let record = self
            .meta
            .object(table.table_id, key.as_str())
            .await?
            .ok_or(ObjectError::NoSuchKey)?;
        view(record, request).map(|(view, _)| view)
    }

    /// GetObject: the object, the range answered, and a stream of those bytes (across part boundaries for
    /// multipart objects, which are stored as their parts' blobs).
    pub async fn get_object(
        &self,
        table: &TableStorage,
        key: &ObjectKey,
        request: &ReadRequest,
    ) -> Result<(ObjectView, ObjectStream), ObjectError> {
        let record = self
            .meta
            .object(table.table_id, key.as_str())
            .await?
            .ok_or(ObjectError::NoSuchKey)?;
        let (view, segments) = view(record, request)?;
        let mut stream = self.read_segments(segments, view.range.clone());
        // Read the first bytes before answering, so that a missing key or a damaged first chunk is an error
        // answer, not a response cut short after its headers.
        let first = match stream.next().await {
            Some(first) => Some(first?),
            None => None,
        };
        let stream = futures::stream::iter(first.map(Ok)).chain(stream).boxed();
        Ok((view, stream))
    }

    /// The bytes `range` of an object stored as `segments`, read lazily segment by segment.
    pub(crate) fn read_segments(
        &self,
        segments: Vec<BlobSegment>,
        range: Range<u64>,
    ) -> ObjectStream {
        let blobs = self.blobs.clone();
        let keys = self.keys.clone();
        futures::stream::iter(reads::pieces(&segments, range))
            .then(move |(segment, range)| {
                let (blobs, keys) = (blobs.clone(), keys.clone());
                async move {
                    match &segment.encryption {
                        None => blobs.read(&segment.key, range).await,
                        Some(encryption) => {
                            blobs
                                .read_sealed(
                                    &segment.key,
                                    encryption,
                                    keys.as_ref(),
                                    segment.size,
                                    range,
                                )
                                .await
                        }
                    }
                }
            })
            .try_flatten()
            .map_err(ObjectError::from)
            .boxed()
    }

    /// DeleteObject: removes the object at `key` if there is one (deleting a missing key is not an error).
    pub async fn delete_object(
        &self,
        table: &TableStorage,
        key: &ObjectKey,
    ) -> Result<(), ObjectError> {
        self.delete_object_row(table.table_id, key).await
    }

    /// [`Catalog::delete_object`] by table id.
    pub(crate) async fn delete_object_row(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
    ) -> Result<(), ObjectError> {
        // The store queues the object's blobs for deletion with the row's removal.
        self.meta.delete_object(table_id, key.as_str()).await?;
        Ok(())
    }

    /// DeleteObjects: deletes the keys in one transaction, reporting each outcome (a malformed key fails alone;
    /// a missing key is deleted, as in S3).
    pub async fn delete_objects(
        &self,
        table: &TableStorage,
        keys: &[String],
    ) -> Vec<(String, Result<(), ObjectError>)> {
        let mut outcomes = Vec::with_capacity(keys.len());
        let mut valid = Vec::with_capacity(keys.len());
        for key in keys {
            match ObjectKey::parse(key) {
                Ok(_) => valid.push(key.as_str()),
                Err(e) => outcomes.push((key.clone(), Err(e))),
            }
        }
        match self.meta.delete_objects(table.table_id, &valid).await {
            // The store queues the deleted objects' blobs for deletion in the same transaction.
            Ok(_deleted) => {
                outcomes.extend(valid.iter().map(|key| (key.to_string(), Ok(()))));
            }
            Err(e) => {
                let e = ObjectError::from(e);
                tracing::warn!(error = %e, "DeleteObjects failed");
                let message = e.to_string();
                outcomes.extend(
                    valid
                        .iter()
                        .map(|key| (key.to_string(), Err(ObjectError::Internal(message.clone())))),
                );
            }
        }
        outcomes
    }

    /// CopyObject: writes a new object at `target` with the bytes of `source` (checked against `request`'s
    /// preconditions), its attributes unless `attributes` replaces them. The bytes are copied into a fresh blob,
    /// so the copy is independent of later changes to the source.
    pub async fn copy_object(
        &self,
        source: (&TableStorage, &ObjectKey),
        target: (&TableStorage, &ObjectKey),
        request: &ReadRequest,
        attributes: Option<ObjectAttributes>,
        condition: PutCondition,
        encryption: Option<RequestedEncryption>,
    ) -> Result<ObjectInfo, ObjectError> {
        let (view, stream) = self.get_object(source.0, source.1, request).await?;
        if view.partial {
            return Err(ObjectError::Invalid(
                "CopyObject copies whole objects".to_string(),
            ));
        }
        let algorithm = view
            .info
            .checksum
            .as_ref()
            .map_or(ChecksumAlgorithm::Crc64Nvme, |c| c.algorithm);
        let body = ObjectBody {
            stream: stream.map_err(|e| Box::new(e) as crate::BodyError).boxed(),
            content_length: Some(view.info.size),
            content_md5: None,
            checksum: None,
        };
        let options = PutOptions {
            attributes: attributes.unwrap_or(view.info.attributes),
            checksum_algorithm: Some(algorithm),
            condition,
            encryption,
        };
        self.put_object(target.0, target.1, body, options).await
    }

    /// Streams `body` into a fresh blob of the table, encrypted as the table's setting says, hashing MD5 and
    /// `algorithms` (plus a claimed algorithm) of the plaintext on the way; verifies the claims and the length
    /// before finishing the blob, so a rejected body leaves nothing behind. `EntityTooLarge` past `max_size`
    /// bytes; `Invalid` when the request asks for another encryption than the table's.
    pub(crate) async fn ingest(
        &self,
        table_id: Uuid,
        body: ObjectBody,
        max_size: u64,
        algorithms: &[ChecksumAlgorithm],
        requested: Option<&RequestedEncryption>,
    ) -> Result<Ingested, ObjectError> {
        let encryption = self.data_encryption(table_id).await?;
        if let Some(requested) = requested {
            requested.check(&encryption)?;
        }
        if body.content_length.is_some_and(|len| len > max_size) {
            return Err(ObjectError::EntityTooLarge(max_size));
        }
        let content_md5 = body
            .content_md5
            .as_deref()
            .map(checksum::decode_content_md5)
            .transpose()?;
        let mut algorithms = algorithms.to_vec();
        if let Some((algorithm, claim)) = &body.checksum {
            if let ChecksumClaim::Header(value) = claim
                && algorithm.decode(value).is_none()
            {
                return Err(ObjectError::Invalid(format!(
                    "Value for {} header is invalid.",
                    algorithm.header_name()
                )));
            }
            algorithms.push(*algorithm);
        }
        let blob_key = new_blob_key(table_id);
        let mut writer = if cfg!(feature = "unencrypted-bench") {
            self.blobs.writer(&blob_key)
        } else {
            let key = key_of(&encryption);
            self.blobs
                .sealed_writer(&blob_key, self.keys.as_ref(), &key)
                .await
                .map_err(|e| match (e, &key) {
                    // Wrapping fails only for a key this server does not hold.
                    (StoreError::Key(message), KeyId::Kms(_)) => {
                        ObjectError::KmsKeyNotFound(message)
                    }
                    (other, _) => other.into(),
                })?
        };
        let blob_encryption = writer.encryption().cloned();
        let mut hasher = StreamHasher::new(&algorithms);
        let mut stream = body.stream;
        let mut size = 0u64;
        let streamed: Result<(), ObjectError> = async {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(ObjectError::Body)?;
                size += chunk.len() as u64;
                if size > max_size {
                    return Err(ObjectError::EntityTooLarge(max_size));
                }
                hasher.update(&chunk).await?;
                writer.write(chunk).await?;
            }
            Ok(())
        }
        .await;
        drop(stream);
        let verified = match streamed {
            Ok(()) => {
                verify(
                    hasher,
                    size,
                    body.content_length,
                    content_md5,
                    body.checksum,
                )
                .await
            }
            Err(e) => Err(e),
        };
        match verified {
            Ok(digests) => {
                writer.finish().await?;
                Ok(Ingested {
                    blob_key,
                    size,
                    digests,
                    encryption: blob_encryption,
                })
            }
            Err(e) => {
                writer.abort().await;
                Err(e)
            }
        }
    }

    /// Deletes the queued blobs that are due (unlinked by an overwrite, a delete or an abort whose grace period is
    /// over, or left queued by a crash), batch by batch until none is due; returns how many. A blob that cannot be
    /// deleted stays queued and is retried later, backing off. Safe to run on several instances at once: a claim
    /// leases its rows.
    pub async fn delete_unlinked_blobs(&self) -> Result<usize, ObjectError> {
        let mut deleted = 0;
        loop {
            let now = Utc::now();
            let batch = self.meta.claim_blob_deletions(now, DELETION_BATCH).await?;
            if batch.is_empty() {
                return Ok(deleted);
            }
            let claimed = batch.len();
            // Owned items and a cloned store handle: the future stays `'static`-friendly for `tokio::spawn`.
            let outcomes: Vec<_> = futures::stream::iter(batch)
                .map(|item| {
                    let blobs = self.blobs.clone();
                    async move {
                        let outcome = blobs.delete(&item.blob_key).await;
                        (item, outcome)
                    }
                })
                .buffer_unordered(DELETION_CONCURRENCY)
                .collect()
                .await;
            let mut done: Vec<String> = Vec::with_capacity(claimed);
            for (item, outcome) in outcomes {
                match outcome {
                    Ok(()) => done.push(item.blob_key),
                    Err(e) => {
                        let wait = retry_delay(item.attempts);
                        tracing::warn!(error = %e, blob = %item.blob_key, attempts = item.attempts,
                            retry_in_secs = wait.num_seconds(), "could not delete an unlinked blob");
                        self.meta
                            .retry_blob_deletion(&item.blob_key, now + wait)
                            .await?;
                    }
                }
            }
            let done: Vec<&str> = done.iter().map(String::as_str).collect();
            self.meta.finish_blob_deletions(&done).await?;
            deleted += done.len();
            if done.is_empty() {
                // Every one failed (the blob store is down): the next pass is the periodic one.
                return Ok(deleted);
            }
        }
    }

    /// Deletes blobs no row references (never visible, or unlinked); failures are logged and left to
    /// unreferenced-file removal.
    pub(crate) async fn delete_blobs_now(&self, keys: Vec<String>) {
        for key in keys {
            if let Err(e) = self.blobs.delete(&key).await {
                tracing::warn!(error = %e, blob = %key, "could not delete an unreferenced blob");
            }
        }
    }
}

/// How long a blob deletion that failed `attempts` times waits before the next try: 2, 4, 8 … seconds, at most an
/// hour.
fn retry_delay(attempts: u32) -> chrono::Duration {
    chrono::Duration::seconds(1_i64 << attempts.clamp(1, 12)).min(chrono::Duration::hours(1))
}

/// Finishes the hashes and checks the body against its declared length and claimed digests.
async fn verify(
    hasher: StreamHasher,
    size: u64,
    declared: Option<u64>,
    content_md5: Option<[u8; 16]>,
    claim: Option<(ChecksumAlgorithm, ChecksumClaim)>,
) -> Result<DigestValues, ObjectError> {
    let digests = hasher.finish().await?;
    if declared.is_some_and(|len| len != size) {
        return Err(ObjectError::IncompleteBody);
    }
    if content_md5.is_some_and(|md5| md5 != digests.md5) {
        return Err(ObjectError::BadDigest);
    }
    if let Some((algorithm, claim)) = claim {
        let value = match claim {
            ChecksumClaim::Header(value) => value,
            ChecksumClaim::Trailer(read) => read().ok_or_else(|| {
                ObjectError::Invalid(format!(
                    "The {} trailer was declared but not sent",
                    algorithm.header_name()
                ))
            })?,
        };
        let claimed = algorithm.decode(&value).ok_or_else(|| {
            ObjectError::Invalid(format!("Value for {} is invalid.", algorithm.header_name()))
        })?;
        if digests.checksum(algorithm) != Some(claimed.as_slice()) {
            return Err(ObjectError::ChecksumMismatch(algorithm));
        }
    }
    Ok(digests)
}

/// The view `request` asks of `record`, and the record's segments to read it from.
fn view(
    record: ObjectRecord,
    request: &ReadRequest,
) -> Result<(ObjectView, Vec<BlobSegment>), ObjectError> {
    request
        .preconditions
        .check(&record.etag, record.modified_at)?;
    let (range, partial) = reads::select(request, &record.blobs, record.size, record.parts_count)?;
    let segments = record.blobs.clone();
    Ok((
        ObjectView {
            info: object_info(record)?,
            range,
            partial,
        },
        segments,
    ))
}

/// The client-facing view of a stored object.
pub(crate) fn object_info(record: ObjectRecord) -> Result<ObjectInfo, ObjectError> {
    let checksum = match record.checksum {
        None => None,
        Some(stored) => Some(Checksum {
            algorithm: stored
                .algorithm
                .parse()
                .map_err(|_| bad_row(&stored.algorithm))?,
            kind: stored.kind.parse().map_err(|_| bad_row(&stored.kind))?,
            value: stored.value,
        }),
    };
    Ok(ObjectInfo {
        key: record.key,
        size: record.size,
        etag: record.etag,
        attributes: ObjectAttributes {
            content_type: record.content_type,
            headers: record.headers,
            user_metadata: record.user_metadata,
        },
        checksum,
        parts_count: record.parts_count,
        last_modified: record.modified_at,
        encryption: encryption::of_segments(&record.blobs),
    })
}

fn bad_row(value: &str) -> ObjectError {
    ObjectError::Internal(format!(
        "stored object has an unknown checksum field {value:?}"
    ))
}
