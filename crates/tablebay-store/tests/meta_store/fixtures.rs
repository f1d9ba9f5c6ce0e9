//! Records and helpers shared by the cases: fixed millisecond timestamps, fresh ids, error-kind assertions and
//! a pager.

use std::collections::BTreeMap;
use std::future::Future;

use chrono::{DateTime, Utc};
use tablebay_store::meta::{BucketRecord, NamespaceRecord, PointerSwap, TableRecord};
use tablebay_store::{MetaStore, StoreError};
use uuid::Uuid;

/// A fixed time with millisecond precision (the stored precision), `offset_ms` after a base instant.
pub(crate) fn at(offset_ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_760_000_000_123 + offset_ms).unwrap()
}

pub(crate) fn bucket(account: &str, name: &str) -> BucketRecord {
    BucketRecord {
        id: Uuid::now_v7(),
        account_id: account.to_owned(),
        name: name.to_owned(),
        created_at: at(0),
    }
}

pub(crate) fn namespace(bucket_id: Uuid, name: &str) -> NamespaceRecord {
    NamespaceRecord {
        id: Uuid::now_v7(),
        bucket_id,
        name: name.to_owned(),
        created_at: at(1),
        created_by: "111122223333".to_owned(),
        properties: BTreeMap::new(),
    }
}

pub(crate) fn table(ns: &NamespaceRecord, name: &str) -> TableRecord {
    let id = Uuid::now_v7();
    TableRecord {
        id,
        bucket_id: ns.bucket_id,
        namespace_id: ns.id,
        namespace_name: ns.name.clone(),
        name: name.to_owned(),
        format: "ICEBERG".to_owned(),
        version_token: "v0".to_owned(),
        metadata_location: None,
        warehouse_location: format!("s3://{id}--table-s3"),
        created_at: at(2),
        created_by: "111122223333".to_owned(),
        modified_at: at(2),
        modified_by: "111122223333".to_owned(),
    }
}

pub(crate) fn swap(table_id: Uuid, expected: &str, new: &str) -> PointerSwap {
    PointerSwap {
        table_id,
        expected_version_token: expected.to_owned(),
        new_version_token: new.to_owned(),
        new_metadata_location: format!("s3://bucket/metadata/{new}.metadata.json"),
        modified_at: at(10),
        modified_by: "444455556666".to_owned(),
    }
}

/// A bucket with one namespace `ns`, inserted.
pub(crate) async fn bucket_with_namespace(store: &MetaStore) -> (BucketRecord, NamespaceRecord) {
    let b = bucket("111122223333", "bucket");
    store.insert_bucket(&b).await.unwrap();
    let ns = namespace(b.id, "ns");
    store.insert_namespace(&ns).await.unwrap();
    (b, ns)
}

/// A table `name` in a fresh bucket (of a random name) and namespace, inserted.
pub(crate) async fn one_table(store: &MetaStore, name: &str) -> TableRecord {
    let b = bucket("111122223333", &format!("b-{}", Uuid::new_v4().simple()));
    store.insert_bucket(&b).await.unwrap();
    let ns = namespace(b.id, "ns");
    store.insert_namespace(&ns).await.unwrap();
    let t = table(&ns, name);
    store.insert_table(&t).await.unwrap();
    t
}

/// The version token of table `id`, which must exist.
pub(crate) async fn token(store: &MetaStore, id: Uuid) -> String {
    store.table_by_id(id).await.unwrap().unwrap().version_token
}

pub(crate) fn names<T>(rows: &[T], name: impl Fn(&T) -> &str) -> Vec<String> {
    rows.iter().map(|r| name(r).to_owned()).collect()
}

#[track_caller]
pub(crate) fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::NotFound)),
        "want NotFound, got {result:?}"
    );
}

#[track_caller]
pub(crate) fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::Conflict(_))),
        "want Conflict, got {result:?}"
    );
}

#[track_caller]
pub(crate) fn assert_already_exists<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::AlreadyExists(_))),
        "want AlreadyExists, got {result:?}"
    );
}

/// Names chosen to catch LIKE wildcards (`%`, `_`), ASCII case folding and byte order (`-` < `0` < `A` < `_` < `a`).
pub(crate) const TRICKY_NAMES: [&str; 9] =
    ["a%b", "a-b", "a0", "aB", "a_b", "aa", "ab", "abc", "b"];

/// Pages through `list(prefix, after, limit)` `limit` rows at a time.
pub(crate) async fn paginate<F, Fut>(limit: u32, mut list: F) -> Vec<String>
where
    F: FnMut(Option<String>, u32) -> Fut,
    Fut: Future<Output = Vec<String>>,
{
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let page = list(after.clone(), limit).await;
        assert!(page.len() <= limit as usize);
        let done = page.len() < limit as usize;
        after = page.last().cloned();
        all.extend(page);
        if done {
            return all;
        }
    }
}
