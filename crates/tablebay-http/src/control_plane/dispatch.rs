//! The control plane's one entry point: read the body (bounded), authenticate, route, call the operation's
//! handler, and answer errors in the restJson1 format — with a request id, a log line and metrics.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::HeaderValue;
use tablebay_auth::AuthError;
use tablebay_catalog::{AccountId, Catalog};

use super::error::ControlPlaneError;
use super::request::RequestContext;
use super::router::{Endpoint, route};
use super::{
    access, buckets, encryption, maintenance, namespaces, policies, storage, tables, tagging,
};
use crate::authn::{access_context, authenticate};
use crate::state::AppState;

/// Control-plane bodies are small JSON documents; policies are at most 20 KiB, schemas a few KiB.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The control plane's (and admin's) answer to a failed authentication.
pub(crate) fn auth_error(e: AuthError) -> ControlPlaneError {
    ControlPlaneError::Forbidden(match e {
        AuthError::Missing => "Missing Authentication Token".to_string(),
        AuthError::UnknownAccessKey => "The security token included in the request is invalid.".to_string(),
        AuthError::SignatureMismatch => "The request signature we calculated does not match the signature you \
                                         provided. Check your AWS Secret Access Key and signing method."
            .to_string(),
        AuthError::RequestExpired => "Signature expired: the request time is too far from the server time.".to_string(),
        AuthError::Malformed(why) => format!("Malformed authorization: {why}"),
        AuthError::ScopeMismatch(why) => format!("Credential should be scoped correctly: {why}"),
        AuthError::InvalidSessionToken => "The security token included in the request is invalid.".to_string(),
        AuthError::ExpiredSessionToken => "The security token included in the request is expired".to_string(),
        AuthError::Unavailable => return ControlPlaneError::Internal("the credential store is unavailable".to_string()),
    })
}

/// Handles one control-plane request.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let mut operation = "unknown";
    let mut principal_arn = String::from("-");
    let result = async {
        let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| {
                ControlPlaneError::BadRequest(format!(
                    "The request body is larger than {MAX_BODY_BYTES} bytes"
                ))
            })?;
        let principal = authenticate(&app.tables_verifier, &app.iam, &parts, &body)
            .await
            .map_err(auth_error)?;
        principal_arn.clone_from(&principal.arn);
        let endpoint = route(&parts.method, parts.uri.path(), parts.uri.query())?;
        operation = endpoint.operation();
        let account = AccountId::parse(&principal.account_id)?;
        let ctx = RequestContext { principal, account };
        access::authorize(
            &app,
            &ctx,
            &endpoint,
            &body,
            &access_context(&parts, &request_id),
        )
        .await?;
        dispatch(&app.catalog, &ctx, &endpoint, &body).await
    }
    .await;
    let mut response = match result {
        Ok(response) => response,
        Err(e) => {
            if !matches!(e, ControlPlaneError::Internal(_)) {
                tracing::debug!(error_type = e.error_type(), message = %e, "control plane request rejected");
            }
            e.into_response()
        }
    };
    if let Ok(id) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-amzn-requestid", id);
    }
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics
        .record("control_plane", operation, status, latency);
    tracing::info!(
        surface = "control_plane",
        method = %parts.method,
        operation,
        principal = %principal_arn,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        request_id,
        "request"
    );
    response
}

async fn dispatch(
    catalog: &Catalog,
    ctx: &RequestContext,
    endpoint: &Endpoint,
    body: &[u8],
) -> Result<Response, ControlPlaneError> {
    use Endpoint as E;
    match endpoint {
        E::CreateTableBucket => buckets::create(catalog, ctx, body).await,
        E::ListTableBuckets { query, bucket_type } => {
            buckets::list(catalog, ctx, query, bucket_type.as_deref()).await
        }
        E::GetTableBucket { bucket } => buckets::get(catalog, ctx, bucket).await,
        E::DeleteTableBucket { bucket } => buckets::delete(catalog, ctx, bucket).await,
        E::PutTableBucketPolicy { bucket } => {
            policies::put_bucket(catalog, ctx, bucket, body).await
        }
        E::GetTableBucketPolicy { bucket } => policies::get_bucket(catalog, ctx, bucket).await,
        E::DeleteTableBucketPolicy { bucket } => {
            policies::delete_bucket(catalog, ctx, bucket).await
        }
        E::PutTableBucketEncryption { bucket } => {
            encryption::put_bucket(catalog, ctx, bucket, body).await
        }
        E::GetTableBucketEncryption { bucket } => {
            encryption::get_bucket(catalog, ctx, bucket).await
        }
        E::DeleteTableBucketEncryption { bucket } => {
            encryption::delete_bucket(catalog, ctx, bucket).await
        }
        E::PutTableBucketMaintenanceConfiguration { bucket, job_type } => {
            maintenance::put_bucket(catalog, ctx, bucket, job_type, body).await
        }
        E::GetTableBucketMaintenanceConfiguration { bucket } => {
            maintenance::get_bucket(catalog, ctx, bucket).await
        }
        E::PutTableBucketStorageClass { bucket } => {
            storage::put_bucket_class(catalog, ctx, bucket, body).await
        }
        E::GetTableBucketStorageClass { bucket } => {
            storage::get_bucket_class(catalog, ctx, bucket).await
        }
        E::PutTableBucketMetricsConfiguration { bucket } => {
            storage::put_metrics(catalog, ctx, bucket).await
        }
        E::GetTableBucketMetricsConfiguration { bucket } => {
            storage::get_metrics(catalog, ctx, bucket).await
        }
        E::DeleteTableBucketMetricsConfiguration { bucket } => {
            storage::delete_metrics(catalog, ctx, bucket).await
        }
        E::CreateNamespace { bucket } => namespaces::create(catalog, ctx, bucket, body).await,
        E::ListNamespaces { bucket, query } => namespaces::list(catalog, ctx, bucket, query).await,
        E::GetNamespace { bucket, namespace } => {
            namespaces::get(catalog, ctx, bucket, namespace).await
        }
        E::DeleteNamespace { bucket, namespace } => {
            namespaces::delete(catalog, ctx, bucket, namespace).await
        }
        E::CreateTable { bucket, namespace } => {
            tables::create(catalog, ctx, bucket, namespace, body).await
        }
        E::ListTables {
            bucket,
            namespace,
            query,
        } => tables::list(catalog, ctx, bucket, namespace.as_deref(), query).await,
        E::GetTable { table } => tables::get(catalog, ctx, table).await,
        E::DeleteTable {
            table,
            version_token,
        } => tables::delete(catalog, ctx, table, version_token.as_deref()).await,
        E::RenameTable { table } => tables::rename(catalog, ctx, table, body).await,
        E::GetTableMetadataLocation { table } => {
            tables::get_metadata_location(catalog, ctx, table).await
        }
        E::UpdateTableMetadataLocation { table } => {
            tables::update_metadata_location(catalog, ctx, table, body).await
        }
        E::PutTablePolicy { table } => policies::put_table(catalog, ctx, table, body).await,
        E::GetTablePolicy { table } => policies::get_table(catalog, ctx, table).await,
        E::DeleteTablePolicy { table } => policies::delete_table(catalog, ctx, table).await,
        E::GetTableEncryption { table } => encryption::get_table(catalog, ctx, table).await,
        E::PutTableMaintenanceConfiguration { table, job_type } => {
            maintenance::put_table(catalog, ctx, table, job_type, body).await
        }
        E::GetTableMaintenanceConfiguration { table } => {
            maintenance::get_table(catalog, ctx, table).await
        }
        E::GetTableMaintenanceJobStatus { table } => {
            maintenance::job_status(catalog, ctx, table).await
        }
        E::GetTableStorageClass { table } => storage::get_table_class(catalog, ctx, table).await,
        E::TagResource { arn } => tagging::tag(catalog, ctx, arn, body).await,
        E::UntagResource { arn, tag_keys } => tagging::untag(catalog, ctx, arn, tag_keys).await,
        E::ListTagsForResource { arn } => tagging::list(catalog, ctx, arn).await,
    }
}
