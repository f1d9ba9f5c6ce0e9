//! The one request pipeline of the tables listener: every surface (control plane, Iceberg REST, admin, STS)
//! runs its requests through [`serve`], which does, once and in this order:
//!
//! 1. a request id, a timer;
//! 2. credentials identified from the headers alone (`authenticate.rs`): an unsigned request, an unknown key or
//!    an expired signature is refused before a byte of the body is read;
//! 3. the body, bounded and under a memory budget while it is unverified (`body.rs`), then the signature over
//!    it — the verified body is the only text the surface ever parses (no second reading, no guessing);
//! 4. the surface's typed endpoint, parsed once from method, path, query, headers and body;
//! 5. its resources resolved once, and every action it needs authorized with the full request context
//!    (`authorize.rs`);
//! 6. the surface's handler with what was resolved;
//! 7. the answer, errors rendered in the surface's wire format, with the request id in the surface's header,
//!    one log line and metrics.
//!
//! A surface supplies only the typed parts ([`Surface`]). A new surface or a new signature scheme is one place.

mod authenticate;
mod authorize;
mod body;

use std::future::Future;
use std::time::Instant;

use axum::extract::Request;
use axum::response::Response;
use http::request::Parts;
use http::{HeaderName, HeaderValue, StatusCode};
use tablebay_auth::oss4::Oss4Verifier;
use tablebay_auth::{AuthError, Principal};
use tablebay_catalog::AccountId;
use tablebay_iam::{AccessContext, ServiceError};

pub(crate) use authenticate::{Schemes, long_term_key, lookup};
pub(crate) use authorize::{Need, in_namespace, naming_table};
pub(crate) use body::{BodyBudget, DEFAULT_BODY_BUDGET_BYTES, RequestBody};

use crate::access_record::{self, Answer, RequestLine};
use crate::state::AppState;

/// Why the pipeline itself refused a request, before any surface logic ran. Each surface maps it to its wire
/// format (`From<PipelineError>` in its `error.rs`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PipelineError {
    /// Authentication failed (or the credential store is unavailable).
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// A bearer token was refused (OAuth2 clients fetch a new one on 401).
    #[error("bearer token: {0}")]
    BearerToken(AuthError),
    /// The body is larger than the surface accepts.
    #[error("The request body is larger than {limit} bytes")]
    BodyTooLarge {
        /// The surface's limit.
        limit: usize,
    },
    /// The body could not be read (the client stopped sending, or it was too slow).
    #[error("The request body could not be read: {0}")]
    BodyUnreadable(String),
    /// Too many unverified bodies are in flight: retry later.
    #[error("The server is busy reading other requests; retry")]
    Busy,
}

/// An error a surface answers with: its status for logs and metrics, and its wire form.
pub(crate) trait WireError: From<PipelineError> + From<ServiceError> + Send {
    /// The HTTP status.
    fn status(&self) -> StatusCode;
    /// The error's wire type name (logs).
    fn kind(&self) -> &'static str;
    /// The response in the surface's format; a 5xx logs its cause under `request_id`.
    fn render(self, request_id: &str) -> Response;
}

/// Who is asking and about what, once authenticated: what every handler of every surface receives.
pub(crate) struct Context<'a> {
    pub app: &'a AppState,
    pub principal: Principal,
    /// The principal's account, parsed.
    pub account: AccountId,
    /// Source address and request id, for authorization conditions and audit.
    pub access: AccessContext,
    /// The request line and headers as received.
    pub parts: &'a Parts,
    /// The verified body (already parsed into the endpoint; kept for what fingerprints a request).
    pub body: RequestBody,
}

impl Context<'_> {
    /// The catalog service.
    pub(crate) fn catalog(&self) -> &tablebay_catalog::Catalog {
        &self.app.catalog
    }
}

/// A surface of the tables listener: the typed parts of handling a request. See the module doc for the order.
pub(crate) trait Surface: Sync {
    /// The surface name in logs and metrics (`iceberg`, `control_plane`, …).
    const NAME: &'static str;
    /// The response header that carries the request id (`x-amzn-requestid`, `x-request-id`, …).
    const REQUEST_ID_HEADER: HeaderName;
    /// The largest body the surface reads.
    const MAX_BODY_BYTES: usize;

    /// The operation, with every input it takes parsed into typed values.
    type Endpoint: Send;
    /// The endpoint with the resources it names resolved (once) for authorization and the handler.
    type Resolved: Send;
    /// The surface's wire error.
    type Error: WireError;

    /// Which credentials the surface accepts.
    fn schemes(&self, app: &AppState) -> Schemes;

    /// Parses the request into its endpoint; a body that does not parse is the surface's 400.
    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Self::Endpoint, Self::Error>;

    /// The operation name of an endpoint (logs, metrics).
    fn operation(endpoint: &Self::Endpoint) -> &'static str;

    /// Resolves the resources the endpoint names and says what the caller needs on them.
    fn resolve(
        &self,
        cx: &Context<'_>,
        endpoint: Self::Endpoint,
    ) -> impl Future<Output = Result<(Self::Resolved, Vec<Need>), Self::Error>> + Send;

    /// Runs the authorized operation.
    fn handle(
        &self,
        cx: &Context<'_>,
        resolved: Self::Resolved,
    ) -> impl Future<Output = Result<Response, Self::Error>> + Send;
}

/// What a request produced, for its log line (and its access log record).
struct Outcome {
    operation: &'static str,
    principal: Option<String>,
    /// The bucket and key the request was about, when some bucket's access logging is on.
    subject: Option<(tablebay_catalog::BucketArn, Option<String>)>,
}

/// Runs one request of `surface` through the pipeline.
pub(crate) async fn serve<S: Surface>(app: &AppState, surface: &S, request: Request) -> Response {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let oss_signed = Oss4Verifier::is_oss4(&parts);
    let mut outcome = Outcome {
        operation: "unknown",
        principal: None,
        subject: None,
    };
    let result = run(app, surface, &parts, body, &request_id, &mut outcome).await;
    let mut error_kind = None;
    let mut response = match result {
        Ok(response) => response,
        Err(e) => {
            error_kind = Some(e.kind());
            if !e.status().is_server_error() {
                tracing::debug!(
                    surface = S::NAME,
                    error_type = e.kind(),
                    status = e.status().as_u16(),
                    request_id,
                    "request refused"
                );
            }
            e.render(&request_id)
        }
    };
    if oss_signed {
        oss_shaped(&mut response, &request_id, error_kind);
    }
    if let Some((bucket, key)) = outcome.subject.take() {
        access_record::record(
            app,
            &RequestLine::of(&parts),
            (&bucket, key),
            Answer {
                surface: S::NAME,
                operation: outcome.operation,
                request_id: &request_id,
                principal: outcome.principal.as_deref(),
                error_code: error_kind,
                total_time: started.elapsed(),
            },
            &response,
        );
    }
    finish(
        app,
        S::NAME,
        S::REQUEST_ID_HEADER,
        &parts.method,
        response,
        &request_id,
        started,
        outcome.operation,
        outcome.principal.as_deref(),
    )
}

async fn run<S: Surface>(
    app: &AppState,
    surface: &S,
    parts: &Parts,
    body: axum::body::Body,
    request_id: &str,
    outcome: &mut Outcome,
) -> Result<Response, S::Error> {
    let pending = authenticate::identify(app, surface.schemes(app), parts).await?;
    let raw = body::read(
        body,
        S::MAX_BODY_BYTES,
        (!pending.is_verified()).then_some(&app.body_budget),
    )
    .await?;
    let (principal, body) = pending.finish(parts, raw).map_err(PipelineError::from)?;
    outcome.principal = Some(principal.arn.clone());
    let endpoint = surface.parse(parts, body.clone())?;
    outcome.operation = S::operation(&endpoint);
    let account = AccountId::parse(&principal.account_id).map_err(|e| {
        S::Error::from(ServiceError::Internal(format!(
            "a principal's account id is invalid: {e}"
        )))
    })?;
    let cx = Context {
        app,
        principal,
        account,
        access: access_context(parts, request_id),
        parts,
        body,
    };
    let (resolved, needs) = surface.resolve(&cx, endpoint).await?;
    if app.access_log.any() {
        outcome.subject = access_record::subject_of(&needs);
    }
    authorize::authorize(&cx, outcome.operation, &needs).await?;
    surface.handle(&cx, resolved).await
}

/// What Alibaba's SDKs read from an answer to an OSS V4-signed request: the request id in `x-oss-request-id`, and
/// for an error its code in `x-oss-error-type` (the message is the JSON body's `message`, as the control plane and
/// admin write it).
fn oss_shaped(response: &mut Response, request_id: &str, error_kind: Option<&'static str>) {
    let headers = response.headers_mut();
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert(HeaderName::from_static("x-oss-request-id"), id);
    }
    if let Some(kind) = error_kind {
        headers.insert(
            HeaderName::from_static("x-oss-error-type"),
            HeaderValue::from_static(kind),
        );
    }
}

/// Authenticates a request that carries no body (a metrics scrape): the same schemes and checks as any other.
pub(crate) async fn authenticate_bodiless(
    app: &AppState,
    schemes: Schemes,
    parts: &Parts,
) -> Result<Principal, PipelineError> {
    let pending = authenticate::identify(app, schemes, parts).await?;
    let (principal, _) = pending.finish(parts, bytes::Bytes::new())?;
    Ok(principal)
}

/// Serves a request that takes no credentials (the OAuth2 token endpoint): a bounded body, then `handle` (which
/// also answers a body that could not be read, in its own format), with the same request id, log line and
/// metrics as every other request.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve_anonymous<F, Fut>(
    app: &AppState,
    surface: &'static str,
    request_id_header: HeaderName,
    operation: &'static str,
    max_body_bytes: usize,
    request: Request,
    handle: F,
) -> Response
where
    F: FnOnce(Parts, Result<RequestBody, PipelineError>) -> Fut,
    Fut: Future<Output = Response>,
{
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let body = body::read(body, max_body_bytes, Some(&app.body_budget))
        .await
        .map(RequestBody::new);
    let method = parts.method.clone();
    let response = handle(parts, body).await;
    finish(
        app,
        surface,
        request_id_header,
        &method,
        response,
        &request_id,
        started,
        operation,
        None,
    )
}

/// Adds the request id header in the surface's header, then writes the request's one log line and counts it: the
/// end of every request on every surface (the S3 listener's too).
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish(
    app: &AppState,
    surface: &'static str,
    request_id_header: HeaderName,
    method: &http::Method,
    mut response: Response,
    request_id: &str,
    started: Instant,
    operation: &'static str,
    principal: Option<&str>,
) -> Response {
    if let Ok(id) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert(request_id_header, id);
    }
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics.record(surface, operation, status, latency);
    tracing::info!(
        surface,
        method = %method,
        operation,
        principal = principal.unwrap_or("-"),
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        request_id,
        "request"
    );
    response
}

/// The client address (when the listener recorded it) and the request id, for authorization and audit.
pub(crate) fn access_context(parts: &Parts, request_id: &str) -> AccessContext {
    AccessContext {
        source_ip: parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|axum::extract::ConnectInfo(addr)| addr.ip()),
        request_id: request_id.to_string(),
    }
}
