//! The store under concurrency: compare-and-swap winners, no lost updates, no deadlocks, no orphans, and no
//! busy errors from transactions that read before they write.

use std::sync::Arc;

use tablebay_store::StoreError;
use tablebay_store::meta::AttributeKey;
use uuid::Uuid;

use crate::Env;
use crate::fixtures::*;

/// 16 tasks race to swap from the same token: exactly one wins, the others see `Conflict` (never a busy error).
pub(crate) async fn race_swaps_one_winner_per_token(env: Env) {
    let store = env.store;
    let t = one_table(&store, "hot").await;
    for round in 0..5 {
        let expected = format!("v{round}");
        let mut tasks = Vec::new();
        for task in 0..16 {
            let store = store.clone();
            let s = swap(t.id, &expected, &format!("v{}-{task}", round + 1));
            tasks.push(tokio::spawn(async move {
                store.swap_table_pointers(&[s]).await
            }));
        }
        let mut winners = Vec::new();
        for (task, handle) in tasks.into_iter().enumerate() {
            match handle.await.unwrap() {
                Ok(()) => winners.push(task),
                Err(StoreError::Conflict(_)) => {}
                Err(e) => panic!("task {task}: unexpected {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        let token = token(&store, t.id).await;
        assert_eq!(token, format!("v{}-{}", round + 1, winners[0]));
        // Normalise for the next round.
        store
            .swap_table_pointers(&[swap(t.id, &token, &format!("v{}", round + 1))])
            .await
            .unwrap();
    }
}

/// 8 tasks each commit 10 times with read-then-swap retries: every commit lands exactly once.
pub(crate) async fn race_swaps_no_lost_updates(env: Env) {
    let store = env.store;
    let t = one_table(&store, "counter").await;
    let mut tasks = Vec::new();
    for task in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0;
            for i in 0..10 {
                loop {
                    let current = store.table_by_id(t.id).await.unwrap().unwrap();
                    let n: u32 = current
                        .version_token
                        .trim_start_matches('v')
                        .split('-')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    let next = format!("v{}-{task}-{i}", n + 1);
                    match store
                        .swap_table_pointers(&[swap(t.id, &current.version_token, &next)])
                        .await
                    {
                        Ok(()) => break,
                        Err(StoreError::Conflict(_)) => conflicts += 1,
                        Err(e) => panic!("task {task}: unexpected {e:?}"),
                    }
                }
            }
            conflicts
        }));
    }
    for handle in tasks {
        handle.await.unwrap();
    }
    let token = token(&store, t.id).await;
    assert!(token.starts_with("v80-"), "{token}");
}

/// Multi-table swaps listing the same tables in opposite orders neither deadlock nor half-apply.
pub(crate) async fn race_multi_swaps_opposite_order(env: Env) {
    let store = env.store;
    let (_, ns) = bucket_with_namespace(&store).await;
    let (a, b) = (table(&ns, "a"), table(&ns, "b"));
    store.insert_table(&a).await.unwrap();
    store.insert_table(&b).await.unwrap();
    let mut tasks = Vec::new();
    for task in 0..16 {
        let store = store.clone();
        let (a, b) = (a.id, b.id);
        tasks.push(tokio::spawn(async move {
            let mut done = 0;
            while done < 5 {
                let ta = token(&store, a).await;
                let tb = token(&store, b).await;
                let new = format!("{task}-{done}");
                let mut batch = vec![swap(a, &ta, &new), swap(b, &tb, &new)];
                if task % 2 == 1 {
                    batch.reverse();
                }
                match store.swap_table_pointers(&batch).await {
                    Ok(()) => done += 1,
                    Err(StoreError::Conflict(_)) => {}
                    Err(e) => panic!("task {task}: unexpected {e:?}"),
                }
            }
        }));
    }
    for handle in tasks {
        handle.await.unwrap();
    }
    // Both tables always move together, so they end on the same token.
    let ta = token(&store, a.id).await;
    let tb = token(&store, b.id).await;
    assert_eq!(ta, tb);
}

/// Deleting a bucket while namespaces are being created in it: each side either wins or sees the documented
/// error, and no namespace survives without its bucket.
pub(crate) async fn race_delete_bucket_against_insert_namespace(env: Env) {
    let store = env.store;
    for round in 0..5 {
        let b = bucket("111122223333", &format!("b{round}"));
        store.insert_bucket(&b).await.unwrap();
        let inserted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..8 {
            let (store, inserted) = (store.clone(), inserted.clone());
            let ns = namespace(b.id, &format!("ns{i}"));
            tasks.push(tokio::spawn(async move {
                match store.insert_namespace(&ns).await {
                    Ok(()) => {
                        inserted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Err(StoreError::NotFound) => {}
                    Err(e) => panic!("insert_namespace: unexpected {e:?}"),
                }
            }));
        }
        let deleted = match store.delete_bucket(b.id).await {
            Ok(()) => true,
            Err(StoreError::Conflict(_)) => false,
            Err(e) => panic!("delete_bucket: unexpected {e:?}"),
        };
        for handle in tasks {
            handle.await.unwrap();
        }
        let left = store
            .list_namespaces(b.id, None, None, 100)
            .await
            .unwrap()
            .len();
        let exists = store.bucket_by_id(b.id).await.unwrap().is_some();
        assert_eq!(exists, !deleted, "round {round}");
        assert_eq!(
            left,
            inserted.load(std::sync::atomic::Ordering::SeqCst),
            "round {round}"
        );
        if deleted {
            assert_eq!(left, 0, "round {round}: namespaces outlived their bucket");
        }
    }
}

/// Deleting a namespace while tables are being created in it: the same invariant one level down.
pub(crate) async fn race_delete_namespace_against_insert_table(env: Env) {
    let store = env.store;
    let b = bucket("111122223333", "bucket");
    store.insert_bucket(&b).await.unwrap();
    for round in 0..5 {
        let ns = namespace(b.id, &format!("ns{round}"));
        store.insert_namespace(&ns).await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..8 {
            let store = store.clone();
            let t = table(&ns, &format!("t{i}"));
            tasks.push(tokio::spawn(async move {
                match store.insert_table(&t).await {
                    Ok(()) => true,
                    Err(StoreError::NotFound) => false,
                    Err(e) => panic!("insert_table: unexpected {e:?}"),
                }
            }));
        }
        let deleted = match store.delete_namespace(ns.id).await {
            Ok(()) => true,
            Err(StoreError::Conflict(_)) => false,
            Err(e) => panic!("delete_namespace: unexpected {e:?}"),
        };
        let mut inserted = 0;
        for handle in tasks {
            inserted += usize::from(handle.await.unwrap());
        }
        let left = store
            .list_tables(b.id, Some(ns.id), None, None, 100)
            .await
            .unwrap()
            .len();
        assert_eq!(left, inserted, "round {round}");
        assert_eq!(
            store
                .namespace_by_name(b.id, &ns.name)
                .await
                .unwrap()
                .is_some(),
            !deleted,
            "round {round}"
        );
        if deleted {
            assert_eq!(left, 0, "round {round}: tables outlived their namespace");
        }
    }
}

/// Concurrent upserts of one attribute all succeed; one of the values remains.
pub(crate) async fn race_attributes_upsert(env: Env) {
    let store = env.store;
    let id = Uuid::now_v7();
    let mut tasks = Vec::new();
    for task in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .set_attribute(id, AttributeKey::Tags, &task.to_string())
                .await
        }));
    }
    for handle in tasks {
        handle.await.unwrap().unwrap();
    }
    let value: u32 = store
        .attribute(id, AttributeKey::Tags)
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert!(value < 16);
}

/// Transactions that read before they write (rename_table, delete_namespace, delete_bucket) on unrelated rows
/// must all succeed under concurrency. On SQLite this needs `BEGIN IMMEDIATE`: a deferred transaction whose read
/// snapshot went stale fails with SQLITE_BUSY_SNAPSHOT at its first write, whatever the busy timeout (T13).
pub(crate) async fn race_read_then_write_transactions_succeed(env: Env) {
    let store = env.store;
    let (b, ns) = bucket_with_namespace(&store).await;
    let mut tables = Vec::new();
    let mut spare_namespaces = Vec::new();
    let mut spare_buckets = Vec::new();
    for i in 0..12 {
        let t = table(&ns, &format!("t{i}"));
        store.insert_table(&t).await.unwrap();
        tables.push(t);
        let spare = namespace(b.id, &format!("spare{i}"));
        store.insert_namespace(&spare).await.unwrap();
        spare_namespaces.push(spare);
        let empty = bucket("111122223333", &format!("empty{i}"));
        store.insert_bucket(&empty).await.unwrap();
        spare_buckets.push(empty);
    }
    let mut tasks = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let store = store.clone();
        let (id, ns_id) = (t.id, ns.id);
        tasks.push(tokio::spawn(async move {
            for round in 0..3 {
                let name = format!("t{i}-r{round}");
                store
                    .rename_table(id, ns_id, &name, None, &name, at(30), "a")
                    .await?;
            }
            Ok::<_, StoreError>(())
        }));
    }
    for spare in &spare_namespaces {
        let (store, id) = (store.clone(), spare.id);
        tasks.push(tokio::spawn(
            async move { store.delete_namespace(id).await },
        ));
    }
    for empty in &spare_buckets {
        let (store, id) = (store.clone(), empty.id);
        tasks.push(tokio::spawn(async move { store.delete_bucket(id).await }));
    }
    for (i, handle) in tasks.into_iter().enumerate() {
        handle
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("task {i}: {e:?}"));
    }
    let names: Vec<String> = store
        .list_tables(b.id, None, None, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    let mut want: Vec<String> = (0..12).map(|i| format!("t{i}-r2")).collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        store
            .list_namespaces(b.id, None, None, 100)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .list_buckets("111122223333", None, None, 100)
            .await
            .unwrap()
            .len(),
        1
    );
}
