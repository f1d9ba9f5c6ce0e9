//! The metadata store's behaviour, one suite run twice: against SQLite (a fresh file per test) and against
//! PostgreSQL (a fresh database per test, `CREATE DATABASE tb_<random>` on the server named by
//! `TABLEBAY_TEST_POSTGRES_URL`, dropped afterwards). Without that variable the Postgres variants are skipped with a
//! note; with it, a server that cannot be reached fails them (`tablebay_store::test_support`).
//! `scripts/postgres.sh start` prints a suitable URL.
//!
//! This file is the harness; `cases.rs` and `tables.rs` check each method's contract, `races.rs` its behaviour under concurrency,
//! and `fixtures.rs` builds the records both use.
// The whole target is test code, but clippy's `allow-*-in-tests` only covers `#[test]` functions, not the shared
// cases and fixtures in this target's modules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod blob_deletions;
mod cases;
mod fixtures;
mod iam;
mod iceberg;
mod jobs;
mod objects;
mod races;
mod tables;

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tablebay_store::MetaStore;
use tablebay_store::meta::Backend;
use tablebay_store::test_support::TestDatabase;

/// What each case gets: the store and the URL it was opened with (to reconnect).
pub(crate) struct Env {
    pub(crate) store: MetaStore,
    pub(crate) url: String,
}

/// Defines every case twice, `sqlite::<case>` and `postgres::<case>`.
macro_rules! suite {
    ($($module:ident :: $case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    crate::with_sqlite(crate::$module::$case).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    crate::with_postgres(crate::$module::$case).await;
                }
            )*
        }
    };
}

suite!(
    cases::reconnect_keeps_data,
    cases::buckets_insert_and_get,
    cases::buckets_list_pagination,
    cases::buckets_delete,
    cases::namespaces_insert_and_get,
    cases::namespaces_list_pagination,
    cases::namespaces_properties,
    cases::namespaces_delete,
    tables::tables_insert_and_get,
    tables::tables_list,
    tables::tables_swap_single,
    tables::tables_swap_all_or_nothing,
    tables::tables_rename,
    tables::tables_delete,
    cases::attributes_crud,
    races::race_swaps_one_winner_per_token,
    races::race_swaps_no_lost_updates,
    races::race_multi_swaps_opposite_order,
    races::race_delete_bucket_against_insert_namespace,
    races::race_delete_namespace_against_insert_table,
    races::race_attributes_upsert,
    races::race_read_then_write_transactions_succeed,
    objects::objects_put_get_overwrite,
    objects::objects_delete,
    objects::objects_list_ranges,
    objects::multipart_parts_and_complete,
    objects::multipart_abort_list_and_expiry,
    objects::encryption_records_and_key_checks,
    objects::race_object_overwrites,
    objects::race_part_against_complete,
    blob_deletions::blob_deletions_follow_unlinking_writes,
    blob_deletions::blob_deletions_claim_retry_finish,
    iceberg::views_crud,
    iceberg::idempotency_records,
    iceberg::tables_by_path,
    iam::iam_identities_and_keys,
    jobs::jobs_one_per_table_and_type,
    jobs::jobs_lapsed_lease_is_retaken,
    jobs::jobs_claim_for_one_table,
    jobs::jobs_backed_off_wait,
    jobs::race_jobs_claimed_once,
    jobs::runs_and_noncurrent_marks,
);

async fn with_sqlite<F, Fut>(case: F)
where
    F: FnOnce(Env) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("meta.db").display());
    let store = MetaStore::connect(&url).await.unwrap();
    assert_eq!(store.backend(), Backend::Sqlite);
    case(Env {
        store: store.clone(),
        url,
    })
    .await;
    store.close().await;
}

async fn with_postgres<F, Fut>(case: F)
where
    F: FnOnce(Env) -> Fut,
    Fut: Future<Output = ()>,
{
    // Unset: skipped with a note; set but unusable: a failure (tablebay_store::test_support).
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let url = database.url().to_string();
    let outcome = AssertUnwindSafe(async {
        let store = MetaStore::connect(&url).await.unwrap();
        assert_eq!(store.backend(), Backend::Postgres);
        case(Env {
            store: store.clone(),
            url: url.clone(),
        })
        .await;
        store.close().await;
    })
    .catch_unwind()
    .await;
    database.drop_database().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
