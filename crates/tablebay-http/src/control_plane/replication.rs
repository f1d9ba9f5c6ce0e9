//! The replication operations (botocore's `/table-bucket-replication`, `/table-replication`,
//! `/replication-status` and `/table-replication/disassociate`): configurations of buckets and tables, the status
//! of a source table per destination, and disassociating a replica. The worker that replicates lives in
//! `tablebay-replication`; the model and its guarantees are `docs/replication.md`.

use axum::response::Response;
use tablebay_catalog::{Catalog, ReplicationConfig, StoredReplication, TableRef};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content};
use super::wire::{
    GetReplicationResponse, GetReplicationStatusResponse, LastReplicatedUpdateWire,
    PutReplicationRequest, PutReplicationResponse, ReplicationConfigurationWire,
    ReplicationDestinationStatusWire, ReplicationDestinationWire, ReplicationRuleWire, timestamp,
};

/// The wire configuration as a validated domain one.
fn config(request: PutReplicationRequest) -> Result<ReplicationConfig, ControlPlaneError> {
    let ReplicationConfigurationWire { role, rules } = request.configuration;
    let rules = rules
        .into_iter()
        .map(|rule| {
            rule.destinations
                .into_iter()
                .map(|d| d.destination_table_bucket_arn)
                .collect()
        })
        .collect();
    Ok(ReplicationConfig::new(role, rules)?)
}

fn wire(stored: StoredReplication) -> GetReplicationResponse {
    GetReplicationResponse {
        version_token: stored.version_token,
        configuration: ReplicationConfigurationWire {
            role: stored.config.role,
            rules: vec![ReplicationRuleWire {
                destinations: stored
                    .config
                    .destinations
                    .into_iter()
                    .map(|destination_table_bucket_arn| ReplicationDestinationWire {
                        destination_table_bucket_arn,
                    })
                    .collect(),
            }],
        },
    }
}

/// The status PutTable(Bucket)Replication answers: the configuration is stored and the workers pick it up.
const PUT_STATUS: &str = "ENABLED";

/// `PUT /table-bucket-replication?tableBucketARN=&versionToken=`.
pub(super) async fn put_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    version_token: Option<&str>,
    request: PutReplicationRequest,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let config = config(request)?;
    let version_token = catalog
        .put_bucket_replication(&bucket, version_token, config)
        .await?;
    json(&PutReplicationResponse {
        version_token,
        status: PUT_STATUS,
    })
}

/// `GET /table-bucket-replication?tableBucketARN=`.
pub(super) async fn get_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    json(&wire(catalog.bucket_replication(&bucket).await?))
}

/// `DELETE /table-bucket-replication?tableBucketARN=&versionToken=`: 204.
pub(super) async fn delete_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    version_token: Option<&str>,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    catalog
        .delete_bucket_replication(&bucket, version_token)
        .await?;
    no_content()
}

/// `PUT /table-replication?tableArn=&versionToken=`.
pub(super) async fn put_table(
    catalog: &Catalog,
    table: &TableRef,
    version_token: Option<&str>,
    request: PutReplicationRequest,
) -> Result<Response, ControlPlaneError> {
    let config = config(request)?;
    let version_token = catalog
        .put_table_replication(table, version_token, config)
        .await?;
    json(&PutReplicationResponse {
        version_token,
        status: PUT_STATUS,
    })
}

/// `GET /table-replication?tableArn=`.
pub(super) async fn get_table(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    json(&wire(catalog.table_replication(table).await?))
}

/// `DELETE /table-replication?tableArn=&versionToken=`: 204.
pub(super) async fn delete_table(
    catalog: &Catalog,
    table: &TableRef,
    version_token: &str,
) -> Result<Response, ControlPlaneError> {
    catalog
        .delete_table_replication(table, Some(version_token))
        .await?;
    no_content()
}

/// `GET /replication-status?tableArn=`.
pub(super) async fn status(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    let (table, destinations) = catalog.replication_status(table).await?;
    json(&GetReplicationStatusResponse {
        source_table_arn: table.arn.to_string(),
        destinations: destinations
            .into_iter()
            .map(|d| ReplicationDestinationStatusWire {
                replication_status: d.state.as_str(),
                destination_table_bucket_arn: d.destination,
                destination_table_arn: d.destination_table_arn,
                last_successful_replicated_update: d.last_replicated.map(|(location, at)| {
                    LastReplicatedUpdateWire {
                        metadata_location: location,
                        timestamp: timestamp(&at),
                    }
                }),
                failure_message: d.failure_message,
            })
            .collect(),
    })
}

/// `PUT /table-replication/disassociate?tableArn=`: 200 with `{}`.
pub(super) async fn disassociate(
    catalog: &Catalog,
    ctx: &RequestContext,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    catalog.disassociate_replica(table, &ctx.account).await?;
    json(&serde_json::json!({}))
}
