//! Issue 15 point 4: an `Idempotency-Key` answer is remembered in the same transaction as the commit it
//! answers. Identical keyed requests that arrive together apply once, and every one of them gets the same answer
//! (before, a retry that raced the first request was rebased and applied again, or failed).

use http::{Method, Request};
use serde_json::{Value, json};

use crate::server::{REGION, TestServer, seg};
use crate::world::{Surface, Who, World, must};

/// Sends `copies` identical requests with one `Idempotency-Key` at once; their statuses and bodies.
async fn at_once(
    server: &TestServer,
    who: &Who,
    path: &str,
    body: &Value,
    key: &str,
    copies: usize,
) -> Vec<(u16, String)> {
    let body = serde_json::to_vec(body).unwrap();
    let mut requests = Vec::new();
    for _ in 0..copies {
        let (mut parts, ()) = Request::builder()
            .method(Method::POST)
            .uri(format!("{}{path}", server.tables_url))
            .header("content-type", "application/json")
            .header("idempotency-key", key)
            .body(())
            .unwrap()
            .into_parts();
        tablebay_auth::signer::sign(
            &mut parts,
            &body,
            &who.key,
            &who.secret,
            REGION,
            "osstables",
            chrono::Utc::now(),
        )
        .unwrap();
        let body = body.clone();
        requests.push(async move {
            let response = server.send_parts(parts, &body).await;
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        });
    }
    futures::future::join_all(requests).await
}

/// A bucket `idem` with namespace `ns` and table `t`; its Iceberg prefix.
async fn table(world: &World) -> String {
    let (s, o) = (&world.server, &world.owner);
    let bucket = must(
        s,
        o,
        Method::PUT,
        Surface::Tables,
        "/buckets",
        json!({"name": "idem"}),
    )
    .await;
    let prefix = seg(bucket["arn"].as_str().unwrap());
    must(
        s,
        o,
        Method::PUT,
        Surface::Tables,
        &format!("/namespaces/{prefix}"),
        json!({"namespace": ["ns"]}),
    )
    .await;
    must(
        s,
        o,
        Method::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables"),
        json!({"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": true}]}}),
    )
    .await;
    prefix
}

async fn load(world: &World, prefix: &str) -> Value {
    must(
        &world.server,
        &world.owner,
        Method::GET,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables/t"),
        Value::Null,
    )
    .await
}

/// An append of snapshot `id` (no requirements: a lost race is rebased, which is what could apply it twice).
fn append(location: &str, id: i64) -> Value {
    json!({"requirements": [], "updates": [
        {"action": "add-snapshot", "snapshot": {"snapshot-id": id, "sequence-number": 1,
            "timestamp-ms": chrono::Utc::now().timestamp_millis() + 1000,
            "manifest-list": format!("{location}/metadata/snap-{id}.avro"),
            "summary": {"operation": "append"}, "schema-id": 0}},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}]})
}

#[tokio::test]
async fn identical_keyed_commits_at_once_apply_once() {
    let world = World::new().await;
    let prefix = table(&world).await;
    let before = load(&world, &prefix).await;
    let location = before["metadata"]["location"].as_str().unwrap().to_string();
    let log_before = before["metadata"]["metadata-log"]
        .as_array()
        .map_or(0, Vec::len);
    let path = format!("/iceberg/v1/{prefix}/namespaces/ns/tables/t");
    let answers = at_once(
        &world.server,
        &world.owner,
        &path,
        &append(&location, 42),
        "append-42",
        8,
    )
    .await;
    let first = &answers[0].1;
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body, first, "every copy gets the one answer");
    }
    let after = load(&world, &prefix).await;
    let snapshots = after["metadata"]["snapshots"].as_array().unwrap();
    assert_eq!(
        snapshots
            .iter()
            .filter(|s| s["snapshot-id"] == 42)
            .count(),
        1
    );
    assert_eq!(
        after["metadata"]["metadata-log"]
            .as_array()
            .map_or(0, Vec::len),
        log_before + 1,
        "the commit applied once"
    );
    let answer: Value = serde_json::from_str(first).unwrap();
    assert_eq!(answer["metadata-location"], after["metadata-location"]);

    // The same for a transaction, and its answer is its 204.
    let transaction = json!({"table-changes": [{
        "identifier": {"namespace": ["ns"], "name": "t"},
        "requirements": [],
        "updates": [{"action": "set-properties", "updates": {"appended": "43"}},
                    append(&location, 43)["updates"][0].clone(),
                    append(&location, 43)["updates"][1].clone()]}]});
    let answers = at_once(
        &world.server,
        &world.owner,
        &format!("/iceberg/v1/{prefix}/transactions/commit"),
        &transaction,
        "transaction-43",
        8,
    )
    .await;
    for (status, body) in &answers {
        assert_eq!(*status, 204, "{body}");
    }
    let again = load(&world, &prefix).await;
    assert_eq!(
        again["metadata"]["metadata-log"]
            .as_array()
            .map_or(0, Vec::len),
        log_before + 2
    );
}

#[tokio::test]
async fn identical_keyed_creates_at_once_answer_alike() {
    let world = World::new().await;
    let prefix = table(&world).await;
    let create = json!({"name": "u", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true}]}});
    let answers = at_once(
        &world.server,
        &world.owner,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables"),
        &create,
        "create-u",
        4,
    )
    .await;
    let locations: Vec<Value> = answers
        .iter()
        .map(|(status, body)| {
            assert_eq!(*status, 200, "{body}");
            serde_json::from_str::<Value>(body).unwrap()["metadata-location"].clone()
        })
        .collect();
    assert!(locations.iter().all(|l| l == &locations[0]), "{locations:?}");
}
