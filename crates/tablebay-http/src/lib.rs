//! Tablebay's HTTP surfaces.
//!
//! The tables listener serves the S3 Tables control plane at `/`, health at `/health` and Prometheus metrics at
//! `/metrics`, the Iceberg REST catalog at `/iceberg`, the admin API at `/admin`, STS at `/sts` and the web
//! console at `/console`; the S3
//! listener serves the data plane. Handlers are thin: parse, authenticate, make one service call, map the result
//! to the surface's wire format. No storage or SQL is reachable from here (this crate does not depend on the
//! store).
#![warn(missing_docs)]

mod access_record;
mod admin;
mod console;
mod control_plane;
mod form;
#[doc(hidden)]
pub mod fuzzing;
mod iceberg;
mod metrics_access;
mod observe;
mod pipeline;
mod s3;
mod state;
mod sts;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use axum::routing::{any, get};
use http::{HeaderValue, StatusCode, header};

pub use iceberg::IcebergSettings;
pub use metrics_access::MetricsAccess;
pub use observe::Metrics;
pub use state::{AppState, Secret};

/// The text a request body ends with when the listener gives up on a client that stopped sending it
/// (`--idle-timeout-seconds`); the S3 surface answers it with `RequestTimeout`.
pub const BODY_TIMEOUT: &str =
    "RequestTimeout: the client sent no request body data within the idle timeout";

/// The router of the tables listener; `metrics_access` says who may read `/metrics`.
pub fn tables_router(state: AppState, metrics_access: MetricsAccess) -> Router {
    let metrics_access = std::sync::Arc::new(metrics_access);
    Router::new()
        .route("/health", get(health))
        .route(
            "/metrics",
            get(move |state: State<AppState>, request: Request| {
                metrics(state, std::sync::Arc::clone(&metrics_access), request)
            }),
        )
        .route("/iceberg/{*path}", any(iceberg::handle))
        .route("/sts", any(sts::handle))
        .route("/sts/", any(sts::handle))
        .route("/admin/{*path}", any(admin::handle))
        .route("/console", any(console::handle))
        .route("/console/", any(console::handle))
        .route("/console/{*path}", any(console::handle))
        .fallback(control_plane::handle)
        .with_state(state)
}

/// The router of the S3 listener.
pub fn s3_router(state: AppState) -> Router {
    s3::router(state)
}

/// `GET /health`: 200 without authentication while the process serves.
async fn health() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        "{\"status\":\"ok\"}",
    )
}

/// `GET /metrics`: Prometheus text format, to whom `access` allows.
async fn metrics(
    State(state): State<AppState>,
    access: std::sync::Arc<MetricsAccess>,
    request: Request,
) -> axum::response::Response {
    if let Err(refusal) = access.check(&state, request).await {
        return refusal;
    }
    let mut text = state.metrics.render();
    if let Some(runner) = &state.maintenance {
        text += &runner.metrics().render();
    }
    text += &state.access_log.render();
    match state.catalog.render_table_metrics().await {
        Ok(tables) => text += &tables,
        // The request and maintenance series still answer; the table series are absent for this scrape.
        Err(e) => tracing::warn!(error = %e, "metrics: the per-table series could not be read"),
    }
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        text,
    )
        .into_response()
}
