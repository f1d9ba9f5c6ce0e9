//! The log table: its schema (the fields of S3's server access log format that apply here, plus the surface and
//! the delivery time), its partitioning (by day, as `partitionedPrefix` partitions log object keys), and records
//! as Arrow rows of its *current* schema: a column added later by a user is written as nulls.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::DataType;
use chrono::{DateTime, Utc};
use iceberg::spec::{Literal, Struct, TableMetadata, Transform};
use tablebay_catalog::{PartitionDateSource, TableDefinition};
use tablebay_compaction::{CompactionError, PartitionRows};

use super::AccessRecord;

/// The columns of a log table, in order: name, Iceberg type, required.
pub const LOG_TABLE_COLUMNS: [(&str, &str, bool); 21] = [
    ("bucket_owner", "string", true),
    ("bucket", "string", true),
    ("event_time", "timestamptz", true),
    ("remote_ip", "string", false),
    ("requester", "string", false),
    ("request_id", "string", true),
    ("operation", "string", true),
    ("key", "string", false),
    ("request_uri", "string", false),
    ("http_status", "int", true),
    ("error_code", "string", false),
    ("bytes_sent", "long", false),
    ("object_size", "long", false),
    ("total_time_ms", "long", true),
    ("referer", "string", false),
    ("user_agent", "string", false),
    ("signature_version", "string", false),
    ("authentication_type", "string", false),
    ("host_header", "string", false),
    ("surface", "string", true),
    ("delivery_time", "timestamptz", true),
];

fn date_column(source: PartitionDateSource) -> &'static str {
    match source {
        PartitionDateSource::EventTime => "event_time",
        PartitionDateSource::DeliveryTime => "delivery_time",
    }
}

/// A new log table: the columns above, partitioned by day of the event or delivery time.
pub(super) fn definition(source: PartitionDateSource) -> Result<TableDefinition, CompactionError> {
    let fields: Vec<serde_json::Value> = LOG_TABLE_COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (name, kind, required))| {
            serde_json::json!({"id": i + 1, "name": name, "type": kind, "required": required})
        })
        .collect();
    let source_id = LOG_TABLE_COLUMNS
        .iter()
        .position(|(name, _, _)| *name == date_column(source))
        .map(|i| i + 1);
    let spec = serde_json::json!({"fields": [
        {"source-id": source_id, "field-id": 1000, "transform": "day",
         "name": format!("{}_day", date_column(source))}
    ]});
    Ok(TableDefinition::from_iceberg_json(
        serde_json::json!({"type": "struct", "schema-id": 0, "fields": fields}),
        Some(spec),
        None,
        BTreeMap::from([("format-version".to_string(), "2".to_string())]),
    )?)
}

/// Groups records by the partition of the table's default spec (unpartitioned, or by day of a time column of
/// the log) and makes each group one batch of the current schema.
pub(super) fn partition_rows(
    metadata: &TableMetadata,
    source: PartitionDateSource,
    records: &[AccessRecord],
    delivered_at: DateTime<Utc>,
) -> Result<Vec<PartitionRows>, CompactionError> {
    let schema = metadata.current_schema();
    let spec = metadata.default_partition_spec();
    let day_of: Option<&'static str> = match spec.fields() {
        [] => None,
        [field] if field.transform == Transform::Day => {
            let column = schema
                .field_by_id(field.source_id)
                .map(|f| f.name.as_str())
                .unwrap_or_default();
            match column {
                "event_time" => Some("event_time"),
                "delivery_time" => Some("delivery_time"),
                _ => None,
            }
            .ok_or_else(|| unsupported_spec(source))
            .map(Some)?
        }
        _ => return Err(unsupported_spec(source)),
    };
    let mut groups: BTreeMap<Option<i32>, Vec<&AccessRecord>> = BTreeMap::new();
    for record in records {
        let day = day_of.map(|column| {
            let time = if column == "event_time" {
                record.event_time
            } else {
                delivered_at
            };
            i32::try_from(time.timestamp().div_euclid(86_400)).unwrap_or(i32::MAX)
        });
        groups.entry(day).or_default().push(record);
    }
    let arrow_schema = Arc::new(iceberg::arrow::schema_to_arrow_schema(schema)?);
    groups
        .into_iter()
        .map(|(day, records)| {
            let columns = arrow_schema
                .fields()
                .iter()
                .map(|field| {
                    column(
                        field.name(),
                        field.data_type(),
                        field.is_nullable(),
                        &records,
                        delivered_at,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let rows = RecordBatch::try_new(arrow_schema.clone(), columns)
                .map_err(|e| CompactionError::Internal(format!("access log rows: {e}")))?;
            Ok(PartitionRows {
                partition: match day {
                    Some(day) => Struct::from_iter([Some(Literal::date(day))]),
                    None => Struct::empty(),
                },
                rows,
            })
        })
        .collect()
}

fn unsupported_spec(source: PartitionDateSource) -> CompactionError {
    CompactionError::Invalid(format!(
        "the log table's partition spec was changed: it must be unpartitioned or partitioned by day of \
         event_time or delivery_time (the configuration asks for {})",
        date_column(source)
    ))
}

/// One column of the batch; a column the log does not know is nulls (refused when required).
fn column(
    name: &str,
    kind: &DataType,
    nullable: bool,
    records: &[&AccessRecord],
    delivered_at: DateTime<Utc>,
) -> Result<ArrayRef, CompactionError> {
    let text = |f: &dyn Fn(&AccessRecord) -> Option<String>| -> ArrayRef {
        Arc::new(records.iter().map(|r| f(r)).collect::<StringArray>())
    };
    let long = |f: &dyn Fn(&AccessRecord) -> Option<i64>| -> ArrayRef {
        Arc::new(records.iter().map(|r| f(r)).collect::<Int64Array>())
    };
    let time = |f: &dyn Fn(&AccessRecord) -> DateTime<Utc>| -> ArrayRef {
        let timezone = match kind {
            DataType::Timestamp(_, timezone) => timezone.clone(),
            _ => None,
        };
        Arc::new(
            records
                .iter()
                .map(|r| Some(f(r).timestamp_micros()))
                .collect::<TimestampMicrosecondArray>()
                .with_timezone_opt(timezone),
        )
    };
    let size = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
    let array = match name {
        "bucket_owner" => text(&|r| Some(r.account.to_string())),
        "bucket" => text(&|r| Some(r.bucket.to_string())),
        "event_time" => time(&|r| r.event_time),
        "remote_ip" => text(&|r| r.remote_ip.map(|ip| ip.to_string())),
        "requester" => text(&|r| r.requester.clone()),
        "request_id" => text(&|r| Some(r.request_id.clone())),
        "operation" => text(&|r| Some(r.operation.to_string())),
        "key" => text(&|r| r.key.clone()),
        "request_uri" => text(&|r| Some(r.request_uri.clone())),
        "http_status" => Arc::new(
            records
                .iter()
                .map(|r| Some(i32::from(r.http_status)))
                .collect::<Int32Array>(),
        ),
        "error_code" => text(&|r| r.error_code.clone()),
        "bytes_sent" => long(&|r| size(r.bytes_sent)),
        "object_size" => long(&|r| size(r.object_size)),
        "total_time_ms" => long(&|r| i64::try_from(r.total_time.as_millis()).ok()),
        "referer" => text(&|r| r.referer.clone()),
        "user_agent" => text(&|r| r.user_agent.clone()),
        "signature_version" => text(&|r| r.signature_version.map(str::to_string)),
        "authentication_type" => text(&|r| r.authentication_type.map(str::to_string)),
        "host_header" => text(&|r| r.host_header.clone()),
        "surface" => text(&|r| Some(r.surface.to_string())),
        "delivery_time" => time(&|_| delivered_at),
        _ if nullable => arrow_array::new_null_array(kind, records.len()),
        other => {
            return Err(CompactionError::Invalid(format!(
                "the log table has a required column '{other}' that access log records do not fill"
            )));
        }
    };
    if array.data_type() != kind {
        return Err(CompactionError::Invalid(format!(
            "the log table's column '{name}' has type {kind}, not the log's {}",
            array.data_type()
        )));
    }
    Ok(array)
}
