//! Issue 14, findings 12 and 9: assuming a role takes the role's trust and the caller's own allow; vended
//! credentials keep the caller's session policy.

use http::Method;
use serde_json::{Value, json};

use crate::identity::{Creds, Surface, send, send_with_headers, user};
use crate::server::{ACCOUNT, TestServer};

use super::common::*;

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
