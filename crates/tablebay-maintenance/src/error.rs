//! The maintenance service's error type: one variant per outcome a caller (the admin endpoint) acts on.

use tablebay_catalog::ServiceError;
use tablebay_store::StoreError;

/// What went wrong in a maintenance operation.
#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    /// The table does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed.
    #[error("{0}")]
    Invalid(String),
    /// A job of this type is already running on the table.
    #[error("{0}")]
    Busy(String),
    /// The job cannot run in this build or configuration.
    #[error("{0}")]
    Unavailable(String),
    /// A table file could not be read or understood; nothing was removed.
    #[error("{0}")]
    Unreadable(String),
    /// The catalog failed.
    #[error("catalog failure: {0}")]
    Catalog(#[source] ServiceError),
    /// The store failed.
    #[error("storage failure")]
    Store(#[source] StoreError),
}

impl From<ServiceError> for MaintenanceError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound(m) => Self::NotFound(m),
            ServiceError::Invalid(m) => Self::Invalid(m),
            other => Self::Catalog(other),
        }
    }
}

impl From<StoreError> for MaintenanceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(m) => Self::Busy(m),
            other => Self::Store(other),
        }
    }
}
