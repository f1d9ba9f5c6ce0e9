//! Tables: list, create and stage-create, load (with `snapshots=` and ETag / If-None-Match), HEAD, drop (with
//! purge), register, rename, metrics reports and credentials. Commits are in `commit.rs`.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use tablebay_catalog::{DropMode, IcebergTable, TableDefinition, TableName, TableRef};

use super::context::{IcebergContext, Reply};
use super::dispatch::not_modified;
use super::error::IcebergError;
use super::namespaces::collect;
use super::router::{Ident, PageParams, single_level};
use super::wire::{
    CreateTableRequest, ListTablesResponse, LoadCredentialsResponse, RegisterTableRequest,
    RenameRequest, TableIdentifier, parse_body,
};

/// Which snapshots a load returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Snapshots {
    All,
    Refs,
}

impl Snapshots {
    fn parse(raw: Option<&str>) -> Result<Self, IcebergError> {
        match raw {
            None => Ok(Self::All),
            Some(s) if s.eq_ignore_ascii_case("all") => Ok(Self::All),
            Some(s) if s.eq_ignore_ascii_case("refs") => Ok(Self::Refs),
            Some(other) => Err(IcebergError::bad_request(format!(
                "Invalid snapshots mode '{other}': expected all or refs"
            ))),
        }
    }
}

/// The table name in a path or body, validated; `missing` is the error for a name that cannot exist.
fn table_name(ident: &Ident) -> Result<TableName, IcebergError> {
    TableName::parse(&ident.name).map_err(|_| IcebergError::no_such_table(ident))
}

/// A LoadTableResult body: `metadata` is spliced in as the stored bytes, so a cached load serializes nothing.
pub(super) fn load_result(
    ctx: &IcebergContext<'_>,
    metadata_location: Option<&str>,
    metadata_json: &[u8],
) -> Result<Vec<u8>, IcebergError> {
    let config = ctx
        .app
        .iceberg
        .storage_config(&ctx.catalog().config().region);
    let location =
        serde_json::to_string(&metadata_location).map_err(|e| internal(e.to_string()))?;
    let config = serde_json::to_string(&config).map_err(|e| internal(e.to_string()))?;
    let mut body = Vec::with_capacity(metadata_json.len() + location.len() + config.len() + 48);
    body.extend_from_slice(b"{\"metadata-location\":");
    body.extend_from_slice(location.as_bytes());
    body.extend_from_slice(b",\"metadata\":");
    body.extend_from_slice(metadata_json);
    body.extend_from_slice(b",\"config\":");
    body.extend_from_slice(config.as_bytes());
    body.push(b'}');
    Ok(body)
}

fn internal(detail: String) -> IcebergError {
    IcebergError::from(tablebay_catalog::CatalogError::Internal(detail))
}

/// The metadata with only the snapshots that a branch or tag references (`snapshots=refs`).
fn refs_only(table: &IcebergTable) -> Result<Vec<u8>, IcebergError> {
    let keep: HashSet<i64> = table
        .metadata
        .refs
        .values()
        .map(|r| r.snapshot_id)
        .collect();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&table.metadata.json).map_err(|e| internal(e.to_string()))?;
    if let Some(snapshots) = doc
        .get_mut("snapshots")
        .and_then(serde_json::Value::as_array_mut)
    {
        snapshots.retain(|s| {
            s.get("snapshot-id")
                .and_then(serde_json::Value::as_i64)
                .is_some_and(|id| keep.contains(&id))
        });
    }
    serde_json::to_vec(&doc).map_err(|e| internal(e.to_string()))
}

/// A strong ETag of what a load returns: the metadata file (immutable) and the snapshot mode.
fn etag(metadata_location: &str, snapshots: Snapshots) -> String {
    let digest = Sha256::digest(format!("{metadata_location}|{snapshots:?}").as_bytes());
    format!("\"{}\"", hex_prefix(&digest))
}

fn hex_prefix(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Whether an `If-None-Match` header value matches `etag` (`*`, a list, weak validators compared weakly).
fn matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

/// Tables and views share one name space: a table may not take a view's name (Java's message).
pub(super) async fn no_view(
    ctx: &IcebergContext<'_>,
    namespace: &tablebay_catalog::Namespace,
    name: &TableName,
    ident: &Ident,
) -> Result<(), IcebergError> {
    if ctx.catalog().view_exists(namespace, name).await? {
        return Err(IcebergError::already_exists(format!(
            "View with same name already exists: {ident}"
        )));
    }
    Ok(())
}

/// `GET /v1/{prefix}/namespaces/{namespace}/tables`.
pub(super) async fn list(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    namespace: &str,
    page: &PageParams,
) -> Result<Reply, IcebergError> {
    let resolved = ctx.namespace(prefix, namespace).await?;
    let (tables, next) = collect(page, |request| {
        let resolved = &resolved;
        async move {
            Ok(ctx
                .catalog()
                .list_tables(&resolved.bucket.arn, Some(&resolved.name), &request)
                .await?)
        }
    })
    .await?;
    Reply::json(&ListTablesResponse {
        identifiers: tables
            .into_iter()
            .map(|t| TableIdentifier {
                namespace: vec![t.namespace.to_string()],
                name: t.name.to_string(),
            })
            .collect(),
        next_page_token: next,
    })
}

/// `POST /v1/{prefix}/namespaces/{namespace}/tables`: create, or with `stage-create` only describe the table
/// (nothing is persisted; `metadata-location` is null and the client commits with `assert-create`).
pub(super) async fn create(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    namespace: &str,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let req: CreateTableRequest = parse_body(body)?;
    let ident = Ident {
        namespace: namespace.to_string(),
        name: req.name.clone(),
    };
    let name = TableName::parse(&req.name)?;
    let definition = TableDefinition::from_iceberg_json(
        req.schema,
        req.partition_spec,
        req.write_order,
        req.properties.unwrap_or_default(),
    )?;
    let resolved = ctx.namespace(prefix, namespace).await?;
    no_view(ctx, &resolved, &name, &ident).await?;
    if req.stage_create.unwrap_or(false) {
        if ctx.catalog().table_in(&resolved, &name).await.is_ok() {
            return Err(IcebergError::already_exists(format!(
                "Table already exists: {ident}"
            )));
        }
        let staged = ctx
            .catalog()
            .stage_iceberg_table(&resolved, definition)
            .await?;
        let json = tablebay_catalog::metadata_json(&staged.metadata)
            .map_err(|e| internal(e.to_string()))?;
        return Ok(Reply::raw_json(load_result(ctx, None, &json)?));
    }
    let table = ctx
        .catalog()
        .create_iceberg_table(&resolved, name, definition, &ctx.account)
        .await
        .map_err(|e| IcebergError::for_table(e, &ident))?;
    Ok(Reply::raw_json(load_result(
        ctx,
        Some(&table.metadata_location),
        &table.metadata.json,
    )?))
}

/// `GET /v1/{prefix}/namespaces/{namespace}/tables/{table}`.
pub(super) async fn load(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    ident: &Ident,
    snapshots: Option<&str>,
    if_none_match: Option<&str>,
) -> Result<Reply, IcebergError> {
    let snapshots = Snapshots::parse(snapshots)?;
    let (bucket, namespace, name) = ctx.table_path(prefix, ident)?;
    let table = ctx
        .catalog()
        .iceberg_table_by_path(&bucket, &namespace, &name)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    let tag = etag(&table.metadata_location, snapshots);
    if if_none_match.is_some_and(|value| matches(value, &tag)) {
        return Ok(not_modified(tag));
    }
    let body = match snapshots {
        Snapshots::All => load_result(ctx, Some(&table.metadata_location), &table.metadata.json)?,
        Snapshots::Refs => load_result(ctx, Some(&table.metadata_location), &refs_only(&table)?)?,
    };
    let mut reply = Reply::raw_json(body);
    reply.etag = Some(tag);
    Ok(reply)
}

/// `HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}`: 204 or 404 (trap 11).
pub(super) async fn exists(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let (bucket, namespace, name) = ctx.table_path(prefix, ident)?;
    ctx.catalog()
        .table_by_path(&bucket, &namespace, &name)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    Ok(Reply::no_content())
}

/// `DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}?purgeRequested=`. Without purge the files stay
/// (Spark deletes them itself after a `DROP TABLE … PURGE`: trap 12); with it they go in the background.
pub(super) async fn drop(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    ident: &Ident,
    purge: bool,
) -> Result<Reply, IcebergError> {
    let namespace = ctx.table_namespace(prefix, ident).await?;
    let mode = if purge {
        DropMode::Purge
    } else {
        DropMode::KeepFiles
    };
    ctx.catalog()
        .drop_iceberg_table(&namespace, &table_name(ident)?, mode)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    Ok(Reply::no_content())
}

/// `POST /v1/{prefix}/namespaces/{namespace}/register`: the metadata file must be in a table's own storage,
/// whose id no live table uses (see `Catalog::register_iceberg_table`).
pub(super) async fn register(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    namespace: &str,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let req: RegisterTableRequest = parse_body(body)?;
    let ident = Ident {
        namespace: namespace.to_string(),
        name: req.name.clone(),
    };
    let name = TableName::parse(&req.name)?;
    if req.overwrite.unwrap_or(false) {
        return Err(IcebergError::bad_request(
            "Registering with overwrite is not supported",
        ));
    }
    let resolved = ctx.namespace(prefix, namespace).await?;
    no_view(ctx, &resolved, &name, &ident).await?;
    let table = ctx
        .catalog()
        .register_iceberg_table(&resolved, &name, &req.metadata_location, &ctx.account)
        .await
        .map_err(|e| match e {
            tablebay_catalog::CatalogError::AlreadyExists(message) => {
                IcebergError::already_exists(message)
            }
            other => IcebergError::for_table(other, &ident),
        })?;
    Ok(Reply::raw_json(load_result(
        ctx,
        Some(&table.metadata_location),
        &table.metadata.json,
    )?))
}

/// `POST /v1/{prefix}/tables/rename`: within the bucket, across namespaces; the table keeps its id and ARN.
pub(super) async fn rename(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let req: RenameRequest = parse_body(body)?;
    let source = Ident {
        namespace: single_level(req.source.namespace)?,
        name: req.source.name,
    };
    let destination = Ident {
        namespace: single_level(req.destination.namespace)?,
        name: req.destination.name,
    };
    let source_namespace = ctx.table_namespace(prefix, &source).await?;
    let table = ctx
        .catalog()
        .table_in(&source_namespace, &table_name(&source)?)
        .await
        .map_err(|e| IcebergError::for_table(e, &source))?;
    let target = ctx.namespace(prefix, &destination.namespace).await?;
    let new_name = TableName::parse(&destination.name)?;
    if ctx.catalog().view_exists(&target, &new_name).await? {
        return Err(IcebergError::already_exists(format!(
            "Cannot rename {source} to {destination}. View already exists"
        )));
    }
    ctx.catalog()
        .rename_table(
            &TableRef::Arn(table.arn.clone()),
            Some(&target.name),
            Some(&new_name),
            None,
            &ctx.account,
        )
        .await
        .map_err(|e| match e {
            tablebay_catalog::CatalogError::NotFound(_) => IcebergError::no_such_table(&source),
            other => IcebergError::for_table(other, &destination),
        })?;
    Ok(Reply::no_content())
}

/// `POST …/tables/{table}/metrics`: reports are accepted and dropped (204); the body must be a report.
pub(super) async fn report_metrics(
    _ctx: &IcebergContext<'_>,
    _prefix: &str,
    _ident: &Ident,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let report: serde_json::Value = parse_body(body)?;
    match report
        .get("report-type")
        .and_then(serde_json::Value::as_str)
    {
        Some("scan-report" | "commit-report") => Ok(Reply::no_content()),
        _ => Err(IcebergError::bad_request(
            "Invalid metrics report: report-type must be scan-report or commit-report",
        )),
    }
}

/// `GET …/tables/{table}/credentials`: no credentials are vended yet; clients use their own.
pub(super) async fn credentials(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let namespace = ctx.table_namespace(prefix, ident).await?;
    ctx.catalog()
        .table_in(&namespace, &table_name(ident)?)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    Reply::json(&LoadCredentialsResponse {
        storage_credentials: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_and_conditions() {
        let a = etag("s3://x/metadata/00001-a.metadata.json", Snapshots::All);
        assert_ne!(
            a,
            etag("s3://x/metadata/00001-a.metadata.json", Snapshots::Refs)
        );
        assert_ne!(
            a,
            etag("s3://x/metadata/00002-b.metadata.json", Snapshots::All)
        );
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert!(matches(&a, &a));
        assert!(matches(&format!("W/{a}"), &a));
        assert!(matches(&format!("\"other\", {a}"), &a));
        assert!(matches("*", &a));
        assert!(!matches("\"other\"", &a));
    }
}
