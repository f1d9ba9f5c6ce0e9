//! Authorization of the Iceberg REST catalog, once per request before the operation runs: each operation needs
//! the actions of the product's map (`tablebay_policy::iceberg_operation_actions`: `loadTable` →
//! `GetTableMetadataLocation` + `GetTableData`, …) on its resource — the table for table operations (looked up
//! for its ARN; a missing one is `<bucket>/table/*` and the operation answers its own 404), the bucket
//! otherwise. Views, which the guide does not list, need the table action of the same shape.

use tablebay_catalog::{BucketArn, CatalogError, NamespaceName, TableName, TableRef};
use tablebay_iam::Resource;
use tablebay_policy::{Action, IcebergOperation, iceberg_operation_actions};

use super::context::IcebergContext;
use super::error::IcebergError;
use super::router::{Endpoint, Ident};

/// Decides whether the caller may perform `endpoint`; 403 `ForbiddenException` otherwise.
pub(crate) async fn authorize(
    ctx: &IcebergContext<'_>,
    endpoint: &Endpoint,
    body: &[u8],
) -> Result<(), IcebergError> {
    use Endpoint as E;
    use IcebergOperation as O;
    let (actions, resource): (&[Action], Resource) = match endpoint {
        E::Config { warehouse: None } | E::OAuthTokens => return Ok(()),
        E::Config {
            warehouse: Some(warehouse),
        } => (ops(O::GetConfig), bucket(ctx, warehouse)?),
        E::ListNamespaces { prefix, .. } => (ops(O::ListNamespaces), bucket(ctx, prefix)?),
        E::CreateNamespace { prefix } => (ops(O::CreateNamespace), bucket(ctx, prefix)?),
        E::LoadNamespace { prefix, .. } => (ops(O::LoadNamespace), bucket(ctx, prefix)?),
        E::NamespaceExists { prefix, .. } => (ops(O::NamespaceExists), bucket(ctx, prefix)?),
        E::DropNamespace { prefix, .. } => (ops(O::DropNamespace), bucket(ctx, prefix)?),
        E::UpdateNamespaceProperties { prefix, .. } => {
            (ops(O::UpdateNamespaceProperties), bucket(ctx, prefix)?)
        }
        E::ListTables { prefix, .. } => (ops(O::ListTables), bucket(ctx, prefix)?),
        E::CreateTable { prefix, .. } => (ops(O::CreateTable), any_table(ctx, prefix)?),
        E::RegisterTable { prefix, .. } => (ops(O::RegisterTable), any_table(ctx, prefix)?),
        E::LoadTable { prefix, table, .. } => {
            (ops(O::LoadTable), table_resource(ctx, prefix, table).await?)
        }
        E::TableExists { prefix, table } => (
            ops(O::TableExists),
            table_resource(ctx, prefix, table).await?,
        ),
        E::CommitTable { prefix, table } => (
            ops(O::UpdateTable),
            table_resource(ctx, prefix, table).await?,
        ),
        E::DropTable { prefix, table, .. } => {
            (ops(O::DropTable), table_resource(ctx, prefix, table).await?)
        }
        E::ReportMetrics { prefix, table } => {
            (ops(O::LoadTable), table_resource(ctx, prefix, table).await?)
        }
        E::LoadCredentials { prefix, table } => (
            ops(O::LoadCredentials),
            table_resource(ctx, prefix, table).await?,
        ),
        E::RenameTable { prefix } => {
            let source = body_ident(body, "source");
            (
                ops(O::RenameTable),
                maybe_table(ctx, prefix, source.as_ref()).await?,
            )
        }
        E::CommitTransaction { prefix } => {
            // Every table the transaction changes needs what a single commit needs.
            for ident in transaction_tables(body) {
                let resource = table_resource(ctx, prefix, &ident).await?;
                ctx.app
                    .iam
                    .authorize_all(
                        &ctx.principal,
                        ops(O::CommitTransaction),
                        &resource,
                        &ctx.access,
                    )
                    .await?;
            }
            return Ok(());
        }
        E::ListViews { prefix, .. } => (&[Action::ListTables], bucket(ctx, prefix)?),
        E::CreateView { prefix, .. } => (&[Action::CreateTable], any_table(ctx, prefix)?),
        E::LoadView { prefix, .. } | E::ViewExists { prefix, .. } => {
            (&[Action::GetTable], any_table(ctx, prefix)?)
        }
        E::ReplaceView { prefix, .. } => (
            &[Action::UpdateTableMetadataLocation],
            any_table(ctx, prefix)?,
        ),
        E::DropView { prefix, .. } => (&[Action::DeleteTable], any_table(ctx, prefix)?),
        E::RenameView { prefix } => (&[Action::RenameTable], any_table(ctx, prefix)?),
    };
    Ok(ctx
        .app
        .iam
        .authorize_all(&ctx.principal, actions, &resource, &ctx.access)
        .await?)
}

fn ops(op: IcebergOperation) -> &'static [Action] {
    iceberg_operation_actions(op)
}

fn bucket(ctx: &IcebergContext<'_>, prefix: &str) -> Result<Resource, IcebergError> {
    Ok(Resource::Bucket(ctx.bucket_arn(prefix)?))
}

fn any_table(ctx: &IcebergContext<'_>, prefix: &str) -> Result<Resource, IcebergError> {
    Ok(Resource::AnyTable(ctx.bucket_arn(prefix)?))
}

/// A table named in a path: its ARN when it exists, else `<bucket>/table/*`.
async fn table_resource(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    table: &Ident,
) -> Result<Resource, IcebergError> {
    maybe_table(ctx, prefix, Some(table)).await
}

async fn maybe_table(
    ctx: &IcebergContext<'_>,
    prefix: &str,
    table: Option<&Ident>,
) -> Result<Resource, IcebergError> {
    let bucket: BucketArn = ctx.bucket_arn(prefix)?;
    let Some(table) = table else {
        return Ok(Resource::AnyTable(bucket));
    };
    let (Ok(namespace), Ok(name)) = (
        NamespaceName::parse(&table.namespace),
        TableName::parse(&table.name),
    ) else {
        return Ok(Resource::AnyTable(bucket));
    };
    match ctx
        .catalog()
        .table(&TableRef::Name {
            bucket: bucket.clone(),
            namespace,
            name,
        })
        .await
    {
        Ok(table) => Ok(Resource::Table(table.arn)),
        Err(CatalogError::NotFound(_)) => Ok(Resource::AnyTable(bucket)),
        Err(e) => Err(e.into()),
    }
}

/// A `TableIdentifier` (`{"namespace": [..], "name": ..}`) from a JSON value; multi-level namespaces do not exist
/// here, so only a one-level one names a table.
fn ident_of(value: &serde_json::Value) -> Option<Ident> {
    let levels = value.get("namespace")?.as_array()?;
    let [level] = levels.as_slice() else {
        return None;
    };
    Some(Ident {
        namespace: level.as_str()?.to_string(),
        name: value.get("name")?.as_str()?.to_string(),
    })
}

fn body_ident(body: &[u8], field: &str) -> Option<Ident> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    ident_of(value.get(field)?)
}

/// The identifiers of `table-changes` in a transaction body (a malformed body is the operation's own 400).
fn transaction_tables(body: &[u8]) -> Vec<Ident> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let Some(changes) = value.get("table-changes").and_then(|c| c.as_array()) else {
        return Vec::new();
    };
    changes
        .iter()
        .filter_map(|change| change.get("identifier").and_then(ident_of))
        .collect()
}
