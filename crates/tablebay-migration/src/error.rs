//! The migration service's errors: what a request is answered with, and what a run fails with (each run
//! failure becomes a `failureReason` code of GetTableMigration).

use tablebay_catalog::ServiceError;
use tablebay_store::StoreError;

/// A migration error.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// The request is malformed (400).
    #[error("{0}")]
    Invalid(String),
    /// The migration, table, bucket or namespace does not exist (404).
    #[error("{0}")]
    NotFound(String),
    /// The destination table exists already, or the migration is not in a state that allows the request (409).
    #[error("{0}")]
    Conflict(String),
    /// The caller may not act on this migration (403).
    #[error("{0}")]
    Denied(String),
    /// The source cannot be read: unreachable, or it answered an error (run failure `resourceNotFound` /
    /// `internalError`).
    #[error("{0}")]
    Source(String),
    /// The source refused the credentials (run failure `sourcePermissions`).
    #[error("{0}")]
    SourcePermissions(String),
    /// The source table or a file of it does not exist (run failure `resourceNotFound`).
    #[error("{0}")]
    SourceNotFound(String),
    /// The source has something this server cannot migrate (run failure `sourceNotSupported`).
    #[error("{0}")]
    SourceNotSupported(String),
    /// The catalog refused or failed.
    #[error(transparent)]
    Catalog(#[from] ServiceError),
    /// Something failed inside the server.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for MigrationError {
    fn from(e: StoreError) -> Self {
        Self::Catalog(ServiceError::from(e))
    }
}

impl MigrationError {
    /// The `failureReason.code` a run that failed with this error reports.
    pub fn failure_code(&self) -> &'static str {
        match self {
            Self::SourcePermissions(_) => "sourcePermissions",
            Self::SourceNotFound(_) | Self::NotFound(_) => "resourceNotFound",
            Self::SourceNotSupported(_) | Self::Invalid(_) => "sourceNotSupported",
            Self::Source(_) => "resourceNotFound",
            Self::Denied(_) => "destinationPermissions",
            Self::Conflict(_) | Self::Catalog(_) | Self::Internal(_) => "internalError",
        }
    }
}
