//! Issue 14, findings 1, 2, 7 and 8: how requests are read. Each test reproduces an attack of the adversarial
//! review of commit 0ab0efa against the real binary and checks the refusal and that the victim's table is
//! unchanged.
//!
//! - 1 and 2: a body that is not UTF-8 made authorization see no table (a transaction) or none in particular (a
//!   rename), while the handler read the body as Latin-1 and acted on the victim's table;
//! - 7: bodies were read (up to 32 MiB) before the request was authenticated;
//! - 8: an `Idempotency-Key` replay handed the vended credentials of the first answer to whoever replayed it.

use std::io::{Read, Write};
use std::time::Duration;

use http::{Method as M, Request};
use serde_json::{Value, json};

use crate::identity::{Iceberg, Tables};
use crate::server::{REGION, seg};
use crate::world::{Who, World, must, send};

/// A bucket of the `other` account with namespace `ns` and table `t` (with metadata), and its state as its owner
/// sees it through both surfaces.
struct Victim {
    bucket_arn: String,
    prefix: String,
}

impl Victim {
    async fn new(world: &World) -> Self {
        let (s, o) = (&world.server, &world.other);
        let bucket = must(s, o, M::PUT, Tables, "/buckets", json!({"name": "victim"})).await;
        let bucket_arn = bucket["arn"].as_str().unwrap().to_string();
        let b = seg(&bucket_arn);
        must(
            s,
            o,
            M::PUT,
            Tables,
            &format!("/namespaces/{b}"),
            json!({"namespace": ["ns"]}),
        )
        .await;
        must(
            s,
            o,
            M::POST,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables"),
            json!({"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": true}]}}),
        )
        .await;
        // A snapshot and its `main` branch: what the attack removed.
        let snapshot = json!({"action": "add-snapshot", "snapshot": {
            "snapshot-id": 7, "sequence-number": 1, "timestamp-ms": chrono::Utc::now().timestamp_millis() + 1000,
            "manifest-list": "s3://placeholder/ignored.avro", "summary": {"operation": "append"}, "schema-id": 0}});
        let table = must(
            s,
            o,
            M::GET,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables/t"),
            Value::Null,
        )
        .await;
        let location = table["metadata"]["location"].as_str().unwrap();
        let mut snapshot = snapshot;
        snapshot["snapshot"]["manifest-list"] = json!(format!("{location}/metadata/snap-7.avro"));
        must(
            s,
            o,
            M::POST,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables/t"),
            json!({"requirements": [], "updates": [snapshot,
                {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7}]}),
        )
        .await;
        Self {
            prefix: format!("{}.victim", o.account),
            bucket_arn,
        }
    }

    /// The table's metadata location, its refs and the names in its namespace, as its owner reads them.
    async fn state(&self, world: &World) -> (Value, Value, Value) {
        let (s, o) = (&world.server, &world.other);
        let b = seg(&self.bucket_arn);
        let location = must(
            s,
            o,
            M::GET,
            Tables,
            &format!("/tables/{b}/ns/t/metadata-location"),
            Value::Null,
        )
        .await;
        let table = must(
            s,
            o,
            M::GET,
            Iceberg,
            &format!("/iceberg/v1/{b}/namespaces/ns/tables/t"),
            Value::Null,
        )
        .await;
        let names = must(
            s,
            o,
            M::GET,
            Tables,
            &format!("/tables/{b}?namespace=ns"),
            Value::Null,
        )
        .await;
        let names: Vec<Value> = names["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        (
            location,
            table["metadata"]["refs"].clone(),
            Value::from(names),
        )
    }
}

/// A body with a trailing member whose string is not UTF-8 (the byte 0xFF).
fn with_bad_byte(json: &Value) -> Vec<u8> {
    let mut body = serde_json::to_vec(json).unwrap();
    body.pop();
    body.extend_from_slice(b",\"x\":\"\xff\"}");
    body
}

/// Finding 1: a user with no policies sends a transaction that removes the `main` ref of another account's table,
/// with a trailing member that is not UTF-8. It was 204 and the table lost its branch.
#[tokio::test]
async fn a_transaction_that_is_not_utf8_is_refused_and_changes_nothing() {
    let world = World::new().await;
    let victim = Victim::new(&world).await;
    let before = victim.state(&world).await;
    assert_eq!(before.1["main"]["snapshot-id"], 7, "{before:?}");
    let change = json!({"table-changes": [{
        "identifier": {"namespace": ["ns"], "name": "t"},
        "requirements": [],
        "updates": [{"action": "remove-snapshot-ref", "ref-name": "main"}]}]});
    let path = format!("/iceberg/v1/{}/transactions/commit", victim.prefix);
    for who in [&world.bob, &world.ana] {
        let (status, text) = send(
            &world.server,
            who,
            M::POST,
            Iceberg,
            &path,
            &with_bad_byte(&change),
        )
        .await;
        assert_eq!(status, 400, "{text}");
        assert!(text.contains("BadRequestException"), "{text}");
        // The same change as valid JSON is refused for want of rights, not applied.
        let (status, text) = send(
            &world.server,
            who,
            M::POST,
            Iceberg,
            &path,
            &serde_json::to_vec(&change).unwrap(),
        )
        .await;
        assert_eq!(status, 403, "{text}");
    }
    assert_eq!(victim.state(&world).await, before);
}

/// Finding 2: the same trick on `POST …/tables/rename` authorized against `<bucket>/table/*`, past an explicit
/// Deny on the table.
#[tokio::test]
async fn a_rename_that_is_not_utf8_is_refused_and_changes_nothing() {
    let world = World::new().await;
    let victim = Victim::new(&world).await;
    // The owner lets bob of its own account rename tables, but denies it on this one.
    let bob = &world.other;
    let allow_all = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]});
    let carl = Who::user(&world.server, bob, "carl", Some(allow_all)).await;
    let table = must(
        &world.server,
        bob,
        M::GET,
        Tables,
        &format!(
            "/get-table?tableBucketARN={}&namespace=ns&name=t",
            seg(&victim.bucket_arn)
        ),
        Value::Null,
    )
    .await;
    let table_arn = table["tableARN"].as_str().unwrap();
    must(&world.server, bob, M::PUT, Tables,
        &format!("/tables/{}/ns/t/policy", seg(&victim.bucket_arn)),
        json!({"resourcePolicy": json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny",
            "Principal": {"AWS": carl.arn}, "Action": "s3tables:RenameTable", "Resource": table_arn}]}).to_string()})).await;
    let before = victim.state(&world).await;
    let rename = json!({"source": {"namespace": ["ns"], "name": "t"},
                        "destination": {"namespace": ["ns"], "name": "stolen"}});
    let path = format!("/iceberg/v1/{}/tables/rename", victim.prefix);
    let (status, text) = send(
        &world.server,
        &carl,
        M::POST,
        Iceberg,
        &path,
        &with_bad_byte(&rename),
    )
    .await;
    assert_eq!(status, 400, "{text}");
    let (status, text) = send(
        &world.server,
        &carl,
        M::POST,
        Iceberg,
        &path,
        &serde_json::to_vec(&rename).unwrap(),
    )
    .await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("explicit deny"), "{text}");
    assert_eq!(victim.state(&world).await, before);
}

/// Java 1.10 sends its bodies as ISO-8859-1 while it signs their UTF-8 (reference trap 19): such a body is read
/// as the text its signature covers. The same bytes under a bearer token, which covers no body, are a 400.
#[tokio::test]
async fn latin1_bodies_are_read_as_their_signature_says() {
    let world = World::new().await;
    let (s, o) = (&world.server, &world.other);
    let bucket = must(s, o, M::PUT, Tables, "/buckets", json!({"name": "latin"})).await;
    let prefix = seg(bucket["arn"].as_str().unwrap());
    let json_text = "{\"namespace\":[\"cafe\"],\"properties\":{\"comment\":\"caf\u{e9}\"}}";
    let latin1: Vec<u8> = json_text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    assert!(std::str::from_utf8(&latin1).is_err());
    let url = format!("{}/iceberg/v1/{prefix}/namespaces", s.tables_url);
    let (mut parts, ()) = Request::builder()
        .method(M::POST)
        .uri(&url)
        .header("content-type", "application/json")
        .body(())
        .unwrap()
        .into_parts();
    crate::server::sign(
        &mut parts,
        json_text.as_bytes(),
        &o.key,
        &o.secret,
        "osstables",
    );
    let response = s.send_parts(parts, &latin1).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-request-id"));
    let namespace = must(
        s,
        o,
        M::GET,
        Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/cafe"),
        Value::Null,
    )
    .await;
    assert_eq!(namespace["properties"]["comment"], "caf\u{e9}");

    // A bearer token does not cover the body: the same Latin-1 bytes are not UTF-8 JSON.
    let token: Value = s
        .http
        .post(format!("{}/iceberg/v1/oauth/tokens", s.tables_url))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", o.key.as_str()),
            ("client_secret", o.secret.as_str()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let other = json_text.replace("cafe", "cafe2");
    let latin1: Vec<u8> = other
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    let response = s
        .http
        .post(&url)
        .bearer_auth(token["access_token"].as_str().unwrap())
        .header("content-type", "application/json")
        .body(latin1)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let (status, _) = send(
        s,
        o,
        M::HEAD,
        Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/cafe2"),
        b"",
    )
    .await;
    assert_eq!(status, 404);
}

/// Sends request headers that announce a large body, sends none of it, and returns the status line the server
/// answers with before any body byte arrives (`None` if it waits for the body).
fn answer_without_body(tables_url: &str, head: &str) -> Option<String> {
    let addr = tables_url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(format!("{head}Host: {addr}\r\nContent-Length: 30000000\r\n\r\n").as_bytes())
        .unwrap();
    let mut buf = [0u8; 512];
    match stream.read(&mut buf) {
        Ok(n) if n > 0 => Some(
            String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()?
                .to_string(),
        ),
        _ => None,
    }
}

/// Finding 7: unauthenticated requests are answered before their body is read, whatever they announce.
#[tokio::test]
async fn requests_are_authenticated_before_their_body_is_read() {
    let world = World::new().await;
    let url = world.server.tables_url.clone();
    let cases = [
        // No credentials at all.
        "POST /iceberg/v1/111122223333.any/transactions/commit HTTP/1.1\r\nContent-Type: application/json\r\n"
            .to_string(),
        "PUT /buckets HTTP/1.1\r\n".to_string(),
        // A key that does not exist.
        format!(
            "POST /iceberg/v1/x/namespaces HTTP/1.1\r\nX-Amz-Date: {}\r\nAuthorization: AWS4-HMAC-SHA256 \
             Credential=AKIDNOSUCHKEY0000000/{}/{REGION}/osstables/aws4_request, SignedHeaders=host;x-amz-date, \
             Signature={}\r\n",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
            chrono::Utc::now().format("%Y%m%d"),
            "0".repeat(64)
        ),
        // A bearer token that is not one.
        "POST /iceberg/v1/x/namespaces HTTP/1.1\r\nAuthorization: Bearer forged\r\n".to_string(),
    ];
    let answers = tokio::task::spawn_blocking(move || {
        cases
            .iter()
            .map(|head| answer_without_body(&url, head))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for answer in answers {
        let line = answer.expect("the server waited for the body of an unauthenticated request");
        assert!(line.contains(" 403 ") || line.contains(" 401 "), "{line}");
    }
    // A known key whose request claims its payload hash is checked before the body too: a bad signature is refused
    // at once.
    let o = world.other.clone();
    let url = world.server.tables_url.clone();
    let head = {
        let (mut parts, ()) = Request::builder()
            .method(M::POST)
            .uri(format!("{url}/iceberg/v1/x/namespaces"))
            .header("x-amz-content-sha256", "a".repeat(64))
            .body(())
            .unwrap()
            .into_parts();
        crate::server::sign(&mut parts, b"{}", &o.key, "not-the-secret", "osstables");
        let mut head = "POST /iceberg/v1/x/namespaces HTTP/1.1\r\n".to_string();
        for (name, value) in &parts.headers {
            if name != http::header::HOST {
                head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
            }
        }
        head
    };
    let line = tokio::task::spawn_blocking(move || answer_without_body(&url, &head))
        .await
        .unwrap()
        .expect("the server waited for the body of a request whose signature it could check");
    assert!(line.contains(" 403 "), "{line}");
}

/// Finding 8: a create with vended credentials and an `Idempotency-Key` used to remember the credentials in
/// clear and replay them to anyone presenting the key. Remembered answers hold no secret; a replay vends afresh to
/// the same principal; another principal, or another body, is refused.
#[tokio::test]
async fn idempotent_replays_hold_no_secrets_and_belong_to_their_principal() {
    let world = World::new().await;
    let (s, o) = (&world.server, &world.other);
    let bucket = must(s, o, M::PUT, Tables, "/buckets", json!({"name": "vend"})).await;
    let prefix = seg(bucket["arn"].as_str().unwrap());
    must(
        s,
        o,
        M::PUT,
        Tables,
        &format!("/namespaces/{prefix}"),
        json!({"namespace": ["ns"]}),
    )
    .await;
    let body = serde_json::to_vec(
        &json!({"name": "t", "schema": {"type": "struct", "schema-id": 0,
        "fields": [{"id": 1, "name": "id", "type": "long", "required": true}]}}),
    )
    .unwrap();
    let path = format!("/iceberg/v1/{prefix}/namespaces/ns/tables");
    let create = |who: Who, body: Vec<u8>| {
        let url = format!("{}{path}", s.tables_url);
        async move {
            let (mut parts, ()) = Request::builder()
                .method(M::POST)
                .uri(url)
                .header("content-type", "application/json")
                .header("idempotency-key", "create-t-once")
                .header("x-iceberg-access-delegation", "vended-credentials")
                .body(())
                .unwrap()
                .into_parts();
            crate::server::sign(&mut parts, &body, &who.key, &who.secret, "osstables");
            let response = s.send_parts(parts, &body).await;
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        }
    };
    let (status, first) = create(o.clone(), body.clone()).await;
    assert_eq!(status, 200, "{first}");
    let first: Value = serde_json::from_str(&first).unwrap();
    let secret = first["config"]["s3.secret-access-key"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, again) = create(o.clone(), body.clone()).await;
    assert_eq!(status, 200, "{again}");
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["metadata-location"], first["metadata-location"]);
    let fresh = again["config"]["s3.secret-access-key"].as_str().unwrap();
    assert_ne!(fresh, secret, "a replay vends afresh");
    assert!(again["storage-credentials"].is_array());

    // Nothing the server keeps holds a vended secret.
    let db = std::fs::read(s.data_dir().join("meta.db")).unwrap();
    let wal = std::fs::read(s.data_dir().join("meta.db-wal")).unwrap_or_default();
    for secret in [secret.as_str(), fresh] {
        for file in [&db, &wal] {
            assert!(
                !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "a vended secret is stored in clear"
            );
        }
    }

    // Another principal of the same account may create tables, but may not replay this answer.
    let allow_all = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]});
    let dora = Who::user(s, o, "dora", Some(allow_all)).await;
    let (status, text) = create(dora, body.clone()).await;
    assert_eq!(status, 422, "{text}");
    assert!(!text.contains(&o.key), "{text}");
    // The same principal with another body under the same key.
    let mut other_body: Value = serde_json::from_slice(&body).unwrap();
    other_body["name"] = json!("u");
    let (status, text) = create(o.clone(), serde_json::to_vec(&other_body).unwrap()).await;
    assert_eq!(status, 422, "{text}");
    let (status, _) = send(
        s,
        o,
        M::HEAD,
        Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables/u"),
        b"",
    )
    .await;
    assert_eq!(status, 404);
}
