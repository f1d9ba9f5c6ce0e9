//! CreateTable, GetTable (both routes), ListTables, DeleteTable, RenameTable, and the metadata pointer:
//! GetTableMetadataLocation and UpdateTableMetadataLocation.

use axum::response::Response;
use tablebay_catalog::{
    Catalog, NamespaceName, NewTable, Table, TableDefinition, TableName, TableRef, Tags,
};

use super::buckets::{encryption, storage_class};
use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, page_request};
use super::router::ListQuery;
use super::wire::{
    CreateTableRequest, CreateTableResponse, GetTableMetadataLocationResponse, GetTableResponse,
    IcebergMetadata, ListTablesResponse, RenameTableRequest, TableMetadata, TableSummary,
    UpdateTableMetadataLocationRequest, UpdateTableMetadataLocationResponse, timestamp,
};

/// `metadata.iceberg` of CreateTable → an Iceberg table definition. `schemaV2` is already Iceberg's schema JSON;
/// the original flat `schema` gets ids in field order (the builder reassigns them anyway).
fn definition(metadata: TableMetadata) -> Result<TableDefinition, ControlPlaneError> {
    let Some(IcebergMetadata {
        schema,
        schema_v2,
        partition_spec,
        write_order,
        properties,
    }) = metadata.iceberg
    else {
        return Err(ControlPlaneError::BadRequest(
            "metadata must contain the iceberg member".to_string(),
        ));
    };
    let schema = match (schema, schema_v2) {
        (Some(_), Some(_)) => {
            return Err(ControlPlaneError::BadRequest(
                "Specify either schema or schemaV2, not both".to_string(),
            ));
        }
        (None, None) => {
            return Err(ControlPlaneError::BadRequest(
                "metadata.iceberg needs a schema".to_string(),
            ));
        }
        (None, Some(v2)) => v2,
        (Some(v1), None) => {
            if v1.fields.is_empty() {
                return Err(ControlPlaneError::BadRequest(
                    "The schema must have at least one field".to_string(),
                ));
            }
            let fields: Vec<serde_json::Value> = v1
                .fields
                .iter()
                .zip(1..)
                .map(|(f, position)| {
                    serde_json::json!({
                        "id": f.id.unwrap_or(position),
                        "name": f.name,
                        "type": f.field_type,
                        "required": f.required.unwrap_or(false),
                    })
                })
                .collect();
            serde_json::json!({"type": "struct", "schema-id": 0, "fields": fields})
        }
    };
    Ok(TableDefinition::from_iceberg_json(
        schema,
        partition_spec,
        write_order,
        properties.unwrap_or_default(),
    )?)
}

/// `PUT /tables/{tableBucketARN}/{namespace}`.
pub(super) async fn create(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    namespace: &str,
    req: CreateTableRequest,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let namespace = NamespaceName::parse(namespace)?;
    let new = NewTable {
        name: TableName::parse(&req.name)?,
        format: req.format,
        definition: req.metadata.map(definition).transpose()?,
        encryption: req.encryption_configuration.map(encryption).transpose()?,
        storage_class: req
            .storage_class_configuration
            .as_ref()
            .map(storage_class)
            .transpose()?,
        tags: Tags::new(req.tags.unwrap_or_default())?,
    };
    let table = catalog
        .create_table(&bucket, &namespace, new, &ctx.account)
        .await?;
    json(&CreateTableResponse {
        table_arn: table.arn.to_string(),
        version_token: table.version_token,
    })
}

fn get_response(table: Table) -> GetTableResponse {
    GetTableResponse {
        name: table.name.to_string(),
        table_type: "customer",
        table_arn: table.arn.to_string(),
        namespace: vec![table.namespace.to_string()],
        namespace_id: table.namespace_id.to_string(),
        version_token: table.version_token,
        metadata_location: table.metadata_location,
        warehouse_location: table.warehouse_location,
        created_at: timestamp(&table.created_at),
        created_by: table.created_by,
        modified_at: timestamp(&table.modified_at),
        modified_by: table.modified_by,
        owner_account_id: table.bucket.arn.account.to_string(),
        format: table.format,
        table_bucket_id: table.bucket.id.to_string(),
    }
}

/// `GET /get-table?…` and the legacy `GET /tables/{tableBucketARN}/{namespace}/{name}`.
pub(super) async fn get(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    json(&get_response(catalog.table(table).await?))
}

/// `GET /tables/{tableBucketARN}`.
pub(super) async fn list(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    namespace: Option<&str>,
    query: &ListQuery,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let namespace = namespace.map(NamespaceName::parse).transpose()?;
    let page = catalog
        .list_tables(&bucket, namespace.as_ref(), &page_request(query, 255)?)
        .await?;
    json(&ListTablesResponse {
        tables: page
            .items
            .into_iter()
            .map(|t| TableSummary {
                namespace: vec![t.namespace.to_string()],
                name: t.name.to_string(),
                table_type: "customer",
                table_arn: t.arn.to_string(),
                created_at: timestamp(&t.created_at),
                modified_at: timestamp(&t.modified_at),
                namespace_id: t.namespace_id.to_string(),
                table_bucket_id: t.bucket.id.to_string(),
            })
            .collect(),
        continuation_token: page.next.map(|t| t.as_str().to_string()),
    })
}

/// `DELETE /tables/{tableBucketARN}/{namespace}/{name}?versionToken=`.
pub(super) async fn delete(
    catalog: &Catalog,
    table: &TableRef,
    version_token: Option<&str>,
) -> Result<Response, ControlPlaneError> {
    catalog.delete_table(table, version_token).await?;
    no_content()
}

/// `PUT /tables/{tableBucketARN}/{namespace}/{name}/rename`.
pub(super) async fn rename(
    catalog: &Catalog,
    ctx: &RequestContext,
    table: &TableRef,
    req: RenameTableRequest,
) -> Result<Response, ControlPlaneError> {
    let new_namespace = req
        .new_namespace_name
        .as_deref()
        .map(NamespaceName::parse)
        .transpose()?;
    let new_name = req.new_name.as_deref().map(TableName::parse).transpose()?;
    catalog
        .rename_table(
            table,
            new_namespace.as_ref(),
            new_name.as_ref(),
            req.version_token.as_deref(),
            &ctx.account,
        )
        .await?;
    no_content()
}

/// `GET /tables/{tableBucketARN}/{namespace}/{name}/metadata-location`.
pub(super) async fn get_metadata_location(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let table = catalog.table(table).await?;
    json(&GetTableMetadataLocationResponse {
        version_token: table.version_token,
        metadata_location: table.metadata_location,
        warehouse_location: table.warehouse_location,
    })
}

/// `PUT /tables/{tableBucketARN}/{namespace}/{name}/metadata-location`: compare-and-swap on the version token.
pub(super) async fn update_metadata_location(
    catalog: &Catalog,
    ctx: &RequestContext,
    table: &TableRef,
    req: UpdateTableMetadataLocationRequest,
) -> Result<Response, ControlPlaneError> {
    let role = ctx.role.as_ref().map(|(a, r)| (a.as_str(), r.as_str()));
    let table = catalog
        .update_metadata_location_as(
            table,
            &req.version_token,
            &req.metadata_location,
            &ctx.account,
            role,
        )
        .await?;
    json(&UpdateTableMetadataLocationResponse {
        name: table.name.to_string(),
        table_arn: table.arn.to_string(),
        namespace: vec![table.namespace.to_string()],
        version_token: table.version_token,
        metadata_location: req.metadata_location,
    })
}
