//! The Iceberg REST catalog against the real binary, on the wire: `/v1/config`, both prefix forms, namespaces,
//! tables (create, load with ETag, commit seen by the control plane, drop), Java's error types and messages,
//! pagination (trap 4), idempotency keys, OAuth2 bearer tokens.

use http::{Method, Method as M, StatusCode};
use serde_json::{Value, json};

use crate::server::{ACCESS_KEY, SECRET, TestServer, seg};

/// A signed Iceberg request (service `osstables`); returns status, headers and the JSON body (Null if empty).
async fn call(
    server: &TestServer,
    method: Method,
    path: &str,
    body: Value,
) -> (StatusCode, http::HeaderMap, Value) {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(&body).unwrap()
    };
    let response = server
        .send_signed(
            method,
            &format!("/iceberg/v1{path}"),
            &bytes,
            "osstables",
            SECRET,
        )
        .await;
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, headers, value)
}

#[track_caller]
fn assert_error(
    got: &(StatusCode, http::HeaderMap, Value),
    status: u16,
    kind: &str,
    message: Option<&str>,
) {
    let (code, _, body) = got;
    assert_eq!(code.as_u16(), status, "{body}");
    assert_eq!(body["error"]["code"], status, "{body}");
    assert_eq!(body["error"]["type"], kind, "{body}");
    if let Some(message) = message {
        assert_eq!(body["error"]["message"], message, "{body}");
    }
}

/// A server with bucket `analytics`; returns it, the bucket ARN and the prefix `/v1/config` hands out.
async fn setup() -> (TestServer, String, String) {
    let server = TestServer::start();
    let response = server
        .call(M::PUT, "/buckets", json!({"name": "analytics"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let arn = response.json::<Value>().await.unwrap()["arn"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _, config) = call(
        &server,
        M::GET,
        &format!("/config?warehouse={}", seg(&arn)),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{config}");
    let prefix = config["overrides"]["prefix"].as_str().unwrap().to_string();
    (server, arn, prefix)
}

const SCHEMA: &str = r#"{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": true},
    {"id": 2, "name": "ts", "type": "timestamp", "required": false}]}"#;

fn schema() -> Value {
    serde_json::from_str(SCHEMA).unwrap()
}

#[tokio::test]
async fn config_names_the_bucket_the_data_plane_and_the_endpoints() {
    let (server, arn, prefix) = setup().await;
    assert_eq!(prefix, "111122223333.analytics");
    let (_, _, config) = call(
        &server,
        M::GET,
        &format!("/config?warehouse={}", seg(&arn)),
        Value::Null,
    )
    .await;
    assert_eq!(config["defaults"], json!({}));
    assert_eq!(config["overrides"]["s3.endpoint"], server.s3_url.as_str());
    assert_eq!(config["overrides"]["s3.path-style-access"], "true");
    assert_eq!(config["overrides"]["client.region"], "us-east-1");
    let endpoints: Vec<&str> = config["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for expected in [
        "GET /v1/{prefix}/namespaces",
        "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/transactions/commit",
        "POST /v1/{prefix}/views/rename",
    ] {
        assert!(
            endpoints.contains(&expected),
            "{expected} missing from {endpoints:?}"
        );
    }
    // The prefix form and a bare bucket name are warehouses too; a missing one is a clear error.
    for warehouse in [prefix.as_str(), "analytics"] {
        let (status, _, again) = call(
            &server,
            M::GET,
            &format!("/config?warehouse={warehouse}"),
            Value::Null,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(again["overrides"]["prefix"], prefix.as_str());
    }
    assert_error(
        &call(&server, M::GET, "/config", Value::Null).await,
        400,
        "BadRequestException",
        None,
    );
    assert_error(
        &call(&server, M::GET, "/config?warehouse=nope", Value::Null).await,
        404,
        "NoSuchWarehouseException",
        None,
    );
}

#[tokio::test]
async fn namespaces_are_the_control_planes_with_javas_errors() {
    let (server, arn, p) = setup().await;
    let (status, _, created) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces"),
        json!({"namespace": ["sales"], "properties": {"owner": "me"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(
        created,
        json!({"namespace": ["sales"], "properties": {"owner": "me"}})
    );
    // The control plane sees it.
    let cp = server
        .call(
            M::GET,
            &format!("/namespaces/{}/sales", seg(&arn)),
            Value::Null,
        )
        .await;
    assert_eq!(cp.status(), StatusCode::OK);

    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces"),
            json!({"namespace": ["sales"]}),
        )
        .await,
        409,
        "AlreadyExistsException",
        Some("Namespace already exists: sales"),
    );
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces"),
            json!({"namespace": ["a", "b"]}),
        )
        .await,
        400,
        "BadRequestException",
        None,
    );
    assert_error(
        &call(
            &server,
            M::POST,
            &format!("/{p}/namespaces"),
            json!({"namespace": ["Upper"]}),
        )
        .await,
        400,
        "BadRequestException",
        None,
    );
    assert_error(
        &call(
            &server,
            M::GET,
            &format!("/{p}/namespaces/a%1Fb"),
            Value::Null,
        )
        .await,
        400,
        "BadRequestException",
        None,
    );
    assert_error(
        &call(
            &server,
            M::GET,
            &format!("/{p}/namespaces/nope"),
            Value::Null,
        )
        .await,
        404,
        "NoSuchNamespaceException",
        Some("Namespace does not exist: nope"),
    );
    assert_eq!(
        call(
            &server,
            M::HEAD,
            &format!("/{p}/namespaces/sales"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        call(
            &server,
            M::HEAD,
            &format!("/{p}/namespaces/nope"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );

    let (status, _, updated) = call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/properties"),
        json!({"removals": ["owner", "absent"], "updates": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        updated,
        json!({"updated": ["k"], "removed": ["owner"], "missing": ["absent"]})
    );
    let (_, _, loaded) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces/sales"),
        Value::Null,
    )
    .await;
    assert_eq!(loaded["properties"], json!({"k": "v"}));

    // Lists: an absent pageToken is everything (PyIceberg 0.10), an empty one a first page (Java).
    for name in ["ns_a", "ns_b", "ns_c"] {
        call(
            &server,
            M::POST,
            &format!("/{p}/namespaces"),
            json!({"namespace": [name]}),
        )
        .await;
    }
    let (_, _, all) = call(&server, M::GET, &format!("/{p}/namespaces"), Value::Null).await;
    assert_eq!(
        all,
        json!({"namespaces": [["ns_a"], ["ns_b"], ["ns_c"], ["sales"]]})
    );
    let (_, _, first) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?pageToken=&pageSize=3"),
        Value::Null,
    )
    .await;
    assert_eq!(first["namespaces"], json!([["ns_a"], ["ns_b"], ["ns_c"]]));
    let token = first["next-page-token"].as_str().unwrap();
    assert!(!token.is_empty());
    let (_, _, last) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?pageToken={token}&pageSize=3"),
        Value::Null,
    )
    .await;
    assert_eq!(last, json!({"namespaces": [["sales"]]}));
    let (_, _, children) = call(
        &server,
        M::GET,
        &format!("/{p}/namespaces?parent=sales"),
        Value::Null,
    )
    .await;
    assert_eq!(children, json!({"namespaces": []}));
    assert_error(
        &call(
            &server,
            M::GET,
            &format!("/{p}/namespaces?parent=non_existing"),
            Value::Null,
        )
        .await,
        404,
        "NoSuchNamespaceException",
        Some("Namespace does not exist: non_existing"),
    );

    call(
        &server,
        M::POST,
        &format!("/{p}/namespaces/sales/tables"),
        json!({"name": "t", "schema": schema()}),
    )
    .await;
    assert_error(
        &call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales"),
            Value::Null,
        )
        .await,
        409,
        "NamespaceNotEmptyException",
        None,
    );
    assert_eq!(
        call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales/tables/t"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        call(
            &server,
            M::DELETE,
            &format!("/{p}/namespaces/sales"),
            Value::Null
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
}

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
        "AlreadyExistsException",
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
        "NoSuchNamespaceException",
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
            tablebay_auth::signer::sign(
                &mut parts,
                b"",
                ACCESS_KEY,
                SECRET,
                "us-east-1",
                "osstables",
                chrono::Utc::now(),
            )
            .unwrap();
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

#[tokio::test]
async fn idempotency_keys_replay_the_first_answer() {
    let (server, _, p) = setup().await;
    let create = |key: &'static str, name: &'static str| {
        let server = &server;
        let p = p.clone();
        async move {
            let url = format!("{}/iceberg/v1/{p}/namespaces", server.tables_url);
            let body = serde_json::to_vec(&json!({"namespace": [name]})).unwrap();
            let builder = http::Request::builder()
                .method(M::POST)
                .uri(&url)
                .header("content-type", "application/json")
                .header("idempotency-key", key);
            let (mut parts, ()) = builder.body(()).unwrap().into_parts();
            tablebay_auth::signer::sign(
                &mut parts,
                &body,
                ACCESS_KEY,
                SECRET,
                "us-east-1",
                "osstables",
                chrono::Utc::now(),
            )
            .unwrap();
            let response = server.send_parts(parts, &body).await;
            (response.status(), response.text().await.unwrap())
        }
    };
    let first = create("0190b4a2-key-1", "once").await;
    assert_eq!(first.0, StatusCode::OK);
    // A retry with the same key gets the same answer, not a 409.
    assert_eq!(create("0190b4a2-key-1", "once").await, first);
    // A fresh key applies again (and conflicts).
    assert_eq!(
        create("0190b4a2-key-2", "once").await.0,
        StatusCode::CONFLICT
    );
}

#[tokio::test]
async fn oauth_tokens_authenticate_as_the_access_key() {
    let (server, _, p) = setup().await;
    let token_url = format!("{}/iceberg/v1/oauth/tokens", server.tables_url);
    let form = format!(
        "grant_type=client_credentials&client_id={ACCESS_KEY}&client_secret={}&scope=catalog",
        percent_encoding::utf8_percent_encode(SECRET, percent_encoding::NON_ALPHANUMERIC)
    );
    let response = server
        .http
        .post(&token_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let token: Value = response.json().await.unwrap();
    assert_eq!(token["token_type"], "bearer");
    assert!(token["expires_in"].as_i64().unwrap() > 0);
    let bearer = token["access_token"].as_str().unwrap();
    let listed = server
        .http
        .get(format!("{}/iceberg/v1/{p}/namespaces", server.tables_url))
        .bearer_auth(bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);

    // Java refreshes with a token exchange.
    let exchange = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token={bearer}\
                            &subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
    );
    let refreshed = server
        .http
        .post(&token_url)
        .bearer_auth(bearer)
        .body(exchange)
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK);
    assert!(
        refreshed.json::<Value>().await.unwrap()["access_token"]
            .as_str()
            .unwrap()
            .starts_with("tb1.")
    );

    let bad = server
        .http
        .post(&token_url)
        .body(format!(
            "grant_type=client_credentials&client_id={ACCESS_KEY}&client_secret=nope"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        bad.json::<Value>().await.unwrap()["error"],
        "invalid_client"
    );
    let forged = server
        .http
        .get(format!("{}/iceberg/v1/{p}/namespaces", server.tables_url))
        .bearer_auth("tb1.x.1.y")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    let unsigned = server
        .http
        .get(format!("{}/iceberg/v1/{p}/namespaces", server.tables_url))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), StatusCode::FORBIDDEN);
}
