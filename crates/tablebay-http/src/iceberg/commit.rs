//! Commits: `POST …/tables/{table}` (one table; with `assert-create`, the completion of a staged create) and
//! `POST …/transactions/commit` (several tables, all or none). The logic is the catalog's
//! (`tablebay_catalog::Catalog::commit_tables`); this file parses, resolves and maps errors.

use tablebay_catalog::spec::TableRequirement;
use tablebay_catalog::{TableChange, TableName};

use super::context::{IcebergContext, Reply};
use super::error::IcebergError;
use super::router::{Ident, single_level};
use super::tables::load_result;
use super::wire::{CommitTableRequestWire, CommitTransactionRequestWire, parse_body};

/// `POST /v1/{prefix}/namespaces/{namespace}/tables/{table}`: 200 `{metadata-location, metadata}` (trap 14).
pub(super) async fn commit_table(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    ident: &Ident,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let wire: CommitTableRequestWire = parse_body(body)?;
    let req = wire.into_request()?;
    if let Some(identifier) = &req.identifier {
        let namespace = single_level(identifier.namespace.clone())?;
        if namespace != ident.namespace || identifier.name != ident.name {
            return Err(IcebergError::bad_request(format!(
                "The identifier {namespace}.{} does not match the path's table {ident}",
                identifier.name
            )));
        }
    }
    let change = TableChange {
        requirements: req.requirements,
        updates: req.updates,
    };
    let committed = if change
        .requirements
        .iter()
        .any(|r| matches!(r, TableRequirement::NotExist))
    {
        // The completion of a stage-create (trap 10): the namespace must exist, the table must not.
        let namespace = ctx.namespace(prefix, &ident.namespace).await?;
        let name = TableName::parse(&ident.name)?;
        super::tables::no_view(ctx, &namespace, &name, ident).await?;
        ctx.catalog()
            .create_staged_table(&namespace, &name, change, &ctx.account)
            .await
            .map_err(|e| IcebergError::for_commit(e, ident))?
    } else {
        let (bucket, namespace, name) = ctx.table_path(prefix, ident)?;
        let table = ctx
            .catalog()
            .table_by_path(&bucket, &namespace, &name)
            .await
            .map_err(|e| IcebergError::for_table(e, ident))?;
        ctx.catalog()
            .commit_table(&table, change, &ctx.account)
            .await
            .map_err(|e| IcebergError::for_commit(e, ident))?
    };
    let body = load_result(
        ctx,
        Some(&committed.metadata_location),
        &committed.metadata.json,
    )?;
    // A commit response has no `config` member, but clients ignore unknown members; it is the same document.
    Ok(Reply::raw_json(body))
}

/// `POST /v1/{prefix}/transactions/commit`: every table's requirements hold and every update applies, or
/// nothing changes (204).
pub(super) async fn commit_transaction(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    let wire: CommitTransactionRequestWire = parse_body(body)?;
    if wire.table_changes.is_empty() {
        return Err(IcebergError::bad_request(
            "A transaction needs at least one table change",
        ));
    }
    let mut changes = Vec::with_capacity(wire.table_changes.len());
    let mut idents = Vec::with_capacity(wire.table_changes.len());
    for change in wire.table_changes {
        let req = change.into_request()?;
        let identifier = req.identifier.ok_or_else(|| {
            IcebergError::bad_request("Every table change of a transaction needs its identifier")
        })?;
        let ident = Ident {
            namespace: single_level(identifier.namespace)?,
            name: identifier.name,
        };
        let (bucket, namespace, name) = ctx.table_path(prefix, &ident)?;
        let table = ctx
            .catalog()
            .table_by_path(&bucket, &namespace, &name)
            .await
            .map_err(|e| IcebergError::for_table(e, &ident))?;
        changes.push((
            table,
            TableChange {
                requirements: req.requirements,
                updates: req.updates,
            },
        ));
        idents.push(ident);
    }
    let first = idents.first().cloned().unwrap_or(Ident {
        namespace: String::new(),
        name: String::new(),
    });
    ctx.catalog()
        .commit_tables(changes, &ctx.account)
        .await
        .map_err(|e| IcebergError::for_commit(e, &first))?;
    Ok(Reply::no_content())
}
