//! TagResource, UntagResource, ListTagsForResource on bucket and table ARNs.

use axum::response::Response;
use tablebay_catalog::{Catalog, ResourceArn, Tags};

use super::error::ControlPlaneError;
use super::request::{json, no_content, ok_empty};
use super::wire::TagsBody;

/// The resource ARN (authorized before the operation, in `access.rs`).
fn resource(raw: &str) -> Result<ResourceArn, ControlPlaneError> {
    Ok(ResourceArn::parse(raw)?)
}

/// `POST /tag/{resourceArn}`.
pub(super) async fn tag(
    catalog: &Catalog,
    arn: &str,
    req: TagsBody,
) -> Result<Response, ControlPlaneError> {
    let arn = resource(arn)?;
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
    arn: &str,
    keys: &[String],
) -> Result<Response, ControlPlaneError> {
    let arn = resource(arn)?;
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
pub(super) async fn list(catalog: &Catalog, arn: &str) -> Result<Response, ControlPlaneError> {
    let tags = catalog.tags(&resource(arn)?).await?;
    json(&TagsBody { tags: tags.0 })
}
