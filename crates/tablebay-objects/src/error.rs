//! The object service's error type: one variant per outcome a caller acts on, named for what happened. The
//! surfaces give each its wire form (the S3 surface its code and message in `tablebay-http`'s `s3/error.rs`); the
//! catalog maps the few it meets when it writes a table's own files.

use tablebay_store::StoreError;

use crate::{ChecksumAlgorithm, ChecksumType, ObjectEncryption, RequestedEncryption};

/// A boxed error from a request body stream (a client disconnect, a bad chunk signature, …).
pub type BodyError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong in an object operation.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// No object has the key.
    #[error("no object has this key")]
    ObjectNotFound,
    /// The multipart upload does not exist (never did, or was completed, aborted or expired), or belongs to
    /// another key or table.
    #[error("the multipart upload does not exist")]
    UploadNotFound,
    /// An argument is malformed or out of range (a key, a part number, a limit, a stored name).
    #[error("{0}")]
    Invalid(String),
    /// A checksum value claimed before the body is not base64 of the algorithm's digest length.
    #[error("the claimed {0} value is not a {0} checksum")]
    MalformedChecksum(ChecksumAlgorithm),
    /// A checksum value sent in a trailer is not base64 of the algorithm's digest length.
    #[error("the {0} trailer's value is not a {0} checksum")]
    MalformedChecksumTrailer(ChecksumAlgorithm),
    /// A checksum trailer was announced but the body ended without it.
    #[error("the {0} checksum trailer was announced but not sent")]
    MissingChecksumTrailer(ChecksumAlgorithm),
    /// A part's checksum algorithm is not the one its upload was created with.
    #[error("the upload's checksum algorithm is {expected}, the part's {got}")]
    ChecksumAlgorithmMismatch {
        /// The upload's algorithm.
        expected: ChecksumAlgorithm,
        /// The part's.
        got: ChecksumAlgorithm,
    },
    /// The checksum type cannot be computed with the algorithm (a whole-object SHA, a composite CRC64NVME).
    #[error("a {kind:?} checksum cannot be computed with {algorithm}")]
    UnsupportedChecksumType {
        /// The algorithm.
        algorithm: ChecksumAlgorithm,
        /// The type asked for.
        kind: ChecksumType,
    },
    /// A read asks for both a byte range and a part.
    #[error("a read may select a byte range or a part, not both")]
    RangeAndPart,
    /// The range does not overlap the object (or the part does not exist).
    #[error("the range is not satisfiable")]
    InvalidRange,
    /// A write's condition or a read's `If-Match` / `If-Unmodified-Since` did not hold.
    #[error("a precondition did not hold")]
    PreconditionFailed,
    /// A read's `If-None-Match` / `If-Modified-Since` says the client's copy is current.
    #[error("the object is not modified")]
    NotModified,
    /// The claimed MD5 is not base64 of 16 bytes.
    #[error("the claimed MD5 is malformed")]
    MalformedMd5,
    /// The body's MD5 is not the claimed one.
    #[error("the body's MD5 is not the claimed one")]
    Md5Mismatch,
    /// The body's checksum is not the one claimed in a header, a trailer or a completion.
    #[error("the body's {0} checksum is not the claimed one")]
    ChecksumMismatch(ChecksumAlgorithm),
    /// The body (or the object a completion would make) is longer than the operation allows.
    #[error("the upload is larger than {0} bytes")]
    TooLarge(u64),
    /// A part other than the last is smaller than the minimum part size.
    #[error("a part other than the last is smaller than the minimum part size")]
    PartTooSmall,
    /// The body ended before its declared length, or ran past it.
    #[error("the body's length is not the declared one")]
    LengthMismatch,
    /// A completion lists no parts.
    #[error("a completion must list at least one part")]
    NoParts,
    /// A completion lists parts out of ascending order.
    #[error("the parts are not in ascending order")]
    PartsOutOfOrder,
    /// A completion names a part that was not uploaded, or with another ETag or checksum.
    #[error("part {0} was not uploaded with the ETag and checksum listed")]
    PartMismatch(u32),
    /// A completed object needs a checksum its part was uploaded without.
    #[error("part {part_number} has no {algorithm} checksum")]
    PartWithoutChecksum {
        /// The part.
        part_number: u32,
        /// The upload's algorithm.
        algorithm: ChecksumAlgorithm,
    },
    /// A write asks for another server-side encryption than the table's.
    #[error("the write asks for another encryption than the table's")]
    EncryptionMismatch {
        /// What the write asked for.
        requested: RequestedEncryption,
        /// The table's.
        table: ObjectEncryption,
    },
    /// A concurrent operation changed what this one depended on (a part replaced during completion).
    #[error("{0}")]
    Conflict(String),
    /// Reading the request body failed.
    #[error("reading the request body failed: {0}")]
    Body(#[source] BodyError),
    /// Stored encrypted bytes failed their integrity check (altered, damaged or cut short): the read fails
    /// rather than return wrong bytes.
    #[error("stored data failed its integrity check: {0}")]
    Integrity(String),
    /// The master key that protects the object is not configured, or is not the key the data was written with.
    #[error("the encryption key is unavailable: {0}")]
    KeyUnavailable(String),
    /// The KMS key the table's setting names is not configured on this server, so nothing can be written to
    /// the table.
    #[error("the KMS key is not configured: {0}")]
    UnknownKmsKey(String),
    /// Something failed inside the server; the details are logged, not shown.
    #[error("internal error: {0}")]
    Internal(String),
    /// The store failed.
    #[error("storage failure")]
    Store(#[source] StoreError),
}

impl From<StoreError> for ObjectError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::PreconditionFailed(_) => Self::PreconditionFailed,
            StoreError::Conflict(message) => Self::Conflict(message),
            StoreError::Integrity(message) => Self::Integrity(message),
            StoreError::Key(message) => Self::KeyUnavailable(message),
            other => Self::Store(other),
        }
    }
}
