//! What every admin handler shares: reading the bounded body, SigV4 authentication, the account the call acts
//! in (`?accountId=` for the instance root), JSON parsing and answers, and one log line and metrics per request.

use std::future::Future;
use std::time::Instant;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tablebay_auth::Principal;

use super::error::AdminError;
use crate::authn::authenticate;
use crate::state::AppState;

/// Admin bodies are small JSON documents; a policy is at most 20 KiB.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// An authenticated admin call.
pub(crate) struct AdminCall {
    pub app: AppState,
    pub principal: Principal,
    /// The account named by `?accountId=`, if any (only the instance root may name another than its own).
    pub requested_account: Option<String>,
    pub body: Bytes,
    pub request_id: String,
}

impl AdminCall {
    /// The account the call acts in.
    pub(crate) fn account(&self) -> Result<String, AdminError> {
        Ok(self
            .app
            .iam
            .admin_account(&self.principal, self.requested_account.as_deref())?)
    }

    /// The body as JSON of type `T`; an empty body reads as `{}`.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, AdminError> {
        let body: &[u8] = if self.body.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &self.body
        };
        serde_json::from_slice(body)
            .map_err(|e| AdminError::BadRequest(format!("Invalid request body: {e}")))
    }

    /// The body as text (a policy document).
    pub(crate) fn text(&self) -> Result<&str, AdminError> {
        std::str::from_utf8(&self.body)
            .map_err(|_| AdminError::BadRequest("The body must be UTF-8 JSON".to_string()))
    }

    /// Records an allowed admin mutation in the audit log.
    pub(crate) fn audit(&self, action: &str, resource: &str) {
        tablebay_iam::audit_mutation(&self.principal, action, resource, &self.request_id);
    }
}

/// Runs one admin operation: body, authentication, the operation, the answer, a log line and metrics.
pub(crate) async fn run<F, Fut>(
    app: AppState,
    request: Request,
    operation: &'static str,
    op: F,
) -> Response
where
    F: FnOnce(AdminCall) -> Fut,
    Fut: Future<Output = Result<Response, AdminError>>,
{
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let mut principal_arn = String::from("-");
    let result = async {
        let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| {
                AdminError::BadRequest(format!(
                    "The request body is larger than {MAX_BODY_BYTES} bytes"
                ))
            })?;
        let principal = authenticate(&app.tables_verifier, &app.iam, &parts, &body).await?;
        principal_arn.clone_from(&principal.arn);
        let requested_account = parts.uri.query().and_then(|q| {
            q.split('&')
                .find_map(|pair| pair.strip_prefix("accountId="))
                .map(|v| {
                    percent_encoding::percent_decode_str(v)
                        .decode_utf8_lossy()
                        .into_owned()
                })
        });
        op(AdminCall {
            app: app.clone(),
            principal,
            requested_account,
            body,
            request_id: request_id.clone(),
        })
        .await
    }
    .await;
    let mut response = match result {
        Ok(response) => response,
        Err(e) => {
            if e.status() == StatusCode::FORBIDDEN {
                tracing::info!(
                    target: tablebay_iam::AUDIT_TARGET,
                    principal = %principal_arn,
                    action = operation,
                    resource = %parts.uri.path(),
                    decision = "deny",
                    reason = %e,
                    request_id,
                    "audit"
                );
            }
            e.into_response()
        }
    };
    if let Ok(id) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-amzn-requestid", id);
    }
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics.record("admin", operation, status, latency);
    tracing::info!(
        surface = "admin",
        method = %parts.method,
        operation,
        principal = %principal_arn,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        request_id,
        "request"
    );
    response
}

/// 200 with a JSON body.
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Response, AdminError> {
    let body = serde_json::to_vec(value).map_err(|e| AdminError::Internal(e.to_string()))?;
    Ok(json_bytes(body))
}

/// 200 with JSON bytes as they are.
pub(crate) fn json_bytes(body: Vec<u8>) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 200 with `{}`.
pub(crate) fn ok() -> Result<Response, AdminError> {
    Ok(json_bytes(b"{}".to_vec()))
}
