//! CreateTableBucket, GetTableBucket, ListTableBuckets, DeleteTableBucket.

use std::str::FromStr;

use axum::response::Response;
use tablebay_catalog::{
    BucketName, Catalog, Encryption, NewBucket, SseAlgorithm, StorageClass, TableBucket, Tags,
};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, page_request};
use super::router::ListQuery;
use super::wire::{
    ArnResponse, CreateTableBucketRequest, EncryptionConfiguration, ListTableBucketsResponse,
    StorageClassConfiguration, TableBucketSummary, timestamp,
};

/// Wire encryption configuration → domain.
pub(super) fn encryption(wire: EncryptionConfiguration) -> Result<Encryption, ControlPlaneError> {
    Ok(Encryption::new(
        SseAlgorithm::from_str(&wire.sse_algorithm)?,
        wire.kms_key_arn,
    )?)
}

/// Wire storage class configuration → domain.
pub(super) fn storage_class(
    wire: &StorageClassConfiguration,
) -> Result<StorageClass, ControlPlaneError> {
    Ok(StorageClass::from_str(&wire.storage_class)?)
}

fn summary(bucket: &TableBucket) -> TableBucketSummary {
    TableBucketSummary {
        arn: bucket.arn.to_string(),
        name: bucket.arn.name.to_string(),
        owner_account_id: bucket.arn.account.to_string(),
        created_at: timestamp(&bucket.created_at),
        table_bucket_id: bucket.id.to_string(),
        bucket_type: "customer",
    }
}

/// `PUT /buckets`.
pub(super) async fn create(
    catalog: &Catalog,
    ctx: &RequestContext,
    req: CreateTableBucketRequest,
) -> Result<Response, ControlPlaneError> {
    let new = NewBucket {
        name: BucketName::parse(&req.name)?,
        encryption: req.encryption_configuration.map(encryption).transpose()?,
        storage_class: req
            .storage_class_configuration
            .as_ref()
            .map(storage_class)
            .transpose()?,
        tags: Tags::new(req.tags.unwrap_or_default())?,
    };
    let bucket = catalog.create_bucket(&ctx.account, new).await?;
    json(&ArnResponse {
        arn: bucket.arn.to_string(),
    })
}

/// `GET /buckets/{tableBucketARN}`.
pub(super) async fn get(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    let bucket = catalog.bucket(&ctx.bucket_arn(bucket)?).await?;
    json(&summary(&bucket))
}

/// `GET /buckets`: the caller's own buckets.
pub(super) async fn list(
    catalog: &Catalog,
    ctx: &RequestContext,
    query: &ListQuery,
    bucket_type: Option<&str>,
) -> Result<Response, ControlPlaneError> {
    let page = page_request(query, 63)?;
    let response = match bucket_type {
        // Every bucket here is a customer bucket; AWS-managed (`aws`) buckets do not exist.
        Some("aws") => ListTableBucketsResponse {
            table_buckets: vec![],
            continuation_token: None,
        },
        None | Some("customer") => {
            let page = catalog.list_buckets(&ctx.account, &page).await?;
            ListTableBucketsResponse {
                table_buckets: page.items.iter().map(summary).collect(),
                continuation_token: page.next.map(|t| t.as_str().to_string()),
            }
        }
        Some(other) => {
            return Err(ControlPlaneError::BadRequest(format!(
                "Invalid type '{other}': expected customer or aws"
            )));
        }
    };
    json(&response)
}

/// `DELETE /buckets/{tableBucketARN}`.
pub(super) async fn delete(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    catalog.delete_bucket(&ctx.bucket_arn(bucket)?).await?;
    no_content()
}
