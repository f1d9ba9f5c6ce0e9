//! Server access logging of a table bucket (PutTableBucketLogging, GetTableBucketLogging). Where the records
//! land is the catalog's rule (`tablebay_catalog::LoggingTarget`); delivering them is `crate::access_log`.

use axum::response::Response;
use tablebay_catalog::{AccessLogging, Catalog};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content};
use super::wire::{
    LoggingEnabled, PartitionedPrefix, TableBucketLoggingBody, TableBucketLoggingStatus,
    TargetObjectKeyFormat,
};

/// `PUT /buckets/{arn}/logging`: an empty `tableBucketLoggingStatus` turns logging off.
pub(super) async fn put_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    req: TableBucketLoggingBody,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let config = match req.table_bucket_logging_status.logging_enabled {
        None => None,
        Some(enabled) => Some(AccessLogging::new(
            &enabled.target_bucket,
            &enabled.target_prefix,
            enabled
                .target_object_key_format
                .partitioned_prefix
                .partition_date_source
                .parse()?,
        )?),
    };
    catalog.put_bucket_logging(&bucket, config).await?;
    no_content()
}

/// `GET /buckets/{arn}/logging`: without a configuration, an empty status (logging is off).
pub(super) async fn get_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    let config = catalog.bucket_logging(&ctx.bucket_arn(bucket)?).await?;
    json(&TableBucketLoggingBody {
        table_bucket_logging_status: TableBucketLoggingStatus {
            logging_enabled: config.map(|c| LoggingEnabled {
                target_bucket: c.target_bucket,
                target_prefix: c.target_prefix,
                target_object_key_format: TargetObjectKeyFormat {
                    partitioned_prefix: PartitionedPrefix {
                        partition_date_source: c.partition_date_source.to_string(),
                    },
                },
            }),
        },
    })
}
