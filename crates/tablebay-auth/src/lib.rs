//! Tablebay's authentication: AWS SigV4 verification of the requests the S3 Tables control plane and
//! the Iceberg REST catalog receive, and the principals a verified request acts as.
//!
//! The HTTP layer calls [`SigV4Verifier::parse`] on the request parts, looks up the secret of
//! [`SignedRequest::access_key_id`] in its key store, then calls [`SigV4Verifier::verify`] with the raw
//! body. Which real-client quirks are accepted is documented on `verify` and in
//! `reference/iceberg-rest.md` §5 (traps 17–19). [`signer`] is the matching client-side signer for tests.
//! [`BearerTokens`] issues and checks the short-lived bearer tokens of the Iceberg REST OAuth2 endpoint.
#![warn(missing_docs)]

mod bearer;
mod error;
pub mod oss4;
mod principal;
mod sigv4;

pub use bearer::{BearerTokens, IssuedToken};
pub use error::AuthError;
pub use principal::{Principal, PrincipalKind, Session};
pub use sigv4::signer;
pub use sigv4::{
    AuthMechanism, SigV4Verifier, SignedPayload, SignedRequest, check_claimed_payload,
    claimed_payload_hash, latin1_to_utf8,
};
