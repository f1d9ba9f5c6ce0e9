//! Start/Sync/Update/Complete/GetTableMigration and ListTableMigrations (botocore's `/start-table-migration`,
//! `/sync-table-migration`, `/update-table-migration`, `/complete-table-migration`, `/get-table-migration`,
//! `/list-table-migrations`). The service and its state machine are `tablebay_migration`; docs/migration.md.

use std::str::FromStr;

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use tablebay_catalog::{BucketArn, Catalog, NamespaceName, TableName, TableRef};
use tablebay_migration::{
    DataMode, Migration, MigrationOutput, MigrationState, Migrations, ReportObject, SourceType,
    StartRequest,
};
use uuid::Uuid;

use super::error::ControlPlaneError;
use super::migration_wire::{
    FailureReasonWire, GetTableMigrationResponse, ListTableMigrationsResponse,
    MigrationOutputConfiguration, MigrationOutputOverviewWire, MigrationStateResponse,
    MigrationStatsWire, MigrationSummaryWire, PlanningStatsWire, ReportOverviewWire,
    StartTableMigrationRequest, SyncTableMigrationRequest, UpdateTableMigrationRequest,
};
use super::request::{RequestContext, json, no_content};
use super::router::MigrationListQuery;
use super::wire::timestamp;

/// The most migrations one ListTableMigrations page holds (the model's limit).
const MAX_PAGE: u32 = 1000;

fn missing(member: &str) -> ControlPlaneError {
    ControlPlaneError::BadRequest(format!("Missing required parameter {member}"))
}

/// `roleARN`: recorded and shown (Tablebay reads sources with the credentials the source names, not a role),
/// but it must be an IAM role ARN as the model says.
fn role_arn(raw: Option<String>) -> Result<String, ControlPlaneError> {
    let raw = raw.ok_or_else(|| missing("roleARN"))?;
    let valid = raw.len() >= 20
        && raw.len() <= 2048
        && raw.starts_with("arn:")
        && raw.split(':').nth(2) == Some("iam")
        && raw
            .split(':')
            .nth(4)
            .is_some_and(|a| a.len() == 12 && a.bytes().all(|b| b.is_ascii_digit()))
        && raw
            .split(':')
            .nth(5)
            .is_some_and(|r| r.starts_with("role/") && r.len() > 5);
    if !valid {
        return Err(ControlPlaneError::BadRequest(format!(
            "roleARN {raw:?} is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
        )));
    }
    Ok(raw)
}

fn output(raw: Option<MigrationOutputConfiguration>) -> Result<MigrationOutput, ControlPlaneError> {
    let raw = raw.ok_or_else(|| missing("migrationOutput"))?;
    if raw.bucket.len() < 12 || raw.bucket.len() > 1024 || !raw.bucket.starts_with("arn:") {
        return Err(ControlPlaneError::BadRequest(
            "migrationOutput.bucket must be a bucket ARN (arn:aws:s3:::<name>)".into(),
        ));
    }
    let prefixes = raw.prefixes.unwrap_or_default();
    let prefix = |p: Option<String>| -> Result<String, ControlPlaneError> {
        let p = p.unwrap_or_default();
        if p.len() > 512 {
            return Err(ControlPlaneError::BadRequest(
                "a migrationOutput prefix is at most 512 characters long".into(),
            ));
        }
        Ok(p)
    };
    Ok(MigrationOutput {
        bucket: raw.bucket,
        table_compatibility_prefix: prefix(prefixes.table_compatibility_report)?,
        object_compatibility_prefix: prefix(prefixes.object_compatibility_report)?,
        object_migration_prefix: prefix(prefixes.object_migration_report)?,
        ..MigrationOutput::default()
    })
}

/// `dataMigration`: the model's members, plus `dataMode` (`copy`, the default, or `register`).
fn data_migration(
    raw: Option<serde_json::Value>,
) -> Result<(DataMode, serde_json::Value), ControlPlaneError> {
    let mut value = raw.unwrap_or_else(|| serde_json::json!({}));
    let object = value
        .as_object_mut()
        .ok_or_else(|| ControlPlaneError::BadRequest("dataMigration must be an object".into()))?;
    let mode = match object.get("dataMode") {
        None => DataMode::Copy,
        Some(mode) => serde_json::from_value(mode.clone()).map_err(|_| {
            ControlPlaneError::BadRequest(format!(
                "dataMigration.dataMode {mode} is not one of copy, register"
            ))
        })?,
    };
    object.insert(
        "dataMode".into(),
        serde_json::to_value(mode).unwrap_or_default(),
    );
    // The overview always carries these two (GetTableMigration requires them).
    object
        .entry("maintenanceSettings")
        .or_insert_with(|| serde_json::json!({}));
    object
        .entry("migrationPolicies")
        .or_insert_with(|| serde_json::json!({}));
    Ok((mode, value))
}

/// An answer with a JSON body and the operation's modeled status.
fn answer<T: Serialize>(status: StatusCode, value: &T) -> Result<Response, ControlPlaneError> {
    let body = serde_json::to_vec(value).map_err(|e| ControlPlaneError::Internal(e.to_string()))?;
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn migration_id(raw: &str) -> Result<Uuid, ControlPlaneError> {
    Uuid::parse_str(raw)
        .map_err(|_| ControlPlaneError::NotFound(format!("The migration {raw} does not exist")))
}

fn service(migrations: Option<&Migrations>) -> Result<&Migrations, ControlPlaneError> {
    migrations.ok_or_else(|| {
        ControlPlaneError::BadRequest("Table migration is not enabled on this server".into())
    })
}

/// `POST /start-table-migration` (202).
pub(super) async fn start(
    migrations: Option<&Migrations>,
    ctx: &RequestContext,
    request: StartTableMigrationRequest,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let role_arn = role_arn(request.role_arn)?;
    let destination = request
        .destination_table
        .ok_or_else(|| missing("destinationTable"))?;
    if let Some(member) = destination.others.keys().next() {
        return Err(ControlPlaneError::BadRequest(format!(
            "destinationTable.{member} is not supported: an Iceberg source keeps its own schema, layout and \
             properties (set encryption or storage class on the table bucket)"
        )));
    }
    let source_type =
        SourceType::parse(&request.source_type.ok_or_else(|| missing("sourceType"))?)?;
    let source = request.source.ok_or_else(|| missing("source"))?;
    let (data_mode, data_migration) = data_migration(request.data_migration)?;
    let start = StartRequest {
        role_arn,
        bucket: BucketArn::parse(&destination.table_bucket_arn)?,
        namespace: NamespaceName::parse(&destination.namespace)?,
        name: TableName::parse(&destination.name)?,
        source_type,
        source,
        data_mode,
        data_migration,
        review: request.review_migration_plan.unwrap_or(false),
        output: output(request.migration_output)?,
    };
    let (id, state) = migrations.start(&ctx.account, start).await?;
    answer(
        StatusCode::ACCEPTED,
        &MigrationStateResponse {
            migration_id: id.to_string(),
            state: state.as_str(),
            table_arn: None,
        },
    )
}

/// `POST /sync-table-migration` (202).
pub(super) async fn sync(
    migrations: Option<&Migrations>,
    catalog: &Catalog,
    table: &TableRef,
    request: SyncTableMigrationRequest,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let role_arn = role_arn(request.role_arn)?;
    let output = output(request.migration_output)?;
    let table = catalog.table(table).await?;
    let (id, state) = migrations
        .sync(
            &table,
            role_arn,
            request.review_migration_plan.unwrap_or(false),
            output,
        )
        .await?;
    answer(
        StatusCode::ACCEPTED,
        &MigrationStateResponse {
            migration_id: id.to_string(),
            state: state.as_str(),
            table_arn: None,
        },
    )
}

/// `POST /update-table-migration?migrationId=|tableARN=`.
pub(super) async fn update(
    migrations: Option<&Migrations>,
    catalog: &Catalog,
    ctx: &RequestContext,
    id: Option<&str>,
    table: Option<&TableRef>,
    request: UpdateTableMigrationRequest,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let requested = MigrationState::from_str(
        &request
            .requested_state
            .ok_or_else(|| missing("requestedState"))?,
    )?;
    if let Some(description) = &request.update_description
        && description.len() > 1024
    {
        return Err(ControlPlaneError::BadRequest(
            "updateDescription is at most 1024 characters long".into(),
        ));
    }
    let id = match (id, table) {
        (Some(id), _) => migration_id(id)?,
        (None, Some(table)) => {
            let table = catalog.table(table).await?;
            migrations.get_for_table(&table).await?.id
        }
        (None, None) => return Err(missing("migrationId or tableARN")),
    };
    let migration = migrations
        .update(&ctx.account, id, requested, request.update_description)
        .await?;
    json(&MigrationStateResponse {
        migration_id: migration.id.to_string(),
        state: migration.state.as_str(),
        table_arn: migration.table_arn,
    })
}

/// `POST /complete-table-migration?tableARN=` (204).
pub(super) async fn complete(
    migrations: Option<&Migrations>,
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let table = catalog.table(table).await?;
    migrations.complete(&table).await?;
    no_content()
}

/// `GET /get-table-migration?migrationId=|tableARN=`.
pub(super) async fn get(
    migrations: Option<&Migrations>,
    catalog: &Catalog,
    ctx: &RequestContext,
    id: Option<&str>,
    table: Option<&TableRef>,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let migration = match (id, table) {
        (Some(id), _) => migrations.get(&ctx.account, migration_id(id)?).await?,
        (None, Some(table)) => {
            let table = catalog.table(table).await?;
            migrations.get_for_table(&table).await?
        }
        (None, None) => return Err(missing("migrationId or tableARN")),
    };
    json(&detail(migration))
}

/// `GET /list-table-migrations?tableBucketARN=|tableARN=…`.
pub(super) async fn list(
    migrations: Option<&Migrations>,
    catalog: &Catalog,
    table: Option<&TableRef>,
    query: &MigrationListQuery,
) -> Result<Response, ControlPlaneError> {
    let migrations = service(migrations)?;
    let limit = match &query.max_results {
        None => MAX_PAGE,
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                return Err(ControlPlaneError::BadRequest(format!(
                    "maxResults must be between 1 and {MAX_PAGE}"
                )));
            }
        },
    };
    let after = query
        .next_token
        .as_deref()
        .map(|t| {
            Uuid::parse_str(t)
                .map_err(|_| ControlPlaneError::BadRequest("Invalid nextToken".into()))
        })
        .transpose()?;
    let state = query
        .state
        .as_deref()
        .map(MigrationState::from_str)
        .transpose()?;
    let has_valid_plan = match query.has_valid_plan.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ControlPlaneError::BadRequest(format!(
                "hasValidPlan must be true or false, not {other:?}"
            )));
        }
    };
    let (bucket, table_id) = match (table, &query.bucket) {
        (Some(table), _) => {
            let table = catalog.table(table).await?;
            (table.bucket, Some(table.id))
        }
        (None, Some(bucket)) => (catalog.bucket(&BucketArn::parse(bucket)?).await?, None),
        (None, None) => return Err(missing("tableBucketARN or tableARN")),
    };
    let named = match (&query.namespace, &query.name) {
        (Some(namespace), Some(name)) => Some((namespace.as_str(), name.as_str())),
        (None, None) => None,
        _ => {
            return Err(ControlPlaneError::BadRequest(
                "namespace and name go together".into(),
            ));
        }
    };
    let (page, next) = migrations
        .list(
            &bucket,
            table_id,
            named,
            state,
            has_valid_plan,
            after,
            limit,
        )
        .await?;
    json(&ListTableMigrationsResponse {
        migrations: page
            .into_iter()
            .map(|m| MigrationSummaryWire {
                migration_id: m.id.to_string(),
                table_bucket_arn: m.bucket_arn,
                namespace: m.namespace,
                table_arn: m.table_arn,
                name: m.name,
                kind: m.kind.as_str(),
                state: m.state.as_str(),
                has_valid_plan: m.has_valid_plan,
                created_at: timestamp(&m.created_at),
                state_updated_at: timestamp(&m.state_updated_at),
            })
            .collect(),
        next_token: next.map(|id| id.to_string()),
    })
}

fn report(prefix: &str, report: Option<ReportObject>) -> ReportOverviewWire {
    match report {
        None => ReportOverviewWire {
            prefix: prefix.to_string(),
            key: None,
            checksum_crc64nvme: None,
            invalid_findings: None,
        },
        Some(r) => ReportOverviewWire {
            prefix: r.prefix,
            key: Some(r.key),
            checksum_crc64nvme: Some(r.checksum_crc64nvme),
            invalid_findings: Some(r.invalid_findings),
        },
    }
}

fn detail(m: Migration) -> GetTableMigrationResponse {
    let output = m.output;
    GetTableMigrationResponse {
        migration_id: m.id.to_string(),
        table_bucket_arn: m.bucket_arn,
        namespace: m.namespace,
        table_arn: m.table_arn,
        name: m.name,
        kind: m.kind.as_str(),
        state: m.state.as_str(),
        role_arn: m.role_arn,
        review_migration_plan: m.review,
        has_valid_plan: m.has_valid_plan,
        created_at: timestamp(&m.created_at),
        state_updated_at: timestamp(&m.state_updated_at),
        failure_reason: m.failure.map(|f| FailureReasonWire {
            code: f.code,
            detail: f.detail,
        }),
        planning_stats: m.planning.map(|p| PlanningStatsWire {
            objects_scanned: p.objects_scanned,
            objects_planned: p.objects_planned,
            partition_count: p.partition_count,
        }),
        migration_stats: m.stats.map(|s| MigrationStatsWire {
            objects_migrated: s.objects_migrated,
            objects_failed_migration: s.objects_failed_migration,
            objects_pending_migration: s.objects_pending_migration,
        }),
        source_type: m.source_type,
        source: m.source,
        data_migration: m.data_migration,
        migration_output: MigrationOutputOverviewWire {
            bucket: output.bucket,
            table_compatibility_report: report(
                &output.table_compatibility_prefix,
                output.table_compatibility_report,
            ),
            object_compatibility_report: report(
                &output.object_compatibility_prefix,
                output.object_compatibility_report,
            ),
            object_migration_report: report(
                &output.object_migration_prefix,
                output.object_migration_report,
            ),
        },
    }
}
