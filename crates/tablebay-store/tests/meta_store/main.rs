//! The metadata store's behaviour, one suite run twice: against SQLite (a fresh file per test) and against
//! PostgreSQL (a fresh database per test, `CREATE DATABASE tb_<random>` on the server named by
//! `TABLEBAY_TEST_POSTGRES_URL`, dropped afterwards). Without that variable the Postgres variants print a note
//! and pass; `scripts/postgres.sh start` prints a suitable URL.
//!
//! This file is the harness; `cases.rs` checks each method's contract, `races.rs` its behaviour under concurrency,
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

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use sqlx::{AssertSqlSafe, Connection};
use tablebay_store::MetaStore;
use tablebay_store::meta::Backend;
use uuid::Uuid;

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
    cases::tables_insert_and_get,
    cases::tables_list,
    cases::tables_swap_single,
    cases::tables_swap_all_or_nothing,
    cases::tables_rename,
    cases::tables_delete,
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
    let Ok(server) = std::env::var("TABLEBAY_TEST_POSTGRES_URL") else {
        eprintln!("note: TABLEBAY_TEST_POSTGRES_URL is unset; skipping the PostgreSQL variant");
        return;
    };
    let name = format!("tb_{}", Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(&server).await.unwrap();
    // `name` is ours (hex digits), so formatting it into the statement is safe.
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    let url = with_database(&server, &name);

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

    // Best effort: a failure to drop leaves a stray database, not a failed test.
    if let Err(e) = sqlx::query(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    {
        eprintln!("note: could not drop test database {name}: {e}");
    }
    let _ = admin.close().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// `server` (a `postgres://…/<db>[?…]` URL) pointed at database `name`.
fn with_database(server: &str, name: &str) -> String {
    let (base, query) = match server.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (server, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let root = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{root}/{name}{query}")
}

#[test]
fn database_urls() {
    assert_eq!(
        with_database("postgres://u@h:1/postgres", "x"),
        "postgres://u@h:1/x"
    );
    assert_eq!(with_database("postgres://u@h:1", "x"), "postgres://u@h:1/x");
    assert_eq!(
        with_database("postgres://u@h/db?sslmode=disable", "x"),
        "postgres://u@h/x?sslmode=disable"
    );
}
