//! `unregisterTable` and `registerView` (Iceberg REST 1.12's spec): an unregistered table is forgotten while its
//! files stay, so its metadata registers again; a view registers from a view-metadata file in such a storage.
//! The spec's errors: 404 for a missing table or namespace, 409 for a name in use, 400 for a malformed request.

use super::*;

const NO_SUCH_TABLE: &str = "NoSuchTableException";

/// Puts `body` at `key` of the storage `location` (`s3://<id>--table-s3`) through the S3 data plane, as root.
async fn put_file(server: &TestServer, location: &str, key: &str, body: &[u8]) {
    let bucket = location.strip_prefix("s3://").unwrap();
    let path = format!("/{bucket}/{key}");
    let response = crate::s3::s3_signed(server, M::PUT, &path, body).await;
    assert_eq!(response.status(), StatusCode::OK, "PUT {path}");
}

/// A server with namespace `sales` and its table `name`; returns the server, the prefix and the create answer.
async fn with_table(name: &str) -> (TestServer, String, Value) {
    let (server, _, p) = setup().await;
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
        json!({"name": name, "schema": schema()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    (server, p, created)
}

/// The body of a `createView` of `name` in namespace `sales`, with these properties.
fn view_create(name: &str, properties: Value) -> Value {
    json!({"name": name, "schema": schema(), "properties": properties,
           "view-version": {"version-id": 1, "timestamp-ms": 1_700_000_000_000_i64, "schema-id": 0,
                            "summary": {"engine-name": "test"}, "default-namespace": ["sales"],
                            "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}]}})
}

#[tokio::test]
async fn unregister_forgets_the_table_and_keeps_its_files() {
    let (server, p, created) = with_table("orders").await;
    // A commit, so that the answer must carry the table as committed.
    let (status, _, committed) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables/orders"),
        json!({"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{committed}");
    let location = committed["metadata-location"].as_str().unwrap().to_string();

    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/sales/tables/nope/unregister"),
            Value::Null,
        )
        .await,
        404,
        NO_SUCH_TABLE,
        Some("Table does not exist: sales.nope"),
    );
    let (status, _, gone) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables/orders/unregister"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{gone}");
    assert_eq!(gone["metadata-location"], location.as_str());
    assert_eq!(gone["metadata"]["properties"]["k"], "v");
    assert_eq!(
        gone["metadata"]["table-uuid"],
        created["metadata"]["table-uuid"]
    );
    assert_eq!(
        gone.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["metadata", "metadata-location"]
    );
    // Forgotten: load, HEAD, a commit and a second unregister are 404.
    for (method, path, body) in [
        (M::GET, "", Value::Null),
        (
            M::POST,
            "",
            json!({"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "w"}}]}),
        ),
        (M::POST, "/unregister", Value::Null),
    ] {
        assert_error(
            &call(
                &server,
                method.clone(),
                &format!("/{p}/namespaces/sales/tables/orders{path}"),
                body,
            )
            .await,
            404,
            NO_SUCH_TABLE,
            None,
        );
    }
    // The files stayed: the metadata registers again, as the table it was.
    let (status, _, registered) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/register"),
        json!({"name": "orders_again", "metadata-location": location}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{registered}");
    assert_eq!(registered["metadata-location"], location.as_str());
    assert_eq!(registered["metadata"]["properties"]["k"], "v");
}

#[tokio::test]
async fn register_view_adopts_an_unregistered_storage() {
    let (server, p, table) = with_table("holder").await;
    // A view's metadata, as Tablebay writes it, moved into a table's storage.
    let (status, _, view) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/views"),
        view_create("template", json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let storage = table["metadata"]["location"].as_str().unwrap().to_string();
    let mut metadata = view["metadata"].clone();
    metadata["location"] = json!(storage);
    let key = "metadata/00000-registered.metadata.json";
    put_file(
        &server,
        &storage,
        key,
        &serde_json::to_vec(&metadata).unwrap(),
    )
    .await;
    let file = format!("{storage}/{key}");
    let register =
        |name: &str, location: &str| json!({"name": name, "metadata-location": location});
    let path = format!("/{p}/namespaces/sales/register-view");
    // The storage still belongs to a live table: 409 (two owners never share files).
    assert_error(
        &call(&server, M::POST, &path, register("recent", &file)).await,
        409,
        ALREADY_EXISTS,
        None,
    );
    let (status, _, _) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables/holder/unregister"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Names in use, a missing namespace and malformed requests change nothing.
    assert_error(
        &call(&server, M::POST, &path, register("template", &file)).await,
        409,
        ALREADY_EXISTS,
        None,
    );
    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables"),
        json!({"name": "taken", "schema": schema()}),
    )
    .await;
    assert_error(
        &call(&server, M::POST, &path, register("taken", &file)).await,
        409,
        ALREADY_EXISTS,
        None,
    );
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/nope/register-view"),
            register("recent", &file),
        )
        .await,
        404,
        NO_SUCH_NAMESPACE,
        None,
    );
    for body in [
        json!({"name": "recent"}),
        json!({"metadata-location": file}),
        json!([]),
        register("recent", "s3://not-a-table-storage/m.json"),
        register(
            "recent",
            &format!("{storage}/metadata/missing.metadata.json"),
        ),
        register("Bad-Name", &file),
    ] {
        let got = call(&server, M::POST, &path, body.clone()).await;
        assert_eq!(got.0.as_u16(), 400, "{body}: {}", got.2);
        assert_eq!(got.2["error"]["code"], 400, "{body}: {}", got.2);
    }

    let (status, _, registered) = call(&server, M::POST, &path, register("recent", &file)).await;
    assert_eq!(status, StatusCode::OK, "{registered}");
    assert_eq!(registered["metadata-location"], file.as_str());
    assert_eq!(registered["metadata"]["location"], storage.as_str());
    assert!(registered["config"].is_object(), "{registered}");
    let (status, _, loaded) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces/sales/views/recent"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{loaded}");
    assert_eq!(loaded["metadata-location"], file.as_str());
    // The view owns the storage now: neither a second view nor a table can adopt it.
    let got = call(&server, M::POST, &path, register("again", &file)).await;
    assert_eq!(got.0.as_u16(), 400, "{}", got.2);
    let (status, _, _) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/register"),
        json!({"name": "again", "metadata-location": file}),
    )
    .await;
    assert_eq!(status.as_u16(), 400);
}

/// A view dropped with `gc.enabled=false` keeps its storage, detached, so its metadata registers again (the RCK's
/// `registerView`); a view dropped without it has its storage purged, and registering it is refused.
#[tokio::test]
async fn a_view_dropped_with_gc_disabled_registers_again() {
    let (server, _, p) = setup().await;
    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces"),
        json!({"namespace": ["sales"]}),
    )
    .await;
    let path = format!("/{p}/namespaces/sales/register-view");
    for (name, properties, kept) in [
        ("kept", json!({"gc.enabled": "false"}), true),
        ("purged", json!({}), false),
    ] {
        let (status, _, view) = call(
            &server,
            M::POST,
            &format!("/{p}/namespaces/sales/views"),
            view_create(name, properties),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        let file = view["metadata-location"].as_str().unwrap().to_string();
        let (status, _, _) = call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales/views/{name}"),
            Value::Null,
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let body = json!({"name": name, "metadata-location": file});
        let (status, _, registered) = call(&server, M::POST, &path, body).await;
        if kept {
            assert_eq!(status, StatusCode::OK, "{registered}");
            assert_eq!(registered["metadata-location"], file.as_str());
            assert_eq!(registered["metadata"]["properties"]["gc.enabled"], "false");
            let (status, _, loaded) = call(
                &server,
                M::GET,
                &format!("/{p}/namespaces/sales/views/{name}"),
                Value::Null,
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{loaded}");
        } else {
            assert_eq!(status.as_u16(), 400, "{registered}");
            assert_eq!(registered["error"]["code"], 400, "{registered}");
        }
    }
}
