//! TagResource, UntagResource, ListTagsForResource on bucket and table ARNs.

use axum::response::Response;
use tablebay_catalog::{Catalog, ResourceArn, Tags};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, ok_empty, parse_body};
use super::wire::TagsBody;

fn resource(ctx: &RequestContext, raw: &str) -> Result<ResourceArn, ControlPlaneError> {
    let arn = ResourceArn::parse(raw)?;
    let owner = match &arn {
        ResourceArn::Bucket(bucket) => &bucket.account,
        ResourceArn::Table(table) => &table.bucket.account,
    };
    ctx.authorize(owner)?;
    Ok(arn)
}

/// `POST /tag/{resourceArn}`.
pub(super) async fn tag(
    catalog: &Catalog,
    ctx: &RequestContext,
    arn: &str,
    body: &[u8],
) -> Result<Response, ControlPlaneError> {
    let arn = resource(ctx, arn)?;
    let req: TagsBody = parse_body(body)?;
    if req.tags.is_empty() {
        return Err(ControlPlaneError::BadRequest(
            "tags must not be empty".to_string(),
        ));
    }
    catalog.tag_resource(&arn, Tags::new(req.tags)?).await?;
    ok_empty()
}

/// `DELETE /tag/{resourceArn}?tagKeys=…`.
pub(super) async fn untag(
    catalog: &Catalog,
    ctx: &RequestContext,
    arn: &str,
    keys: &[String],
) -> Result<Response, ControlPlaneError> {
    let arn = resource(ctx, arn)?;
    if keys.is_empty() {
        return Err(ControlPlaneError::BadRequest(
            "tagKeys must not be empty".to_string(),
        ));
    }
    for key in keys {
        Tags::check_key(key)?;
    }
    catalog.untag_resource(&arn, keys).await?;
    no_content()
}

/// `GET /tag/{resourceArn}`.
pub(super) async fn list(
    catalog: &Catalog,
    ctx: &RequestContext,
    arn: &str,
) -> Result<Response, ControlPlaneError> {
    let tags = catalog.tags(&resource(ctx, arn)?).await?;
    json(&TagsBody { tags: tags.0 })
}
