//! Issue 14, findings 3, 4 and 13, against the real binary with two accounts: a table's files stay in its own
//! storage, so the server never reads, writes or deletes another table's files on a caller's behalf.
//!
//! The victim is the instance's root account, with tables holding rows; the attacker is a second account
//! (made through `/admin/accounts`), its root and a narrow user. Each test reproduces one attack of the review
//! of `0ab0efa` and asserts the refusal **and** that the victim's table (pointer, objects) and the attacker's
//! own table are unchanged:
//!
//! - (a) `UpdateTableMetadataLocation` pointing the attacker's table at the victim's metadata file: 400;
//! - (b) an Iceberg commit whose `add-snapshot` manifest list (or statistics file, or `write.data.path`) lies
//!   in the victim's storage: 400;
//! - (c) `set-location` to the victim's storage: 400;
//! - (d) register: of a live table's metadata 409 (its storage has an owner already; a storage belongs to one
//!   table), of another account's (live, or dropped and unpurged) 403, of the account's own dropped table 200;
//! - (e) maintenance of a table whose metadata (a rewritten copy in its own storage, which the API still
//!   accepts, since the server does not read the file at that point) names the victim's files: every job fails
//!   with the reason, and nothing is read from, written to or deleted in either storage;
//! - (f) a queued job of a table deleted meanwhile runs nothing and is recorded nowhere.
//!
//! This file is the two-account world; `pointers.rs` holds (a) to (d), `maintenance.rs` (e) and (f).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Int64Array, RecordBatch, StringArray};
use http::{Method, Method as M};
use iceberg::arrow::schema_to_arrow_schema;
use iceberg::spec::DataFileFormat;
use iceberg::table::Table;
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use iceberg::{Catalog as _, NamespaceIdent, TableIdent};
use parquet::file::properties::WriterProperties;
use serde_json::{Value, json};
use tablebay_compaction::table_file_io;

use crate::identity::{Iceberg, S3, Tables};
use crate::server::{REGION, TestServer, seg};
use crate::world::{Surface, Who, must, send};

mod maintenance;
mod pointers;

/// The server, the victim (the instance's root account), the attacker account's root and its user `eve`.
struct World {
    server: TestServer,
    victim: Who,
    mallory: Who,
    eve: Who,
}

/// A table as its owner sees it.
#[derive(Clone, Debug)]
struct Tbl {
    bucket_arn: String,
    name: String,
    arn: String,
    /// `s3://<id>--table-s3`.
    warehouse: String,
    /// `<id>--table-s3`, the data plane's bucket.
    storage: String,
    metadata_location: String,
}

impl Tbl {
    fn b(&self) -> String {
        seg(&self.bucket_arn)
    }
}

fn schema() -> Value {
    json!({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true},
        {"id": 2, "name": "name", "type": "string", "required": false}]})
}

/// A JSON request; returns the status and the parsed answer (the text as a string when it is not JSON).
async fn call(
    server: &TestServer,
    who: &Who,
    method: Method,
    surface: Surface,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(&body).unwrap()
    };
    let (status, text) = send(server, who, method, surface, path, &bytes).await;
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

impl World {
    async fn new(extra: &[&str]) -> World {
        let mut args = vec!["--arn-flavor", "aws"];
        args.extend_from_slice(extra);
        let server = TestServer::start_with(&args);
        let victim = Who::instance();
        let mallory = Who::account(&server, &victim, "mallory").await;
        assert_ne!(mallory.account, victim.account);
        let eve = Who::user(&server, &mallory, "eve", None).await;
        World {
            server,
            victim,
            mallory,
            eve,
        }
    }

    /// Allows `eve` exactly `actions` on the attacker account's buckets and tables.
    async fn allow_eve(&self, actions: &[&str]) {
        let document = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Action": actions,
            "Resource": format!("arn:aws:s3tables:{REGION}:{}:bucket/*", self.mallory.account)}]});
        must(
            &self.server,
            &self.mallory,
            M::PUT,
            Tables,
            "/admin/users/eve/policies/p",
            Value::String(document.to_string()),
        )
        .await;
    }

    /// Creates bucket `bucket` (unless it exists) with namespace `ns`, and table `ns.name` through Iceberg.
    async fn table(&self, who: &Who, bucket: &str, name: &str) -> Tbl {
        let s = &self.server;
        let (status, created) =
            call(s, who, M::PUT, Tables, "/buckets", json!({"name": bucket})).await;
        let bucket_arn = if status == 200 {
            let arn = created["arn"].as_str().unwrap().to_string();
            must(
                s,
                who,
                M::PUT,
                Tables,
                &format!("/namespaces/{}", seg(&arn)),
                json!({"namespace": ["ns"]}),
            )
            .await;
            arn
        } else {
            format!("arn:aws:s3tables:{REGION}:{}:bucket/{bucket}", who.account)
        };
        let b = seg(&bucket_arn);
        must(
            s,
            who,
            M::POST,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables"),
            json!({"name": name, "schema": schema()}),
        )
        .await;
        let table = must(
            s,
            who,
            M::GET,
            Tables,
            &format!("/get-table?tableBucketARN={b}&namespace=ns&name={name}"),
            Value::Null,
        )
        .await;
        let warehouse = table["warehouseLocation"]
            .as_str()
            .unwrap()
            .trim_end_matches('/')
            .to_string();
        Tbl {
            bucket_arn,
            name: name.to_string(),
            arn: table["tableARN"].as_str().unwrap().to_string(),
            storage: warehouse.trim_start_matches("s3://").to_string(),
            warehouse,
            metadata_location: table["metadataLocation"].as_str().unwrap().to_string(),
        }
    }

    /// The table's version token and metadata location, as `who` reads them.
    async fn pointer(&self, who: &Who, t: &Tbl) -> (String, String) {
        let got = must(
            &self.server,
            who,
            M::GET,
            Tables,
            &format!("/tables/{}/ns/{}/metadata-location", t.b(), t.name),
            Value::Null,
        )
        .await;
        (
            got["versionToken"].as_str().unwrap().to_string(),
            got["metadataLocation"].as_str().unwrap().to_string(),
        )
    }

    /// Every object of a table's storage (keys, sizes, ETags, times), as its owner lists it.
    async fn objects(&self, owner: &Who, storage: &str) -> String {
        let (status, body) = send(
            &self.server,
            owner,
            M::GET,
            S3,
            &format!("/{storage}?list-type=2"),
            b"",
        )
        .await;
        assert_eq!(status, 200, "{body}");
        // The request id is the one part of the answer that may differ.
        match (body.find("<RequestId>"), body.find("</RequestId>")) {
            (Some(start), Some(end)) if start < end => {
                format!("{}{}", &body[..start], &body[end..])
            }
            _ => body,
        }
    }

    /// What must not change: the table's pointer and its storage's objects.
    async fn snapshot(&self, owner: &Who, t: &Tbl) -> ((String, String), String) {
        (
            self.pointer(owner, t).await,
            self.objects(owner, &t.storage).await,
        )
    }

    /// The Iceberg commit of `updates` on `t` as `who`.
    async fn commit(&self, who: &Who, t: &Tbl, updates: Value) -> (u16, Value) {
        call(
            &self.server,
            who,
            M::POST,
            Iceberg,
            &format!("/iceberg/v1/{}/namespaces/ns/tables/{}", t.b(), t.name),
            json!({"requirements": [], "updates": updates}),
        )
        .await
    }

    /// `POST /admin/maintenance/run` as `who`.
    async fn run(&self, who: &Who, t: &Tbl, job: &str) -> Value {
        let (status, run) = call(
            &self.server,
            who,
            M::POST,
            Tables,
            "/admin/maintenance/run",
            json!({"tableArn": t.arn, "type": job}),
        )
        .await;
        assert_eq!(status, 200, "{run}");
        run
    }
}

fn message(body: &Value) -> String {
    body.get("error")
        .and_then(|e| e.get("message"))
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}
