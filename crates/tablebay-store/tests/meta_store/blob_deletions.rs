//! The queue of blobs to delete: every write that unlinks blobs queues them in its own transaction (due after
//! the grace period, or at once where nothing could still read them), a failed write queues nothing, claims lease
//! rows so that concurrent drainers never take one twice, and the queue survives a reconnect.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tablebay_store::MetaStore;
use tablebay_store::meta::{BlobSegment, ObjectRecord, UNLINKED_BLOB_GRACE, WriteCondition};

use crate::Env;
use crate::fixtures::*;
use crate::objects::{object, part, upload};

async fn queued(store: &MetaStore) -> Vec<(String, DateTime<Utc>)> {
    store.queued_blob_deletions(10_000).await.unwrap()
}

async fn queued_keys(store: &MetaStore) -> BTreeSet<String> {
    queued(store).await.into_iter().map(|(k, _)| k).collect()
}

fn keys(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|k| k.to_string()).collect()
}

fn grace() -> chrono::Duration {
    chrono::Duration::from_std(UNLINKED_BLOB_GRACE).unwrap()
}

pub(crate) async fn blob_deletions_follow_unlinking_writes(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    let before = Utc::now();

    // A new key unlinks nothing; an overwrite queues the replaced blob, due after the grace period.
    store
        .put_object(&object(t.id, "k", "k1"), &WriteCondition::Always)
        .await
        .unwrap();
    assert_eq!(queued(store).await, Vec::new());
    store
        .put_object(&object(t.id, "k", "k2"), &WriteCondition::Always)
        .await
        .unwrap();
    let rows = queued(store).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "k1");
    assert!(rows[0].1 >= before + grace() - chrono::Duration::seconds(1));
    assert!(rows[0].1 <= Utc::now() + grace());

    // A write that fails its condition queues nothing (and its blob is not the queue's business).
    assert!(
        store
            .put_object(&object(t.id, "k", "k3"), &WriteCondition::IfAbsent)
            .await
            .is_err()
    );
    assert!(
        store
            .put_object(
                &object(t.id, "k", "k3"),
                &WriteCondition::IfEtag("other".into())
            )
            .await
            .is_err()
    );
    assert_eq!(queued_keys(store).await, keys(&["k1"]));

    // Deletes, one and many; a missing key queues nothing.
    store.delete_object(t.id, "k").await.unwrap();
    store.delete_object(t.id, "k").await.unwrap();
    for (key, blob) in [("m1", "m1b"), ("m2", "m2b")] {
        store
            .put_object(&object(t.id, key, blob), &WriteCondition::Always)
            .await
            .unwrap();
    }
    store
        .delete_objects(t.id, &["m1", "m2", "none"])
        .await
        .unwrap();
    assert_eq!(queued_keys(store).await, keys(&["k1", "k2", "m1b", "m2b"]));

    // A replaced part, the parts a completion leaves out (due at once), the object it replaces, an abort's parts.
    let u = upload(t.id, "big");
    store.insert_upload(&u).await.unwrap();
    for (n, blob) in [(1, "p1"), (1, "p1b"), (2, "p2"), (3, "p3")] {
        store.put_part(&part(&u.upload_id, n, blob)).await.unwrap();
    }
    store
        .put_object(&object(t.id, "big", "old"), &WriteCondition::Always)
        .await
        .unwrap();
    let done = ObjectRecord {
        parts_count: Some(2),
        blobs: vec![BlobSegment::plain("p1b", 5), BlobSegment::plain("p2", 5)],
        ..object(t.id, "big", "unused")
    };
    let expected = [(1, "p1b".to_owned()), (2, "p2".to_owned())];
    store
        .complete_upload(&u.upload_id, &expected, &done, &WriteCondition::Always)
        .await
        .unwrap();
    let u2 = upload(t.id, "gone");
    store.insert_upload(&u2).await.unwrap();
    for n in 1..=450 {
        store
            .put_part(&part(&u2.upload_id, n, &format!("a{n}")))
            .await
            .unwrap();
    }
    store.abort_upload(&u2.upload_id).await.unwrap();
    let all = queued_keys(store).await;
    let mut want = keys(&["k1", "k2", "m1b", "m2b", "p1", "p3", "old"]);
    want.extend((1..=450).map(|n| format!("a{n}")));
    assert_eq!(all, want);
    // The visible object's blobs are never queued.
    assert!(!all.contains("p1b") && !all.contains("p2"));
    let due_now: Vec<String> = queued(store)
        .await
        .into_iter()
        .filter(|(_, due)| *due <= Utc::now())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        due_now,
        ["p3"],
        "unused parts are due at once, the rest after the grace period"
    );

    // Unreferenced-file removal's delete is due at once too.
    store
        .put_object(&object(t.id, "stale", "s1"), &WriteCondition::Always)
        .await
        .unwrap();
    let modified = store
        .object(t.id, "stale")
        .await
        .unwrap()
        .unwrap()
        .modified_at;
    store
        .delete_object_if_unmodified(t.id, "stale", modified)
        .await
        .unwrap();
    assert!(
        queued(store)
            .await
            .iter()
            .any(|(k, due)| k == "s1" && *due <= Utc::now())
    );

    // The queue is in the database: a new connection sees it.
    let again = MetaStore::connect(&env.url).await.unwrap();
    assert_eq!(queued_keys(&again).await.len(), want.len() + 1);
    again.close().await;
}

pub(crate) async fn blob_deletions_claim_retry_finish(env: Env) {
    let store = &env.store;
    let now = Utc::now();
    store
        .queue_blob_deletions(&["due-a", "due-b"], now - chrono::Duration::seconds(5))
        .await
        .unwrap();
    store
        .queue_blob_deletions(&["later"], now + chrono::Duration::seconds(100))
        .await
        .unwrap();
    // Queueing a key again keeps its row (and its due time).
    store
        .queue_blob_deletions(&["later"], now - chrono::Duration::seconds(100))
        .await
        .unwrap();
    store.queue_blob_deletions(&[], now).await.unwrap();

    let claimed = store.claim_blob_deletions(now, 10).await.unwrap();
    let names: BTreeSet<&str> = claimed.iter().map(|c| c.blob_key.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["due-a", "due-b"]));
    assert!(claimed.iter().all(|c| c.attempts == 1));
    // Leased: not claimed again until the lease runs out; then with the attempt counted.
    assert_eq!(
        store.claim_blob_deletions(now, 10).await.unwrap(),
        Vec::new()
    );
    let later = now + chrono::Duration::seconds(61);
    let again = store.claim_blob_deletions(later, 1).await.unwrap();
    assert_eq!(again.len(), 1, "the limit holds");
    assert_eq!(again[0].attempts, 2);

    // A failed deletion goes back with a new due time; a finished one is gone for good.
    store
        .retry_blob_deletion(&again[0].blob_key, now + chrono::Duration::seconds(10))
        .await
        .unwrap();
    store
        .finish_blob_deletions(&["due-a", "due-b"])
        .await
        .unwrap();
    store.finish_blob_deletions(&[]).await.unwrap();
    assert_eq!(queued_keys(store).await, keys(&["later"]));
    assert_eq!(
        store
            .claim_blob_deletions(now + chrono::Duration::seconds(200), 10)
            .await
            .unwrap()
            .len(),
        1
    );

    // Several drainers at once: each due row is claimed by exactly one of them.
    let many: Vec<String> = (0..300).map(|i| format!("m{i:03}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    store
        .queue_blob_deletions(&refs, now - chrono::Duration::seconds(1))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = store.claim_blob_deletions(now, 7).await.unwrap();
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch.into_iter().map(|c| c.blob_key));
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "a deletion was claimed twice");
    assert_eq!(all.len(), many.len());
}
