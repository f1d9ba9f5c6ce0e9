//! The `Idempotency-Key` header on mutations: a retry of a mutation that already succeeded gets the original
//! answer (status and body) instead of applying twice. The answers are kept by the catalog for an hour, per
//! account, and are only ever replayed to the principal that made the request, for the same method, path and
//! body (anything else is 422). Remembered answers hold no secrets: vended credentials are added afresh
//! (`dispatch.rs`).

use bytes::Bytes;
use http::StatusCode;
use http::request::Parts;
use sha2::{Digest, Sha256};
use tablebay_catalog::RememberedReply;

use super::context::Reply;
use super::error::IcebergError;
use super::router::Endpoint;
use crate::pipeline::Context;

/// `idempotency-key-lifetime` in `GET /v1/config` (must match `tablebay_catalog::IDEMPOTENCY_LIFETIME`).
pub(crate) const LIFETIME_ISO: &str = "PT1H";

const HEADER: &str = "idempotency-key";

/// The request's idempotency key, if it is a mutation that carries one.
pub(super) fn key(parts: &Parts, endpoint: &Endpoint) -> Result<Option<String>, IcebergError> {
    let Some(value) = parts.headers.get(HEADER) else {
        return Ok(None);
    };
    if !endpoint.is_mutation() {
        return Ok(None);
    }
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|k| (1..=256).contains(&k.len()))
        .ok_or_else(|| {
            IcebergError::bad_request("Idempotency-Key must be 1 to 256 visible ASCII characters")
        })?;
    Ok(Some(key.to_string()))
}

/// What a remembered answer is for: who asked, and the request (method, path and a digest of the body).
struct Fingerprint {
    principal: String,
    request: String,
}

impl Fingerprint {
    fn of(cx: &Context<'_>, body: &[u8]) -> Self {
        let digest = Sha256::digest(body);
        Self {
            principal: cx.principal.arn.clone(),
            request: format!(
                "{} {} {}",
                cx.parts.method,
                cx.parts.uri.path(),
                hex_prefix(&digest)
            ),
        }
    }

    fn encode(&self) -> String {
        format!("{}\n{}", self.request, self.principal)
    }

    fn decode(stored: &str) -> Self {
        let (request, principal) = stored.split_once('\n').unwrap_or((stored, ""));
        Self {
            principal: principal.to_string(),
            request: request.to_string(),
        }
    }
}

fn hex_prefix(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// The remembered answer for `key`, if this request was already applied.
pub(super) async fn replay(
    cx: &Context<'_>,
    key: &str,
    body: &[u8],
) -> Result<Option<Reply>, IcebergError> {
    let Some(remembered) = cx.catalog().remembered_reply(&cx.account, key).await? else {
        return Ok(None);
    };
    let stored = Fingerprint::decode(&remembered.fingerprint);
    let this = Fingerprint::of(cx, body);
    if stored.principal != this.principal {
        return Err(IcebergError::unprocessable(format!(
            "Idempotency-Key {key} was already used by another principal"
        )));
    }
    if stored.request != this.request {
        return Err(IcebergError::unprocessable(format!(
            "Idempotency-Key {key} was already used for another request"
        )));
    }
    let status = StatusCode::from_u16(remembered.status).unwrap_or(StatusCode::OK);
    let body = (!remembered.body.is_empty()).then(|| Bytes::from(remembered.body));
    tracing::debug!(key, "replaying the answer of an idempotent request");
    Ok(Some(Reply {
        status,
        body,
        etag: None,
    }))
}

/// Remembers a successful answer; a failure to remember is logged, not returned (the mutation did apply).
pub(super) async fn remember(cx: &Context<'_>, key: &str, body: &[u8], reply: &Reply) {
    if !reply.status.is_success() {
        return;
    }
    let answer = reply
        .body
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let remembered = RememberedReply {
        fingerprint: Fingerprint::of(cx, body).encode(),
        status: reply.status.as_u16(),
        body: answer,
    };
    if let Err(e) = cx
        .catalog()
        .remember_reply(&cx.account, key, remembered)
        .await
    {
        tracing::warn!(key, error = %e, "could not remember the answer of an idempotent request");
    }
}
