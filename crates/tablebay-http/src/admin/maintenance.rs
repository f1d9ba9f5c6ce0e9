//! `POST /admin/maintenance/run` (run one maintenance job now, answer its run record) and
//! `GET /admin/maintenance/runs[?tableArn=…&maxRuns=…]` (recorded runs, newest first). Both need account
//! credentials; the account must own the table.

use std::collections::BTreeMap;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method};
use serde::{Deserialize, Serialize};
use tablebay_catalog::{AccountId, MaintenanceJobType, TableArn};
use tablebay_maintenance::{JobRunner, MaintenanceError, MaintenanceRun};

use crate::authn::authenticate;
use crate::control_plane::{ControlPlaneError, auth_error, json};
use crate::state::AppState;

/// Admin bodies are one small JSON object.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Runs listed when `maxRuns` is absent.
const DEFAULT_LISTED_RUNS: u32 = 100;

/// `POST /admin/maintenance/run`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RunMaintenanceRequest {
    table_arn: String,
    #[serde(rename = "type")]
    job_type: String,
}

/// One run record on the wire.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunResponse {
    run_id: String,
    job_id: String,
    table_arn: String,
    #[serde(rename = "type")]
    job_type: &'static str,
    trigger: String,
    worker: String,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    files_in: u64,
    bytes_in: u64,
    files_out: u64,
    bytes_out: u64,
    details: BTreeMap<String, u64>,
    started_at: String,
    duration_ms: u64,
}

impl From<MaintenanceRun> for RunResponse {
    fn from(run: MaintenanceRun) -> Self {
        Self {
            run_id: run.id.to_string(),
            job_id: run.job_id.to_string(),
            table_arn: run.table_arn,
            job_type: run.job_type.as_str(),
            trigger: run.trigger,
            worker: run.worker,
            outcome: run.outcome.as_str(),
            message: run.message,
            files_in: run.files_in,
            bytes_in: run.bytes_in,
            files_out: run.files_out,
            bytes_out: run.bytes_out,
            details: run.details,
            started_at: crate::control_plane::timestamp(&run.started_at),
            duration_ms: run.duration_ms,
        }
    }
}

#[derive(Serialize)]
struct ListRunsResponse {
    runs: Vec<RunResponse>,
}

impl From<MaintenanceError> for ControlPlaneError {
    fn from(e: MaintenanceError) -> Self {
        let message = e.to_string();
        match e {
            MaintenanceError::NotFound(_) => Self::NotFound(message),
            MaintenanceError::Invalid(_) => Self::BadRequest(message),
            MaintenanceError::Busy(_) => Self::Conflict(message),
            MaintenanceError::Unavailable(_) | MaintenanceError::Unreadable(_) => {
                Self::Internal(message)
            }
            MaintenanceError::Catalog(source) => source.into(),
            MaintenanceError::Store(source) => Self::Internal(format!(
                "{source}: {:?}",
                std::error::Error::source(&source)
            )),
        }
    }
}

/// Handles every `/admin/maintenance/…` request: bounded body, SigV4, route, one service call, a log line and
/// metrics.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    let started = Instant::now();
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
        let principal = authenticate(&app.tables_verifier, &app.identities, &parts, &body)
            .map_err(auth_error)?;
        principal_arn.clone_from(&principal.arn);
        let account = AccountId::parse(&principal.account_id)?;
        let runner = app.maintenance.as_ref().ok_or_else(|| {
            ControlPlaneError::Internal("maintenance is not configured on this server".into())
        })?;
        match (&parts.method, parts.uri.path()) {
            (&Method::POST, "/admin/maintenance/run") => {
                operation = "RunMaintenanceJob";
                run(runner, &account, &body).await
            }
            (&Method::GET, "/admin/maintenance/runs") => {
                operation = "ListMaintenanceRuns";
                list(runner, &account, parts.uri.query()).await
            }
            (_, "/admin/maintenance/run" | "/admin/maintenance/runs") => {
                Err(ControlPlaneError::MethodNotAllowed(format!(
                    "{} is not allowed here",
                    parts.method
                )))
            }
            (_, path) => Err(ControlPlaneError::NotFound(format!(
                "No admin operation at {path}"
            ))),
        }
    }
    .await;
    let mut response = result.unwrap_or_else(IntoResponse::into_response);
    if let Ok(id) = HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()) {
        response.headers_mut().insert("x-amzn-requestid", id);
    }
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics.record("admin", operation, status, latency);
    tracing::info!(
        surface = "admin",
        method = %parts.method,
        operation,
        principal = %principal_arn,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        "request"
    );
    response
}

/// The table ARN, parsed and owned by the caller's account (403 otherwise).
fn owned_table(account: &AccountId, raw: &str) -> Result<TableArn, ControlPlaneError> {
    let arn = TableArn::parse(raw)?;
    if &arn.bucket.account != account {
        return Err(ControlPlaneError::AccessDenied(format!(
            "Account {account} is not authorized to run maintenance on {raw}"
        )));
    }
    Ok(arn)
}

async fn run(
    runner: &JobRunner,
    account: &AccountId,
    body: &[u8],
) -> Result<Response, ControlPlaneError> {
    let request: RunMaintenanceRequest = serde_json::from_slice(body)
        .map_err(|e| ControlPlaneError::BadRequest(format!("Invalid request body: {e}")))?;
    let job_type: MaintenanceJobType = request.job_type.parse().map_err(|_| {
        ControlPlaneError::BadRequest(format!(
            "Invalid maintenance type '{}': expected icebergCompaction, icebergSnapshotManagement or \
             icebergUnreferencedFileRemoval",
            request.job_type
        ))
    })?;
    let arn = owned_table(account, &request.table_arn)?;
    let run = runner.run_now(&arn, job_type).await?;
    json(&RunResponse::from(run))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListRunsQuery {
    table_arn: Option<String>,
    max_runs: Option<String>,
}

async fn list(
    runner: &JobRunner,
    account: &AccountId,
    query: Option<&str>,
) -> Result<Response, ControlPlaneError> {
    let query: ListRunsQuery = serde_urlencoded_query(query)?;
    let limit = match query.max_runs.as_deref() {
        None => DEFAULT_LISTED_RUNS,
        Some(raw) => raw
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=tablebay_maintenance::MAX_LISTED_RUNS).contains(n))
            .ok_or_else(|| {
                ControlPlaneError::BadRequest(format!(
                    "Invalid maxRuns '{raw}': expected 1 to {}",
                    tablebay_maintenance::MAX_LISTED_RUNS
                ))
            })?,
    };
    let arn = query
        .table_arn
        .as_deref()
        .map(|raw| owned_table(account, raw))
        .transpose()?;
    let runs = runner.runs(arn.as_ref(), limit).await?;
    // Without a table filter, only the caller's account's tables.
    let runs = runs
        .into_iter()
        .filter(|run| {
            TableArn::parse(&run.table_arn).is_ok_and(|arn| &arn.bucket.account == account)
        })
        .map(RunResponse::from)
        .collect();
    json(&ListRunsResponse { runs })
}

/// Parses the query string with axum's decoder (percent-decoding, `+` as space); unknown keys are a 400.
fn serde_urlencoded_query<T: serde::de::DeserializeOwned>(
    query: Option<&str>,
) -> Result<T, ControlPlaneError> {
    let uri: http::Uri = format!("/?{}", query.unwrap_or_default())
        .parse()
        .map_err(|_| ControlPlaneError::BadRequest("Invalid query string".into()))?;
    axum::extract::Query::<T>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| ControlPlaneError::BadRequest(format!("Invalid query: {e}")))
}
