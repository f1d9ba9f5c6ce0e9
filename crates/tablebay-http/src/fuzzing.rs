//! Entry points for the cargo-fuzz targets in `fuzz/` (not an API: hidden, and nothing in the server calls it).
//!
//! Each function runs one surface's router, the same pure function the pipeline calls, on a method, raw path,
//! raw query and body, and reports what the typed endpoint names: the values authorization (`access.rs`) derives
//! its resources from, and the handler then acts on. The targets check those against an independent reading of
//! the same request.

use bytes::Bytes;
use http::{HeaderMap, Method};

use crate::control_plane::router::{self as control_plane, GetTableSelector};
use crate::iceberg::router::{self as iceberg, Ident};
use crate::pipeline::{RequestBody, WireError};

/// A table or view identifier as a body spells it: namespace levels and name.
pub type BodyIdentifier = (Vec<String>, String);

/// What an Iceberg REST request names once routed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IcebergNames {
    /// The operation (`commitTransaction`, `renameTable`, …).
    pub operation: &'static str,
    /// Whether the endpoint was parsed from the body (every `POST`).
    pub reads_body: bool,
    /// The prefix (or `warehouse` of `GET /v1/config`): the bucket every need is on.
    pub prefix: Option<String>,
    /// The tables `access.rs` looks up and authorizes, in order, as (namespace, name): the path's table, every
    /// change of a transaction, the source of a rename.
    pub tables: Vec<(String, String)>,
    /// Every table or view identifier the body names, in order: a commit's optional `identifier`, each
    /// transaction change's `identifier`, a rename's `source` then `destination`.
    pub body_identifiers: Vec<BodyIdentifier>,
}

/// Routes an Iceberg REST request (path under `/iceberg/v1/`) with no headers; the error is the answer's status.
pub fn iceberg_route(
    method: &Method,
    raw_path: &str,
    raw_query: Option<&str>,
    body: &[u8],
) -> Result<IcebergNames, u16> {
    use iceberg::Endpoint as E;
    let body = RequestBody::new(Bytes::copy_from_slice(body));
    let endpoint = iceberg::route(method, raw_path, raw_query, &HeaderMap::new(), &body)
        .map_err(|e| e.status().as_u16())?;
    let pair = |ident: &Ident| (ident.namespace.clone(), ident.name.clone());
    let operation = endpoint.operation();
    let (prefix, tables, body_identifiers) = match &endpoint {
        E::Config { warehouse } => (warehouse.clone(), vec![], vec![]),
        E::ListNamespaces { prefix, .. }
        | E::CreateNamespace { prefix, .. }
        | E::LoadNamespace { prefix, .. }
        | E::NamespaceExists { prefix, .. }
        | E::DropNamespace { prefix, .. }
        | E::UpdateNamespaceProperties { prefix, .. }
        | E::ListTables { prefix, .. }
        | E::CreateTable { prefix, .. }
        | E::RegisterTable { prefix, .. }
        | E::ListViews { prefix, .. }
        | E::CreateView { prefix, .. }
        | E::LoadView { prefix, .. }
        | E::ViewExists { prefix, .. }
        | E::ReplaceView { prefix, .. }
        | E::DropView { prefix, .. }
        | E::RegisterView { prefix, .. } => (Some(prefix.clone()), vec![], vec![]),
        E::SignRequest { table: None, .. } => (None, vec![], vec![]),
        E::SignRequest {
            table: Some((prefix, table)),
            ..
        } => (Some(prefix.clone()), vec![pair(table)], vec![]),
        E::LoadTable { prefix, table, .. }
        | E::TableExists { prefix, table }
        | E::DropTable { prefix, table, .. }
        | E::ReportMetrics { prefix, table }
        | E::LoadCredentials { prefix, table }
        | E::UnregisterTable { prefix, table } => (Some(prefix.clone()), vec![pair(table)], vec![]),
        E::CommitTable {
            prefix,
            table,
            request,
        } => (
            Some(prefix.clone()),
            vec![pair(table)],
            request
                .identifier
                .iter()
                .map(|id| (id.namespace.clone(), id.name.clone()))
                .collect(),
        ),
        E::RenameTable {
            prefix,
            source,
            destination,
        } => (
            Some(prefix.clone()),
            vec![pair(source)],
            vec![single(source), single(destination)],
        ),
        E::RenameView {
            prefix,
            source,
            destination,
        } => (
            Some(prefix.clone()),
            vec![],
            vec![single(source), single(destination)],
        ),
        E::CommitTransaction { prefix, changes } => (
            Some(prefix.clone()),
            changes.iter().map(|(ident, _)| pair(ident)).collect(),
            changes
                .iter()
                .map(|(ident, change)| match &change.identifier {
                    Some(id) => (id.namespace.clone(), id.name.clone()),
                    None => single(ident),
                })
                .collect(),
        ),
    };
    Ok(IcebergNames {
        operation,
        reads_body: *method == Method::POST,
        prefix,
        tables,
        body_identifiers,
    })
}

/// An identifier the router already reduced to one namespace level.
fn single(ident: &Ident) -> BodyIdentifier {
    (vec![ident.namespace.clone()], ident.name.clone())
}

/// What a control-plane request names once routed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPlaneNames {
    /// The operation (`CreateTable`, `TagResource`, …).
    pub operation: &'static str,
    /// Whether the endpoint was parsed from the body.
    pub reads_body: bool,
    /// Bucket ARNs as the request spells them (path, or `tableBucketARN`), which authorization parses.
    pub buckets: Vec<String>,
    /// Tables named by (bucket ARN, namespace, name).
    pub tables: Vec<(String, String, String)>,
    /// Resource ARNs of tagging and of GetTable by `tableArn`.
    pub arns: Vec<String>,
    /// The name of the bucket a CreateTableBucket creates (its resource).
    pub new_bucket: Option<String>,
    /// CreateTable with `metadata` (needs `PutTableData` too).
    pub with_metadata: bool,
    /// CreateTable or CreateTableBucket with an `encryptionConfiguration` (needs the encryption action too).
    pub with_encryption: bool,
}

/// Routes a control-plane request; the error is the answer's status.
pub fn control_plane_route(
    method: &Method,
    path: &str,
    query: Option<&str>,
    body: &[u8],
) -> Result<ControlPlaneNames, u16> {
    use control_plane::Endpoint as E;
    let body = RequestBody::new(Bytes::copy_from_slice(body));
    let endpoint =
        control_plane::route(method, path, query, &body).map_err(|e| e.status().as_u16())?;
    let mut names = ControlPlaneNames {
        operation: endpoint.operation(),
        reads_body: false,
        buckets: vec![],
        tables: vec![],
        arns: vec![],
        new_bucket: None,
        with_metadata: false,
        with_encryption: false,
    };
    let path_of =
        |t: &control_plane::TablePath| (t.bucket.clone(), t.namespace.clone(), t.name.clone());
    match &endpoint {
        E::CreateTableBucket { request } => {
            names.reads_body = true;
            names.new_bucket = Some(request.name.clone());
            names.with_encryption = request.encryption_configuration.is_some();
        }
        E::ListTableBuckets { .. } => {}
        E::PutTableBucketPolicy { bucket, .. }
        | E::PutTableBucketEncryption { bucket, .. }
        | E::PutTableBucketMaintenanceConfiguration { bucket, .. }
        | E::PutTableBucketStorageClass { bucket, .. }
        | E::PutTableBucketReplication { bucket, .. }
        | E::PutTableBucketLogging { bucket, .. }
        | E::CreateNamespace { bucket, .. } => {
            names.reads_body = true;
            names.buckets.push(bucket.clone());
        }
        E::GetTableBucket { bucket }
        | E::DeleteTableBucket { bucket }
        | E::GetTableBucketPolicy { bucket }
        | E::DeleteTableBucketPolicy { bucket }
        | E::GetTableBucketEncryption { bucket }
        | E::DeleteTableBucketEncryption { bucket }
        | E::GetTableBucketMaintenanceConfiguration { bucket }
        | E::GetTableBucketStorageClass { bucket }
        | E::PutTableBucketMetricsConfiguration { bucket }
        | E::GetTableBucketMetricsConfiguration { bucket }
        | E::DeleteTableBucketMetricsConfiguration { bucket }
        | E::GetTableBucketReplication { bucket }
        | E::DeleteTableBucketReplication { bucket, .. }
        | E::GetTableBucketLogging { bucket }
        | E::ListNamespaces { bucket, .. }
        | E::GetNamespace { bucket, .. }
        | E::DeleteNamespace { bucket, .. }
        | E::ListTables { bucket, .. } => names.buckets.push(bucket.clone()),
        E::CreateTable {
            bucket, request, ..
        } => {
            names.reads_body = true;
            names.buckets.push(bucket.clone());
            names.with_metadata = request.metadata.is_some();
            names.with_encryption = request.encryption_configuration.is_some();
        }
        E::GetTable {
            table: GetTableSelector::Arn(arn),
        }
        | E::GetTableRecordExpirationConfiguration { table_arn: arn }
        | E::GetTableRecordExpirationJobStatus { table_arn: arn }
        | E::GetTableReplication { table_arn: arn }
        | E::DeleteTableReplication { table_arn: arn, .. }
        | E::GetTableReplicationStatus { table_arn: arn }
        | E::DisassociateTableReplication { table_arn: arn } => names.arns.push(arn.clone()),
        E::PutTableRecordExpirationConfiguration { table_arn, .. }
        | E::PutTableReplication { table_arn, .. } => {
            names.reads_body = true;
            names.arns.push(table_arn.clone());
        }
        E::GetTable {
            table: GetTableSelector::Path(table),
        }
        | E::DeleteTable { table, .. }
        | E::GetTableMetadataLocation { table }
        | E::GetTablePolicy { table }
        | E::DeleteTablePolicy { table }
        | E::GetTableEncryption { table }
        | E::GetTableMaintenanceConfiguration { table }
        | E::GetTableMaintenanceJobStatus { table }
        | E::GetTableStorageClass { table } => names.tables.push(path_of(table)),
        E::RenameTable { table, .. }
        | E::UpdateTableMetadataLocation { table, .. }
        | E::PutTablePolicy { table, .. }
        | E::PutTableMaintenanceConfiguration { table, .. } => {
            names.reads_body = true;
            names.tables.push(path_of(table));
        }
        E::TagResource { arn, .. } => {
            names.reads_body = true;
            names.arns.push(arn.clone());
        }
        E::UntagResource { arn, .. } | E::ListTagsForResource { arn } => {
            names.arns.push(arn.clone());
        }
        E::StartTableMigration { request } => {
            names.reads_body = true;
            if let Some(destination) = &request.destination_table {
                names.buckets.push(destination.table_bucket_arn.clone());
            }
        }
        E::SyncTableMigration { table_arn, .. } => {
            names.reads_body = true;
            names.arns.push(table_arn.clone());
        }
        E::UpdateTableMigration { table_arn, .. } => {
            names.reads_body = true;
            names.arns.extend(table_arn.clone());
        }
        E::CompleteTableMigration { table_arn } => names.arns.push(table_arn.clone()),
        E::GetTableMigration { table_arn, .. } => names.arns.extend(table_arn.clone()),
        E::ListTableMigrations { query } => {
            names.buckets.extend(query.bucket.clone());
            names.arns.extend(query.table_arn.clone());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Routes every seed of a fuzz target (`METHOD /path?query`, a newline, the body): a seed named `*-refused` is
    /// a 400, every other one routes. Keeps the seeds real requests as the routers change.
    fn seeds<T>(
        target: &str,
        route: impl Fn(&Method, &str, Option<&str>, &[u8]) -> Result<T, u16>,
    ) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/seeds")
            .join(target);
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let (line, body) = data.split_at(data.iter().position(|&b| b == b'\n').unwrap());
            let line = std::str::from_utf8(line).unwrap();
            let (method, target) = line.split_once(' ').unwrap();
            let (path_part, query) = target
                .split_once('?')
                .map_or((target, None), |(p, q)| (p, Some(q)));
            let method: Method = method.parse().unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let routed = route(&method, path_part, query, &body[1..]);
            if name.ends_with("-refused") {
                assert_eq!(routed.err(), Some(400), "{name}");
            } else {
                assert!(routed.is_ok(), "{name}: {:?}", routed.err());
            }
            count += 1;
        }
        assert!(count > 10, "{count} seeds in {}", dir.display());
    }

    #[test]
    fn iceberg_seeds_route() {
        seeds("iceberg_request", iceberg_route);
        let names = iceberg_route(
            &Method::POST,
            "/iceberg/v1/p/transactions/commit",
            None,
            br#"{"table-changes":[{"identifier":{"namespace":["a"],"name":"b"},"updates":[]},
                {"identifier":{"namespace":["c"],"name":"d"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            names.tables,
            [("a".into(), "b".into()), ("c".into(), "d".into())]
        );
    }

    #[test]
    fn control_plane_seeds_route() {
        seeds("control_plane_request", control_plane_route);
        let names = control_plane_route(
            &Method::PUT,
            "/tables/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fb/ns",
            None,
            br#"{"name":"t","format":"ICEBERG","metadata":{"iceberg":{}}}"#,
        )
        .unwrap();
        assert!(names.with_metadata && !names.with_encryption);
    }
}
