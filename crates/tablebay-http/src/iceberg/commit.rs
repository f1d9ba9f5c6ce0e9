//! Commits: `POST …/tables/{table}` (one table; with `assert-create`, the completion of a staged create) and
//! `POST …/transactions/commit` (several tables, all or none). The logic is the catalog's
//! (`tablebay_catalog::Catalog::commit_tables`); this file checks what the request names against the tables
//! authorization resolved, and maps errors.

use tablebay_catalog::spec::TableRequirement;
use tablebay_catalog::{CommitError, IcebergTable, Table, TableChange, TableName};

use super::context::{Lookups, Reply};
use super::error::IcebergError;
use super::idempotency;
use super::router::{Ident, single_level};
use super::tables::load_result;
use super::wire::CommitTableRequest;
use crate::pipeline::Context;

/// `POST /v1/{prefix}/namespaces/{namespace}/tables/{table}`: 200 `{metadata-location, metadata}` (trap 14).
/// `table` is the table the path named when the request was authorized.
pub(super) async fn commit_table(
    cx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
    table: Option<Table>,
    req: CommitTableRequest,
    key: Option<&str>,
) -> Result<Reply, IcebergError> {
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
    let creates = change
        .requirements
        .iter()
        .any(|r| matches!(r, TableRequirement::NotExist));
    let committed = if creates {
        // The completion of a stage-create (trap 10): the namespace must exist, the table must not.
        let namespace = cx.namespace(prefix, &ident.namespace).await?;
        let name = TableName::parse(&ident.name)?;
        super::tables::no_view(cx, &namespace, &name, ident).await?;
        cx.catalog()
            .create_staged_table(&namespace, &name, change, &cx.account)
            .await
            .map_err(|e| IcebergError::for_commit(e, ident))?
    } else {
        let table = table.ok_or_else(|| IcebergError::no_such_table(ident))?;
        let answer = |tables: &[IcebergTable]| match tables {
            [committed] => answer_of(cx, committed),
            _ => Err(IcebergError::bad_request("A table commit commits one table")),
        };
        let remember = key.map(|key| idempotency::with_commit(cx, key, answer));
        let committed = cx
            .catalog()
            .commit_tables_remembering(vec![(table, change)], &cx.account, remember.as_ref())
            .await;
        return match committed {
            Ok(tables) => match tables.as_slice() {
                [committed] => {
                    let mut reply = answer_of(cx, committed)?;
                    reply.remembered = remember.is_some();
                    Ok(reply)
                }
                _ => Err(IcebergError::for_commit(
                    CommitError::StateUnknown("the commit produced no table".into()),
                    ident,
                )),
            },
            Err(CommitError::KeyTaken(message)) => winner(cx, key, &message, ident).await,
            Err(e) => Err(IcebergError::for_commit(e, ident)),
        };
    };
    answer_of(cx, &committed)
}

/// A commit's answer: 200 `{metadata-location, metadata}`. A commit response has no `config` member, but clients
/// ignore unknown members; it is the same document.
fn answer_of(cx: &Context<'_>, committed: &IcebergTable) -> Result<Reply, IcebergError> {
    Ok(Reply::raw_json(load_result(
        cx,
        Some(&committed.metadata_location),
        &committed.metadata.json,
        None,
    )?))
}

/// The stored answer of the concurrent request with the same key that committed first.
async fn winner(
    cx: &Context<'_>,
    key: Option<&str>,
    message: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let conflict = || IcebergError::for_commit(CommitError::Conflict(message.to_string()), ident);
    match key {
        Some(key) => idempotency::replay(cx, key).await?.ok_or_else(conflict),
        None => Err(conflict()),
    }
}

/// `POST /v1/{prefix}/transactions/commit`: every table's requirements hold and every update applies, or
/// nothing changes (204). `tables` are the tables the changes named when the request was authorized, in order.
pub(super) async fn commit_transaction(
    cx: &Context<'_>,
    changes: Vec<(Ident, CommitTableRequest)>,
    tables: Vec<Option<Table>>,
    key: Option<&str>,
) -> Result<Reply, IcebergError> {
    let mut resolved = Vec::with_capacity(changes.len());
    let mut first = None;
    for ((ident, req), table) in changes.into_iter().zip(tables) {
        let table = table.ok_or_else(|| IcebergError::no_such_table(&ident))?;
        resolved.push((
            table,
            TableChange {
                requirements: req.requirements,
                updates: req.updates,
            },
        ));
        first.get_or_insert(ident);
    }
    let first = first.ok_or_else(|| {
        IcebergError::bad_request("A transaction needs at least one table change")
    })?;
    let remember = key.map(|key| idempotency::with_commit(cx, key, |_| Ok(Reply::no_content())));
    match cx
        .catalog()
        .commit_tables_remembering(resolved, &cx.account, remember.as_ref())
        .await
    {
        Ok(_) => {
            let mut reply = Reply::no_content();
            reply.remembered = remember.is_some();
            Ok(reply)
        }
        Err(CommitError::KeyTaken(message)) => winner(cx, key, &message, &first).await,
        Err(e) => Err(IcebergError::for_commit(e, &first)),
    }
}
