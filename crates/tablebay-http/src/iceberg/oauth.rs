//! `POST /v1/oauth/tokens`: the OAuth2 client-credentials grant for clients without SigV4 (iceberg-rust, Polars:
//! trap 20). `client_id` and `client_secret` are an access key pair, sent in the form body or as HTTP Basic
//! credentials; the answer is a short-lived bearer token accepted on every `/iceberg` route. A valid token can be
//! exchanged for a fresh one (RFC 8693 token exchange, how Java refreshes). Errors use OAuth2's
//! `{error, error_description}` (RFC 6749 §5.2), which is what the clients parse here.

use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};

use super::wire::{OAuthErrorResponse, TokenRequest, TokenResponse};
use crate::form::{FormError, FormPairs, decode_component};
use crate::pipeline::{PipelineError, RequestBody};
use crate::state::AppState;

/// Compares two secrets without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn json_response<T: serde::Serialize>(status: StatusCode, value: &T) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn oauth_error(
    status: StatusCode,
    error: &'static str,
    description: impl Into<String>,
) -> Response {
    json_response(
        status,
        &OAuthErrorResponse {
            error,
            error_description: description.into(),
        },
    )
}

/// The token request of a form body.
fn form(text: &str) -> Result<TokenRequest, FormError> {
    let pairs = FormPairs::parse(text)?;
    let value = |key: &str| pairs.first(key).map(str::to_string);
    Ok(TokenRequest {
        grant_type: value("grant_type"),
        client_id: value("client_id"),
        client_secret: value("client_secret"),
        scope: value("scope"),
        subject_token: value("subject_token"),
    })
}

/// HTTP Basic credentials, if the client sent its id and secret that way (RFC 6749 §2.3.1).
fn basic(parts: &Parts) -> Option<(String, String)> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value
        .strip_prefix("Basic ")
        .or_else(|| value.strip_prefix("basic "))?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    // The id and secret are form-encoded before they are joined (RFC 6749 §2.3.1).
    Some((decode_component(id).ok()?, decode_component(secret).ok()?))
}

/// The token-exchange grant (RFC 8693), which Java's OAuth2 session uses to refresh its token before it expires.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// A token, issued by a previous grant and still valid, for a fresh one of the same access key.
async fn exchange(app: &AppState, subject: Option<&str>) -> Response {
    let Some(subject) = subject else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "subject_token is required",
        );
    };
    let now = chrono::Utc::now();
    let known = match app.iceberg.tokens.verify(subject, now) {
        Ok(id) => long_term_key(app, &id).await.map(|_| id),
        Err(_) => None,
    };
    let Some(access_key_id) = known else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "The subject token is not valid",
        );
    };
    issued(app, &access_key_id)
}

/// The active long-term key `id`: temporary credentials cannot get a bearer token, which would not carry their
/// session token.
async fn long_term_key(app: &AppState, id: &str) -> Option<tablebay_iam::KnownKey> {
    match crate::pipeline::long_term_key(&app.iam, id).await {
        Ok(key) => key,
        Err(e) => {
            // `lookup` logged the cause already.
            tracing::debug!(error = %e, "no long-term key for a token request");
            None
        }
    }
}

fn issued(app: &AppState, access_key_id: &str) -> Response {
    let issued = app.iceberg.tokens.issue(access_key_id, chrono::Utc::now());
    json_response(
        StatusCode::OK,
        &TokenResponse {
            access_token: issued.token,
            token_type: "bearer",
            expires_in: issued.expires_in,
            issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        },
    )
}

/// `POST /v1/oauth/tokens`: grants `client_credentials` and the token exchange.
pub(super) async fn token(
    app: &AppState,
    parts: &Parts,
    body: Result<RequestBody, PipelineError>,
) -> Response {
    if parts.method != http::Method::POST {
        return oauth_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request",
            "Use POST",
        );
    }
    let body = match body {
        Ok(body) => body,
        Err(PipelineError::Busy) => {
            return oauth_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "The server is busy; retry",
            );
        }
        Err(e) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", e.to_string()),
    };
    let req = match body.text().map(form) {
        Ok(Ok(req)) => req,
        Ok(Err(e)) => {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", e.to_string());
        }
        Err(e) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", e),
    };
    match req.grant_type.as_deref() {
        Some("client_credentials") => {}
        Some(TOKEN_EXCHANGE) => return exchange(app, req.subject_token.as_deref()).await,
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                format!(
                    "Unsupported grant_type '{other}': only client_credentials and token exchange are supported"
                ),
            );
        }
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type is required",
            );
        }
    }
    let (id, secret) = match (req.client_id, req.client_secret, basic(parts)) {
        (Some(id), Some(secret), _) => (id, secret),
        (_, _, Some(pair)) => pair,
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "client_id and client_secret (an access key pair) are required",
            );
        }
    };
    let valid = long_term_key(app, &id)
        .await
        .is_some_and(|key| constant_time_eq(key.secret().as_bytes(), secret.as_bytes()));
    if !valid {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Invalid client credentials",
        );
    }
    issued(app, &id)
}
