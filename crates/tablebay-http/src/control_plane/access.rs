//! Authorization of the control plane, once per request before the operation runs: each operation's IAM action
//! (the operation of the same name) and the resource it acts on, resolved from the path — a table named by
//! bucket, namespace and name is looked up for its ARN (a missing one is `<bucket>/table/*`, and the operation
//! then answers its own 404).
//!
//! Operations without an action in the product's list (tagging, storage class, metrics configuration) read as
//! the nearest read action (`GetTableBucket` / `GetTable`) and write only for the owning account's roots.

use tablebay_auth::Principal;
use tablebay_catalog::{
    AccountId, BucketArn, BucketName, CatalogError, ResourceArn, TableArn, TableRef,
};
use tablebay_iam::{AccessContext, Iam, Resource};
use tablebay_policy::Action;

use super::error::ControlPlaneError;
use super::request::RequestContext;
use super::router::{Endpoint, GetTableSelector, TablePath};
use crate::state::AppState;

/// What a control-plane operation needs.
enum Need {
    /// An IAM action on a resource.
    Action(Action, Resource),
    /// Only the root of the resource's account.
    Owner(Resource),
}

/// Decides whether the caller may perform `endpoint`; `AccessDeniedException` otherwise.
pub(crate) async fn authorize(
    app: &AppState,
    ctx: &RequestContext,
    endpoint: &Endpoint,
    body: &[u8],
    cx: &AccessContext,
) -> Result<(), ControlPlaneError> {
    match need(app, ctx, endpoint, body).await? {
        Need::Action(action, resource) => {
            app.iam
                .authorize(&ctx.principal, action, &resource, cx)
                .await?;
            // Creating with metadata writes table data, and with an encryption configuration sets it: S3 Tables
            // asks for those actions too.
            let extras = match endpoint {
                Endpoint::CreateTable { .. } => create_table_extras(body),
                Endpoint::CreateTableBucket if has_field(body, "encryptionConfiguration") => {
                    vec![Action::PutTableBucketEncryption]
                }
                _ => Vec::new(),
            };
            for extra in extras {
                app.iam
                    .authorize(&ctx.principal, extra, &resource, cx)
                    .await?;
            }
            Ok(())
        }
        Need::Owner(resource) => {
            owner_only(&app.iam, &ctx.principal, &resource, endpoint.operation())
        }
    }
}

/// CreateTable also writes table data when it carries `metadata`, and fixes the table's encryption when it carries
/// an `encryptionConfiguration`: `PutTableData` / `PutTableEncryption` (reference/s3tables-api.md §2). A body that
/// does not parse needs nothing more (the operation answers its own 400).
fn create_table_extras(body: &[u8]) -> Vec<Action> {
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let present = |key: &str| body.get(key).is_some_and(|v| !v.is_null());
    let mut extras = Vec::new();
    if present("metadata") {
        extras.push(Action::PutTableData);
    }
    if present("encryptionConfiguration") {
        extras.push(Action::PutTableEncryption);
    }
    extras
}

fn owner_only(
    iam: &Iam,
    principal: &Principal,
    resource: &Resource,
    operation: &str,
) -> Result<(), ControlPlaneError> {
    // The instance root is the root of the default account here.
    if principal.kind.is_root()
        && principal.session.is_none()
        && principal.account_id == resource.account().as_str()
    {
        return Ok(());
    }
    let arn = resource.arn(&iam.config().region, iam.config().flavor);
    tracing::info!(
        target: tablebay_iam::AUDIT_TARGET,
        principal = %principal.arn,
        action = operation,
        resource = %arn,
        decision = "deny",
        reason = "only the owning account's root may",
        "audit"
    );
    Err(ControlPlaneError::AccessDenied(format!(
        "User: {} is not authorized to perform: {operation} on resource: {arn}",
        principal.arn
    )))
}

async fn need(
    app: &AppState,
    ctx: &RequestContext,
    endpoint: &Endpoint,
    body: &[u8],
) -> Result<Need, ControlPlaneError> {
    use Action as A;
    use Endpoint as E;
    let bucket_of = |raw: &str| BucketArn::parse(raw).map(Resource::Bucket);
    let on_bucket = |action: Action, raw: &str| -> Result<Need, ControlPlaneError> {
        Ok(Need::Action(action, bucket_of(raw)?))
    };
    Ok(match endpoint {
        E::CreateTableBucket => {
            Need::Action(A::CreateTableBucket, new_bucket(app, &ctx.account, body))
        }
        E::ListTableBuckets { .. } => {
            Need::Action(A::ListTableBuckets, Resource::Account(ctx.account.clone()))
        }
        E::GetTableBucket { bucket } => on_bucket(A::GetTableBucket, bucket)?,
        E::DeleteTableBucket { bucket } => on_bucket(A::DeleteTableBucket, bucket)?,
        E::PutTableBucketPolicy { bucket } => on_bucket(A::PutTableBucketPolicy, bucket)?,
        E::GetTableBucketPolicy { bucket } => on_bucket(A::GetTableBucketPolicy, bucket)?,
        E::DeleteTableBucketPolicy { bucket } => on_bucket(A::DeleteTableBucketPolicy, bucket)?,
        E::PutTableBucketEncryption { bucket } => on_bucket(A::PutTableBucketEncryption, bucket)?,
        E::GetTableBucketEncryption { bucket } => on_bucket(A::GetTableBucketEncryption, bucket)?,
        E::DeleteTableBucketEncryption { bucket } => {
            on_bucket(A::DeleteTableBucketEncryption, bucket)?
        }
        E::PutTableBucketMaintenanceConfiguration { bucket, .. } => {
            on_bucket(A::PutTableBucketMaintenanceConfiguration, bucket)?
        }
        E::GetTableBucketMaintenanceConfiguration { bucket } => {
            on_bucket(A::GetTableBucketMaintenanceConfiguration, bucket)?
        }
        E::GetTableBucketStorageClass { bucket }
        | E::GetTableBucketMetricsConfiguration { bucket } => on_bucket(A::GetTableBucket, bucket)?,
        E::PutTableBucketStorageClass { bucket }
        | E::PutTableBucketMetricsConfiguration { bucket }
        | E::DeleteTableBucketMetricsConfiguration { bucket } => Need::Owner(bucket_of(bucket)?),
        E::CreateNamespace { bucket } => on_bucket(A::CreateNamespace, bucket)?,
        E::ListNamespaces { bucket, .. } => on_bucket(A::ListNamespaces, bucket)?,
        E::GetNamespace { bucket, .. } => on_bucket(A::GetNamespace, bucket)?,
        E::DeleteNamespace { bucket, .. } => on_bucket(A::DeleteNamespace, bucket)?,
        E::CreateTable { bucket, .. } => on_bucket(A::CreateTable, bucket)?,
        E::ListTables { bucket, .. } => on_bucket(A::ListTables, bucket)?,
        E::GetTable { table } => match table {
            GetTableSelector::Arn(raw) => {
                Need::Action(A::GetTable, Resource::Table(TableArn::parse(raw)?))
            }
            GetTableSelector::Path(path) => {
                Need::Action(A::GetTable, table_resource(app, path).await?)
            }
        },
        E::DeleteTable { table, .. } => {
            Need::Action(A::DeleteTable, table_resource(app, table).await?)
        }
        E::RenameTable { table } => Need::Action(A::RenameTable, table_resource(app, table).await?),
        E::GetTableMetadataLocation { table } => Need::Action(
            A::GetTableMetadataLocation,
            table_resource(app, table).await?,
        ),
        E::UpdateTableMetadataLocation { table } => Need::Action(
            A::UpdateTableMetadataLocation,
            table_resource(app, table).await?,
        ),
        E::PutTablePolicy { table } => {
            Need::Action(A::PutTablePolicy, table_resource(app, table).await?)
        }
        E::GetTablePolicy { table } => {
            Need::Action(A::GetTablePolicy, table_resource(app, table).await?)
        }
        E::DeleteTablePolicy { table } => {
            Need::Action(A::DeleteTablePolicy, table_resource(app, table).await?)
        }
        E::GetTableEncryption { table } => {
            Need::Action(A::GetTableEncryption, table_resource(app, table).await?)
        }
        E::PutTableMaintenanceConfiguration { table, .. } => Need::Action(
            A::PutTableMaintenanceConfiguration,
            table_resource(app, table).await?,
        ),
        E::GetTableMaintenanceConfiguration { table } => Need::Action(
            A::GetTableMaintenanceConfiguration,
            table_resource(app, table).await?,
        ),
        E::GetTableMaintenanceJobStatus { table } => Need::Action(
            A::GetTableMaintenanceJobStatus,
            table_resource(app, table).await?,
        ),
        E::GetTableStorageClass { table } => {
            Need::Action(A::GetTable, table_resource(app, table).await?)
        }
        E::ListTagsForResource { arn } => match ResourceArn::parse(arn)? {
            ResourceArn::Bucket(bucket) => {
                Need::Action(A::GetTableBucket, Resource::Bucket(bucket))
            }
            ResourceArn::Table(table) => Need::Action(A::GetTable, Resource::Table(table)),
        },
        E::TagResource { arn } | E::UntagResource { arn, .. } => {
            Need::Owner(match ResourceArn::parse(arn)? {
                ResourceArn::Bucket(bucket) => Resource::Bucket(bucket),
                ResourceArn::Table(table) => Resource::Table(table),
            })
        }
    })
}

/// Whether a JSON body has a non-null top-level `field`.
fn has_field(body: &[u8], field: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get(field).cloned())
        .is_some_and(|v| !v.is_null())
}

/// The bucket a CreateTableBucket names in its body (`bucket/<name>`), or `bucket/*` when the body has none yet
/// (the operation then answers its own 400).
fn new_bucket(app: &AppState, account: &AccountId, body: &[u8]) -> Resource {
    let name = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .and_then(|n| BucketName::parse(&n).ok());
    match name {
        Some(name) => {
            let config = app.catalog.config();
            Resource::Bucket(BucketArn {
                flavor: config.flavor,
                region: config.region.clone(),
                account: account.clone(),
                name,
            })
        }
        None => Resource::Account(account.clone()),
    }
}

/// A table named by path: its ARN when it exists, else `<bucket>/table/*`.
async fn table_resource(app: &AppState, path: &TablePath) -> Result<Resource, ControlPlaneError> {
    let bucket = BucketArn::parse(&path.bucket)?;
    let (Ok(namespace), Ok(name)) = (
        tablebay_catalog::NamespaceName::parse(&path.namespace),
        tablebay_catalog::TableName::parse(&path.name),
    ) else {
        return Ok(Resource::AnyTable(bucket));
    };
    match app
        .catalog
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
