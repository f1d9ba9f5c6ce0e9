//! Authentication of the JSON surfaces (control plane, Iceberg REST, admin, STS): SigV4 parse, key lookup through
//! the IAM service, signature verification, then the session token of temporary credentials; and the request
//! facts that authorization conditions test.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use http::request::Parts;
use tablebay_auth::{AuthError, Principal, SigV4Verifier};
use tablebay_iam::{AccessContext, Iam};

/// Verifies a request's SigV4 signature over its body and returns who signed it.
pub(crate) async fn authenticate(
    verifier: &SigV4Verifier,
    iam: &Iam,
    parts: &Parts,
    body: &[u8],
) -> Result<Principal, AuthError> {
    let now = chrono::Utc::now();
    let signed = verifier.parse(parts, now)?;
    let key = lookup(iam, &signed.access_key_id).await?;
    verifier.verify(&signed, parts, body, key.secret())?;
    key.check_session_token(signed.session_token.as_deref(), now)?;
    Ok(key.into_principal())
}

/// The known, active key `access_key_id`.
pub(crate) async fn lookup(
    iam: &Iam,
    access_key_id: &str,
) -> Result<tablebay_iam::KnownKey, AuthError> {
    match iam.lookup(access_key_id).await {
        Ok(Some(key)) => Ok(key),
        Ok(None) => Err(AuthError::UnknownAccessKey),
        Err(e) => {
            tracing::error!(error = %e, "credential lookup failed");
            Err(AuthError::Unavailable)
        }
    }
}

/// The client address (when the listener recorded it) and the request id, for authorization and audit.
pub(crate) fn access_context(parts: &Parts, request_id: &str) -> AccessContext {
    AccessContext {
        source_ip: parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip()),
        request_id: request_id.to_string(),
    }
}
