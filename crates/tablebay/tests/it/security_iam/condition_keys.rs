//! Issue 14, finding 6: a policy naming a condition key Tablebay does not fill is refused when put, and one stored
//! before keys were checked fails closed without locking its owner out.

use http::Method;
use serde_json::json;

use crate::identity::{Creds, Surface, must, send, user};
use crate::server::{ACCOUNT, TestServer, seg};

use super::common::*;
use super::conditions::two_tables;

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
