//! What each control-plane operation needs, from its typed endpoint alone: its IAM action (the operation of the
//! same name) on the resource it acts on. A table named by bucket, namespace and name is looked up here, once:
//! the handler acts on that table's ARN, whatever the name points at by then (a missing one is
//! `<bucket>/table/*`, and the handler answers the lookup's own 404).
//!
//! CreateTable and CreateTableBucket need more when their body asks for more (table data, encryption), as S3
//! Tables does. Operations without an action in the product's list (tagging, storage class and metrics
//! configuration) read as the nearest read action (`GetTableBucket` / `GetTable`) and write only for the owning
//! account's roots.

use tablebay_catalog::{
    BucketArn, BucketName, NamespaceName, ResourceArn, ServiceError, TableArn, TableName, TableRef,
};
use tablebay_iam::Resource;
use tablebay_policy::Action;

use super::error::ControlPlaneError;
use super::router::{Endpoint, GetTableSelector, TablePath};
use crate::pipeline::{Context, Need, in_namespace, naming_table};

/// An endpoint with the table it names, looked up once.
pub(crate) struct Resolved {
    pub endpoint: Endpoint,
    /// The table a path names: its ARN, or why it cannot be acted on (no such table, an invalid name).
    pub table: Option<Result<TableRef, ControlPlaneError>>,
}

/// Resolves the endpoint's table and names what the caller needs.
pub(crate) async fn resolve(
    cx: &Context<'_>,
    endpoint: Endpoint,
) -> Result<(Resolved, Vec<Need>), ControlPlaneError> {
    use Action as A;
    use Endpoint as E;
    let bucket_of = |raw: &str| -> Result<Resource, ControlPlaneError> {
        Ok(Resource::Bucket(BucketArn::parse(raw)?))
    };
    let on_bucket = |action: Action, raw: &str| -> Result<Vec<Need>, ControlPlaneError> {
        Ok(vec![Need::action(action, bucket_of(raw)?)])
    };
    let mut table = None;
    let needs = match &endpoint {
        E::CreateTableBucket { request } => {
            let resource = new_bucket(cx, &request.name);
            let mut needs = vec![Need::action(A::CreateTableBucket, resource.clone())];
            // Creating with an encryption configuration sets it: S3 Tables asks for that action too.
            if request.encryption_configuration.is_some() {
                needs.push(Need::action(A::PutTableBucketEncryption, resource));
            }
            needs
        }
        E::ListTableBuckets { .. } => vec![Need::action(
            A::ListTableBuckets,
            Resource::Account(cx.account.clone()),
        )],
        E::GetTableBucket { bucket } => on_bucket(A::GetTableBucket, bucket)?,
        E::DeleteTableBucket { bucket } => on_bucket(A::DeleteTableBucket, bucket)?,
        E::PutTableBucketPolicy { bucket, .. } => on_bucket(A::PutTableBucketPolicy, bucket)?,
        E::GetTableBucketPolicy { bucket } => on_bucket(A::GetTableBucketPolicy, bucket)?,
        E::DeleteTableBucketPolicy { bucket } => on_bucket(A::DeleteTableBucketPolicy, bucket)?,
        E::PutTableBucketEncryption { bucket, .. } => {
            on_bucket(A::PutTableBucketEncryption, bucket)?
        }
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
        E::PutTableBucketLogging { bucket, request } => {
            let source = BucketArn::parse(bucket)?;
            let mut needs = vec![Need::action(
                A::PutTableBucketLogging,
                Resource::Bucket(source.clone()),
            )];
            // The server writes the records into the target bucket for the account: whoever points the logs
            // there must be allowed to create the log table there and write to it (a name that does not parse
            // is the handler's 400).
            if let Some(enabled) = &request.table_bucket_logging_status.logging_enabled
                && let Ok(name) = tablebay_catalog::BucketName::parse(&enabled.target_bucket)
            {
                let target = BucketArn { name, ..source };
                needs.push(Need::Actions(
                    vec![A::CreateNamespace, A::CreateTable],
                    Resource::Bucket(target.clone()),
                ));
                needs.push(Need::action(A::PutTableData, Resource::AnyTable(target)));
            }
            needs
        }
        E::GetTableBucketLogging { bucket } => on_bucket(A::GetTableBucketLogging, bucket)?,
        E::GetTableBucketStorageClass { bucket }
        | E::GetTableBucketMetricsConfiguration { bucket } => on_bucket(A::GetTableBucket, bucket)?,
        E::PutTableBucketStorageClass { bucket, .. }
        | E::PutTableBucketMetricsConfiguration { bucket }
        | E::DeleteTableBucketMetricsConfiguration { bucket } => {
            vec![Need::Owner(bucket_of(bucket)?)]
        }
        E::CreateNamespace { bucket, request } => {
            let resource = bucket_of(bucket)?;
            let resource = match request.namespace.as_slice() {
                [name] => in_namespace(resource, name),
                _ => resource,
            };
            vec![Need::action(A::CreateNamespace, resource)]
        }
        E::ListNamespaces { bucket, .. } => on_bucket(A::ListNamespaces, bucket)?,
        E::GetNamespace { bucket, namespace } => vec![Need::action(
            A::GetNamespace,
            in_namespace(bucket_of(bucket)?, namespace),
        )],
        E::DeleteNamespace { bucket, namespace } => vec![Need::action(
            A::DeleteNamespace,
            in_namespace(bucket_of(bucket)?, namespace),
        )],
        E::CreateTable {
            bucket: raw,
            namespace,
            request,
        } => {
            let resource = naming_table(bucket_of(raw)?, namespace, &request.name);
            let mut needs = vec![Need::action(A::CreateTable, resource.clone())];
            // Creating with metadata writes table data, and with an encryption configuration fixes the table's
            // encryption: `PutTableData` / `PutTableEncryption` (reference/s3tables-api.md §2).
            if request.metadata.is_some() {
                needs.push(Need::action(A::PutTableData, resource.clone()));
            }
            if request.encryption_configuration.is_some() {
                needs.push(Need::action(A::PutTableEncryption, resource));
            }
            needs
        }
        E::ListTables {
            bucket, namespace, ..
        } => {
            let resource = bucket_of(bucket)?;
            let resource = match namespace {
                Some(namespace) => in_namespace(resource, namespace),
                None => resource,
            };
            vec![Need::action(A::ListTables, resource)]
        }
        E::GetTable {
            table: GetTableSelector::Arn(raw),
        } => by_arn(A::GetTable, raw, &mut table)?,
        E::PutTableRecordExpirationConfiguration { table_arn, .. } => by_arn(
            A::PutTableRecordExpirationConfiguration,
            table_arn,
            &mut table,
        )?,
        E::GetTableRecordExpirationConfiguration { table_arn } => by_arn(
            A::GetTableRecordExpirationConfiguration,
            table_arn,
            &mut table,
        )?,
        E::GetTableRecordExpirationJobStatus { table_arn } => {
            by_arn(A::GetTableRecordExpirationJobStatus, table_arn, &mut table)?
        }
        E::PutTableBucketReplication { bucket, .. } => {
            on_bucket(A::PutTableBucketReplication, bucket)?
        }
        E::GetTableBucketReplication { bucket } => on_bucket(A::GetTableBucketReplication, bucket)?,
        E::DeleteTableBucketReplication { bucket, .. } => {
            on_bucket(A::DeleteTableBucketReplication, bucket)?
        }
        E::PutTableReplication { table_arn, .. } => {
            by_arn(A::PutTableReplication, table_arn, &mut table)?
        }
        E::GetTableReplication { table_arn } => {
            by_arn(A::GetTableReplication, table_arn, &mut table)?
        }
        E::DeleteTableReplication { table_arn, .. } => {
            by_arn(A::DeleteTableReplication, table_arn, &mut table)?
        }
        E::GetTableReplicationStatus { table_arn } => {
            by_arn(A::GetTableReplicationStatus, table_arn, &mut table)?
        }
        E::DisassociateTableReplication { table_arn } => {
            by_arn(A::DisassociateTableReplication, table_arn, &mut table)?
        }
        E::GetTable {
            table: GetTableSelector::Path(path),
        } => on_table(cx, A::GetTable, path, &mut table).await?,
        E::DeleteTable { table: path, .. } => {
            on_table(cx, A::DeleteTable, path, &mut table).await?
        }
        E::RenameTable { table: path, .. } => {
            on_table(cx, A::RenameTable, path, &mut table).await?
        }
        E::GetTableMetadataLocation { table: path } => {
            on_table(cx, A::GetTableMetadataLocation, path, &mut table).await?
        }
        E::UpdateTableMetadataLocation { table: path, .. } => {
            on_table(cx, A::UpdateTableMetadataLocation, path, &mut table).await?
        }
        E::PutTablePolicy { table: path, .. } => {
            on_table(cx, A::PutTablePolicy, path, &mut table).await?
        }
        E::GetTablePolicy { table: path } => {
            on_table(cx, A::GetTablePolicy, path, &mut table).await?
        }
        E::DeleteTablePolicy { table: path } => {
            on_table(cx, A::DeleteTablePolicy, path, &mut table).await?
        }
        E::GetTableEncryption { table: path } => {
            on_table(cx, A::GetTableEncryption, path, &mut table).await?
        }
        E::PutTableMaintenanceConfiguration { table: path, .. } => {
            on_table(cx, A::PutTableMaintenanceConfiguration, path, &mut table).await?
        }
        E::GetTableMaintenanceConfiguration { table: path } => {
            on_table(cx, A::GetTableMaintenanceConfiguration, path, &mut table).await?
        }
        E::GetTableMaintenanceJobStatus { table: path } => {
            on_table(cx, A::GetTableMaintenanceJobStatus, path, &mut table).await?
        }
        E::GetTableStorageClass { table: path } => {
            on_table(cx, A::GetTable, path, &mut table).await?
        }
        E::StartTableMigration { request } => {
            let destination = request.destination_table.as_ref().ok_or_else(|| {
                ControlPlaneError::BadRequest("Missing required parameter destinationTable".into())
            })?;
            let resource = naming_table(
                bucket_of(&destination.table_bucket_arn)?,
                &destination.namespace,
                &destination.name,
            );
            // The migration creates the table and writes its data.
            vec![
                Need::action(A::StartTableMigration, resource.clone()),
                Need::action(A::CreateTable, resource.clone()),
                Need::action(A::PutTableData, resource),
            ]
        }
        E::SyncTableMigration { table_arn, .. } => {
            by_arn(A::SyncTableMigration, table_arn, &mut table)?
        }
        E::CompleteTableMigration { table_arn } => {
            by_arn(A::CompleteTableMigration, table_arn, &mut table)?
        }
        E::UpdateTableMigration {
            table_arn: Some(arn),
            ..
        } => by_arn(A::UpdateTableMigration, arn, &mut table)?,
        E::GetTableMigration {
            table_arn: Some(arn),
            ..
        } => by_arn(A::GetTableMigration, arn, &mut table)?,
        // By migration id: the account's own migrations only (the service answers 404 for another's).
        E::UpdateTableMigration {
            table_arn: None, ..
        } => vec![Need::action(
            A::UpdateTableMigration,
            Resource::Account(cx.account.clone()),
        )],
        E::GetTableMigration {
            table_arn: None, ..
        } => vec![Need::action(
            A::GetTableMigration,
            Resource::Account(cx.account.clone()),
        )],
        E::ListTableMigrations { query } => match (&query.table_arn, &query.bucket) {
            (Some(arn), _) => by_arn(A::ListTableMigrations, arn, &mut table)?,
            (None, Some(bucket)) => on_bucket(A::ListTableMigrations, bucket)?,
            (None, None) => {
                return Err(ControlPlaneError::BadRequest(
                    "Missing required parameter tableBucketARN or tableARN".into(),
                ));
            }
        },
        E::ListTagsForResource { arn } => match ResourceArn::parse(arn)? {
            ResourceArn::Bucket(bucket) => {
                vec![Need::action(A::GetTableBucket, Resource::Bucket(bucket))]
            }
            ResourceArn::Table(table) => vec![Need::action(A::GetTable, Resource::Table(table))],
        },
        E::TagResource { arn, .. } | E::UntagResource { arn, .. } => {
            vec![Need::Owner(match ResourceArn::parse(arn)? {
                ResourceArn::Bucket(bucket) => Resource::Bucket(bucket),
                ResourceArn::Table(table) => Resource::Table(table),
            })]
        }
    };
    Ok((Resolved { endpoint, table }, needs))
}

/// The bucket a CreateTableBucket names (`bucket/<name>`), or the account's `bucket/*` when the name is invalid
/// (the operation then answers its own 400).
fn new_bucket(cx: &Context<'_>, name: &str) -> Resource {
    match BucketName::parse(name) {
        Ok(name) => {
            let config = cx.catalog().config();
            Resource::Bucket(BucketArn {
                flavor: config.flavor,
                region: config.region.clone(),
                account: cx.account.clone(),
                name,
            })
        }
        Err(_) => Resource::Account(cx.account.clone()),
    }
}

/// A table named by ARN (`?tableArn=`): the need is on that ARN; the handler answers the lookup's own 404.
fn by_arn(
    action: Action,
    raw: &str,
    table: &mut Option<Result<TableRef, ControlPlaneError>>,
) -> Result<Vec<Need>, ControlPlaneError> {
    let arn = TableArn::parse(raw)?;
    *table = Some(Ok(TableRef::Arn(arn.clone())));
    Ok(vec![Need::action(action, Resource::Table(arn))])
}

/// A table named by path: looked up (remembered in `table`); the need is on its ARN when it exists, else on
/// `<bucket>/table/*`.
async fn on_table(
    cx: &Context<'_>,
    action: Action,
    path: &TablePath,
    table: &mut Option<Result<TableRef, ControlPlaneError>>,
) -> Result<Vec<Need>, ControlPlaneError> {
    let bucket = BucketArn::parse(&path.bucket)?;
    let named = match (
        NamespaceName::parse(&path.namespace),
        TableName::parse(&path.name),
    ) {
        (Ok(namespace), Ok(name)) => TableRef::Name {
            bucket: bucket.clone(),
            namespace,
            name,
        },
        (Err(e), _) | (_, Err(e)) => {
            *table = Some(Err(e.into()));
            return Ok(vec![Need::action(action, Resource::AnyTable(bucket))]);
        }
    };
    let resource = match cx.catalog().table(&named).await {
        Ok(found) => {
            *table = Some(Ok(TableRef::Arn(found.arn.clone())));
            Resource::table(&found)
        }
        Err(ServiceError::NotFound(message)) => {
            *table = Some(Err(ControlPlaneError::NotFound(message)));
            Resource::AnyTable(bucket)
        }
        Err(e) => return Err(e.into()),
    };
    Ok(vec![Need::action(action, resource)])
}
