//! The catalog's error type: one variant per outcome a caller acts on. Each surface maps it to its wire format.

use tablebay_objects::ObjectError;
use tablebay_store::StoreError;

/// What went wrong in a catalog operation.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Input that breaks a naming rule, a range, an enum or a format.
    #[error("{0}")]
    Invalid(String),
    /// The bucket, namespace, table, policy or setting does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The thing to create already exists.
    #[error("{0}")]
    AlreadyExists(String),
    /// A stale version token, a concurrent change, or a delete of something that is not empty.
    #[error("{0}")]
    Conflict(String),
    /// The caller may not act on this resource.
    #[error("{0}")]
    Denied(String),
    /// Something failed inside the server; the details are logged, not shown.
    #[error("internal error: {0}")]
    Internal(String),
    /// The store failed.
    #[error("storage failure")]
    Store(#[source] StoreError),
}

impl CatalogError {
    /// Shorthand for [`CatalogError::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// Maps a store error, naming what was being looked for when it is a not-found or an already-exists.
    pub(crate) fn from_store(err: StoreError, what: impl FnOnce() -> String) -> Self {
        match err {
            StoreError::NotFound => Self::NotFound(format!("{} does not exist", what())),
            StoreError::AlreadyExists(_) => {
                Self::AlreadyExists(format!("{} already exists", what()))
            }
            StoreError::Conflict(msg) => Self::Conflict(msg),
            other => Self::Store(other),
        }
    }
}

impl From<StoreError> for CatalogError {
    fn from(err: StoreError) -> Self {
        Self::from_store(err, || "the resource".to_string())
    }
}

/// Object-service failures as the catalog meets them, writing and reading a table's own files: a missing object or
/// upload is not found, a conflict stays one, a KMS key the server lacks is the caller's bad setting (the message
/// names the key), and the rest are the server's.
impl From<ObjectError> for CatalogError {
    fn from(err: ObjectError) -> Self {
        match err {
            ObjectError::Store(source) => Self::Store(source),
            ObjectError::ObjectNotFound | ObjectError::UploadNotFound => {
                Self::NotFound(err.to_string())
            }
            ObjectError::Conflict(message) => Self::Conflict(message),
            ObjectError::UnknownKmsKey(message) => {
                Self::Invalid(format!("Invalid keyId: {message}"))
            }
            ObjectError::Invalid(_)
            | ObjectError::MalformedChecksum(_)
            | ObjectError::MalformedChecksumTrailer(_)
            | ObjectError::MissingChecksumTrailer(_)
            | ObjectError::ChecksumAlgorithmMismatch { .. }
            | ObjectError::UnsupportedChecksumType { .. }
            | ObjectError::RangeAndPart
            | ObjectError::InvalidRange
            | ObjectError::PreconditionFailed
            | ObjectError::NotModified
            | ObjectError::MalformedMd5
            | ObjectError::Md5Mismatch
            | ObjectError::ChecksumMismatch(_)
            | ObjectError::TooLarge(_)
            | ObjectError::PartTooSmall
            | ObjectError::LengthMismatch
            | ObjectError::NoParts
            | ObjectError::PartsOutOfOrder
            | ObjectError::PartMismatch(_)
            | ObjectError::PartWithoutChecksum { .. }
            | ObjectError::EncryptionMismatch { .. }
            | ObjectError::Body(_)
            | ObjectError::Integrity(_)
            | ObjectError::KeyUnavailable(_)
            | ObjectError::Internal(_) => Self::Internal(err.to_string()),
        }
    }
}
