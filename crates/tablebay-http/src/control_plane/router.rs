//! Routing of the control plane: a pure function from method, raw path and query to an [`Endpoint`].
//!
//! The path is split on `/` *before* percent-decoding each segment, because ARNs travel as one encoded segment
//! (`arn%3Aaws%3As3tables%3A…%3Abucket%2Fname`, `reference/s3tables-api.md` §1.3); namespace and table names
//! are `[0-9a-z_]`, so the segment count tells every `/tables/…` route apart.

use http::Method;
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;

use super::error::ControlPlaneError;
use super::migration_wire::{
    StartTableMigrationRequest, SyncTableMigrationRequest, UpdateTableMigrationRequest,
};
use super::wire::{
    CreateNamespaceRequest, CreateTableBucketRequest, CreateTableRequest, EncryptionBody,
    PutMaintenanceRequest, PutRecordExpirationRequest, PutReplicationRequest, RenameTableRequest,
    ResourcePolicyBody, StorageClassBody, TableBucketLoggingBody, TagsBody,
    UpdateTableMetadataLocationRequest,
};
use crate::form::FormPairs;
use crate::pipeline::RequestBody;

/// A table named by bucket ARN, namespace and name, as path segments give it (not yet validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TablePath {
    pub bucket: String,
    pub namespace: String,
    pub name: String,
}

/// Listing parameters from the query string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ListQuery {
    pub prefix: Option<String>,
    pub continuation_token: Option<String>,
    /// `maxBuckets` / `maxNamespaces` / `maxTables`, unparsed.
    pub max: Option<String>,
}

/// ListTableMigrations' query, unparsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MigrationListQuery {
    pub bucket: Option<String>,
    pub table_arn: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub state: Option<String>,
    pub has_valid_plan: Option<String>,
    pub max_results: Option<String>,
    pub next_token: Option<String>,
}

/// How GetTable names its table: `/get-table?tableArn=` or `?tableBucketARN=&namespace=&name=`, or the legacy path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GetTableSelector {
    Arn(String),
    Path(TablePath),
}

/// Every control-plane operation this server answers, with every input it takes (path, query and body) parsed
/// once: authorization and the handler read the same values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Endpoint {
    CreateTableBucket {
        request: CreateTableBucketRequest,
    },
    ListTableBuckets {
        query: ListQuery,
        bucket_type: Option<String>,
    },
    GetTableBucket {
        bucket: String,
    },
    DeleteTableBucket {
        bucket: String,
    },
    PutTableBucketPolicy {
        bucket: String,
        request: ResourcePolicyBody,
    },
    GetTableBucketPolicy {
        bucket: String,
    },
    DeleteTableBucketPolicy {
        bucket: String,
    },
    PutTableBucketEncryption {
        bucket: String,
        request: EncryptionBody,
    },
    GetTableBucketEncryption {
        bucket: String,
    },
    DeleteTableBucketEncryption {
        bucket: String,
    },
    PutTableBucketMaintenanceConfiguration {
        bucket: String,
        job_type: String,
        request: PutMaintenanceRequest,
    },
    GetTableBucketMaintenanceConfiguration {
        bucket: String,
    },
    PutTableBucketStorageClass {
        bucket: String,
        request: StorageClassBody,
    },
    GetTableBucketStorageClass {
        bucket: String,
    },
    PutTableBucketMetricsConfiguration {
        bucket: String,
    },
    GetTableBucketMetricsConfiguration {
        bucket: String,
    },
    PutTableBucketLogging {
        bucket: String,
        request: TableBucketLoggingBody,
    },
    GetTableBucketLogging {
        bucket: String,
    },
    DeleteTableBucketMetricsConfiguration {
        bucket: String,
    },
    CreateNamespace {
        bucket: String,
        request: CreateNamespaceRequest,
    },
    ListNamespaces {
        bucket: String,
        query: ListQuery,
    },
    GetNamespace {
        bucket: String,
        namespace: String,
    },
    DeleteNamespace {
        bucket: String,
        namespace: String,
    },
    CreateTable {
        bucket: String,
        namespace: String,
        request: CreateTableRequest,
    },
    ListTables {
        bucket: String,
        namespace: Option<String>,
        query: ListQuery,
    },
    GetTable {
        table: GetTableSelector,
    },
    DeleteTable {
        table: TablePath,
        version_token: Option<String>,
    },
    RenameTable {
        table: TablePath,
        request: RenameTableRequest,
    },
    GetTableMetadataLocation {
        table: TablePath,
    },
    UpdateTableMetadataLocation {
        table: TablePath,
        request: UpdateTableMetadataLocationRequest,
    },
    PutTablePolicy {
        table: TablePath,
        request: ResourcePolicyBody,
    },
    GetTablePolicy {
        table: TablePath,
    },
    DeleteTablePolicy {
        table: TablePath,
    },
    GetTableEncryption {
        table: TablePath,
    },
    PutTableMaintenanceConfiguration {
        table: TablePath,
        job_type: String,
        request: PutMaintenanceRequest,
    },
    GetTableMaintenanceConfiguration {
        table: TablePath,
    },
    GetTableMaintenanceJobStatus {
        table: TablePath,
    },
    GetTableStorageClass {
        table: TablePath,
    },
    PutTableRecordExpirationConfiguration {
        table_arn: String,
        request: PutRecordExpirationRequest,
    },
    GetTableRecordExpirationConfiguration {
        table_arn: String,
    },
    GetTableRecordExpirationJobStatus {
        table_arn: String,
    },
    PutTableBucketReplication {
        bucket: String,
        version_token: Option<String>,
        request: PutReplicationRequest,
    },
    GetTableBucketReplication {
        bucket: String,
    },
    DeleteTableBucketReplication {
        bucket: String,
        version_token: Option<String>,
    },
    PutTableReplication {
        table_arn: String,
        version_token: Option<String>,
        request: PutReplicationRequest,
    },
    GetTableReplication {
        table_arn: String,
    },
    DeleteTableReplication {
        table_arn: String,
        version_token: String,
    },
    GetTableReplicationStatus {
        table_arn: String,
    },
    DisassociateTableReplication {
        table_arn: String,
    },
    StartTableMigration {
        /// Boxed: the source members make it the largest request by far.
        request: Box<StartTableMigrationRequest>,
    },
    SyncTableMigration {
        table_arn: String,
        request: SyncTableMigrationRequest,
    },
    UpdateTableMigration {
        table_arn: Option<String>,
        migration_id: Option<String>,
        request: UpdateTableMigrationRequest,
    },
    CompleteTableMigration {
        table_arn: String,
    },
    GetTableMigration {
        table_arn: Option<String>,
        migration_id: Option<String>,
    },
    ListTableMigrations {
        query: MigrationListQuery,
    },
    TagResource {
        arn: String,
        request: TagsBody,
    },
    UntagResource {
        arn: String,
        tag_keys: Vec<String>,
    },
    ListTagsForResource {
        arn: String,
    },
}

impl Endpoint {
    /// The table bucket ARN the request names, as spelled (path, or GetTable's query): what a virtual-hosted
    /// address must agree with. `None` for the operations without a bucket and for tagging (any resource ARN).
    pub(crate) fn bucket_arn(&self) -> Option<&str> {
        use Endpoint as E;
        match self {
            E::CreateTableBucket { .. }
            | E::ListTableBuckets { .. }
            | E::TagResource { .. }
            | E::UntagResource { .. }
            | E::ListTagsForResource { .. } => None,
            E::GetTableBucket { bucket }
            | E::DeleteTableBucket { bucket }
            | E::PutTableBucketPolicy { bucket, .. }
            | E::GetTableBucketPolicy { bucket }
            | E::DeleteTableBucketPolicy { bucket }
            | E::PutTableBucketEncryption { bucket, .. }
            | E::GetTableBucketEncryption { bucket }
            | E::DeleteTableBucketEncryption { bucket }
            | E::PutTableBucketMaintenanceConfiguration { bucket, .. }
            | E::GetTableBucketMaintenanceConfiguration { bucket }
            | E::PutTableBucketStorageClass { bucket, .. }
            | E::GetTableBucketStorageClass { bucket }
            | E::PutTableBucketMetricsConfiguration { bucket }
            | E::GetTableBucketMetricsConfiguration { bucket }
            | E::DeleteTableBucketMetricsConfiguration { bucket }
            | E::PutTableBucketLogging { bucket, .. }
            | E::GetTableBucketLogging { bucket }
            | E::CreateNamespace { bucket, .. }
            | E::ListNamespaces { bucket, .. }
            | E::GetNamespace { bucket, .. }
            | E::DeleteNamespace { bucket, .. }
            | E::CreateTable { bucket, .. }
            | E::ListTables { bucket, .. }
            | E::PutTableBucketReplication { bucket, .. }
            | E::GetTableBucketReplication { bucket }
            | E::DeleteTableBucketReplication { bucket, .. } => Some(bucket),
            E::GetTable {
                table: GetTableSelector::Arn(arn),
            }
            | E::PutTableRecordExpirationConfiguration { table_arn: arn, .. }
            | E::GetTableRecordExpirationConfiguration { table_arn: arn }
            | E::GetTableRecordExpirationJobStatus { table_arn: arn }
            | E::PutTableReplication { table_arn: arn, .. }
            | E::GetTableReplication { table_arn: arn }
            | E::DeleteTableReplication { table_arn: arn, .. }
            | E::GetTableReplicationStatus { table_arn: arn }
            | E::DisassociateTableReplication { table_arn: arn }
            | E::SyncTableMigration { table_arn: arn, .. }
            | E::CompleteTableMigration { table_arn: arn }
            | E::UpdateTableMigration {
                table_arn: Some(arn),
                ..
            }
            | E::GetTableMigration {
                table_arn: Some(arn),
                ..
            } => arn.split_once("/table/").map(|(bucket, _)| bucket),
            E::StartTableMigration { request } => request
                .destination_table
                .as_ref()
                .map(|d| d.table_bucket_arn.as_str()),
            E::ListTableMigrations { query } => match (&query.bucket, &query.table_arn) {
                (Some(bucket), _) => Some(bucket.as_str()),
                (None, Some(arn)) => arn.split_once("/table/").map(|(bucket, _)| bucket),
                (None, None) => None,
            },
            // Named by migration id alone: the service checks the migration is the caller's account's.
            E::UpdateTableMigration {
                table_arn: None, ..
            }
            | E::GetTableMigration {
                table_arn: None, ..
            } => None,
            E::GetTable {
                table: GetTableSelector::Path(table),
            }
            | E::DeleteTable { table, .. }
            | E::RenameTable { table, .. }
            | E::GetTableMetadataLocation { table }
            | E::UpdateTableMetadataLocation { table, .. }
            | E::PutTablePolicy { table, .. }
            | E::GetTablePolicy { table }
            | E::DeleteTablePolicy { table }
            | E::GetTableEncryption { table }
            | E::PutTableMaintenanceConfiguration { table, .. }
            | E::GetTableMaintenanceConfiguration { table }
            | E::GetTableMaintenanceJobStatus { table }
            | E::GetTableStorageClass { table } => Some(&table.bucket),
        }
    }

    /// The API operation name (logs, metrics, and the IAM action of the same name).
    pub(crate) fn operation(&self) -> &'static str {
        match self {
            Self::CreateTableBucket { .. } => "CreateTableBucket",
            Self::ListTableBuckets { .. } => "ListTableBuckets",
            Self::GetTableBucket { .. } => "GetTableBucket",
            Self::DeleteTableBucket { .. } => "DeleteTableBucket",
            Self::PutTableBucketPolicy { .. } => "PutTableBucketPolicy",
            Self::GetTableBucketPolicy { .. } => "GetTableBucketPolicy",
            Self::DeleteTableBucketPolicy { .. } => "DeleteTableBucketPolicy",
            Self::PutTableBucketEncryption { .. } => "PutTableBucketEncryption",
            Self::GetTableBucketEncryption { .. } => "GetTableBucketEncryption",
            Self::DeleteTableBucketEncryption { .. } => "DeleteTableBucketEncryption",
            Self::PutTableBucketMaintenanceConfiguration { .. } => {
                "PutTableBucketMaintenanceConfiguration"
            }
            Self::GetTableBucketMaintenanceConfiguration { .. } => {
                "GetTableBucketMaintenanceConfiguration"
            }
            Self::PutTableBucketStorageClass { .. } => "PutTableBucketStorageClass",
            Self::GetTableBucketStorageClass { .. } => "GetTableBucketStorageClass",
            Self::PutTableBucketLogging { .. } => "PutTableBucketLogging",
            Self::GetTableBucketLogging { .. } => "GetTableBucketLogging",
            Self::PutTableBucketMetricsConfiguration { .. } => "PutTableBucketMetricsConfiguration",
            Self::GetTableBucketMetricsConfiguration { .. } => "GetTableBucketMetricsConfiguration",
            Self::DeleteTableBucketMetricsConfiguration { .. } => {
                "DeleteTableBucketMetricsConfiguration"
            }
            Self::CreateNamespace { .. } => "CreateNamespace",
            Self::ListNamespaces { .. } => "ListNamespaces",
            Self::GetNamespace { .. } => "GetNamespace",
            Self::DeleteNamespace { .. } => "DeleteNamespace",
            Self::CreateTable { .. } => "CreateTable",
            Self::ListTables { .. } => "ListTables",
            Self::GetTable { .. } => "GetTable",
            Self::DeleteTable { .. } => "DeleteTable",
            Self::RenameTable { .. } => "RenameTable",
            Self::GetTableMetadataLocation { .. } => "GetTableMetadataLocation",
            Self::UpdateTableMetadataLocation { .. } => "UpdateTableMetadataLocation",
            Self::PutTablePolicy { .. } => "PutTablePolicy",
            Self::GetTablePolicy { .. } => "GetTablePolicy",
            Self::DeleteTablePolicy { .. } => "DeleteTablePolicy",
            Self::GetTableEncryption { .. } => "GetTableEncryption",
            Self::PutTableMaintenanceConfiguration { .. } => "PutTableMaintenanceConfiguration",
            Self::GetTableMaintenanceConfiguration { .. } => "GetTableMaintenanceConfiguration",
            Self::GetTableMaintenanceJobStatus { .. } => "GetTableMaintenanceJobStatus",
            Self::GetTableStorageClass { .. } => "GetTableStorageClass",
            Self::PutTableRecordExpirationConfiguration { .. } => {
                "PutTableRecordExpirationConfiguration"
            }
            Self::GetTableRecordExpirationConfiguration { .. } => {
                "GetTableRecordExpirationConfiguration"
            }
            Self::GetTableRecordExpirationJobStatus { .. } => "GetTableRecordExpirationJobStatus",
            Self::PutTableBucketReplication { .. } => "PutTableBucketReplication",
            Self::GetTableBucketReplication { .. } => "GetTableBucketReplication",
            Self::DeleteTableBucketReplication { .. } => "DeleteTableBucketReplication",
            Self::PutTableReplication { .. } => "PutTableReplication",
            Self::GetTableReplication { .. } => "GetTableReplication",
            Self::DeleteTableReplication { .. } => "DeleteTableReplication",
            Self::GetTableReplicationStatus { .. } => "GetTableReplicationStatus",
            Self::DisassociateTableReplication { .. } => "DisassociateTableReplication",
            Self::StartTableMigration { .. } => "StartTableMigration",
            Self::SyncTableMigration { .. } => "SyncTableMigration",
            Self::UpdateTableMigration { .. } => "UpdateTableMigration",
            Self::CompleteTableMigration { .. } => "CompleteTableMigration",
            Self::GetTableMigration { .. } => "GetTableMigration",
            Self::ListTableMigrations { .. } => "ListTableMigrations",
            Self::TagResource { .. } => "TagResource",
            Self::UntagResource { .. } => "UntagResource",
            Self::ListTagsForResource { .. } => "ListTagsForResource",
        }
    }
}

fn first(pairs: &FormPairs, key: &str) -> Option<String> {
    pairs.first(key).map(str::to_string)
}

/// A query member the model marks required: its absence is a 400 naming it.
fn required(pairs: &FormPairs, key: &str) -> Result<String, ControlPlaneError> {
    first(pairs, key)
        .ok_or_else(|| ControlPlaneError::BadRequest(format!("Missing required parameter {key}")))
}

/// Splits the raw path into decoded segments. A proxy that decoded `%2F` inside a bucket ARN leaves
/// `…:bucket` and the bucket name as two segments: they are joined again, but only when the ARN arrived
/// unencoded (a client that encodes `:` encoded its `/` too) and the next segment is not the last one naming a
/// sub-resource. Otherwise a malformed ARN such as `…:bucket` followed by `/policy` would read as the ARN of a
/// bucket named `policy`, and `DELETE /buckets/{arn}/policy` as deleting that bucket.
fn segments(path: &str) -> Result<Vec<String>, ControlPlaneError> {
    const SUB_RESOURCES: [&str; 9] = [
        "policy",
        "encryption",
        "maintenance",
        "maintenance-job-status",
        "metrics",
        "storage-class",
        "logging",
        "metadata-location",
        "rename",
    ];
    let raws: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<String> = Vec::new();
    let mut joinable = false;
    for (i, raw) in raws.iter().enumerate() {
        let decoded = percent_decode_str(raw)
            .decode_utf8()
            .map_err(|_| {
                ControlPlaneError::BadRequest("The request path is not valid UTF-8".to_string())
            })?
            .into_owned();
        let names_sub_resource = i + 1 == raws.len() && SUB_RESOURCES.contains(&decoded.as_str());
        match out.last_mut() {
            Some(last) if joinable && !names_sub_resource => {
                last.push('/');
                last.push_str(&decoded);
                joinable = false;
            }
            _ => {
                joinable = !raw.contains('%') && decoded.ends_with(":bucket");
                out.push(decoded);
            }
        }
    }
    if out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    Ok(out)
}

/// Parses a JSON request body into its request type; a blank body reads as `{}` (botocore omits bodies without
/// members), and one that does not parse is a 400.
fn json<T: DeserializeOwned>(body: &RequestBody) -> Result<T, ControlPlaneError> {
    body.json(true)
        .map_err(|e| ControlPlaneError::BadRequest(format!("Invalid request body: {e}")))
}

/// Maps a request to its operation, with its body parsed; anything else is a 400 naming what was asked.
pub(crate) fn route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    body: &RequestBody,
) -> Result<Endpoint, ControlPlaneError> {
    let segs = segments(path)?;
    let q = FormPairs::query(query).map_err(|e| ControlPlaneError::BadRequest(e.to_string()))?;
    let list = |max_key: &str| ListQuery {
        prefix: first(&q, "prefix"),
        continuation_token: first(&q, "continuationToken"),
        max: first(&q, max_key),
    };
    let seg: Vec<&str> = segs.iter().map(String::as_str).collect();
    let table = |b: &str, n: &str, t: &str| TablePath {
        bucket: b.to_string(),
        namespace: n.to_string(),
        name: t.to_string(),
    };
    let m = method.clone();
    use Endpoint as E;
    let endpoint = match (m, seg.as_slice()) {
        (Method::PUT, ["buckets"]) => E::CreateTableBucket {
            request: json(body)?,
        },
        (Method::GET, ["buckets"]) => E::ListTableBuckets {
            query: list("maxBuckets"),
            bucket_type: first(&q, "type"),
        },
        (Method::GET, ["buckets", b]) => E::GetTableBucket {
            bucket: b.to_string(),
        },
        (Method::DELETE, ["buckets", b]) => E::DeleteTableBucket {
            bucket: b.to_string(),
        },
        (Method::PUT, ["buckets", b, "policy"]) => E::PutTableBucketPolicy {
            bucket: b.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["buckets", b, "policy"]) => E::GetTableBucketPolicy {
            bucket: b.to_string(),
        },
        (Method::DELETE, ["buckets", b, "policy"]) => E::DeleteTableBucketPolicy {
            bucket: b.to_string(),
        },
        (Method::PUT, ["buckets", b, "encryption"]) => E::PutTableBucketEncryption {
            bucket: b.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["buckets", b, "encryption"]) => E::GetTableBucketEncryption {
            bucket: b.to_string(),
        },
        (Method::DELETE, ["buckets", b, "encryption"]) => E::DeleteTableBucketEncryption {
            bucket: b.to_string(),
        },
        (Method::GET, ["buckets", b, "maintenance"]) => E::GetTableBucketMaintenanceConfiguration {
            bucket: b.to_string(),
        },
        (Method::PUT, ["buckets", b, "maintenance", t]) => {
            E::PutTableBucketMaintenanceConfiguration {
                bucket: b.to_string(),
                job_type: t.to_string(),
                request: json(body)?,
            }
        }
        (Method::PUT, ["buckets", b, "storage-class"]) => E::PutTableBucketStorageClass {
            bucket: b.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["buckets", b, "storage-class"]) => E::GetTableBucketStorageClass {
            bucket: b.to_string(),
        },
        (Method::PUT, ["buckets", b, "metrics"]) => E::PutTableBucketMetricsConfiguration {
            bucket: b.to_string(),
        },
        (Method::GET, ["buckets", b, "metrics"]) => E::GetTableBucketMetricsConfiguration {
            bucket: b.to_string(),
        },
        (Method::DELETE, ["buckets", b, "metrics"]) => E::DeleteTableBucketMetricsConfiguration {
            bucket: b.to_string(),
        },
        (Method::PUT, ["buckets", b, "logging"]) => E::PutTableBucketLogging {
            bucket: b.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["buckets", b, "logging"]) => E::GetTableBucketLogging {
            bucket: b.to_string(),
        },
        (Method::PUT, ["namespaces", b]) => E::CreateNamespace {
            bucket: b.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["namespaces", b]) => E::ListNamespaces {
            bucket: b.to_string(),
            query: list("maxNamespaces"),
        },
        (Method::GET, ["namespaces", b, n]) => E::GetNamespace {
            bucket: b.to_string(),
            namespace: n.to_string(),
        },
        (Method::DELETE, ["namespaces", b, n]) => E::DeleteNamespace {
            bucket: b.to_string(),
            namespace: n.to_string(),
        },
        (Method::GET, ["tables", b]) => E::ListTables {
            bucket: b.to_string(),
            namespace: first(&q, "namespace"),
            query: list("maxTables"),
        },
        (Method::PUT, ["tables", b, n]) => E::CreateTable {
            bucket: b.to_string(),
            namespace: n.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["tables", b, n, t]) => E::GetTable {
            table: GetTableSelector::Path(table(b, n, t)),
        },
        (Method::DELETE, ["tables", b, n, t]) => E::DeleteTable {
            table: table(b, n, t),
            version_token: first(&q, "versionToken"),
        },
        (Method::PUT, ["tables", b, n, t, "rename"]) => E::RenameTable {
            table: table(b, n, t),
            request: json(body)?,
        },
        (Method::GET, ["tables", b, n, t, "metadata-location"]) => E::GetTableMetadataLocation {
            table: table(b, n, t),
        },
        (Method::PUT, ["tables", b, n, t, "metadata-location"]) => E::UpdateTableMetadataLocation {
            table: table(b, n, t),
            request: json(body)?,
        },
        (Method::PUT, ["tables", b, n, t, "policy"]) => E::PutTablePolicy {
            table: table(b, n, t),
            request: json(body)?,
        },
        (Method::GET, ["tables", b, n, t, "policy"]) => E::GetTablePolicy {
            table: table(b, n, t),
        },
        (Method::DELETE, ["tables", b, n, t, "policy"]) => E::DeleteTablePolicy {
            table: table(b, n, t),
        },
        (Method::GET, ["tables", b, n, t, "encryption"]) => E::GetTableEncryption {
            table: table(b, n, t),
        },
        (Method::GET, ["tables", b, n, t, "maintenance"]) => E::GetTableMaintenanceConfiguration {
            table: table(b, n, t),
        },
        (Method::PUT, ["tables", b, n, t, "maintenance", job]) => {
            E::PutTableMaintenanceConfiguration {
                table: table(b, n, t),
                job_type: job.to_string(),
                request: json(body)?,
            }
        }
        (Method::GET, ["tables", b, n, t, "maintenance-job-status"]) => {
            E::GetTableMaintenanceJobStatus {
                table: table(b, n, t),
            }
        }
        (Method::GET, ["tables", b, n, t, "storage-class"]) => E::GetTableStorageClass {
            table: table(b, n, t),
        },
        (Method::GET, ["get-table"]) => {
            let by_arn = first(&q, "tableArn");
            let by_name = (
                first(&q, "tableBucketARN"),
                first(&q, "namespace"),
                first(&q, "name"),
            );
            let selector = match (by_arn, by_name) {
                (Some(arn), (None, None, None)) => GetTableSelector::Arn(arn),
                (None, (Some(b), Some(n), Some(t))) => GetTableSelector::Path(table(&b, &n, &t)),
                _ => {
                    return Err(ControlPlaneError::BadRequest(
                        "Specify either tableArn, or tableBucketARN together with namespace and name".to_string(),
                    ));
                }
            };
            E::GetTable { table: selector }
        }
        (Method::POST, ["tag", arn]) => E::TagResource {
            arn: arn.to_string(),
            request: json(body)?,
        },
        (Method::GET, ["tag", arn]) => E::ListTagsForResource {
            arn: arn.to_string(),
        },
        (Method::DELETE, ["tag", arn]) => E::UntagResource {
            arn: arn.to_string(),
            tag_keys: q.all("tagKeys").map(str::to_string).collect(),
        },
        (Method::PUT, ["table-record-expiration"]) => E::PutTableRecordExpirationConfiguration {
            table_arn: required(&q, "tableArn")?,
            request: json(body)?,
        },
        (Method::GET, ["table-record-expiration"]) => E::GetTableRecordExpirationConfiguration {
            table_arn: required(&q, "tableArn")?,
        },
        (Method::GET, ["table-record-expiration-job-status"]) => {
            E::GetTableRecordExpirationJobStatus {
                table_arn: required(&q, "tableArn")?,
            }
        }
        (Method::PUT, ["table-bucket-replication"]) => E::PutTableBucketReplication {
            bucket: required(&q, "tableBucketARN")?,
            version_token: first(&q, "versionToken"),
            request: json(body)?,
        },
        (Method::GET, ["table-bucket-replication"]) => E::GetTableBucketReplication {
            bucket: required(&q, "tableBucketARN")?,
        },
        (Method::DELETE, ["table-bucket-replication"]) => E::DeleteTableBucketReplication {
            bucket: required(&q, "tableBucketARN")?,
            version_token: first(&q, "versionToken"),
        },
        (Method::PUT, ["table-replication"]) => E::PutTableReplication {
            table_arn: required(&q, "tableArn")?,
            version_token: first(&q, "versionToken"),
            request: json(body)?,
        },
        (Method::GET, ["table-replication"]) => E::GetTableReplication {
            table_arn: required(&q, "tableArn")?,
        },
        (Method::DELETE, ["table-replication"]) => E::DeleteTableReplication {
            table_arn: required(&q, "tableArn")?,
            version_token: required(&q, "versionToken")?,
        },
        (Method::GET, ["replication-status"]) => E::GetTableReplicationStatus {
            table_arn: required(&q, "tableArn")?,
        },
        (Method::PUT, ["table-replication", "disassociate"]) => E::DisassociateTableReplication {
            table_arn: required(&q, "tableArn")?,
        },
        (
            m,
            ["table-bucket-replication" | "table-replication" | "replication-status"]
            | ["table-replication", "disassociate"],
        ) => {
            return Err(ControlPlaneError::MethodNotAllowed(format!(
                "The method {m} is not allowed on {path}"
            )));
        }
        (Method::POST, ["start-table-migration"]) => E::StartTableMigration {
            request: Box::new(json(body)?),
        },
        (Method::POST, ["sync-table-migration"]) => {
            let request: SyncTableMigrationRequest = json(body)?;
            E::SyncTableMigration {
                table_arn: request.table_arn.clone().ok_or_else(|| {
                    ControlPlaneError::BadRequest("Missing required parameter tableARN".into())
                })?,
                request,
            }
        }
        (Method::POST, ["update-table-migration"]) => E::UpdateTableMigration {
            table_arn: first(&q, "tableARN"),
            migration_id: first(&q, "migrationId"),
            request: json(body)?,
        },
        (Method::POST, ["complete-table-migration"]) => E::CompleteTableMigration {
            table_arn: required(&q, "tableARN")?,
        },
        (Method::GET, ["get-table-migration"]) => E::GetTableMigration {
            table_arn: first(&q, "tableARN"),
            migration_id: first(&q, "migrationId"),
        },
        (Method::GET, ["list-table-migrations"]) => E::ListTableMigrations {
            query: MigrationListQuery {
                bucket: first(&q, "tableBucketARN"),
                table_arn: first(&q, "tableARN"),
                namespace: first(&q, "namespace"),
                name: first(&q, "name"),
                state: first(&q, "state"),
                has_valid_plan: first(&q, "hasValidPlan"),
                max_results: first(&q, "maxResults"),
                next_token: first(&q, "nextToken"),
            },
        },
        (
            m,
            [
                "start-table-migration"
                | "sync-table-migration"
                | "update-table-migration"
                | "complete-table-migration"
                | "get-table-migration"
                | "list-table-migrations",
            ],
        ) => {
            return Err(ControlPlaneError::MethodNotAllowed(format!(
                "The method {m} is not allowed on {path}"
            )));
        }
        (m, ["table-record-expiration" | "table-record-expiration-job-status"]) => {
            return Err(ControlPlaneError::MethodNotAllowed(format!(
                "The method {m} is not allowed on {path}"
            )));
        }
        (m, _) => {
            return Err(ControlPlaneError::BadRequest(format!(
                "The operation {m} {path} is not supported by this server"
            )));
        }
    };
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket";
    const ARN: &str = "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket";

    fn parsed<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    const BUCKET_BODY: &str = r#"{"name":"mybucket"}"#;
    const POLICY_BODY: &str = r#"{"resourcePolicy":"{}"}"#;
    const MAINTENANCE_BODY: &str = r#"{"value":{"status":"enabled"}}"#;
    const NAMESPACE_BODY: &str = r#"{"namespace":["ns1"]}"#;
    const TABLE_BODY: &str = r#"{"name":"t1","format":"ICEBERG"}"#;
    const LOCATION_BODY: &str = r#"{"versionToken":"vt","metadataLocation":"s3://x/m.json"}"#;
    const TAGS_BODY: &str = r#"{"tags":{"a":"b"}}"#;
    const EXPIRATION_BODY: &str = r#"{"value":{"status":"enabled","settings":{"days":7}}}"#;
    const REPLICATION_BODY: &str = r#"{"configuration":{"role":"arn:aws:iam::111122223333:role/r","rules":[{"destinations":[{"destinationTableBucketARN":"arn:aws:s3tables:us-east-1:111122223333:bucket/d"}]}]}}"#;
    const TABLE_ARN: &str = "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket/table/x";
    const UPDATE_MIGRATION_BODY: &str = r#"{"requestedState":"queued"}"#;
    const MIGRATION_TABLE_Q: &str =
        "tableARN=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket%2Ftable%2Fx";
    const TABLE_Q: &str =
        "tableArn=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket%2Ftable%2Fx";

    fn tp() -> TablePath {
        TablePath {
            bucket: ARN.into(),
            namespace: "ns1".into(),
            name: "t1".into(),
        }
    }

    /// The wire examples of `reference/s3tables-api.md` §5 and §2, request line → operation.
    #[test]
    fn routes_every_documented_request_line() {
        let cases: Vec<(Method, String, Option<&str>, Endpoint)> = vec![
            (
                Method::PUT,
                "/buckets".into(),
                None,
                Endpoint::CreateTableBucket {
                    request: parsed(BUCKET_BODY),
                },
            ),
            (
                Method::GET,
                "/buckets".into(),
                Some("prefix=my&maxBuckets=10&continuationToken=tok%3D%3D&type=customer"),
                Endpoint::ListTableBuckets {
                    query: ListQuery {
                        prefix: Some("my".into()),
                        continuation_token: Some("tok==".into()),
                        max: Some("10".into()),
                    },
                    bucket_type: Some("customer".into()),
                },
            ),
            (
                Method::GET,
                format!("/buckets/{B}"),
                None,
                Endpoint::GetTableBucket { bucket: ARN.into() },
            ),
            (
                Method::DELETE,
                format!("/buckets/{B}"),
                None,
                Endpoint::DeleteTableBucket { bucket: ARN.into() },
            ),
            (
                Method::PUT,
                format!("/buckets/{B}/policy"),
                None,
                Endpoint::PutTableBucketPolicy {
                    bucket: ARN.into(),
                    request: parsed(POLICY_BODY),
                },
            ),
            (
                Method::GET,
                format!("/buckets/{B}/encryption"),
                None,
                Endpoint::GetTableBucketEncryption { bucket: ARN.into() },
            ),
            (
                Method::PUT,
                format!("/buckets/{B}/maintenance/icebergUnreferencedFileRemoval"),
                None,
                Endpoint::PutTableBucketMaintenanceConfiguration {
                    bucket: ARN.into(),
                    job_type: "icebergUnreferencedFileRemoval".into(),
                    request: parsed(MAINTENANCE_BODY),
                },
            ),
            (
                Method::PUT,
                format!("/buckets/{B}/metrics"),
                None,
                Endpoint::PutTableBucketMetricsConfiguration { bucket: ARN.into() },
            ),
            (
                Method::PUT,
                format!("/namespaces/{B}"),
                None,
                Endpoint::CreateNamespace {
                    bucket: ARN.into(),
                    request: parsed(NAMESPACE_BODY),
                },
            ),
            (
                Method::GET,
                format!("/namespaces/{B}"),
                Some("prefix=n&maxNamespaces=5"),
                Endpoint::ListNamespaces {
                    bucket: ARN.into(),
                    query: ListQuery {
                        prefix: Some("n".into()),
                        continuation_token: None,
                        max: Some("5".into()),
                    },
                },
            ),
            (
                Method::DELETE,
                format!("/namespaces/{B}/ns1"),
                None,
                Endpoint::DeleteNamespace {
                    bucket: ARN.into(),
                    namespace: "ns1".into(),
                },
            ),
            (
                Method::PUT,
                format!("/tables/{B}/ns1"),
                None,
                Endpoint::CreateTable {
                    bucket: ARN.into(),
                    namespace: "ns1".into(),
                    request: parsed(TABLE_BODY),
                },
            ),
            (
                Method::GET,
                format!("/tables/{B}"),
                Some("namespace=ns1&prefix=t&maxTables=3&continuationToken=abc%2F%2B%3D"),
                Endpoint::ListTables {
                    bucket: ARN.into(),
                    namespace: Some("ns1".into()),
                    query: ListQuery {
                        prefix: Some("t".into()),
                        continuation_token: Some("abc/+=".into()),
                        max: Some("3".into()),
                    },
                },
            ),
            (
                Method::GET,
                format!("/tables/{B}/ns1/t1"),
                None,
                Endpoint::GetTable {
                    table: GetTableSelector::Path(tp()),
                },
            ),
            (
                Method::GET,
                "/get-table".into(),
                Some(
                    "tableBucketARN=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket&namespace=ns1&name=t1",
                ),
                Endpoint::GetTable {
                    table: GetTableSelector::Path(tp()),
                },
            ),
            (
                Method::GET,
                "/get-table".into(),
                Some(
                    "tableArn=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket%2Ftable%2Fx",
                ),
                Endpoint::GetTable {
                    table: GetTableSelector::Arn(format!("{ARN}/table/x")),
                },
            ),
            (
                Method::DELETE,
                format!("/tables/{B}/ns1/t1"),
                Some("versionToken=vt1"),
                Endpoint::DeleteTable {
                    table: tp(),
                    version_token: Some("vt1".into()),
                },
            ),
            (
                Method::PUT,
                format!("/tables/{B}/ns1/t1/rename"),
                None,
                Endpoint::RenameTable {
                    table: tp(),
                    request: RenameTableRequest::default(),
                },
            ),
            (
                Method::PUT,
                format!("/tables/{B}/ns1/t1/metadata-location"),
                None,
                Endpoint::UpdateTableMetadataLocation {
                    table: tp(),
                    request: parsed(LOCATION_BODY),
                },
            ),
            (
                Method::GET,
                format!("/tables/{B}/ns1/t1/metadata-location"),
                None,
                Endpoint::GetTableMetadataLocation { table: tp() },
            ),
            (
                Method::PUT,
                format!("/tables/{B}/ns1/t1/maintenance/icebergCompaction"),
                None,
                Endpoint::PutTableMaintenanceConfiguration {
                    table: tp(),
                    job_type: "icebergCompaction".into(),
                    request: parsed(MAINTENANCE_BODY),
                },
            ),
            (
                Method::GET,
                format!("/tables/{B}/ns1/t1/maintenance-job-status"),
                None,
                Endpoint::GetTableMaintenanceJobStatus { table: tp() },
            ),
            (
                Method::POST,
                format!("/tag/{B}"),
                None,
                Endpoint::TagResource {
                    arn: ARN.into(),
                    request: parsed(TAGS_BODY),
                },
            ),
            (
                Method::DELETE,
                format!("/tag/{B}"),
                Some("tagKeys=a&tagKeys=b"),
                Endpoint::UntagResource {
                    arn: ARN.into(),
                    tag_keys: vec!["a".into(), "b".into()],
                },
            ),
            (
                Method::PUT,
                "/table-record-expiration".into(),
                Some(TABLE_Q),
                Endpoint::PutTableRecordExpirationConfiguration {
                    table_arn: TABLE_ARN.into(),
                    request: parsed(EXPIRATION_BODY),
                },
            ),
            (
                Method::GET,
                "/table-record-expiration".into(),
                Some(TABLE_Q),
                Endpoint::GetTableRecordExpirationConfiguration {
                    table_arn: TABLE_ARN.into(),
                },
            ),
            (
                Method::GET,
                "/table-record-expiration-job-status".into(),
                Some(TABLE_Q),
                Endpoint::GetTableRecordExpirationJobStatus {
                    table_arn: TABLE_ARN.into(),
                },
            ),
            (
                Method::PUT,
                "/table-bucket-replication".into(),
                Some(
                    "tableBucketARN=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket&versionToken=v1",
                ),
                Endpoint::PutTableBucketReplication {
                    bucket: ARN.into(),
                    version_token: Some("v1".into()),
                    request: parsed(REPLICATION_BODY),
                },
            ),
            (
                Method::DELETE,
                "/table-bucket-replication".into(),
                Some(
                    "tableBucketARN=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket",
                ),
                Endpoint::DeleteTableBucketReplication {
                    bucket: ARN.into(),
                    version_token: None,
                },
            ),
            (
                Method::PUT,
                "/table-replication".into(),
                Some(TABLE_Q),
                Endpoint::PutTableReplication {
                    table_arn: TABLE_ARN.into(),
                    version_token: None,
                    request: parsed(REPLICATION_BODY),
                },
            ),
            (
                Method::DELETE,
                "/table-replication".into(),
                Some(
                    "tableArn=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket%2Ftable%2Fx&versionToken=v2",
                ),
                Endpoint::DeleteTableReplication {
                    table_arn: TABLE_ARN.into(),
                    version_token: "v2".into(),
                },
            ),
            (
                Method::GET,
                "/get-table-migration".into(),
                Some("migrationId=0190d6f0-0000-7000-8000-000000000000"),
                Endpoint::GetTableMigration {
                    table_arn: None,
                    migration_id: Some("0190d6f0-0000-7000-8000-000000000000".into()),
                },
            ),
            (
                Method::POST,
                "/complete-table-migration".into(),
                Some(MIGRATION_TABLE_Q),
                Endpoint::CompleteTableMigration {
                    table_arn: TABLE_ARN.into(),
                },
            ),
            (
                Method::POST,
                "/update-table-migration".into(),
                Some("migrationId=m1"),
                Endpoint::UpdateTableMigration {
                    table_arn: None,
                    migration_id: Some("m1".into()),
                    request: parsed(UPDATE_MIGRATION_BODY),
                },
            ),
            (
                Method::GET,
                "/replication-status".into(),
                Some(TABLE_Q),
                Endpoint::GetTableReplicationStatus {
                    table_arn: TABLE_ARN.into(),
                },
            ),
            (
                Method::PUT,
                "/table-replication/disassociate".into(),
                Some(TABLE_Q),
                Endpoint::DisassociateTableReplication {
                    table_arn: TABLE_ARN.into(),
                },
            ),
            (
                Method::GET,
                "/list-table-migrations".into(),
                Some(
                    "tableBucketARN=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket&state=failed&maxResults=5",
                ),
                Endpoint::ListTableMigrations {
                    query: MigrationListQuery {
                        bucket: Some(ARN.into()),
                        state: Some("failed".into()),
                        max_results: Some("5".into()),
                        ..MigrationListQuery::default()
                    },
                },
            ),
            // A raw `:` and a proxy-decoded `%2F` are both tolerated.
            (
                Method::GET,
                format!("/buckets/{ARN}"),
                None,
                Endpoint::GetTableBucket { bucket: ARN.into() },
            ),
            (
                Method::GET,
                format!("/tables/{ARN}/ns1/t1/policy"),
                None,
                Endpoint::GetTablePolicy { table: tp() },
            ),
            // An encoded ARN without a bucket name stays malformed: never the ARN of a bucket named after the
            // next segment (which would make this delete a bucket named `policy`).
            (
                Method::DELETE,
                "/buckets/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket/policy"
                    .to_string(),
                None,
                Endpoint::DeleteTableBucketPolicy {
                    bucket: "arn:aws:s3tables:us-east-1:111122223333:bucket".into(),
                },
            ),
            (
                Method::DELETE,
                "/buckets/arn:aws:s3tables:us-east-1:111122223333:bucket/policy".to_string(),
                None,
                Endpoint::DeleteTableBucketPolicy {
                    bucket: "arn:aws:s3tables:us-east-1:111122223333:bucket".into(),
                },
            ),
        ];
        for (method, path, query, expected) in cases {
            // Each operation with a body gets the one its expected endpoint was parsed from.
            let body = match &expected {
                Endpoint::CreateTableBucket { .. } => BUCKET_BODY,
                Endpoint::PutTableBucketPolicy { .. } => POLICY_BODY,
                Endpoint::PutTableBucketMaintenanceConfiguration { .. }
                | Endpoint::PutTableMaintenanceConfiguration { .. } => MAINTENANCE_BODY,
                Endpoint::CreateNamespace { .. } => NAMESPACE_BODY,
                Endpoint::CreateTable { .. } => TABLE_BODY,
                Endpoint::UpdateTableMetadataLocation { .. } => LOCATION_BODY,
                Endpoint::TagResource { .. } => TAGS_BODY,
                Endpoint::PutTableRecordExpirationConfiguration { .. } => EXPIRATION_BODY,
                Endpoint::PutTableBucketReplication { .. }
                | Endpoint::PutTableReplication { .. } => REPLICATION_BODY,
                Endpoint::UpdateTableMigration { .. } => UPDATE_MIGRATION_BODY,
                _ => "",
            };
            let body = RequestBody::new(bytes::Bytes::from(body));
            assert_eq!(
                route(&method, &path, query, &body).unwrap(),
                expected,
                "{method} {path}"
            );
        }
    }

    #[test]
    fn rejects_unknown_and_ambiguous_requests() {
        let none = RequestBody::default();
        assert!(route(&Method::POST, "/buckets", None, &none).is_err());
        assert!(route(&Method::GET, "/nothing", None, &none).is_err());
        assert!(route(&Method::GET, "/get-table", Some("tableArn=x&name=t"), &none).is_err());
        assert!(
            route(
                &Method::GET,
                "/get-table",
                Some("namespace=n&name=t"),
                &none
            )
            .is_err()
        );
        assert!(route(&Method::GET, "/buckets/%FF", None, &none).is_err());
        // DeleteTableReplication requires its version token.
        assert!(
            route(
                &Method::DELETE,
                "/table-replication",
                Some("tableArn=x"),
                &none
            )
            .is_err()
        );
        assert!(route(&Method::PUT, "/table-bucket-replication", None, &none).is_err());
        // The table ARN is required; a body without `value` is malformed.
        assert!(route(&Method::GET, "/table-record-expiration", None, &none).is_err());
        let no_value = RequestBody::new(bytes::Bytes::from_static(b"{}"));
        let err = route(
            &Method::PUT,
            "/table-record-expiration",
            Some("tableArn=x"),
            &no_value,
        )
        .unwrap_err();
        assert!(matches!(err, ControlPlaneError::BadRequest(_)), "{err:?}");
        // Migration operations keep their model's methods; Complete and Sync need their table.
        let err = route(&Method::GET, "/start-table-migration", None, &none).unwrap_err();
        assert!(
            matches!(err, ControlPlaneError::MethodNotAllowed(_)),
            "{err:?}"
        );
        assert!(route(&Method::POST, "/complete-table-migration", None, &none).is_err());
        let no_table = RequestBody::new(bytes::Bytes::from_static(b"{\"roleARN\":\"r\"}"));
        assert!(route(&Method::POST, "/sync-table-migration", None, &no_table).is_err());
        // A body is parsed once, strictly: not UTF-8, not JSON, or the wrong shape is a 400.
        for body in [&b"{\"name\":\"b\xff\"}"[..], b"{", b"[]", b"{\"name\":1}"] {
            let body = RequestBody::new(bytes::Bytes::copy_from_slice(body));
            let err = route(&Method::PUT, "/buckets", None, &body).unwrap_err();
            assert!(matches!(err, ControlPlaneError::BadRequest(_)), "{err:?}");
        }
    }
}
