//! Table records: insert and get, listing, version-token swaps (single and all-or-nothing batches), rename and
//! delete.

use tablebay_store::meta::{AttributeKey, TableRecord};
use uuid::Uuid;

use crate::Env;
use crate::fixtures::*;

pub(crate) async fn tables_insert_and_get(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    let t = table(&ns, "events");
    store.insert_table(&t).await.unwrap();
    assert_eq!(store.table_by_id(t.id).await.unwrap(), Some(t.clone()));
    assert_eq!(
        store.table_by_name(ns.id, "events").await.unwrap(),
        Some(t.clone())
    );
    assert_eq!(store.table_by_name(ns.id, "other").await.unwrap(), None);
    assert_eq!(store.table_by_id(Uuid::now_v7()).await.unwrap(), None);

    // `namespace_name` is ignored on insert and filled from the join on reads.
    let mut t2 = table(&ns, "with_location");
    t2.namespace_name = "ignored".into();
    t2.metadata_location = Some("s3://x/metadata/00000.metadata.json".into());
    store.insert_table(&t2).await.unwrap();
    assert_eq!(
        store.table_by_id(t2.id).await.unwrap(),
        Some(TableRecord {
            namespace_name: "ns".into(),
            ..t2
        })
    );

    assert_already_exists(store.insert_table(&table(&ns, "events")).await);
    assert_not_found(
        store
            .insert_table(&table(&namespace(b.id, "missing"), "t"))
            .await,
    );
    // The namespace must be in the record's bucket.
    let other = bucket("111122223333", "other");
    store.insert_bucket(&other).await.unwrap();
    assert_not_found(
        store
            .insert_table(&TableRecord {
                bucket_id: other.id,
                ..table(&ns, "cross")
            })
            .await,
    );
    assert_eq!(store.table_by_name(ns.id, "cross").await.unwrap(), None);
}

pub(crate) async fn tables_list(env: Env) {
    let store = &env.store;
    let (b, ns_b) = bucket_with_namespace(store).await; // "ns"
    let ns_a = namespace(b.id, "alpha");
    let ns_c = namespace(b.id, "zeta");
    store.insert_namespace(&ns_a).await.unwrap();
    store.insert_namespace(&ns_c).await.unwrap();
    for (ns, name) in [
        (&ns_c, "a"),
        (&ns_b, "b_1"),
        (&ns_a, "x"),
        (&ns_b, "a"),
        (&ns_a, "b%1"),
        (&ns_b, "bx1"),
    ] {
        store.insert_table(&table(ns, name)).await.unwrap();
    }
    // A table in another bucket never shows.
    let other = one_table(store, "a").await;
    assert_ne!(other.bucket_id, b.id);

    let all_ns = [&ns_a, &ns_b, &ns_c];
    let list = |namespace_id: Option<Uuid>,
                prefix: Option<&'static str>,
                after: Option<(String, String)>,
                limit| async move {
        let after = after.as_ref().map(|(n, t)| (n.as_str(), t.as_str()));
        let rows = store
            .list_tables(b.id, namespace_id, prefix, after, limit)
            .await
            .unwrap();
        for row in &rows {
            assert_eq!(row.bucket_id, b.id);
            let ns = all_ns
                .into_iter()
                .find(|ns| ns.id == row.namespace_id)
                .unwrap();
            assert_eq!(row.namespace_name, ns.name);
        }
        rows.iter()
            .map(|t| format!("{}.{}", t.namespace_name, t.name))
            .collect::<Vec<_>>()
    };
    let everything = ["alpha.b%1", "alpha.x", "ns.a", "ns.b_1", "ns.bx1", "zeta.a"];
    assert_eq!(list(None, None, None, 100).await, everything);
    assert_eq!(list(None, None, None, 2).await, ["alpha.b%1", "alpha.x"]);
    assert_eq!(
        list(None, None, Some(("alpha".into(), "x".into())), 2).await,
        ["ns.a", "ns.b_1"]
    );
    assert_eq!(
        list(None, None, Some(("ns".into(), "b".into())), 100).await,
        ["ns.b_1", "ns.bx1", "zeta.a"]
    );
    assert_eq!(
        list(None, None, Some(("nt".into(), "".into())), 100).await,
        ["zeta.a"]
    );
    assert_eq!(list(None, Some("a"), None, 100).await, ["ns.a", "zeta.a"]);
    assert_eq!(list(None, Some("b_"), None, 100).await, ["ns.b_1"]);
    assert_eq!(list(None, Some("b%"), None, 100).await, ["alpha.b%1"]);
    assert_eq!(
        list(None, Some("a"), Some(("ns".into(), "a".into())), 100).await,
        ["zeta.a"]
    );
    assert_eq!(
        list(Some(ns_b.id), None, None, 100).await,
        ["ns.a", "ns.b_1", "ns.bx1"]
    );
    assert_eq!(
        list(Some(ns_b.id), Some("b"), None, 100).await,
        ["ns.b_1", "ns.bx1"]
    );
    assert_eq!(
        list(Some(ns_b.id), None, Some(("ns".into(), "a".into())), 1).await,
        ["ns.b_1"]
    );
    assert_eq!(
        list(Some(Uuid::now_v7()), None, None, 100).await,
        Vec::<String>::new()
    );
    assert_eq!(list(None, None, None, 0).await, Vec::<String>::new());

    // Page through with the last (namespace, table) pair as the cursor.
    for limit in 1..=4 {
        let mut all = Vec::new();
        let mut after: Option<(String, String)> = None;
        loop {
            let page = list(None, None, after.clone(), limit).await;
            let done = page.len() < limit as usize;
            if let Some(last) = page.last() {
                let (n, t) = last.split_once('.').unwrap();
                after = Some((n.to_owned(), t.to_owned()));
            }
            all.extend(page);
            if done {
                break;
            }
        }
        assert_eq!(all, everything, "limit {limit}");
    }
}

pub(crate) async fn tables_swap_single(env: Env) {
    let store = &env.store;
    let t = one_table(store, "events").await;
    store
        .swap_table_pointers(&[swap(t.id, "v0", "v1")])
        .await
        .unwrap();
    let after = store.table_by_id(t.id).await.unwrap().unwrap();
    assert_eq!(
        after,
        TableRecord {
            version_token: "v1".into(),
            metadata_location: Some("s3://bucket/metadata/v1.metadata.json".into()),
            modified_at: at(10),
            modified_by: "444455556666".into(),
            ..t.clone()
        }
    );
    // The old token is stale now.
    assert_conflict(store.swap_table_pointers(&[swap(t.id, "v0", "v2")]).await);
    assert_eq!(store.table_by_id(t.id).await.unwrap(), Some(after));
    assert_not_found(
        store
            .swap_table_pointers(&[swap(Uuid::now_v7(), "v0", "v1")])
            .await,
    );
    store.swap_table_pointers(&[]).await.unwrap();
}

pub(crate) async fn tables_swap_all_or_nothing(env: Env) {
    let store = &env.store;
    let (_, ns) = bucket_with_namespace(store).await;
    let tables: Vec<TableRecord> = (0..3).map(|i| table(&ns, &format!("t{i}"))).collect();
    for t in &tables {
        store.insert_table(t).await.unwrap();
    }
    let tokens = || async {
        let mut tokens = Vec::new();
        for t in &tables {
            tokens.push(token(store, t.id).await);
        }
        tokens
    };
    let [a, b, c] = [tables[0].id, tables[1].id, tables[2].id];

    // One stale token anywhere in the batch (first, middle or last): nothing moves.
    for stale in 0..3 {
        let mut batch = vec![
            swap(a, "v0", "v1"),
            swap(b, "v0", "v1"),
            swap(c, "v0", "v1"),
        ];
        batch[stale].expected_version_token = "nope".into();
        assert_conflict(store.swap_table_pointers(&batch).await);
        assert_eq!(tokens().await, ["v0", "v0", "v0"], "stale at {stale}");
        // Reversed order too.
        batch.reverse();
        assert_conflict(store.swap_table_pointers(&batch).await);
        assert_eq!(tokens().await, ["v0", "v0", "v0"]);
    }
    // A missing table anywhere: NotFound and nothing moves.
    let batch = [
        swap(a, "v0", "v1"),
        swap(Uuid::now_v7(), "v0", "v1"),
        swap(c, "v0", "v1"),
    ];
    assert_not_found(store.swap_table_pointers(&batch).await);
    assert_eq!(tokens().await, ["v0", "v0", "v0"]);

    // All current: all move.
    store
        .swap_table_pointers(&[
            swap(c, "v0", "c1"),
            swap(a, "v0", "a1"),
            swap(b, "v0", "b1"),
        ])
        .await
        .unwrap();
    assert_eq!(tokens().await, ["a1", "b1", "c1"]);
    // Two swaps of one table in one batch apply in the caller's order.
    store
        .swap_table_pointers(&[
            swap(a, "a1", "a2"),
            swap(b, "b1", "b2"),
            swap(a, "a2", "a3"),
        ])
        .await
        .unwrap();
    assert_eq!(tokens().await, ["a3", "b2", "c1"]);
    assert_conflict(
        store
            .swap_table_pointers(&[swap(a, "a3", "a4"), swap(a, "a3", "a5")])
            .await,
    );
    assert_eq!(tokens().await, ["a3", "b2", "c1"]);
}

pub(crate) async fn tables_rename(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    let other_ns = namespace(b.id, "other");
    store.insert_namespace(&other_ns).await.unwrap();
    let t = table(&ns, "events");
    store.insert_table(&t).await.unwrap();
    store.insert_table(&table(&ns, "taken")).await.unwrap();

    // Rename in place, checking the token.
    store
        .rename_table(
            t.id,
            ns.id,
            "events2",
            Some("v0"),
            "v1",
            at(20),
            "444455556666",
        )
        .await
        .unwrap();
    let renamed = store.table_by_id(t.id).await.unwrap().unwrap();
    assert_eq!(
        renamed,
        TableRecord {
            name: "events2".into(),
            version_token: "v1".into(),
            modified_at: at(20),
            modified_by: "444455556666".into(),
            ..t.clone()
        }
    );
    assert_eq!(store.table_by_name(ns.id, "events").await.unwrap(), None);

    // Move to another namespace without a token check.
    store
        .rename_table(
            t.id,
            other_ns.id,
            "events",
            None,
            "v2",
            at(21),
            "444455556666",
        )
        .await
        .unwrap();
    let moved = store
        .table_by_name(other_ns.id, "events")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (moved.id, moved.namespace_id, moved.namespace_name.as_str()),
        (t.id, other_ns.id, "other")
    );
    assert_eq!(
        (moved.bucket_id, moved.version_token.as_str()),
        (b.id, "v2")
    );

    // Stale token, name clash, missing table, missing namespace, namespace of another bucket.
    assert_conflict(
        store
            .rename_table(t.id, ns.id, "x", Some("v1"), "v3", at(22), "a")
            .await,
    );
    assert_already_exists(
        store
            .rename_table(t.id, ns.id, "taken", Some("v2"), "v3", at(22), "a")
            .await,
    );
    assert_not_found(
        store
            .rename_table(Uuid::now_v7(), ns.id, "x", None, "v3", at(22), "a")
            .await,
    );
    assert_not_found(
        store
            .rename_table(t.id, Uuid::now_v7(), "x", None, "v3", at(22), "a")
            .await,
    );
    let (_, foreign_ns) = {
        let fb = bucket("111122223333", "foreign");
        store.insert_bucket(&fb).await.unwrap();
        let fns = namespace(fb.id, "ns");
        store.insert_namespace(&fns).await.unwrap();
        (fb, fns)
    };
    assert_not_found(
        store
            .rename_table(t.id, foreign_ns.id, "x", None, "v3", at(22), "a")
            .await,
    );
    // None of the failures changed the row.
    assert_eq!(store.table_by_id(t.id).await.unwrap(), Some(moved));
}

pub(crate) async fn tables_delete(env: Env) {
    let store = &env.store;
    let (b, ns) = bucket_with_namespace(store).await;
    let t = table(&ns, "events");
    store.insert_table(&t).await.unwrap();
    store
        .swap_table_pointers(&[swap(t.id, "v0", "v1")])
        .await
        .unwrap();
    store
        .set_attribute(t.id, AttributeKey::Maintenance, "{}")
        .await
        .unwrap();
    store
        .set_attribute(t.id, AttributeKey::Tags, r#"{"k":"v"}"#)
        .await
        .unwrap();
    let current = store.table_by_id(t.id).await.unwrap().unwrap();

    assert_conflict(store.delete_table(t.id, Some("v0")).await);
    assert_eq!(
        store.table_by_id(t.id).await.unwrap(),
        Some(current.clone())
    );
    assert_eq!(store.delete_table(t.id, Some("v1")).await.unwrap(), current);
    assert_eq!(store.table_by_id(t.id).await.unwrap(), None);
    assert_eq!(
        store
            .attribute(t.id, AttributeKey::Maintenance)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.attribute(t.id, AttributeKey::Tags).await.unwrap(),
        None
    );
    assert_not_found(store.delete_table(t.id, None).await);
    assert_not_found(store.delete_table(t.id, Some("v1")).await);

    // Without a token; the namespace, then the bucket, become deletable.
    let t2 = table(&ns, "events");
    store.insert_table(&t2).await.unwrap();
    assert_eq!(store.delete_table(t2.id, None).await.unwrap(), t2);
    store.delete_namespace(ns.id).await.unwrap();
    store.delete_bucket(b.id).await.unwrap();
}
