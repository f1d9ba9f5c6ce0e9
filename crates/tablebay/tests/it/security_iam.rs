//! Regression tests of issue 14's IAM findings against the real binary, each asserting the refusal and that
//! nothing changed:
//! - 12: AssumeRole needs the role's trust policy AND the caller's own allow, within an account too;
//! - 9: vended credentials never do more than the caller's session (its session policy included);
//! - 6: `s3tables:namespace`, `s3tables:tableName`, `aws:ResourceTag/…` and `s3tables:TableBucketTag/…` apply on
//!   the control plane, the Iceberg catalog and the S3 data plane, and a policy naming a key Tablebay does not
//!   fill is refused when put;
//! - 10: the blobs an abort or an overwrite unlinked are deleted even when the server is killed right after.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};

use crate::encryption::files;
use crate::identity::{Creds, Surface, must, send, send_with_headers, user};
use crate::server::{ACCOUNT, TestServer, seg};

/// Sends an STS Query request.
async fn sts(server: &TestServer, creds: &Creds, pairs: &[(&str, &str)]) -> (u16, String) {
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
fn xml_field(xml: &str, name: &str) -> String {
    let open = format!("<{name}>");
    let start = xml
        .find(&open)
        .unwrap_or_else(|| panic!("no <{name}> in {xml}"))
        + open.len();
    let end = xml[start..].find(&format!("</{name}>")).unwrap() + start;
    xml[start..end].to_string()
}

async fn assume(
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

fn session_of(xml: &str) -> Creds {
    Creds {
        key: xml_field(xml, "AccessKeyId"),
        secret: xml_field(xml, "SecretAccessKey"),
        token: Some(xml_field(xml, "SessionToken")),
    }
}

/// A refused AssumeRole: STS's AccessDenied, and no credentials in the answer.
fn assert_denied(status: u16, xml: &str, what: &str) {
    assert_eq!(status, 403, "{what}: {xml}");
    assert!(xml.contains("AccessDenied"), "{what}: {xml}");
    assert!(!xml.contains("<AccessKeyId>"), "{what}: {xml}");
}

async fn create_role(
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

fn allow_all(actions: &str) -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})
}

/// A bucket `bucket` made through the control plane; returns its ARN.
async fn bucket(server: &TestServer, root: &Creds, bucket: &str) -> String {
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
async fn iceberg_table(
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
async fn table_arn(
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

// --- Finding 12 -------------------------------------------------------------------------------------------------

#[tokio::test]
async fn assume_role_needs_the_trust_policy_and_the_callers_own_allow() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let may_assume = Some(allow_all("sts:AssumeRole"));
    let ana = user(s, &root, "ana", may_assume.clone()).await;
    let carl = user(s, &root, "carl", None).await;
    let eve = user(s, &root, "eve", may_assume.clone()).await;
    let user_arn = |name: &str| format!("arn:aws:iam::{ACCOUNT}:user/{name}");
    let reads = allow_all("s3tables:GetTableData");
    // Trusts ana and carl by name.
    let named = create_role(
        s,
        &root,
        "named",
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Principal": {"AWS": [user_arn("ana"), user_arn("carl")]}, "Action": "sts:AssumeRole"}]}),
        reads.clone(),
    )
    .await;
    // Trusts the account: its identity policies decide.
    let account = create_role(
        s,
        &root,
        "account",
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:root")}, "Action": "sts:AssumeRole"}]}),
        reads,
    )
    .await;

    // The finding: eve may assume any role by her own policy, but the trust policy names only ana and carl.
    let (status, xml) = assume(s, &eve, &named, None).await;
    assert_denied(status, &xml, "eve, not trusted");
    // Carl is trusted by name but his own policies do not allow sts:AssumeRole.
    let (status, xml) = assume(s, &carl, &named, None).await;
    assert_denied(status, &xml, "carl, no identity allow");
    // Ana is trusted and allowed: a working session of the role.
    let (status, xml) = assume(s, &ana, &named, None).await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(
        xml_field(&xml, "Arn"),
        format!("arn:aws:sts::{ACCOUNT}:assumed-role/named/s1")
    );
    let session = session_of(&xml);
    let (status, body) = send(
        s,
        &session,
        Method::GET,
        Surface::Sts,
        "/sts?Action=GetCallerIdentity&Version=2011-06-15",
        b"",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("assumed-role/named/s1"), "{body}");

    // A role trusting the account: eve (allowed by her policy) may, carl (not allowed) may not.
    let (status, xml) = assume(s, &eve, &account, None).await;
    assert_eq!(status, 200, "{xml}");
    let (status, xml) = assume(s, &carl, &account, None).await;
    assert_denied(status, &xml, "carl, account trusted but no identity allow");

    // An identity policy naming only another role is no allow for this one.
    let narrow = user(
        s,
        &root,
        "nina",
        Some(json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
            "Resource": format!("arn:aws:iam::{ACCOUNT}:role/account")}]})),
    )
    .await;
    let (status, xml) = assume(s, &narrow, &named, None).await;
    assert_denied(status, &xml, "nina, allowed another role only");
    let (status, xml) = assume(s, &narrow, &account, None).await;
    assert_eq!(status, 200, "{xml}");

    // The account root has no identity policies: the trust policy alone decides for it.
    let (status, xml) = assume(s, &root, &account, None).await;
    assert_eq!(status, 200, "{xml}");
    let (status, xml) = assume(s, &root, &named, None).await;
    assert_denied(status, &xml, "root, only ana and carl trusted");
}

// --- Finding 9 --------------------------------------------------------------------------------------------------

#[tokio::test]
async fn vended_credentials_keep_the_callers_session_policy() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    bucket(s, &root, "vend").await;
    let prefix = format!("{ACCOUNT}.vend");
    let existing = iceberg_table(s, &root, "vend", "ns", "old").await;
    let ana = user(s, &root, "ana", Some(allow_all("sts:AssumeRole"))).await;
    let role = create_role(
        s,
        &root,
        "etl",
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:user/ana")}, "Action": "sts:AssumeRole"}]}),
        allow_all("s3tables:*"),
    )
    .await;
    // The role may do everything; this session may do everything but read table data.
    let no_reads = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "NotAction": "s3tables:GetTableData", "Resource": "*"}]});
    let (status, xml) = assume(s, &ana, &role, Some(&no_reads)).await;
    assert_eq!(status, 200, "{xml}");
    let session = session_of(&xml);
    // The session itself cannot read data.
    let (status, _) = send(
        s,
        &session,
        Method::GET,
        Surface::S3,
        &format!("/{existing}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 403);

    // createTable with vended credentials (it needs CreateTable and PutTableData, which the session has).
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let (status, text) = send_with_headers(
        s,
        &session,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables"),
        json!({"name": "fresh", "schema": schema})
            .to_string()
            .as_bytes(),
        &[("X-Iceberg-Access-Delegation", "vended-credentials")],
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let created: Value = serde_json::from_str(&text).unwrap();
    let config = &created["config"];
    let vended = Creds {
        key: config["s3.access-key-id"].as_str().unwrap().into(),
        secret: config["s3.secret-access-key"].as_str().unwrap().into(),
        token: Some(config["s3.session-token"].as_str().unwrap().into()),
    };
    let location = created["metadata-location"].as_str().unwrap();
    let (data, metadata_key) = location
        .trim_start_matches("s3://")
        .split_once('/')
        .unwrap();
    // The root can read the metadata file; the vended credentials cannot read it, nor list, nor head it.
    let (status, original) = send(
        s,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/{metadata_key}"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    for (method, path) in [
        (Method::GET, format!("/{data}/{metadata_key}")),
        (Method::HEAD, format!("/{data}/{metadata_key}")),
        (Method::GET, format!("/{data}?list-type=2")),
    ] {
        let (status, body) = send(s, &vended, method.clone(), Surface::S3, &path, b"").await;
        assert_eq!(status, 403, "{method} {path}: {body}");
    }
    // What the session may do, they may: write this table's data (and only this table's).
    let (status, text) = send(
        s,
        &vended,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/new"),
        b"n",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let (status, _) = send(
        s,
        &vended,
        Method::PUT,
        Surface::S3,
        &format!("/{existing}/data/y"),
        b"n",
    )
    .await;
    assert_eq!(status, 403);
    // Nothing changed: the metadata file is intact, and the other table has no new object.
    let (status, again) = send(
        s,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/{metadata_key}"),
        b"",
    )
    .await;
    assert_eq!((status, again), (200, original));
    let (status, _) = send(
        s,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{existing}/data/y"),
        b"",
    )
    .await;
    assert_eq!(status, 404);
}

// --- Finding 6 --------------------------------------------------------------------------------------------------

/// A bucket `conds` with tables `hr.people` and `sales.orders` (each with `data/x` in its storage), as root.
struct TwoTables {
    bucket_arn: String,
    hr: String,
    sales: String,
    hr_arn: String,
    sales_arn: String,
}

async fn two_tables(server: &TestServer, root: &Creds) -> TwoTables {
    let bucket_arn = bucket(server, root, "conds").await;
    let hr = iceberg_table(server, root, "conds", "hr", "people").await;
    let sales = iceberg_table(server, root, "conds", "sales", "orders").await;
    TwoTables {
        hr_arn: table_arn(server, root, &bucket_arn, "hr", "people").await,
        sales_arn: table_arn(server, root, &bucket_arn, "sales", "orders").await,
        bucket_arn,
        hr,
        sales,
    }
}

/// Everything, but the operations a condition on `key` = `value` denies.
fn allow_but(condition: Value) -> Value {
    json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:*"], "Resource": "*"},
        {"Sid": "NoGo", "Effect": "Deny", "Action": ["s3tables:*"], "Resource": "*", "Condition": condition}]})
}

/// Table-level requests on each surface: (what, surface, method, path, body); the `{ns}`/`{t}`/`{data}` parts
/// are the table's.
async fn table_requests(
    server: &TestServer,
    creds: &Creds,
    tables: &TwoTables,
    ns: &str,
    name: &str,
) -> Vec<(String, u16)> {
    let (data, arn) = if ns == "hr" {
        (&tables.hr, &tables.hr_arn)
    } else {
        (&tables.sales, &tables.sales_arn)
    };
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    let mut out = Vec::new();
    for (what, surface, method, path) in [
        (
            "GetTable",
            Surface::Tables,
            Method::GET,
            format!("/get-table?tableArn={}", seg(arn)),
        ),
        (
            "GetTableMetadataLocation",
            Surface::Tables,
            Method::GET,
            format!("/tables/{b}/{ns}/{name}/metadata-location"),
        ),
        (
            "loadTable",
            Surface::Iceberg,
            Method::GET,
            format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        ),
        (
            "tableExists",
            Surface::Iceberg,
            Method::HEAD,
            format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        ),
        (
            "GetObject",
            Surface::S3,
            Method::GET,
            format!("/{data}/data/x"),
        ),
        (
            "ListObjectsV2",
            Surface::S3,
            Method::GET,
            format!("/{data}?list-type=2"),
        ),
    ] {
        let (status, _) = send(server, creds, method, surface, &path, b"").await;
        out.push((what.to_string(), status));
    }
    out
}

/// Writes that a denied caller must not get through: DeleteTable (control plane), dropTable (Iceberg), PutObject
/// over `data/x` (S3). Asserts each is refused and changed nothing.
async fn writes_refused(
    server: &TestServer,
    creds: &Creds,
    root: &Creds,
    tables: &TwoTables,
    ns: &str,
    name: &str,
) {
    let data = if ns == "hr" {
        &tables.hr
    } else {
        &tables.sales
    };
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    let (status, text) = send(
        server,
        creds,
        Method::DELETE,
        Surface::Tables,
        &format!("/tables/{b}/{ns}/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "DeleteTable {ns}.{name}: {text}");
    let (status, text) = send(
        server,
        creds,
        Method::DELETE,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "dropTable {ns}.{name}: {text}");
    let (status, text) = send(
        server,
        creds,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"evil",
    )
    .await;
    assert_eq!(status, 403, "PutObject {ns}.{name}: {text}");
    // Unchanged: the table is there and its object still says hello.
    let (status, _) = send(
        server,
        root,
        Method::GET,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables/{name}"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = send(
        server,
        root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
}

/// Every request answered `want` (200 standing for any 2xx: tableExists answers 204).
fn assert_all(results: &[(String, u16)], want: u16, who: &str) {
    for (what, status) in results {
        let got = if (200..300).contains(status) {
            200
        } else {
            *status
        };
        assert_eq!(got, want, "{who}: {what} answered {status}");
    }
}

#[tokio::test]
async fn namespace_and_table_name_conditions_apply_on_every_surface() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;

    // In an identity policy: ana may do everything outside namespace hr (the key in its oss: spelling too).
    let ana = user(
        s,
        &root,
        "ana",
        Some(allow_but(
            json!({"StringEquals": {"s3tables:namespace": "hr"}}),
        )),
    )
    .await;
    let oscar = user(
        s,
        &root,
        "oscar",
        Some(allow_but(json!({"StringLike": {"oss:namespace": "h*"}}))),
    )
    .await;
    for (who, creds) in [("ana", &ana), ("oscar", &oscar)] {
        assert_all(
            &table_requests(s, creds, &tables, "hr", "people").await,
            403,
            who,
        );
        assert_all(
            &table_requests(s, creds, &tables, "sales", "orders").await,
            200,
            who,
        );
        writes_refused(s, creds, &root, &tables, "hr", "people").await;
    }

    // In the bucket policy: bob may not touch the table named orders.
    let bob = user(s, &root, "bob", Some(allow_all("s3tables:*"))).await;
    let policy = json!({"Version": "2012-10-17", "Statement": [{"Sid": "NoOrders", "Effect": "Deny",
        "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:user/bob")}, "Action": "s3tables:*", "Resource": "*",
        "Condition": {"StringEquals": {"s3tables:tableName": "orders"}}}]});
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("/buckets/{}/policy", seg(&tables.bucket_arn)),
        json!({"resourcePolicy": policy.to_string()}),
    )
    .await;
    assert_all(
        &table_requests(s, &bob, &tables, "sales", "orders").await,
        403,
        "bob",
    );
    assert_all(
        &table_requests(s, &bob, &tables, "hr", "people").await,
        200,
        "bob",
    );
    writes_refused(s, &bob, &root, &tables, "sales", "orders").await;

    // A role session whose session policy denies namespace hr: the session's own policy reads the key as well.
    let role = create_role(
        s,
        &root,
        "reader",
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:root")}, "Action": "sts:AssumeRole"}]}),
        allow_all("s3tables:*"),
    )
    .await;
    let (status, xml) = assume(
        s,
        &root,
        &role,
        Some(&allow_but(
            json!({"StringEquals": {"s3tables:namespace": "hr"}}),
        )),
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let session = session_of(&xml);
    assert_all(
        &table_requests(s, &session, &tables, "hr", "people").await,
        403,
        "session",
    );
    assert_all(
        &table_requests(s, &session, &tables, "sales", "orders").await,
        200,
        "session",
    );
}

#[tokio::test]
async fn tag_conditions_apply_on_every_surface() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;
    let other_bucket = bucket(s, &root, "plain").await;
    let plain = iceberg_table(s, &root, "plain", "ns", "t").await;
    for (arn, tags) in [
        (&tables.hr_arn, json!({"env": "secret"})),
        (&tables.bucket_arn, json!({"team": "data"})),
    ] {
        must(
            s,
            &root,
            Method::POST,
            Surface::Tables,
            &format!("/tag/{}", seg(arn)),
            json!({"tags": tags}),
        )
        .await;
    }

    // The table's own tag.
    let carol = user(
        s,
        &root,
        "carol",
        Some(allow_but(
            json!({"StringEquals": {"aws:ResourceTag/Env": "secret"}}),
        )),
    )
    .await;
    assert_all(
        &table_requests(s, &carol, &tables, "hr", "people").await,
        403,
        "carol",
    );
    assert_all(
        &table_requests(s, &carol, &tables, "sales", "orders").await,
        200,
        "carol",
    );
    writes_refused(s, &carol, &root, &tables, "hr", "people").await;

    // The bucket's tag reaches every table in it, and the bucket itself.
    let dave = user(
        s,
        &root,
        "dave",
        Some(allow_but(
            json!({"StringEquals": {"s3tables:TableBucketTag/team": "data"}}),
        )),
    )
    .await;
    assert_all(
        &table_requests(s, &dave, &tables, "sales", "orders").await,
        403,
        "dave",
    );
    let (status, _) = send(
        s,
        &dave,
        Method::GET,
        Surface::Tables,
        &format!("/buckets/{}", seg(&tables.bucket_arn)),
        b"",
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = send(
        s,
        &dave,
        Method::GET,
        Surface::Tables,
        &format!("/buckets/{}", seg(&other_bucket)),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = send(
        s,
        &dave,
        Method::GET,
        Surface::S3,
        &format!("/{plain}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
}

/// Bucket-level operations that name a namespace. The control plane and the Iceberg catalog must hand the
/// namespace to authorization (`Resource::in_namespace` / `naming_table`); until they do, these requests are
/// decided without `s3tables:namespace`.
#[tokio::test]
async fn namespace_conditions_apply_to_namespace_operations() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;
    let b = seg(&tables.bucket_arn);
    let prefix = format!("{ACCOUNT}.conds");
    // An empty namespace hr_empty to try deleting.
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("/namespaces/{b}"),
        json!({"namespace": ["hr_empty"]}),
    )
    .await;
    let ana = user(
        s,
        &root,
        "ana",
        Some(allow_but(
            json!({"StringLike": {"s3tables:namespace": "hr*"}}),
        )),
    )
    .await;
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let create = json!({"name": "fresh", "format": "ICEBERG"}).to_string();
    let create_iceberg = json!({"name": "fresh2", "schema": schema}).to_string();
    for (ns, want) in [("hr", 403), ("sales", 200)] {
        for (what, surface, method, path, body) in [
            (
                "GetNamespace",
                Surface::Tables,
                Method::GET,
                format!("/namespaces/{b}/{ns}"),
                "",
            ),
            (
                "ListTables",
                Surface::Tables,
                Method::GET,
                format!("/tables/{b}?namespace={ns}"),
                "",
            ),
            (
                "loadNamespaceMetadata",
                Surface::Iceberg,
                Method::GET,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}"),
                "",
            ),
            (
                "listTables",
                Surface::Iceberg,
                Method::GET,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables"),
                "",
            ),
            (
                "CreateTable",
                Surface::Tables,
                Method::PUT,
                format!("/tables/{b}/{ns}"),
                create.as_str(),
            ),
            (
                "createTable",
                Surface::Iceberg,
                Method::POST,
                format!("/iceberg/v1/{prefix}/namespaces/{ns}/tables"),
                create_iceberg.as_str(),
            ),
        ] {
            let (status, text) = send(s, &ana, method, surface, &path, body.as_bytes()).await;
            assert_eq!(status, want, "{what} in {ns}: {text}");
        }
    }
    // Refused deletes and creates changed nothing.
    for (what, surface, method, path, body) in [
        (
            "DeleteNamespace",
            Surface::Tables,
            Method::DELETE,
            format!("/namespaces/{b}/hr_empty"),
            String::new(),
        ),
        (
            "dropNamespace",
            Surface::Iceberg,
            Method::DELETE,
            format!("/iceberg/v1/{prefix}/namespaces/hr_empty"),
            String::new(),
        ),
        (
            "CreateNamespace",
            Surface::Tables,
            Method::PUT,
            format!("/namespaces/{b}"),
            json!({"namespace": ["hr_new"]}).to_string(),
        ),
        (
            "createNamespace",
            Surface::Iceberg,
            Method::POST,
            format!("/iceberg/v1/{prefix}/namespaces"),
            json!({"namespace": ["hr_new"]}).to_string(),
        ),
    ] {
        let (status, text) = send(s, &ana, method, surface, &path, body.as_bytes()).await;
        assert_eq!(status, 403, "{what}: {text}");
    }
    for (ns, exists) in [("hr_empty", 200), ("hr_new", 404)] {
        let (status, _) = send(
            s,
            &root,
            Method::GET,
            Surface::Tables,
            &format!("/namespaces/{b}/{ns}"),
            b"",
        )
        .await;
        assert_eq!(status, exists, "{ns}");
    }
    for name in ["fresh", "fresh2"] {
        let (status, _) = send(
            s,
            &root,
            Method::GET,
            Surface::Iceberg,
            &format!("/iceberg/v1/{prefix}/namespaces/hr/tables/{name}"),
            b"",
        )
        .await;
        assert_eq!(status, 404, "hr.{name} was created");
    }
}

#[tokio::test]
async fn policies_naming_keys_tablebay_does_not_fill_are_refused() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let tables = two_tables(s, &root).await;
    let b = seg(&tables.bucket_arn);
    let ana = user(s, &root, "ana", Some(allow_all("sts:AssumeRole"))).await;
    let with_key = |key: &str, principal: bool| {
        let mut statement = json!({"Effect": "Deny", "Action": "s3tables:*", "Resource": "*",
            "Condition": {"StringEquals": {key: "x"}}});
        if principal {
            statement["Principal"] = json!("*");
        }
        json!({"Version": "2012-10-17", "Statement": [statement]})
    };
    for key in [
        "s3tables:Foo",
        "oss:bucketName",
        "aws:TagKeys",
        "s3tables:SSEAlgorithm",
        "aws:MultiFactorAuthPresent",
    ] {
        // Resource policies: 400, and no policy stored.
        for (path, get) in [
            (
                format!("/buckets/{b}/policy"),
                format!("/buckets/{b}/policy"),
            ),
            (
                format!("/tables/{b}/hr/people/policy"),
                format!("/tables/{b}/hr/people/policy"),
            ),
        ] {
            let body = json!({"resourcePolicy": with_key(key, true).to_string()}).to_string();
            let (status, text) = send(
                s,
                &root,
                Method::PUT,
                Surface::Tables,
                &path,
                body.as_bytes(),
            )
            .await;
            assert_eq!(status, 400, "{key} {path}: {text}");
            assert!(text.contains("condition key"), "{key}: {text}");
            let (status, _) = send(s, &root, Method::GET, Surface::Tables, &get, b"").await;
            assert_eq!(status, 404, "{key}: a policy was stored at {get}");
        }
        // Identity policies: 400, nothing stored.
        let (status, text) = send(
            s,
            &root,
            Method::PUT,
            Surface::Tables,
            "/admin/users/ana/policies/bad",
            with_key(key, false).to_string().as_bytes(),
        )
        .await;
        assert_eq!(status, 400, "{key}: {text}");
        let (status, _) = send(
            s,
            &root,
            Method::GET,
            Surface::Tables,
            "/admin/users/ana/policies/bad",
            b"",
        )
        .await;
        assert_eq!(status, 404, "{key}");
        // Session policies: STS's MalformedPolicyDocument.
        let role = format!("arn:aws:iam::{ACCOUNT}:role/nobody");
        let (status, xml) = assume(s, &ana, &role, Some(&with_key(key, false))).await;
        assert_eq!(status, 400, "{key}: {xml}");
        assert!(xml.contains("MalformedPolicyDocument"), "{key}: {xml}");
    }
    // Trust policies (sts:ExternalId is not a key Tablebay fills): 400, no role.
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": ACCOUNT},
        "Action": "sts:AssumeRole", "Condition": {"StringEquals": {"sts:ExternalId": "x"}}}]});
    let (status, text) = send(
        s,
        &root,
        Method::POST,
        Surface::Tables,
        "/admin/roles",
        json!({"roleName": "ext", "trustPolicy": trust})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(status, 400, "{text}");
    let (status, _) = send(
        s,
        &root,
        Method::GET,
        Surface::Tables,
        "/admin/roles/ext",
        b"",
    )
    .await;
    assert_eq!(status, 404);
    // The keys Tablebay fills are accepted, in any case and under any of the service's prefixes.
    let good = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3tables:DeleteTable",
        "Resource": "*", "Condition": {"StringEquals": {"S3Tables:Namespace": "x", "oss:tableName": "y",
        "aws:ResourceTag/env": "z", "osstables:TableBucketTag/team": "w", "aws:SourceIp": "10.0.0.1"}}}]});
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("/buckets/{b}/policy"),
        json!({"resourcePolicy": good.to_string()}),
    )
    .await;
}

/// A policy stored before condition keys were checked, naming a key Tablebay does not fill: it is not skipped
/// (its Deny could be the one that matters), so the requests it governs are refused, and the owner can still
/// replace it.
#[tokio::test]
async fn a_stored_policy_with_an_unfilled_key_fails_closed_and_the_owner_can_replace_it() {
    let server = TestServer::start();
    let root = Creds::root();
    let bucket_arn = bucket(&server, &root, "legacy").await;
    let data = iceberg_table(&server, &root, "legacy", "ns", "t").await;
    let ana = user(&server, &root, "ana", Some(allow_all("s3tables:*"))).await;
    let get_bucket = format!("/buckets/{}", seg(&bucket_arn));
    let (status, _) = send(
        &server,
        &ana,
        Method::GET,
        Surface::Tables,
        &get_bucket,
        b"",
    )
    .await;
    assert_eq!(status, 200);

    // Store the old policy behind the server's back, as an earlier version would have accepted it.
    let data_dir = server.stop();
    let url = format!("sqlite://{}", data_dir.path().join("meta.db").display());
    let meta = tablebay_store::MetaStore::connect(&url).await.unwrap();
    let record = meta
        .bucket_by_name(ACCOUNT, "legacy")
        .await
        .unwrap()
        .unwrap();
    let legacy = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*",
        "Action": "s3tables:*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "false"}}}]});
    meta.set_attribute(
        record.id,
        tablebay_store::meta::AttributeKey::Policy,
        &legacy.to_string(),
    )
    .await
    .unwrap();
    meta.close().await;
    let server = TestServer::start_in(data_dir, &["--arn-flavor", "aws"]);

    // Every surface refuses what the policy governs.
    let (status, text) = send(
        &server,
        &ana,
        Method::GET,
        Surface::Tables,
        &get_bucket,
        b"",
    )
    .await;
    assert_eq!(status, 403, "{text}");
    let (status, _) = send(
        &server,
        &ana,
        Method::GET,
        Surface::Iceberg,
        &format!("/iceberg/v1/{ACCOUNT}.legacy/namespaces/ns/tables/t"),
        b"",
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = send(
        &server,
        &ana,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 403);
    // The account root replaces it, and access is as the new policy says.
    let fine = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*",
        "Action": "s3tables:DeleteTableBucket", "Resource": "*"}]});
    must(
        &server,
        &root,
        Method::PUT,
        Surface::Tables,
        &format!("{get_bucket}/policy"),
        json!({"resourcePolicy": fine.to_string()}),
    )
    .await;
    let (status, _) = send(
        &server,
        &ana,
        Method::GET,
        Surface::Tables,
        &get_bucket,
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = send(
        &server,
        &ana,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
}

// --- Finding 10 -------------------------------------------------------------------------------------------------

/// The blob files of one table (`blobs/tables/<table-id>/objects/…` under the data directory).
fn table_blobs(data_dir: &Path, data_bucket: &str) -> Vec<PathBuf> {
    let table_id = data_bucket.trim_end_matches("--table-s3");
    files(
        &data_dir
            .join("blobs")
            .join("tables")
            .join(table_id)
            .join("objects"),
    )
}

#[tokio::test]
async fn unlinked_blobs_are_deleted_after_a_kill() {
    let server = TestServer::start();
    let root = Creds::root();
    bucket(&server, &root, "crash").await;
    let data = iceberg_table(&server, &root, "crash", "ns", "t").await;
    let dir = server.data_dir().to_path_buf();
    let kept = table_blobs(&dir, &data);

    // An overwritten object, a deleted one, and a large multipart upload that is then aborted.
    for body in [b"one".as_slice(), b"two".as_slice()] {
        let (status, _) = send(
            &server,
            &root,
            Method::PUT,
            Surface::S3,
            &format!("/{data}/data/over"),
            body,
        )
        .await;
        assert_eq!(status, 200);
    }
    let (status, _) = send(
        &server,
        &root,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/gone"),
        b"bye",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        &server,
        &root,
        Method::DELETE,
        Surface::S3,
        &format!("/{data}/data/gone"),
        b"",
    )
    .await;
    assert_eq!(status, 204);
    let (status, xml) = send(
        &server,
        &root,
        Method::POST,
        Surface::S3,
        &format!("/{data}/data/big?uploads"),
        b"",
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let upload_id = xml_field(&xml, "UploadId");
    let parts = 300;
    for n in 1..=parts {
        let (status, text) = send(
            &server,
            &root,
            Method::PUT,
            Surface::S3,
            &format!("/{data}/data/big?partNumber={n}&uploadId={upload_id}"),
            format!("part {n}").as_bytes(),
        )
        .await;
        assert_eq!(status, 200, "part {n}: {text}");
    }
    let before = table_blobs(&dir, &data);
    assert!(
        before.len() >= kept.len() + parts + 3,
        "{} blobs",
        before.len()
    );
    let (status, text) = send(
        &server,
        &root,
        Method::DELETE,
        Surface::S3,
        &format!("/{data}/data/big?uploadId={upload_id}"),
        b"",
    )
    .await;
    assert_eq!(status, 204, "{text}");

    // kill -9 at once: the grace period has not passed, so every unlinked blob is still on disk.
    let data_dir = server.stop();
    let orphans = table_blobs(data_dir.path(), &data).len();
    assert_eq!(orphans, before.len(), "the grace period was not honoured");

    // After a restart the queue is drained: only the live objects' blobs (and the table's metadata) remain.
    let server = TestServer::start_in(data_dir, &["--arn-flavor", "aws"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    let live = kept.len() + 1;
    loop {
        let now = table_blobs(server.data_dir(), &data);
        if now.len() == live {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} blob files left after the restart; {live} are live",
            now.len()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Nothing live was lost.
    let (status, body) = send(
        &server,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/over"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "two"));
    let (status, body) = send(
        &server,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
    for file in &kept {
        assert!(file.exists(), "{} was deleted", file.display());
    }
}
