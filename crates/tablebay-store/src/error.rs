//! The one error type of the storage layer, classified once so that callers branch on kinds, not messages.
//!
//! Database errors become a [`StoreError`] in exactly one place, the `From<sqlx::Error>` impl below: a unique
//! violation is `AlreadyExists`; a foreign-key violation, a Postgres serialization failure or deadlock and a
//! SQLite busy/locked error are `Conflict` (the caller may retry); a lost connection, an exhausted pool, a server
//! shutting down or out of resources is `Unavailable` (the surfaces answer 503); everything else stays an opaque
//! `Database` error. Blob-store errors are classified the same way, in `From<object_store::Error>`. Statements whose constraint failures mean something more specific (an insert whose parent row is
//! gone is `NotFound`, not `Conflict`) refine this in `meta::codec::insert_error`.

use sqlx::error::{DatabaseError, ErrorKind};

/// What went wrong in the metadata or blob store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row or blob does not exist.
    #[error("not found")]
    NotFound,
    /// A unique constraint was violated (the thing already exists).
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// A compare-and-swap lost, a dependent row exists, or the database reported a serialization failure.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A conditional write found the row in a state other than the one it required (it exists, or its ETag
    /// differs).
    #[error("precondition failed: {0}")]
    PreconditionFailed(String),
    /// Stored data could not be decoded (a bug or a hand-edited database).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// The database or the blob store cannot serve the request now (a lost connection, an exhausted pool, a
    /// server shutting down or out of resources, an S3 store that kept failing): nothing was decided, and the
    /// caller may retry. Every surface answers 503.
    #[error("{store} unavailable")]
    Unavailable {
        /// Which store: `database` or `blob store`.
        store: &'static str,
        /// What the store or its client reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The database failed.
    #[error("database error")]
    Database(#[source] sqlx::Error),
    /// Migrations failed at startup.
    #[error("database migration failed")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// The blob store failed.
    #[error("blob store error")]
    Blob(#[source] object_store::Error),
    /// An encrypted blob failed its integrity check: its stored bytes were altered, damaged or cut short.
    #[error("integrity check failed: {0}")]
    Integrity(String),
    /// An encryption key is missing or is not the one the data was written with.
    #[error("encryption key error: {0}")]
    Key(String),
    /// The configuration given to the store is unusable (bad URL, unreachable directory).
    #[error("invalid store configuration: {0}")]
    Config(String),
}

/// How a database error reads to a caller.
enum Class {
    AlreadyExists,
    Conflict,
    Unavailable,
    Other,
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        let (class, message) = match err.as_database_error() {
            Some(db) => (classify(db), db.message().to_owned()),
            None if matches!(err, sqlx::Error::RowNotFound) => return Self::NotFound,
            None if is_connection_failure(&err) => (Class::Unavailable, String::new()),
            None => (Class::Other, String::new()),
        };
        match class {
            Class::AlreadyExists => Self::AlreadyExists(message),
            Class::Conflict => Self::Conflict(message),
            Class::Unavailable => Self::Unavailable {
                store: "database",
                source: Box::new(err),
            },
            Class::Other => Self::Database(err),
        }
    }
}

/// Errors of the database client that mean the server could not be reached or the connection was lost.
fn is_connection_failure(err: &sqlx::Error) -> bool {
    matches!(
        err,
        sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
    )
}

impl From<object_store::Error> for StoreError {
    /// A missing blob is `NotFound`; `Generic` is what object_store reports for a request that failed after its
    /// retries (connection refused, timeouts, 5xx) and for local I/O errors, so it is `Unavailable`; the rest
    /// (refused credentials, bad configuration, precondition failures) stay `Blob`.
    fn from(err: object_store::Error) -> Self {
        match err {
            object_store::Error::NotFound { .. } => Self::NotFound,
            object_store::Error::Generic { .. } => Self::Unavailable {
                store: "blob store",
                source: Box::new(err),
            },
            other => Self::Blob(other),
        }
    }
}

/// The class of an error reported by the database server or library.
fn classify(db: &dyn DatabaseError) -> Class {
    match db.kind() {
        ErrorKind::UniqueViolation => return Class::AlreadyExists,
        // Deleting a row that is still referenced: the dependent rows must go first.
        ErrorKind::ForeignKeyViolation => return Class::Conflict,
        _ => {}
    }
    if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        // 40001 serialization_failure, 40P01 deadlock_detected: the transaction lost a race and may be retried.
        if matches!(pg.code(), "40001" | "40P01") {
            return Class::Conflict;
        }
        // Class 08 connection exception, class 53 insufficient resources (too many connections, disk full),
        // 57P01-03 the server is shutting down, crashed or starting.
        let code = pg.code();
        if code.starts_with("08")
            || code.starts_with("53")
            || matches!(code, "57P01" | "57P02" | "57P03")
        {
            return Class::Unavailable;
        }
    } else if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // SQLITE_BUSY (5) and SQLITE_LOCKED (6) with their extended codes (BUSY_SNAPSHOT = 517, …): another
        // writer held the lock past the busy timeout (reference/rust-stack.md, trap T13).
        let primary = db
            .code()
            .and_then(|code| code.parse::<i32>().ok())
            .map(|code| code & 0xff);
        if matches!(primary, Some(5 | 6)) {
            return Class::Conflict;
        }
        // SQLITE_IOERR (10), SQLITE_FULL (13), SQLITE_CANTOPEN (14): the disk under the database failed.
        if matches!(primary, Some(10 | 13 | 14)) {
            return Class::Unavailable;
        }
    }
    Class::Other
}
