//! What every control-plane handler shares: the authenticated request context, body parsing into wire
//! structs, wire strings into domain types, and response building.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use tablebay_catalog::{AccountId, BucketArn, PageRequest};

use super::error::ControlPlaneError;
use super::router::ListQuery;

/// Who is asking, once SigV4 has been verified (from the pipeline's context).
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    pub account: AccountId,
    /// For a session of an assumed role: its account and role name (who may write a replica).
    pub role: Option<(String, String)>,
}

impl RequestContext {
    /// A bucket ARN from a path segment (authorized before the operation, in `access.rs`).
    pub(crate) fn bucket_arn(&self, raw: &str) -> Result<BucketArn, ControlPlaneError> {
        Ok(BucketArn::parse(raw)?)
    }
}

/// Validates listing parameters.
pub(crate) fn page_request(
    query: &ListQuery,
    max_prefix: usize,
) -> Result<PageRequest, ControlPlaneError> {
    let max = match &query.max {
        None => None,
        Some(raw) => Some(
            raw.parse::<i64>()
                .map_err(|_| ControlPlaneError::BadRequest(format!("Invalid page size '{raw}'")))?,
        ),
    };
    Ok(PageRequest::new(
        query.prefix.clone(),
        query.continuation_token.as_deref(),
        max,
        max_prefix,
    )?)
}

/// 200 with a JSON body.
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Response, ControlPlaneError> {
    let body = serde_json::to_vec(value).map_err(|e| ControlPlaneError::Internal(e.to_string()))?;
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// 200 with an empty body (the modeled code of PutTableBucketPolicy, PutTableBucketEncryption, TagResource…).
pub(crate) fn ok_empty() -> Result<Response, ControlPlaneError> {
    Ok(StatusCode::OK.into_response())
}

/// 204 (deletes, maintenance puts, rename).
pub(crate) fn no_content() -> Result<Response, ControlPlaneError> {
    Ok(StatusCode::NO_CONTENT.into_response())
}
