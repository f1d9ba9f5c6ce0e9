//! Tables: list, create and stage-create, load (with `snapshots=` and ETag / If-None-Match), HEAD, drop (with
//! purge), register, rename, metrics reports and credentials. Commits are in `commit.rs`.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use tablebay_catalog::{
    DropMode, IcebergTable, Table, TableArn, TableDefinition, TableName, TableRef,
};

use super::context::{Lookups, Reply};
use super::dispatch::not_modified;
use super::error::IcebergError;
use super::namespaces::collect;
use super::router::{Delegation, Ident, PageParams, Snapshots};
use super::wire::{
    CreateTableRequest, ListTablesResponse, LoadCredentialsResponse, RegisterTableRequest,
    TableIdentifier,
};
use crate::pipeline::Context;

/// A LoadTableResult body: `metadata` is spliced in as the stored bytes, so a cached load serializes nothing.
/// With vended credentials, they are in `config` and in `storage-credentials`.
pub(super) fn load_result(
    ctx: &Context<'_>,
    metadata_location: Option<&str>,
    metadata_json: &[u8],
    access: Option<&DataAccess>,
) -> Result<Vec<u8>, IcebergError> {
    let mut config = ctx
        .app
        .iceberg
        .storage_config(&ctx.catalog().config().region);
    match access {
        Some(DataAccess::Vended(vended)) => config.extend(vended.config.clone()),
        Some(DataAccess::RemoteSigning) => config.extend(super::sign::remote_signing_config()),
        None => {}
    }
    let vended = match access {
        Some(DataAccess::Vended(vended)) => Some(vended),
        _ => None,
    };
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
    if let Some(vended) = vended {
        let credentials = serde_json::to_string(&vended.storage_credentials(ctx))
            .map_err(|e| internal(e.to_string()))?;
        body.extend_from_slice(b",\"storage-credentials\":");
        body.extend_from_slice(credentials.as_bytes());
    }
    body.push(b'}');
    Ok(body)
}

/// How a client that asked reaches the table's data (`X-Iceberg-Access-Delegation`).
pub(super) enum DataAccess {
    /// Temporary credentials, in `config` and `storage-credentials`.
    Vended(Vended),
    /// The remote signer's settings in `config` (`sign.rs`); no credentials.
    RemoteSigning,
}

impl DataAccess {
    /// What the request asked for, issued for the caller.
    pub(super) async fn if_asked(
        ctx: &Context<'_>,
        delegation: Delegation,
        table: &TableArn,
    ) -> Result<Option<Self>, IcebergError> {
        match delegation {
            Delegation::VendedCredentials => {
                Ok(Some(Self::Vended(Vended::issue(ctx, table).await?)))
            }
            Delegation::RemoteSigning => Ok(Some(Self::RemoteSigning)),
            Delegation::None => Ok(None),
        }
    }
}

/// Temporary credentials for one table's data (`X-Iceberg-Access-Delegation: vended-credentials`), as FileIO
/// properties. They reach only the table's own storage: every file a table references lies there.
pub(super) struct Vended {
    prefix: String,
    config: std::collections::BTreeMap<String, String>,
}

impl Vended {
    /// Issues credentials scoped to `table` for the caller, with at most the rights the caller has on it.
    pub(super) async fn issue(ctx: &Context<'_>, table: &TableArn) -> Result<Self, IcebergError> {
        let session = ctx
            .app
            .iam
            .vend_table_credentials(&ctx.principal, table)
            .await?;
        let config = std::collections::BTreeMap::from([
            (
                "s3.access-key-id".to_string(),
                session.access_key_id.clone(),
            ),
            (
                "s3.secret-access-key".to_string(),
                session.secret_access_key.clone(),
            ),
            (
                "s3.session-token".to_string(),
                session.session_token.clone(),
            ),
            (
                "s3.session-token-expires-at-ms".to_string(),
                session.expiration.timestamp_millis().to_string(),
            ),
        ]);
        Ok(Self {
            prefix: format!("{}/", tablebay_catalog::warehouse_location(table.table_id)),
            config,
        })
    }

    /// The `StorageCredential` (`{"prefix", "config"}`) with the data plane's address.
    pub(super) fn storage_credentials(&self, ctx: &Context<'_>) -> Vec<serde_json::Value> {
        let mut config = ctx
            .app
            .iceberg
            .storage_config(&ctx.catalog().config().region);
        config.extend(self.config.clone());
        vec![serde_json::json!({ "prefix": self.prefix, "config": config })]
    }
}

fn internal(detail: String) -> IcebergError {
    IcebergError::from(tablebay_catalog::ServiceError::Internal(detail))
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
    ctx: &Context<'_>,
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
    ctx: &Context<'_>,
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
/// (nothing is persisted; `metadata-location` is null and the client commits with `assert-create`). The answer
/// never holds credentials (an idempotent replay remembers it): the dispatcher vends them after
/// ([`with_vended_credentials`]).
pub(super) async fn create(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    req: CreateTableRequest,
    delegation: Delegation,
) -> Result<Reply, IcebergError> {
    // Vended credentials are added by the caller, afresh on each answer (`with_vended_credentials`); the remote
    // signer's settings hold no secret and go in now.
    let signing = (delegation == Delegation::RemoteSigning).then_some(DataAccess::RemoteSigning);
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
        return Ok(Reply::raw_json(load_result(
            ctx,
            None,
            &json,
            signing.as_ref(),
        )?));
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
        signing.as_ref(),
    )?))
}

/// A create's answer (fresh or replayed) with credentials for the table it describes, vended to the caller
/// now. A staged table has no row yet: its credentials are for the storage its metadata names, where the
/// caller's commit will create it.
pub(super) async fn with_vended_credentials(
    ctx: &Context<'_>,
    reply: Reply,
    prefix: &str,
    namespace: &str,
    name: &str,
) -> Result<Reply, IcebergError> {
    #[derive(serde::Deserialize)]
    struct Described<'a> {
        #[serde(rename = "metadata-location")]
        metadata_location: Option<String>,
        #[serde(borrow)]
        metadata: &'a serde_json::value::RawValue,
    }
    #[derive(serde::Deserialize)]
    struct TableUuid {
        #[serde(rename = "table-uuid")]
        table_uuid: uuid::Uuid,
    }
    let Some(body) = reply.body.clone() else {
        return Ok(reply);
    };
    let described: Described<'_> =
        serde_json::from_slice(&body).map_err(|e| internal(e.to_string()))?;
    let table_id = serde_json::from_str::<TableUuid>(described.metadata.get())
        .map_err(|e| internal(e.to_string()))?
        .table_uuid;
    if described.metadata_location.is_some() {
        // The table must still be the one the answer describes (a replay comes later).
        let namespace = ctx.namespace(prefix, namespace).await?;
        let table = TableName::parse(name)?;
        let current = ctx.catalog().table_in(&namespace, &table).await.ok();
        if current.is_none_or(|t| t.id != table_id) {
            return Ok(reply);
        }
    }
    let arn = TableArn {
        bucket: ctx.bucket_arn(prefix)?,
        table_id,
    };
    let vended = DataAccess::Vended(Vended::issue(ctx, &arn).await?);
    let mut answer = Reply::raw_json(load_result(
        ctx,
        described.metadata_location.as_deref(),
        described.metadata.get().as_bytes(),
        Some(&vended),
    )?);
    answer.status = reply.status;
    Ok(answer)
}

/// `GET /v1/{prefix}/namespaces/{namespace}/tables/{table}`.
pub(super) async fn load(
    ctx: &Context<'_>,
    ident: &Ident,
    table: Option<Table>,
    snapshots: Snapshots,
    if_none_match: Option<&str>,
    delegation: Delegation,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    let table = ctx
        .catalog()
        .with_metadata(table)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    let tag = etag(&table.metadata_location, snapshots);
    if if_none_match.is_some_and(|value| matches(value, &tag)) {
        return Ok(not_modified(tag));
    }
    let vended = DataAccess::if_asked(ctx, delegation, &table.table.arn).await?;
    let body = match snapshots {
        Snapshots::All => load_result(
            ctx,
            Some(&table.metadata_location),
            &table.metadata.json,
            vended.as_ref(),
        )?,
        Snapshots::Refs => load_result(
            ctx,
            Some(&table.metadata_location),
            &refs_only(&table)?,
            vended.as_ref(),
        )?,
    };
    let mut reply = Reply::raw_json(body);
    reply.etag = Some(tag);
    Ok(reply)
}

/// `HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}`: 204 or 404 (trap 11).
pub(super) fn exists(ident: &Ident, table: Option<Table>) -> Result<Reply, IcebergError> {
    table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    Ok(Reply::no_content())
}

/// `DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}?purgeRequested=`. Without purge the files stay
/// (Spark deletes them itself after a `DROP TABLE … PURGE`: trap 12); with it they go in the background.
pub(super) async fn drop(
    ctx: &Context<'_>,
    ident: &Ident,
    table: Option<Table>,
    purge: bool,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    let mode = if purge {
        DropMode::Purge
    } else {
        DropMode::KeepFiles
    };
    ctx.catalog()
        .drop_iceberg_table(&table, mode)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    Ok(Reply::no_content())
}

/// `POST /v1/{prefix}/namespaces/{namespace}/register`: the metadata file must be in a table's own storage,
/// whose id no live table uses (see `Catalog::register_iceberg_table`).
pub(super) async fn register(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    req: RegisterTableRequest,
) -> Result<Reply, IcebergError> {
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
            tablebay_catalog::ServiceError::AlreadyExists(message) => {
                IcebergError::already_exists(message)
            }
            other => IcebergError::for_table(other, &ident),
        })?;
    Ok(Reply::raw_json(load_result(
        ctx,
        Some(&table.metadata_location),
        &table.metadata.json,
        None,
    )?))
}

/// `POST …/tables/{table}/unregister`: the catalog forgets the table and its files stay (its storage can be
/// registered again); answers the last metadata location and metadata (`UnregisterTableResult`).
pub(super) async fn unregister(
    ctx: &Context<'_>,
    ident: &Ident,
    table: Option<Table>,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    let gone = ctx
        .catalog()
        .unregister_iceberg_table(&table)
        .await
        .map_err(|e| IcebergError::for_table(e, ident))?;
    Ok(Reply::raw_json(unregister_result(
        &gone.metadata_location,
        &gone.metadata.json,
    )?))
}

/// An `UnregisterTableResult` body, with the stored metadata bytes spliced in.
fn unregister_result(
    metadata_location: &str,
    metadata_json: &[u8],
) -> Result<Vec<u8>, IcebergError> {
    let location = serde_json::to_string(metadata_location).map_err(|e| internal(e.to_string()))?;
    let mut body = Vec::with_capacity(metadata_json.len() + location.len() + 32);
    body.extend_from_slice(b"{\"metadata-location\":");
    body.extend_from_slice(location.as_bytes());
    body.extend_from_slice(b",\"metadata\":");
    body.extend_from_slice(metadata_json);
    body.push(b'}');
    Ok(body)
}

/// `POST /v1/{prefix}/tables/rename`: within the bucket, across namespaces; the table keeps its id and ARN.
/// `table` is the source table as authorized.
pub(super) async fn rename(
    ctx: &Context<'_>,
    prefix: &str,
    source: &Ident,
    table: Option<Table>,
    destination: &Ident,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::no_such_table(source))?;
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
            tablebay_catalog::ServiceError::NotFound(_) => IcebergError::no_such_table(source),
            other => IcebergError::for_table(other, destination),
        })?;
    Ok(Reply::no_content())
}

/// `POST …/tables/{table}/metrics`: reports (checked when the request was parsed) are accepted and dropped.
pub(super) fn report_metrics(ident: &Ident, table: Option<Table>) -> Result<Reply, IcebergError> {
    table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    Ok(Reply::no_content())
}

/// `GET …/tables/{table}/credentials`: fresh vended credentials for the table's data (clients refresh with it
/// before the previous ones expire).
pub(super) async fn credentials(
    ctx: &Context<'_>,
    ident: &Ident,
    table: Option<Table>,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::no_such_table(ident))?;
    let vended = Vended::issue(ctx, &table.arn).await?;
    Reply::json(&LoadCredentialsResponse {
        storage_credentials: vended.storage_credentials(ctx),
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
