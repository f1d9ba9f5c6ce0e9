//! What the IAM and STS tests share: credentials (with a session token for temporary ones), requests signed for
//! each surface, admin calls (users, keys, policies, roles), STS calls, and tables with one object in their storage.

use http::{Method, Method as M, Request};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::server::{ACCOUNT, REGION, TestServer, seg};

/// Credentials that sign requests (a session token for temporary ones).
#[derive(Clone, Debug)]
pub struct Creds {
    pub key: String,
    pub secret: String,
    pub token: Option<String>,
}

impl Creds {
    pub fn root() -> Creds {
        Creds {
            key: crate::server::ACCESS_KEY.into(),
            secret: crate::server::SECRET.into(),
            token: None,
        }
    }
}

/// Whatever signs requests: [`Creds`], or a principal of a [`crate::world::World`].
pub trait Signer {
    fn key(&self) -> &str;
    fn secret(&self) -> &str;
    fn token(&self) -> Option<&str>;
}

impl Signer for Creds {
    fn key(&self) -> &str {
        &self.key
    }
    fn secret(&self) -> &str {
        &self.secret
    }
    fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }
}

impl<T: Signer + ?Sized> Signer for &T {
    fn key(&self) -> &str {
        (**self).key()
    }
    fn secret(&self) -> &str {
        (**self).secret()
    }
    fn token(&self) -> Option<&str> {
        (**self).token()
    }
}

pub use Surface::{Iceberg, S3, Sts, Tables};

/// Where a request goes and which signing name it uses.
#[derive(Clone, Copy, Debug)]
pub enum Surface {
    /// Control plane and admin (`s3tables`).
    Tables,
    /// Iceberg REST (`osstables`).
    Iceberg,
    /// STS (`sts`), form-encoded.
    Sts,
    /// The S3 data plane (`s3`).
    S3,
}

/// Sends a request signed by `creds`; returns status and body text.
pub async fn send(
    server: &TestServer,
    creds: &impl Signer,
    method: Method,
    surface: Surface,
    path: &str,
    body: &[u8],
) -> (u16, String) {
    send_with_headers(server, creds, method, surface, path, body, &[]).await
}

pub async fn send_with_headers(
    server: &TestServer,
    creds: &impl Signer,
    method: Method,
    surface: Surface,
    path: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> (u16, String) {
    let response = respond(server, creds, method, surface, path, body, headers).await;
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// Sends a request signed by `creds` with extra headers; the whole answer, headers included.
pub async fn respond(
    server: &TestServer,
    creds: &impl Signer,
    method: Method,
    surface: Surface,
    path: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let (base, service) = match surface {
        Tables => (&server.tables_url, "s3tables"),
        Iceberg => (&server.tables_url, "osstables"),
        Sts => (&server.tables_url, "sts"),
        S3 => (&server.s3_url, "s3"),
    };
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    match surface {
        S3 => builder = builder.header("x-amz-content-sha256", hex::encode(Sha256::digest(body))),
        Sts => builder = builder.header("content-type", "application/x-www-form-urlencoded"),
        _ if !body.is_empty() => builder = builder.header("content-type", "application/json"),
        _ => {}
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let (mut parts, ()) = builder.body(()).unwrap().into_parts();
    let params = tablebay_auth::signer::SigningParams {
        access_key_id: creds.key(),
        secret_access_key: creds.secret(),
        session_token: creds.token(),
        region: REGION,
        service,
        time: chrono::Utc::now(),
    };
    tablebay_auth::signer::sign_with(&mut parts, body, &params).unwrap();
    server.send_parts(parts, body).await
}

/// A JSON request that must succeed; the parsed answer (Null when empty, a string when not JSON). A string body
/// is sent as it is (a policy document), Null as no body.
pub async fn must(
    server: &TestServer,
    creds: &impl Signer,
    method: Method,
    surface: Surface,
    path: &str,
    body: Value,
) -> Value {
    let bytes = match &body {
        Value::Null => Vec::new(),
        Value::String(s) => s.clone().into_bytes(),
        other => serde_json::to_vec(other).unwrap(),
    };
    let (status, text) = send(server, creds, method.clone(), surface, path, &bytes).await;
    assert!(
        (200..300).contains(&status),
        "{method} {path} as {}: {status} {text}",
        creds.key()
    );
    if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

/// Creates a user with a key and the given identity policy (if any), as `root`.
pub async fn user(server: &TestServer, root: &Creds, name: &str, policy: Option<Value>) -> Creds {
    new_user(server, root, name, policy).await.0
}

/// Creates a user with a key and the given identity policy (`main`, if any), as `root`; its credentials and ARN.
pub async fn new_user(
    server: &TestServer,
    root: &impl Signer,
    name: &str,
    policy: Option<Value>,
) -> (Creds, String) {
    let created = must(
        server,
        root,
        M::POST,
        Tables,
        "/admin/users",
        json!({"userName": name}),
    )
    .await;
    let path = format!("/admin/users/{name}/access-keys");
    let key = must(server, root, M::POST, Tables, &path, Value::Null).await;
    if let Some(policy) = policy {
        put_user_policy(server, root, name, "main", &policy).await;
    }
    let creds = Creds {
        key: key["accessKeyId"].as_str().unwrap().into(),
        secret: key["secretAccessKey"].as_str().unwrap().into(),
        token: None,
    };
    (creds, created["userArn"].as_str().unwrap().into())
}

/// Sets (replaces) identity policy `policy_name` of user `name`, as `root`.
pub async fn put_user_policy(
    server: &TestServer,
    root: &impl Signer,
    name: &str,
    policy_name: &str,
    document: &Value,
) {
    let path = format!("/admin/users/{name}/policies/{policy_name}");
    let document = match document {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    must(server, root, M::PUT, Tables, &path, Value::String(document)).await;
}

/// A bucket `name` with namespace `ns` and table `t` (control plane), and one object `data/x` in the table's
/// storage; returns (bucket ARN, table ARN, data-plane bucket).
pub async fn table(server: &TestServer, root: &Creds, name: &str) -> (String, String, String) {
    let bucket = must(
        server,
        root,
        M::PUT,
        Tables,
        "/buckets",
        json!({"name": name}),
    )
    .await;
    let bucket_arn = bucket["arn"].as_str().unwrap().to_string();
    let b = seg(&bucket_arn);
    must(
        server,
        root,
        M::PUT,
        Tables,
        &format!("/namespaces/{b}"),
        json!({"namespace": ["ns"]}),
    )
    .await;
    let created = must(
        server,
        root,
        M::PUT,
        Tables,
        &format!("/tables/{b}/ns"),
        json!({"name": "t", "format": "ICEBERG"}),
    )
    .await;
    let table_arn = created["tableARN"].as_str().unwrap().to_string();
    let got = must(
        server,
        root,
        M::GET,
        Tables,
        &format!("/get-table?tableArn={}", seg(&table_arn)),
        Value::Null,
    )
    .await;
    let location = got["warehouseLocation"].as_str().unwrap();
    let data_bucket = location
        .trim_start_matches("s3://")
        .trim_end_matches('/')
        .to_string();
    let (status, text) = send(
        server,
        root,
        M::PUT,
        S3,
        &format!("/{data_bucket}/data/x"),
        b"hello",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    (bucket_arn, table_arn, data_bucket)
}

// --- STS, roles and Iceberg tables (the IAM and STS tests) ---

/// Sends an STS Query request.
pub async fn sts(
    server: &TestServer,
    creds: &impl Signer,
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
    send(server, creds, M::POST, Sts, "/sts", body.as_bytes()).await
}

/// The text of the first `<name>` element.
pub fn xml_field(xml: &str, name: &str) -> String {
    let open = format!("<{name}>");
    let start = xml
        .find(&open)
        .unwrap_or_else(|| panic!("no <{name}> in {xml}"))
        + open.len();
    let end = xml[start..].find(&format!("</{name}>")).unwrap() + start;
    xml[start..end].to_string()
}

pub async fn assume(
    server: &TestServer,
    creds: &impl Signer,
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

pub fn session_of(xml: &str) -> Creds {
    Creds {
        key: xml_field(xml, "AccessKeyId"),
        secret: xml_field(xml, "SecretAccessKey"),
        token: Some(xml_field(xml, "SessionToken")),
    }
}

/// A refused AssumeRole: STS's AccessDenied, and no credentials in the answer.
pub fn assert_denied(status: u16, xml: &str, what: &str) {
    assert_eq!(status, 403, "{what}: {xml}");
    assert!(xml.contains("AccessDenied"), "{what}: {xml}");
    assert!(!xml.contains("<AccessKeyId>"), "{what}: {xml}");
}

pub async fn create_role(
    server: &TestServer,
    root: &Creds,
    name: &str,
    trust: Value,
    policy: Value,
) -> String {
    let role = must(
        server,
        root,
        M::POST,
        Tables,
        "/admin/roles",
        json!({"roleName": name, "trustPolicy": trust}),
    )
    .await;
    must(
        server,
        root,
        M::PUT,
        Tables,
        &format!("/admin/roles/{name}/policies/main"),
        Value::String(policy.to_string()),
    )
    .await;
    role["roleArn"].as_str().unwrap().to_string()
}

pub fn allow_all(actions: &str) -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})
}

/// A bucket `bucket` made through the control plane; returns its ARN.
pub async fn bucket(server: &TestServer, root: &Creds, bucket: &str) -> String {
    let created = must(
        server,
        root,
        M::PUT,
        Tables,
        "/buckets",
        json!({"name": bucket}),
    )
    .await;
    created["arn"].as_str().unwrap().to_string()
}

/// An Iceberg table `ns.name` in `bucket` (the namespace is made if missing) with one object `data/x`
/// ("hello") in its storage; returns the data-plane bucket.
pub async fn iceberg_table(
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
        M::POST,
        Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces"),
        json!({"namespace": [ns]}).to_string().as_bytes(),
    )
    .await;
    assert!(status == 200 || status == 409, "{status} {text}");
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let table = must(
        server,
        root,
        M::POST,
        Iceberg,
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
        M::PUT,
        S3,
        &format!("/{data}/data/x"),
        b"hello",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    data
}

/// The ARN of table `ns.name` of `bucket_arn`.
pub async fn table_arn(
    server: &TestServer,
    root: &Creds,
    bucket_arn: &str,
    ns: &str,
    name: &str,
) -> String {
    let got = must(
        server,
        root,
        M::GET,
        Tables,
        &format!(
            "/get-table?tableBucketARN={}&namespace={ns}&name={name}",
            seg(bucket_arn)
        ),
        Value::Null,
    )
    .await;
    got["tableARN"].as_str().unwrap().to_string()
}
