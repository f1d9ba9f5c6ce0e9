//! Table migration: bringing an Iceberg table that lives elsewhere — behind another Iceberg REST catalog, or as
//! a metadata file on an S3-compatible store — into a table bucket, as S3 Tables' StartTableMigration,
//! SyncTableMigration, UpdateTableMigration, CompleteTableMigration, GetTableMigration and ListTableMigrations do
//! for Glue tables. See docs/migration.md.
//!
//! `source.rs` is the request's source shape, `reader.rs` reads a source, `rewrite.rs` moves metadata into the
//! new storage, `run.rs` is one run (start or sync), and `service.rs` the state machine and records. The catalog
//! owns the destination table (`tablebay_catalog::Catalog::reserve_table_storage` and its neighbours).

#![warn(missing_docs)]

mod error;
mod reader;
mod rewrite;
mod run;
mod service;
mod source;

pub use error::MigrationError;
pub use service::{
    DataMode, FailureReason, Migration, MigrationKind, MigrationOutput, MigrationState,
    MigrationStats, Migrations, PlanningStats, ReportObject, StartRequest,
};
pub use source::{
    Auth, MetadataSource, RestTableSource, S3Access, SourceConfiguration, SourceType,
};
