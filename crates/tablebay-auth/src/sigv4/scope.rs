//! The `Credential` value (`<access key id>/<yyyymmdd>/<region>/<service>/aws4_request`) and the two
//! other values both credential carriers share: the signed header list and the hex signature.
//!
//! Used by `header.rs` (the `Authorization` header) and `presigned.rs` (`X-Amz-Credential`,
//! `X-Amz-SignedHeaders`, `X-Amz-Signature`). Checking the scope against the server's region and
//! services is done in `verifier.rs`.

use crate::error::AuthError;

/// A parsed credential: who signed, and the scope the signature was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Credential {
    pub(crate) access_key_id: String,
    pub(crate) date: String,
    pub(crate) region: String,
    pub(crate) service: String,
    pub(crate) terminator: String,
}

/// Longest credential value accepted; real ones are well under 200 bytes.
const MAX_CREDENTIAL_LEN: usize = 1024;

impl Credential {
    /// Parses `AKID/20150830/us-east-1/service/aws4_request`. The last four parts are split from the
    /// right so that only the access key id is left to the first part.
    pub(crate) fn parse(value: &str) -> Result<Self, AuthError> {
        if value.len() > MAX_CREDENTIAL_LEN {
            return Err(AuthError::Malformed("Credential is too long".into()));
        }
        let mut parts = value.rsplitn(5, '/');
        let (Some(terminator), Some(service), Some(region), Some(date), Some(access_key_id)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(AuthError::Malformed(
                "Credential must be <access key id>/<date>/<region>/<service>/aws4_request".into(),
            ));
        };
        if access_key_id.is_empty() || region.is_empty() || service.is_empty() {
            return Err(AuthError::Malformed(
                "Credential has an empty component".into(),
            ));
        }
        if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AuthError::Malformed(
                "Credential date must be yyyymmdd".into(),
            ));
        }
        Ok(Self {
            access_key_id: access_key_id.to_owned(),
            date: date.to_owned(),
            region: region.to_owned(),
            service: service.to_owned(),
            terminator: terminator.to_owned(),
        })
    }
}

/// Parses a `SignedHeaders` value (`host;x-amz-date`): lower-cased names in the given order.
/// `host` must be among them (SigV4 requires it).
pub(crate) fn parse_signed_headers(value: &str) -> Result<Vec<String>, AuthError> {
    let names: Vec<String> = value.split(';').map(str::to_ascii_lowercase).collect();
    if names.len() > 128 {
        return Err(AuthError::Malformed("too many SignedHeaders".into()));
    }
    for name in &names {
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(AuthError::Malformed(
                "SignedHeaders contains an invalid header name".into(),
            ));
        }
    }
    if !names.iter().any(|n| n == "host") {
        return Err(AuthError::Malformed(
            "SignedHeaders must include host".into(),
        ));
    }
    Ok(names)
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Parses the hex signature (64 hex digits, either case).
pub(crate) fn parse_signature(value: &str) -> Result<[u8; 32], AuthError> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(value, &mut out)
        .map_err(|_| AuthError::Malformed("Signature must be 64 hex digits".into()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials() {
        let c = Credential::parse("AKIDEXAMPLE/20150830/us-east-1/service/aws4_request").unwrap();
        assert_eq!(
            (
                c.access_key_id.as_str(),
                c.date.as_str(),
                c.region.as_str(),
                c.service.as_str(),
                c.terminator.as_str()
            ),
            (
                "AKIDEXAMPLE",
                "20150830",
                "us-east-1",
                "service",
                "aws4_request"
            )
        );
        for bad in [
            "",
            "AKID",
            "AKID/20150830/us-east-1/service",
            "/20150830/us-east-1/service/aws4_request",
            "AKID/2015083/us-east-1/service/aws4_request",
            "AKID/2015083x/us-east-1/service/aws4_request",
            "AKID/20150830//service/aws4_request",
        ] {
            assert!(Credential::parse(bad).is_err(), "{bad}");
        }
        // A slash in the access key id stays with the key id; the scope is taken from the right.
        let c = Credential::parse("A/B/20150830/r/s/aws4_request").unwrap();
        assert_eq!(c.access_key_id, "A/B");
    }

    #[test]
    fn signed_headers() {
        assert_eq!(
            parse_signed_headers("Host;X-Amz-Date").unwrap(),
            ["host", "x-amz-date"]
        );
        for bad in ["", "x-amz-date", "host;;x", "host;a b", "host;é"] {
            assert!(parse_signed_headers(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn signatures() {
        assert!(parse_signature(&"ab".repeat(32)).is_ok());
        assert!(parse_signature(&"AB".repeat(32)).is_ok());
        for bad in ["", "ab", &"zz".repeat(32), &"ab".repeat(33)] {
            assert!(parse_signature(bad).is_err(), "{bad}");
        }
    }
}
