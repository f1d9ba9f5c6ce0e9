//! The `Idempotency-Key` header on mutations: a retry of a mutation that already succeeded gets the original
//! answer (status and body) instead of applying twice. The answers are kept by the catalog for an hour, per
//! account, and are only ever replayed to the principal that made the request, for the same method, path and
//! body (anything else is 422). Remembered answers hold no secrets: vended credentials are added afresh
//! (`dispatch.rs`).
//!
//! Commits store their answer in the transaction that swaps the table pointers ([`with_commit`]), so two
//! identical keyed commits that arrive together cannot both apply: the loser publishes nothing and answers the
//! winner's reply. Other mutations store theirs after they succeed; one that fails while a concurrent request
//! with its key succeeded (a second create of the same table) answers that request's reply
//! ([`replay_winner`]).

use bytes::Bytes;
use http::StatusCode;
use http::request::Parts;
use sha2::{Digest, Sha256};
use tablebay_catalog::{CatalogError, IcebergTable, RememberedCommit, RememberedReply};

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
    fn of(cx: &Context<'_>) -> Self {
        let digest = Sha256::digest(cx.body.bytes());
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
pub(super) async fn replay(cx: &Context<'_>, key: &str) -> Result<Option<Reply>, IcebergError> {
    let Some(remembered) = cx.catalog().remembered_reply(&cx.account, key).await? else {
        return Ok(None);
    };
    let stored = Fingerprint::decode(&remembered.fingerprint);
    let this = Fingerprint::of(cx);
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
        remembered: true,
    }))
}

/// How long a keyed request that failed waits for the answer of a concurrent request with the same key.
const WINNER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// After a keyed mutation failed: the answer of a concurrent request with the same key that won the race (a
/// second create of the same table fails, where it should have got the first one's answer), if one is stored
/// within a short wait; else the failure.
pub(super) async fn replay_winner(
    cx: &Context<'_>,
    key: &str,
    failure: IcebergError,
) -> Result<Reply, IcebergError> {
    let deadline = tokio::time::Instant::now() + WINNER_WAIT;
    loop {
        if let Some(reply) = replay(cx, key).await? {
            return Ok(reply);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(failure);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// What a commit stores with itself under its `Idempotency-Key` (`tablebay_catalog::Catalog::
/// commit_tables_remembering`): `answer` renders the reply from the committed tables.
pub(super) fn with_commit<'a>(
    cx: &'a Context<'_>,
    key: &'a str,
    answer: impl Fn(&[IcebergTable]) -> Result<Reply, IcebergError> + Send + Sync + 'a,
) -> RememberedCommit<'a> {
    RememberedCommit {
        account: &cx.account,
        key,
        fingerprint: Fingerprint::of(cx).encode(),
        answer: Box::new(move |tables| {
            let reply = answer(tables).map_err(|e| CatalogError::Internal(format!("{e:?}")))?;
            Ok((reply.status.as_u16(), stored_body(&reply)))
        }),
    }
}

fn stored_body(reply: &Reply) -> String {
    reply
        .body
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// Remembers a successful answer; a failure to remember is logged, not returned (the mutation did apply).
pub(super) async fn remember(cx: &Context<'_>, key: &str, reply: &Reply) {
    if !reply.status.is_success() {
        return;
    }
    let remembered = RememberedReply {
        fingerprint: Fingerprint::of(cx).encode(),
        status: reply.status.as_u16(),
        body: stored_body(reply),
    };
    if let Err(e) = cx
        .catalog()
        .remember_reply(&cx.account, key, remembered)
        .await
    {
        tracing::warn!(key, error = %e, "could not remember the answer of an idempotent request");
    }
}
