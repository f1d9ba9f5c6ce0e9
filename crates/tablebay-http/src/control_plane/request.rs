//! What every control-plane handler shares: the authenticated request context, body parsing into wire
//! structs, wire strings into domain types, and response building.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tablebay_auth::Principal;
use tablebay_catalog::{
    AccountId, BucketArn, NamespaceName, PageRequest, TableArn, TableName, TableRef,
};

use super::error::ControlPlaneError;
use super::router::{ListQuery, TablePath};

/// Who is asking, once SigV4 has been verified.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    pub principal: Principal,
    pub account: AccountId,
}

impl RequestContext {
    /// Until identity and resource policies are enforced, only the owning account's credentials act on its
    /// resources; everyone else gets the modeled AccessDeniedException.
    pub(crate) fn authorize(&self, owner: &AccountId) -> Result<(), ControlPlaneError> {
        if &self.account == owner {
            Ok(())
        } else {
            Err(ControlPlaneError::AccessDenied(format!(
                "{} is not authorized to access resources of account {owner}",
                self.principal.arn
            )))
        }
    }

    /// Resolves and authorizes a bucket ARN from a path segment.
    pub(crate) fn bucket_arn(&self, raw: &str) -> Result<BucketArn, ControlPlaneError> {
        let arn = BucketArn::parse(raw)?;
        self.authorize(&arn.account)?;
        Ok(arn)
    }

    /// Resolves and authorizes a table ARN.
    pub(crate) fn table_arn(&self, raw: &str) -> Result<TableArn, ControlPlaneError> {
        let arn = TableArn::parse(raw)?;
        self.authorize(&arn.bucket.account)?;
        Ok(arn)
    }

    /// Parses and authorizes a table named by path segments.
    pub(crate) fn table_ref(&self, path: &TablePath) -> Result<TableRef, ControlPlaneError> {
        Ok(TableRef::Name {
            bucket: self.bucket_arn(&path.bucket)?,
            namespace: NamespaceName::parse(&path.namespace)?,
            name: TableName::parse(&path.name)?,
        })
    }
}

/// Parses a JSON body; an empty body reads as `{}` (botocore omits bodies without members).
pub(crate) fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ControlPlaneError> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    serde_json::from_slice(body)
        .map_err(|e| ControlPlaneError::BadRequest(format!("Invalid request body: {e}")))
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
