//! The Iceberg REST catalog's rows: views (insert, list, pointer swap, rename, delete, and the namespace they
//! keep from being deleted) and idempotency records (first answer wins, expiry, sweep).

use chrono::Duration;
use tablebay_store::StoreError;
use tablebay_store::meta::{IdempotencyRecord, ViewRecord};
use uuid::Uuid;

use crate::Env;
use crate::fixtures::*;

fn view(ns: &tablebay_store::meta::NamespaceRecord, name: &str) -> ViewRecord {
    let id = Uuid::now_v7();
    ViewRecord {
        id,
        bucket_id: ns.bucket_id,
        namespace_id: ns.id,
        namespace_name: ns.name.clone(),
        name: name.to_owned(),
        version_token: "v0".to_owned(),
        metadata_location: format!("s3://{id}--table-s3/metadata/00000-x.metadata.json"),
        created_at: at(2),
        created_by: "111122223333".to_owned(),
        modified_at: at(2),
        modified_by: "111122223333".to_owned(),
    }
}

pub(crate) async fn views_crud(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    let v = view(&ns, "v1");
    store.insert_view(&v).await.unwrap();
    assert_eq!(
        store.view_by_name(ns.id, "v1").await.unwrap(),
        Some(v.clone())
    );
    assert_eq!(store.view_by_name(ns.id, "v2").await.unwrap(), None);
    assert_already_exists(
        store
            .insert_view(&ViewRecord {
                id: Uuid::now_v7(),
                ..v.clone()
            })
            .await,
    );
    // A namespace of another bucket, or a missing one, is NotFound.
    assert_not_found(
        store
            .insert_view(&ViewRecord {
                id: Uuid::now_v7(),
                namespace_id: Uuid::now_v7(),
                ..view(&ns, "x")
            })
            .await,
    );
    assert_not_found(
        store
            .insert_view(&ViewRecord {
                bucket_id: Uuid::now_v7(),
                ..view(&ns, "y")
            })
            .await,
    );

    for name in ["v3", "v2"] {
        store.insert_view(&view(&ns, name)).await.unwrap();
    }
    assert_eq!(
        names(&store.list_views(ns.id, None, 10).await.unwrap(), |v| &v
            .name),
        ["v1", "v2", "v3"]
    );
    assert_eq!(
        names(
            &store.list_views(ns.id, Some("v1"), 1).await.unwrap(),
            |v| &v.name
        ),
        ["v2"]
    );

    // The pointer swap is a compare-and-swap on the token.
    store
        .swap_view_pointer(v.id, "v0", "t1", "s3://x/1.json", at(5), "444455556666")
        .await
        .unwrap();
    assert!(matches!(
        store
            .swap_view_pointer(v.id, "v0", "t2", "s3://x/2.json", at(6), "x")
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_not_found(
        store
            .swap_view_pointer(Uuid::now_v7(), "v0", "t2", "s3://x/2.json", at(6), "x")
            .await,
    );
    let now = store.view_by_name(ns.id, "v1").await.unwrap().unwrap();
    assert_eq!(
        (
            now.version_token.as_str(),
            now.metadata_location.as_str(),
            now.modified_at
        ),
        ("t1", "s3://x/1.json", at(5))
    );

    // Rename within the bucket; onto a taken name; to a namespace of another bucket.
    let other_ns = namespace(b.id, "other");
    store.insert_namespace(&other_ns).await.unwrap();
    store
        .rename_view(v.id, other_ns.id, "moved", at(7), "x")
        .await
        .unwrap();
    assert_eq!(
        store
            .view_by_name(other_ns.id, "moved")
            .await
            .unwrap()
            .unwrap()
            .namespace_name,
        "other"
    );
    assert_already_exists(store.rename_view(v.id, ns.id, "v2", at(8), "x").await);
    let b2 = bucket("111122223333", "second");
    store.insert_bucket(&b2).await.unwrap();
    let foreign = namespace(b2.id, "ns");
    store.insert_namespace(&foreign).await.unwrap();
    assert_not_found(
        store
            .rename_view(v.id, foreign.id, "moved", at(8), "x")
            .await,
    );

    // A namespace holding a view is not empty.
    assert_conflict(store.delete_namespace(other_ns.id).await);
    let deleted = store.delete_view(v.id).await.unwrap();
    assert_eq!(deleted.name, "moved");
    assert_not_found(store.delete_view(v.id).await);
    store.delete_namespace(other_ns.id).await.unwrap();
}

fn record(key: &str, body: &str, offset_ms: i64) -> IdempotencyRecord {
    IdempotencyRecord {
        scope: "111122223333".to_owned(),
        key: key.to_owned(),
        fingerprint: "POST /iceberg/v1/p/namespaces".to_owned(),
        status: 200,
        body: body.to_owned(),
        created_at: at(offset_ms),
        expires_at: at(offset_ms) + Duration::hours(1),
    }
}

pub(crate) async fn idempotency_records(env: Env) {
    let store = &env.store;
    let first = record("k1", "first", 0);
    assert!(store.insert_idempotency_record(&first).await.unwrap());
    // The first answer wins.
    assert!(
        !store
            .insert_idempotency_record(&record("k1", "second", 10))
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .idempotency_record("111122223333", "k1", at(20))
            .await
            .unwrap(),
        Some(first.clone())
    );
    // Scopes do not share keys.
    assert_eq!(
        store
            .idempotency_record("444455556666", "k1", at(20))
            .await
            .unwrap(),
        None
    );
    // Expired: invisible, replaceable, swept.
    let later = at(0) + Duration::hours(2);
    assert_eq!(
        store
            .idempotency_record("111122223333", "k1", later)
            .await
            .unwrap(),
        None
    );
    let again = IdempotencyRecord {
        created_at: later,
        expires_at: later + Duration::hours(1),
        ..record("k1", "third", 0)
    };
    assert!(store.insert_idempotency_record(&again).await.unwrap());
    assert!(
        store
            .insert_idempotency_record(&record("k2", "old", 0))
            .await
            .unwrap()
    );
    assert_eq!(store.sweep_idempotency_records(later).await.unwrap(), 1);
    assert_eq!(
        store
            .idempotency_record("111122223333", "k1", later)
            .await
            .unwrap()
            .unwrap()
            .body,
        "third"
    );
}

pub(crate) async fn tables_by_path(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    let t = table(&ns, "t1");
    store.insert_table(&t).await.unwrap();
    let (bucket, found) = store
        .table_by_path("111122223333", "bucket", "ns", "t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((bucket, found), (b.clone(), t));
    for (account, bucket, namespace, name) in [
        ("999999999999", "bucket", "ns", "t1"),
        ("111122223333", "other", "ns", "t1"),
        ("111122223333", "bucket", "nx", "t1"),
        ("111122223333", "bucket", "ns", "t2"),
    ] {
        assert_eq!(
            store
                .table_by_path(account, bucket, namespace, name)
                .await
                .unwrap(),
            None,
            "{bucket}/{namespace}/{name}"
        );
    }
}
