//! Authentication of the JSON surfaces (control plane, Iceberg REST, admin): SigV4 parse, key lookup, verify.

use http::request::Parts;
use tablebay_auth::{AuthError, Principal, SigV4Verifier};

use crate::state::Identities;

/// Verifies a request's SigV4 signature over its body and returns who signed it.
pub(crate) fn authenticate(
    verifier: &SigV4Verifier,
    identities: &Identities,
    parts: &Parts,
    body: &[u8],
) -> Result<Principal, AuthError> {
    let signed = verifier.parse(parts, chrono::Utc::now())?;
    let (secret, principal) = identities
        .lookup(&signed.access_key_id)
        .ok_or(AuthError::UnknownAccessKey)?;
    verifier.verify(&signed, parts, body, secret.expose())?;
    Ok(principal)
}
