//! The one error type of the storage layer, classified once so that callers branch on kinds, not messages.
//!
//! Database errors become a [`StoreError`] in exactly one place, the `From<sqlx::Error>` impl below: a unique
//! violation is `AlreadyExists`; a foreign-key violation, a Postgres serialization failure or deadlock and a
//! SQLite busy/locked error are `Conflict` (the caller may retry); everything else stays an opaque `Database`
//! error. Statements whose constraint failures mean something more specific (an insert whose parent row is
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
    Other,
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        let (class, message) = match err.as_database_error() {
            Some(db) => (classify(db), db.message().to_owned()),
            None if matches!(err, sqlx::Error::RowNotFound) => return Self::NotFound,
            None => (Class::Other, String::new()),
        };
        match class {
            Class::AlreadyExists => Self::AlreadyExists(message),
            Class::Conflict => Self::Conflict(message),
            Class::Other => Self::Database(err),
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
    }
    Class::Other
}
