//! Moving a table's metadata into its new storage: where each source file goes (`PathMap`), and the rewriting of
//! the files that name other files — the metadata document (JSON), manifest lists and manifests (Avro). The Avro
//! files are rewritten as generic records with the writer's own schema and key-value metadata, so every field
//! Iceberg wrote (sequence numbers, snapshot ids, statuses, partition values, metrics) is kept bit for bit; only
//! the path fields and the manifest lengths change.

use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Reader, Writer};
use bytes::Bytes;
use tablebay_catalog::PATH_PROPERTIES;

use crate::MigrationError;

/// Maps source locations to locations in the destination storage: a file under the source table's location
/// keeps its relative path; any other goes under `external/`, named by its full source path.
#[derive(Clone, Debug)]
pub struct PathMap {
    source_root: String,
    destination_root: String,
}

impl PathMap {
    /// `source_root` is the source metadata's `location`; `destination_root` is `s3://<id>--table-s3`.
    pub fn new(source_root: &str, destination_root: &str) -> Self {
        Self {
            source_root: source_root.trim_end_matches('/').to_string(),
            destination_root: destination_root.trim_end_matches('/').to_string(),
        }
    }

    /// The destination root.
    pub fn destination_root(&self) -> &str {
        &self.destination_root
    }

    /// Where the source file `path` goes.
    pub fn map(&self, path: &str) -> String {
        let normalized = normalize(path);
        let root = normalize(&self.source_root);
        match normalized.strip_prefix(&root) {
            Some(rest) if rest.starts_with('/') => format!("{}{rest}", self.destination_root),
            _ => {
                let flat: String = normalized
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || "-_./".contains(c) {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                format!(
                    "{}/external/{}",
                    self.destination_root,
                    flat.trim_start_matches('/')
                )
            }
        }
    }
}

/// One spelling per location: `s3a://`/`s3n://` read as `s3://`, `file:///x` as `file:/x`.
fn normalize(path: &str) -> String {
    if let Some(rest) = path
        .strip_prefix("s3a://")
        .or_else(|| path.strip_prefix("s3n://"))
    {
        return format!("s3://{rest}");
    }
    if let Some(rest) = path.strip_prefix("file://") {
        return format!("file:{rest}");
    }
    path.to_string()
}

/// The files a metadata document names directly: each snapshot's manifest list, and statistics files.
pub fn metadata_files(metadata: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for snapshot in array(metadata, "snapshots") {
        if let Some(list) = snapshot.get("manifest-list").and_then(|v| v.as_str()) {
            out.push(list.to_string());
        }
    }
    for key in ["statistics", "partition-statistics"] {
        for stats in array(metadata, key) {
            if let Some(path) = stats.get("statistics-path").and_then(|v| v.as_str()) {
                out.push(path.to_string());
            }
        }
    }
    out
}

fn array<'a>(
    value: &'a serde_json::Value,
    key: &str,
) -> impl Iterator<Item = &'a serde_json::Value> {
    value
        .get(key)
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
}

/// The source metadata document made the destination's: its location is the new storage, every file it names
/// is mapped, the metadata log (earlier metadata files, not migrated) is emptied, and properties that point
/// writers elsewhere are dropped.
pub fn rewrite_metadata(
    metadata: &serde_json::Value,
    paths: &PathMap,
) -> Result<serde_json::Value, MigrationError> {
    let mut out = metadata.clone();
    let object = out
        .as_object_mut()
        .ok_or_else(|| MigrationError::Source("the source metadata is not a JSON object".into()))?;
    object.insert(
        "location".into(),
        serde_json::Value::String(paths.destination_root().to_string()),
    );
    object.insert("metadata-log".into(), serde_json::Value::Array(Vec::new()));
    if let Some(snapshots) = object.get_mut("snapshots").and_then(|v| v.as_array_mut()) {
        for snapshot in snapshots {
            map_string(snapshot, "manifest-list", paths);
        }
    }
    for key in ["statistics", "partition-statistics"] {
        if let Some(files) = object.get_mut(key).and_then(|v| v.as_array_mut()) {
            for stats in files {
                map_string(stats, "statistics-path", paths);
            }
        }
    }
    if let Some(properties) = object.get_mut("properties").and_then(|v| v.as_object_mut()) {
        for key in PATH_PROPERTIES {
            properties.remove(*key);
        }
    }
    Ok(out)
}

fn map_string(value: &mut serde_json::Value, key: &str, paths: &PathMap) {
    if let Some(slot) = value.get_mut(key)
        && let Some(path) = slot.as_str()
    {
        *slot = serde_json::Value::String(paths.map(path));
    }
}

/// What a manifest lists: its entries' files, and what kind each is.
#[derive(Clone, Debug, Default)]
pub struct ManifestFiles {
    /// Every data or delete file path of a live (not deleted) entry.
    pub files: Vec<String>,
    /// How many of those are position delete files or deletion vectors (which name data files inside them).
    pub position_deletes: usize,
    /// The distinct partition values of the live entries, rendered.
    pub partitions: Vec<String>,
}

/// Reads a manifest list: the manifest paths it names.
pub fn manifest_list_entries(bytes: &[u8]) -> Result<Vec<String>, MigrationError> {
    let reader = Reader::new(bytes).map_err(avro_error)?;
    let mut out = Vec::new();
    for value in reader {
        let value = value.map_err(avro_error)?;
        if let Some(Value::String(path)) = field(&value, "manifest_path") {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Reads a manifest: its live entries' files.
pub fn manifest_entries(bytes: &[u8]) -> Result<ManifestFiles, MigrationError> {
    let reader = Reader::new(bytes).map_err(avro_error)?;
    let mut out = ManifestFiles::default();
    let mut partitions = std::collections::BTreeSet::new();
    for value in reader {
        let value = value.map_err(avro_error)?;
        // Status 2 is DELETED: the file is no longer part of the snapshot that wrote this manifest.
        if matches!(field(&value, "status"), Some(Value::Int(2))) {
            continue;
        }
        let Some(data_file) = field(&value, "data_file") else {
            continue;
        };
        if let Some(Value::String(path)) = field(data_file, "file_path") {
            out.files.push(path.clone());
        }
        // content: 0 data, 1 position deletes, 2 equality deletes.
        if matches!(field(data_file, "content"), Some(Value::Int(1))) {
            out.position_deletes += 1;
        }
        if let Some(partition) = field(data_file, "partition") {
            partitions.insert(format!("{partition:?}"));
        }
    }
    out.partitions = partitions.into_iter().collect();
    Ok(out)
}

/// A manifest list with every `manifest_path` mapped and its `manifest_length` set to the rewritten manifest's
/// size (`lengths` holds the destination paths' sizes).
pub fn rewrite_manifest_list(
    bytes: &[u8],
    paths: &PathMap,
    lengths: &std::collections::HashMap<String, u64>,
) -> Result<Bytes, MigrationError> {
    rewrite_avro(bytes, |record| {
        let Value::Record(fields) = record else {
            return Ok(());
        };
        let mut new_path = None;
        for (name, value) in fields.iter_mut() {
            if name == "manifest_path"
                && let Value::String(path) = value
            {
                *path = paths.map(path);
                new_path = Some(path.clone());
            }
        }
        let path = new_path.ok_or_else(|| {
            MigrationError::Source("a manifest list entry has no manifest_path".into())
        })?;
        let length = lengths.get(&path).ok_or_else(|| {
            MigrationError::Internal(format!("the rewritten manifest {path} has no size"))
        })?;
        for (name, value) in fields.iter_mut() {
            if name == "manifest_length" {
                *value = Value::Long(i64::try_from(*length).unwrap_or(i64::MAX));
            }
        }
        Ok(())
    })
}

/// A manifest with its entries' `file_path` (and `referenced_data_file`) mapped — or kept, when the data stays
/// where it is (`paths` is `None`).
pub fn rewrite_manifest(bytes: &[u8], paths: Option<&PathMap>) -> Result<Bytes, MigrationError> {
    let Some(paths) = paths else {
        return Ok(Bytes::copy_from_slice(bytes));
    };
    rewrite_avro(bytes, |record| {
        let Value::Record(fields) = record else {
            return Ok(());
        };
        for (name, value) in fields.iter_mut() {
            if name != "data_file" {
                continue;
            }
            let Value::Record(data_file) = value else {
                continue;
            };
            for (name, value) in data_file.iter_mut() {
                match (name.as_str(), value) {
                    ("file_path", Value::String(path)) => *path = paths.map(path),
                    ("referenced_data_file", Value::Union(_, inner)) => {
                        if let Value::String(path) = inner.as_mut() {
                            *path = paths.map(path);
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    })
}

/// Rewrites each record of an Avro object container file with `edit`, keeping its schema and user metadata.
fn rewrite_avro(
    bytes: &[u8],
    mut edit: impl FnMut(&mut Value) -> Result<(), MigrationError>,
) -> Result<Bytes, MigrationError> {
    let reader = Reader::new(bytes).map_err(avro_error)?;
    let schema = reader.writer_schema().clone();
    let metadata = reader.user_metadata().clone();
    let mut writer = Writer::with_codec(
        &schema,
        Vec::new(),
        Codec::Deflate(DeflateSettings::default()),
    );
    for (key, value) in metadata {
        writer.add_user_metadata(key, value).map_err(avro_error)?;
    }
    for value in reader {
        let mut value = value.map_err(avro_error)?;
        edit(&mut value)?;
        writer.append(value).map_err(avro_error)?;
    }
    Ok(Bytes::from(writer.into_inner().map_err(avro_error)?))
}

fn field<'a>(record: &'a Value, name: &str) -> Option<&'a Value> {
    let Value::Record(fields) = record else {
        return None;
    };
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| match v {
            Value::Union(_, inner) => inner.as_ref(),
            other => other,
        })
}

fn avro_error(e: apache_avro::Error) -> MigrationError {
    MigrationError::Source(format!("an Avro file of the source does not parse: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_paths_into_the_destination() {
        let map = PathMap::new("s3://wh/ns/t", "s3://id--table-s3");
        assert_eq!(
            map.map("s3://wh/ns/t/data/a.parquet"),
            "s3://id--table-s3/data/a.parquet"
        );
        assert_eq!(
            map.map("s3a://wh/ns/t/data/a.parquet"),
            "s3://id--table-s3/data/a.parquet"
        );
        assert_eq!(
            map.map("s3://other/x y.parquet"),
            "s3://id--table-s3/external/s3_//other/x_y.parquet"
        );
        // A sibling whose name starts like the root is not under it.
        assert!(map.map("s3://wh/ns/t2/a").contains("/external/"));
        let local = PathMap::new("file:/tmp/wh/ns/t", "s3://id--table-s3");
        assert_eq!(
            local.map("file:///tmp/wh/ns/t/m.avro"),
            "s3://id--table-s3/m.avro"
        );
    }

    /// A manifest list as Iceberg writes one: field ids as field attributes, key-value file metadata.
    fn manifest_list(paths: &[&str]) -> Vec<u8> {
        let schema = apache_avro::Schema::parse_str(
            r#"{"type": "record", "name": "manifest_file", "fields": [
                {"name": "manifest_path", "type": "string", "field-id": 500},
                {"name": "manifest_length", "type": "long", "field-id": 501},
                {"name": "added_snapshot_id", "type": ["null", "long"], "field-id": 503}]}"#,
        )
        .unwrap();
        let mut writer = Writer::new(&schema, Vec::new());
        writer
            .add_user_metadata("format-version".into(), b"2")
            .unwrap();
        for path in paths {
            writer
                .append(Value::Record(vec![
                    ("manifest_path".into(), Value::String((*path).into())),
                    ("manifest_length".into(), Value::Long(1)),
                    (
                        "added_snapshot_id".into(),
                        Value::Union(1, Box::new(Value::Long(7))),
                    ),
                ]))
                .unwrap();
        }
        writer.into_inner().unwrap()
    }

    #[test]
    fn rewrites_manifest_lists_keeping_schema_metadata_and_other_fields() {
        let paths = PathMap::new("s3://wh/t", "s3://d--table-s3");
        let source = manifest_list(&["s3://wh/t/metadata/m1.avro", "s3://wh/t/metadata/m2.avro"]);
        let lengths = std::collections::HashMap::from([
            ("s3://d--table-s3/metadata/m1.avro".to_string(), 111),
            ("s3://d--table-s3/metadata/m2.avro".to_string(), 222),
        ]);
        let rewritten = rewrite_manifest_list(&source, &paths, &lengths).unwrap();
        assert_eq!(
            manifest_list_entries(&rewritten).unwrap(),
            vec![
                "s3://d--table-s3/metadata/m1.avro",
                "s3://d--table-s3/metadata/m2.avro"
            ]
        );
        let reader = Reader::new(&rewritten[..]).unwrap();
        assert_eq!(
            reader
                .user_metadata()
                .get("format-version")
                .map(Vec::as_slice),
            Some(&b"2"[..])
        );
        let schema = serde_json::to_value(reader.writer_schema()).unwrap();
        assert_eq!(schema["fields"][0]["field-id"], 500);
        let records: Vec<Value> = reader.map(Result::unwrap).collect();
        assert_eq!(
            field(&records[1], "manifest_length"),
            Some(&Value::Long(222))
        );
        assert_eq!(
            field(&records[1], "added_snapshot_id"),
            Some(&Value::Long(7))
        );
        // A length the rewrite did not record is an error, never a stale length.
        assert!(rewrite_manifest_list(&source, &paths, &Default::default()).is_err());
    }

    #[test]
    fn rewrites_the_metadata_document() {
        let metadata = serde_json::json!({
            "location": "s3://wh/ns/t",
            "snapshots": [{"snapshot-id": 1, "manifest-list": "s3://wh/ns/t/metadata/snap-1.avro"}],
            "metadata-log": [{"metadata-file": "s3://wh/ns/t/metadata/0.json", "timestamp-ms": 1}],
            "properties": {"write.data.path": "s3://elsewhere", "keep": "1"}
        });
        let out =
            rewrite_metadata(&metadata, &PathMap::new("s3://wh/ns/t", "s3://d--table-s3")).unwrap();
        assert_eq!(out["location"], "s3://d--table-s3");
        assert_eq!(
            out["snapshots"][0]["manifest-list"],
            "s3://d--table-s3/metadata/snap-1.avro"
        );
        assert_eq!(out["metadata-log"], serde_json::json!([]));
        assert_eq!(out["properties"], serde_json::json!({"keep": "1"}));
        assert_eq!(
            metadata_files(&metadata),
            vec!["s3://wh/ns/t/metadata/snap-1.avro"]
        );
    }
}
