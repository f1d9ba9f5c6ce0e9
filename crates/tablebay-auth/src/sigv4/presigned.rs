//! Parsing of presigned-URL authentication: the `X-Amz-*` query parameters.
//!
//! `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders` and
//! `X-Amz-Signature` are required; `X-Amz-Security-Token` is optional. Values are percent-decoded with
//! `+` read as a literal plus (botocore and the AWS SDKs send `%2B`/`%2F`/`%3B`). The time window
//! (expiry, at most 7 days, not in the future) is checked in `verifier.rs`.

use super::canonical::{ALGORITHM, Plus, query_decode};
use super::scope::{Credential, parse_signature, parse_signed_headers};
use crate::error::AuthError;

/// The authentication parameters of a presigned URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PresignedQuery {
    pub(crate) credential: Credential,
    pub(crate) amz_date: String,
    pub(crate) expires_secs: u32,
    pub(crate) signed_headers: Vec<String>,
    pub(crate) signature: [u8; 32],
    pub(crate) security_token: Option<String>,
}

/// The longest `X-Amz-Expires` SigV4 allows: 7 days.
pub(crate) const MAX_EXPIRES_SECS: u32 = 7 * 24 * 60 * 60;

/// The query parameters whose presence means "this is a presigned URL".
const MARKERS: [&str; 3] = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"];

/// Whether the raw query carries presigned-URL authentication (any of the marker parameters).
pub(crate) fn is_presigned(raw_query: &str) -> bool {
    raw_query.split('&').any(|pair| {
        let key = pair.split_once('=').map_or(pair, |(k, _)| k);
        let key = query_decode(key, Plus::Literal);
        MARKERS.iter().any(|m| m.as_bytes() == key.as_slice())
    })
}

impl PresignedQuery {
    /// Parses the authentication parameters out of the raw query string.
    pub(crate) fn parse(raw_query: &str) -> Result<Self, AuthError> {
        let mut algorithm = None;
        let mut credential = None;
        let mut date = None;
        let mut expires = None;
        let mut signed_headers = None;
        let mut signature = None;
        let mut token = None;
        for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
            let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = query_decode(raw_key, Plus::Literal);
            let slot = match key.as_slice() {
                b"X-Amz-Algorithm" => &mut algorithm,
                b"X-Amz-Credential" => &mut credential,
                b"X-Amz-Date" => &mut date,
                b"X-Amz-Expires" => &mut expires,
                b"X-Amz-SignedHeaders" => &mut signed_headers,
                b"X-Amz-Signature" => &mut signature,
                b"X-Amz-Security-Token" => &mut token,
                _ => continue,
            };
            let value =
                String::from_utf8(query_decode(raw_value, Plus::Literal)).map_err(|_| {
                    AuthError::Malformed("presigned parameter is not valid UTF-8".into())
                })?;
            if slot.replace(value).is_some() {
                return Err(AuthError::Malformed("repeated presigned parameter".into()));
            }
        }
        let (
            Some(algorithm),
            Some(credential),
            Some(amz_date),
            Some(expires),
            Some(signed_headers),
            Some(signature),
        ) = (
            algorithm,
            credential,
            date,
            expires,
            signed_headers,
            signature,
        )
        else {
            return Err(AuthError::Malformed(
                "presigned URL needs X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires, \
                 X-Amz-SignedHeaders and X-Amz-Signature"
                    .into(),
            ));
        };
        if algorithm != ALGORITHM {
            return Err(AuthError::Malformed(format!(
                "X-Amz-Algorithm must be {ALGORITHM}"
            )));
        }
        let expires_secs = parse_expires(&expires)?;
        Ok(Self {
            credential: Credential::parse(&credential)?,
            amz_date,
            expires_secs,
            signed_headers: parse_signed_headers(&signed_headers)?,
            signature: parse_signature(&signature)?,
            security_token: token,
        })
    }
}

fn parse_expires(value: &str) -> Result<u32, AuthError> {
    let valid = !value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit());
    let secs = if valid {
        value.parse::<u32>().ok()
    } else {
        None
    };
    match secs {
        Some(secs) if secs <= MAX_EXPIRES_SECS => Ok(secs),
        Some(_) => Err(AuthError::Malformed(
            "X-Amz-Expires must be at most 604800 (7 days)".into(),
        )),
        None => Err(AuthError::Malformed(
            "X-Amz-Expires must be a number of seconds".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host%3Bmy-header1&X-Amz-Expires=3600&X-Amz-Signature=3349ee0b81b4b589da0ff28a395c3591e04de515651dd74f298fa992d1507a97";

    #[test]
    fn parses() {
        assert!(is_presigned(Q));
        assert!(!is_presigned("a=1&X-Amz-Date=2"));
        let p =
            PresignedQuery::parse(&format!("a=b&{Q}&X-Amz-Security-Token=a%2Bb%3D%3D")).unwrap();
        assert_eq!(p.credential.service, "service");
        assert_eq!(p.amz_date, "20150830T123600Z");
        assert_eq!(p.expires_secs, 3600);
        assert_eq!(p.signed_headers, ["host", "my-header1"]);
        assert_eq!(p.security_token.as_deref(), Some("a+b=="));
    }

    #[test]
    fn rejects() {
        for q in [
            Q.replace("X-Amz-Expires=3600", "X-Amz-Expires=604801"),
            Q.replace("X-Amz-Expires=3600", "X-Amz-Expires=-1"),
            Q.replace("X-Amz-Expires=3600", "X-Amz-Expires="),
            Q.replace("X-Amz-Expires=3600", "X-Amz-Expires=99999999999999999999"),
            Q.replace("X-Amz-Expires=3600&", ""),
            Q.replace("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256"),
            format!("{Q}&X-Amz-Date=20150830T123600Z"),
            Q.replace("X-Amz-Date=20150830T123600Z", "X-Amz-Date=%FF"),
        ] {
            assert!(
                matches!(PresignedQuery::parse(&q), Err(AuthError::Malformed(_))),
                "{q}"
            );
        }
    }
}
