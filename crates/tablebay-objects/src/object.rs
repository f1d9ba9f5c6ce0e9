//! What an object is to its callers: the attributes stored with it, the conditions and options of a write, and
//! the views reads and listings answer with.

use std::collections::BTreeMap;
use std::ops::Range;

use chrono::{DateTime, Utc};
use tablebay_store::meta::{ObjectRecord, RowSync, WriteCondition};

use crate::{Checksum, ChecksumAlgorithm, ObjectEncryption, ObjectError, RequestedEncryption};

/// The headers stored with an object and returned on reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectAttributes {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Cache-Control`, `Content-Disposition`, `Content-Encoding`, `Content-Language`, `Expires` (lowercase names).
    pub headers: BTreeMap<String, String>,
    /// User metadata (names without a prefix).
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
    /// Only if the current object has this ETag (`If-Match`; quotes allowed).
    IfMatch(String),
}

impl PutCondition {
    pub(crate) fn to_store(&self) -> WriteCondition {
        match self {
            Self::Always => WriteCondition::Always,
            Self::IfAbsent => WriteCondition::IfAbsent,
            Self::IfMatch(etag) => WriteCondition::IfEtag(etag.trim_matches('"').to_string()),
        }
    }
}

/// What a write asks for beyond the body.
#[derive(Clone, Debug, Default)]
pub struct PutOptions {
    /// Stored headers.
    pub attributes: ObjectAttributes,
    /// The checksum to compute and store when the body claims none; CRC64NVME if absent, as S3 does.
    pub checksum_algorithm: Option<ChecksumAlgorithm>,
    /// Conditional write.
    pub condition: PutCondition,
    /// The server-side encryption the request asks for; it must be the table's.
    pub encryption: Option<RequestedEncryption>,
    /// When the new row must be durable: at once, unless a later commit makes the object reachable.
    pub row_sync: RowSync,
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
    pub encryption: Option<ObjectEncryption>,
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
        encryption: ObjectEncryption::of_segments(&record.blobs),
    })
}

fn bad_row(value: &str) -> ObjectError {
    ObjectError::Internal(format!(
        "stored object has an unknown checksum field {value:?}"
    ))
}
