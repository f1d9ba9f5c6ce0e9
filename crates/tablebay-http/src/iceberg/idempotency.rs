//! The `Idempotency-Key` header on mutations: a retry of a mutation that already succeeded gets the original
//! answer (status and body) instead of applying twice. The answers are kept by the catalog for an hour.

use bytes::Bytes;
use http::StatusCode;
use http::request::Parts;
use tablebay_catalog::RememberedReply;

use super::context::{IcebergContext, Reply};
use super::error::IcebergError;
use super::router::Endpoint;

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

fn fingerprint(parts: &Parts) -> String {
    format!("{} {}", parts.method, parts.uri.path())
}

/// The remembered answer for `key`, if this request was already applied.
pub(super) async fn replay(
    ctx: &IcebergContext<'_>,
    key: &str,
    parts: &Parts,
) -> Result<Option<Reply>, IcebergError> {
    let Some(remembered) = ctx.catalog().remembered_reply(&ctx.account, key).await? else {
        return Ok(None);
    };
    if remembered.fingerprint != fingerprint(parts) {
        return Err(IcebergError::unprocessable(format!(
            "Idempotency-Key {key} was already used for another request ({})",
            remembered.fingerprint
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
pub(super) async fn remember(ctx: &IcebergContext<'_>, key: &str, parts: &Parts, reply: &Reply) {
    if !reply.status.is_success() {
        return;
    }
    let body = reply
        .body
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let remembered = RememberedReply {
        fingerprint: fingerprint(parts),
        status: reply.status.as_u16(),
        body,
    };
    if let Err(e) = ctx
        .catalog()
        .remember_reply(&ctx.account, key, remembered)
        .await
    {
        tracing::warn!(key, error = %e, "could not remember the answer of an idempotent request");
    }
}
