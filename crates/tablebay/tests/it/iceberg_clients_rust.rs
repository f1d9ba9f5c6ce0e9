//! iceberg-rust's `RestCatalog` (`iceberg-catalog-rest` 0.10.1) against `<tables url>/iceberg` with a bearer
//! token. iceberg-rust has no SigV4 (reference/iceberg-rest.md trap 20), so it is given
//! `credential=<access key id>:<secret>` and fetches the token itself from `oauth2-server-uri`
//! (`<uri>/v1/oauth/tokens`, OAuth2 client credentials). The exact configuration is
//! docs/clients/iceberg-rust.md.
//!
//! Only catalog operations run here: iceberg-rust 0.10 needs a `StorageFactory` for its FileIO but has no
//! S3 one in the `iceberg` crate, and loading, creating and committing schema changes read no files, so the
//! in-memory factory is enough. Data files are covered by the PyIceberg and DuckDB suites.

use std::collections::HashMap;
use std::sync::Arc;

use http::{Method, StatusCode};
use iceberg::io::MemoryStorageFactory;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use iceberg::transaction::{AddColumn, ApplyTransactionAction, Transaction};
use iceberg::{Catalog, CatalogBuilder, ErrorKind, NamespaceIdent, TableCreation, TableIdent};
use iceberg_catalog_rest::{RestCatalog, RestCatalogBuilder};
use serde_json::{Value, json};

use crate::server::{ACCESS_KEY, SECRET, TestServer};

/// A fresh server with one table bucket; returns the server and the bucket ARN (the warehouse).
async fn server_with_bucket(name: &str) -> (TestServer, String) {
    let server = TestServer::start();
    let response = server
        .call(Method::PUT, "/buckets", json!({ "name": name }))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let created: Value = response.json().await.unwrap();
    let arn = created["arn"].as_str().unwrap().to_string();
    (server, arn)
}

/// The properties of docs/clients/iceberg-rust.md.
fn catalog_properties(
    server: &TestServer,
    warehouse: &str,
    secret: &str,
) -> HashMap<String, String> {
    let uri = format!("{}/iceberg", server.tables_url);
    HashMap::from([
        ("uri".to_string(), uri.clone()),
        ("warehouse".to_string(), warehouse.to_string()),
        ("credential".to_string(), format!("{ACCESS_KEY}:{secret}")),
        (
            "oauth2-server-uri".to_string(),
            format!("{uri}/v1/oauth/tokens"),
        ),
    ])
}

async fn rest_catalog(server: &TestServer, warehouse: &str) -> RestCatalog {
    RestCatalogBuilder::default()
        .with_storage_factory(Arc::new(MemoryStorageFactory))
        .load("tablebay", catalog_properties(server, warehouse, SECRET))
        .await
        .unwrap()
}

fn schema() -> Schema {
    Schema::builder()
        .with_schema_id(0)
        .with_fields(vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)).into(),
            NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)).into(),
        ])
        .build()
        .unwrap()
}

#[tokio::test]
async fn iceberg_rust_namespaces_with_a_bearer_token() {
    let (server, warehouse) = server_with_bucket("rust-ns").await;
    let catalog = rest_catalog(&server, &warehouse).await;

    assert!(catalog.list_namespaces(None).await.unwrap().is_empty());
    let ns = NamespaceIdent::new("rust_ns".to_string());
    let created = catalog
        .create_namespace(
            &ns,
            HashMap::from([("owner".to_string(), "rust".to_string())]),
        )
        .await
        .unwrap();
    assert_eq!(created.name(), &ns);
    assert!(
        catalog.namespace_exists(&ns).await.unwrap(),
        "HEAD on the namespace"
    );
    assert!(
        !catalog
            .namespace_exists(&NamespaceIdent::new("nope".to_string()))
            .await
            .unwrap()
    );
    assert_eq!(
        catalog.list_namespaces(None).await.unwrap(),
        vec![ns.clone()]
    );
    let loaded = catalog.get_namespace(&ns).await.unwrap();
    assert_eq!(
        loaded.properties().get("owner").map(String::as_str),
        Some("rust")
    );

    let again = catalog
        .create_namespace(&ns, HashMap::new())
        .await
        .unwrap_err();
    assert_eq!(again.kind(), ErrorKind::NamespaceAlreadyExists, "{again}");
    let missing = catalog
        .get_namespace(&NamespaceIdent::new("nope".to_string()))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NamespaceNotFound, "{missing}");

    catalog.drop_namespace(&ns).await.unwrap();
    assert!(!catalog.namespace_exists(&ns).await.unwrap());
}

#[tokio::test]
async fn iceberg_rust_tables_and_a_schema_commit_through_a_transaction() {
    let (server, warehouse) = server_with_bucket("rust-tables").await;
    let catalog = rest_catalog(&server, &warehouse).await;
    let ns = NamespaceIdent::new("rust_tables".to_string());
    catalog.create_namespace(&ns, HashMap::new()).await.unwrap();

    let creation = TableCreation::builder()
        .name("events".to_string())
        .schema(schema())
        .build();
    let table = catalog.create_table(&ns, creation).await.unwrap();
    let ident = TableIdent::new(ns.clone(), "events".to_string());
    assert_eq!(table.identifier(), &ident);
    let location = table.metadata().location().to_string();
    assert!(
        location.starts_with("s3://") && location.ends_with("--table-s3"),
        "{location}"
    );
    let first_metadata = table.metadata_location().unwrap().to_string();
    assert!(
        first_metadata.starts_with(&format!("{location}/metadata/00000-")),
        "{first_metadata}"
    );

    assert!(
        catalog.table_exists(&ident).await.unwrap(),
        "HEAD on the table"
    );
    assert_eq!(catalog.list_tables(&ns).await.unwrap(), vec![ident.clone()]);
    let loaded = catalog.load_table(&ident).await.unwrap();
    assert_eq!(loaded.metadata().uuid(), table.metadata().uuid());

    // A schema change through a Transaction: iceberg-rust refreshes, then commits
    // requirements [assert-table-uuid, assert-current-schema-id, …] and updates [add-schema, set-current-schema].
    let tx = Transaction::new(&loaded);
    let tx = tx
        .update_schema()
        .add_column(AddColumn::optional(
            "score",
            Type::Primitive(PrimitiveType::Double),
        ))
        .apply(tx)
        .unwrap();
    let updated = tx.commit(&catalog).await.unwrap();
    let field = updated
        .metadata()
        .current_schema()
        .field_by_name("score")
        .expect("score column");
    assert_eq!(field.id, 3);
    let second_metadata = updated.metadata_location().unwrap().to_string();
    assert!(
        second_metadata.starts_with(&format!("{location}/metadata/00001-")),
        "{second_metadata}"
    );
    let reloaded = catalog.load_table(&ident).await.unwrap();
    assert_eq!(reloaded.metadata_location(), Some(second_metadata.as_str()));
    assert_eq!(reloaded.metadata().current_schema_id(), 1);

    // Properties through a Transaction.
    let tx = Transaction::new(&reloaded);
    let tx = tx
        .update_table_properties()
        .set("owner".to_string(), "rust".to_string())
        .apply(tx)
        .unwrap();
    let with_props = tx.commit(&catalog).await.unwrap();
    assert_eq!(
        with_props
            .metadata()
            .properties()
            .get("owner")
            .map(String::as_str),
        Some("rust")
    );

    // Rename, then errors as iceberg-rust's error kinds.
    let renamed = TableIdent::new(ns.clone(), "renamed".to_string());
    catalog.rename_table(&ident, &renamed).await.unwrap();
    assert!(!catalog.table_exists(&ident).await.unwrap());
    let gone = catalog.load_table(&ident).await.unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::TableNotFound, "{gone}");
    let creation = TableCreation::builder()
        .name("renamed".to_string())
        .schema(schema())
        .build();
    let dup = catalog.create_table(&ns, creation).await.unwrap_err();
    assert_eq!(dup.kind(), ErrorKind::TableAlreadyExists, "{dup}");

    catalog.drop_table(&renamed).await.unwrap();
    assert!(!catalog.table_exists(&renamed).await.unwrap());
    assert!(catalog.list_tables(&ns).await.unwrap().is_empty());
    catalog.drop_namespace(&ns).await.unwrap();
}

#[tokio::test]
async fn iceberg_rust_commit_from_a_stale_table_lands_on_the_latest_metadata() {
    let (server, warehouse) = server_with_bucket("rust-conflict").await;
    let catalog = rest_catalog(&server, &warehouse).await;
    let ns = NamespaceIdent::new("rust_conflict".to_string());
    catalog.create_namespace(&ns, HashMap::new()).await.unwrap();
    let creation = TableCreation::builder()
        .name("t".to_string())
        .schema(schema())
        .build();
    catalog.create_table(&ns, creation).await.unwrap();
    let ident = TableIdent::new(ns, "t".to_string());

    let first = catalog.load_table(&ident).await.unwrap();
    let second = catalog.load_table(&ident).await.unwrap();
    let tx = Transaction::new(&first);
    let tx = tx
        .update_schema()
        .add_column(AddColumn::optional(
            "a",
            Type::Primitive(PrimitiveType::Int),
        ))
        .apply(tx)
        .unwrap();
    tx.commit(&catalog).await.unwrap();

    // `second` is stale. iceberg-rust reloads the table before every commit attempt and re-applies the
    // change on it (and retries a 409 CommitFailedException, a retryable CatalogCommitConflicts), so the
    // commit lands on the latest metadata and keeps both columns.
    let tx = Transaction::new(&second);
    let tx = tx
        .update_schema()
        .add_column(AddColumn::optional(
            "b",
            Type::Primitive(PrimitiveType::Int),
        ))
        .apply(tx)
        .unwrap();
    let result = tx.commit(&catalog).await.unwrap();
    let names: Vec<_> = result
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .collect();
    assert_eq!(names, ["id", "name", "a", "b"]);
}

#[tokio::test]
async fn iceberg_rust_with_a_wrong_secret_gets_no_token() {
    let (server, warehouse) = server_with_bucket("rust-auth").await;
    let catalog = RestCatalogBuilder::default()
        .with_storage_factory(Arc::new(MemoryStorageFactory))
        .load(
            "tablebay",
            catalog_properties(&server, &warehouse, "not-the-secret"),
        )
        .await
        .unwrap();
    let err = catalog.list_namespaces(None).await.unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("invalid_client")
            || err.to_string().contains("401"),
        "a wrong client secret must be an OAuth error, got: {err}"
    );
}
