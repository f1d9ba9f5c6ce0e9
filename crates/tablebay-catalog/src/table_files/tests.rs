//! Confinement of a table's files (issue 14, findings 3, 4 and 13) against a real catalog (SQLite file + local
//! blob store in a temp dir): the handle refuses every location outside the storage it was opened for; no
//! metadata location, manifest list, statistics file or path property can be set outside it; a pointer planted
//! outside it below the catalog is never followed; register adopts only unowned storage of the same account; the
//! data plane's bucket name resolves to the table's storage and nothing else.

use std::collections::BTreeMap;

use chrono::Utc;
use iceberg::{TableRequirement, TableUpdate};
use serde_json::json;
use tablebay_objects::ObjectEncryption;
use tablebay_store::meta::PointerSwap;
use tablebay_store::{BlobStore, BlobUrl, MetaStore};

use super::*;
use crate::{
    AccountId, ArnFlavor, BucketName, CatalogConfig, CommitError, DropMode, IcebergTable,
    Namespace, NamespaceName, NewBucket, TableChange, TableDefinition, TableName, TableRef, Tags,
};

struct Env {
    catalog: Catalog,
    /// Namespace `ns` of bucket `bucket` of account `mine`.
    namespace: Namespace,
    mine: AccountId,
    /// Namespace `ns` of bucket `theirs` of account `theirs`.
    their_namespace: Namespace,
    theirs: AccountId,
    _dir: tempfile::TempDir,
}

async fn catalog(dir: &tempfile::TempDir) -> Catalog {
    let meta = MetaStore::connect(&format!(
        "sqlite://{}",
        dir.path().join("meta.db").display()
    ))
    .await
    .unwrap();
    let blobs = BlobStore::open(&BlobUrl::Local(dir.path().join("blobs"))).unwrap();
    Catalog::new(
        meta,
        blobs,
        CatalogConfig {
            region: "us-east-1".into(),
            flavor: ArnFlavor::Aws,
        },
        Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
    )
}

async fn new_namespace(catalog: &Catalog, account: &AccountId, bucket: &str) -> Namespace {
    let new = NewBucket {
        name: BucketName::parse(bucket).unwrap(),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let bucket = catalog.create_bucket(account, new).await.unwrap();
    catalog
        .create_namespace(
            &bucket.arn,
            NamespaceName::parse("ns").unwrap(),
            BTreeMap::new(),
            account,
        )
        .await
        .unwrap()
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(&dir).await;
    let mine = AccountId::parse("111122223333").unwrap();
    let theirs = AccountId::parse("444455556666").unwrap();
    let namespace = new_namespace(&catalog, &mine, "bucket").await;
    let their_namespace = new_namespace(&catalog, &theirs, "theirs").await;
    Env {
        catalog,
        namespace,
        mine,
        their_namespace,
        theirs,
        _dir: dir,
    }
}

fn definition(properties: &[(&str, &str)]) -> TableDefinition {
    let schema = json!({"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true}]});
    let properties = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    TableDefinition::from_iceberg_json(schema, None, None, properties).unwrap()
}

async fn create(env: &Env, namespace: &Namespace, name: &str) -> IcebergTable {
    let by = if namespace.bucket.arn.account == env.mine {
        &env.mine
    } else {
        &env.theirs
    };
    env.catalog
        .create_iceberg_table(
            namespace,
            TableName::parse(name).unwrap(),
            definition(&[]),
            by,
        )
        .await
        .unwrap()
}

/// The table's row and current metadata location, re-read.
async fn state(env: &Env, table: &IcebergTable) -> (String, Option<String>) {
    let now = env
        .catalog
        .table(&TableRef::Arn(table.table.arn.clone()))
        .await
        .unwrap();
    (now.version_token, now.metadata_location)
}

#[tokio::test]
async fn only_the_tables_own_storage_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(&dir).await;
    let id = Uuid::parse_str("0190a0b1-1c2d-7e5f-9a0b-123456789abc").unwrap();
    let other = Uuid::parse_str("0190a0b1-1c2d-7e5f-9a0b-cba987654321").unwrap();
    let files = catalog.table_files(id);
    let upper = id.hyphenated().to_string().to_uppercase();
    for (location, ok) in [
        (
            format!("s3://{id}--table-s3/metadata/00001-a.metadata.json"),
            true,
        ),
        (format!("s3a://{id}--table-s3/data/x.parquet"), true),
        (format!("oss://{id}--table-s3/data/x.parquet"), true),
        (
            format!("s3://{other}--table-s3/metadata/00001-a.metadata.json"),
            false,
        ),
        (format!("s3://{id}--table-s3/../{other}--table-s3/x"), false),
        (format!("s3://{id}--table-s3/a/../../x"), false),
        (format!("s3://{id}--table-s3/./x"), false),
        (format!("s3://{id}--table-s3/"), false),
        (format!("s3://{}--table-s3/x", id.simple()), false),
        (format!("s3://{upper}--table-s3/x"), false),
        (format!("s3://{id}/x"), false),
        (format!("file:/tmp/{id}--table-s3/x"), false),
        ("s3://bucket/x".to_string(), false),
        (String::new(), false),
    ] {
        assert_eq!(files.resolve(&location).is_ok(), ok, "{location}");
    }
    let refused = files
        .resolve(&format!("s3://{other}--table-s3/m.json"))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("outside the table's storage"), "{refused}");
    for (location, ok) in [
        (format!("s3://{id}--table-s3"), true),
        (format!("s3://{id}--table-s3/"), true),
        (format!("s3a://{id}--table-s3"), true),
        (format!("s3://{id}--table-s3/sub"), false),
        (format!("s3://{other}--table-s3"), false),
        ("s3://elsewhere/x".to_string(), false),
    ] {
        assert_eq!(files.is_location(&location), ok, "{location}");
    }
}

/// The data plane's bucket `<table-id>--table-s3` names the table (its ARN and owner, the encryption its writes
/// get), any other name nothing; the metadata file the catalog wrote is an object of that storage.
#[tokio::test]
async fn bucket_names_resolve_to_the_tables_storage() {
    let env = env().await;
    let table = create(&env, &env.namespace, "t").await.table;
    let bucket = table.warehouse_location.trim_start_matches("s3://");
    let storage = env.catalog.table_storage(bucket).await.unwrap().unwrap();
    assert_eq!(storage.table_id(), table.id);
    assert_eq!(storage.arn, table.arn);
    assert_eq!(storage.owner(), &env.mine);
    assert_eq!(storage.storage.encryption, ObjectEncryption::Managed);
    let unknown = format!("{}--table-s3", Uuid::now_v7());
    for other in ["not-a-table-bucket", &unknown, &bucket.to_uppercase()] {
        assert_eq!(
            env.catalog.table_storage(other).await.unwrap(),
            None,
            "{other}"
        );
    }
    let location = TableLocation::parse(table.metadata_location.as_deref().unwrap()).unwrap();
    let key = ObjectKey::parse(&location.key).unwrap();
    let (view, body) = env
        .catalog
        .objects()
        .get_object(table.id, &key, &tablebay_objects::ReadRequest::default())
        .await
        .unwrap();
    let bytes: Vec<Bytes> = body.try_collect().await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes.concat()).unwrap();
    assert_eq!(json["table-uuid"], table.id.to_string());
    assert_eq!(
        view.info.attributes.content_type.as_deref(),
        Some("application/json")
    );
    assert_eq!(view.info.encryption, Some(ObjectEncryption::Managed));
}

#[tokio::test]
async fn reads_writes_and_deletes_outside_the_storage_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(&dir).await;
    let (mine, theirs) = (Uuid::now_v7(), Uuid::now_v7());
    let victim = catalog.table_files(theirs);
    let secret = format!("{}/data/secret.parquet", victim.location());
    victim
        .put(&secret, Bytes::from_static(b"rows"))
        .await
        .unwrap();
    let files = catalog.table_files(mine);
    assert!(matches!(
        files.size(&secret).await,
        Err(CatalogError::Invalid(_))
    ));
    assert!(matches!(
        files.read(&secret).await,
        Err(CatalogError::Invalid(_))
    ));
    assert!(matches!(
        files.read_range(&secret, 0..4).await,
        Err(CatalogError::Invalid(_))
    ));
    assert!(matches!(
        files.delete(&secret).await,
        Err(CatalogError::Invalid(_))
    ));
    let body: tablebay_objects::ByteStream = Box::pin(futures::stream::once(async {
        Ok::<_, tablebay_objects::BodyError>(Bytes::from_static(b"x"))
    }));
    assert!(matches!(
        files.write(&secret, body).await,
        Err(CatalogError::Invalid(_))
    ));
    assert!(matches!(
        files
            .remove_unreferenced("data/secret.parquet", Utc::now())
            .await,
        Ok(None)
    ));
    // The victim's file is untouched.
    assert_eq!(
        victim.read(&secret).await.unwrap().unwrap(),
        Bytes::from_static(b"rows")
    );
    assert_eq!(victim.size(&secret).await.unwrap(), Some(4));
}

#[tokio::test]
async fn a_metadata_location_outside_the_tables_storage_is_refused() {
    let env = env().await;
    let mine = create(&env, &env.namespace, "mine").await;
    let victim = create(&env, &env.their_namespace, "victim").await;
    let before = state(&env, &mine).await;
    let victim_before = state(&env, &victim).await;
    let own = mine.table.warehouse_location.clone();
    let other = victim.table.warehouse_location.clone();
    for location in [
        victim.metadata_location.clone(),
        format!("{other}/metadata/00001-copy.metadata.json"),
        format!(
            "s3a://{}/metadata/x.metadata.json",
            other.trim_start_matches("s3://")
        ),
        format!(
            "{own}/../{}/metadata/x.metadata.json",
            other.trim_start_matches("s3://")
        ),
        "s3://bucket/metadata/x.metadata.json".to_string(),
    ] {
        let refused = env
            .catalog
            .update_metadata_location(
                &TableRef::Arn(mine.table.arn.clone()),
                &before.0,
                &location,
                &env.mine,
            )
            .await;
        match refused {
            Err(CatalogError::Invalid(m)) => assert!(m.contains("outside"), "{m}"),
            other => panic!("{location}: {other:?}"),
        }
    }
    assert_eq!(state(&env, &mine).await, before);
    assert_eq!(state(&env, &victim).await, victim_before);
    // Inside the table's own storage (even a file not written yet, as S3 Tables allows) is accepted.
    let inside = format!("{own}/metadata/00001-next.metadata.json");
    let moved = env
        .catalog
        .update_metadata_location(
            &TableRef::Arn(mine.table.arn.clone()),
            &before.0,
            &inside,
            &env.mine,
        )
        .await
        .unwrap();
    assert_eq!(moved.metadata_location.as_deref(), Some(inside.as_str()));
}

#[tokio::test]
async fn commits_cannot_name_files_outside_the_table() {
    let env = env().await;
    let mine = create(&env, &env.namespace, "mine").await;
    let victim = create(&env, &env.their_namespace, "victim").await;
    let other = victim.table.warehouse_location.clone();
    let before = state(&env, &mine).await;
    let snapshot = |manifest_list: String| {
        json!({"action": "add-snapshot", "snapshot": {
            "snapshot-id": 1, "sequence-number": 1, "timestamp-ms": Utc::now().timestamp_millis() + 1000,
            "manifest-list": manifest_list, "summary": {"operation": "append"}, "schema-id": 0}})
    };
    let statistics = |path: String| {
        json!({"action": "set-statistics", "snapshot-id": 1, "statistics": {
            "snapshot-id": 1, "statistics-path": path, "file-size-in-bytes": 10,
            "file-footer-size-in-bytes": 4, "blob-metadata": []}})
    };
    for (name, updates) in [
        (
            "foreign manifest list",
            vec![snapshot(format!("{other}/metadata/snap-1.avro"))],
        ),
        (
            "manifest list elsewhere",
            vec![snapshot("s3://bucket/snap-1.avro".into())],
        ),
        (
            "foreign statistics",
            vec![
                snapshot(format!(
                    "{}/metadata/snap-1.avro",
                    mine.table.warehouse_location
                )),
                statistics(format!("{other}/metadata/stats.puffin")),
            ],
        ),
        (
            "foreign partition statistics",
            vec![
                snapshot(format!(
                    "{}/metadata/snap-1.avro",
                    mine.table.warehouse_location
                )),
                json!({"action": "set-partition-statistics", "partition-statistics": {
                    "snapshot-id": 1, "statistics-path": format!("{other}/metadata/p.parquet"),
                    "file-size-in-bytes": 10}}),
            ],
        ),
        (
            "foreign data path",
            vec![
                json!({"action": "set-properties", "updates": {"write.data.path": format!("{other}/data")}}),
            ],
        ),
        (
            "metadata path elsewhere",
            vec![
                json!({"action": "set-properties", "updates": {"write.metadata.path": "file:/tmp/m"}}),
            ],
        ),
        (
            "foreign location",
            vec![json!({"action": "set-location", "location": other})],
        ),
    ] {
        let updates: Vec<TableUpdate> = updates
            .into_iter()
            .map(|u| serde_json::from_value(u).unwrap())
            .collect();
        let change = TableChange {
            requirements: vec![TableRequirement::UuidMatch {
                uuid: mine.metadata.metadata.uuid(),
            }],
            updates,
        };
        match env
            .catalog
            .commit_table(&mine.table, change, &env.mine)
            .await
        {
            Err(CommitError::Invalid(m)) => assert!(m.contains("own storage"), "{name}: {m}"),
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(state(&env, &mine).await, before, "{name}");
    }
    // A data path inside the table's storage is fine.
    let change = TableChange {
        requirements: vec![],
        updates: vec![
            serde_json::from_value(json!({"action": "set-properties", "updates": {
                "write.data.path": format!("{}/data", mine.table.warehouse_location)}}))
            .unwrap(),
        ],
    };
    env.catalog
        .commit_table(&mine.table, change, &env.mine)
        .await
        .unwrap();
    // So are creates: a definition whose properties send files elsewhere is refused.
    let refused = env
        .catalog
        .create_iceberg_table(
            &env.namespace,
            TableName::parse("elsewhere").unwrap(),
            definition(&[("write.data.path", &format!("{other}/data"))]),
            &env.mine,
        )
        .await;
    assert!(
        matches!(refused, Err(CatalogError::Invalid(_))),
        "{refused:?}"
    );
    let staged = env
        .catalog
        .stage_iceberg_table(
            &env.namespace,
            definition(&[("write.object-storage.path", "s3://bucket/x")]),
        )
        .await;
    assert!(
        matches!(staged, Err(CatalogError::Invalid(_))),
        "{staged:?}"
    );
}

#[tokio::test]
async fn a_pointer_planted_outside_the_storage_is_never_followed() {
    let env = env().await;
    let mine = create(&env, &env.namespace, "mine").await;
    let victim = create(&env, &env.their_namespace, "victim").await;
    // Loaded once, so the victim's metadata is in the parsed-metadata cache too.
    env.catalog
        .load_iceberg_table(&TableRef::Arn(victim.table.arn.clone()))
        .await
        .unwrap();
    // Below the catalog's checks: the row is pointed at the victim's metadata file directly.
    env.catalog
        .meta
        .swap_table_pointers(&[PointerSwap {
            table_id: mine.table.id,
            expected_version_token: mine.table.version_token.clone(),
            new_version_token: "planted".into(),
            new_metadata_location: victim.metadata_location.clone(),
            modified_at: Utc::now(),
            modified_by: env.mine.to_string(),
        }])
        .await
        .unwrap();
    let loaded = env
        .catalog
        .load_iceberg_table(&TableRef::Arn(mine.table.arn.clone()))
        .await;
    match loaded {
        Err(CatalogError::Invalid(m)) => assert!(m.contains("outside"), "{m}"),
        other => panic!("the planted pointer was followed: {other:?}"),
    }
    // Nor does a commit on it read (or rewrite) the victim's metadata.
    let mine_now = env
        .catalog
        .table(&TableRef::Arn(mine.table.arn.clone()))
        .await
        .unwrap();
    let change = TableChange {
        requirements: vec![],
        updates: vec![
            serde_json::from_value(json!({"action": "set-properties", "updates": {"k": "v"}}))
                .unwrap(),
        ],
    };
    assert!(matches!(
        env.catalog.commit_table(&mine_now, change, &env.mine).await,
        Err(CommitError::Invalid(_))
    ));
    assert_eq!(
        env.catalog
            .load_iceberg_table(&TableRef::Arn(victim.table.arn.clone()))
            .await
            .unwrap()
            .metadata_location,
        victim.metadata_location
    );
}

#[tokio::test]
async fn register_adopts_only_unowned_storage_of_the_same_account() {
    let env = env().await;
    let name = |n: &str| TableName::parse(n).unwrap();
    let live = create(&env, &env.namespace, "live").await;
    // A live table's storage belongs to it alone, in its own account as in any other.
    let refused = env
        .catalog
        .register_iceberg_table(
            &env.namespace,
            &name("copy"),
            &live.metadata_location,
            &env.mine,
        )
        .await;
    assert!(
        matches!(refused, Err(CatalogError::AlreadyExists(_))),
        "{refused:?}"
    );
    let victim = create(&env, &env.their_namespace, "victim").await;
    let refused = env
        .catalog
        .register_iceberg_table(
            &env.namespace,
            &name("stolen"),
            &victim.metadata_location,
            &env.mine,
        )
        .await;
    assert!(
        matches!(refused, Err(CatalogError::Denied(_))),
        "{refused:?}"
    );
    // Another account's table dropped without purge: its storage is still that account's.
    let dropped = create(&env, &env.their_namespace, "dropped").await;
    env.catalog
        .drop_iceberg_table(&dropped.table, DropMode::KeepFiles)
        .await
        .unwrap();
    let refused = env
        .catalog
        .register_iceberg_table(
            &env.namespace,
            &name("taken"),
            &dropped.metadata_location,
            &env.mine,
        )
        .await;
    assert!(
        matches!(refused, Err(CatalogError::Denied(_))),
        "{refused:?}"
    );
    // Nor can a staged create's commit take it with set-location.
    let change = TableChange {
        requirements: vec![TableRequirement::NotExist],
        updates: [
            json!({"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": true}]}}),
            json!({"action": "set-current-schema", "schema-id": -1}),
            json!({"action": "set-location", "location": dropped.table.warehouse_location}),
        ]
        .into_iter()
        .map(|u| serde_json::from_value(u).unwrap())
        .collect(),
    };
    let refused = env
        .catalog
        .create_staged_table(&env.namespace, &name("taken"), change, &env.mine)
        .await;
    assert!(
        matches!(refused, Err(CommitError::Invalid(_))),
        "{refused:?}"
    );
    assert!(
        env.catalog
            .table_by_id(dropped.table.id)
            .await
            .unwrap()
            .is_none()
    );
    // Storage nobody owns (never a table's, or purged) is not adopted either.
    let nobody = format!(
        "{}/metadata/00000-x.metadata.json",
        warehouse_location(Uuid::now_v7())
    );
    let refused = env
        .catalog
        .register_iceberg_table(&env.namespace, &name("nobody"), &nobody, &env.mine)
        .await;
    assert!(
        matches!(refused, Err(CatalogError::Invalid(_))),
        "{refused:?}"
    );
    // Its own account registers it again: the table gets its storage back, id and all.
    let registered = env
        .catalog
        .register_iceberg_table(
            &env.their_namespace,
            &name("again"),
            &dropped.metadata_location,
            &env.theirs,
        )
        .await
        .unwrap();
    assert_eq!(registered.table.id, dropped.table.id);
    assert_eq!(registered.metadata_location, dropped.metadata_location);
    // Nothing else moved.
    assert_eq!(
        state(&env, &live).await,
        (
            live.table.version_token.clone(),
            Some(live.metadata_location.clone())
        )
    );
    assert_eq!(
        state(&env, &victim).await,
        (
            victim.table.version_token.clone(),
            Some(victim.metadata_location.clone())
        )
    );
}

#[tokio::test]
async fn another_accounts_caller_adopts_only_storage_of_the_destination_bucket() {
    let env = env().await;
    let name = |n: &str| TableName::parse(n).unwrap();
    // The other account's caller, allowed to create tables in `bucket` (authorization is the surface's), may
    // commit a create it staged there, but not adopt storage of the account's other buckets.
    let staged = env
        .catalog
        .stage_iceberg_table(&env.namespace, definition(&[]))
        .await
        .unwrap();
    let change = TableChange {
        requirements: vec![TableRequirement::NotExist],
        updates: [
            json!({"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": true}]}}),
            json!({"action": "set-current-schema", "schema-id": -1}),
            json!({"action": "set-location", "location": staged.location}),
        ]
        .into_iter()
        .map(|u| serde_json::from_value(u).unwrap())
        .collect(),
    };
    let created = env
        .catalog
        .create_staged_table(&env.namespace, &name("staged"), change, &env.theirs)
        .await
        .unwrap();
    assert_eq!(created.table.id, staged.table_id);
    let second = new_namespace(&env.catalog, &env.mine, "second").await;
    let dropped = create(&env, &second, "dropped").await;
    env.catalog
        .drop_iceberg_table(&dropped.table, DropMode::KeepFiles)
        .await
        .unwrap();
    let refused = env
        .catalog
        .register_iceberg_table(
            &env.namespace,
            &name("moved"),
            &dropped.metadata_location,
            &env.theirs,
        )
        .await;
    assert!(
        matches!(refused, Err(CatalogError::Denied(_))),
        "{refused:?}"
    );
    // The account itself may move its dropped table's storage to another of its buckets.
    env.catalog
        .register_iceberg_table(
            &env.namespace,
            &name("moved"),
            &dropped.metadata_location,
            &env.mine,
        )
        .await
        .unwrap();
}
