//! The admin API (accounts, users, keys, roles, identity policies) against the real binary, and what identities
//! may do on the control plane and the data plane: a read-only user reads but cannot write, a bucket policy's
//! explicit deny wins, a deactivated or deleted key stops working, and bad admin input is a 400 that changes
//! nothing.

use http::Method as M;
use serde_json::{Value, json};

use crate::identity::{Creds, must, send, table, user};
use crate::identity::{S3, Tables};
use crate::server::{ACCOUNT, REGION, TestServer, seg};

fn read_only(resource: &str) -> Value {
    json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:GetTableData", "s3tables:GetTable"], "Resource": resource}
    ]})
}

#[tokio::test]
async fn admin_api_manages_identities_and_rejects_bad_input() {
    let server = TestServer::start();
    let root = Creds::root();
    let s = &server;

    // Users: create, duplicate, bad names (400, nothing created), get, list.
    let ana = must(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/users",
        json!({"userName": "ana"}),
    )
    .await;
    assert_eq!(ana["userArn"], format!("arn:aws:iam::{ACCOUNT}:user/ana"));
    let (status, _) = send(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/users",
        br#"{"userName":"ana"}"#,
    )
    .await;
    assert_eq!(status, 409);
    for bad in [
        &br#"{"userName":"a b"}"#[..],
        br#"{"userName":""}"#,
        b"{not json",
        br#"{"userName":"x","extra":1}"#,
        b"{}",
    ] {
        let (status, text) = send(s, &root, M::POST, Tables, "/admin/users", bad).await;
        assert_eq!(status, 400, "{text}");
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["code"],
            "BadRequest"
        );
    }
    let users = must(s, &root, M::GET, Tables, "/admin/users", Value::Null).await;
    assert_eq!(users["users"].as_array().unwrap().len(), 1, "{users}");
    let (status, _) = send(s, &root, M::GET, Tables, "/admin/users/nobody", b"").await;
    assert_eq!(status, 404);

    // Keys: at most two; list shows no secrets; an unknown key is a 404.
    let k1 = must(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/users/ana/access-keys",
        Value::Null,
    )
    .await;
    must(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/users/ana/access-keys",
        Value::Null,
    )
    .await;
    let (status, _) = send(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/users/ana/access-keys",
        b"",
    )
    .await;
    assert_eq!(status, 409);
    let keys = must(
        s,
        &root,
        M::GET,
        Tables,
        "/admin/users/ana/access-keys",
        Value::Null,
    )
    .await;
    assert_eq!(keys["accessKeys"].as_array().unwrap().len(), 2);
    assert!(
        !keys
            .to_string()
            .contains(k1["secretAccessKey"].as_str().unwrap())
    );
    let (status, _) = send(
        s,
        &root,
        M::DELETE,
        Tables,
        "/admin/users/ana/access-keys/TBAKNOPE",
        b"",
    )
    .await;
    assert_eq!(status, 404);

    // Policies: malformed, unknown action or bad ARN → 400 and nothing stored.
    for bad in [
        "not json".to_string(),
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3tables:Fly", "Resource": "*"}]}).to_string(),
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3tables:GetTable", "Resource": "bucket/x"}]}).to_string(),
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Perhaps", "Action": "s3tables:GetTable", "Resource": "*"}]}).to_string(),
        format!("{{\"Version\":\"2012-10-17\",\"Statement\":[],\"x\":\"{}\"}}", "a".repeat(70_000)),
    ] {
        let (status, text) = send(s, &root, M::PUT, Tables, "/admin/users/ana/policies/p", bad.as_bytes()).await;
        assert_eq!(status, 400, "{text}");
        let (status, _) = send(s, &root, M::GET, Tables, "/admin/users/ana/policies/p", b"").await;
        assert_eq!(status, 404);
    }
    let good = read_only("*").to_string();
    must(
        s,
        &root,
        M::PUT,
        Tables,
        "/admin/users/ana/policies/p",
        Value::String(good.clone()),
    )
    .await;
    let stored = must(
        s,
        &root,
        M::GET,
        Tables,
        "/admin/users/ana/policies/p",
        Value::Null,
    )
    .await;
    assert_eq!(stored, serde_json::from_str::<Value>(&good).unwrap());
    let names = must(
        s,
        &root,
        M::GET,
        Tables,
        "/admin/users/ana/policies",
        Value::Null,
    )
    .await;
    assert_eq!(names["policyNames"], json!(["p"]));

    // Roles: a bad trust policy is a 400; a good one gives the role ARN.
    let (status, _) = send(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/roles",
        br#"{"roleName":"r","trustPolicy":{"Statement":"x"}}"#,
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = send(s, &root, M::GET, Tables, "/admin/roles/r", b"").await;
    assert_eq!(status, 404);
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": ACCOUNT}, "Action": "sts:AssumeRole"}]});
    let role = must(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/roles",
        json!({"roleName": "r", "trustPolicy": trust}),
    )
    .await;
    assert_eq!(role["roleArn"], format!("arn:aws:iam::{ACCOUNT}:role/r"));

    // Accounts: only the instance root creates and deletes them; an account root administers only its own.
    let account = must(
        s,
        &root,
        M::POST,
        Tables,
        "/admin/accounts",
        json!({"accountName": "team"}),
    )
    .await;
    let account_root = Creds {
        key: account["accessKeyId"].as_str().unwrap().into(),
        secret: account["secretAccessKey"].as_str().unwrap().into(),
        token: None,
    };
    let id = account["accountId"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 12);
    let (status, _) = send(s, &account_root, M::POST, Tables, "/admin/accounts", b"{}").await;
    assert_eq!(status, 403);
    let theirs = must(
        s,
        &account_root,
        M::POST,
        Tables,
        "/admin/users",
        json!({"userName": "ana"}),
    )
    .await;
    assert_eq!(theirs["userArn"], format!("arn:aws:iam::{id}:user/ana"));
    let (status, _) = send(
        s,
        &account_root,
        M::GET,
        Tables,
        &format!("/admin/users?accountId={ACCOUNT}"),
        b"",
    )
    .await;
    assert_eq!(status, 403);
    let listed = must(
        s,
        &root,
        M::GET,
        Tables,
        &format!("/admin/users?accountId={id}"),
        Value::Null,
    )
    .await;
    assert_eq!(listed["users"][0]["userName"], "ana");
    let ana_creds = Creds {
        key: k1["accessKeyId"].as_str().unwrap().into(),
        secret: k1["secretAccessKey"].as_str().unwrap().into(),
        token: None,
    };
    let (status, _) = send(s, &ana_creds, M::GET, Tables, "/admin/users", b"").await;
    assert_eq!(status, 403, "a user does not administer identities");
    let (status, _) = send(
        s,
        &root,
        M::DELETE,
        Tables,
        &format!("/admin/accounts/{ACCOUNT}"),
        b"",
    )
    .await;
    assert_eq!(status, 400, "the default account stays");
    let (status, _) = send(
        s,
        &root,
        M::DELETE,
        Tables,
        "/admin/accounts/999999999999",
        b"",
    )
    .await;
    assert_eq!(status, 404);
    must(
        s,
        &root,
        M::DELETE,
        Tables,
        &format!("/admin/accounts/{id}"),
        Value::Null,
    )
    .await;
    let (status, _) = send(s, &account_root, M::GET, Tables, "/buckets", b"").await;
    assert_eq!(status, 403, "a deleted account's root key is gone");

    // Deleting a user removes its keys.
    must(s, &root, M::DELETE, Tables, "/admin/users/ana", Value::Null).await;
    let (status, _) = send(s, &ana_creds, M::GET, Tables, "/buckets", b"").await;
    assert_eq!(status, 403);
    let (status, _) = send(
        s,
        &root,
        M::GET,
        Tables,
        "/admin/users/ana/access-keys",
        b"",
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn read_only_user_reads_but_cannot_write_and_deny_wins() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let (bucket_arn, table_arn, data) = table(s, &root, "readonly").await;
    let reader = user(
        s,
        &root,
        "reader",
        Some(read_only(&format!("{bucket_arn}/table/*"))),
    )
    .await;
    let nobody = user(s, &root, "nobody", None).await;

    // Data plane: read yes, write no; no policy, nothing.
    let (status, body) = send(s, &reader, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!((status, body.as_str()), (200, "hello"));
    let (status, body) = send(s, &reader, M::PUT, S3, &format!("/{data}/data/y"), b"nope").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
    let (status, _) = send(s, &root, M::GET, S3, &format!("/{data}/data/y"), b"").await;
    assert_eq!(status, 404, "the refused write changed nothing");
    let (status, _) = send(s, &nobody, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!(status, 403);

    // Control plane: GetTable allowed, DeleteTable and CreateNamespace denied with AccessDeniedException.
    let (status, _) = send(
        s,
        &reader,
        M::GET,
        Tables,
        &format!("/get-table?tableArn={}", seg(&table_arn)),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, text) = send(
        s,
        &reader,
        M::PUT,
        Tables,
        &format!("/namespaces/{}", seg(&bucket_arn)),
        br#"{"namespace":["x"]}"#,
    )
    .await;
    assert_eq!(status, 403, "{text}");
    assert!(
        text.contains("s3tables:CreateNamespace") || text.contains("oss:CreateNamespace"),
        "{text}"
    );

    // Policy changes apply to the next request: an explicit deny in the bucket policy beats the identity allow.
    let deny = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*",
        "Action": "s3tables:GetTableData", "Resource": format!("{bucket_arn}/table/*")}]});
    must(
        s,
        &root,
        M::PUT,
        Tables,
        &format!("/buckets/{}/policy", seg(&bucket_arn)),
        json!({"resourcePolicy": deny.to_string()}),
    )
    .await;
    let (status, _) = send(s, &reader, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!(status, 403);
    must(
        s,
        &root,
        M::DELETE,
        Tables,
        &format!("/buckets/{}/policy", seg(&bucket_arn)),
        Value::Null,
    )
    .await;
    let (status, _) = send(s, &reader, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!(status, 200);

    // A malformed bucket policy is a 400 and is not stored.
    let (status, _) = send(s, &root, M::PUT, Tables, &format!("/buckets/{}/policy", seg(&bucket_arn)),
        json!({"resourcePolicy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"s3tables:Nope\",\"Resource\":\"*\"}]}"}).to_string().as_bytes()).await;
    assert_eq!(status, 400);
    let (status, _) = send(
        s,
        &root,
        M::GET,
        Tables,
        &format!("/buckets/{}/policy", seg(&bucket_arn)),
        b"",
    )
    .await;
    assert_eq!(status, 404);

    // A deactivated key stops working at once; reactivated, it works again.
    let path = format!("/admin/users/reader/access-keys/{}", reader.key);
    must(
        s,
        &root,
        M::PUT,
        Tables,
        &path,
        json!({"status": "Inactive"}),
    )
    .await;
    let (status, body) = send(s, &reader, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("InvalidAccessKeyId"), "{body}");
    let (status, _) = send(s, &root, M::PUT, Tables, &path, br#"{"status":"Sleeping"}"#).await;
    assert_eq!(status, 400);
    must(s, &root, M::PUT, Tables, &path, json!({"status": "Active"})).await;
    let (status, _) = send(s, &reader, M::GET, S3, &format!("/{data}/data/x"), b"").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn audit_log_records_mutations_and_denials() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let server =
        TestServer::start_with(&["--arn-flavor", "aws", "--audit-log", path.to_str().unwrap()]);
    let s = &server;
    let root = Creds::root();
    must(
        s,
        &root,
        M::PUT,
        Tables,
        "/buckets",
        json!({"name": "audited"}),
    )
    .await;
    let nobody = user(s, &root, "nobody", None).await;
    let (status, _) = send(s, &nobody, M::GET, Tables, "/buckets", b"").await;
    assert_eq!(status, 403);

    // The events are written as they happen; poll the file with a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let events: Vec<Value> = loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let has_denial = events.iter().any(|e| e["fields"]["decision"] == "deny");
        if has_denial || std::time::Instant::now() > deadline {
            break events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let field = |e: &Value, name: &str| e["fields"][name].as_str().unwrap_or_default().to_string();
    assert!(
        events.iter().all(|e| e["target"] == "tablebay::audit"),
        "only audit events: {events:?}"
    );
    let created = events
        .iter()
        .find(|e| field(e, "action") == "oss:CreateTableBucket")
        .expect("CreateTableBucket");
    assert_eq!(field(created, "decision"), "allow");
    assert_eq!(
        field(created, "principal"),
        format!("arn:aws:iam::{ACCOUNT}:root")
    );
    assert_eq!(
        field(created, "resource"),
        format!("arn:aws:s3tables:{REGION}:{ACCOUNT}:bucket/audited")
    );
    assert!(!field(created, "request_id").is_empty() && created["timestamp"].is_string());
    assert!(
        events
            .iter()
            .any(|e| field(e, "action") == "admin:CreateUser")
    );
    let denied = events
        .iter()
        .find(|e| field(e, "decision") == "deny")
        .expect("a denial");
    assert_eq!(field(denied, "action"), "oss:ListTableBuckets");
    assert_eq!(
        field(denied, "principal"),
        format!("arn:aws:iam::{ACCOUNT}:user/nobody")
    );
    // Reads that are allowed are not audited.
    assert!(
        !events
            .iter()
            .any(|e| field(e, "action") == "oss:GetTableBucket")
    );
}
