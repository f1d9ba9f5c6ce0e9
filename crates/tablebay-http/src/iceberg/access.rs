//! What each Iceberg REST operation needs, from its typed endpoint alone: the actions of the product's map
//! (`tablebay_policy::iceberg_operation_actions`: `loadTable` → `GetTableMetadataLocation` + `GetTableData`, …)
//! on its resource — the table for table operations, the bucket otherwise. Tables named by the path or the body
//! are looked up here, once: the handler acts on exactly the table that was authorized (a missing one is
//! `<bucket>/table/*`, and the handler answers its own 404 without looking again). Views, which the guide does
//! not list, need the table action of the same shape.

use tablebay_catalog::{BucketArn, NamespaceName, ServiceError, Table, TableName, TableRef};
use tablebay_iam::Resource;
use tablebay_policy::{Action, IcebergOperation, iceberg_operation_actions};

use super::context::Lookups;
use super::error::IcebergError;
use super::router::{Endpoint, Ident};
use super::sign;
use super::wire::RemoteSignRequest;
use crate::pipeline::{Context, Need, in_namespace, naming_table};

/// An endpoint with the tables it names, looked up once.
pub(crate) struct Resolved {
    pub endpoint: Endpoint,
    /// The tables the endpoint names, in the order it names them (one for table operations, one per change of
    /// a transaction, the source of a rename); `None` where no such table exists.
    pub tables: Vec<Option<Table>>,
}

/// Resolves the endpoint's tables and names what the caller needs.
pub(crate) async fn resolve(
    cx: &Context<'_>,
    endpoint: Endpoint,
) -> Result<(Resolved, Vec<Need>), IcebergError> {
    use Endpoint as E;
    use IcebergOperation as O;
    let mut tables = Vec::new();
    let needs = match &endpoint {
        E::Config { warehouse: None } => Vec::new(),
        E::Config {
            warehouse: Some(warehouse),
        } => on_bucket(cx, O::GetConfig, warehouse)?,
        E::ListNamespaces { prefix, .. } => on_bucket(cx, O::ListNamespaces, prefix)?,
        E::CreateNamespace { prefix, request } => match request.namespace.as_slice() {
            [namespace] => on_namespace(cx, O::CreateNamespace, prefix, namespace)?,
            _ => on_bucket(cx, O::CreateNamespace, prefix)?,
        },
        E::LoadNamespace { prefix, namespace } => {
            on_namespace(cx, O::LoadNamespace, prefix, namespace)?
        }
        E::NamespaceExists { prefix, namespace } => {
            on_namespace(cx, O::NamespaceExists, prefix, namespace)?
        }
        E::DropNamespace { prefix, namespace } => {
            on_namespace(cx, O::DropNamespace, prefix, namespace)?
        }
        E::UpdateNamespaceProperties {
            prefix, namespace, ..
        } => on_namespace(cx, O::UpdateNamespaceProperties, prefix, namespace)?,
        E::ListTables {
            prefix, namespace, ..
        } => on_namespace(cx, O::ListTables, prefix, namespace)?,
        E::CreateTable {
            prefix,
            namespace,
            request,
            ..
        } => on_new_table(cx, ops(O::CreateTable), prefix, namespace, &request.name)?,
        E::RegisterTable {
            prefix,
            namespace,
            request,
        } => on_new_table(cx, ops(O::RegisterTable), prefix, namespace, &request.name)?,
        E::LoadTable { prefix, table, .. } | E::ReportMetrics { prefix, table } => {
            on_table(cx, O::LoadTable, prefix, table, &mut tables).await?
        }
        E::TableExists { prefix, table } => {
            on_table(cx, O::TableExists, prefix, table, &mut tables).await?
        }
        E::CommitTable { prefix, table, .. } => {
            on_table(cx, O::UpdateTable, prefix, table, &mut tables).await?
        }
        E::DropTable { prefix, table, .. } => {
            on_table(cx, O::DropTable, prefix, table, &mut tables).await?
        }
        E::LoadCredentials { prefix, table } => {
            on_table(cx, O::LoadCredentials, prefix, table, &mut tables).await?
        }
        E::RenameTable { prefix, source, .. } => {
            on_table(cx, O::RenameTable, prefix, source, &mut tables).await?
        }
        E::CommitTransaction { prefix, changes } => {
            // Every table the transaction changes needs what a single commit needs.
            let mut needs = Vec::with_capacity(changes.len());
            for (ident, _) in changes {
                needs.extend(on_table(cx, O::CommitTransaction, prefix, ident, &mut tables).await?);
            }
            needs
        }
        E::ListViews {
            prefix, namespace, ..
        } => vec![Need::action(
            Action::ListTables,
            in_namespace(Resource::Bucket(cx.bucket_arn(prefix)?), namespace),
        )],
        E::CreateView {
            prefix,
            namespace,
            request,
        } => on_new_table(cx, &[Action::CreateTable], prefix, namespace, &request.name)?,
        E::LoadView { prefix, view } | E::ViewExists { prefix, view } => {
            on_view(cx, &[Action::GetTable], prefix, view)?
        }
        E::ReplaceView { prefix, view, .. } => {
            on_view(cx, &[Action::UpdateTableMetadataLocation], prefix, view)?
        }
        E::DropView { prefix, view } => on_view(cx, &[Action::DeleteTable], prefix, view)?,
        E::RenameView { prefix, source, .. } => {
            on_view(cx, &[Action::RenameTable], prefix, source)?
        }
        E::UnregisterTable { prefix, table } => {
            on_table(cx, O::UnregisterTable, prefix, table, &mut tables).await?
        }
        E::RegisterView {
            prefix,
            namespace,
            request,
        } => on_new_table(cx, ops(O::RegisterView), prefix, namespace, &request.name)?,
        E::SignRequest { table, request } => {
            on_signed_table(cx, table.as_ref(), request, &mut tables).await?
        }
    };
    Ok((Resolved { endpoint, tables }, needs))
}

fn ops(op: IcebergOperation) -> &'static [Action] {
    iceberg_operation_actions(op)
}

fn on_bucket(
    cx: &Context<'_>,
    op: IcebergOperation,
    prefix: &str,
) -> Result<Vec<Need>, IcebergError> {
    Ok(vec![Need::Actions(
        ops(op).to_vec(),
        Resource::Bucket(cx.bucket_arn(prefix)?),
    )])
}

/// An operation on a namespace: on the bucket, in that namespace (`s3tables:namespace`).
fn on_namespace(
    cx: &Context<'_>,
    op: IcebergOperation,
    prefix: &str,
    namespace: &str,
) -> Result<Vec<Need>, IcebergError> {
    Ok(vec![Need::Actions(
        ops(op).to_vec(),
        in_namespace(Resource::Bucket(cx.bucket_arn(prefix)?), namespace),
    )])
}

/// An operation that creates a table (or a view, which shares its name space): on `<bucket>/table/*`, naming it.
fn on_new_table(
    cx: &Context<'_>,
    actions: &[Action],
    prefix: &str,
    namespace: &str,
    name: &str,
) -> Result<Vec<Need>, IcebergError> {
    Ok(vec![Need::Actions(
        actions.to_vec(),
        naming_table(Resource::AnyTable(cx.bucket_arn(prefix)?), namespace, name),
    )])
}

/// An operation on a view: views have no ARN of their own, so `<bucket>/table/*`, naming the view.
fn on_view(
    cx: &Context<'_>,
    actions: &[Action],
    prefix: &str,
    view: &Ident,
) -> Result<Vec<Need>, IcebergError> {
    on_new_table(cx, actions, prefix, &view.namespace, &view.name)
}

/// A table named by the request: looked up (and remembered in `tables`); the need is on its ARN when it
/// exists, else on `<bucket>/table/*`.
async fn on_table(
    cx: &Context<'_>,
    op: IcebergOperation,
    prefix: &str,
    ident: &Ident,
    tables: &mut Vec<Option<Table>>,
) -> Result<Vec<Need>, IcebergError> {
    let bucket: BucketArn = cx.bucket_arn(prefix)?;
    let table = lookup(cx, &bucket, ident).await?;
    let resource = match &table {
        Some(table) => Resource::table(table),
        None => naming_table(Resource::AnyTable(bucket), &ident.namespace, &ident.name),
    };
    tables.push(table);
    Ok(vec![Need::Actions(ops(op).to_vec(), resource)])
}

/// A sign request: the table whose storage its URI is in needs the request's data action (`sign.rs`). A URI
/// outside every table's storage, or (on the per-table endpoint) outside the named table's, is 403.
async fn on_signed_table(
    cx: &Context<'_>,
    named: Option<&(String, Ident)>,
    request: &RemoteSignRequest,
    tables: &mut Vec<Option<Table>>,
) -> Result<Vec<Need>, IcebergError> {
    let target = sign::target(request, &cx.app.iceberg.s3_public_url)?;
    let not_signable = || {
        IcebergError::forbidden(format!(
            "Cannot sign a request outside the storage of a table you may reach: {}",
            request.uri
        ))
    };
    let table = cx
        .app
        .catalog
        .table_by_id(target.table_id)
        .await?
        .ok_or_else(not_signable)?;
    if let Some((prefix, ident)) = named {
        let path_table = lookup(cx, &cx.bucket_arn(prefix)?, ident).await?;
        if path_table.is_none_or(|t| t.id != table.id) {
            return Err(not_signable());
        }
    }
    let need = Need::action(target.action, Resource::table(&table));
    tables.push(Some(table));
    Ok(vec![need])
}

/// The table `ident` of `bucket`, or `None` when there is none (or its name could not exist).
async fn lookup(
    cx: &Context<'_>,
    bucket: &BucketArn,
    ident: &Ident,
) -> Result<Option<Table>, IcebergError> {
    let (Ok(namespace), Ok(name)) = (
        NamespaceName::parse(&ident.namespace),
        TableName::parse(&ident.name),
    ) else {
        return Ok(None);
    };
    let table = TableRef::Name {
        bucket: bucket.clone(),
        namespace,
        name,
    };
    match cx.app.catalog.table(&table).await {
        Ok(table) => Ok(Some(table)),
        Err(ServiceError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
