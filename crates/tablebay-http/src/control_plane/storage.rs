//! Storage class (PutTableBucketStorageClass, GetTableBucketStorageClass, GetTableStorageClass) and the bucket
//! metrics configuration (Put/Get/DeleteTableBucketMetricsConfiguration).

use axum::response::Response;
use tablebay_catalog::{Catalog, StorageClass, TableRef};

use super::buckets::storage_class;
use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, ok_empty};
use super::wire::{GetTableBucketMetricsResponse, StorageClassBody, StorageClassConfiguration};

fn class_response(class: StorageClass) -> Result<Response, ControlPlaneError> {
    json(&StorageClassBody {
        storage_class_configuration: StorageClassConfiguration {
            storage_class: class.to_string(),
        },
    })
}

/// `PUT /buckets/{arn}/storage-class`.
pub(super) async fn put_bucket_class(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    req: StorageClassBody,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    catalog
        .put_bucket_storage_class(&bucket, storage_class(&req.storage_class_configuration)?)
        .await?;
    ok_empty()
}

/// `GET /buckets/{arn}/storage-class`.
pub(super) async fn get_bucket_class(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    class_response(
        catalog
            .table_bucket_storage_class(&ctx.bucket_arn(bucket)?)
            .await?,
    )
}

/// `GET /tables/{arn}/{ns}/{name}/storage-class`.
pub(super) async fn get_table_class(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    class_response(catalog.table_storage_class(table).await?)
}

/// `PUT /buckets/{arn}/metrics` (bodiless).
pub(super) async fn put_metrics(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    catalog.put_bucket_metrics(&ctx.bucket_arn(bucket)?).await?;
    no_content()
}

/// `GET /buckets/{arn}/metrics`.
pub(super) async fn get_metrics(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    let arn = ctx.bucket_arn(bucket)?;
    let config = catalog.bucket_metrics(&arn).await?;
    let arn = catalog.bucket(&arn).await?.arn;
    json(&GetTableBucketMetricsResponse {
        table_bucket_arn: arn.to_string(),
        id: config.id,
    })
}

/// `DELETE /buckets/{arn}/metrics`.
pub(super) async fn delete_metrics(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    catalog
        .delete_bucket_metrics(&ctx.bucket_arn(bucket)?)
        .await?;
    no_content()
}
