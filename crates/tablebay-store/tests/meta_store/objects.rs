//! Object rows and multipart uploads: visibility, replacement (the unlinked blobs handed back), conditional
//! writes, byte-ordered key ranges, part replacement, completion and abort, and the races that matter (parallel
//! overwrites of one key, a part upload racing completion).

use std::collections::{BTreeMap, BTreeSet};

use tablebay_store::StoreError;
use tablebay_store::meta::{
    BlobSegment, KeyRange, KeyStart, ObjectRecord, PartRecord, StoredChecksum, UploadRecord,
    WriteCondition,
};
use uuid::Uuid;

use crate::Env;
use crate::fixtures::*;

pub(crate) fn object(table_id: Uuid, key: &str, blob: &str) -> ObjectRecord {
    ObjectRecord {
        table_id,
        key: key.to_owned(),
        size: 11,
        etag: format!("etag-{blob}"),
        content_type: Some("text/plain".into()),
        headers: BTreeMap::from([("cache-control".into(), "no-cache".into())]),
        user_metadata: BTreeMap::from([("owner".into(), "me".into())]),
        checksum: Some(StoredChecksum {
            algorithm: "CRC32".into(),
            value: "DUoRhQ==".into(),
            kind: "FULL_OBJECT".into(),
        }),
        parts_count: None,
        blobs: vec![BlobSegment::plain(blob.to_owned(), 11)],
        created_at: at(0),
        modified_at: at(0),
    }
}

pub(crate) fn upload(table_id: Uuid, key: &str) -> UploadRecord {
    UploadRecord {
        upload_id: Uuid::new_v4().simple().to_string(),
        table_id,
        key: key.to_owned(),
        content_type: None,
        headers: BTreeMap::new(),
        user_metadata: BTreeMap::from([("k".into(), "v".into())]),
        checksum_algorithm: Some("CRC32C".into()),
        checksum_type: Some("COMPOSITE".into()),
        initiator: "arn:aws:iam::111122223333:root".into(),
        initiated_at: at(5),
    }
}

pub(crate) fn part(upload_id: &str, number: u32, blob: &str) -> PartRecord {
    PartRecord {
        upload_id: upload_id.to_owned(),
        part_number: number,
        size: 5 * 1024 * 1024,
        etag: format!("etag-{blob}"),
        checksum_algorithm: Some("CRC32C".into()),
        checksum_value: Some("AAAAAA==".into()),
        blob_key: blob.to_owned(),
        uploaded_at: at(6),
        encryption: None,
    }
}

pub(crate) async fn objects_put_get_overwrite(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    assert_eq!(
        store.table_owner(t.id).await.unwrap(),
        Some(("111122223333".to_owned(), t_bucket_name(store, &t).await))
    );
    assert_eq!(store.table_owner(Uuid::now_v7()).await.unwrap(), None);

    let first = object(t.id, "data/a.parquet", "blob-1");
    assert_eq!(
        store
            .put_object(&first, &WriteCondition::Always)
            .await
            .unwrap(),
        Vec::<BlobSegment>::new()
    );
    assert_eq!(
        store.object(t.id, "data/a.parquet").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.object(t.id, "data/b.parquet").await.unwrap(), None);
    assert_eq!(
        store
            .object(Uuid::now_v7(), "data/a.parquet")
            .await
            .unwrap(),
        None
    );

    // IfAbsent fails on an existing key and changes nothing.
    let second = ObjectRecord {
        modified_at: at(100),
        created_at: at(100),
        ..object(t.id, "data/a.parquet", "blob-2")
    };
    assert!(matches!(
        store.put_object(&second, &WriteCondition::IfAbsent).await,
        Err(StoreError::PreconditionFailed(_))
    ));
    assert!(matches!(
        store
            .put_object(&second, &WriteCondition::IfEtag("etag-other".into()))
            .await,
        Err(StoreError::PreconditionFailed(_))
    ));
    assert_eq!(
        store.object(t.id, "data/a.parquet").await.unwrap(),
        Some(first.clone())
    );

    // An overwrite hands back the replaced blobs and keeps the creation time.
    let replaced = store
        .put_object(&second, &WriteCondition::IfEtag("etag-blob-1".into()))
        .await
        .unwrap();
    assert_eq!(replaced, first.blobs);
    let stored = store.object(t.id, "data/a.parquet").await.unwrap().unwrap();
    assert_eq!(
        stored,
        ObjectRecord {
            created_at: first.created_at,
            ..second.clone()
        }
    );

    // A multipart layout with no checksum round-trips too.
    let multi = ObjectRecord {
        checksum: None,
        parts_count: Some(2),
        size: 30,
        blobs: vec![BlobSegment::plain("p1", 10), BlobSegment::plain("p2", 20)],
        ..object(t.id, "data/multi", "x")
    };
    store
        .put_object(&multi, &WriteCondition::IfAbsent)
        .await
        .unwrap();
    assert_eq!(store.object(t.id, "data/multi").await.unwrap(), Some(multi));
}

async fn t_bucket_name(
    store: &tablebay_store::MetaStore,
    t: &tablebay_store::meta::TableRecord,
) -> String {
    store.bucket_by_id(t.bucket_id).await.unwrap().unwrap().name
}

pub(crate) async fn objects_delete(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    assert_eq!(store.delete_object(t.id, "nope").await.unwrap(), None);
    let o = object(t.id, "k", "blob-1");
    store.put_object(&o, &WriteCondition::Always).await.unwrap();
    assert_eq!(store.delete_object(t.id, "k").await.unwrap(), Some(o));
    assert_eq!(store.object(t.id, "k").await.unwrap(), None);
    assert_eq!(store.delete_object(t.id, "k").await.unwrap(), None);

    // Many at once: the existing ones come back, missing ones are skipped.
    for key in ["m1", "m2", "m3"] {
        store
            .put_object(&object(t.id, key, key), &WriteCondition::Always)
            .await
            .unwrap();
    }
    let deleted = store
        .delete_objects(t.id, &["m1", "nope", "m3"])
        .await
        .unwrap();
    assert_eq!(names(&deleted, |o| &o.key), ["m1", "m3"]);
    assert_eq!(deleted[0].blobs[0].key, "m1");
    assert_eq!(
        names(
            &store
                .list_objects(t.id, KeyRange::default(), 10)
                .await
                .unwrap(),
            |o| &o.key
        ),
        ["m2"]
    );
    assert_eq!(store.delete_objects(t.id, &[]).await.unwrap(), Vec::new());
}

pub(crate) async fn objects_list_ranges(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    let other = one_table(store, "other").await;
    // Byte order: '-' < '/' < '0' < 'A' < '_' < 'a' < 'é' (U+00E9, two bytes) < '日'.
    let keys = [
        "a-b", "a/b", "a/c/d", "a0", "aB", "a_b", "ab", "aé", "a日", "b",
    ];
    for key in keys.iter().rev() {
        store
            .put_object(&object(t.id, key, key), &WriteCondition::Always)
            .await
            .unwrap();
    }
    store
        .put_object(&object(other.id, "a/b", "o"), &WriteCondition::Always)
        .await
        .unwrap();
    let list = |start: Option<KeyStart<'static>>, end: Option<&'static str>, limit: u32| async move {
        let rows = store
            .list_objects(t.id, KeyRange { start, end }, limit)
            .await
            .unwrap();
        names(&rows, |o| &o.key)
    };
    assert_eq!(list(None, None, 100).await, keys);
    assert_eq!(list(None, None, 2).await, ["a-b", "a/b"]);
    assert_eq!(
        list(Some(KeyStart::After("a/b")), None, 2).await,
        ["a/c/d", "a0"]
    );
    assert_eq!(
        list(Some(KeyStart::AtOrAfter("a/b")), None, 2).await,
        ["a/b", "a/c/d"]
    );
    // Everything under "a/": [a/, a0).
    assert_eq!(
        list(Some(KeyStart::AtOrAfter("a/")), Some("a0"), 100).await,
        ["a/b", "a/c/d"]
    );
    assert_eq!(
        list(Some(KeyStart::After("a_b")), Some("b"), 100).await,
        ["ab", "aé", "a日"]
    );
    assert_eq!(list(None, None, 0).await, Vec::<String>::new());
}

pub(crate) async fn multipart_parts_and_complete(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    let u = upload(t.id, "big");
    store.insert_upload(&u).await.unwrap();
    assert_already_exists(store.insert_upload(&u).await);
    assert_eq!(store.upload(&u.upload_id).await.unwrap(), Some(u.clone()));
    assert_eq!(store.upload("missing").await.unwrap(), None);

    assert_eq!(
        store.put_part(&part(&u.upload_id, 2, "p2")).await.unwrap(),
        None
    );
    assert_eq!(
        store.put_part(&part(&u.upload_id, 1, "p1")).await.unwrap(),
        None
    );
    assert_eq!(
        store.put_part(&part(&u.upload_id, 3, "p3")).await.unwrap(),
        None
    );
    // A re-upload replaces the part and hands back the old blob.
    assert_eq!(
        store.put_part(&part(&u.upload_id, 1, "p1b")).await.unwrap(),
        Some("p1".to_owned())
    );
    assert_not_found(store.put_part(&part("missing", 1, "x")).await);
    let listed = store.list_parts(&u.upload_id, 0, 100).await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|p| (p.part_number, p.blob_key.as_str()))
            .collect::<Vec<_>>(),
        [(1, "p1b"), (2, "p2"), (3, "p3")]
    );
    assert_eq!(listed[0], part(&u.upload_id, 1, "p1b"));
    assert_eq!(
        store.list_parts(&u.upload_id, 1, 1).await.unwrap()[0].part_number,
        2
    );

    let done = ObjectRecord {
        parts_count: Some(2),
        blobs: vec![BlobSegment::plain("p1b", 5), BlobSegment::plain("p2", 5)],
        ..object(t.id, "big", "unused")
    };
    // The caller validated a part that has since been replaced: Conflict, nothing changes.
    let stale = [(1, "p1".to_owned()), (2, "p2".to_owned())];
    assert_conflict(
        store
            .complete_upload(&u.upload_id, &stale, &done, &WriteCondition::Always)
            .await,
    );
    assert!(store.upload(&u.upload_id).await.unwrap().is_some());
    assert_eq!(store.object(t.id, "big").await.unwrap(), None);

    let expected = [(1, "p1b".to_owned()), (2, "p2".to_owned())];
    let completed = store
        .complete_upload(&u.upload_id, &expected, &done, &WriteCondition::Always)
        .await
        .unwrap();
    assert_eq!(completed.replaced, Vec::<BlobSegment>::new());
    assert_eq!(completed.unused_parts, ["p3"]);
    assert_eq!(store.object(t.id, "big").await.unwrap(), Some(done.clone()));
    assert_eq!(store.upload(&u.upload_id).await.unwrap(), None);
    assert_eq!(
        store.list_parts(&u.upload_id, 0, 100).await.unwrap(),
        Vec::new()
    );
    // Gone: completing again, uploading a part or aborting is NotFound.
    assert_not_found(
        store
            .complete_upload(&u.upload_id, &expected, &done, &WriteCondition::Always)
            .await,
    );
    assert_not_found(store.put_part(&part(&u.upload_id, 4, "p4")).await);
    assert_not_found(store.abort_upload(&u.upload_id).await);

    // Completing over an existing object hands back its blobs; IfAbsent refuses.
    let u2 = upload(t.id, "big");
    store.insert_upload(&u2).await.unwrap();
    store.put_part(&part(&u2.upload_id, 1, "q1")).await.unwrap();
    let again = ObjectRecord {
        blobs: vec![BlobSegment::plain("q1", 5)],
        ..done.clone()
    };
    let q = [(1, "q1".to_owned())];
    assert!(matches!(
        store
            .complete_upload(&u2.upload_id, &q, &again, &WriteCondition::IfAbsent)
            .await,
        Err(StoreError::PreconditionFailed(_))
    ));
    let completed = store
        .complete_upload(&u2.upload_id, &q, &again, &WriteCondition::Always)
        .await
        .unwrap();
    assert_eq!(completed.replaced, done.blobs);
}

pub(crate) async fn multipart_abort_list_and_expiry(env: Env) {
    let store = &env.store;
    let t = one_table(store, "t").await;
    let other = one_table(store, "other").await;
    let mut ids = BTreeMap::new();
    for (i, key) in ["b", "a/x", "a/y", "a/x", "c"].iter().enumerate() {
        let mut u = upload(t.id, key);
        u.initiated_at = at(i64::try_from(i).unwrap() * 1000);
        store.insert_upload(&u).await.unwrap();
        ids.entry(*key).or_insert_with(Vec::new).push(u.upload_id);
    }
    store
        .insert_upload(&UploadRecord {
            initiated_at: at(9000),
            ..upload(other.id, "a/x")
        })
        .await
        .unwrap();
    let list = |from: Option<&'static str>,
                end: Option<&'static str>,
                marker: Option<(&'static str, Option<String>)>,
                limit| async move {
        let marker = marker.as_ref().map(|(k, u)| (*k, u.as_deref()));
        store
            .list_uploads(t.id, from, end, marker, limit)
            .await
            .unwrap()
            .into_iter()
            .map(|u| (u.key, u.upload_id))
            .collect::<Vec<_>>()
    };
    let all = list(None, None, None, 100).await;
    assert_eq!(
        all.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["a/x", "a/x", "a/y", "b", "c"]
    );
    let mut ax = ids["a/x"].clone();
    ax.sort();
    assert_eq!(all[0].1, ax[0]);
    assert_eq!(list(Some("a/"), Some("a0"), None, 100).await.len(), 3);
    // Key marker alone skips every upload of that key; with an upload id, only those up to it.
    assert_eq!(list(None, None, Some(("a/x", None)), 100).await.len(), 3);
    assert_eq!(
        list(None, None, Some(("a/x", Some(ax[0].clone()))), 100)
            .await
            .len(),
        4
    );
    assert_eq!(list(None, None, None, 2).await.len(), 2);

    // Abort returns the parts' blobs.
    let b = &ids["b"][0];
    store.put_part(&part(b, 1, "b1")).await.unwrap();
    store.put_part(&part(b, 2, "b2")).await.unwrap();
    let mut keys = store.abort_upload(b).await.unwrap();
    keys.sort();
    assert_eq!(keys, ["b1", "b2"]);
    assert_eq!(store.upload(b).await.unwrap(), None);

    // Uploads started before a cutoff, oldest first: "b" (0 s) is gone; "a/x" at 1 s and "a/y" at 2 s remain.
    let old = store.uploads_started_before(at(2500), 100).await.unwrap();
    assert_eq!(old.len(), 2);
    assert_eq!(old[0], ids["a/x"][0]);
    assert_eq!(
        store
            .uploads_started_before(at(2500), 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store.uploads_started_before(at(-1), 100).await.unwrap(),
        Vec::<String>::new()
    );
}

/// Parallel overwrites of one key: every blob but the final row's is handed back exactly once, so none is
/// deleted twice and the visible one is never deleted.
pub(crate) async fn race_object_overwrites(env: Env) {
    let store = env.store.clone();
    let t = one_table(&store, "t").await;
    let writers = 8;
    let rounds = 10;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut unlinked = Vec::new();
            for r in 0..rounds {
                let o = object(t.id, "hot", &format!("blob-{w}-{r}"));
                loop {
                    match store.put_object(&o, &WriteCondition::Always).await {
                        Ok(replaced) => {
                            unlinked.extend(replaced.into_iter().map(|s| s.key));
                            break;
                        }
                        Err(StoreError::Conflict(_)) => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            unlinked
        }));
    }
    let mut unlinked = Vec::new();
    for task in tasks {
        unlinked.extend(task.await.unwrap());
    }
    let unique: BTreeSet<&String> = unlinked.iter().collect();
    assert_eq!(unique.len(), unlinked.len(), "a blob was handed back twice");
    assert_eq!(unlinked.len(), writers * rounds - 1);
    let current = store.object(t.id, "hot").await.unwrap().unwrap();
    assert!(!unique.contains(&current.blobs[0].key));
}

/// A part upload racing completion either lands before (and is then unused or used) or finds the upload gone;
/// it is never left attached to a completed upload.
pub(crate) async fn race_part_against_complete(env: Env) {
    let store = env.store.clone();
    let t = one_table(&store, "t").await;
    for round in 0..10 {
        let u = upload(t.id, "k");
        store.insert_upload(&u).await.unwrap();
        store
            .put_part(&part(&u.upload_id, 1, &format!("a{round}")))
            .await
            .unwrap();
        let late = {
            let store = store.clone();
            let id = u.upload_id.clone();
            tokio::spawn(
                async move { store.put_part(&part(&id, 2, &format!("late{round}"))).await },
            )
        };
        let done = ObjectRecord {
            blobs: vec![BlobSegment::plain(format!("a{round}"), 5)],
            ..object(t.id, "k", "x")
        };
        let completed = store
            .complete_upload(
                &u.upload_id,
                &[(1, format!("a{round}"))],
                &done,
                &WriteCondition::Always,
            )
            .await
            .unwrap();
        match late.await.unwrap() {
            // The late part committed first: completion found and returned it as unused.
            Ok(None) => assert_eq!(completed.unused_parts, [format!("late{round}")]),
            // It came after: the upload was gone.
            Err(StoreError::NotFound) => assert!(completed.unused_parts.is_empty()),
            other => panic!("{other:?}"),
        }
        assert!(
            store
                .list_parts(&u.upload_id, 0, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }
}

/// Encryption records survive the round trip through object and part rows, and key-check values are recorded
/// once, then compared.
pub(crate) async fn encryption_records_and_key_checks(env: Env) {
    use tablebay_store::encryption::{BlobEncryption, KeyId, KeyVersion, WrappedKey};
    use tablebay_store::meta::KeyCheck;
    let store = &env.store;
    let t = one_table(store, "t").await;
    let sealed = |version| BlobEncryption {
        data_key: WrappedKey {
            key: KeyVersion {
                id: KeyId::Kms("arn:aws:kms:us-east-1:111122223333:key/k".into()),
                version,
            },
            wrapped: "d3JhcHBlZA==".into(),
        },
        nonce_prefix: "0a0b0c0d".into(),
        chunk_bytes: 65536,
    };
    let u = upload(t.id, "k");
    store.insert_upload(&u).await.unwrap();
    store
        .put_part(&PartRecord {
            encryption: Some(sealed(2)),
            ..part(&u.upload_id, 1, "p1")
        })
        .await
        .unwrap();
    let parts = store.list_parts(&u.upload_id, 0, 10).await.unwrap();
    assert_eq!(parts[0].encryption, Some(sealed(2)));
    let mut record = object(t.id, "enc", "b1");
    record.blobs = vec![
        BlobSegment {
            key: "b1".into(),
            size: 11,
            encryption: Some(sealed(1)),
        },
        BlobSegment::plain("b2", 0),
    ];
    store
        .put_object(&record, &WriteCondition::Always)
        .await
        .unwrap();
    assert_eq!(
        store.object(t.id, "enc").await.unwrap().unwrap().blobs,
        record.blobs
    );

    assert_eq!(
        store.check_key("default", 1, "aaaa").await.unwrap(),
        KeyCheck::Recorded
    );
    assert_eq!(
        store.check_key("default", 1, "aaaa").await.unwrap(),
        KeyCheck::Matches
    );
    assert_eq!(
        store.check_key("default", 1, "bbbb").await.unwrap(),
        KeyCheck::Differs
    );
    assert_eq!(
        store.check_key("default", 2, "bbbb").await.unwrap(),
        KeyCheck::Recorded
    );
    assert_eq!(
        store.recorded_keys().await.unwrap(),
        vec![("default".to_string(), 1), ("default".to_string(), 2)]
    );
}
