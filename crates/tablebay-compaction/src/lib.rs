//! Tablebay's compaction engine (issue 6 §3): rewrites a table's small data files, within each partition and
//! spec, into files near a target size, applying the position and equality delete files that cover them so the
//! output needs none, and commits one `replace` snapshot.
//!
//! - **Bytes** go through the table's own storage ([`storage`], over the catalog's `TableFiles`), never the
//!   backing store directly, and never another table's storage.
//! - **Planning** ([`plan`]) reads the starting snapshot's manifests and groups files; **rewriting**
//!   ([`rewrite`]) streams record batches through iceberg-rust's reader (which applies the deletes) into its
//!   rolling Parquet writer, optionally sorted or z-ordered ([`order`]) within each output file.
//! - **Committing** ([`commit`]) is the catalog's ordinary compare-and-swap with an `assert-ref-snapshot-id`
//!   requirement. Rewritten files keep the starting snapshot's data sequence number, so deletes committed
//!   meanwhile still apply to them; when the table moved, the commit re-validates each group against the new
//!   snapshot and rebases, giving up only the groups a concurrent change touches. Writers never fail because of
//!   compaction.
//!
//! Record expiration ([`expire_records`]) is the same machinery with another plan: files that partition values or
//! column bounds prove expired are dropped whole, files that may hold expired rows are rewritten through the same
//! reader and writer keeping only the live rows, and the same commit publishes a `delete`/`overwrite` snapshot.
//!
//! Job scheduling, leases and run records belong to the maintenance runner, which calls [`compact_table`]. The
//! console reads a table's live files and first rows through the same reader ([`inspect`]).
#![warn(missing_docs)]

mod append;
mod commit;
mod expire;
mod inspect;
mod order;
mod plan;
mod rewrite;
mod storage;

use tablebay_catalog::{Catalog, CommitError, ServiceError, TableFiles, TableRef};

pub use append::{PartitionRows, append_rows};
pub use expire::{EXPIRATION_COLUMN_PROPERTY, ExpirationReport, expire_records};
pub use inspect::{Inspection, LiveFiles, Preview, inspect};

/// An iceberg-rust `FileIO` over the storage of one table (`catalog.table_files(id)`): locations inside it
/// resolve, through the catalog's object service; every other location is refused.
pub fn table_file_io(files: &TableFiles) -> iceberg::io::FileIO {
    storage::file_io(files)
}

/// How files are laid out in the rewritten files (S3 Tables' `icebergCompaction.strategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// Sort when the table has a sort order, else bin-pack.
    #[default]
    Auto,
    /// Combine files without reordering rows.
    Binpack,
    /// Sort the rows of each output file by the table's sort order (bin-pack when it has none).
    Sort,
    /// Order the rows of each output file along a z-curve over the sort order's columns (bin-pack when it has
    /// none).
    ZOrder,
}

/// What one compaction run aims at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    /// The size rewritten files roll over at; files below three quarters of it are compacted.
    pub target_file_size_bytes: u64,
    /// How rows are ordered in the rewritten files.
    pub strategy: Strategy,
}

impl Default for CompactionSettings {
    /// S3 Tables' defaults: 512 MB, `auto`.
    fn default() -> Self {
        Self {
            target_file_size_bytes: 512 * 1024 * 1024,
            strategy: Strategy::Auto,
        }
    }
}

/// What a compaction run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// Data files rewritten (committed groups only).
    pub files_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Data files written and committed.
    pub files_out: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Delete files the snapshot removed because no live data file needs them any more.
    pub delete_files_removed: u64,
    /// File groups committed.
    pub groups_committed: u64,
    /// File groups given up: a concurrent change touched their files, reading or writing them failed, or their
    /// rewrite would not have reduced the number of files (the inputs stay as they are).
    pub groups_skipped: u64,
    /// The `replace` snapshot committed, if any.
    pub snapshot_id: Option<i64>,
}

/// Why a compaction run could not run at all (a group that cannot be rewritten is skipped, not an error).
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// The table does not exist, or has no Iceberg metadata.
    #[error("{0}")]
    NotFound(String),
    /// The settings or the table cannot be compacted (a zero target size, an unknown format version).
    #[error("{0}")]
    Invalid(String),
    /// The table kept changing under the commit, or its history was replaced: nothing was committed.
    #[error("{0}")]
    Conflict(String),
    /// The database or blob store could not be reached: nothing was committed; retry later.
    #[error("{0}")]
    Unavailable(String),
    /// Reading the table's metadata or storing files failed.
    #[error("{0}")]
    Internal(String),
}

impl From<ServiceError> for CompactionError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound(m) => Self::NotFound(m),
            ServiceError::Invalid(m) | ServiceError::MalformedPolicy(m) => Self::Invalid(m),
            ServiceError::Conflict(m) | ServiceError::AlreadyExists(m) => Self::Conflict(m),
            ServiceError::Unavailable(_) => Self::Unavailable(e.to_string()),
            ServiceError::Denied(_) | ServiceError::Internal(_) | ServiceError::Store(_) => {
                Self::Internal(e.to_string())
            }
        }
    }
}

impl From<CommitError> for CompactionError {
    fn from(e: CommitError) -> Self {
        match e {
            CommitError::NotFound(m) => Self::NotFound(m),
            CommitError::Invalid(m) => Self::Invalid(m),
            CommitError::Conflict(m) | CommitError::AlreadyExists(m) | CommitError::KeyTaken(m) => {
                Self::Conflict(m)
            }
            CommitError::Unavailable(m) => Self::Unavailable(m),
            CommitError::StateUnknown(m) => Self::Internal(m),
        }
    }
}

impl From<iceberg::Error> for CompactionError {
    fn from(e: iceberg::Error) -> Self {
        Self::Internal(format!("{e}"))
    }
}

/// Compacts the current snapshot of the table's `main` branch once: plans groups of small files (and files
/// with deletes), rewrites each, and commits one `replace` snapshot of the groups that still apply.
pub async fn compact_table(
    catalog: &Catalog,
    table: &TableRef,
    settings: &CompactionSettings,
) -> Result<CompactionReport, CompactionError> {
    if settings.target_file_size_bytes == 0 {
        return Err(CompactionError::Invalid(
            "the target file size must be positive".into(),
        ));
    }
    let start = catalog.load_iceberg_table(table).await?;
    // Everything compaction reads and writes goes through the table's own storage; a table whose metadata
    // names files elsewhere (another table's, for one) is refused before anything is read.
    let files = catalog.table_files(start.table.id);
    files.check_metadata(&start.metadata.metadata)?;
    let io = storage::file_io(&files);
    let Some(plan) = plan::plan(&io, &files, &start, settings).await? else {
        return Ok(CompactionReport::default());
    };
    let mut report = CompactionReport::default();
    let mut rewritten = Vec::with_capacity(plan.groups.len());
    for group in &plan.groups {
        match rewrite::rewrite(&io, &plan, group, settings).await {
            Ok(Some(outputs)) => rewritten.push(commit::Rewritten {
                group: group.clone(),
                outputs,
                removed_rows: 0,
            }),
            // Nothing to gain: the files stay as they are.
            Ok(None) => report.groups_skipped += 1,
            Err(e) => {
                tracing::warn!(table = %start.table.id, error = %e, "compaction gave up a file group it could not rewrite");
                report.groups_skipped += 1;
            }
        }
    }
    if rewritten.is_empty() {
        return Ok(report);
    }
    let committed = commit::commit(
        catalog,
        &io,
        &start.table,
        &plan,
        rewritten,
        iceberg::spec::Operation::Replace,
    )
    .await?;
    report.files_in = committed.files_in;
    report.bytes_in = committed.bytes_in;
    report.files_out = committed.files_out;
    report.bytes_out = committed.bytes_out;
    report.delete_files_removed = committed.delete_files_removed;
    report.groups_committed = committed.groups_committed;
    report.groups_skipped += committed.groups_skipped;
    report.snapshot_id = committed.snapshot_id;
    Ok(report)
}
