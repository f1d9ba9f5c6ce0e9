//! The runner and the removal jobs against a table that is deleted before or while its job runs (issue 14,
//! finding 13), on a real catalog (SQLite file + local blob store in a temp dir): the job runs nothing, claims
//! nothing, and removes nothing from the storage the dropped table leaves behind.

use std::collections::BTreeMap;
use std::sync::Mutex;

use iceberg::spec::ManifestListWriter;
use serde_json::json;
use tablebay_catalog::{
    AccountId, ArnFlavor, BucketName, CatalogConfig, CommitObserver, DropMode, IcebergTable,
    Namespace, NamespaceName, NewBucket, TableChange, TableDefinition, TableName, Tags,
};
use tablebay_store::BlobStore;
use tablebay_store::BlobUrl;

use super::*;
use crate::unreferenced_files::remove_unreferenced;

struct Env {
    catalog: Catalog,
    meta: MetaStore,
    namespace: Namespace,
    account: AccountId,
    _dir: tempfile::TempDir,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let meta = MetaStore::connect(&format!(
        "sqlite://{}",
        dir.path().join("meta.db").display()
    ))
    .await
    .unwrap();
    let blobs = BlobStore::open(&BlobUrl::Local(dir.path().join("blobs"))).unwrap();
    let catalog = Catalog::new(
        meta.clone(),
        blobs,
        CatalogConfig {
            region: "us-east-1".into(),
            flavor: ArnFlavor::Aws,
        },
        Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
    );
    let account = AccountId::parse("111122223333").unwrap();
    let new = NewBucket {
        name: BucketName::parse("bucket").unwrap(),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let bucket = catalog.create_bucket(&account, new).await.unwrap();
    let namespace = catalog
        .create_namespace(
            &bucket.arn,
            NamespaceName::parse("ns").unwrap(),
            BTreeMap::new(),
            &account,
        )
        .await
        .unwrap();
    Env {
        catalog,
        meta,
        namespace,
        account,
        _dir: dir,
    }
}

fn runner(env: &Env) -> Arc<JobRunner> {
    let config = MaintenanceConfig {
        workers: 0,
        ..MaintenanceConfig::default()
    };
    JobRunner::new(env.catalog.clone(), env.meta.clone(), config)
}

/// A table whose snapshots expire a millisecond after they are taken, with two snapshots on `main` (empty
/// manifest lists, written in its storage): snapshot expiration has one to expire.
async fn table_with_history(env: &Env, name: &str) -> IcebergTable {
    let schema = json!({"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true}]});
    let properties = BTreeMap::from([(
        "history.expire.max-snapshot-age-ms".to_string(),
        "1".to_string(),
    )]);
    let definition = TableDefinition::from_iceberg_json(schema, None, None, properties).unwrap();
    let mut table = env
        .catalog
        .create_iceberg_table(
            &env.namespace,
            TableName::parse(name).unwrap(),
            definition,
            &env.account,
        )
        .await
        .unwrap();
    let files = env.catalog.table_files(table.table.id);
    let io = tablebay_compaction::table_file_io(&files);
    for (id, parent) in [(1_i64, None), (2, Some(1_i64))] {
        let list = format!("{}/metadata/snap-{id}.avro", files.location());
        let writer = io.new_output(&list).unwrap().writer().await.unwrap();
        ManifestListWriter::v2(writer, id, parent, id)
            .close()
            .await
            .unwrap();
        let mut snapshot = json!({"snapshot-id": id, "sequence-number": id,
            "timestamp-ms": Utc::now().timestamp_millis(), "manifest-list": list,
            "summary": {"operation": "append"}, "schema-id": 0});
        if let Some(parent) = parent {
            snapshot["parent-snapshot-id"] = json!(parent);
        }
        let updates = [
            json!({"action": "add-snapshot", "snapshot": snapshot}),
            json!({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}),
        ]
        .into_iter()
        .map(|u| serde_json::from_value(u).unwrap())
        .collect();
        let change = TableChange {
            requirements: vec![],
            updates,
        };
        table = env
            .catalog
            .commit_table(&table.table, change, &env.account)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    table
}

/// Deletes every table it sees committed, from inside the commit: the table is gone while its job still runs.
#[derive(Debug)]
struct DeleteOnCommit {
    catalog: Catalog,
    deleted: Mutex<Vec<Uuid>>,
}

impl CommitObserver for DeleteOnCommit {
    fn committed(&self, table: &Table, _metadata: &iceberg::spec::TableMetadata) {
        let handle = tokio::runtime::Handle::current();
        let arn = TableRef::Arn(table.arn.clone());
        tokio::task::block_in_place(|| handle.block_on(self.catalog.delete_table(&arn, None)))
            .unwrap();
        self.deleted.lock().unwrap().push(table.id);
    }
}

#[tokio::test]
async fn a_job_of_a_table_deleted_after_it_was_queued_runs_nothing_and_is_not_recorded() {
    let env = env().await;
    let table = table_with_history(&env, "gone").await;
    // After the commits: the runner's commit trigger would queue jobs of its own.
    let runner = runner(&env);
    let (id, arn) = (table.table.id, table.table.arn.clone());
    env.meta
        .enqueue_job(
            id,
            MaintenanceJobType::IcebergSnapshotManagement.as_str(),
            "commit",
            Utc::now(),
        )
        .await
        .unwrap();
    env.catalog
        .delete_table(&TableRef::Arn(arn.clone()), None)
        .await
        .unwrap();
    let now = Utc::now();
    let job = env
        .meta
        .claim_next_job("test/0", now, now + chrono::Duration::seconds(60))
        .await
        .unwrap()
        .unwrap();
    let run = runner.execute(job, None, false).await;
    assert_eq!(run.outcome, RunOutcome::Failed, "{run:?}");
    assert!(
        run.message
            .as_deref()
            .is_some_and(|m| m.contains("does not exist")),
        "{run:?}"
    );
    assert!(env.meta.list_runs(None, None, 10).await.unwrap().is_empty());
    // The job is gone, not retried.
    let now = Utc::now();
    assert!(
        env.meta
            .claim_next_job("test/0", now, now + chrono::Duration::seconds(60))
            .await
            .unwrap()
            .is_none()
    );
    // Asked for explicitly, a deleted table is not found at all.
    assert!(matches!(
        runner
            .run_now(&arn, MaintenanceJobType::IcebergSnapshotManagement)
            .await,
        Err(MaintenanceError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_deleted_while_its_job_runs_is_not_reported_maintained() {
    let env = env().await;
    let automatic = table_with_history(&env, "automatic").await;
    let explicit = table_with_history(&env, "explicit").await;
    let observer = Arc::new(DeleteOnCommit {
        catalog: env.catalog.clone(),
        deleted: Mutex::new(Vec::new()),
    });
    // Installed before the runner (whose own commit trigger is installed beside it).
    assert!(env.catalog.observe_commits(observer.clone()));
    let runner = runner(&env);

    // A worker's run: expiration commits, the table is deleted during the commit, the run ends unrecorded.
    env.meta
        .enqueue_job(
            automatic.table.id,
            MaintenanceJobType::IcebergSnapshotManagement.as_str(),
            "sweep",
            Utc::now(),
        )
        .await
        .unwrap();
    let now = Utc::now();
    let job = env
        .meta
        .claim_next_job("test/0", now, now + chrono::Duration::seconds(60))
        .await
        .unwrap()
        .unwrap();
    let worker = Arc::clone(&runner);
    let run = tokio::spawn(async move { worker.execute(job, None, false).await })
        .await
        .unwrap();
    assert_eq!(*observer.deleted.lock().unwrap(), vec![automatic.table.id]);
    assert!(
        run.message
            .as_deref()
            .is_some_and(|m| m.contains("deleted while the job ran")),
        "{run:?}"
    );
    assert!(
        env.meta
            .list_runs(Some(automatic.table.id), None, 10)
            .await
            .unwrap()
            .is_empty(),
        "a run of a deleted table was recorded"
    );

    // Run now: recorded, as failed and not found, under the table's ARN (not a bare `table/<id>`).
    let worker = Arc::clone(&runner);
    let arn = explicit.table.arn.clone();
    let run = tokio::spawn(async move {
        worker
            .run_now(&arn, MaintenanceJobType::IcebergSnapshotManagement)
            .await
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(run.outcome, RunOutcome::Failed, "{run:?}");
    assert_eq!(run.table_arn, explicit.table.arn.to_string());
    let recorded = env
        .meta
        .list_runs(Some(explicit.table.id), None, 10)
        .await
        .unwrap();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].outcome, "Failed");
    assert_eq!(recorded[0].table_arn, explicit.table.arn.to_string());
}

#[tokio::test]
async fn unreferenced_file_removal_leaves_the_storage_of_a_table_dropped_meanwhile() {
    let env = env().await;
    let table = table_with_history(&env, "dropped").await;
    let files = env.catalog.table_files(table.table.id);
    let orphan = format!("{}/data/orphan.parquet", files.location());
    let body: tablebay_objects::ByteStream = Box::pin(futures::stream::once(async {
        Ok::<_, tablebay_objects::BodyError>(bytes::Bytes::from_static(b"orphan"))
    }));
    files.write(&orphan, body).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let settings = EffectiveUnreferencedRemoval {
        unreferenced_after: Duration::ZERO,
        delete_after: Duration::ZERO,
    };
    // First pass: the orphan is marked noncurrent; the next pass would delete it.
    let first = remove_unreferenced(
        &env.catalog,
        &env.meta,
        table.clone(),
        &settings,
        Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(first.details.get("markedNoncurrent"), Some(&1), "{first:?}");
    // The table is dropped without purge while a second pass runs on what it loaded before: that storage is
    // now kept for its owner (to purge from the old metadata, or to register again), and nothing is removed.
    env.catalog
        .drop_iceberg_table(&table.table, DropMode::KeepFiles)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = remove_unreferenced(&env.catalog, &env.meta, table, &settings, Utc::now()).await;
    assert!(
        matches!(&second, Err(MaintenanceError::NotFound(m)) if m.contains("nothing was removed")),
        "{second:?}"
    );
    assert_eq!(files.size(&orphan).await.unwrap(), Some(6));
}
