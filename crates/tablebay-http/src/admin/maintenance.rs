//! `POST /admin/maintenance/run` (run one maintenance job now, answer its run record) and
//! `GET /admin/maintenance/runs[?tableArn=…&maxRuns=…]` (recorded runs, newest first). Running a job needs
//! `PutTableMaintenanceConfiguration` on the table (`PutTableRecordExpirationConfiguration` for
//! `icebergRecordExpiration`), listing runs `GetTableMaintenanceJobStatus` (through the one
//! authorization function, so roots of the owning account may, and users as their policies allow); a table of
//! another account is refused whatever its policies say.

use axum::response::Response;
use tablebay_catalog::{MaintenanceJobType, TableArn};
use tablebay_iam::Resource;
use tablebay_maintenance::{JobRunner, MaintenanceRun};
use tablebay_policy::Action;

use super::error::AdminError;
use super::iam::json;
use super::wire::{ListRunsResponse, RunResponse};
use crate::pipeline::Context;

/// Runs listed when `maxRuns` is absent.
const DEFAULT_LISTED_RUNS: u32 = 100;

fn run_response(run: MaintenanceRun) -> RunResponse {
    RunResponse {
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

fn runner<'a>(cx: &'a Context<'_>) -> Result<&'a JobRunner, AdminError> {
    cx.app
        .maintenance
        .as_deref()
        .ok_or_else(|| AdminError::Internal("maintenance is not configured on this server".into()))
}

/// The maintenance type a request names.
pub(super) fn job_type(raw: &str) -> Result<MaintenanceJobType, AdminError> {
    raw.parse().map_err(|_| {
        AdminError::BadRequest(format!(
            "Invalid maintenance type '{raw}': expected icebergCompaction, icebergSnapshotManagement, \
             icebergUnreferencedFileRemoval or icebergRecordExpiration"
        ))
    })
}

/// `POST /admin/maintenance/run`: the table was authorized (`PutTableMaintenanceConfiguration`, the caller's own
/// account) when the request was resolved.
pub(super) async fn run(
    cx: &Context<'_>,
    table: &TableArn,
    job_type: MaintenanceJobType,
) -> Result<Response, AdminError> {
    let run = runner(cx)?.run_now(table, job_type).await?;
    json(&run_response(run))
}

/// The number of runs `maxRuns` asks for.
pub(super) fn max_runs(raw: Option<&str>) -> Result<u32, AdminError> {
    match raw {
        None => Ok(DEFAULT_LISTED_RUNS),
        Some(raw) => raw
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=tablebay_maintenance::MAX_LISTED_RUNS).contains(n))
            .ok_or_else(|| {
                AdminError::BadRequest(format!(
                    "Invalid maxRuns '{raw}': expected 1 to {}",
                    tablebay_maintenance::MAX_LISTED_RUNS
                ))
            }),
    }
}

/// `GET /admin/maintenance/runs`: of one table (authorized when the request was resolved), or else of the
/// caller's account's tables whose status the caller may read.
pub(super) async fn list(
    cx: &Context<'_>,
    table: Option<&TableArn>,
    limit: u32,
) -> Result<Response, AdminError> {
    let runs = runner(cx)?.runs(table, limit).await?;
    let mut listed = Vec::new();
    for run in runs {
        let Ok(arn) = TableArn::parse(&run.table_arn) else {
            continue;
        };
        if arn.bucket.account != cx.account {
            continue;
        }
        // A filter of what is listed, not a decision about the request: no audit event per run.
        let readable = table.is_some()
            || cx
                .app
                .iam
                .is_allowed(
                    &cx.principal,
                    Action::GetTableMaintenanceJobStatus,
                    &Resource::Table(arn),
                )
                .await?;
        if readable {
            listed.push(run_response(run));
        }
    }
    json(&ListRunsResponse { runs: listed })
}
