//! Request and response bodies of the S3 Tables control plane (restJson1, member names as in the model,
//! `reference/s3tables-api.md` §2). Unknown request members are ignored, as newer clients may send some.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// RFC 3339 UTC with microseconds and `Z`, as S3 Tables writes timestamps (§1.4).
pub(crate) fn timestamp(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EncryptionConfiguration {
    pub sse_algorithm: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key_arn: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StorageClassConfiguration {
    pub storage_class: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTableBucketRequest {
    pub name: String,
    pub encryption_configuration: Option<EncryptionConfiguration>,
    pub storage_class_configuration: Option<StorageClassConfiguration>,
    pub tags: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ArnResponse {
    pub arn: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableBucketSummary {
    pub arn: String,
    pub name: String,
    pub owner_account_id: String,
    pub created_at: String,
    pub table_bucket_id: String,
    #[serde(rename = "type")]
    pub bucket_type: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTableBucketsResponse {
    pub table_buckets: Vec<TableBucketSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct CreateNamespaceRequest {
    pub namespace: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateNamespaceResponse {
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub namespace: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NamespaceSummary {
    pub namespace: Vec<String>,
    pub created_at: String,
    pub created_by: String,
    pub owner_account_id: String,
    pub namespace_id: String,
    pub table_bucket_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListNamespacesResponse {
    pub namespaces: Vec<NamespaceSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

/// `metadata` of CreateTable: a union with the single member `iceberg`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TableMetadata {
    pub iceberg: Option<IcebergMetadata>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IcebergMetadata {
    pub schema: Option<IcebergSchema>,
    pub schema_v2: Option<serde_json::Value>,
    pub partition_spec: Option<serde_json::Value>,
    pub write_order: Option<serde_json::Value>,
    pub properties: Option<BTreeMap<String, String>>,
}

/// The original flat schema: `{"fields": [{"id"?, "name", "type", "required"?}]}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct IcebergSchema {
    pub fields: Vec<SchemaField>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct SchemaField {
    pub id: Option<i64>,
    pub name: String,
    #[serde(rename = "type")]
    pub field_type: String,
    pub required: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTableRequest {
    pub name: String,
    pub format: String,
    pub metadata: Option<TableMetadata>,
    pub encryption_configuration: Option<EncryptionConfiguration>,
    pub storage_class_configuration: Option<StorageClassConfiguration>,
    pub tags: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTableResponse {
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub version_token: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableResponse {
    pub name: String,
    #[serde(rename = "type")]
    pub table_type: &'static str,
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub namespace: Vec<String>,
    pub namespace_id: String,
    pub version_token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_location: Option<String>,
    pub warehouse_location: String,
    pub created_at: String,
    pub created_by: String,
    pub modified_at: String,
    pub modified_by: String,
    pub owner_account_id: String,
    pub format: String,
    pub table_bucket_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableSummary {
    pub namespace: Vec<String>,
    pub name: String,
    #[serde(rename = "type")]
    pub table_type: &'static str,
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub created_at: String,
    pub modified_at: String,
    pub namespace_id: String,
    pub table_bucket_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTablesResponse {
    pub tables: Vec<TableSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RenameTableRequest {
    pub new_namespace_name: Option<String>,
    pub new_name: Option<String>,
    pub version_token: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableMetadataLocationResponse {
    pub version_token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_location: Option<String>,
    pub warehouse_location: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateTableMetadataLocationRequest {
    pub version_token: String,
    pub metadata_location: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateTableMetadataLocationResponse {
    pub name: String,
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub namespace: Vec<String>,
    pub version_token: String,
    pub metadata_location: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourcePolicyBody {
    pub resource_policy: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EncryptionBody {
    pub encryption_configuration: EncryptionConfiguration,
}

/// `{"tableBucketLoggingStatus": {"loggingEnabled"?: {…}}}` of Put/GetTableBucketLogging; an empty status turns
/// logging off.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableBucketLoggingBody {
    pub table_bucket_logging_status: TableBucketLoggingStatus,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TableBucketLoggingStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging_enabled: Option<LoggingEnabled>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoggingEnabled {
    pub target_bucket: String,
    pub target_prefix: String,
    pub target_object_key_format: TargetObjectKeyFormat,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TargetObjectKeyFormat {
    pub partitioned_prefix: PartitionedPrefix,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PartitionedPrefix {
    pub partition_date_source: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StorageClassBody {
    pub storage_class_configuration: StorageClassConfiguration,
}

/// `{"value": {"status"?, "settings"?}}` of both Put*MaintenanceConfiguration operations.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct PutMaintenanceRequest {
    pub value: MaintenanceValue,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub(crate) struct MaintenanceValue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<MaintenanceSettings>,
}

/// The settings union: exactly one member, which must match the job type in the path.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MaintenanceSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg_compaction: Option<CompactionSettingsWire>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg_snapshot_management: Option<SnapshotManagementWire>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg_unreferenced_file_removal: Option<UnreferencedFileRemovalWire>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactionSettingsWire {
    #[serde(
        rename = "targetFileSizeMB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_file_size_mb: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SnapshotManagementWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_snapshots_to_keep: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snapshot_age_hours: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnreferencedFileRemovalWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreferenced_days: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_current_days: Option<i64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableBucketMaintenanceResponse {
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub configuration: BTreeMap<&'static str, MaintenanceValue>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableMaintenanceResponse {
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub configuration: BTreeMap<&'static str, MaintenanceValue>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobStatusWire {
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableMaintenanceJobStatusResponse {
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    pub status: BTreeMap<&'static str, JobStatusWire>,
}

/// `{"value": {"status"?, "settings"?: {"days"?}}}` of PutTableRecordExpirationConfiguration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct PutRecordExpirationRequest {
    pub value: RecordExpirationValue,
}

/// `TableRecordExpirationConfigurationValue`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub(crate) struct RecordExpirationValue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<RecordExpirationSettingsWire>,
}

/// `TableRecordExpirationSettings`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordExpirationSettingsWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<i64>,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetRecordExpirationResponse {
    pub configuration: RecordExpirationValue,
}

/// `TableRecordExpirationJobMetrics`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecordExpirationMetricsWire {
    pub deleted_data_files: u64,
    pub deleted_records: u64,
    pub removed_files_size: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetRecordExpirationJobStatusResponse {
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<RecordExpirationMetricsWire>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableBucketMetricsResponse {
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub(crate) struct TagsBody {
    pub tags: BTreeMap<String, String>,
}
