//! The error type of the object service (objects, listings, multipart uploads): one variant per outcome an S3
//! client can tell apart. The S3 surface maps each to its error code in `tablebay-http`'s `s3/error.rs`.

use tablebay_store::StoreError;

use crate::{CatalogError, ChecksumAlgorithm};

/// A boxed error from a request body stream (a client disconnect, a bad chunk signature, …).
pub type BodyError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong in an object operation.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The bucket is not the storage of an existing table.
    #[error("The specified bucket does not exist")]
    NoSuchBucket,
    /// No object has the key.
    #[error("The specified key does not exist.")]
    NoSuchKey,
    /// The upload does not exist (never did, or was completed, aborted or expired).
    #[error(
        "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."
    )]
    NoSuchUpload,
    /// The caller may not act on this table's data.
    #[error("{0}")]
    AccessDenied(String),
    /// An argument is malformed or out of range (a key, a part number, a limit, a checksum value).
    #[error("{0}")]
    Invalid(String),
    /// The request's XML names no parts, or is otherwise unusable.
    #[error("{0}")]
    MalformedXml(String),
    /// The range does not overlap the object.
    #[error("The requested range is not satisfiable")]
    InvalidRange,
    /// An `If-Match` / `If-Unmodified-Since` (or a conditional write) did not hold.
    #[error("At least one of the pre-conditions you specified did not hold")]
    PreconditionFailed,
    /// An `If-None-Match` / `If-Modified-Since` says the client's copy is current.
    #[error("Not Modified")]
    NotModified,
    /// `Content-MD5` is not the base64 of 16 bytes.
    #[error("The Content-MD5 you specified is not valid.")]
    InvalidDigest,
    /// The body's MD5 is not the `Content-MD5` sent.
    #[error("The Content-MD5 you specified did not match what we received.")]
    BadDigest,
    /// The body's checksum is not the one sent in a header or trailer.
    #[error("The {0} you specified did not match the calculated checksum.")]
    ChecksumMismatch(ChecksumAlgorithm),
    /// The body is longer than the operation allows.
    #[error("Your proposed upload exceeds the maximum allowed size of {0} bytes")]
    EntityTooLarge(u64),
    /// A part other than the last is smaller than the minimum part size.
    #[error("Your proposed upload is smaller than the minimum allowed size")]
    EntityTooSmall,
    /// The body ended before its declared length, or ran past it.
    #[error("You did not provide the number of bytes specified by the Content-Length HTTP header.")]
    IncompleteBody,
    /// A completion names a part that was not uploaded, or with another ETag or checksum.
    #[error("{0}")]
    InvalidPart(String),
    /// A completion lists parts out of ascending order.
    #[error("The list of parts was not in ascending order. Parts must be ordered by part number.")]
    InvalidPartOrder,
    /// A concurrent operation changed what this one depended on (a part replaced during completion).
    #[error("{0}")]
    Conflict(String),
    /// Reading the request body failed.
    #[error("reading the request body failed: {0}")]
    Body(#[source] BodyError),
    /// Stored encrypted bytes failed their integrity check (altered, damaged or cut short): the read fails
    /// rather than return wrong bytes.
    #[error("The object's stored data failed its integrity check: {0}")]
    Integrity(String),
    /// The master key that protects the object (or that the table's setting names) is not configured, or is
    /// not the key the data was written with.
    #[error("The object's encryption key is unavailable: {0}")]
    EncryptionKey(String),
    /// The KMS key the table's setting names is not configured on this server, so nothing can be written to
    /// the table (as S3 answers a write whose KMS key does not exist).
    #[error("Invalid keyId: {0}")]
    KmsKeyNotFound(String),
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
            StoreError::Key(message) => Self::EncryptionKey(message),
            other => Self::Store(other),
        }
    }
}

impl From<CatalogError> for ObjectError {
    fn from(err: CatalogError) -> Self {
        match err {
            CatalogError::NotFound(_) => Self::NoSuchBucket,
            CatalogError::Invalid(message) => Self::Invalid(message),
            CatalogError::Denied(message) => Self::AccessDenied(message),
            CatalogError::Conflict(message) | CatalogError::AlreadyExists(message) => {
                Self::Conflict(message)
            }
            CatalogError::Internal(message) => Self::Internal(message),
            CatalogError::Store(source) => Self::Store(source),
        }
    }
}

impl From<ObjectError> for CatalogError {
    fn from(err: ObjectError) -> Self {
        match err {
            ObjectError::Store(source) => Self::Store(source),
            ObjectError::NoSuchBucket | ObjectError::NoSuchKey | ObjectError::NoSuchUpload => {
                Self::NotFound(err.to_string())
            }
            ObjectError::AccessDenied(message) => Self::Denied(message),
            ObjectError::Conflict(message) => Self::Conflict(message),
            ObjectError::KmsKeyNotFound(_) => Self::Invalid(err.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }
}
