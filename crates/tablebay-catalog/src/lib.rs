//! Tablebay's catalog service: the one domain behind both the S3 Tables control plane and the Iceberg REST API.
//!
//! It owns table buckets, namespaces and tables, their ARNs and naming rules, their settings (policies,
//! encryption, maintenance, storage class, tags), and the compare-and-swap of a table's metadata pointer. It
//! validates and decides; `tablebay-store` persists, and `tablebay-objects` stores the table files (the catalog
//! writes its metadata files through it, confined to a table's storage by [`TableFiles`]). Wire formats live with
//! the HTTP surfaces.
#![warn(missing_docs)]

mod access_logging;
mod arn;
mod bucket;
mod catalog;
mod commit;
mod commit_observer;
mod encryption;
mod iceberg_tables;
mod idempotency;
mod maintenance;
mod metadata;
mod metadata_cache;
mod migration_target;
mod names;
mod namespace;
mod namespace_properties;
mod pagination;
mod policy;
mod replication;
mod service_error;
mod settings;
mod storage;
mod storage_class;
mod table;
mod table_files;
mod table_metrics;
mod tagging;
mod views;

pub use access_logging::{ACCESS_LOG_NAMESPACE, LoggingTarget};
pub use arn::{AccountId, ArnFlavor, BucketArn, ResourceArn, TableArn, parse_arn_flavor};
pub use bucket::{NewBucket, TableBucket};
pub use catalog::{Catalog, CatalogConfig};
pub use commit::{CommitError, TableChange};
pub use commit_observer::CommitObserver;
pub use iceberg_tables::{DropMode, IcebergTable, StagedTable};
pub use idempotency::{IDEMPOTENCY_LIFETIME, RememberedCommit, RememberedReply};
pub use maintenance::{
    DELETED_RECORDS_DETAIL, RecordExpirationMetrics, RecordExpirationStatus, TableMaintenanceUpdate,
};
pub use metadata::{TableDefinition, metadata_json};
pub use metadata_cache::{LoadedMetadata, SnapshotRefInfo};
pub use migration_target::MigrationLock;
pub use names::{BucketName, NamespaceName, TableName};
pub use namespace::Namespace;
pub use namespace_properties::PropertiesUpdate;
pub use pagination::{ContinuationToken, Page, PageRequest};
pub use replication::{
    DISASSOCIATED_PROPERTY, DestinationStatus, MAX_DESTINATIONS, REPLICA_ROLE_PROPERTY,
    REPLICA_SOURCE_METADATA_PROPERTY, REPLICA_SOURCE_PROPERTY, ReplicationConfig, ReplicationScope,
    ReplicationState, StoredReplication, replica_refusal, role_parts, same_bucket,
};
pub use service_error::ServiceError;
pub use settings::{
    AccessLogging, BucketMaintenance, CompactionSettings, CompactionStrategy, Encryption,
    JobConfig, JobState, JobStatus, MaintenanceJobType, MaintenanceStatus, MetricsConfiguration,
    PartitionDateSource, RecordExpiration, ResourcePolicy, SnapshotManagementSettings,
    SseAlgorithm, StorageClass, TableMaintenance, Tags, UnreferencedFileRemovalSettings,
};
pub use storage::TableStorage;
pub use table::{NewTable, Table, TableRef};
pub use table_files::{MAX_TABLE_FILE_RANGE, PATH_PROPERTIES, TableFiles};
pub use table_metrics::{MAINTENANCE_JOBS, MAX_BUCKETS, MAX_TABLES_PER_BUCKET, TableCounters};
pub use views::{IcebergView, ViewChange, ViewDefinition, ViewRequirement};

/// A table's warehouse location, `s3://<table-id>--table-s3` (the object service's rule, re-exported for the
/// surfaces that report it).
pub use tablebay_objects::warehouse_location;

/// The Iceberg spec types the catalog's commit API takes (iceberg-rust), re-exported so that surfaces parse
/// requests into exactly these types without depending on the crate themselves.
pub mod spec {
    pub use iceberg::spec::{Schema, TableMetadata, ViewMetadata, ViewVersion};
    pub use iceberg::{TableRequirement, TableUpdate, ViewUpdate};
}
