//! Put/Get/DeleteTableBucketEncryption and GetTableEncryption (a table's setting is fixed at creation).

use axum::response::Response;
use tablebay_catalog::{Catalog, Encryption, TableRef};

use super::buckets::encryption;
use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, ok_empty};
use super::wire::{EncryptionBody, EncryptionConfiguration};

fn encryption_response(encryption: &Encryption) -> Result<Response, ControlPlaneError> {
    json(&EncryptionBody {
        encryption_configuration: EncryptionConfiguration {
            sse_algorithm: encryption.algorithm.to_string(),
            kms_key_arn: encryption.kms_key_arn.clone(),
        },
    })
}

/// `PUT /buckets/{arn}/encryption`.
pub(super) async fn put_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    req: EncryptionBody,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    catalog
        .put_bucket_encryption(&bucket, &encryption(req.encryption_configuration)?)
        .await?;
    ok_empty()
}

/// `GET /buckets/{arn}/encryption`.
pub(super) async fn get_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    encryption_response(
        &catalog
            .table_bucket_encryption(&ctx.bucket_arn(bucket)?)
            .await?,
    )
}

/// `DELETE /buckets/{arn}/encryption`: back to the default (AES256).
pub(super) async fn delete_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    catalog
        .delete_bucket_encryption(&ctx.bucket_arn(bucket)?)
        .await?;
    no_content()
}

/// `GET /tables/{arn}/{ns}/{name}/encryption`.
pub(super) async fn get_table(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (_, encryption) = catalog.table_encryption(table).await?;
    encryption_response(&encryption)
}
