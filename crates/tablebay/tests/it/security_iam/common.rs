//! What the issue-14 IAM tests share: STS calls, roles, buckets and Iceberg tables with one object each.

use http::Method;
use serde_json::{Value, json};

use crate::identity::{Creds, Surface, must, send};
use crate::server::{ACCOUNT, TestServer, seg};

/// Sends an STS Query request.
pub(super) async fn sts(
    server: &TestServer,
    creds: &Creds,
    pairs: &[(&str, &str)],
) -> (u16, String) {
    let body = pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC)
            )
        })
        .collect::<Vec<_>>()
        .join("&");
    send(
        server,
        creds,
        Method::POST,
        Surface::Sts,
        "/sts",
        body.as_bytes(),
    )
    .await
}

/// The text of the first `<name>` element.
pub(super) fn xml_field(xml: &str, name: &str) -> String {
    let open = format!("<{name}>");
    let start = xml
        .find(&open)
        .unwrap_or_else(|| panic!("no <{name}> in {xml}"))
        + open.len();
    let end = xml[start..].find(&format!("</{name}>")).unwrap() + start;
    xml[start..end].to_string()
}

pub(super) async fn assume(
    server: &TestServer,
    creds: &Creds,
    role_arn: &str,
    policy: Option<&Value>,
) -> (u16, String) {
    let policy = policy.map(Value::to_string);
    let mut pairs = vec![
        ("Action", "AssumeRole"),
        ("Version", "2011-06-15"),
        ("RoleArn", role_arn),
        ("RoleSessionName", "s1"),
    ];
    if let Some(policy) = &policy {
        pairs.push(("Policy", policy));
    }
    sts(server, creds, &pairs).await
}

pub(super) fn session_of(xml: &str) -> Creds {
    Creds {
        key: xml_field(xml, "AccessKeyId"),
        secret: xml_field(xml, "SecretAccessKey"),
        token: Some(xml_field(xml, "SessionToken")),
    }
}

/// A refused AssumeRole: STS's AccessDenied, and no credentials in the answer.
pub(super) fn assert_denied(status: u16, xml: &str, what: &str) {
    assert_eq!(status, 403, "{what}: {xml}");
    assert!(xml.contains("AccessDenied"), "{what}: {xml}");
    assert!(!xml.contains("<AccessKeyId>"), "{what}: {xml}");
}

pub(super) async fn create_role(
    server: &TestServer,
    root: &Creds,
    name: &str,
    trust: Value,
    policy: Value,
) -> String {
    let role = must(
        server,
        root,
        Method::POST,
        Surface::Tables,
        "/admin/roles",
        json!({"roleName": name, "trustPolicy": trust}),
    )
    .await;
    must(
        server,
        root,
        Method::PUT,
        Surface::Tables,
        &format!("/admin/roles/{name}/policies/main"),
        Value::String(policy.to_string()),
    )
    .await;
    role["roleArn"].as_str().unwrap().to_string()
}

pub(super) fn allow_all(actions: &str) -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})
}

/// A bucket `bucket` made through the control plane; returns its ARN.
pub(super) async fn bucket(server: &TestServer, root: &Creds, bucket: &str) -> String {
    let created = must(
        server,
        root,
        Method::PUT,
        Surface::Tables,
        "/buckets",
        json!({"name": bucket}),
    )
    .await;
    created["arn"].as_str().unwrap().to_string()
}

/// An Iceberg table `ns.name` in `bucket` (the namespace is made if missing) with one object `data/x`
/// ("hello") in its storage; returns the data-plane bucket.
pub(super) async fn iceberg_table(
    server: &TestServer,
    root: &Creds,
    bucket: &str,
    ns: &str,
    name: &str,
) -> String {
    let prefix = format!("{ACCOUNT}.{bucket}");
    let (status, text) = send(
        server,
        root,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces"),
        json!({"namespace": [ns]}).to_string().as_bytes(),
    )
    .await;
    assert!(status == 200 || status == 409, "{status} {text}");
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let table = must(
        server,
        root,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables"),
        json!({"name": name, "schema": schema}),
    )
    .await;
    let data = table["metadata"]["location"]
        .as_str()
        .unwrap()
        .trim_start_matches("s3://")
        .trim_end_matches('/')
        .to_string();
    let (status, text) = send(
        server,
        root,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"hello",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    data
}

/// The ARN of table `ns.name` of `bucket_arn`.
pub(super) async fn table_arn(
    server: &TestServer,
    root: &Creds,
    bucket_arn: &str,
    ns: &str,
    name: &str,
) -> String {
    let got = must(
        server,
        root,
        Method::GET,
        Surface::Tables,
        &format!(
            "/get-table?tableBucketARN={}&namespace={ns}&name={name}",
            seg(bucket_arn)
        ),
        Value::Null,
    )
    .await;
    got["tableARN"].as_str().unwrap().to_string()
}
