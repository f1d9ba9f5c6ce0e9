//! Iceberg metadata the server writes itself: the first `metadata.json` of a table created with a schema
//! (CreateTable with `metadata.iceberg`), built with iceberg-rust's `TableMetadataBuilder`, which assigns fresh
//! field, spec and sort-order ids exactly as Java's `TableMetadata.newTableMetadata` does.

use std::collections::{BTreeMap, HashMap};

use iceberg::spec::{
    FormatVersion, Schema, SortOrder, TableMetadata, TableMetadataBuilder, UnboundPartitionSpec,
};
use uuid::Uuid;

use crate::ServiceError;

/// The definition of a new Iceberg table: schema, optional partition spec and sort order, properties.
#[derive(Clone, Debug)]
pub struct TableDefinition {
    schema: Schema,
    partition_spec: Option<UnboundPartitionSpec>,
    sort_order: Option<SortOrder>,
    properties: HashMap<String, String>,
}

/// Table properties that describe the metadata itself and are never persisted as properties
/// (Java `TableMetadata` reserved properties).
const RESERVED_PROPERTIES: &[&str] = &[
    "format-version",
    "uuid",
    "snapshot-count",
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
];

impl TableDefinition {
    /// Builds a definition from Iceberg-spec JSON: a schema (`{"type":"struct","fields":[…]}`), an optional
    /// partition spec (`{"fields":[{"source-id","transform","name"}]}`) and sort order, and properties
    /// (`format-version` among them chooses the format, default 2).
    pub fn from_iceberg_json(
        schema: serde_json::Value,
        partition_spec: Option<serde_json::Value>,
        sort_order: Option<serde_json::Value>,
        properties: BTreeMap<String, String>,
    ) -> Result<Self, ServiceError> {
        let schema: Schema = serde_json::from_value(schema)
            .map_err(|e| ServiceError::invalid(format!("Invalid Iceberg schema: {e}")))?;
        let partition_spec = partition_spec
            .map(serde_json::from_value::<UnboundPartitionSpec>)
            .transpose()
            .map_err(|e| ServiceError::invalid(format!("Invalid partition spec: {e}")))?;
        let sort_order = sort_order
            .map(serde_json::from_value::<SortOrder>)
            .transpose()
            .map_err(|e| ServiceError::invalid(format!("Invalid sort order: {e}")))?;
        Ok(Self {
            schema,
            partition_spec,
            sort_order,
            properties: properties.into_iter().collect(),
        })
    }

    /// The first metadata of the table `table_id` at `location`; the Iceberg table UUID is the table id.
    pub(crate) fn build_metadata(
        self,
        table_id: Uuid,
        location: &str,
    ) -> Result<TableMetadata, ServiceError> {
        let invalid = |e: iceberg::Error| {
            ServiceError::invalid(format!("Invalid table metadata: {}", e.message()))
        };
        let mut properties = self.properties;
        let format_version = match properties.remove("format-version").as_deref() {
            None | Some("2") => FormatVersion::V2,
            Some("1") => FormatVersion::V1,
            Some("3") => FormatVersion::V3,
            Some(other) => {
                return Err(ServiceError::invalid(format!(
                    "Unsupported format-version '{other}'"
                )));
            }
        };
        properties.retain(|k, _| !RESERVED_PROPERTIES.contains(&k.as_str()));
        let builder = TableMetadataBuilder::new(
            self.schema,
            self.partition_spec
                .unwrap_or_else(|| UnboundPartitionSpec::builder().build()),
            self.sort_order.unwrap_or_else(SortOrder::unsorted_order),
            location.to_string(),
            format_version,
            properties,
        )
        .map_err(invalid)?;
        Ok(builder
            .assign_uuid(table_id)
            .build()
            .map_err(invalid)?
            .metadata)
    }
}

/// Serializes table or view metadata with its lists in a stable order. iceberg-rust keeps schemas, specs, sort
/// orders, snapshots and view versions in hash maps, so its JSON lists them in no particular order; Java keeps
/// them in the order added, and clients (the REST compatibility kit among them) compare those lists.
pub fn metadata_json<T: serde::Serialize>(metadata: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut doc = serde_json::to_value(metadata)?;
    let order_by = |doc: &mut serde_json::Value, list: &str, keys: &[&str]| {
        if let Some(items) = doc.get_mut(list).and_then(serde_json::Value::as_array_mut) {
            items.sort_by_key(|item| {
                keys.iter()
                    .map(|k| item.get(*k).and_then(serde_json::Value::as_i64))
                    .collect::<Vec<_>>()
            });
        }
    };
    order_by(&mut doc, "schemas", &["schema-id"]);
    order_by(&mut doc, "partition-specs", &["spec-id"]);
    order_by(&mut doc, "sort-orders", &["order-id"]);
    order_by(&mut doc, "snapshots", &["sequence-number", "timestamp-ms"]);
    order_by(&mut doc, "versions", &["version-id"]);
    serde_json::to_vec(&doc)
}

/// `<location>/metadata/<NNNNN>-<uuid>.metadata.json`, Java's naming (`reference/iceberg-rest.md` §3).
pub(crate) fn metadata_file_location(location: &str, version: u64) -> String {
    format!(
        "{}/metadata/{version:05}-{}.metadata.json",
        location.trim_end_matches('/'),
        Uuid::new_v4()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_v2_metadata_with_fresh_ids() {
        let schema = serde_json::json!({"type": "struct", "fields": [
            {"id": 7, "name": "id", "type": "long", "required": true},
            {"id": 9, "name": "ts", "type": "timestamp", "required": false},
            {"id": 11, "name": "price", "type": "decimal(10,2)", "required": false}]});
        let spec =
            serde_json::json!({"fields": [{"source-id": 9, "transform": "day", "name": "ts_day"}]});
        let id = Uuid::new_v4();
        let def =
            TableDefinition::from_iceberg_json(schema, Some(spec), None, BTreeMap::new()).unwrap();
        let metadata = def.build_metadata(id, "s3://x--table-s3").unwrap();
        assert_eq!(metadata.format_version(), FormatVersion::V2);
        assert_eq!(metadata.uuid(), id);
        let field_ids: Vec<i32> = metadata
            .current_schema()
            .as_struct()
            .fields()
            .iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(field_ids, vec![1, 2, 3]);
        let spec = metadata.default_partition_spec();
        assert_eq!(spec.fields()[0].source_id, 2);
        assert_eq!(spec.fields()[0].field_id, 1000);
    }

    #[test]
    fn rejects_bad_definitions() {
        let bad_type = serde_json::json!({"type": "struct", "fields": [{"id": 1, "name": "x", "type": "nope", "required": true}]});
        assert!(TableDefinition::from_iceberg_json(bad_type, None, None, BTreeMap::new()).is_err());
        let schema = serde_json::json!({"type": "struct", "fields": [{"id": 1, "name": "x", "type": "long", "required": true}]});
        let bad_spec = serde_json::json!({"fields": [{"source-id": 42, "transform": "identity", "name": "p"}]});
        let def = TableDefinition::from_iceberg_json(
            schema.clone(),
            Some(bad_spec),
            None,
            BTreeMap::new(),
        )
        .unwrap();
        assert!(def.build_metadata(Uuid::new_v4(), "s3://x").is_err());
        let props = BTreeMap::from([("format-version".to_string(), "9".to_string())]);
        let def = TableDefinition::from_iceberg_json(schema, None, None, props).unwrap();
        assert!(def.build_metadata(Uuid::new_v4(), "s3://x").is_err());
    }
}
