//! One case per store method (or family) of buckets, namespaces and attributes: results, `NotFound`, `Conflict`
//! and `AlreadyExists`, pagination.

use std::collections::BTreeMap;

use tablebay_store::MetaStore;
use tablebay_store::meta::{AttributeKey, BucketRecord};
use uuid::Uuid;

use crate::Env;
use crate::fixtures::*;

pub(crate) async fn reconnect_keeps_data(env: Env) {
    let b = bucket("111122223333", "kept");
    env.store.insert_bucket(&b).await.unwrap();
    // A second connect re-runs the (already applied) migrations and sees the same rows.
    let again = MetaStore::connect(&env.url).await.unwrap();
    assert_eq!(again.bucket_by_id(b.id).await.unwrap(), Some(b));
    again.close().await;
}

pub(crate) async fn buckets_insert_and_get(env: Env) {
    let store = &env.store;
    let b = bucket("111122223333", "analytics");
    store.insert_bucket(&b).await.unwrap();
    assert_eq!(store.bucket_by_id(b.id).await.unwrap(), Some(b.clone()));
    assert_eq!(
        store
            .bucket_by_name("111122223333", "analytics")
            .await
            .unwrap(),
        Some(b.clone())
    );
    assert_eq!(
        store.bucket_by_name("111122223333", "other").await.unwrap(),
        None
    );
    assert_eq!(
        store
            .bucket_by_name("999999999999", "analytics")
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.bucket_by_id(Uuid::now_v7()).await.unwrap(), None);

    // Same name in the same account: AlreadyExists; in another account: fine.
    assert_already_exists(
        store
            .insert_bucket(&bucket("111122223333", "analytics"))
            .await,
    );
    store
        .insert_bucket(&bucket("999999999999", "analytics"))
        .await
        .unwrap();
    // Same id again: AlreadyExists too.
    assert_already_exists(
        store
            .insert_bucket(&BucketRecord {
                name: "fresh".into(),
                ..b
            })
            .await,
    );
}

pub(crate) async fn buckets_list_pagination(env: Env) {
    let store = &env.store;
    for name in TRICKY_NAMES {
        store
            .insert_bucket(&bucket("111122223333", name))
            .await
            .unwrap();
    }
    store
        .insert_bucket(&bucket("999999999999", "aa-other-account"))
        .await
        .unwrap();
    let list = |prefix: Option<&'static str>, after: Option<String>, limit: u32| async move {
        let rows = store
            .list_buckets("111122223333", prefix, after.as_deref(), limit)
            .await
            .unwrap();
        assert!(rows.iter().all(|b| b.account_id == "111122223333"));
        names(&rows, |b| &b.name)
    };

    assert_eq!(list(None, None, 100).await, TRICKY_NAMES);
    assert_eq!(list(None, None, 3).await, ["a%b", "a-b", "a0"]);
    assert_eq!(list(None, Some("aB".into()), 3).await, ["a_b", "aa", "ab"]);
    assert_eq!(
        list(None, Some("a_".into()), 100).await,
        ["a_b", "aa", "ab", "abc", "b"]
    );
    assert_eq!(
        list(None, Some("b".into()), 100).await,
        Vec::<String>::new()
    );
    assert_eq!(list(None, None, 0).await, Vec::<String>::new());
    assert_eq!(list(Some("a_"), None, 100).await, ["a_b"]);
    assert_eq!(list(Some("a%"), None, 100).await, ["a%b"]);
    assert_eq!(list(Some("ab"), None, 100).await, ["ab", "abc"]);
    assert_eq!(list(Some("ab"), Some("ab".into()), 100).await, ["abc"]);
    assert_eq!(list(Some("A"), None, 100).await, Vec::<String>::new());
    assert_eq!(list(Some(""), None, 100).await, TRICKY_NAMES);
    for limit in 1..=4 {
        assert_eq!(
            paginate(limit, |after, limit| list(None, after, limit)).await,
            TRICKY_NAMES,
            "limit {limit}"
        );
        assert_eq!(
            paginate(limit, |after, limit| list(Some("a"), after, limit)).await,
            TRICKY_NAMES[..8]
        );
    }
}

pub(crate) async fn buckets_delete(env: Env) {
    let store = &env.store;
    assert_not_found(store.delete_bucket(Uuid::now_v7()).await);

    let (b, ns) = bucket_with_namespace(store).await;
    store
        .set_attribute(b.id, AttributeKey::Policy, r#"{"Version":"2012-10-17"}"#)
        .await
        .unwrap();
    store
        .set_attribute(b.id, AttributeKey::Encryption, "{}")
        .await
        .unwrap();
    assert_conflict(store.delete_bucket(b.id).await);
    assert_eq!(store.bucket_by_id(b.id).await.unwrap(), Some(b.clone()));

    store.delete_namespace(ns.id).await.unwrap();
    store.delete_bucket(b.id).await.unwrap();
    assert_eq!(store.bucket_by_id(b.id).await.unwrap(), None);
    assert_eq!(
        store.attribute(b.id, AttributeKey::Policy).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .attribute(b.id, AttributeKey::Encryption)
            .await
            .unwrap(),
        None
    );
    assert_not_found(store.delete_bucket(b.id).await);
    // The name is free again.
    store
        .insert_bucket(&bucket("111122223333", "bucket"))
        .await
        .unwrap();
}

pub(crate) async fn namespaces_insert_and_get(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    assert_eq!(
        store.namespace_by_name(b.id, "ns").await.unwrap(),
        Some(ns.clone())
    );
    assert_eq!(store.namespace_by_name(b.id, "other").await.unwrap(), None);
    assert_eq!(
        store.namespace_by_name(Uuid::now_v7(), "ns").await.unwrap(),
        None
    );

    assert_already_exists(store.insert_namespace(&namespace(b.id, "ns")).await);
    assert_not_found(
        store
            .insert_namespace(&namespace(Uuid::now_v7(), "orphan"))
            .await,
    );

    // Same name in another bucket: fine.
    let other = bucket("111122223333", "other");
    store.insert_bucket(&other).await.unwrap();
    store
        .insert_namespace(&namespace(other.id, "ns"))
        .await
        .unwrap();

    let mut with_props = namespace(b.id, "props");
    with_props
        .properties
        .insert("owner".into(), "data-team".into());
    with_props
        .properties
        .insert("quote\"d".into(), "uni\u{e7}ode".into());
    store.insert_namespace(&with_props).await.unwrap();
    assert_eq!(
        store.namespace_by_name(b.id, "props").await.unwrap(),
        Some(with_props)
    );
}

pub(crate) async fn namespaces_list_pagination(env: Env) {
    let store = &env.store;
    let b = bucket("111122223333", "bucket");
    store.insert_bucket(&b).await.unwrap();
    let other = bucket("111122223333", "other");
    store.insert_bucket(&other).await.unwrap();
    store
        .insert_namespace(&namespace(other.id, "aa-elsewhere"))
        .await
        .unwrap();
    for name in TRICKY_NAMES {
        store
            .insert_namespace(&namespace(b.id, name))
            .await
            .unwrap();
    }
    let list = |prefix: Option<&'static str>, after: Option<String>, limit: u32| async move {
        let rows = store
            .list_namespaces(b.id, prefix, after.as_deref(), limit)
            .await
            .unwrap();
        assert!(rows.iter().all(|ns| ns.bucket_id == b.id));
        names(&rows, |ns| &ns.name)
    };
    assert_eq!(list(None, None, 100).await, TRICKY_NAMES);
    assert_eq!(list(Some("a_"), None, 100).await, ["a_b"]);
    assert_eq!(list(Some("a%"), None, 100).await, ["a%b"]);
    assert_eq!(list(Some("a"), Some("aa".into()), 2).await, ["ab", "abc"]);
    assert_eq!(list(None, None, 0).await, Vec::<String>::new());
    for limit in 1..=4 {
        assert_eq!(
            paginate(limit, |after, limit| list(None, after, limit)).await,
            TRICKY_NAMES
        );
    }
    assert!(
        store
            .list_namespaces(Uuid::now_v7(), None, None, 100)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn namespaces_properties(env: Env) {
    let store = &env.store;
    let (b, mut ns) = bucket_with_namespace(store).await;
    ns.properties = BTreeMap::from([("a".into(), "1".into()), ("b".into(), "2".into())]);
    store
        .set_namespace_properties(ns.id, &ns.properties)
        .await
        .unwrap();
    assert_eq!(
        store.namespace_by_name(b.id, "ns").await.unwrap(),
        Some(ns.clone())
    );
    // A replacement, not a merge.
    ns.properties = BTreeMap::from([("c".into(), "3".into())]);
    store
        .set_namespace_properties(ns.id, &ns.properties)
        .await
        .unwrap();
    assert_eq!(
        store.namespace_by_name(b.id, "ns").await.unwrap(),
        Some(ns.clone())
    );
    assert_eq!(
        store.list_namespaces(b.id, None, None, 10).await.unwrap(),
        [ns]
    );
    assert_not_found(
        store
            .set_namespace_properties(Uuid::now_v7(), &BTreeMap::new())
            .await,
    );
}

pub(crate) async fn namespaces_delete(env: Env) {
    let store = &env.store;
    assert_not_found(store.delete_namespace(Uuid::now_v7()).await);
    let (b, ns) = bucket_with_namespace(store).await;
    let t = table(&ns, "events");
    store.insert_table(&t).await.unwrap();
    assert_conflict(store.delete_namespace(ns.id).await);
    assert!(store.namespace_by_name(b.id, "ns").await.unwrap().is_some());

    store.delete_table(t.id, None).await.unwrap();
    store.delete_namespace(ns.id).await.unwrap();
    assert_eq!(store.namespace_by_name(b.id, "ns").await.unwrap(), None);
    assert_not_found(store.delete_namespace(ns.id).await);
}

pub(crate) async fn attributes_crud(env: Env) {
    use AttributeKey::{Policy, StorageClass};
    let store = &env.store;
    let get = async |r, key| store.attribute(r, key).await.unwrap();
    let set = async |r, key, value: &str| store.set_attribute(r, key, value).await.unwrap();
    let delete = async |r, key| store.delete_attribute(r, key).await.unwrap();
    let (r1, r2) = (Uuid::now_v7(), Uuid::now_v7());
    assert_eq!(get(r1, Policy).await, None);
    assert!(!delete(r1, Policy).await);

    set(r1, Policy, "p1").await;
    set(r1, StorageClass, "sc").await;
    set(r2, Policy, "p2").await;
    assert_eq!(get(r1, Policy).await.as_deref(), Some("p1"));
    set(r1, Policy, "p1'").await;
    assert_eq!(get(r1, Policy).await.as_deref(), Some("p1'"));
    assert_eq!(get(r1, StorageClass).await.as_deref(), Some("sc"));
    assert_eq!(get(r2, Policy).await.as_deref(), Some("p2"));

    assert!(delete(r1, Policy).await);
    assert!(!delete(r1, Policy).await);
    assert_eq!(get(r1, Policy).await, None);
    assert_eq!(get(r1, StorageClass).await.as_deref(), Some("sc"));
    assert_eq!(get(r2, Policy).await.as_deref(), Some("p2"));

    // Every key round-trips, with a large JSON value.
    let big = format!(
        "{{\"Statement\":[{}]}}",
        vec!["{\"Effect\":\"Allow\"}"; 2000].join(",")
    );
    for key in [
        AttributeKey::Policy,
        AttributeKey::Encryption,
        AttributeKey::Maintenance,
        AttributeKey::StorageClass,
        AttributeKey::Metrics,
        AttributeKey::Tags,
        AttributeKey::MaintenanceStatus,
    ] {
        store.set_attribute(r2, key, &big).await.unwrap();
        assert_eq!(
            store.attribute(r2, key).await.unwrap().as_deref(),
            Some(big.as_str()),
            "{key:?}"
        );
    }
}
