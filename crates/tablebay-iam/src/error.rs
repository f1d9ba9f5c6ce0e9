//! The IAM service's error type: one variant per outcome a caller acts on. Each surface maps it to its wire format.

use tablebay_catalog::CatalogError;
use tablebay_store::StoreError;

/// What went wrong in an IAM operation.
#[derive(Debug, thiserror::Error)]
pub enum IamError {
    /// Input that breaks a naming rule, a range or the policy grammar.
    #[error("{0}")]
    Invalid(String),
    /// The account, user, role, key or policy does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The thing to create already exists.
    #[error("{0}")]
    AlreadyExists(String),
    /// The change conflicts with the current state (an account that still owns buckets).
    #[error("{0}")]
    Conflict(String),
    /// The caller may not do this.
    #[error("{0}")]
    Denied(String),
    /// Something failed inside the server; the details are logged, not shown.
    #[error("internal error: {0}")]
    Internal(String),
    /// The store failed.
    #[error("storage failure")]
    Store(#[source] StoreError),
}

impl IamError {
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

impl From<StoreError> for IamError {
    fn from(err: StoreError) -> Self {
        Self::from_store(err, || "the resource".to_string())
    }
}

impl From<CatalogError> for IamError {
    fn from(err: CatalogError) -> Self {
        match err {
            CatalogError::Invalid(m) => Self::Invalid(m),
            CatalogError::NotFound(m) => Self::NotFound(m),
            CatalogError::AlreadyExists(m) => Self::AlreadyExists(m),
            CatalogError::Conflict(m) => Self::Conflict(m),
            CatalogError::Denied(m) => Self::Denied(m),
            CatalogError::Internal(m) => Self::Internal(m),
            CatalogError::Store(e) => Self::Store(e),
        }
    }
}
