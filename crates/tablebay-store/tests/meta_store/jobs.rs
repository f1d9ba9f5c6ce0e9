//! Maintenance jobs: one per (table, type), leases (claim, renew, lapse, take-over), backed-off waits, run
//! records and noncurrent marks. Times are passed in, so lapses need no sleeping.

use std::collections::HashSet;

use chrono::{DateTime, TimeZone, Utc};
use tablebay_store::MetaStore;
use tablebay_store::StoreError;
use tablebay_store::meta::{JobRecord, RunRecord};
use uuid::Uuid;

use crate::Env;

const SNAPSHOTS: &str = "icebergSnapshotManagement";
const UNREFERENCED: &str = "icebergUnreferencedFileRemoval";

fn t(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + seconds, 0).unwrap()
}

/// [`MetaStore::enqueue_job`]: whether a job was added.
async fn enqueue(
    store: &MetaStore,
    table: Uuid,
    job_type: &str,
    trigger: &str,
    now: DateTime<Utc>,
) -> bool {
    store
        .enqueue_job(table, job_type, trigger, now)
        .await
        .unwrap()
}

/// [`MetaStore::claim_next_job`]: the job claimed, if any.
async fn claim(
    store: &MetaStore,
    owner: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Option<JobRecord> {
    store.claim_next_job(owner, now, until).await.unwrap()
}

/// [`MetaStore::renew_lease`]: whether `owner` still held it.
async fn renew(store: &MetaStore, job: Uuid, owner: &str, until: DateTime<Utc>) -> bool {
    store.renew_lease(job, owner, until).await.unwrap()
}

/// [`MetaStore::finish_job`]: whether `owner` still held it.
async fn finish(
    store: &MetaStore,
    job: Uuid,
    owner: &str,
    retry_at: Option<DateTime<Utc>>,
) -> bool {
    store.finish_job(job, owner, retry_at).await.unwrap()
}

pub(crate) async fn jobs_one_per_table_and_type(env: Env) {
    let store = env.store;
    let table = Uuid::now_v7();
    assert!(enqueue(&store, table, SNAPSHOTS, "sweep", t(0)).await);
    assert!(!enqueue(&store, table, SNAPSHOTS, "commit", t(1)).await);
    assert!(enqueue(&store, table, UNREFERENCED, "sweep", t(1)).await);
    let first = claim(&store, "a", t(2), t(62)).await.unwrap();
    assert_eq!(
        (
            first.table_id,
            first.job_type.as_str(),
            first.trigger.as_str()
        ),
        (table, SNAPSHOTS, "sweep")
    );
    assert_eq!(
        (
            first.lease_owner.as_str(),
            first.lease_expires,
            first.attempts
        ),
        ("a", t(62), 1)
    );
    // While it runs, the same type cannot be queued again.
    assert!(!enqueue(&store, table, SNAPSHOTS, "commit", t(3)).await);
    let second = claim(&store, "b", t(3), t(63)).await.unwrap();
    assert_eq!(second.job_type, UNREFERENCED);
    assert!(claim(&store, "c", t(4), t(64)).await.is_none());
    assert!(renew(&store, first.id, "a", t(100)).await);
    assert!(
        !renew(&store, first.id, "b", t(100)).await,
        "only the holder renews"
    );
    assert!(
        !finish(&store, first.id, "b", None).await,
        "only the holder finishes"
    );
    assert!(finish(&store, first.id, "a", None).await);
    assert!(enqueue(&store, table, SNAPSHOTS, "commit", t(5)).await);
}

pub(crate) async fn jobs_lapsed_lease_is_retaken(env: Env) {
    let store = env.store;
    let table = Uuid::now_v7();
    enqueue(&store, table, SNAPSHOTS, "sweep", t(0)).await;
    let dead = claim(&store, "dead-worker", t(1), t(31)).await.unwrap();
    // Live lease: nobody else gets it.
    assert!(claim(&store, "b", t(30), t(90)).await.is_none());
    // Lapsed: the next claimer takes it over, and the dead worker can neither renew nor finish it.
    let taken = claim(&store, "b", t(32), t(92)).await.unwrap();
    assert_eq!(
        (taken.id, taken.attempts, taken.lease_owner.as_str()),
        (dead.id, 2, "b")
    );
    assert!(!renew(&store, dead.id, "dead-worker", t(200)).await);
    assert!(!finish(&store, dead.id, "dead-worker", None).await);
    assert!(finish(&store, taken.id, "b", None).await);
    assert!(claim(&store, "c", t(300), t(360)).await.is_none());
}

pub(crate) async fn jobs_claim_for_one_table(env: Env) {
    let store = env.store;
    let table = Uuid::now_v7();
    // Queued by a sweep, then run now: the run-now claim takes the queued job.
    enqueue(&store, table, SNAPSHOTS, "sweep", t(0)).await;
    let now = store
        .claim_job_for(table, SNAPSHOTS, "a", t(1), t(61))
        .await
        .unwrap();
    assert_eq!((now.trigger.as_str(), now.attempts), ("manual", 1));
    match store
        .claim_job_for(table, SNAPSHOTS, "b", t(2), t(62))
        .await
    {
        Err(StoreError::Conflict(_)) => {}
        other => panic!("a second run-now of a running job must conflict, got {other:?}"),
    }
    let after_lapse = store
        .claim_job_for(table, SNAPSHOTS, "b", t(62), t(122))
        .await
        .unwrap();
    assert_eq!((after_lapse.id, after_lapse.attempts), (now.id, 2));
    assert!(finish(&store, after_lapse.id, "b", None).await);
    // Nothing queued: run-now queues and claims at once.
    let fresh = store
        .claim_job_for(table, UNREFERENCED, "a", t(70), t(130))
        .await
        .unwrap();
    assert_eq!(fresh.attempts, 1);
}

pub(crate) async fn jobs_backed_off_wait(env: Env) {
    let store = env.store;
    let table = Uuid::now_v7();
    enqueue(&store, table, SNAPSHOTS, "commit", t(0)).await;
    let job = claim(&store, "a", t(1), t(61)).await.unwrap();
    assert!(store.finish_job(job.id, "a", Some(t(20))).await.unwrap());
    // Still one job of the type (a commit trigger meanwhile adds none), not claimable before its time.
    assert!(!enqueue(&store, table, SNAPSHOTS, "commit", t(2)).await);
    assert!(claim(&store, "b", t(10), t(70)).await.is_none());
    let again = claim(&store, "b", t(21), t(81)).await.unwrap();
    assert_eq!((again.id, again.attempts), (job.id, 2));
}

/// Claimers on two pools (as two server instances) drain the queue: every job is claimed exactly once.
pub(crate) async fn race_jobs_claimed_once(env: Env) {
    let other = MetaStore::connect(&env.url).await.unwrap();
    let mut expected = HashSet::new();
    for i in 0..30 {
        let table = Uuid::now_v7();
        for job_type in [SNAPSHOTS, UNREFERENCED] {
            assert!(enqueue(&env.store, table, job_type, "sweep", t(i)).await);
            expected.insert((table, job_type.to_string()));
        }
    }
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let store = if worker % 2 == 0 {
            env.store.clone()
        } else {
            other.clone()
        };
        tasks.push(tokio::spawn(async move {
            let owner = format!("w{worker}");
            let mut claimed = Vec::new();
            loop {
                match store.claim_next_job(&owner, t(100), t(1000)).await {
                    Ok(Some(job)) => claimed.push(job),
                    Ok(None) => return claimed,
                    // SQLite across two pools: a busy writer is a retryable conflict.
                    Err(StoreError::Conflict(_)) => tokio::task::yield_now().await,
                    Err(e) => panic!("{e:?}"),
                }
            }
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        for job in task.await.unwrap() {
            assert!(seen.insert(job.id), "job {} claimed twice", job.id);
            assert!(expected.remove(&(job.table_id, job.job_type.clone())));
        }
    }
    assert!(expected.is_empty(), "unclaimed: {expected:?}");
    other.close().await;
}

pub(crate) async fn runs_and_noncurrent_marks(env: Env) {
    let store = env.store;
    let table = Uuid::now_v7();
    let other_table = Uuid::now_v7();
    let run = |table_id: Uuid, outcome: &str, at: i64| RunRecord {
        id: Uuid::now_v7(),
        job_id: Uuid::now_v7(),
        table_id,
        table_arn: format!("arn:aws:s3tables:us-east-1:111122223333:bucket/b/table/{table_id}"),
        job_type: SNAPSHOTS.into(),
        trigger: "manual".into(),
        worker: "w".into(),
        outcome: outcome.into(),
        message: (outcome == "Failed").then(|| "boom".to_string()),
        files_in: 3,
        bytes_in: 3000,
        files_out: 0,
        bytes_out: 0,
        details: "{\"snapshotsExpired\":2}".into(),
        started_at: t(at),
        duration_ms: 12,
    };
    let ok = run(table, "Successful", 1);
    let failed = run(table, "Failed", 2);
    let skipped = run(table, "Skipped", 3);
    for r in [&ok, &failed, &skipped, &run(other_table, "Successful", 4)] {
        store.insert_run(r).await.unwrap();
    }
    let listed = store.list_runs(Some(table), None, 10).await.unwrap();
    assert_eq!(listed, vec![skipped.clone(), failed.clone(), ok.clone()]);
    assert_eq!(store.list_runs(None, None, 10).await.unwrap().len(), 4);
    assert_eq!(
        store.list_runs(Some(table), Some(t(3)), 1).await.unwrap(),
        vec![failed.clone()]
    );
    // A skipped run leaves the job's status as it was.
    assert_eq!(
        store.last_decided_run(table, SNAPSHOTS).await.unwrap(),
        Some(failed)
    );
    assert_eq!(
        store
            .last_decided_run(table, "icebergCompaction")
            .await
            .unwrap(),
        None
    );

    store
        .mark_noncurrent(
            table,
            &[
                ("data/a.parquet".into(), t(0)),
                ("data/b.parquet".into(), t(0)),
            ],
            t(10),
        )
        .await
        .unwrap();
    // Marking again keeps the first time of an unchanged object and restarts it for a rewritten one.
    store
        .mark_noncurrent(
            table,
            &[
                ("data/a.parquet".into(), t(0)),
                ("data/b.parquet".into(), t(5)),
            ],
            t(20),
        )
        .await
        .unwrap();
    let marks = store.noncurrent_marks(table).await.unwrap();
    assert_eq!(marks.get("data/a.parquet"), Some(&(t(0), t(10))));
    assert_eq!(marks.get("data/b.parquet"), Some(&(t(5), t(20))));
    store
        .clear_noncurrent(table, &["data/a.parquet".into()])
        .await
        .unwrap();
    assert_eq!(store.noncurrent_marks(table).await.unwrap().len(), 1);
    assert!(
        store
            .noncurrent_marks(other_table)
            .await
            .unwrap()
            .is_empty()
    );
}
