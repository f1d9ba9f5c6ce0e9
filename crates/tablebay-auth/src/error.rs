//! The one error type of `tablebay-auth`: every way authentication of a request can fail.
//!
//! The variants are the outcomes a surface acts on; the HTTP layer maps each one to its wire code
//! (`MissingAuthenticationToken`, `IncompleteSignature`, `RequestExpired`/`RequestTimeTooSkewed`,
//! `InvalidClientTokenId`/`UnrecognizedClientException`, `SignatureDoesNotMatch`) in its own `error.rs`.
//! Messages never contain secrets, signatures or bearer tokens.

/// Why a request could not be authenticated.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// The request carries no authentication at all: no `Authorization` header and no presigned query.
    #[error("the request is not signed")]
    Missing,
    /// The `Authorization` header or presigned query is present but cannot be parsed, or is
    /// incomplete (a missing component, an unsupported algorithm, a `host` that is not signed, …).
    #[error("malformed authentication: {0}")]
    Malformed(String),
    /// The request time is outside the allowed clock skew, or a presigned URL has expired.
    #[error("the request has expired or its time is too far from the server's time")]
    RequestExpired,
    /// The credential scope does not fit: another date than the request time, a region other than
    /// the configured one, a service that is not accepted, or a terminator other than `aws4_request`.
    #[error("credential scope mismatch: {0}")]
    ScopeMismatch(String),
    /// No secret is known for the access key id (returned by the caller's key lookup).
    #[error("the access key id is not known")]
    UnknownAccessKey,
    /// The session token (`x-amz-security-token`) is missing for temporary credentials, present for a long-term
    /// key, or not the one issued with the key.
    #[error("the security token included in the request is invalid")]
    InvalidSessionToken,
    /// The temporary credentials have expired.
    #[error("the security token included in the request is expired")]
    ExpiredSessionToken,
    /// The credential store could not be asked (the metadata store failed); retrying may succeed.
    #[error("the credential store is unavailable")]
    Unavailable,
    /// No accepted canonical form of the request verifies against the signature.
    #[error("the request signature does not match")]
    SignatureMismatch,
    /// The body does not hash to the `x-amz-content-sha256` (SigV4) or `x-oss-content-sha256` (OSS V4) the
    /// signature was verified with.
    #[error("the body does not match the payload hash it was signed with")]
    PayloadMismatch,
    /// The body does not match its `Content-MD5` header.
    #[error("the body does not match its Content-MD5 header")]
    ContentMd5Mismatch,
}
