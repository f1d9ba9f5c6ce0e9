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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Int64Array, RecordBatch, StringArray};
use http::{Method, Method as M};
use iceberg::arrow::schema_to_arrow_schema;
use iceberg::io::MemoryStorageFactory;
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
use iceberg::{Catalog as _, CatalogBuilder, NamespaceIdent, TableIdent};
use iceberg_catalog_rest::RestCatalogBuilder;
use parquet::file::properties::WriterProperties;
use serde_json::{Value, json};
use tablebay_compaction::table_file_io;

use crate::identity::{Iceberg, S3, Tables};
use crate::server::{ACCESS_KEY, REGION, SECRET, TestServer, seg};
use crate::world::{Surface, Who, must, send};

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

// See: issue 14, finding 3 (UpdateTableMetadataLocation accepted any location).
#[tokio::test]
async fn a_table_cannot_be_pointed_at_another_tables_metadata() {
    let w = World::new(&[]).await;
    let victim = w.table(&w.victim, "victim", "secret").await;
    let own = w.table(&w.mallory, "mallory", "own").await;
    w.allow_eve(&[
        "s3tables:GetTable",
        "s3tables:GetTableMetadataLocation",
        "s3tables:UpdateTableMetadataLocation",
    ])
    .await;
    let victim_before = w.snapshot(&w.victim, &victim).await;
    let own_before = w.snapshot(&w.mallory, &own).await;
    let token = own_before.0.0.clone();
    let path = format!("/tables/{}/ns/own/metadata-location", own.b());
    for location in [
        victim.metadata_location.clone(),
        format!("{}/metadata/00009-copy.metadata.json", victim.warehouse),
        format!("s3a://{}/metadata/x.metadata.json", victim.storage),
        format!(
            "{}/../{}/metadata/x.metadata.json",
            own.warehouse, victim.storage
        ),
        "s3://somewhere/metadata/x.metadata.json".to_string(),
    ] {
        let (status, body) = call(
            &w.server,
            &w.eve,
            M::PUT,
            Tables,
            &path,
            json!({"versionToken": token, "metadataLocation": location}),
        )
        .await;
        assert_eq!(status, 400, "{location}: {body}");
        assert!(
            message(&body).contains("outside the table's storage"),
            "{location}: {body}"
        );
    }
    assert_eq!(w.snapshot(&w.mallory, &own).await, own_before);
    assert_eq!(w.snapshot(&w.victim, &victim).await, victim_before);
    // The attacker's table still loads its own metadata.
    let loaded = must(
        &w.server,
        &w.mallory,
        M::GET,
        Iceberg,
        &format!("/iceberg/v1/{}/namespaces/ns/tables/own", own.b()),
        Value::Null,
    )
    .await;
    assert_eq!(loaded["metadata-location"], own.metadata_location.as_str());
    // The refusal is about the location, not the permission: inside its own storage, eve may move it.
    let inside = format!("{}/metadata/00001-next.metadata.json", own.warehouse);
    let (status, body) = call(
        &w.server,
        &w.eve,
        M::PUT,
        Tables,
        &path,
        json!({"versionToken": token, "metadataLocation": inside}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(w.pointer(&w.mallory, &own).await.1, inside);
}

// See: issue 14, findings 3 and 13 (add-snapshot and set-location were accepted whatever they named).
#[tokio::test]
async fn commits_cannot_reference_or_move_into_another_tables_storage() {
    let w = World::new(&[]).await;
    let victim = w.table(&w.victim, "victim", "secret").await;
    let own = w.table(&w.mallory, "mallory", "own").await;
    let victim_before = w.snapshot(&w.victim, &victim).await;
    let own_before = w.snapshot(&w.mallory, &own).await;
    let snapshot = |manifest_list: String| {
        json!({"action": "add-snapshot", "snapshot": {"snapshot-id": 7, "sequence-number": 1,
            "timestamp-ms": chrono::Utc::now().timestamp_millis() + 1000, "manifest-list": manifest_list,
            "summary": {"operation": "append"}, "schema-id": 0}})
    };
    let main = json!({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7});
    for (what, updates) in [
        (
            "(b) a manifest list in the victim's storage",
            json!([
                snapshot(format!("{}/metadata/snap-1-1-x.avro", victim.warehouse)),
                main
            ]),
        ),
        (
            "(b) a statistics file in the victim's storage",
            json!([snapshot(format!("{}/metadata/snap-7.avro", own.warehouse)),
                {"action": "set-statistics", "snapshot-id": 7, "statistics": {"snapshot-id": 7,
                 "statistics-path": format!("{}/metadata/stats.puffin", victim.warehouse),
                 "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4, "blob-metadata": []}}]),
        ),
        (
            "(b) a data path in the victim's storage",
            json!([{"action": "set-properties", "updates": {"write.data.path": format!("{}/data", victim.warehouse)}}]),
        ),
        (
            "(c) set-location to the victim's storage",
            json!([{"action": "set-location", "location": victim.warehouse}]),
        ),
        (
            "(c) set-location anywhere else",
            json!([{"action": "set-location", "location": "s3://elsewhere/warehouse/own"}]),
        ),
    ] {
        let (status, body) = w.commit(&w.mallory, &own, updates).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert!(message(&body).contains("own storage"), "{what}: {body}");
        assert_eq!(w.snapshot(&w.mallory, &own).await, own_before, "{what}");
    }
    assert_eq!(w.snapshot(&w.victim, &victim).await, victim_before);
    // Its own location is no change at all (Java sends it back in replace transactions).
    let (status, body) = w
        .commit(
            &w.mallory,
            &own,
            json!([{"action": "set-location", "location": format!("{}/", own.warehouse)}]),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metadata-location"], own.metadata_location.as_str());
    assert_eq!(body["metadata"]["location"], own.warehouse.as_str());
}

// See: issue 14, findings 3 and 4 (register adopted a live table's files, and another account's dropped storage).
#[tokio::test]
async fn register_adopts_only_unowned_storage_of_the_same_account() {
    let w = World::new(&[]).await;
    let victim = w.table(&w.victim, "victim", "secret").await;
    let dropped = w.table(&w.victim, "victim", "dropped").await;
    let own = w.table(&w.mallory, "mallory", "own").await;
    let register = |who: &Who, t: &Tbl, name: &str, location: &str| {
        let (who, path) = (
            who.clone(),
            format!("/iceberg/v1/{}/namespaces/ns/register", t.b()),
        );
        let body = json!({"name": name, "metadata-location": location});
        let server = &w.server;
        async move { call(server, &who, M::POST, Iceberg, &path, body).await }
    };
    // A live table's files: 409 in its own account (the storage has its owner already), 403 from another.
    let (status, body) = register(&w.victim, &victim, "copy", &victim.metadata_location).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["type"], "AlreadyExistsException", "{body}");
    let (status, body) = register(&w.mallory, &own, "stolen", &victim.metadata_location).await;
    assert_eq!(status, 403, "{body}");

    // Another account's table dropped without purge: its storage is still that account's.
    must(
        &w.server,
        &w.victim,
        M::DELETE,
        Iceberg,
        &format!("/iceberg/v1/{}/namespaces/ns/tables/dropped", dropped.b()),
        Value::Null,
    )
    .await;
    let dropped_objects = w.objects(&w.victim, &dropped.storage).await;
    let own_before = w.snapshot(&w.mallory, &own).await;
    let (status, body) = register(&w.mallory, &own, "taken", &dropped.metadata_location).await;
    assert_eq!(status, 403, "{body}");
    // Nor through a staged create's commit naming that storage.
    let (status, body) = call(
        &w.server,
        &w.mallory,
        M::POST,
        Iceberg,
        &format!("/iceberg/v1/{}/namespaces/ns/tables/taken", own.b()),
        json!({"requirements": [{"type": "assert-create"}], "updates": [
            {"action": "add-schema", "schema": schema()},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "set-location", "location": dropped.warehouse}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = send(
        &w.server,
        &w.mallory,
        M::HEAD,
        Iceberg,
        &format!("/iceberg/v1/{}/namespaces/ns/tables/taken", own.b()),
        b"",
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(w.snapshot(&w.mallory, &own).await, own_before);
    assert_eq!(
        w.objects(&w.victim, &dropped.storage).await,
        dropped_objects
    );

    // The owning account registers it again: the table gets its storage back.
    let (status, body) = register(&w.victim, &victim, "again", &dropped.metadata_location).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["metadata-location"],
        dropped.metadata_location.as_str()
    );
    assert_eq!(body["metadata"]["location"], dropped.warehouse.as_str());
    let again = must(
        &w.server,
        &w.victim,
        M::GET,
        Tables,
        &format!(
            "/get-table?tableBucketARN={}&namespace=ns&name=again",
            victim.b()
        ),
        Value::Null,
    )
    .await;
    assert_eq!(again["tableARN"], dropped.arn.as_str());
    assert_eq!(
        w.pointer(&w.victim, &victim).await.1,
        victim.metadata_location
    );
}

/// Appends rows `ids` to the victim's table as one data file, through the REST catalog (root credentials) and
/// the table's own storage.
async fn append_rows(w: &World, t: &Tbl, ids: &[i64]) {
    let uri = format!("{}/iceberg", w.server.tables_url);
    let rest = RestCatalogBuilder::default()
        .with_storage_factory(Arc::new(MemoryStorageFactory))
        .load(
            "tablebay",
            HashMap::from([
                ("uri".to_string(), uri.clone()),
                ("warehouse".to_string(), t.bucket_arn.clone()),
                ("credential".to_string(), format!("{ACCESS_KEY}:{SECRET}")),
                (
                    "oauth2-server-uri".to_string(),
                    format!("{uri}/v1/oauth/tokens"),
                ),
            ]),
        )
        .await
        .unwrap();
    let catalog = w.server.open_catalog().await;
    let table_id = t.storage.trim_end_matches("--table-s3").parse().unwrap();
    let io = table_file_io(&catalog.table_files(table_id));
    let ident = TableIdent::new(NamespaceIdent::new("ns".into()), t.name.clone());
    let loaded = rest.load_table(&ident).await.unwrap();
    let table = Table::builder()
        .metadata(loaded.metadata_ref())
        .metadata_location(loaded.metadata_location().unwrap().to_string())
        .identifier(ident)
        .file_io(io.clone())
        .runtime(iceberg::Runtime::try_current().unwrap())
        .build()
        .unwrap();
    let schema = table.metadata().current_schema().clone();
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        ParquetWriterBuilder::new(WriterProperties::default(), schema.clone()),
        io,
        DefaultLocationGenerator::new(table.metadata()).unwrap(),
        DefaultFileNameGenerator::new(
            format!("data-{}", uuid::Uuid::now_v7()),
            None,
            DataFileFormat::Parquet,
        ),
    );
    let mut writer = DataFileWriterBuilder::new(rolling)
        .build(None)
        .await
        .unwrap();
    let names: Vec<String> = ids.iter().map(|id| format!("secret-{id}")).collect();
    let batch = RecordBatch::try_new(
        Arc::new(schema_to_arrow_schema(&schema).unwrap()),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names)),
        ],
    )
    .unwrap();
    writer.write(batch).await.unwrap();
    let files = writer.close().await.unwrap();
    let tx = Transaction::new(&table);
    let tx = tx.fast_append().add_data_files(files).apply(tx).unwrap();
    tx.commit(&rest).await.unwrap();
}

/// Puts a copy of the victim's current metadata, with `location`, into the attacker's storage and points the
/// attacker's table at it (accepted: the file lies in its own storage); returns the copy's location.
async fn plant_copy(w: &World, victim: &Tbl, own: &Tbl, location: &str, n: u32) -> String {
    let loaded = must(
        &w.server,
        &w.victim,
        M::GET,
        Iceberg,
        &format!(
            "/iceberg/v1/{}/namespaces/ns/tables/{}",
            victim.b(),
            victim.name
        ),
        Value::Null,
    )
    .await;
    let mut copy = loaded["metadata"].clone();
    assert!(
        copy["snapshots"].as_array().is_some_and(|s| s.len() == 2),
        "{copy}"
    );
    copy["location"] = json!(location);
    copy["metadata-log"] = json!([]);
    let key = format!("metadata/{n:05}-copy.metadata.json");
    let (status, body) = send(
        &w.server,
        &w.mallory,
        M::PUT,
        S3,
        &format!("/{}/{key}", own.storage),
        &serde_json::to_vec(&copy).unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (token, _) = w.pointer(&w.mallory, own).await;
    let planted = format!("{}/{key}", own.warehouse);
    must(
        &w.server,
        &w.mallory,
        M::PUT,
        Tables,
        &format!("/tables/{}/ns/{}/metadata-location", own.b(), own.name),
        json!({"versionToken": token, "metadataLocation": planted}),
    )
    .await;
    planted
}

// See: issue 14, findings 3 and 13 (compaction read another table's rows into the caller's table, or wrote into
// another table's storage; removal jobs read its manifests).
#[tokio::test]
async fn maintenance_never_touches_files_outside_the_tables_storage() {
    let w = World::new(&["--maintenance-workers", "0"]).await;
    let victim = w.table(&w.victim, "victim", "secret").await;
    append_rows(&w, &victim, &[1, 2, 3]).await;
    append_rows(&w, &victim, &[4, 5, 6]).await;
    let own = w.table(&w.mallory, "mallory", "own").await;
    let victim_before = w.snapshot(&w.victim, &victim).await;
    for (n, location) in [(1, own.warehouse.clone()), (2, victim.warehouse.clone())] {
        // The copy keeps the victim's snapshots: its manifest lists, manifests and data files are the
        // victim's. With its own location, a compaction would have rewritten the victim's rows into the
        // attacker's storage; with the victim's, it would have written into the victim's storage.
        plant_copy(&w, &victim, &own, &location, n).await;
        let own_before = w.snapshot(&w.mallory, &own).await;
        for job in [
            "icebergCompaction",
            "icebergSnapshotManagement",
            "icebergUnreferencedFileRemoval",
        ] {
            let run = w.run(&w.mallory, &own, job).await;
            assert_eq!(run["outcome"], "Failed", "copy {n}, {job}: {run}");
            let why = run["message"].as_str().unwrap_or_default();
            assert!(
                why.contains("outside the table's storage"),
                "copy {n}, {job}: {run}"
            );
            assert_eq!(
                (run["filesIn"].as_u64(), run["filesOut"].as_u64()),
                (Some(0), Some(0)),
                "copy {n}, {job}: {run}"
            );
            assert_eq!(
                w.snapshot(&w.mallory, &own).await,
                own_before,
                "copy {n}, {job}"
            );
            assert_eq!(
                w.snapshot(&w.victim, &victim).await,
                victim_before,
                "copy {n}, {job}"
            );
        }
    }
    // The victim's own maintenance still works on its own files.
    let run = w.run(&w.victim, &victim, "icebergCompaction").await;
    assert_eq!(run["outcome"], "Successful", "{run}");
    assert_eq!(run["filesIn"].as_u64(), Some(2), "{run}");
}

// See: issue 14, finding 13 (a queued job of a deleted table ran and was recorded under `table/<id>`).
#[tokio::test]
async fn a_queued_job_of_a_deleted_table_runs_nothing_and_is_recorded_nowhere() {
    let w = World::new(&[
        "--maintenance-workers",
        "1",
        "--maintenance-poll-seconds",
        "0.2",
        "--maintenance-sweep-seconds",
        "0",
    ])
    .await;
    let gone = w.table(&w.mallory, "mallory", "gone").await;
    let marker = w.table(&w.mallory, "mallory", "marker").await;
    must(
        &w.server,
        &w.mallory,
        M::DELETE,
        Tables,
        &format!("/tables/{}/ns/gone", gone.b()),
        Value::Null,
    )
    .await;
    // Queued as a commit or the sweep would have queued it, then the marker's job behind it: once the marker's
    // run is recorded, the worker has taken the deleted table's job too (jobs are claimed oldest first).
    let meta = tablebay_store::MetaStore::connect(&format!(
        "sqlite://{}?mode=rwc",
        w.server.data_dir().join("meta.db").display()
    ))
    .await
    .unwrap();
    let queued_at = chrono::Utc::now();
    for (t, at) in [
        (&gone, queued_at),
        (&marker, queued_at + chrono::Duration::milliseconds(1)),
    ] {
        let id = t.storage.trim_end_matches("--table-s3").parse().unwrap();
        let queued = meta
            .enqueue_job(id, "icebergSnapshotManagement", "commit", at)
            .await
            .unwrap();
        assert!(queued);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let runs = loop {
        let runs = must(
            &w.server,
            &w.mallory,
            M::GET,
            Tables,
            "/admin/maintenance/runs",
            Value::Null,
        )
        .await["runs"]
            .as_array()
            .unwrap()
            .clone();
        if runs.iter().any(|r| r["tableArn"] == marker.arn.as_str()) {
            break runs;
        }
        assert!(
            Instant::now() < deadline,
            "the marker's job never ran: {runs:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let gone_id = gone.storage.trim_end_matches("--table-s3");
    assert!(
        runs.iter()
            .all(|r| !r["tableArn"].as_str().unwrap_or_default().contains(gone_id)),
        "{runs:?}"
    );
    // Asked for explicitly, the deleted table is not found, and nothing is recorded either.
    let (status, body) = call(
        &w.server,
        &w.mallory,
        M::POST,
        Tables,
        "/admin/maintenance/run",
        json!({"tableArn": gone.arn, "type": "icebergSnapshotManagement"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
}
