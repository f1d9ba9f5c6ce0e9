//! Findings (e) and (f): maintenance of a table whose metadata names another table's files, and of a deleted
//! table.

use super::*;

/// Appends rows `ids` to the victim's table as one data file, through the REST catalog (root credentials) and
/// the table's own storage.
async fn append_rows(w: &World, t: &Tbl, ids: &[i64]) {
    let rest = w.server.rest_catalog(&t.bucket_arn).await;
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
