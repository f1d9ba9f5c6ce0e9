//! Iceberg REST tables through both prefix forms: create, load with ETag, commit seen by the control plane, drop.

use super::*;

#[tokio::test]
async fn tables_create_load_commit_drop_through_both_prefix_forms() {
    let (server, arn, p) = setup().await;
    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces"),
        json!({"namespace": ["sales"]}),
    )
    .await;
    let (status, _, created) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables"),
        json!({"name": "orders", "schema": schema(), "location": "s3://ignored/x",
                                           "properties": {"format-version": "2", "k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let location = created["metadata-location"].as_str().unwrap().to_string();
    let table_location = created["metadata"]["location"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        table_location.starts_with("s3://") && table_location.ends_with("--table-s3"),
        "{table_location}"
    );
    assert!(
        location.starts_with(&format!("{table_location}/metadata/00000-")),
        "{location}"
    );
    assert_eq!(created["metadata"]["properties"], json!({"k": "v"}));
    assert_eq!(created["config"]["s3.endpoint"], server.s3_url.as_str());
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/sales/tables"),
            json!({"name": "orders", "schema": schema()}),
        )
        .await,
        409,
        ALREADY_EXISTS,
        Some("Table already exists: sales.orders"),
    );
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/nope/tables"),
            json!({"name": "x", "schema": schema()}),
        )
        .await,
        404,
        NO_SUCH_NAMESPACE,
        None,
    );

    // Load through the handed-out prefix, the URL-encoded ARN (S3 Tables) and the ARN a proxy decoded.
    let (status, headers, loaded) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces/sales/tables/orders?snapshots=all"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(loaded["metadata-location"], location.as_str());
    let etag = headers.get("etag").unwrap().to_str().unwrap().to_string();
    for prefix in [seg(&arn), arn.clone()] {
        let (status, _, again) = call(
            &server,
            M::GET,
            &format!("/{prefix}/namespaces/sales/tables/orders"),
            Value::Null,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{prefix}");
        assert_eq!(again["metadata-location"], location.as_str());
    }
    // If-None-Match with the ETag: 304 until the table changes.
    let conditional = |etag: String| {
        let server = &server;
        let p = p.clone();
        async move {
            let url = format!(
                "{}/iceberg/v1/{p}/namespaces/sales/tables/orders?snapshots=all",
                server.tables_url
            );
            let mut builder = http::Request::builder()
                .method(M::GET)
                .uri(&url)
                .header("if-none-match", etag);
            builder = builder.header("accept", "application/json");
            let (mut parts, ()) = builder.body(()).unwrap().into_parts();
            crate::server::sign(&mut parts, b"", ACCESS_KEY, SECRET, "osstables");
            server.send_parts(parts, b"").await.status()
        }
    };
    assert_eq!(conditional(etag.clone()).await, StatusCode::NOT_MODIFIED);
    // A missing namespace on load is a missing table (trap 3).
    assert_error(
        &call(
            &server,
            M::GET,
            &format!("/{p}/namespaces/nope/tables/orders"),
            Value::Null,
        )
        .await,
        404,
        "NoSuchTableException",
        Some("Table does not exist: nope.orders"),
    );

    // Schema evolution as Java commits it; the control plane sees the new pointer and token.
    let token_before = server
        .call(
            M::GET,
            &format!("/tables/{}/sales/orders/metadata-location", seg(&arn)),
            Value::Null,
        )
        .await
        .json::<Value>()
        .await
        .unwrap()["versionToken"]
        .clone();
    let uuid = created["metadata"]["table-uuid"].clone();
    let commit = json!({
        "requirements": [{"type": "assert-table-uuid", "uuid": uuid},
                         {"type": "assert-current-schema-id", "current-schema-id": 0},
                         {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2}],
        "updates": [{"action": "add-schema", "last-column-id": 3, "schema": {"type": "struct", "schema-id": 1, "fields": [
                        {"id": 1, "name": "id", "type": "long", "required": true},
                        {"id": 2, "name": "ts", "type": "timestamp", "required": false},
                        {"id": 3, "name": "amount", "type": "int", "required": false}]}},
                    {"action": "set-current-schema", "schema-id": -1}]});
    let (status, _, committed) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables/orders"),
        commit.clone(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{committed}");
    let new_location = committed["metadata-location"].as_str().unwrap().to_string();
    assert!(new_location.contains("/metadata/00001-"), "{new_location}");
    assert_eq!(committed["metadata"]["current-schema-id"], 1);
    let cp = server
        .call(
            M::GET,
            &format!("/tables/{}/sales/orders/metadata-location", seg(&arn)),
            Value::Null,
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(cp["metadataLocation"], new_location.as_str());
    assert_ne!(cp["versionToken"], token_before);
    assert_eq!(conditional(etag).await, StatusCode::OK);
    // The same commit again: its requirements no longer hold.
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/sales/tables/orders"),
            commit,
        )
        .await,
        409,
        "CommitFailedException",
        Some("Requirement failed: current schema changed: expected id 0 != 1"),
    );

    // Rename across namespaces keeps the table; drop with PyIceberg's `False`, then with purge.
    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces"),
        json!({"namespace": ["archive"]}),
    )
    .await;
    let (status, _, _) = call(&server, M::POST, &format!("/{p}/tables/rename"),
        json!({"source": {"namespace": ["sales"], "name": "orders"}, "destination": {"namespace": ["archive"], "name": "old"}})).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, _, moved) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces/archive/tables/old"),
        Value::Null,
    )
    .await;
    assert_eq!(moved["metadata"]["table-uuid"], uuid);
    assert_eq!(
        call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/archive/tables/old?purgeRequested=True"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
    assert_error(
        &call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/archive/tables/old?purgeRequested=False"),
            Value::Null,
        )
        .await,
        404,
        "NoSuchTableException",
        Some("Table does not exist: archive.old"),
    );
}
