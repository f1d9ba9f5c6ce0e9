//! The Iceberg REST catalog against the real binary, on the wire: `/v1/config`, both prefix forms, namespaces,
//! tables (create, load with ETag, commit seen by the control plane, drop), Java's error types and messages,
//! pagination (trap 4), idempotency keys, OAuth2 bearer tokens.
//!
//! This file holds the helpers, `/v1/config`, idempotency keys and OAuth2; `namespaces.rs` and `tables.rs` the
//! namespace and table endpoints, `register.rs` unregistering tables and registering views.

use http::{Method, Method as M, StatusCode};
use serde_json::{Value, json};

use crate::server::{ACCESS_KEY, SECRET, TestServer, seg};

mod namespaces;
mod register;
mod tables;

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

const BAD_REQUEST: &str = "BadRequestException";
const ALREADY_EXISTS: &str = "AlreadyExistsException";
const NO_SUCH_NAMESPACE: &str = "NoSuchNamespaceException";

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
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
        "POST /v1/{prefix}/namespaces/{namespace}/register-view",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign",
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
        BAD_REQUEST,
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
            crate::server::sign(&mut parts, &body, ACCESS_KEY, SECRET, "osstables");
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
