//! A table's page: its schema (types and field ids), partition spec, sort order, properties, metadata location
//! and version token, read from its current metadata file; the snapshot timeline and the file-size histogram
//! (`charts.rs`); the first rows of the current snapshot with deletes applied, read on the server by
//! compaction's reader (`tablebay_compaction::preview`) and only for a viewer allowed `GetTableData` (decided,
//! and audited, by the one authorization function). Also creating a table from a column list, and deleting one.

use std::collections::BTreeMap;

use axum::response::Response;
use http::StatusCode;
use maud::{Markup, html};
use serde_json::Value;
use tablebay_catalog::{
    BucketArn, NamespaceName, NewTable, ServiceError, Table, TableDefinition, TableName, TableRef,
    Tags,
};
use tablebay_iam::Resource;
use tablebay_policy::Action;

use super::buckets;
use super::charts::{self, SnapshotPoint, operation_class};
use super::error::ConsoleError;
use super::layout::{self, Page, Viewer, action_button, bytes, seg, when, when_ms};
use crate::pipeline::Context;

/// Rows the preview shows.
pub(super) const PREVIEW_ROWS: usize = 50;
/// Snapshots listed in the table under the timeline (the newest).
const LISTED_SNAPSHOTS: usize = 50;
/// The most columns a table created in the console has.
const MAX_COLUMNS: usize = 200;

/// The table page's address.
pub(super) fn href(table: &Table) -> String {
    format!(
        "{}/namespaces/{}/tables/{}",
        buckets::href(&table.bucket.arn),
        seg(table.namespace.as_str()),
        seg(table.name.as_str())
    )
}

/// One column line of the create form (`name type [required]`) as an Iceberg schema field.
fn column(line: &str, id: usize) -> Result<Value, ConsoleError> {
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let required = words
        .last()
        .is_some_and(|w| w.eq_ignore_ascii_case("required"));
    if required {
        words.pop();
    }
    let Some(kind) = words.pop() else {
        return Err(ConsoleError::BadRequest(format!(
            "Column line '{line}' has no type"
        )));
    };
    let name = words.join(" ");
    if name.is_empty() {
        return Err(ConsoleError::BadRequest(format!(
            "Column line '{line}' needs a name and a type"
        )));
    }
    let kind = kind.to_ascii_lowercase();
    let known = matches!(
        kind.as_str(),
        "boolean"
            | "int"
            | "long"
            | "float"
            | "double"
            | "date"
            | "time"
            | "timestamp"
            | "timestamptz"
            | "string"
            | "uuid"
            | "binary"
    ) || kind.starts_with("decimal(")
        || kind.starts_with("fixed[");
    if !known {
        return Err(ConsoleError::BadRequest(format!(
            "Column '{name}': unknown type '{kind}'"
        )));
    }
    Ok(serde_json::json!({"id": id, "name": name, "type": kind, "required": required}))
}

/// `POST /console/buckets/{b}/tables`: CreateTable with the columns given, one per line.
pub(super) async fn create(
    cx: &Context<'_>,
    bucket: &BucketArn,
    namespace: &str,
    name: &str,
    columns: &str,
) -> Result<Response, ConsoleError> {
    let namespace = NamespaceName::parse(namespace)?;
    let name = TableName::parse(name)?;
    let fields = columns
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .zip(1..)
        .map(|(line, id)| column(line, id))
        .collect::<Result<Vec<_>, _>>()?;
    if fields.is_empty() || fields.len() > MAX_COLUMNS {
        return Err(ConsoleError::BadRequest(format!(
            "A table needs 1 to {MAX_COLUMNS} columns"
        )));
    }
    let schema = serde_json::json!({"type": "struct", "schema-id": 0, "fields": fields});
    let new = NewTable {
        name,
        format: "ICEBERG".to_string(),
        definition: Some(TableDefinition::from_iceberg_json(
            schema,
            None,
            None,
            BTreeMap::new(),
        )?),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let table = cx
        .catalog()
        .create_table(bucket, &namespace, new, &cx.account)
        .await?;
    Ok(layout::see_other(&href(&table)))
}

/// `POST …/tables/{t}/delete`: DeleteTable.
pub(super) async fn delete(cx: &Context<'_>, table: &Table) -> Result<Response, ConsoleError> {
    cx.catalog()
        .delete_table(&TableRef::Arn(table.arn.clone()), None)
        .await?;
    Ok(layout::see_other(&buckets::href(&table.bucket.arn)))
}

/// The element of `array` whose `key` is `id`.
fn by_id<'a>(array: Option<&'a Value>, key: &str, id: Option<&Value>) -> Option<&'a Value> {
    array?.as_array()?.iter().find(|item| item.get(key) == id)
}

/// An Iceberg type as text: primitives as they are, nested types with their element and field ids.
fn type_text(kind: &Value) -> String {
    match kind {
        Value::String(s) => s.clone(),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("struct") => {
                let fields: Vec<String> = o
                    .get("fields")
                    .and_then(Value::as_array)
                    .map(|fields| {
                        fields
                            .iter()
                            .map(|f| {
                                format!(
                                    "{} ({}): {}",
                                    f.get("name").and_then(Value::as_str).unwrap_or("?"),
                                    f.get("id").map(Value::to_string).unwrap_or_default(),
                                    f.get("type").map(type_text).unwrap_or_default()
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                format!("struct<{}>", fields.join(", "))
            }
            Some("list") => format!(
                "list<{}> (element {})",
                o.get("element").map(type_text).unwrap_or_default(),
                o.get("element-id")
                    .map(Value::to_string)
                    .unwrap_or_default()
            ),
            Some("map") => format!(
                "map<{}, {}> (key {}, value {})",
                o.get("key").map(type_text).unwrap_or_default(),
                o.get("value").map(type_text).unwrap_or_default(),
                o.get("key-id").map(Value::to_string).unwrap_or_default(),
                o.get("value-id").map(Value::to_string).unwrap_or_default()
            ),
            _ => Value::Object(o.clone()).to_string(),
        },
        other => other.to_string(),
    }
}

fn text(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or_default()
}

/// A number of a snapshot summary (they are strings there).
fn summary_number(summary: Option<&Value>, key: &str) -> u64 {
    summary
        .and_then(|s| s.get(key))
        .and_then(|v| {
            v.as_str()
                .and_then(|s| s.parse().ok())
                .or_else(|| v.as_u64())
        })
        .unwrap_or(0)
}

/// The snapshots of a metadata document as the timeline shows them, oldest first.
pub(super) fn snapshot_points(metadata: &Value) -> Vec<SnapshotPoint> {
    let mut points: Vec<(i64, SnapshotPoint)> = metadata
        .get("snapshots")
        .and_then(Value::as_array)
        .map(|snapshots| {
            snapshots
                .iter()
                .map(|s| {
                    let summary = s.get("summary");
                    (
                        s.get("sequence-number")
                            .and_then(Value::as_i64)
                            .unwrap_or(0),
                        SnapshotPoint {
                            id: s.get("snapshot-id").and_then(Value::as_i64).unwrap_or(0),
                            timestamp_ms: s
                                .get("timestamp-ms")
                                .and_then(Value::as_i64)
                                .unwrap_or(0),
                            operation: text(summary.and_then(|s| s.get("operation"))).to_string(),
                            records: summary_number(summary, "total-records"),
                            data_files: summary_number(summary, "total-data-files"),
                            bytes: summary_number(summary, "total-files-size"),
                        },
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    points.sort_by_key(|(sequence, p)| (p.timestamp_ms, *sequence));
    points.into_iter().map(|(_, p)| p).collect()
}

/// What the viewer may do on the table page.
struct Rights {
    delete: bool,
    maintenance: bool,
    read_maintenance: bool,
}

/// `GET /console/buckets/{b}/namespaces/{ns}/tables/{t}`.
pub(super) async fn page(
    cx: &Context<'_>,
    viewer: &Viewer,
    table: &Table,
) -> Result<Response, ConsoleError> {
    let catalog = cx.catalog();
    let table_ref = TableRef::Arn(table.arn.clone());
    let resource = Resource::table(table);
    let allowed = cx
        .app
        .iam
        .allowed_actions(
            &cx.principal,
            &[
                Action::DeleteTable,
                Action::GetTableMaintenanceJobStatus,
                Action::GetTableMaintenanceConfiguration,
            ],
            &resource,
        )
        .await?;
    let at = |i: usize| allowed.get(i).copied().unwrap_or(false);
    let can = Rights {
        delete: at(0),
        maintenance: at(1) && at(2),
        read_maintenance: at(2),
    };
    let loaded = match table.metadata_location {
        Some(_) => Some(catalog.load_iceberg_table(&table_ref).await?),
        None => None,
    };
    let metadata: Option<Value> = loaded
        .as_ref()
        .map(|l| serde_json::from_slice(&l.metadata.json))
        .transpose()
        .map_err(|e| ConsoleError::Internal(format!("the metadata file does not parse: {e}")))?;
    let small_below = if can.read_maintenance {
        let (_, maintenance) = catalog.table_maintenance(&table_ref).await?;
        u64::from(maintenance.compaction.settings.target_file_size_mb) * 1024 * 1024 * 3 / 4
    } else {
        512 * 1024 * 1024 * 3 / 4
    };
    // Reading rows is reading table data: the one authorization function decides, and audits a denial.
    let may_read_rows = match &metadata {
        None => false,
        Some(_) => match cx
            .app
            .iam
            .authorize(&cx.principal, Action::GetTableData, &resource, &cx.access)
            .await
        {
            Ok(()) => true,
            Err(ServiceError::Denied(_)) => false,
            Err(e) => return Err(e.into()),
        },
    };
    let current = metadata
        .as_ref()
        .and_then(|m| m.get("current-snapshot-id"))
        .and_then(Value::as_i64)
        .filter(|id| *id >= 0);
    let cached = current.and_then(|snapshot| {
        cx.app
            .console_inspections
            .get(table.id, snapshot, may_read_rows)
    });
    let inspection = match (&metadata, cached) {
        (None, _) => None,
        (Some(_), Some(found)) => Some(Ok(found)),
        (Some(_), None) => {
            let rows = may_read_rows.then_some(PREVIEW_ROWS);
            Some(
                match tablebay_compaction::inspect(catalog, &table_ref, rows).await {
                    Ok(found) => {
                        let found = std::sync::Arc::new(found);
                        cx.app
                            .console_inspections
                            .put(table.id, std::sync::Arc::clone(&found));
                        Ok(found)
                    }
                    Err(e) => Err(e.to_string()),
                },
            )
        }
    };
    let files = inspection
        .as_ref()
        .map(|i| i.as_ref().map(|i| i.files.clone()));
    let preview: Result<Option<tablebay_compaction::Preview>, String> = match &inspection {
        None => Ok(None),
        Some(Err(e)) => Err(e.clone()),
        Some(Ok(_)) if !may_read_rows => Err(
            "You are not allowed s3tables:GetTableData on this table, so its rows are not shown."
                .to_string(),
        ),
        Some(Ok(found)) => Ok(found.preview.clone()),
    };
    let title_name = format!("{}.{}", table.namespace.as_str(), table.name.as_str());
    let base = href(table);
    let body = html! {
        main {
            h1 { "Table " (title_name) }
            section class="card" {
                dl class="facts" {
                    dt { "Table ARN" } dd class="mono" { (table.arn.to_string()) }
                    dt { "Metadata location" } dd class="mono" id="metadata-location" { (table.metadata_location.clone().unwrap_or_else(|| "—".into())) }
                    dt { "Version token" } dd class="mono" id="version-token" { (table.version_token) }
                    dt { "Warehouse location" } dd class="mono" { (table.warehouse_location) }
                    dt { "Format" } dd { (table.format) }
                    @if let Some(m) = &metadata {
                        dt { "Format version" } dd { (m.get("format-version").map(Value::to_string).unwrap_or_default()) }
                        dt { "Table UUID" } dd class="mono" { (text(m.get("table-uuid"))) }
                        dt { "Current snapshot" } dd class="mono" id="current-snapshot" { (m.get("current-snapshot-id").map(Value::to_string).unwrap_or_else(|| "none".into())) }
                    }
                    dt { "Created" } dd { (when(&table.created_at)) " by " span class="mono" { (table.created_by) } }
                    dt { "Modified" } dd { (when(&table.modified_at)) " by " span class="mono" { (table.modified_by) } }
                }
                div class="actions" {
                    @if can.maintenance { a href=(format!("{base}/maintenance")) { "Maintenance" } }
                    @if can.delete { (action_button(&format!("{base}/delete"), &viewer.csrf, "Delete table", true)) }
                }
            }
            @match &metadata {
                None => section class="card" { p class="muted" { "This table has no Iceberg metadata yet: a client creates it on its first commit." } },
                Some(m) => {
                    (schema_section(m))
                    (snapshots_section(m))
                    section class="card" id="files" {
                        h2 { "Data files" }
                        @if let Some(Err(message)) = &files {
                            p class="notice" { (message) }
                        }
                        @if let Some(Ok(files)) = &files {
                            @if files.snapshot_id.is_none() {
                                p class="muted" { "No snapshot yet." }
                            } @else {
                                p { (files.data_file_sizes.len()) " data files, " (bytes(files.data_file_sizes.iter().sum())) "; " (files.delete_files) " delete files." }
                                (charts::histogram(&files.data_file_sizes, small_below))
                            }
                        }
                    }
                    (preview_section(&preview))
                }
            }
        }
    };
    let page = Page::new(format!("{title_name} — Table — Tablebay console"), viewer)
        .crumb("Table buckets", "/console/buckets")
        .crumb(
            table.bucket.arn.name.as_str(),
            buckets::href(&table.bucket.arn),
        )
        .crumb(title_name.clone(), base.clone());
    Ok(layout::respond(StatusCode::OK, page.render(body)))
}

fn schema_section(m: &Value) -> Markup {
    let schema = by_id(m.get("schemas"), "schema-id", m.get("current-schema-id"))
        .or_else(|| m.get("schema"));
    let fields: Vec<&Value> = schema
        .and_then(|s| s.get("fields"))
        .and_then(Value::as_array)
        .map(|f| f.iter().collect())
        .unwrap_or_default();
    let name_of = |id: Option<&Value>| -> String {
        fields
            .iter()
            .find(|f| f.get("id") == id)
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| id.map(Value::to_string).unwrap_or_default())
    };
    let spec = by_id(
        m.get("partition-specs"),
        "spec-id",
        m.get("default-spec-id"),
    );
    let spec_fields: Vec<&Value> = spec
        .and_then(|s| s.get("fields"))
        .and_then(Value::as_array)
        .map(|f| f.iter().collect())
        .unwrap_or_default();
    let order = by_id(
        m.get("sort-orders"),
        "order-id",
        m.get("default-sort-order-id"),
    );
    let order_fields: Vec<&Value> = order
        .and_then(|s| s.get("fields"))
        .and_then(Value::as_array)
        .map(|f| f.iter().collect())
        .unwrap_or_default();
    let properties: Vec<(&String, &Value)> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().collect())
        .unwrap_or_default();
    html! {
        div class="grid" {
            section class="card" id="schema" {
                h2 { "Schema" @if let Some(s) = schema { " " span class="muted" { "(id " (s.get("schema-id").map(Value::to_string).unwrap_or_default()) ")" } } }
                div class="scroll" {
                    table class="responsive" {
                        thead { tr { th class="num" { "Field id" } th { "Name" } th { "Type" } th { "Required" } } }
                        tbody {
                            @for f in &fields {
                                tr {
                                    td data-label="Field id" class="num" { (f.get("id").map(Value::to_string).unwrap_or_default()) }
                                    td data-label="Name" class="mono wrap" { (text(f.get("name"))) }
                                    td data-label="Type" class="mono wrap" { (f.get("type").map(type_text).unwrap_or_default()) }
                                    td data-label="Required" { (if f.get("required").and_then(Value::as_bool).unwrap_or(false) { "yes" } else { "no" }) }
                                }
                            }
                        }
                    }
                }
            }
            section class="card" id="layout" {
                h2 { "Partition spec" @if let Some(s) = spec { " " span class="muted" { "(id " (s.get("spec-id").map(Value::to_string).unwrap_or_default()) ")" } } }
                @if spec_fields.is_empty() {
                    p class="muted" { "Unpartitioned." }
                } @else {
                    ul { @for f in &spec_fields {
                        li class="mono" { (text(f.get("name"))) " = " (text(f.get("transform"))) "(" (name_of(f.get("source-id"))) ")"
                            span class="muted" { " field id " (f.get("field-id").map(Value::to_string).unwrap_or_default()) } }
                    } }
                }
                h2 { "Sort order" }
                @if order_fields.is_empty() {
                    p class="muted" { "Unsorted." }
                } @else {
                    ol { @for f in &order_fields {
                        li class="mono" { (text(f.get("transform"))) "(" (name_of(f.get("source-id"))) ") " (text(f.get("direction"))) " " (text(f.get("null-order"))) }
                    } }
                }
                h2 { "Properties" }
                @if properties.is_empty() {
                    p class="muted" { "None." }
                } @else {
                    dl class="facts" id="properties" {
                        @for (key, value) in &properties {
                            dt class="mono" { (key) }
                            dd class="mono" { (value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string())) }
                        }
                    }
                }
            }
        }
    }
}

fn snapshots_section(m: &Value) -> Markup {
    let points = snapshot_points(m);
    html! {
        section class="card" id="snapshots" {
            h2 { "Snapshots" }
            @if points.is_empty() {
                p class="muted" { "No snapshots yet." }
            } @else {
                (charts::timeline(&points))
                h3 { "Newest snapshots" }
                div class="scroll" {
                    table class="responsive" id="snapshot-table" {
                        thead { tr { th { "Snapshot" } th { "Committed" } th { "Operation" } th class="num" { "Records" } th class="num" { "Data files" } th class="num" { "Bytes" } } }
                        tbody {
                            @for p in points.iter().rev().take(LISTED_SNAPSHOTS) {
                                tr data-snapshot-id=(p.id) data-operation=(p.operation) data-records=(p.records) data-files=(p.data_files) {
                                    td data-label="Snapshot" class="mono" { (p.id) }
                                    td data-label="Committed" { (when_ms(p.timestamp_ms)) }
                                    td data-label="Operation" { span class=(format!("swatch {}", operation_class(&p.operation))) {} (p.operation) }
                                    td data-label="Records" class="num" { (p.records) }
                                    td data-label="Data files" class="num" { (p.data_files) }
                                    td data-label="Bytes" class="num" { (bytes(p.bytes)) }
                                }
                            }
                        }
                    }
                }
                @if points.len() > LISTED_SNAPSHOTS {
                    p class="muted" { "Showing the newest " (LISTED_SNAPSHOTS) " of " (points.len()) " snapshots; the chart shows all." }
                }
            }
        }
    }
}

fn preview_section(preview: &Result<Option<tablebay_compaction::Preview>, String>) -> Markup {
    html! {
        section class="card" id="preview" {
            h2 { "Data preview" }
            @match preview {
                Err(message) => p class="notice" { (message) },
                Ok(None) => p class="muted" { "No data." },
                Ok(Some(preview)) if preview.snapshot_id.is_none() => p class="muted" { "No snapshot yet: the table has no rows." },
                Ok(Some(preview)) => {
                    p class="muted" { "The first " (preview.rows.len()) " rows of snapshot " (preview.snapshot_id.unwrap_or_default()) ", deletes applied (at most " (PREVIEW_ROWS) ")." }
                    div class="scroll" {
                        table id="preview-table" {
                            thead { tr { @for c in &preview.columns { th scope="col" class="mono" { (c) } } } }
                            tbody {
                                @for row in &preview.rows {
                                    tr { @for cell in row {
                                        @match cell { Some(v) => td class="mono" { (v) }, None => td class="muted" { "null" } }
                                    } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_lines() {
        assert_eq!(
            column("id long required", 1).unwrap(),
            serde_json::json!({"id": 1, "name": "id", "type": "long", "required": true})
        );
        assert_eq!(
            column("first name string", 2).unwrap()["name"],
            serde_json::json!("first name")
        );
        assert_eq!(
            column("<script>alert(1)</script> string", 3).unwrap()["name"],
            "<script>alert(1)</script>"
        );
        assert!(column("price decimal(10,2)", 4).is_ok());
        assert!(column("x blob", 5).is_err());
        assert!(column("long", 6).is_err());
    }

    #[test]
    fn nested_types_name_their_ids() {
        let t = serde_json::json!({"type": "list", "element-id": 5, "element": "string", "element-required": false});
        assert_eq!(type_text(&t), "list<string> (element 5)");
    }

    #[test]
    fn snapshots_in_commit_order() {
        let m = serde_json::json!({"snapshots": [
            {"snapshot-id": 2, "sequence-number": 2, "timestamp-ms": 20, "summary": {"operation": "replace", "total-records": "5", "total-data-files": "1", "total-files-size": "900"}},
            {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 10, "summary": {"operation": "append", "total-records": "5", "total-data-files": "3"}}
        ]});
        let points = snapshot_points(&m);
        assert_eq!(points.iter().map(|p| p.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(points[1].data_files, 1);
        assert_eq!(points[0].bytes, 0);
    }
}
