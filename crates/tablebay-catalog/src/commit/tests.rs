//! Unit tests of the commit logic against a real catalog (SQLite file + local blob store in a temp dir):
//! Java's requirement messages, pointer moves seen by the control plane, server-side rebase under concurrency,
//! real conflicts, all-or-nothing transactions, staged creates, metadata-log trimming and idempotency records.

use std::collections::{BTreeMap, HashMap};

use iceberg::spec::{FormatVersion, NestedField, PrimitiveType, Schema, Type};
use serde_json::json;
use tablebay_store::{BlobStore, BlobUrl, MetaStore};

use super::*;
use crate::{
    ArnFlavor, BucketName, CatalogConfig, NamespaceName, NewBucket, RememberedReply,
    TableDefinition, TableRef, Tags,
};

struct Env {
    catalog: Catalog,
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
        meta,
        blobs,
        CatalogConfig {
            region: "us-east-1".into(),
            flavor: ArnFlavor::Aws,
        },
        std::sync::Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
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
        namespace,
        account,
        _dir: dir,
    }
}

fn definition() -> TableDefinition {
    let schema = json!({"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true},
        {"id": 2, "name": "data", "type": "string", "required": false}]});
    TableDefinition::from_iceberg_json(schema, None, None, BTreeMap::new()).unwrap()
}

async fn create(env: &Env, name: &str) -> IcebergTable {
    env.catalog
        .create_iceberg_table(
            &env.namespace,
            TableName::parse(name).unwrap(),
            definition(),
            &env.account,
        )
        .await
        .unwrap()
}

fn set_properties(pairs: &[(&str, &str)]) -> TableUpdate {
    TableUpdate::SetProperties {
        updates: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn uuid_is(table: &IcebergTable) -> TableRequirement {
    TableRequirement::UuidMatch {
        uuid: table.metadata.metadata.uuid(),
    }
}

fn add_column_schema(current: &TableMetadata, name: &str) -> Schema {
    let mut fields: Vec<_> = current.current_schema().as_struct().fields().to_vec();
    let id = current.last_column_id() + 1;
    fields.push(NestedField::optional(id, name, Type::Primitive(PrimitiveType::Int)).into());
    Schema::builder()
        .with_schema_id(current.current_schema_id() + 1)
        .with_fields(fields)
        .build()
        .unwrap()
}

#[tokio::test]
async fn requirement_messages_are_javas() {
    let env = env().await;
    let t = create(&env, "t").await;
    let m = &t.metadata.metadata;
    let refs = HashMap::from([
        (
            "main".to_string(),
            SnapshotRefInfo {
                snapshot_id: 7,
                is_branch: true,
            },
        ),
        (
            "v1".to_string(),
            SnapshotRefInfo {
                snapshot_id: 5,
                is_branch: false,
            },
        ),
    ]);
    let other = Uuid::nil();
    let cases: Vec<(TableRequirement, Option<String>)> = vec![
        (
            TableRequirement::NotExist,
            Some("Requirement failed: table already exists".into()),
        ),
        (TableRequirement::UuidMatch { uuid: m.uuid() }, None),
        (
            TableRequirement::UuidMatch { uuid: other },
            Some(format!(
                "Requirement failed: UUID does not match: expected {} != {other}",
                m.uuid()
            )),
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: None,
            },
            Some("Requirement failed: branch main was created concurrently".into()),
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: Some(7),
            },
            None,
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: Some(6),
            },
            Some("Requirement failed: branch main has changed: expected id 6 != 7".into()),
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "v1".into(),
                snapshot_id: Some(6),
            },
            Some("Requirement failed: tag v1 has changed: expected id 6 != 5".into()),
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "dev".into(),
                snapshot_id: Some(3),
            },
            Some("Requirement failed: branch or tag dev is missing, expected 3".into()),
        ),
        (
            TableRequirement::RefSnapshotIdMatch {
                r#ref: "dev".into(),
                snapshot_id: None,
            },
            None,
        ),
        (
            TableRequirement::LastAssignedFieldIdMatch {
                last_assigned_field_id: 2,
            },
            None,
        ),
        (
            TableRequirement::LastAssignedFieldIdMatch {
                last_assigned_field_id: 1,
            },
            Some("Requirement failed: last assigned field id changed: expected id 1 != 2".into()),
        ),
        (
            TableRequirement::CurrentSchemaIdMatch {
                current_schema_id: 1,
            },
            Some("Requirement failed: current schema changed: expected id 1 != 0".into()),
        ),
        (
            TableRequirement::LastAssignedPartitionIdMatch {
                last_assigned_partition_id: 1000,
            },
            Some(
                "Requirement failed: last assigned partition id changed: expected id 1000 != 999"
                    .into(),
            ),
        ),
        (
            TableRequirement::DefaultSpecIdMatch { default_spec_id: 3 },
            Some("Requirement failed: default partition spec changed: expected id 3 != 0".into()),
        ),
        (
            TableRequirement::DefaultSortOrderIdMatch {
                default_sort_order_id: 2,
            },
            Some("Requirement failed: default sort order changed: expected id 2 != 0".into()),
        ),
    ];
    for (requirement, want) in cases {
        assert_eq!(
            check_requirement(&requirement, m, &refs).err(),
            want,
            "{requirement:?}"
        );
    }
}

#[tokio::test]
async fn a_commit_moves_the_pointer_the_control_plane_sees() {
    let env = env().await;
    let t = create(&env, "t").await;
    assert!(t.metadata_location.contains("/metadata/00000-"));
    let change = TableChange {
        requirements: vec![uuid_is(&t)],
        updates: vec![set_properties(&[("k", "v")])],
    };
    let committed = env
        .catalog
        .commit_table(&t.table, change, &env.account)
        .await
        .unwrap();
    assert!(
        committed.metadata_location.contains("/metadata/00001-"),
        "{}",
        committed.metadata_location
    );
    assert_eq!(
        committed
            .metadata
            .metadata
            .properties()
            .get("k")
            .map(String::as_str),
        Some("v")
    );
    assert_eq!(committed.metadata.metadata.metadata_log().len(), 1);
    let seen = env
        .catalog
        .table(&TableRef::Arn(t.table.arn.clone()))
        .await
        .unwrap();
    assert_eq!(
        seen.metadata_location.as_deref(),
        Some(committed.metadata_location.as_str())
    );
    assert_ne!(seen.version_token, t.table.version_token);

    // A commit that changes nothing writes nothing and keeps the pointer.
    let noop = TableChange {
        requirements: vec![uuid_is(&t)],
        updates: vec![set_properties(&[("k", "v")])],
    };
    let same = env
        .catalog
        .commit_table(&seen, noop, &env.account)
        .await
        .unwrap();
    assert_eq!(same.metadata_location, committed.metadata_location);

    // UpdateTableMetadataLocation through the control plane is seen by the next Iceberg load.
    let moved = env
        .catalog
        .update_metadata_location(
            &TableRef::Arn(t.table.arn.clone()),
            &seen.version_token,
            &t.metadata_location,
            &env.account,
        )
        .await
        .unwrap();
    let loaded = env
        .catalog
        .iceberg_table(&env.namespace, &t.table.name)
        .await
        .unwrap();
    assert_eq!(loaded.metadata_location, t.metadata_location);
    assert_eq!(loaded.table.version_token, moved.version_token);
}

#[tokio::test]
async fn concurrent_commits_are_rebased_when_requirements_hold() {
    let env = env().await;
    let t = create(&env, "t").await;
    // Eight writers from the same base, each setting its own property: only the UUID is required, so every
    // lost compare-and-swap is rebased and all eight land.
    let commits = (0..8).map(|i| {
        let change = TableChange {
            requirements: vec![uuid_is(&t)],
            updates: vec![set_properties(&[(&format!("p{i}"), "x")])],
        };
        let catalog = env.catalog.clone();
        let table = t.table.clone();
        let account = env.account.clone();
        tokio::spawn(async move { catalog.commit_table(&table, change, &account).await })
    });
    for handle in commits.collect::<Vec<_>>() {
        handle.await.unwrap().unwrap();
    }
    let loaded = env
        .catalog
        .iceberg_table(&env.namespace, &t.table.name)
        .await
        .unwrap();
    for i in 0..8 {
        assert!(
            loaded
                .metadata
                .metadata
                .properties()
                .contains_key(&format!("p{i}")),
            "p{i} lost"
        );
    }
    assert_eq!(loaded.metadata.metadata.metadata_log().len(), 8);
}

#[tokio::test]
async fn a_failed_requirement_is_a_conflict_and_changes_nothing() {
    let env = env().await;
    let t = create(&env, "t").await;
    let m = &t.metadata.metadata;
    // Java's schema evolution: assert the current schema and last column id, add a schema, make it current.
    let evolve = |name: &str| TableChange {
        requirements: vec![
            uuid_is(&t),
            TableRequirement::CurrentSchemaIdMatch {
                current_schema_id: m.current_schema_id(),
            },
            TableRequirement::LastAssignedFieldIdMatch {
                last_assigned_field_id: m.last_column_id(),
            },
        ],
        updates: vec![
            TableUpdate::AddSchema {
                schema: add_column_schema(m, name),
            },
            TableUpdate::SetCurrentSchema { schema_id: -1 },
        ],
    };
    let first = env
        .catalog
        .commit_table(&t.table, evolve("a"), &env.account)
        .await
        .unwrap();
    assert_eq!(first.metadata.metadata.current_schema_id(), 1);
    let err = env
        .catalog
        .commit_table(&t.table, evolve("b"), &env.account)
        .await
        .unwrap_err();
    match err {
        CommitError::Conflict(message) => {
            assert_eq!(
                message,
                "Requirement failed: current schema changed: expected id 0 != 1"
            )
        }
        other => panic!("want a conflict, got {other:?}"),
    }
    let loaded = env
        .catalog
        .iceberg_table(&env.namespace, &t.table.name)
        .await
        .unwrap();
    assert_eq!(loaded.metadata_location, first.metadata_location);
    assert!(
        loaded
            .metadata
            .metadata
            .current_schema()
            .field_by_name("b")
            .is_none()
    );
}

#[tokio::test]
async fn invalid_updates_are_rejected() {
    let env = env().await;
    let t = create(&env, "t").await;
    for update in [
        TableUpdate::SetCurrentSchema { schema_id: 42 },
        TableUpdate::AssignUuid { uuid: Uuid::nil() },
        TableUpdate::UpgradeFormatVersion {
            format_version: FormatVersion::V1,
        },
    ] {
        let change = TableChange {
            requirements: vec![],
            updates: vec![update.clone()],
        };
        let err = env
            .catalog
            .commit_table(&t.table, change, &env.account)
            .await
            .unwrap_err();
        assert!(
            matches!(err, CommitError::Invalid(_)),
            "{update:?}: {err:?}"
        );
    }
    let change = TableChange {
        requirements: vec![TableRequirement::NotExist],
        updates: vec![],
    };
    assert!(matches!(
        env.catalog
            .commit_table(&t.table, change, &env.account)
            .await,
        Err(CommitError::AlreadyExists(_))
    ));
    // The table's own storage is the only location it has: naming it is no change, anything else is refused.
    let own = TableChange {
        requirements: vec![],
        updates: vec![TableUpdate::SetLocation {
            location: format!("{}/", t.table.warehouse_location),
        }],
    };
    let same = env
        .catalog
        .commit_table(&t.table, own, &env.account)
        .await
        .unwrap();
    assert_eq!(same.metadata_location, t.metadata_location);
    let other = create(&env, "other").await;
    for location in [
        "s3://elsewhere/x".to_string(),
        other.table.warehouse_location.clone(),
        format!("{}/sub", t.table.warehouse_location),
    ] {
        let moved = TableChange {
            requirements: vec![],
            updates: vec![TableUpdate::SetLocation {
                location: location.clone(),
            }],
        };
        match env
            .catalog
            .commit_table(&t.table, moved, &env.account)
            .await
        {
            Err(CommitError::Invalid(m)) => assert!(m.contains("own storage"), "{m}"),
            other => panic!("set-location {location}: {other:?}"),
        }
    }
    let now = env.catalog.reload_iceberg_table(&t.table).await.unwrap();
    assert_eq!(now.metadata_location, t.metadata_location);
    assert_eq!(
        now.metadata.metadata.location(),
        t.metadata.metadata.location()
    );
}

#[tokio::test]
async fn transactions_are_all_or_nothing() {
    let env = env().await;
    let a = create(&env, "a").await;
    let b = create(&env, "b").await;
    let ok = TableChange {
        requirements: vec![uuid_is(&a)],
        updates: vec![set_properties(&[("x", "1")])],
    };
    let stale = TableChange {
        requirements: vec![TableRequirement::CurrentSchemaIdMatch {
            current_schema_id: 9,
        }],
        updates: vec![set_properties(&[("x", "1")])],
    };
    let err = env
        .catalog
        .commit_tables(
            vec![(a.table.clone(), ok.clone()), (b.table.clone(), stale)],
            &env.account,
        )
        .await;
    assert!(matches!(err, Err(CommitError::Conflict(_))), "{err:?}");
    for t in [&a, &b] {
        let now = env
            .catalog
            .table(&TableRef::Arn(t.table.arn.clone()))
            .await
            .unwrap();
        assert_eq!(
            now.version_token, t.table.version_token,
            "{} changed",
            t.table.name
        );
    }
    // The same table twice is refused; both valid changes land together.
    let twice = env
        .catalog
        .commit_tables(
            vec![(a.table.clone(), ok.clone()), (a.table.clone(), ok.clone())],
            &env.account,
        )
        .await;
    assert!(matches!(twice, Err(CommitError::Invalid(_))));
    let ok_b = TableChange {
        requirements: vec![uuid_is(&b)],
        updates: vec![set_properties(&[("y", "2")])],
    };
    let done = env
        .catalog
        .commit_tables(
            vec![(a.table.clone(), ok), (b.table.clone(), ok_b)],
            &env.account,
        )
        .await
        .unwrap();
    assert_eq!(done.len(), 2);
    for t in &done {
        let now = env
            .catalog
            .table(&TableRef::Arn(t.table.arn.clone()))
            .await
            .unwrap();
        assert_eq!(
            now.metadata_location.as_deref(),
            Some(t.metadata_location.as_str())
        );
    }
}

#[tokio::test]
async fn staged_creates_build_metadata_from_the_create_changes() {
    let env = env().await;
    let staged = env
        .catalog
        .stage_iceberg_table(&env.namespace, definition())
        .await
        .unwrap();
    let m = &staged.metadata;
    // Java's createChanges for the staged metadata, then a property of the transaction.
    let updates: Vec<TableUpdate> = serde_json::from_value(json!([
        {"action": "assign-uuid", "uuid": m.uuid()},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": m.current_schema(), "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": staged.location},
        {"action": "set-properties", "updates": {"created": "staged"}},
        {"action": "set-properties", "updates": {"more": "1"}},
    ]))
    .unwrap();
    let change = TableChange {
        requirements: vec![TableRequirement::NotExist],
        updates,
    };
    let name = TableName::parse("staged").unwrap();
    let created = env
        .catalog
        .create_staged_table(&env.namespace, &name, change.clone(), &env.account)
        .await
        .unwrap();
    assert_eq!(
        created.table.id, staged.table_id,
        "the table takes the id of its staged location"
    );
    let metadata = &created.metadata.metadata;
    assert_eq!(metadata.uuid(), staged.table_id);
    assert_eq!(metadata.location(), staged.location);
    assert_eq!(
        metadata.properties().get("more").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        metadata.current_schema().as_struct(),
        m.current_schema().as_struct()
    );
    let again = env
        .catalog
        .create_staged_table(&env.namespace, &name, change, &env.account)
        .await;
    assert!(matches!(again, Err(CommitError::AlreadyExists(_))));
    let mixed = TableChange {
        requirements: vec![
            TableRequirement::NotExist,
            TableRequirement::UuidMatch { uuid: Uuid::nil() },
        ],
        updates: vec![],
    };
    let other = TableName::parse("other").unwrap();
    assert!(matches!(
        env.catalog
            .create_staged_table(&env.namespace, &other, mixed, &env.account)
            .await,
        Err(CommitError::Invalid(_))
    ));
}

#[tokio::test]
async fn trimmed_metadata_files_are_deleted_when_the_table_asks() {
    let env = env().await;
    let t = create(&env, "t").await;
    let props = set_properties(&[
        ("write.metadata.previous-versions-max", "1"),
        ("write.metadata.delete-after-commit.enabled", "true"),
    ]);
    let mut current = env
        .catalog
        .commit_table(
            &t.table,
            TableChange {
                requirements: vec![],
                updates: vec![props],
            },
            &env.account,
        )
        .await
        .unwrap();
    let mut locations = vec![
        t.metadata_location.clone(),
        current.metadata_location.clone(),
    ];
    for i in 0..3 {
        let change = TableChange {
            requirements: vec![],
            updates: vec![set_properties(&[("i", &i.to_string())])],
        };
        current = env
            .catalog
            .commit_table(&current.table, change, &env.account)
            .await
            .unwrap();
        locations.push(current.metadata_location.clone());
    }
    assert_eq!(current.metadata.metadata.metadata_log().len(), 1);
    let files = env.catalog.table_files(current.table.id);
    let read = |location: &str| {
        let (files, location) = (files.clone(), location.to_string());
        async move { files.read(&location).await.unwrap().is_some() }
    };
    // The current file and the one the log keeps exist; the trimmed ones are gone.
    let kept = locations.len() - 2;
    for (i, location) in locations.iter().enumerate() {
        assert_eq!(read(location).await, i >= kept, "{i}: {location}");
    }
}

#[tokio::test]
async fn purge_deletes_the_table_storage() {
    let env = env().await;
    let t = create(&env, "t").await;
    assert_eq!(
        env.catalog.purge_table_storage(t.table.id).await.unwrap(),
        1
    );
    assert_eq!(
        env.catalog.purge_table_storage(t.table.id).await.unwrap(),
        0
    );
}

#[tokio::test]
async fn idempotency_records_replay_the_first_answer() {
    let env = env().await;
    assert_eq!(
        env.catalog
            .remembered_reply(&env.account, "k1")
            .await
            .unwrap(),
        None
    );
    let first = RememberedReply {
        fingerprint: "POST /x".into(),
        status: 200,
        body: "{\"a\":1}".into(),
    };
    env.catalog
        .remember_reply(&env.account, "k1", first.clone())
        .await
        .unwrap();
    let second = RememberedReply {
        fingerprint: "POST /x".into(),
        status: 200,
        body: "{\"a\":2}".into(),
    };
    env.catalog
        .remember_reply(&env.account, "k1", second)
        .await
        .unwrap();
    assert_eq!(
        env.catalog
            .remembered_reply(&env.account, "k1")
            .await
            .unwrap(),
        Some(first)
    );
    let other = AccountId::parse("444455556666").unwrap();
    assert_eq!(
        env.catalog.remembered_reply(&other, "k1").await.unwrap(),
        None
    );
}
