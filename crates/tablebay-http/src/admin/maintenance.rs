//! `POST /admin/maintenance/run` (run one maintenance job now, answer its run record) and
//! `GET /admin/maintenance/runs[?tableArn=…&maxRuns=…]` (recorded runs, newest first). Running a job needs
//! `PutTableMaintenanceConfiguration` on the table, listing runs `GetTableMaintenanceJobStatus` (through the one
//! authorization function, so roots of the owning account may, and users as their policies allow); a table of
//! another account is refused whatever its policies say.

use std::collections::BTreeMap;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method};
use serde::{Deserialize, Serialize};
use tablebay_auth::Principal;
use tablebay_catalog::{AccountId, MaintenanceJobType, TableArn};
use tablebay_iam::{AccessContext, Iam, Resource};
use tablebay_maintenance::{JobRunner, MaintenanceError, MaintenanceRun};
use tablebay_policy::Action;

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
        let principal = authenticate(&app.tables_verifier, &app.iam, &parts, &body)
            .await
            .map_err(auth_error)?;
        principal_arn.clone_from(&principal.arn);
        let account = AccountId::parse(&principal.account_id)?;
        let runner = app.maintenance.as_ref().ok_or_else(|| {
            ControlPlaneError::Internal("maintenance is not configured on this server".into())
        })?;
        match (&parts.method, parts.uri.path()) {
            (&Method::POST, "/admin/maintenance/run") => {
                operation = "RunMaintenanceJob";
                let caller = Caller {
                    iam: &app.iam,
                    principal: &principal,
                    account: &account,
                };
                run(runner, &caller, &body).await
            }
            (&Method::GET, "/admin/maintenance/runs") => {
                operation = "ListMaintenanceRuns";
                let caller = Caller {
                    iam: &app.iam,
                    principal: &principal,
                    account: &account,
                };
                list(runner, &caller, parts.uri.query()).await
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

/// Who calls, and the service that decides what they may do.
struct Caller<'a> {
    iam: &'a Iam,
    principal: &'a Principal,
    account: &'a AccountId,
}

impl Caller<'_> {
    /// The table ARN, parsed, of the caller's account and allowed `action` (403 otherwise).
    async fn table(&self, raw: &str, action: Action) -> Result<TableArn, ControlPlaneError> {
        let arn = TableArn::parse(raw)?;
        if &arn.bucket.account != self.account {
            return Err(ControlPlaneError::AccessDenied(format!(
                "Account {} is not authorized to run maintenance on {raw}",
                self.account
            )));
        }
        let resource = Resource::Table(arn.clone());
        self.iam
            .authorize(self.principal, action, &resource, &AccessContext::default())
            .await?;
        Ok(arn)
    }
}

async fn run(
    runner: &JobRunner,
    caller: &Caller<'_>,
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
    let arn = caller
        .table(&request.table_arn, Action::PutTableMaintenanceConfiguration)
        .await?;
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
    caller: &Caller<'_>,
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
    let arn = match query.table_arn.as_deref() {
        Some(raw) => Some(
            caller
                .table(raw, Action::GetTableMaintenanceJobStatus)
                .await?,
        ),
        None => None,
    };
    let runs = runner.runs(arn.as_ref(), limit).await?;
    // Without a table filter: the caller's account's tables whose status the caller may read.
    let mut listed = Vec::new();
    for run in runs {
        let Ok(table) = TableArn::parse(&run.table_arn) else {
            continue;
        };
        if &table.bucket.account != caller.account {
            continue;
        }
        let allowed = arn.is_some()
            || caller
                .iam
                .is_allowed(
                    caller.principal,
                    Action::GetTableMaintenanceJobStatus,
                    &Resource::Table(table),
                )
                .await?;
        if allowed {
            listed.push(RunResponse::from(run));
        }
    }
    let runs = listed;
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
