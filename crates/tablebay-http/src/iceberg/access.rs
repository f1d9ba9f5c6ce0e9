//! What each Iceberg REST operation needs, from its typed endpoint alone: the actions of the product's map
//! (`tablebay_policy::iceberg_operation_actions`: `loadTable` → `GetTableMetadataLocation` + `GetTableData`, …)
//! on its resource — the table for table operations, the bucket otherwise. Tables named by the path or the body
//! are looked up here, once: the handler acts on exactly the table that was authorized (a missing one is
//! `<bucket>/table/*`, and the handler answers its own 404 without looking again). Views, which the guide does
//! not list, need the table action of the same shape.

use tablebay_catalog::{BucketArn, CatalogError, NamespaceName, Table, TableName};
use tablebay_iam::Resource;
use tablebay_policy::{Action, IcebergOperation, iceberg_operation_actions};

use super::context::Lookups;
use super::error::IcebergError;
use super::router::{Endpoint, Ident};
use crate::pipeline::{Context, Need};

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
        E::CreateNamespace { prefix, .. } => on_bucket(cx, O::CreateNamespace, prefix)?,
        E::LoadNamespace { prefix, .. } => on_bucket(cx, O::LoadNamespace, prefix)?,
        E::NamespaceExists { prefix, .. } => on_bucket(cx, O::NamespaceExists, prefix)?,
        E::DropNamespace { prefix, .. } => on_bucket(cx, O::DropNamespace, prefix)?,
        E::UpdateNamespaceProperties { prefix, .. } => {
            on_bucket(cx, O::UpdateNamespaceProperties, prefix)?
        }
        E::ListTables { prefix, .. } => on_bucket(cx, O::ListTables, prefix)?,
        E::CreateTable { prefix, .. } => on_any_table(cx, ops(O::CreateTable), prefix)?,
        E::RegisterTable { prefix, .. } => on_any_table(cx, ops(O::RegisterTable), prefix)?,
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
                needs.extend(
                    on_table(cx, O::CommitTransaction, prefix, ident, &mut tables).await?,
                );
            }
            needs
        }
        E::ListViews { prefix, .. } => on_bucket_action(cx, Action::ListTables, prefix)?,
        E::CreateView { prefix, .. } => on_any_table(cx, &[Action::CreateTable], prefix)?,
        E::LoadView { prefix, .. } | E::ViewExists { prefix, .. } => {
            on_any_table(cx, &[Action::GetTable], prefix)?
        }
        E::ReplaceView { prefix, .. } => {
            on_any_table(cx, &[Action::UpdateTableMetadataLocation], prefix)?
        }
        E::DropView { prefix, .. } => on_any_table(cx, &[Action::DeleteTable], prefix)?,
        E::RenameView { prefix, .. } => on_any_table(cx, &[Action::RenameTable], prefix)?,
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

fn on_bucket_action(
    cx: &Context<'_>,
    action: Action,
    prefix: &str,
) -> Result<Vec<Need>, IcebergError> {
    Ok(vec![Need::action(
        action,
        Resource::Bucket(cx.bucket_arn(prefix)?),
    )])
}

fn on_any_table(
    cx: &Context<'_>,
    actions: &[Action],
    prefix: &str,
) -> Result<Vec<Need>, IcebergError> {
    Ok(vec![Need::Actions(
        actions.to_vec(),
        Resource::AnyTable(cx.bucket_arn(prefix)?),
    )])
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
        Some(table) => Resource::Table(table.arn.clone()),
        None => Resource::AnyTable(bucket),
    };
    tables.push(table);
    Ok(vec![Need::Actions(ops(op).to_vec(), resource)])
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
    match cx
        .app
        .catalog
        .table_by_path(bucket, &namespace, &name)
        .await
    {
        Ok(table) => Ok(Some(table)),
        Err(CatalogError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
