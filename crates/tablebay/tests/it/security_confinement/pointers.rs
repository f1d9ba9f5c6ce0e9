//! Findings (a) to (d): a table's metadata pointer, commits and register never reach another table's storage.

use super::*;

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
