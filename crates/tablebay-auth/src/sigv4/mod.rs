//! AWS Signature Version 4: verification of signed requests (header and presigned URL), and the
//! client-side signer Tablebay's tests use.
//!
//! `canonical` builds the canonical request, string to sign and signing key; `scope`, `header` and
//! `presigned` parse the credentials; `verifier` checks time and scope and tries the canonical variants
//! real clients sign; `signer` is the client side. Streaming (`aws-chunked`) payloads are not handled yet.

pub(crate) mod canonical;
mod header;
mod presigned;
pub(crate) mod scope;
pub mod signer;
pub(crate) mod verifier;

pub use verifier::{
    AuthMechanism, SigV4Verifier, SignedPayload, SignedRequest, check_claimed_payload,
    claimed_payload_hash, latin1_to_utf8,
};
