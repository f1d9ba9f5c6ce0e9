//! Parsing of the `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header.
//!
//! Only the syntax lives here; the date, skew and scope checks are in `verifier.rs`. Components may be
//! separated by `,` with or without spaces and may come in any order (botocore writes `, `, the AWS SDK
//! for Java `, `, DuckDB `, `; hand-written clients often just `,`). Error messages never repeat the
//! header value, which may be someone's bearer token.

use super::canonical::ALGORITHM;
use super::scope::{Credential, parse_signature, parse_signed_headers};
use crate::error::AuthError;

/// The three components of a SigV4 `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthorizationHeader {
    pub(crate) credential: Credential,
    pub(crate) signed_headers: Vec<String>,
    pub(crate) signature: [u8; 32],
}

/// Longest `Authorization` value accepted (a Java request signing 20 headers is about 600 bytes).
const MAX_LEN: usize = 8 * 1024;

impl AuthorizationHeader {
    /// Parses the header value.
    pub(crate) fn parse(value: &[u8]) -> Result<Self, AuthError> {
        if value.len() > MAX_LEN {
            return Err(AuthError::Malformed(
                "Authorization header is too long".into(),
            ));
        }
        let value = std::str::from_utf8(value)
            .map_err(|_| AuthError::Malformed("Authorization header is not valid UTF-8".into()))?
            .trim();
        let (scheme, rest) = value.split_once([' ', '\t']).unwrap_or((value, ""));
        if scheme != ALGORITHM {
            return Err(AuthError::Malformed(unsupported_scheme(scheme)));
        }

        let mut credential = None;
        let mut signed_headers = None;
        let mut signature = None;
        for component in rest.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let (key, val) = component.split_once('=').ok_or_else(|| {
                AuthError::Malformed("Authorization component without '='".into())
            })?;
            let slot = match key.trim() {
                "Credential" => &mut credential,
                "SignedHeaders" => &mut signed_headers,
                "Signature" => &mut signature,
                _ => {
                    return Err(AuthError::Malformed(
                        "unknown Authorization component".into(),
                    ));
                }
            };
            if slot.replace(val.trim()).is_some() {
                return Err(AuthError::Malformed(
                    "repeated Authorization component".into(),
                ));
            }
        }
        let (Some(credential), Some(signed_headers), Some(signature)) =
            (credential, signed_headers, signature)
        else {
            return Err(AuthError::Malformed(
                "Authorization needs Credential, SignedHeaders and Signature".into(),
            ));
        };
        Ok(Self {
            credential: Credential::parse(credential)?,
            signed_headers: parse_signed_headers(signed_headers)?,
            signature: parse_signature(signature)?,
        })
    }
}

/// Names the scheme only when it looks like one (`Bearer`, `AWS`, `AWS4-ECDSA-P256-SHA256`), so that a
/// token pasted without a scheme never reaches a log line.
fn unsupported_scheme(scheme: &str) -> String {
    let looks_like_scheme = !scheme.is_empty()
        && scheme.len() <= 32
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if looks_like_scheme {
        format!("unsupported Authorization scheme {scheme:?} (expected {ALGORITHM})")
    } else {
        format!("unsupported Authorization scheme (expected {ALGORITHM})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG: &str = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";

    #[test]
    fn separators_and_order() {
        for value in [
            format!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature={SIG}"
            ),
            format!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,SignedHeaders=host;x-amz-date,Signature={SIG}"
            ),
            format!(
                "AWS4-HMAC-SHA256  Signature={SIG} ,  SignedHeaders=host;x-amz-date,Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
            ),
        ] {
            let parsed = AuthorizationHeader::parse(value.as_bytes()).unwrap();
            assert_eq!(parsed.credential.access_key_id, "AKIDEXAMPLE");
            assert_eq!(parsed.signed_headers, ["host", "x-amz-date"]);
            assert_eq!(hex::encode(parsed.signature), SIG);
        }
    }

    #[test]
    fn rejects() {
        for value in [
            String::new(),
            "Bearer abc".to_owned(),
            "AWS AKID:sig".to_owned(),
            "AWS4-HMAC-SHA256".to_owned(),
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=host".to_owned(),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=host, Signature={SIG}, Signature={SIG}"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=host, Signature={SIG}, Extra=1"),
            format!("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=x-amz-date, Signature={SIG}"),
            format!("aws4-hmac-sha256 Credential=AKID/20150830/us-east-1/service/aws4_request, SignedHeaders=host, Signature={SIG}"),
        ] {
            assert!(matches!(AuthorizationHeader::parse(value.as_bytes()), Err(AuthError::Malformed(_))), "{value}");
        }
        let err = AuthorizationHeader::parse(b"Bearer secret-token").unwrap_err();
        assert!(!err.to_string().contains("secret-token"));
        let err = AuthorizationHeader::parse(b"secret-token-without-scheme!").unwrap_err();
        assert!(!err.to_string().contains("secret-token"));
    }
}
