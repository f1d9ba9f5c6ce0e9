//! The Iceberg REST catalog's one entry point: read the body (bounded), authenticate (SigV4 over the raw request
//! as received, or a bearer token), route, replay or remember idempotent mutations, call the operation's
//! handler, and answer errors as `ErrorModel` — with one log line and metrics per request.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use tablebay_auth::{AuthError, Principal};
use tablebay_catalog::AccountId;

use super::context::{IcebergContext, Reply};
use super::error::IcebergError;
use super::router::{Endpoint, route};
use super::{commit, config, idempotency, namespaces, oauth, tables, views};
use crate::authn::authenticate;
use crate::state::AppState;

/// Commit bodies carry schemas and snapshots; S3 Tables caps metadata at 50 MB, a request is far smaller.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Verifies a bearer token or the SigV4 signature and returns who is asking.
fn principal(app: &AppState, parts: &Parts, body: &[u8]) -> Result<Principal, IcebergError> {
    let bearer = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        });
    match bearer {
        Some(token) => {
            let access_key_id = app
                .iceberg
                .tokens
                .verify(token.trim(), chrono::Utc::now())
                .map_err(|e| IcebergError::from_bearer(&e))?;
            let (_, principal) = app
                .identities
                .lookup(&access_key_id)
                .ok_or_else(|| IcebergError::from_bearer(&AuthError::UnknownAccessKey))?;
            Ok(principal)
        }
        None => authenticate(&app.tables_verifier, &app.identities, parts, body)
            .map_err(|e| IcebergError::from_auth(&e)),
    }
}

/// Handles one request under `/iceberg`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let mut operation = "unknown";
    let mut principal_arn = String::from("-");
    let result = async {
        let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| {
                IcebergError::bad_request(format!(
                    "The request body is larger than {MAX_BODY_BYTES} bytes"
                ))
            })?;
        // The token endpoint is where unauthenticated clients get their credentials checked.
        if parts.uri.path().trim_end_matches('/') == "/iceberg/v1/oauth/tokens" {
            operation = "getToken";
            return Ok(oauth::token(&app, &parts, &body));
        }
        let principal = principal(&app, &parts, &body)?;
        principal_arn.clone_from(&principal.arn);
        let endpoint = route(&parts.method, parts.uri.path(), parts.uri.query())?;
        operation = endpoint.operation();
        let account = AccountId::parse(&principal.account_id)?;
        let ctx = IcebergContext {
            app: &app,
            principal,
            account,
        };
        let key = idempotency::key(&parts, &endpoint)?;
        if let Some(key) = &key
            && let Some(reply) = idempotency::replay(&ctx, key, &parts).await?
        {
            return Ok(to_response(reply));
        }
        let reply = dispatch(&ctx, &parts, endpoint, &body).await?;
        if let Some(key) = &key {
            idempotency::remember(&ctx, key, &parts, &reply).await;
        }
        Ok::<_, IcebergError>(to_response(reply))
    }
    .await;
    let response = match result {
        Ok(response) => response,
        Err(e) => {
            tracing::debug!(
                error_type = e.kind(),
                status = e.status().as_u16(),
                "iceberg request rejected"
            );
            e.into_response()
        }
    };
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics.record("iceberg", operation, status, latency);
    tracing::info!(
        surface = "iceberg",
        method = %parts.method,
        operation,
        principal = %principal_arn,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        "request"
    );
    response
}

/// A handler's reply as an HTTP response.
pub(crate) fn to_response(reply: Reply) -> Response {
    let mut response = match reply.body {
        Some(body) => {
            let mut response = (reply.status, body).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        None => reply.status.into_response(),
    };
    if let Some(etag) = reply.etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        response.headers_mut().insert(header::ETAG, etag);
    }
    response
}

async fn dispatch(
    ctx: &IcebergContext<'_>,
    parts: &Parts,
    endpoint: Endpoint,
    body: &[u8],
) -> Result<Reply, IcebergError> {
    use Endpoint as E;
    match endpoint {
        E::Config { warehouse } => config::get(ctx, warehouse.as_deref()).await,
        E::OAuthTokens => Err(IcebergError::bad_request(
            "The token endpoint takes no authentication",
        )),
        E::ListNamespaces {
            prefix,
            parent,
            page,
        } => namespaces::list(ctx, &prefix, parent.as_deref(), &page).await,
        E::CreateNamespace { prefix } => namespaces::create(ctx, &prefix, body).await,
        E::LoadNamespace { prefix, namespace } => namespaces::load(ctx, &prefix, &namespace).await,
        E::NamespaceExists { prefix, namespace } => {
            namespaces::exists(ctx, &prefix, &namespace).await
        }
        E::DropNamespace { prefix, namespace } => namespaces::drop(ctx, &prefix, &namespace).await,
        E::UpdateNamespaceProperties { prefix, namespace } => {
            namespaces::update_properties(ctx, &prefix, &namespace, body).await
        }
        E::ListTables {
            prefix,
            namespace,
            page,
        } => tables::list(ctx, &prefix, &namespace, &page).await,
        E::CreateTable { prefix, namespace } => {
            tables::create(ctx, &prefix, &namespace, body).await
        }
        E::RegisterTable { prefix, namespace } => {
            tables::register(ctx, &prefix, &namespace, body).await
        }
        E::LoadTable {
            prefix,
            table,
            snapshots,
        } => {
            let if_none_match = parts
                .headers
                .get(header::IF_NONE_MATCH)
                .and_then(|v| v.to_str().ok());
            tables::load(ctx, &prefix, &table, snapshots.as_deref(), if_none_match).await
        }
        E::TableExists { prefix, table } => tables::exists(ctx, &prefix, &table).await,
        E::CommitTable { prefix, table } => commit::commit_table(ctx, &prefix, &table, body).await,
        E::DropTable {
            prefix,
            table,
            purge,
        } => tables::drop(ctx, &prefix, &table, purge).await,
        E::ReportMetrics { prefix, table } => {
            tables::report_metrics(ctx, &prefix, &table, body).await
        }
        E::LoadCredentials { prefix, table } => tables::credentials(ctx, &prefix, &table).await,
        E::RenameTable { prefix } => tables::rename(ctx, &prefix, body).await,
        E::CommitTransaction { prefix } => commit::commit_transaction(ctx, &prefix, body).await,
        E::ListViews {
            prefix,
            namespace,
            page,
        } => views::list(ctx, &prefix, &namespace, &page).await,
        E::CreateView { prefix, namespace } => views::create(ctx, &prefix, &namespace, body).await,
        E::LoadView { prefix, view } => views::load(ctx, &prefix, &view).await,
        E::ViewExists { prefix, view } => views::exists(ctx, &prefix, &view).await,
        E::ReplaceView { prefix, view } => views::replace(ctx, &prefix, &view, body).await,
        E::DropView { prefix, view } => views::drop(ctx, &prefix, &view).await,
        E::RenameView { prefix } => views::rename(ctx, &prefix, body).await,
    }
}

/// `304 Not Modified` for a conditional load whose ETag still matches.
pub(crate) fn not_modified(etag: String) -> Reply {
    Reply {
        status: StatusCode::NOT_MODIFIED,
        body: None,
        etag: Some(etag),
    }
}
