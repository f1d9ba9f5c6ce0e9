//! Authentication in two steps around the body: [`identify`] reads the credentials from the headers alone
//! (scheme, time, scope, the key's existence; for a bearer token, everything), and [`Pending::finish`] checks
//! the signature over the body once it has arrived. When a SigV4 request claims its payload hash
//! (`x-amz-content-sha256`), the signature is checked at once and the body only has to match the claim.
//!
//! The schemes: SigV4 (header or presigned query, `tablebay_auth::SigV4Verifier`), OSS V4 on the tables listener
//! (`tablebay_auth::oss4`: Alibaba's SDKs and ossutil; its signature covers the headers, so it is checked before
//! the body, and the body then against its declared digests), and OAuth2 bearer tokens issued by the Iceberg token
//! endpoint, and the web console's session cookie (`crate::console::session`: the session's access key is looked
//! up again on every request, and a state-changing request must carry the session's CSRF token in its form).
//! Temporary credentials carry their session token whichever scheme signed.

use std::sync::Arc;

use bytes::Bytes;
use http::header;
use http::request::Parts;
use tablebay_auth::oss4::{self, Oss4Verifier};
use tablebay_auth::{
    AuthError, Principal, SigV4Verifier, SignedPayload, SignedRequest, check_claimed_payload,
    claimed_payload_hash, latin1_to_utf8,
};
use tablebay_iam::{Iam, KnownKey, ServiceError};

use super::{PipelineError, RequestBody};
use crate::state::AppState;

/// The credentials a surface accepts.
#[derive(Clone, Debug)]
pub(crate) struct Schemes {
    /// SigV4, with the verifier of the surface's signing names.
    pub sigv4: Arc<SigV4Verifier>,
    /// OAuth2 bearer tokens (`Authorization: Bearer …`).
    pub bearer: bool,
    /// OSS V4 (`OSS4-HMAC-SHA256`, product `osstables`).
    pub oss4: bool,
    /// The console's session cookie (and no other scheme: a console page is never signed).
    pub session: bool,
}

impl Schemes {
    /// Signed requests: SigV4 with `sigv4`'s signing names, and OSS V4 (every API surface).
    pub(crate) fn signed(sigv4: &Arc<SigV4Verifier>) -> Self {
        Self {
            sigv4: Arc::clone(sigv4),
            bearer: false,
            oss4: true,
            session: false,
        }
    }

    /// These schemes and OAuth2 bearer tokens.
    pub(crate) fn and_bearer(self) -> Self {
        Self {
            bearer: true,
            ..self
        }
    }

    /// The console's session cookie, and nothing else.
    pub(crate) fn console_session(sigv4: &Arc<SigV4Verifier>) -> Self {
        Self {
            sigv4: Arc::clone(sigv4),
            bearer: false,
            oss4: false,
            session: true,
        }
    }
}

/// Credentials identified from the headers; the body is still to be checked against them.
pub(crate) enum Pending {
    /// A bearer token: complete, it does not cover the body.
    Bearer(KnownKey),
    /// SigV4 whose claimed payload hash the signature was verified with: the body must hash to the claim.
    Claimed { key: KnownKey, claimed: [u8; 32] },
    /// OSS V4, verified: the body must match the digests the request declares.
    Oss4(KnownKey),
    /// A console session: a state-changing request's form must carry the session's CSRF token.
    Session { key: KnownKey, csrf: String },
    /// SigV4 to verify over the body.
    SigV4 {
        key: KnownKey,
        request: SignedRequest,
        verifier: Arc<SigV4Verifier>,
    },
}

/// Reads the request's credentials without its body.
pub(super) async fn identify(
    app: &AppState,
    schemes: Schemes,
    parts: &Parts,
) -> Result<Pending, PipelineError> {
    let now = chrono::Utc::now();
    if schemes.session {
        let live = crate::console::session::identify(app, parts)?;
        let checked = async {
            let key = lookup(&app.iam, &live.access_key_id).await?;
            key.check_session_token(live.session_token.as_ref().map(|t| t.expose()), now)?;
            Ok::<_, AuthError>(key)
        };
        return match checked.await {
            Ok(key) => Ok(Pending::Session {
                key,
                csrf: live.csrf,
            }),
            // A form of a session whose key stopped working is refused like any forged one.
            Err(e)
                if e != AuthError::Unavailable
                    && !matches!(parts.method, http::Method::GET | http::Method::HEAD) =>
            {
                Err(crate::console::session::forged().into())
            }
            Err(e) => Err(e.into()),
        };
    }
    if schemes.bearer
        && let Some(token) = bearer_token(parts)
    {
        let access_key_id = app
            .iceberg
            .tokens
            .verify(token, now)
            .map_err(PipelineError::BearerToken)?;
        let key = long_term_key(&app.iam, &access_key_id)
            .await
            .map_err(PipelineError::BearerToken)?
            .ok_or(PipelineError::BearerToken(AuthError::UnknownAccessKey))?;
        return Ok(Pending::Bearer(key));
    }
    if schemes.oss4 && Oss4Verifier::is_oss4(parts) {
        let verifier = &app.oss4_verifier;
        let request = verifier.parse(parts, now)?;
        let key = lookup(&app.iam, &request.access_key_id).await?;
        verifier.verify(&request, parts, key.secret())?;
        key.check_session_token(request.session_token.as_deref(), now)?;
        return Ok(Pending::Oss4(key));
    }
    let request = schemes.sigv4.parse(parts, now)?;
    let key = lookup(&app.iam, &request.access_key_id).await?;
    if let Some(claimed) = claimed_payload_hash(parts) {
        schemes
            .sigv4
            .verify_claimed(&request, parts, &claimed, key.secret())?;
        key.check_session_token(request.session_token.as_deref(), now)?;
        return Ok(Pending::Claimed { key, claimed });
    }
    Ok(Pending::SigV4 {
        key,
        request,
        verifier: schemes.sigv4,
    })
}

impl Pending {
    /// Whether a verified signature (or token) already covers whoever sends the body.
    pub(super) fn is_verified(&self) -> bool {
        !matches!(self, Self::SigV4 { .. })
    }

    /// Checks the body against the credentials and settles how it reads.
    pub(super) fn finish(
        self,
        parts: &Parts,
        body: Bytes,
    ) -> Result<(Principal, RequestBody), AuthError> {
        let (key, reading) = match self {
            Self::Bearer(key) => (key, SignedPayload::AsSent),
            Self::Oss4(key) => {
                oss4::check_body(parts, &body)?;
                (key, SignedPayload::AsSent)
            }
            Self::Session { key, csrf } => {
                crate::console::session::check_form(parts, &body, &csrf)?;
                (key, SignedPayload::AsSent)
            }
            Self::Claimed { key, claimed } => {
                let reading = check_claimed_payload(&claimed, &body)?;
                (key, reading)
            }
            Self::SigV4 {
                key,
                request,
                verifier,
            } => {
                let reading = verifier.verify(&request, parts, &body, key.secret())?;
                key.check_session_token(request.session_token.as_deref(), chrono::Utc::now())?;
                (key, reading)
            }
        };
        let body = match reading {
            SignedPayload::AsSent | SignedPayload::Unsigned => body,
            SignedPayload::Latin1AsUtf8 => Bytes::from(latin1_to_utf8(&body)),
        };
        Ok((key.into_principal(), RequestBody::new(body)))
    }
}

/// The token of an `Authorization: Bearer …` header.
fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
}

/// The known, active key `access_key_id`.
pub(crate) async fn lookup(iam: &Iam, access_key_id: &str) -> Result<KnownKey, AuthError> {
    match iam.lookup(access_key_id).await {
        Ok(Some(key)) => Ok(key),
        Ok(None) => Err(AuthError::UnknownAccessKey),
        // An outage of the credential store is a 503 the client retries, not a fault of this server.
        Err(e @ ServiceError::Unavailable(_)) => {
            tracing::warn!(error = %e, "credential lookup failed");
            Err(AuthError::Unavailable)
        }
        Err(e) => {
            tracing::error!(error = %e, "credential lookup failed");
            Err(AuthError::Unavailable)
        }
    }
}

/// The active long-term key `access_key_id`: temporary credentials cannot hold a bearer token, which would not
/// carry their session token.
pub(crate) async fn long_term_key(
    iam: &Iam,
    access_key_id: &str,
) -> Result<Option<KnownKey>, AuthError> {
    let key = lookup(iam, access_key_id)
        .await
        .map(Some)
        .or_else(|e| match e {
            AuthError::UnknownAccessKey => Ok(None),
            other => Err(other),
        })?;
    Ok(key.filter(|key| key.principal().session.is_none()))
}
