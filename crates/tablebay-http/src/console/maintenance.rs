//! A table's maintenance: each job type's configuration (compaction and snapshot management on the table,
//! unreferenced-file removal on its bucket), its job status, the run history (durations, files and bytes
//! rewritten, bytes saved), a form per table job type, and "run now" — the maintenance service's `run_now`,
//! which the admin API's `POST /admin/maintenance/run` also calls.

use std::str::FromStr;

use axum::response::Response;
use http::StatusCode;
use maud::html;
use tablebay_catalog::{
    CompactionSettings, CompactionStrategy, JobConfig, MaintenanceJobType, MaintenanceStatus,
    SnapshotManagementSettings, Table, TableMaintenanceUpdate, TableRef,
};
use tablebay_iam::Resource;
use tablebay_maintenance::JobRunner;
use tablebay_policy::Action;

use super::buckets::{self, number};
use super::error::ConsoleError;
use super::layout::{self, Page, Viewer, bytes, csrf_field, when};
use super::router::MaintenanceForm;
use super::tables;
use crate::pipeline::Context;

/// Runs listed in the history.
const LISTED_RUNS: u32 = 50;

fn runner<'a>(cx: &'a Context<'_>) -> Result<&'a JobRunner, ConsoleError> {
    cx.app.maintenance.as_deref().ok_or_else(|| {
        ConsoleError::Internal("maintenance is not configured on this server".into())
    })
}

fn job_type(raw: &str) -> Result<MaintenanceJobType, ConsoleError> {
    MaintenanceJobType::from_str(raw).map_err(|_| {
        ConsoleError::BadRequest(format!(
            "Invalid maintenance type '{raw}': expected icebergCompaction, icebergSnapshotManagement or \
             icebergUnreferencedFileRemoval"
        ))
    })
}

fn page_href(table: &Table) -> String {
    format!("{}/maintenance", tables::href(table))
}

/// `POST …/tables/{t}/maintenance`: PutTableMaintenanceConfiguration of one table job type.
pub(super) async fn put(
    cx: &Context<'_>,
    table: &Table,
    form: &MaintenanceForm,
) -> Result<Response, ConsoleError> {
    let status = MaintenanceStatus::from_str(&form.status)?;
    let update = match job_type(&form.job_type)? {
        MaintenanceJobType::IcebergCompaction => {
            let strategy = match form.strategy.trim() {
                "" => None,
                raw => Some(CompactionStrategy::from_str(raw)?),
            };
            TableMaintenanceUpdate::Compaction(JobConfig {
                status,
                settings: CompactionSettings::new(
                    number("targetFileSizeMB", &form.target_file_size_mb)?,
                    strategy,
                )?,
            })
        }
        MaintenanceJobType::IcebergSnapshotManagement => {
            TableMaintenanceUpdate::SnapshotManagement(JobConfig {
                status,
                settings: SnapshotManagementSettings::new(
                    number("minSnapshotsToKeep", &form.min_snapshots_to_keep)?,
                    number("maxSnapshotAgeHours", &form.max_snapshot_age_hours)?,
                )?,
            })
        }
        MaintenanceJobType::IcebergUnreferencedFileRemoval => {
            return Err(ConsoleError::BadRequest(
                "Unreferenced file removal is configured on the table bucket".into(),
            ));
        }
        MaintenanceJobType::IcebergRecordExpiration => {
            return Err(ConsoleError::BadRequest(
                "Record expiration is configured with PutTableRecordExpirationConfiguration".into(),
            ));
        }
    };
    cx.catalog()
        .put_table_maintenance(&TableRef::Arn(table.arn.clone()), update)
        .await?;
    Ok(layout::see_other(&page_href(table)))
}

/// `POST …/tables/{t}/maintenance/run`: runs one job now; its run shows in the history.
pub(super) async fn run(
    cx: &Context<'_>,
    table: &Table,
    raw_type: &str,
) -> Result<Response, ConsoleError> {
    let job = job_type(raw_type)?;
    // Authorized as PutTableMaintenanceConfiguration; record expiration runs through the admin API, which
    // asks for its own action.
    if job == MaintenanceJobType::IcebergRecordExpiration {
        return Err(ConsoleError::BadRequest(
            "Record expiration runs through POST /admin/maintenance/run".into(),
        ));
    }
    let run = runner(cx)?.run_now(&table.arn, job).await?;
    tracing::info!(table = %table.arn, job = job.as_str(), outcome = run.outcome.as_str(), "console run-now");
    Ok(layout::see_other(&format!("{}#runs", page_href(table))))
}

/// `GET …/tables/{t}/maintenance`.
pub(super) async fn page(
    cx: &Context<'_>,
    viewer: &Viewer,
    table: &Table,
) -> Result<Response, ConsoleError> {
    let catalog = cx.catalog();
    let table_ref = TableRef::Arn(table.arn.clone());
    let (_, config) = catalog.table_maintenance(&table_ref).await?;
    let (_, statuses) = catalog.maintenance_job_status(&table_ref).await?;
    let runs = runner(cx)?.runs(Some(&table.arn), LISTED_RUNS).await?;
    let allowed = cx
        .app
        .iam
        .allowed_actions(
            &cx.principal,
            &[Action::PutTableMaintenanceConfiguration],
            &Resource::table(table),
        )
        .await?;
    let can_configure = allowed.first().copied().unwrap_or(false);
    let bucket_config = match cx
        .app
        .iam
        .allowed_actions(
            &cx.principal,
            &[Action::GetTableBucketMaintenanceConfiguration],
            &Resource::Bucket(table.bucket.arn.clone()),
        )
        .await?
        .first()
    {
        Some(true) => Some(catalog.bucket_maintenance(&table.bucket.arn).await?),
        _ => None,
    };
    let base = page_href(table);
    let csrf = viewer.csrf.as_str();
    let compaction = &config.compaction;
    let snapshots = &config.snapshot_management;
    let title_name = format!("{}.{}", table.namespace.as_str(), table.name.as_str());
    let body = html! {
        main {
            h1 { "Maintenance of " (title_name) }
            section class="card" id="status" {
                h2 { "Job status" }
                div class="scroll" {
                    table class="responsive" {
                        thead { tr { th { "Job" } th { "Configured" } th { "Status" } th { "Last run" } th { "Failure" } } }
                        tbody {
                            @for (job, status) in &statuses {
                                tr data-job=(job.as_str()) {
                                    td data-label="Job" class="mono" { (job.as_str()) }
                                    td data-label="Configured" {
                                        @match job {
                                            MaintenanceJobType::IcebergCompaction => span class=(format!("status-{}", compaction.status.as_str())) { (compaction.status.as_str()) " · target " (compaction.settings.target_file_size_mb) " MB · " (compaction.settings.strategy.as_str()) },
                                            MaintenanceJobType::IcebergSnapshotManagement => span class=(format!("status-{}", snapshots.status.as_str())) { (snapshots.status.as_str()) " · keep ≥ " (snapshots.settings.min_snapshots_to_keep) " · max age " (snapshots.settings.max_snapshot_age_hours) " h" },
                                            MaintenanceJobType::IcebergUnreferencedFileRemoval => @match &bucket_config {
                                                Some(b) => span class=(format!("status-{}", b.unreferenced_file_removal.status.as_str())) { (b.unreferenced_file_removal.status.as_str()) " · " (b.unreferenced_file_removal.settings.unreferenced_days) " + " (b.unreferenced_file_removal.settings.non_current_days) " days (bucket)" },
                                                None => span class="muted" { "on the bucket" },
                                            },
                                            MaintenanceJobType::IcebergRecordExpiration => span class="muted" { "record expiration" },
                                        }
                                    }
                                    td data-label="Status" class=(format!("status-{}", status.state.as_str())) { (status.state.as_str()) }
                                    td data-label="Last run" { (status.last_run.as_ref().map(when).unwrap_or_else(|| "—".into())) }
                                    td data-label="Failure" class="wrap" { (status.failure_message.clone().unwrap_or_default()) }
                                }
                            }
                        }
                    }
                }
                @if can_configure {
                    form method="post" action=(format!("{base}/run")) class="row" id="run-now" {
                        (csrf_field(csrf))
                        div {
                            label for="run-job" { "Job" }
                            select id="run-job" name="job_type" {
                                @for job in [MaintenanceJobType::IcebergCompaction, MaintenanceJobType::IcebergSnapshotManagement, MaintenanceJobType::IcebergUnreferencedFileRemoval] {
                                    option value=(job.as_str()) { (job.as_str()) }
                                }
                            }
                        }
                        button type="submit" { "Run now" }
                    }
                }
            }
            @if can_configure {
                div class="grid" {
                    section class="card" {
                        h2 { "Compaction" }
                        form method="post" action=(base.clone()) class="stack" {
                            (csrf_field(csrf))
                            input type="hidden" name="job_type" value="icebergCompaction";
                            label for="c-status" { "Status" }
                            select id="c-status" name="status" {
                                @for o in ["enabled", "disabled"] { option value=(o) selected[compaction.status.as_str() == o] { (o) } }
                            }
                            label for="c-target" { "Target file size (MB, 64–512)" }
                            input id="c-target" name="target_file_size_mb" type="number" min="64" max="512" value=(compaction.settings.target_file_size_mb);
                            label for="c-strategy" { "Strategy" }
                            select id="c-strategy" name="strategy" {
                                @for o in ["auto", "binpack", "sort", "z-order"] { option value=(o) selected[compaction.settings.strategy.as_str() == o] { (o) } }
                            }
                            div class="actions" { button type="submit" { "Save compaction" } }
                        }
                    }
                    section class="card" {
                        h2 { "Snapshot management" }
                        form method="post" action=(base.clone()) class="stack" {
                            (csrf_field(csrf))
                            input type="hidden" name="job_type" value="icebergSnapshotManagement";
                            label for="s-status" { "Status" }
                            select id="s-status" name="status" {
                                @for o in ["enabled", "disabled"] { option value=(o) selected[snapshots.status.as_str() == o] { (o) } }
                            }
                            label for="s-min" { "Snapshots to keep at least" }
                            input id="s-min" name="min_snapshots_to_keep" type="number" min="1" value=(snapshots.settings.min_snapshots_to_keep);
                            label for="s-age" { "Maximum snapshot age (hours)" }
                            input id="s-age" name="max_snapshot_age_hours" type="number" min="1" value=(snapshots.settings.max_snapshot_age_hours);
                            div class="actions" { button type="submit" { "Save snapshot management" } }
                        }
                    }
                }
            }
            section class="card" id="runs" {
                h2 { "Run history" }
                @if runs.is_empty() {
                    p class="muted" { "No runs yet." }
                } @else {
                    div class="scroll" {
                        table class="responsive" id="run-table" {
                            thead { tr {
                                th { "Started" } th { "Job" } th { "Trigger" } th { "Outcome" } th class="num" { "Duration" }
                                th class="num" { "Files in → out" } th class="num" { "Bytes in → out" } th class="num" { "Saved" } th { "Message" }
                            } }
                            tbody {
                                @for run in &runs {
                                    tr data-job=(run.job_type.as_str()) data-outcome=(run.outcome.as_str()) data-files-in=(run.files_in) data-files-out=(run.files_out) {
                                        td data-label="Started" { (when(&run.started_at)) }
                                        td data-label="Job" class="mono" { (run.job_type.as_str()) }
                                        td data-label="Trigger" { (run.trigger) }
                                        td data-label="Outcome" class=(format!("status-{}", run.outcome.as_str())) { (run.outcome.as_str()) }
                                        td data-label="Duration" class="num" { (run.duration_ms) " ms" }
                                        td data-label="Files in → out" class="num" { (run.files_in) " → " (run.files_out) }
                                        td data-label="Bytes in → out" class="num" { (bytes(run.bytes_in)) " → " (bytes(run.bytes_out)) }
                                        td data-label="Saved" class="num" { (bytes(run.bytes_in.saturating_sub(run.bytes_out))) }
                                        td data-label="Message" class="wrap" { (run.message.clone().unwrap_or_default()) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let page = Page::new(
        format!("Maintenance of {title_name} — Tablebay console"),
        viewer,
    )
    .crumb("Table buckets", "/console/buckets")
    .crumb(
        table.bucket.arn.name.as_str(),
        buckets::href(&table.bucket.arn),
    )
    .crumb(title_name.clone(), tables::href(table))
    .crumb("Maintenance", base.clone());
    Ok(layout::respond(StatusCode::OK, page.render(body)))
}
