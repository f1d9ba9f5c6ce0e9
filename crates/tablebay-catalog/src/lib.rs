//! Tablebay's catalog service: the one domain behind both the S3 Tables control plane and the Iceberg REST API.
//!
//! It owns table buckets, namespaces and tables, their ARNs and naming rules, their settings (policies,
//! encryption, maintenance, storage class, tags), and the compare-and-swap of a table's metadata pointer. It
//! validates and decides; `tablebay-store` persists. Wire formats live with the HTTP surfaces.
#![warn(missing_docs)]

mod arn;
mod bucket;
mod catalog;
mod commit;
mod encryption;
mod error;
mod iceberg_tables;
mod idempotency;
mod maintenance;
mod metadata;
mod metadata_cache;
mod names;
mod namespace;
mod namespace_properties;
mod objects;
mod pagination;
mod policy;
mod settings;
mod storage_class;
mod table;
mod tagging;
mod views;

pub use arn::{AccountId, ArnFlavor, BucketArn, ResourceArn, TableArn};
pub use bucket::{NewBucket, TableBucket};
pub use catalog::{Catalog, CatalogConfig};
pub use commit::{CommitError, TableChange};
pub use error::CatalogError;
pub use iceberg_tables::{DropMode, IcebergTable, StagedTable};
pub use idempotency::{IDEMPOTENCY_LIFETIME, RememberedReply};
pub use maintenance::TableMaintenanceUpdate;
pub use metadata::{TableDefinition, metadata_json};
pub use metadata_cache::{LoadedMetadata, SnapshotRefInfo};
pub use names::{BucketName, NamespaceName, TableName};
pub use namespace::Namespace;
pub use namespace_properties::PropertiesUpdate;
pub use objects::{TableLocation, warehouse_location};
pub use pagination::{ContinuationToken, Page, PageRequest};
pub use settings::{
    BucketMaintenance, CompactionSettings, JobConfig, CompactionStrategy, Encryption, JobState, JobStatus, MaintenanceJobType,
    MaintenanceStatus, MetricsConfiguration, ResourcePolicy, SnapshotManagementSettings, SseAlgorithm, StorageClass,
    TableMaintenance, Tags, UnreferencedFileRemovalSettings,
};
pub use table::{NewTable, Table, TableRef};
pub use views::{IcebergView, ViewChange, ViewDefinition, ViewRequirement};

/// The Iceberg spec types the catalog's commit API takes (iceberg-rust), re-exported so that surfaces parse
/// requests into exactly these types without depending on the crate themselves.
pub mod spec {
    pub use iceberg::spec::{Schema, TableMetadata, ViewMetadata, ViewVersion};
    pub use iceberg::{TableRequirement, TableUpdate, ViewUpdate};
}
