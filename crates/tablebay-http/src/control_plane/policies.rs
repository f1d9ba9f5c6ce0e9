//! Put/Get/DeleteTableBucketPolicy and Put/Get/DeleteTablePolicy. The document travels as a JSON string
//! inside the body (`{"resourcePolicy": "{…}"}`) and is validated before it is stored.

use axum::response::Response;
use tablebay_catalog::{Catalog, ResourcePolicy, TableRef};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, ok_empty};
use super::wire::ResourcePolicyBody;

fn policy(req: ResourcePolicyBody) -> Result<ResourcePolicy, ControlPlaneError> {
    Ok(ResourcePolicy::parse(&req.resource_policy)?)
}

fn policy_response(policy: &ResourcePolicy) -> Result<Response, ControlPlaneError> {
    json(&ResourcePolicyBody {
        resource_policy: policy.as_str().to_string(),
    })
}

/// `PUT /buckets/{arn}/policy`.
pub(super) async fn put_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    request: ResourcePolicyBody,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    catalog
        .put_bucket_policy(&bucket, &policy(request)?)
        .await?;
    ok_empty()
}

/// `GET /buckets/{arn}/policy`.
pub(super) async fn get_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    policy_response(&catalog.bucket_policy(&ctx.bucket_arn(bucket)?).await?)
}

/// `DELETE /buckets/{arn}/policy`.
pub(super) async fn delete_bucket(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
) -> Result<Response, ControlPlaneError> {
    catalog
        .delete_bucket_policy(&ctx.bucket_arn(bucket)?)
        .await?;
    no_content()
}

/// `PUT /tables/{arn}/{ns}/{name}/policy`.
pub(super) async fn put_table(
    catalog: &Catalog,
    table: &TableRef,
    request: ResourcePolicyBody,
) -> Result<Response, ControlPlaneError> {
    catalog.put_table_policy(table, &policy(request)?).await?;
    ok_empty()
}

/// `GET /tables/{arn}/{ns}/{name}/policy`.
pub(super) async fn get_table(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    policy_response(&catalog.table_policy(table).await?)
}

/// `DELETE /tables/{arn}/{ns}/{name}/policy`.
pub(super) async fn delete_table(
    catalog: &Catalog,
    table: &TableRef,
) -> Result<Response, ControlPlaneError> {
    catalog.delete_table_policy(table).await?;
    no_content()
}
