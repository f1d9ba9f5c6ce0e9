//! STS at `/sts` and temporary credentials on every surface: GetSessionToken and AssumeRole (trust policy, session
//! policy, duration limits), the session token checked on the control plane, the Iceberg REST catalog and the data
//! plane, expiry, and vended credentials scoped to one table.

use http::Method;
use serde_json::{Value, json};

use crate::identity::{Creds, Surface, must, send, send_with_headers, table, user};
use crate::encryption::{contains, files};
use crate::server::{ACCOUNT, TestServer, seg};
use tablebay_store::MetaStore;
use tablebay_store::meta::CredentialRecord;

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

fn session_of(xml: &str) -> Creds {
    Creds {
        key: xml_field(xml, "AccessKeyId"),
        secret: xml_field(xml, "SecretAccessKey"),
        token: Some(xml_field(xml, "SessionToken")),
    }
}

fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
        .into_bytes()
}

async fn sts(server: &TestServer, creds: &Creds, pairs: &[(&str, &str)]) -> (u16, String) {
    send(
        server,
        creds,
        Method::POST,
        Surface::Sts,
        "/sts",
        &form(pairs),
    )
    .await
}

#[tokio::test]
async fn session_tokens_are_checked_everywhere_and_expire() {
    let server = TestServer::start_with(&["--arn-flavor", "aws", "--sts-min-duration-secs", "1"]);
    let s = &server;
    let root = Creds::root();
    let (bucket_arn, table_arn, data) = table(s, &root, "sessions").await;

    // GetCallerIdentity and GetSessionToken, in STS's XML.
    let (status, xml) = sts(
        s,
        &root,
        &[("Action", "GetCallerIdentity"), ("Version", "2011-06-15")],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(xml_field(&xml, "Account"), ACCOUNT);
    let (status, xml) = sts(
        s,
        &root,
        &[("Action", "GetSessionToken"), ("Version", "2011-06-15")],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.starts_with("<GetSessionTokenResponse"), "{xml}");
    let session = session_of(&xml);

    // Accepted on all three surfaces with its token...
    let get_table = format!("/get-table?tableArn={}", seg(&table_arn));
    let config = format!("/iceberg/v1/config?warehouse={}", seg(&bucket_arn));
    let (status, _) = send(s, &session, Method::GET, Surface::Tables, &get_table, b"").await;
    assert_eq!(status, 200);
    let (status, _) = send(s, &session, Method::GET, Surface::Iceberg, &config, b"").await;
    assert_eq!(status, 200);
    let (status, body) = send(
        s,
        &session,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
    // ...and refused without it or with another one, in each surface's format.
    for token in [None, Some("TBSTforged".to_string())] {
        let forged = Creds {
            token,
            ..session.clone()
        };
        let (status, text) = send(s, &forged, Method::GET, Surface::Tables, &get_table, b"").await;
        assert_eq!(status, 403, "{text}");
        let (status, text) = send(s, &forged, Method::GET, Surface::Iceberg, &config, b"").await;
        assert_eq!(status, 403, "{text}");
        assert!(text.contains("ForbiddenException"), "{text}");
        let (status, text) = send(
            s,
            &forged,
            Method::GET,
            Surface::S3,
            &format!("/{data}/data/x"),
            b"",
        )
        .await;
        assert!(status == 400 || status == 403, "{status} {text}");
        assert!(text.contains("InvalidToken"), "{text}");
    }
    // A long-term key presented with a token is refused too.
    let with_token = Creds {
        token: Some("whatever".into()),
        ..root.clone()
    };
    let (status, _) = send(
        s,
        &with_token,
        Method::GET,
        Surface::Tables,
        &get_table,
        b"",
    )
    .await;
    assert_eq!(status, 403);
    // Session credentials cannot call GetSessionToken again.
    let (status, xml) = sts(s, &session, &[("Action", "GetSessionToken")]).await;
    assert_eq!(status, 403, "{xml}");
    assert!(
        xml.contains("<ErrorResponse") && xml.contains("AccessDenied"),
        "{xml}"
    );

    // Bad input: duration out of range, not a number, unknown action, missing action.
    for (pairs, code) in [
        (
            vec![
                ("Action", "GetSessionToken"),
                ("DurationSeconds", "99999999"),
            ],
            "ValidationError",
        ),
        (
            vec![("Action", "GetSessionToken"), ("DurationSeconds", "soon")],
            "InvalidParameterValue",
        ),
        (vec![("Action", "StealEverything")], "InvalidAction"),
        (vec![("Version", "2011-06-15")], "MissingParameter"),
    ] {
        let (status, xml) = sts(s, &root, &pairs).await;
        assert_eq!(status, 400, "{xml}");
        assert_eq!(xml_field(&xml, "Code"), code);
    }

    // A one-second session works, then stops working once it has expired.
    let (status, xml) = sts(
        s,
        &root,
        &[("Action", "GetSessionToken"), ("DurationSeconds", "1")],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let short = session_of(&xml);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (status, text) = send(
            s,
            &short,
            Method::GET,
            Surface::S3,
            &format!("/{data}/data/x"),
            b"",
        )
        .await;
        if status != 200 {
            assert!(text.contains("ExpiredToken"), "{status} {text}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session never expired"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let (status, text) = send(s, &short, Method::GET, Surface::Tables, &get_table, b"").await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("expired"), "{text}");
}

#[tokio::test]
async fn assumed_roles_follow_trust_and_session_policies() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let (bucket_a, _, data_a) = table(s, &root, "alpha").await;
    let (_, _, data_b) = table(s, &root, "beta").await;
    // Assuming a role takes the role's trust and the caller's own allow (issue 14, finding 12).
    let may_assume = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]});
    let ana = user(s, &root, "ana", Some(may_assume.clone())).await;
    let bob = user(s, &root, "bob", Some(may_assume)).await;
    let ana_arn = format!("arn:aws:iam::{ACCOUNT}:user/ana");
    let trust = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": ana_arn}, "Action": "sts:AssumeRole"}]});
    let role = must(
        s,
        &root,
        Method::POST,
        Surface::Tables,
        "/admin/roles",
        json!({"roleName": "reader", "trustPolicy": trust, "maxSessionDuration": 7200}),
    )
    .await;
    let role_arn = role["roleArn"].as_str().unwrap().to_string();
    let reads = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:GetTableData", "Resource": "*"}]});
    must(
        s,
        &root,
        Method::PUT,
        Surface::Tables,
        "/admin/roles/reader/policies/read",
        Value::String(reads.to_string()),
    )
    .await;

    // Not in the trust policy: AccessDenied. Unknown role: AccessDenied too (nothing to learn).
    let (status, xml) = sts(
        s,
        &bob,
        &[
            ("Action", "AssumeRole"),
            ("RoleArn", &role_arn),
            ("RoleSessionName", "s1"),
        ],
    )
    .await;
    assert_eq!(status, 403, "{xml}");
    let missing = format!("arn:aws:iam::{ACCOUNT}:role/ghost");
    let (status, _) = sts(
        s,
        &ana,
        &[
            ("Action", "AssumeRole"),
            ("RoleArn", &missing),
            ("RoleSessionName", "s1"),
        ],
    )
    .await;
    assert_eq!(status, 403);
    // Bad input.
    for pairs in [
        vec![
            ("Action", "AssumeRole"),
            ("RoleArn", "not-an-arn"),
            ("RoleSessionName", "s1"),
        ],
        vec![
            ("Action", "AssumeRole"),
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "x"),
        ],
        vec![
            ("Action", "AssumeRole"),
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "s1"),
            ("DurationSeconds", "7201"),
        ],
        vec![
            ("Action", "AssumeRole"),
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", "s1"),
            ("Policy", "{nope"),
        ],
    ] {
        let (status, xml) = sts(s, &ana, &pairs).await;
        assert_eq!(status, 400, "{pairs:?}: {xml}");
    }

    // Assumed without a session policy: reads both tables, writes neither.
    let (status, xml) = sts(
        s,
        &ana,
        &[
            ("Action", "AssumeRole"),
            ("RoleArn", &role_arn),
            ("RoleSessionName", "wide"),
            ("DurationSeconds", "7200"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(
        xml_field(&xml, "Arn"),
        format!("arn:aws:sts::{ACCOUNT}:assumed-role/reader/wide")
    );
    let wide = session_of(&xml);
    for data in [&data_a, &data_b] {
        let (status, _) = send(
            s,
            &wide,
            Method::GET,
            Surface::S3,
            &format!("/{data}/data/x"),
            b"",
        )
        .await;
        assert_eq!(status, 200);
    }
    let (status, _) = send(
        s,
        &wide,
        Method::PUT,
        Surface::S3,
        &format!("/{data_a}/data/w"),
        b"w",
    )
    .await;
    assert_eq!(status, 403);

    // With a session policy naming only bucket alpha: narrowed to it.
    let narrow_policy = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:*", "Resource": format!("{bucket_a}/table/*")}]});
    let (status, xml) = sts(
        s,
        &ana,
        &[
            ("Action", "AssumeRole"),
            ("RoleArn", &role_arn),
            ("RoleSessionName", "narrow"),
            ("Policy", &narrow_policy.to_string()),
        ],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let narrow = session_of(&xml);
    let (status, _) = send(
        s,
        &narrow,
        Method::GET,
        Surface::S3,
        &format!("/{data_a}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        s,
        &narrow,
        Method::GET,
        Surface::S3,
        &format!("/{data_b}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "the session policy narrows the role");
    let (status, _) = send(
        s,
        &narrow,
        Method::PUT,
        Surface::S3,
        &format!("/{data_a}/data/w"),
        b"w",
    )
    .await;
    assert_eq!(status, 403, "a session policy cannot widen the role");

    // Deleting the role ends its sessions.
    must(
        s,
        &root,
        Method::DELETE,
        Surface::Tables,
        "/admin/roles/reader",
        Value::Null,
    )
    .await;
    let (status, _) = send(
        s,
        &wide,
        Method::GET,
        Surface::S3,
        &format!("/{data_a}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 403);
}

/// Creates `bucket` with namespace `ns` and an Iceberg table `t` through the REST catalog; returns the data-plane
/// bucket of the table.
async fn iceberg_table(server: &TestServer, root: &Creds, bucket: &str) -> (String, String) {
    let created = must(
        server,
        root,
        Method::PUT,
        Surface::Tables,
        "/buckets",
        json!({"name": bucket}),
    )
    .await;
    let bucket_arn = created["arn"].as_str().unwrap().to_string();
    let prefix = format!("{ACCOUNT}.{bucket}");
    must(
        server,
        root,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces"),
        json!({"namespace": ["ns"]}),
    )
    .await;
    let schema = json!({"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": false}]});
    let table = must(
        server,
        root,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables"),
        json!({"name": "t", "schema": schema}),
    )
    .await;
    let location = table["metadata"]["location"].as_str().unwrap();
    (
        bucket_arn,
        location
            .trim_start_matches("s3://")
            .trim_end_matches('/')
            .to_string(),
    )
}

#[tokio::test]
async fn vended_credentials_are_scoped_to_one_table() {
    let server = TestServer::start();
    let s = &server;
    let root = Creds::root();
    let (_, data_a) = iceberg_table(s, &root, "vend-a").await;
    let (_, data_b) = iceberg_table(s, &root, "vend-b").await;
    for data in [&data_a, &data_b] {
        let (status, _) = send(
            s,
            &root,
            Method::PUT,
            Surface::S3,
            &format!("/{data}/data/x"),
            b"hello",
        )
        .await;
        assert_eq!(status, 200);
    }
    let load = format!("/iceberg/v1/{ACCOUNT}.vend-a/namespaces/ns/tables/t");
    let delegation = [("X-Iceberg-Access-Delegation", "vended-credentials")];

    // Without the header: no credentials in the answer.
    let plain = must(s, &root, Method::GET, Surface::Iceberg, &load, Value::Null).await;
    assert!(plain["config"].get("s3.access-key-id").is_none());

    // With it: config and storage-credentials carry a session for table A's data.
    let (status, text) = send_with_headers(
        s,
        &root,
        Method::GET,
        Surface::Iceberg,
        &load,
        b"",
        &delegation,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let loaded: Value = serde_json::from_str(&text).unwrap();
    let config = &loaded["config"];
    let vended = Creds {
        key: config["s3.access-key-id"].as_str().unwrap().into(),
        secret: config["s3.secret-access-key"].as_str().unwrap().into(),
        token: Some(config["s3.session-token"].as_str().unwrap().into()),
    };
    assert_eq!(config["s3.path-style-access"], "true");
    assert!(
        config["s3.endpoint"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    let credentials = loaded["storage-credentials"].as_array().unwrap();
    assert_eq!(credentials[0]["prefix"], format!("s3://{data_a}/"));
    assert_eq!(
        credentials[0]["config"]["s3.access-key-id"],
        config["s3.access-key-id"]
    );

    let (status, body) = send(
        s,
        &vended,
        Method::GET,
        Surface::S3,
        &format!("/{data_a}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
    let (status, _) = send(
        s,
        &vended,
        Method::PUT,
        Surface::S3,
        &format!("/{data_a}/data/new"),
        b"n",
    )
    .await;
    assert_eq!(
        status, 200,
        "the root may write table A, so its vended credentials may too"
    );
    let (status, _) = send(
        s,
        &vended,
        Method::GET,
        Surface::S3,
        &format!("/{data_b}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "table A's credentials cannot read table B");
    let (status, _) = send(s, &vended, Method::GET, Surface::Tables, "/buckets", b"").await;
    assert_eq!(status, 403, "vended credentials are for table data only");

    // A reader (GetTableMetadataLocation + GetTableData) gets read-only credentials.
    let reads = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Action": ["s3tables:GetTableMetadataLocation", "s3tables:GetTableData"], "Resource": "*"}]});
    let reader = user(s, &root, "reader", Some(reads)).await;
    let (status, text) = send_with_headers(
        s,
        &reader,
        Method::GET,
        Surface::Iceberg,
        &load,
        b"",
        &delegation,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let config = serde_json::from_str::<Value>(&text).unwrap()["config"].clone();
    let ro = Creds {
        key: config["s3.access-key-id"].as_str().unwrap().into(),
        secret: config["s3.secret-access-key"].as_str().unwrap().into(),
        token: Some(config["s3.session-token"].as_str().unwrap().into()),
    };
    let (status, _) = send(
        s,
        &ro,
        Method::GET,
        Surface::S3,
        &format!("/{data_a}/data/x"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        s,
        &ro,
        Method::PUT,
        Surface::S3,
        &format!("/{data_a}/data/y"),
        b"y",
    )
    .await;
    assert_eq!(status, 403, "read-only vended credentials cannot write");

    // The credentials endpoint refreshes them; a user without access gets 403.
    let refreshed = must(
        s,
        &reader,
        Method::GET,
        Surface::Iceberg,
        &format!("{load}/credentials"),
        Value::Null,
    )
    .await;
    let fresh = &refreshed["storage-credentials"][0]["config"];
    assert_ne!(fresh["s3.access-key-id"], config["s3.access-key-id"]);
    let nobody = user(s, &root, "nobody", None).await;
    let (status, text) = send(
        s,
        &nobody,
        Method::GET,
        Surface::Iceberg,
        &format!("{load}/credentials"),
        b"",
    )
    .await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("ForbiddenException"), "{text}");
}

/// IAM secrets are sealed in the meta store: neither a user's secret access key nor a session's secret is in any
/// file under the data dir, and both still sign requests after a restart (read back from the store, not from a
/// cache).
#[tokio::test]
async fn secrets_are_sealed_in_the_meta_store() {
    let server = TestServer::start();
    let root = Creds::root();
    let ana = user(&server, &root, "ana", None).await;
    let (status, xml) = sts(&server, &ana, &[("Action", "GetSessionToken")]).await;
    assert_eq!(status, 200, "{xml}");
    let session = session_of(&xml);
    let caller = [("Action", "GetCallerIdentity"), ("Version", "2011-06-15")];
    for creds in [&ana, &session] {
        let (status, xml) = sts(&server, creds, &caller).await;
        assert_eq!(status, 200, "{xml}");
    }

    let data = server.stop();
    let stored = files(data.path());
    assert!(stored.iter().any(|f| f.ends_with("meta.db")), "{stored:?}");
    for file in &stored {
        let bytes = std::fs::read(file).unwrap();
        for secret in [&ana.secret, &session.secret] {
            assert!(
                !contains(&bytes, secret.as_bytes()),
                "{} holds a secret in clear",
                file.display()
            );
        }
    }

    let server = TestServer::start_in(data, &[]);
    for creds in [&ana, &session] {
        let (status, xml) = sts(&server, creds, &caller).await;
        assert_eq!(status, 200, "{xml}");
    }
}

/// A secret an earlier version stored in clear is sealed when the server starts, and still signs.
#[tokio::test]
async fn secrets_stored_in_clear_are_sealed_at_startup() {
    let data = TestServer::start().stop();
    let url = format!("sqlite://{}", data.path().join("meta.db").display());
    let meta = MetaStore::connect(&url).await.unwrap();
    let now = chrono::Utc::now();
    let old = Creds {
        key: "TBAKOLDCLEARTEXT0001".into(),
        secret: "old-secret-stored-in-clear-0123456789abc".into(),
        token: None,
    };
    meta.insert_credential(&CredentialRecord {
        access_key_id: old.key.clone(),
        secret: old.secret.clone(),
        account_id: ACCOUNT.to_string(),
        principal_kind: "root".to_string(),
        principal_name: String::new(),
        session_name: None,
        status: "Active".to_string(),
        session_token_sha256: None,
        session_policy: None,
        expires_at: None,
        created_at: now,
    })
    .await
    .unwrap();
    meta.close().await;

    let server = TestServer::start_in(data, &[]);
    let (status, xml) = sts(&server, &old, &[("Action", "GetCallerIdentity")]).await;
    assert_eq!(status, 200, "{xml}");
    let data = server.stop();
    let meta = MetaStore::connect(&url).await.unwrap();
    let record = meta.credential(&old.key).await.unwrap().unwrap();
    assert!(record.secret.starts_with("sealed1:"), "still in clear");
    assert!(!record.secret.contains(&old.secret));
    meta.close().await;
    drop(data);
}
