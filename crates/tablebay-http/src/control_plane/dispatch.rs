//! The S3 Tables control plane as a surface of the request pipeline (`crate::pipeline`): SigV4, a 1 MiB body,
//! the typed endpoint of `router.rs`, the needs of `access.rs`, then the operation's handler; errors in the
//! restJson1 format.

use axum::extract::{Request, State};
use axum::response::Response;
use http::HeaderName;
use http::request::Parts;
use tablebay_auth::PrincipalKind;
use tablebay_catalog::Catalog;

use super::access::{self, Resolved};
use super::error::ControlPlaneError;
use super::request::RequestContext;
use super::router::{Endpoint, route};
use super::{
    buckets, encryption, logging, maintenance, migrations, namespaces, policies, record_expiration,
    replication, storage, tables, tagging, virtual_host,
};
use crate::pipeline::{self, Context, Need, RequestBody, Schemes, Surface};
use crate::state::AppState;

/// The S3 Tables control plane surface.
pub(crate) struct ControlPlane;

impl Surface for ControlPlane {
    const NAME: &'static str = "control_plane";
    const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-amzn-requestid");
    /// Control-plane bodies are small JSON documents; policies are at most 20 KiB, schemas a few KiB.
    const MAX_BODY_BYTES: usize = 1024 * 1024;

    type Endpoint = Endpoint;
    type Resolved = Resolved;
    type Error = ControlPlaneError;

    fn schemes(&self, app: &AppState) -> Schemes {
        Schemes::signed(&app.tables_verifier)
    }

    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Endpoint, ControlPlaneError> {
        let endpoint = route(&parts.method, parts.uri.path(), parts.uri.query(), &body)?;
        virtual_host::check(parts, &endpoint)?;
        Ok(endpoint)
    }

    fn operation(endpoint: &Endpoint) -> &'static str {
        endpoint.operation()
    }

    async fn resolve(
        &self,
        cx: &Context<'_>,
        endpoint: Endpoint,
    ) -> Result<(Resolved, Vec<Need>), ControlPlaneError> {
        access::resolve(cx, endpoint).await
    }

    async fn handle(
        &self,
        cx: &Context<'_>,
        resolved: Resolved,
    ) -> Result<Response, ControlPlaneError> {
        let ctx = RequestContext {
            account: cx.account.clone(),
            role: (cx.principal.kind == PrincipalKind::Role)
                .then(|| (cx.principal.account_id.clone(), cx.principal.name.clone())),
        };
        dispatch(cx.catalog(), cx.app.migrations.as_ref(), &ctx, resolved).await
    }
}

/// Handles one control-plane request.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    pipeline::serve(&app, &ControlPlane, request).await
}

async fn dispatch(
    catalog: &Catalog,
    migration: Option<&tablebay_migration::Migrations>,
    ctx: &RequestContext,
    resolved: Resolved,
) -> Result<Response, ControlPlaneError> {
    use Endpoint as E;
    let Resolved { endpoint, table } = resolved;
    // The table a table operation names, by the ARN that was authorized.
    let table = || {
        table.unwrap_or_else(|| {
            Err(ControlPlaneError::Internal(
                "a table operation was resolved without its table".to_string(),
            ))
        })
    };
    match endpoint {
        E::CreateTableBucket { request } => buckets::create(catalog, ctx, request).await,
        E::ListTableBuckets { query, bucket_type } => {
            buckets::list(catalog, ctx, &query, bucket_type.as_deref()).await
        }
        E::GetTableBucket { bucket } => buckets::get(catalog, ctx, &bucket).await,
        E::DeleteTableBucket { bucket } => buckets::delete(catalog, ctx, &bucket).await,
        E::PutTableBucketPolicy { bucket, request } => {
            policies::put_bucket(catalog, ctx, &bucket, request).await
        }
        E::GetTableBucketPolicy { bucket } => policies::get_bucket(catalog, ctx, &bucket).await,
        E::DeleteTableBucketPolicy { bucket } => {
            policies::delete_bucket(catalog, ctx, &bucket).await
        }
        E::PutTableBucketEncryption { bucket, request } => {
            encryption::put_bucket(catalog, ctx, &bucket, request).await
        }
        E::GetTableBucketEncryption { bucket } => {
            encryption::get_bucket(catalog, ctx, &bucket).await
        }
        E::DeleteTableBucketEncryption { bucket } => {
            encryption::delete_bucket(catalog, ctx, &bucket).await
        }
        E::PutTableBucketMaintenanceConfiguration {
            bucket,
            job_type,
            request,
        } => maintenance::put_bucket(catalog, ctx, &bucket, &job_type, request).await,
        E::GetTableBucketMaintenanceConfiguration { bucket } => {
            maintenance::get_bucket(catalog, ctx, &bucket).await
        }
        E::PutTableBucketStorageClass { bucket, request } => {
            storage::put_bucket_class(catalog, ctx, &bucket, request).await
        }
        E::GetTableBucketStorageClass { bucket } => {
            storage::get_bucket_class(catalog, ctx, &bucket).await
        }
        E::PutTableBucketLogging { bucket, request } => {
            logging::put_bucket(catalog, ctx, &bucket, request).await
        }
        E::GetTableBucketLogging { bucket } => logging::get_bucket(catalog, ctx, &bucket).await,
        E::PutTableBucketMetricsConfiguration { bucket } => {
            storage::put_metrics(catalog, ctx, &bucket).await
        }
        E::GetTableBucketMetricsConfiguration { bucket } => {
            storage::get_metrics(catalog, ctx, &bucket).await
        }
        E::DeleteTableBucketMetricsConfiguration { bucket } => {
            storage::delete_metrics(catalog, ctx, &bucket).await
        }
        E::CreateNamespace { bucket, request } => {
            namespaces::create(catalog, ctx, &bucket, request).await
        }
        E::ListNamespaces { bucket, query } => {
            namespaces::list(catalog, ctx, &bucket, &query).await
        }
        E::GetNamespace { bucket, namespace } => {
            namespaces::get(catalog, ctx, &bucket, &namespace).await
        }
        E::DeleteNamespace { bucket, namespace } => {
            namespaces::delete(catalog, ctx, &bucket, &namespace).await
        }
        E::CreateTable {
            bucket,
            namespace,
            request,
        } => tables::create(catalog, ctx, &bucket, &namespace, request).await,
        E::ListTables {
            bucket,
            namespace,
            query,
        } => tables::list(catalog, ctx, &bucket, namespace.as_deref(), &query).await,
        E::GetTable { .. } => tables::get(catalog, &table()?).await,
        E::DeleteTable { version_token, .. } => {
            tables::delete(catalog, &table()?, version_token.as_deref()).await
        }
        E::RenameTable { request, .. } => tables::rename(catalog, ctx, &table()?, request).await,
        E::GetTableMetadataLocation { .. } => {
            tables::get_metadata_location(catalog, &table()?).await
        }
        E::UpdateTableMetadataLocation { request, .. } => {
            tables::update_metadata_location(catalog, ctx, &table()?, request).await
        }
        E::PutTablePolicy { request, .. } => policies::put_table(catalog, &table()?, request).await,
        E::GetTablePolicy { .. } => policies::get_table(catalog, &table()?).await,
        E::DeleteTablePolicy { .. } => policies::delete_table(catalog, &table()?).await,
        E::GetTableEncryption { .. } => encryption::get_table(catalog, &table()?).await,
        E::PutTableMaintenanceConfiguration {
            job_type, request, ..
        } => maintenance::put_table(catalog, &table()?, &job_type, request).await,
        E::GetTableMaintenanceConfiguration { .. } => {
            maintenance::get_table(catalog, &table()?).await
        }
        E::GetTableMaintenanceJobStatus { .. } => maintenance::job_status(catalog, &table()?).await,
        E::GetTableStorageClass { .. } => storage::get_table_class(catalog, &table()?).await,
        E::PutTableRecordExpirationConfiguration { request, .. } => {
            record_expiration::put(catalog, &table()?, request).await
        }
        E::GetTableRecordExpirationConfiguration { .. } => {
            record_expiration::get(catalog, &table()?).await
        }
        E::GetTableRecordExpirationJobStatus { .. } => {
            record_expiration::job_status(catalog, &table()?).await
        }
        E::PutTableBucketReplication {
            bucket,
            version_token,
            request,
        } => {
            replication::put_bucket(catalog, ctx, &bucket, version_token.as_deref(), request).await
        }
        E::GetTableBucketReplication { bucket } => {
            replication::get_bucket(catalog, ctx, &bucket).await
        }
        E::DeleteTableBucketReplication {
            bucket,
            version_token,
        } => replication::delete_bucket(catalog, ctx, &bucket, version_token.as_deref()).await,
        E::PutTableReplication {
            version_token,
            request,
            ..
        } => replication::put_table(catalog, &table()?, version_token.as_deref(), request).await,
        E::GetTableReplication { .. } => replication::get_table(catalog, &table()?).await,
        E::DeleteTableReplication { version_token, .. } => {
            replication::delete_table(catalog, &table()?, &version_token).await
        }
        E::GetTableReplicationStatus { .. } => replication::status(catalog, &table()?).await,
        E::DisassociateTableReplication { .. } => {
            replication::disassociate(catalog, ctx, &table()?).await
        }
        E::StartTableMigration { request } => migrations::start(migration, ctx, *request).await,
        E::SyncTableMigration { request, .. } => {
            migrations::sync(migration, catalog, &table()?, request).await
        }
        E::UpdateTableMigration {
            migration_id,
            request,
            table_arn,
        } => {
            let table = table_arn.map(|_| table()).transpose()?;
            migrations::update(
                migration,
                catalog,
                ctx,
                migration_id.as_deref(),
                table.as_ref(),
                request,
            )
            .await
        }
        E::CompleteTableMigration { .. } => {
            migrations::complete(migration, catalog, &table()?).await
        }
        E::GetTableMigration {
            migration_id,
            table_arn,
        } => {
            let table = table_arn.map(|_| table()).transpose()?;
            migrations::get(
                migration,
                catalog,
                ctx,
                migration_id.as_deref(),
                table.as_ref(),
            )
            .await
        }
        E::ListTableMigrations { query } => {
            let table = query.table_arn.as_ref().map(|_| table()).transpose()?;
            migrations::list(migration, catalog, table.as_ref(), &query).await
        }
        E::TagResource { arn, request } => tagging::tag(catalog, &arn, request).await,
        E::UntagResource { arn, tag_keys } => tagging::untag(catalog, &arn, &tag_keys).await,
        E::ListTagsForResource { arn } => tagging::list(catalog, &arn).await,
    }
}
