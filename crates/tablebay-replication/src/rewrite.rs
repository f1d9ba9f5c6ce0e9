//! Moving a table's files to the replica's own storage: every location under the source's warehouse location
//! (`s3://<source-id>--table-s3`) becomes the same key under the replica's. The metadata JSON is rewritten as a
//! JSON tree (every field the source wrote survives, known or not); manifest lists and manifests as Avro values
//! (schema, codec and Iceberg's key-value metadata kept), so nothing depends on the Iceberg format version.

use std::io::Cursor;

use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Reader, Writer};
use bytes::Bytes;

use crate::ReplicationError;

/// The source and replica warehouse locations (`s3://<id>--table-s3`, no trailing slash).
#[derive(Clone, Debug)]
pub struct Relocation {
    /// The source table's location.
    pub from: String,
    /// The replica's location.
    pub to: String,
}

impl Relocation {
    /// A location under the source, moved under the replica; anything else unchanged.
    pub fn location(&self, location: &str) -> String {
        match location.strip_prefix(&self.from) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{}{rest}", self.to),
            _ => location.to_string(),
        }
    }

    /// The key of a source location inside its table bucket (`metadata/…`), if it lies in the source.
    pub fn source_key<'a>(&self, location: &'a str) -> Option<&'a str> {
        location
            .strip_prefix(&self.from)?
            .strip_prefix('/')
            .filter(|k| !k.is_empty())
    }

    /// Every string in a JSON tree, relocated.
    pub fn json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => *s = self.location(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.json(v)),
            _ => {}
        }
    }

    fn avro(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.location(s),
            Value::Union(_, inner) => self.avro(inner),
            Value::Array(items) => items.iter_mut().for_each(|v| self.avro(v)),
            Value::Map(map) => map.values_mut().for_each(|v| self.avro(v)),
            Value::Record(fields) => fields.iter_mut().for_each(|(_, v)| self.avro(v)),
            _ => {}
        }
    }
}

/// An Avro file (manifest list or manifest) read into values, with what is needed to write it again.
pub struct AvroFile {
    schema: apache_avro::Schema,
    metadata: Vec<(String, Vec<u8>)>,
    /// The records.
    pub records: Vec<Value>,
}

impl AvroFile {
    /// Reads a whole Avro object container file.
    pub fn read(bytes: &[u8], what: &str) -> Result<Self, ReplicationError> {
        let invalid = |e: apache_avro::Error| {
            ReplicationError::Failed(format!("{what} is not a readable Avro file: {e}"))
        };
        let reader = Reader::new(Cursor::new(bytes)).map_err(invalid)?;
        let schema = reader.writer_schema().clone();
        let metadata = reader
            .user_metadata()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let records = reader.collect::<Result<Vec<_>, _>>().map_err(invalid)?;
        Ok(Self {
            schema,
            metadata,
            records,
        })
    }

    /// The string field `name` of every record (or of its nested record `within`), with the record's `status`
    /// field when it has one.
    pub fn strings(&self, within: Option<&str>, name: &str) -> Vec<(String, Option<i32>)> {
        self.records
            .iter()
            .filter_map(|record| {
                let Value::Record(fields) = record else {
                    return None;
                };
                let status = field(fields, "status").and_then(|v| match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                });
                let holder = match within {
                    Some(nested) => match field(fields, nested)? {
                        Value::Record(inner) => inner,
                        _ => return None,
                    },
                    None => fields,
                };
                match unwrap_union(field(holder, name)?) {
                    Value::String(s) => Some((s.clone(), status)),
                    _ => None,
                }
            })
            .collect()
    }

    /// Whether a live entry of this manifest is a position delete file (content 1, deletion vectors included).
    pub fn has_position_deletes(&self, deleted_status: i32) -> bool {
        self.records.iter().any(|record| {
            let Value::Record(fields) = record else {
                return false;
            };
            let live =
                !matches!(field(fields, "status"), Some(Value::Int(s)) if *s == deleted_status);
            let content = match field(fields, "data_file") {
                Some(Value::Record(file)) => field(file, "content").map(unwrap_union),
                _ => None,
            };
            live && matches!(content, Some(Value::Int(1)))
        })
    }

    /// The file with every location relocated, written again (deflate, the codec Iceberg writers use).
    pub fn relocated(mut self, relocation: &Relocation) -> Result<Bytes, ReplicationError> {
        let failed = |e: apache_avro::Error| {
            ReplicationError::Failed(format!("writing a relocated Avro file: {e}"))
        };
        for record in &mut self.records {
            relocation.avro(record);
        }
        let mut writer = Writer::with_codec(
            &self.schema,
            Vec::new(),
            Codec::Deflate(DeflateSettings::default()),
        );
        for (key, value) in &self.metadata {
            if !key.starts_with("avro.") {
                writer
                    .add_user_metadata(key.clone(), value)
                    .map_err(failed)?;
            }
        }
        for record in self.records {
            writer.append(record).map_err(failed)?;
        }
        writer.into_inner().map(Bytes::from).map_err(failed)
    }
}

fn field<'a>(fields: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn unwrap_union(value: &Value) -> &Value {
    match value {
        Value::Union(_, inner) => unwrap_union(inner),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocates_only_the_source() {
        let r = Relocation {
            from: "s3://aaa--table-s3".into(),
            to: "s3://bbb--table-s3".into(),
        };
        assert_eq!(r.location("s3://aaa--table-s3"), "s3://bbb--table-s3");
        assert_eq!(
            r.location("s3://aaa--table-s3/data/x.parquet"),
            "s3://bbb--table-s3/data/x.parquet"
        );
        assert_eq!(r.location("s3://aaa--table-s3x/y"), "s3://aaa--table-s3x/y");
        assert_eq!(r.location("other"), "other");
        assert_eq!(
            r.source_key("s3://aaa--table-s3/metadata/m.json"),
            Some("metadata/m.json")
        );
        assert_eq!(r.source_key("s3://aaa--table-s3"), None);
        let mut json = serde_json::json!({"location": "s3://aaa--table-s3", "a": [{"p": "s3://aaa--table-s3/m"}], "n": 1});
        r.json(&mut json);
        assert_eq!(
            json,
            serde_json::json!({"location": "s3://bbb--table-s3", "a": [{"p": "s3://bbb--table-s3/m"}], "n": 1})
        );
    }

    #[test]
    fn avro_round_trip_keeps_schema_and_metadata() {
        let schema = apache_avro::Schema::parse_str(
            r#"{"type":"record","name":"manifest_entry","fields":[
                {"name":"status","type":"int"},
                {"name":"data_file","type":{"type":"record","name":"r2","fields":[
                    {"name":"file_path","type":"string"},
                    {"name":"lower","type":["null","string"],"default":null}]}}]}"#,
        )
        .unwrap();
        let mut writer = Writer::new(&schema, Vec::new());
        writer.add_user_metadata("schema".into(), b"{}").unwrap();
        for (status, path) in [
            (1, "s3://aaa--table-s3/data/1.parquet"),
            (2, "s3://aaa--table-s3/data/2.parquet"),
        ] {
            writer
                .append(Value::Record(vec![
                    ("status".into(), Value::Int(status)),
                    (
                        "data_file".into(),
                        Value::Record(vec![
                            ("file_path".into(), Value::String(path.into())),
                            ("lower".into(), Value::Union(0, Box::new(Value::Null))),
                        ]),
                    ),
                ]))
                .unwrap();
        }
        let bytes = writer.into_inner().unwrap();
        let file = AvroFile::read(&bytes, "test").unwrap();
        assert_eq!(
            file.strings(Some("data_file"), "file_path"),
            vec![
                ("s3://aaa--table-s3/data/1.parquet".to_string(), Some(1)),
                ("s3://aaa--table-s3/data/2.parquet".to_string(), Some(2))
            ]
        );
        let r = Relocation {
            from: "s3://aaa--table-s3".into(),
            to: "s3://bbb--table-s3".into(),
        };
        let moved = AvroFile::read(&file.relocated(&r).unwrap(), "moved").unwrap();
        assert_eq!(moved.metadata, vec![("schema".to_string(), b"{}".to_vec())]);
        assert_eq!(
            moved.strings(Some("data_file"), "file_path")[0].0,
            "s3://bbb--table-s3/data/1.parquet"
        );
    }

    #[test]
    fn finds_live_position_delete_files() {
        let entry = |status: i32, content: i32| {
            Value::Record(vec![
                ("status".into(), Value::Int(status)),
                (
                    "data_file".into(),
                    Value::Record(vec![("content".into(), Value::Int(content))]),
                ),
            ])
        };
        let file = |records: Vec<Value>| AvroFile {
            schema: apache_avro::Schema::Null,
            metadata: Vec::new(),
            records,
        };
        // Data (0) and equality deletes (2) name no data file; a deleted entry (status 2) is gone.
        assert!(!file(vec![entry(1, 0), entry(0, 2), entry(2, 1)]).has_position_deletes(2));
        assert!(file(vec![entry(1, 0), entry(1, 1)]).has_position_deletes(2));
    }
}
