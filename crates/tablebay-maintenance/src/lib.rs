//! Tablebay's automatic table maintenance (`reference/s3tables-api.md` §4): snapshot expiration, unreferenced-
//! file removal and (through the compaction engine) compaction and record expiration, run by workers inside the
//! server that claim jobs from the metadata store with leases, triggered by commits and by a periodic sweep, or run now by an operator.
//! Every run is recorded; the records drive `GetTableMaintenanceJobStatus`, the admin listing and `/metrics`.
//!
//! The catalog owns tables and commits (a maintenance commit is an ordinary catalog commit); the store owns the
//! job rows. Wire formats live in `tablebay-http`.
//!
//! Server access logging lives here too (`access_log`): a background task that delivers each logged bucket's
//! request records as appends to its log table.
#![warn(missing_docs)]

mod access_log;
mod compaction;
mod error;
mod expire_snapshots;
mod metrics;
mod planner;
mod record_expiration;
mod references;
mod run;
mod runner;
mod settings;
mod unreferenced_files;

pub use access_log::{AccessLog, AccessRecord, LOG_TABLE_COLUMNS};
pub use error::MaintenanceError;
pub use metrics::MaintenanceMetrics;
pub use run::{MaintenanceRun, RunOutcome};
pub use runner::{JobRunner, MAX_LISTED_RUNS, MaintenanceConfig};
pub use settings::{
    EffectiveCompaction, EffectiveSnapshotManagement, EffectiveUnreferencedRemoval,
    MAX_SNAPSHOT_AGE_PROPERTY, MIN_SNAPSHOTS_PROPERTY, TARGET_FILE_SIZE_PROPERTY,
};
