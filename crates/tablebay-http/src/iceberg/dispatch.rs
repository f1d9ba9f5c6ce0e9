//! The Iceberg REST catalog as a surface of the request pipeline (`crate::pipeline`): SigV4 or a bearer token,
//! a 32 MiB body, the typed endpoint of `router.rs`, the needs of `access.rs`, then idempotent replay or the
//! operation's handler. The OAuth2 token endpoint takes no credentials and is served beside the pipeline's
//! authenticated path, with the same request id, log line and metrics.

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderName, HeaderValue, StatusCode, header};

use super::access::{self, Resolved};
use super::context::Reply;
use super::error::IcebergError;
use super::router::{Delegation, Endpoint, route};
use super::{commit, config, idempotency, namespaces, oauth, sign, tables, views};
use crate::pipeline::{self, Context, Need, RequestBody, Schemes, Surface};
use crate::state::AppState;

/// The Iceberg REST catalog surface.
pub(crate) struct Iceberg;

/// The request id header of Iceberg REST answers.
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

impl Surface for Iceberg {
    const NAME: &'static str = "iceberg";
    const REQUEST_ID_HEADER: HeaderName = REQUEST_ID;
    /// Commit bodies carry schemas and snapshots; S3 Tables caps metadata at 50 MB, a request is far smaller.
    const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

    type Endpoint = Endpoint;
    type Resolved = Resolved;
    type Error = IcebergError;

    fn schemes(&self, app: &AppState) -> Schemes {
        Schemes::signed(&app.tables_verifier).and_bearer()
    }

    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Endpoint, IcebergError> {
        route(
            &parts.method,
            parts.uri.path(),
            parts.uri.query(),
            &parts.headers,
            &body,
        )
    }

    fn operation(endpoint: &Endpoint) -> &'static str {
        endpoint.operation()
    }

    async fn resolve(
        &self,
        cx: &Context<'_>,
        endpoint: Endpoint,
    ) -> Result<(Resolved, Vec<Need>), IcebergError> {
        access::resolve(cx, endpoint).await
    }

    async fn handle(&self, cx: &Context<'_>, resolved: Resolved) -> Result<Response, IcebergError> {
        let key = idempotency::key(cx.parts, &resolved.endpoint)?;
        let vend_created = match &resolved.endpoint {
            Endpoint::CreateTable {
                prefix,
                namespace,
                request,
                delegation: Delegation::VendedCredentials,
            } => Some((prefix.clone(), namespace.clone(), request.name.clone())),
            _ => None,
        };
        let signs = matches!(resolved.endpoint, Endpoint::SignRequest { .. });
        let reply = match key.as_deref() {
            Some(key) => match idempotency::replay(cx, key).await? {
                Some(reply) => reply,
                None => match dispatch(cx, resolved, Some(key)).await {
                    Ok(reply) => {
                        if !reply.remembered {
                            idempotency::remember(cx, key, &reply).await;
                        }
                        reply
                    }
                    // A concurrent request with the same key may have won the race this one lost.
                    Err(e) => idempotency::replay_winner(cx, key, e).await?,
                },
            },
            None => dispatch(cx, resolved, None).await?,
        };
        // Remembered answers never hold secrets: a created table's credentials are vended afresh, to whoever
        // asks now.
        let reply = match vend_created {
            Some((prefix, namespace, name)) if reply.status.is_success() => {
                tables::with_vended_credentials(cx, reply, &prefix, &namespace, &name).await?
            }
            _ => reply,
        };
        let mut response = to_response(reply);
        if signs {
            // A signature is for one request at one time: clients must not cache it (the spec's Cache-Control).
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        }
        Ok(response)
    }
}

/// Handles one request under `/iceberg`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    if request.uri().path().trim_end_matches('/') == "/iceberg/v1/oauth/tokens" {
        // The token endpoint is where unauthenticated clients get their credentials checked.
        let token_app = app.clone();
        return pipeline::serve_anonymous(
            &app,
            Iceberg::NAME,
            REQUEST_ID,
            "getToken",
            64 * 1024,
            request,
            |parts, body| async move { oauth::token(&token_app, &parts, body).await },
        )
        .await;
    }
    pipeline::serve(&app, &Iceberg, request).await
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

/// Runs the operation; `key` is the request's `Idempotency-Key`, which commits store their answer under in the
/// same transaction.
async fn dispatch(
    cx: &Context<'_>,
    resolved: Resolved,
    key: Option<&str>,
) -> Result<Reply, IcebergError> {
    use Endpoint as E;
    let Resolved {
        endpoint,
        mut tables,
    } = resolved;
    // A table operation names one table; a transaction takes its whole list.
    let table = match endpoint {
        E::CommitTransaction { .. } => None,
        _ => tables.pop().flatten(),
    };
    match endpoint {
        E::Config { warehouse } => config::get(cx, warehouse.as_deref()).await,
        E::ListNamespaces {
            prefix,
            parent,
            page,
        } => namespaces::list(cx, &prefix, parent.as_deref(), &page).await,
        E::CreateNamespace { prefix, request } => namespaces::create(cx, &prefix, request).await,
        E::LoadNamespace { prefix, namespace } => namespaces::load(cx, &prefix, &namespace).await,
        E::NamespaceExists { prefix, namespace } => {
            namespaces::exists(cx, &prefix, &namespace).await
        }
        E::DropNamespace { prefix, namespace } => namespaces::drop(cx, &prefix, &namespace).await,
        E::UpdateNamespaceProperties {
            prefix,
            namespace,
            request,
        } => namespaces::update_properties(cx, &prefix, &namespace, request).await,
        E::ListTables {
            prefix,
            namespace,
            page,
        } => tables::list(cx, &prefix, &namespace, &page).await,
        E::CreateTable {
            prefix,
            namespace,
            request,
            delegation,
        } => tables::create(cx, &prefix, &namespace, request, delegation).await,
        E::RegisterTable {
            prefix,
            namespace,
            request,
        } => tables::register(cx, &prefix, &namespace, request).await,
        E::LoadTable {
            table: ident,
            snapshots,
            if_none_match,
            delegation,
            ..
        } => {
            tables::load(
                cx,
                &ident,
                table,
                snapshots,
                if_none_match.as_deref(),
                delegation,
            )
            .await
        }
        E::TableExists { table: ident, .. } => tables::exists(&ident, table),
        E::CommitTable {
            prefix,
            table: ident,
            request,
        } => commit::commit_table(cx, &prefix, &ident, table, request, key).await,
        E::DropTable {
            table: ident,
            purge,
            ..
        } => tables::drop(cx, &ident, table, purge).await,
        E::ReportMetrics { table: ident, .. } => tables::report_metrics(&ident, table),
        E::LoadCredentials { table: ident, .. } => tables::credentials(cx, &ident, table).await,
        E::RenameTable {
            prefix,
            source,
            destination,
        } => tables::rename(cx, &prefix, &source, table, &destination).await,
        E::CommitTransaction { changes, .. } => {
            commit::commit_transaction(cx, changes, tables, key).await
        }
        E::ListViews {
            prefix,
            namespace,
            page,
        } => views::list(cx, &prefix, &namespace, &page).await,
        E::CreateView {
            prefix,
            namespace,
            request,
        } => views::create(cx, &prefix, &namespace, request).await,
        E::LoadView { prefix, view } => views::load(cx, &prefix, &view).await,
        E::ViewExists { prefix, view } => views::exists(cx, &prefix, &view).await,
        E::ReplaceView {
            prefix,
            view,
            request,
        } => views::replace(cx, &prefix, &view, request).await,
        E::DropView { prefix, view } => views::drop(cx, &prefix, &view).await,
        E::RenameView {
            prefix,
            source,
            destination,
        } => views::rename(cx, &prefix, &source, &destination).await,
        E::UnregisterTable { table: ident, .. } => tables::unregister(cx, &ident, table).await,
        E::RegisterView {
            prefix,
            namespace,
            request,
        } => views::register(cx, &prefix, &namespace, request).await,
        E::SignRequest { request, .. } => sign::sign(cx, request, table).await,
    }
}

/// `304 Not Modified` for a conditional load whose ETag still matches.
pub(crate) fn not_modified(etag: String) -> Reply {
    Reply {
        status: StatusCode::NOT_MODIFIED,
        body: None,
        etag: Some(etag),
        remembered: false,
    }
}
