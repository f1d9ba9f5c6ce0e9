//! The S3 listener's entry point: builds the s3s service (SigV4 via [`KeyStore`], per-request authorization via
//! [`TableAccess`], virtual hosts via [`TableHost`], body limits) around [`DataPlane`], and wraps every request
//! with a request id (`x-amz-request-id`, also in error bodies), one structured log line and metrics.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use s3s::config::{S3Config, StaticConfigProvider};
use s3s::service::{S3Service, S3ServiceBuilder};
use tower::ServiceExt;

use super::auth::{KeyStore, TableAccess, TableHost};
use super::service::DataPlane;
use crate::state::AppState;

/// Largest XML request body (CompleteMultipartUpload with 10000 parts is about 1.3 MB; DeleteObjects with 1000
/// keys of 1 KiB about 1.1 MB).
const MAX_XML_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Per-request facts the wrapper logs, filled in by the access check: the operation and the principal. Cloned
/// into the request's extensions; the clones share one slot.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    /// The id in `x-amz-request-id` and in error bodies.
    pub request_id: Arc<str>,
    seen: Arc<Mutex<(&'static str, String)>>,
}

impl RequestContext {
    fn new() -> Self {
        Self {
            request_id: Arc::from(uuid::Uuid::new_v4().simple().to_string().to_uppercase()),
            seen: Arc::new(Mutex::new(("unknown", "-".to_string()))),
        }
    }

    pub(crate) fn set_operation(&self, operation: &'static str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.0 = operation;
        }
    }

    pub(crate) fn set_principal(&self, arn: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.1 = arn.to_string();
        }
    }

    fn seen(&self) -> (&'static str, String) {
        self.seen.lock().map(|seen| seen.clone()).unwrap_or(("unknown", "-".to_string()))
    }
}

/// The router of the S3 listener: every path goes to the S3 service.
pub(crate) fn router(state: AppState) -> Router {
    let mut builder = S3ServiceBuilder::new(DataPlane { catalog: state.catalog.clone() });
    builder.set_auth(KeyStore { identities: Arc::clone(&state.identities) });
    builder.set_access(TableAccess { catalog: state.catalog.clone(), identities: Arc::clone(&state.identities) });
    builder.set_host(TableHost);
    let mut config = S3Config::default();
    config.xml_max_body_size = MAX_XML_BODY_BYTES;
    builder.set_config(Arc::new(StaticConfigProvider::new(Arc::new(config))));
    let service = builder.build();
    Router::new().fallback(handle).with_state((state, service))
}

/// Runs one request through s3s with a request id, then logs and counts it.
async fn handle(State((app, service)): State<(AppState, S3Service)>, mut request: Request) -> Response {
    let started = Instant::now();
    let context = RequestContext::new();
    request.extensions_mut().insert(context.clone());
    let method = request.method().clone();
    let mut response = match service.oneshot(request).await {
        Ok(response) => response.map(axum::body::Body::new),
        Err(e) => {
            let error_id = uuid::Uuid::new_v4();
            tracing::error!(%error_id, error = ?e, "s3 service failed");
            (StatusCode::INTERNAL_SERVER_ERROR, format!("internal error {error_id}")).into_response()
        }
    };
    if let Ok(id) = HeaderValue::from_str(&context.request_id) {
        response.headers_mut().insert("x-amz-request-id", id);
    }
    let status = response.status().as_u16();
    let latency = started.elapsed();
    let (operation, principal) = context.seen();
    app.metrics.record("s3", operation, status, latency);
    tracing::info!(
        surface = "s3",
        method = %method,
        operation,
        principal = %principal,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        request_id = %context.request_id,
        "request"
    );
    response
}
