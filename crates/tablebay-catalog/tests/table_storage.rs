//! A table's storage as the data plane resolves it, over a temporary SQLite database and blob directory: the
//! bucket `<table-id>--table-s3` names the table (its ARN and owner, the encryption its writes get), any other
//! name nothing; and the metadata file the catalog wrote at creation is an object of the table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use futures::TryStreamExt;
use tablebay_catalog::*;
use tablebay_objects::{ObjectEncryption, ObjectKey, ReadRequest, TableLocation};
use tablebay_store::{BlobStore, BlobUrl, MetaStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bucket_names_resolve_to_the_tables_storage() {
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
    let bucket = catalog
        .create_bucket(
            &account,
            NewBucket {
                name: BucketName::parse("bucket").unwrap(),
                encryption: None,
                storage_class: None,
                tags: Tags::default(),
            },
        )
        .await
        .unwrap();
    let ns = NamespaceName::parse("ns").unwrap();
    catalog
        .create_namespace(&bucket.arn, ns.clone(), Default::default(), &account)
        .await
        .unwrap();
    let schema = serde_json::json!({"type": "struct", "fields": [{"id": 1, "name": "id", "type": "int", "required": true}]});
    let definition =
        TableDefinition::from_iceberg_json(schema, None, None, Default::default()).unwrap();
    let new = NewTable {
        name: TableName::parse("t").unwrap(),
        format: "ICEBERG".into(),
        definition: Some(definition),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let table = catalog
        .create_table(&bucket.arn, &ns, new, &account)
        .await
        .unwrap();
    let bucket_name = table
        .warehouse_location
        .trim_start_matches("s3://")
        .to_string();
    let storage = catalog.table_storage(&bucket_name).await.unwrap().unwrap();
    assert_eq!(storage.table_id(), table.id);
    assert_eq!(storage.arn.table_id, table.id);
    assert_eq!(storage.owner().as_str(), "111122223333");
    assert_eq!(storage.storage.encryption, ObjectEncryption::Managed);
    for other in [
        "not-a-table-bucket".to_string(),
        "0190f0a0-0000-7000-8000-000000000000--table-s3".to_string(),
        bucket_name.to_uppercase(),
    ] {
        assert_eq!(
            catalog.table_storage(&other).await.unwrap(),
            None,
            "{other}"
        );
    }

    // The metadata file the server wrote is an object of the table.
    let location = TableLocation::parse(table.metadata_location.as_deref().unwrap()).unwrap();
    let (view, body) = catalog
        .objects()
        .get_object(
            storage.table_id(),
            &ObjectKey::parse(&location.key).unwrap(),
            &ReadRequest::default(),
        )
        .await
        .unwrap();
    let bytes: Vec<bytes::Bytes> = body.try_collect().await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes.concat()).unwrap();
    assert_eq!(json["table-uuid"], table.id.to_string());
    assert_eq!(
        view.info.attributes.content_type.as_deref(),
        Some("application/json")
    );
    assert_eq!(view.info.encryption, Some(ObjectEncryption::Managed));
}
