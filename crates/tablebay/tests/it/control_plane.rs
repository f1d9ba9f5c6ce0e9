//! The control plane against the real binary: authentication failures change nothing, the version-token
//! compare-and-swap, pagination, both ARN flavors, and the error wire format.
// Test helpers outside `#[test]` functions, which clippy's `allow-*-in-tests` does not cover.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use http::{Method, Method as M, StatusCode};
use serde_json::{Value, json};

use crate::server::{ACCOUNT, REGION, SECRET, TestServer, seg};

async fn body(response: reqwest::Response) -> (StatusCode, Option<String>, Value) {
    let status = response.status();
    let error_type = response
        .headers()
        .get("x-amzn-errortype")
        .map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, error_type, value)
}

/// A signed control-plane call: status, `x-amzn-ErrorType` and the JSON answer.
async fn call(
    server: &TestServer,
    method: Method,
    path: &str,
    json: Value,
) -> (StatusCode, Option<String>, Value) {
    body(server.call(method, path, json).await).await
}

#[tokio::test]
async fn health_answers_without_auth_and_everything_else_needs_it() {
    let server = TestServer::start();
    let health = server
        .get_unsigned(&format!("{}/health", server.tables_url))
        .await;
    assert_eq!(health.status(), StatusCode::OK);
    let s3 = server
        .get_unsigned(&format!("{}/some-bucket/key", server.s3_url))
        .await;
    assert!(s3.text().await.unwrap().contains("<Error><Code>"));

    let unsigned = server
        .http
        .put(format!("{}/buckets", server.tables_url))
        .body(r#"{"name":"b1"}"#)
        .send()
        .await
        .unwrap();
    let (status, error_type, value) = body(unsigned).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(error_type.as_deref(), Some("ForbiddenException"));
    assert!(value["message"].as_str().unwrap().contains("Missing"));

    let wrong = server
        .send_signed(
            M::PUT,
            "/buckets",
            br#"{"name":"b1"}"#,
            "s3tables",
            "not-the-secret",
        )
        .await;
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    let wrong_service = server
        .send_signed(M::PUT, "/buckets", br#"{"name":"b1"}"#, "s3", SECRET)
        .await;
    assert_eq!(wrong_service.status(), StatusCode::FORBIDDEN);

    // Nothing was created by the rejected requests.
    let (status, _, list) = call(&server, M::GET, "/buckets", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["tableBuckets"], json!([]));
}

#[tokio::test]
async fn tables_lifecycle_with_version_tokens() {
    let server = TestServer::start();
    let (status, _, created) =
        call(&server, M::PUT, "/buckets", json!({"name": "analytics"})).await;
    assert_eq!(status, StatusCode::OK);
    let arn = created["arn"].as_str().unwrap().to_string();
    assert_eq!(
        arn,
        format!("arn:aws:s3tables:{REGION}:{ACCOUNT}:bucket/analytics")
    );
    let b = seg(&arn);

    let (status, _, _) = call(
        &server,
        M::PUT,
        &format!("/namespaces/{b}"),
        json!({"namespace": ["sales"]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let create = json!({"name": "orders", "format": "ICEBERG", "metadata": {"iceberg": {"schema": {"fields": [
        {"name": "id", "type": "long", "required": true}, {"name": "amount", "type": "decimal(10,2)"}]}}}});
    let (status, _, table) = call(&server, M::PUT, &format!("/tables/{b}/sales"), create).await;
    assert_eq!(status, StatusCode::OK);
    let token = table["versionToken"].as_str().unwrap().to_string();
    let table_arn = table["tableARN"].as_str().unwrap().to_string();
    assert!(table_arn.starts_with(&format!("{arn}/table/")));

    let (_, _, location) = call(
        &server,
        M::GET,
        &format!("/tables/{b}/sales/orders/metadata-location"),
        Value::Null,
    )
    .await;
    assert_eq!(location["versionToken"], json!(token));
    let warehouse = location["warehouseLocation"].as_str().unwrap();
    assert!(warehouse.starts_with("s3://") && warehouse.ends_with("--table-s3"));
    assert!(
        location["metadataLocation"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{warehouse}/metadata/00000-"))
    );

    // Compare-and-swap: a stale token is a 409 and changes nothing.
    let update = |token: &str, file: &str| json!({"versionToken": token, "metadataLocation": format!("{warehouse}/metadata/{file}")});
    let (status, _, updated) = call(
        &server,
        M::PUT,
        &format!("/tables/{b}/sales/orders/metadata-location"),
        update(&token, "00001-a.metadata.json"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let new_token = updated["versionToken"].as_str().unwrap().to_string();
    assert_ne!(new_token, token);
    let (status, error_type, _) = call(
        &server,
        M::PUT,
        &format!("/tables/{b}/sales/orders/metadata-location"),
        update(&token, "00002-b.metadata.json"),
    )
    .await;
    assert_eq!(
        (status, error_type.as_deref()),
        (StatusCode::CONFLICT, Some("ConflictException"))
    );
    let (_, _, location) = call(
        &server,
        M::GET,
        &format!("/tables/{b}/sales/orders/metadata-location"),
        Value::Null,
    )
    .await;
    assert!(
        location["metadataLocation"]
            .as_str()
            .unwrap()
            .ends_with("00001-a.metadata.json")
    );

    // Rename keeps the ARN; the new GetTable route finds it by ARN.
    let (status, _, _) = call(
        &server,
        M::PUT,
        &format!("/tables/{b}/sales/orders/rename"),
        json!({"newName": "orders_v2"}),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, got) = call(
        &server,
        M::GET,
        &format!("/get-table?tableArn={}", seg(&table_arn)),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["name"], json!("orders_v2"));

    // Non-empty deletes are refused; then everything goes in order.
    let (status, _, _) = call(
        &server,
        M::DELETE,
        &format!("/namespaces/{b}/sales"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _, _) = call(
        &server,
        M::DELETE,
        &format!("/tables/{b}/sales/orders_v2"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, _) = call(
        &server,
        M::DELETE,
        &format!("/namespaces/{b}/sales"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, _) = call(&server, M::DELETE, &format!("/buckets/{b}"), Value::Null).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, error_type, _) =
        call(&server, M::GET, &format!("/buckets/{b}"), Value::Null).await;
    assert_eq!(
        (status, error_type.as_deref()),
        (StatusCode::NOT_FOUND, Some("NotFoundException"))
    );
}

#[tokio::test]
async fn pagination_visits_every_bucket_once() {
    let server = TestServer::start();
    let mut names: Vec<String> = (0..7).map(|i| format!("bucket-{i:02}")).collect();
    for name in &names {
        let (status, _, _) = call(&server, M::PUT, "/buckets", json!({"name": name})).await;
        assert_eq!(status, StatusCode::OK);
    }
    let mut seen = Vec::new();
    let mut tokens = Vec::new();
    let mut query = "/buckets?maxBuckets=3".to_string();
    loop {
        let (status, _, page) = call(&server, M::GET, &query, Value::Null).await;
        assert_eq!(status, StatusCode::OK);
        seen.extend(
            page["tableBuckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["name"].as_str().unwrap().to_string()),
        );
        match page.get("continuationToken").and_then(Value::as_str) {
            None => break,
            Some(token) => {
                assert!(!tokens.contains(&token.to_string()), "token repeated");
                tokens.push(token.to_string());
                query = format!("/buckets?maxBuckets=3&continuationToken={}", seg(token));
            }
        }
    }
    names.sort();
    assert_eq!(seen, names);
    assert_eq!(tokens.len(), 2);
    let (status, error_type, _) = call(
        &server,
        M::GET,
        "/buckets?continuationToken=garbage",
        Value::Null,
    )
    .await;
    assert_eq!(
        (status, error_type.as_deref()),
        (StatusCode::BAD_REQUEST, Some("BadRequestException"))
    );
    let (status, _, _) = call(&server, M::GET, "/buckets?maxBuckets=1001", Value::Null).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn oss_flavor_is_the_default_and_both_flavors_are_accepted() {
    let server = TestServer::start_with(&[]);
    let (_, _, created) = call(&server, M::PUT, "/buckets", json!({"name": "oss-bucket"})).await;
    let arn = created["arn"].as_str().unwrap();
    assert_eq!(
        arn,
        format!("acs:osstables:{REGION}:{ACCOUNT}:bucket/oss-bucket")
    );
    let aws = format!("arn:aws:s3tables:{REGION}:{ACCOUNT}:bucket/oss-bucket");
    let (status, _, got) = call(
        &server,
        M::GET,
        &format!("/buckets/{}", seg(&aws)),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["arn"], json!(arn));
    // Signing name osstables works as well as s3tables.
    let response = server
        .send_signed(M::GET, "/buckets", b"", "osstables", SECRET)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn malformed_and_foreign_requests_get_modeled_errors() {
    let server = TestServer::start();
    let cases: Vec<(Method, String, Value, StatusCode, &str)> = vec![
        (
            M::PUT,
            "/buckets".into(),
            json!({"name": "Bad_Name"}),
            StatusCode::BAD_REQUEST,
            "BadRequestException",
        ),
        (
            M::PUT,
            "/buckets".into(),
            json!({"nom": "x"}),
            StatusCode::BAD_REQUEST,
            "BadRequestException",
        ),
        (
            M::GET,
            "/buckets/not-an-arn".into(),
            Value::Null,
            StatusCode::BAD_REQUEST,
            "BadRequestException",
        ),
        (
            M::GET,
            format!(
                "/buckets/{}",
                seg("arn:aws:s3tables:us-east-1:999999999999:bucket/theirs")
            ),
            Value::Null,
            StatusCode::FORBIDDEN,
            "AccessDeniedException",
        ),
        (
            M::GET,
            format!(
                "/buckets/{}",
                seg(&format!(
                    "arn:aws:s3tables:us-east-1:{ACCOUNT}:bucket/missing"
                ))
            ),
            Value::Null,
            StatusCode::NOT_FOUND,
            "NotFoundException",
        ),
        (
            M::POST,
            "/nowhere".into(),
            Value::Null,
            StatusCode::BAD_REQUEST,
            "BadRequestException",
        ),
    ];
    for (method, path, payload, expected_status, expected_type) in cases {
        let (status, error_type, value) = call(&server, method.clone(), &path, payload).await;
        assert_eq!(
            (status, error_type.as_deref()),
            (expected_status, Some(expected_type)),
            "{method} {path}"
        );
        assert!(value["message"].is_string());
    }
    let raw = server
        .send_signed(M::PUT, "/buckets", b"{not json", "s3tables", SECRET)
        .await;
    assert_eq!(raw.status(), StatusCode::BAD_REQUEST);
    let huge = vec![b' '; 2 * 1024 * 1024];
    let raw = server
        .send_signed(M::PUT, "/buckets", &huge, "s3tables", SECRET)
        .await;
    assert_eq!(raw.status(), StatusCode::BAD_REQUEST);
}
