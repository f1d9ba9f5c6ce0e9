//! Request and response bodies of the six table-migration operations (botocore's `s3tables` shapes; the
//! source members are `tablebay_migration`'s, whose shape the migration issue fixes). Kept apart from `wire.rs`
//! only for its size.

use serde::{Deserialize, Serialize};
use tablebay_migration::SourceConfiguration;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DestinationTableWire {
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub namespace: String,
    pub name: String,
    /// Members that shape a new Glue-converted table in AWS (encryption, storage class, tags, properties,
    /// schema, sort order): an Iceberg source brings its own schema and layout, so they are refused when set.
    #[serde(flatten)]
    pub others: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationReportPrefixes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_compatibility_report: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_compatibility_report: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_migration_report: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationOutputConfiguration {
    pub bucket: String,
    #[serde(default)]
    pub prefixes: Option<MigrationReportPrefixes>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartTableMigrationRequest {
    #[serde(rename = "roleARN")]
    pub role_arn: Option<String>,
    pub destination_table: Option<DestinationTableWire>,
    pub source_type: Option<String>,
    pub source: Option<SourceConfiguration>,
    #[serde(default)]
    pub data_migration: Option<serde_json::Value>,
    #[serde(default)]
    pub review_migration_plan: Option<bool>,
    pub migration_output: Option<MigrationOutputConfiguration>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncTableMigrationRequest {
    #[serde(rename = "roleARN")]
    pub role_arn: Option<String>,
    #[serde(rename = "tableARN")]
    pub table_arn: Option<String>,
    #[serde(default)]
    pub review_migration_plan: Option<bool>,
    pub migration_output: Option<MigrationOutputConfiguration>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateTableMigrationRequest {
    pub requested_state: Option<String>,
    #[serde(default)]
    pub update_description: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationStateResponse {
    pub migration_id: String,
    pub state: &'static str,
    #[serde(rename = "tableARN", skip_serializing_if = "Option::is_none")]
    pub table_arn: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FailureReasonWire {
    pub code: String,
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlanningStatsWire {
    pub objects_scanned: u64,
    pub objects_planned: u64,
    pub partition_count: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationStatsWire {
    pub objects_migrated: u64,
    pub objects_failed_migration: u64,
    pub objects_pending_migration: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportOverviewWire {
    pub prefix: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(rename = "checksumCRC64NVME", skip_serializing_if = "Option::is_none")]
    pub checksum_crc64nvme: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_findings: Option<std::collections::BTreeMap<String, u64>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationOutputOverviewWire {
    pub bucket: String,
    pub table_compatibility_report: ReportOverviewWire,
    pub object_compatibility_report: ReportOverviewWire,
    pub object_migration_report: ReportOverviewWire,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTableMigrationResponse {
    pub migration_id: String,
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub namespace: String,
    #[serde(rename = "tableARN", skip_serializing_if = "Option::is_none")]
    pub table_arn: Option<String>,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub state: &'static str,
    #[serde(rename = "roleARN")]
    pub role_arn: String,
    pub review_migration_plan: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_valid_plan: Option<bool>,
    pub created_at: String,
    pub state_updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<FailureReasonWire>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planning_stats: Option<PlanningStatsWire>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration_stats: Option<MigrationStatsWire>,
    pub source_type: String,
    pub source: SourceConfiguration,
    pub data_migration: serde_json::Value,
    pub migration_output: MigrationOutputOverviewWire,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MigrationSummaryWire {
    pub migration_id: String,
    #[serde(rename = "tableBucketARN")]
    pub table_bucket_arn: String,
    pub namespace: String,
    #[serde(rename = "tableARN", skip_serializing_if = "Option::is_none")]
    pub table_arn: Option<String>,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_valid_plan: Option<bool>,
    pub created_at: String,
    pub state_updated_at: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTableMigrationsResponse {
    pub migrations: Vec<MigrationSummaryWire>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}
