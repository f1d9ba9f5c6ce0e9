//! Short-lived bearer tokens for clients without SigV4 (iceberg-rust, Polars: `reference/iceberg-rest.md` trap
//! 20), issued by the Iceberg REST OAuth2 client-credentials endpoint in exchange for an access key pair.
//!
//! A token is self-contained and stateless: `tb1.<access key id>.<expiry>.<signature>`, where the key id is
//! base64url, the expiry is unix seconds, and the signature is base64url HMAC-SHA256 over `tb1.<key>.<expiry>`
//! with a server key. The server key is derived from the instance root secret
//! (`HMAC-SHA256(root secret, "tablebay-iceberg-bearer-v1")`), so every instance configured with the same root
//! credentials accepts the tokens of the others, and rotating the root secret revokes every token. A token
//! authenticates as its access key: when the key is revoked, its tokens stop working too.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::AuthError;

const VERSION: &str = "tb1";
const DERIVATION_LABEL: &[u8] = b"tablebay-iceberg-bearer-v1";

/// Issues and verifies bearer tokens with one server key.
#[derive(Clone)]
pub struct BearerTokens {
    key: [u8; 32],
    lifetime_secs: i64,
}

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerTokens")
            .field("lifetime_secs", &self.lifetime_secs)
            .finish_non_exhaustive()
    }
}

/// A freshly issued token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssuedToken {
    /// The token to send as `Authorization: Bearer <token>`.
    pub token: String,
    /// Seconds until it expires.
    pub expires_in: i64,
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so this cannot fail; the fallback keeps the function total.
    Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|_| Hmac::<Sha256>::new(&Default::default()))
}

impl BearerTokens {
    /// The default token lifetime: one hour (clients refresh or re-authenticate on 401).
    pub const DEFAULT_LIFETIME_SECS: i64 = 3600;

    /// Tokens signed with a key derived from the instance root secret, valid for `lifetime_secs`.
    pub fn derive(root_secret: &str, lifetime_secs: i64) -> Self {
        let mut derive = mac(root_secret.as_bytes());
        derive.update(DERIVATION_LABEL);
        let key: [u8; 32] = derive.finalize().into_bytes().into();
        Self { key, lifetime_secs }
    }

    fn sign(&self, body: &str) -> [u8; 32] {
        let mut m = mac(&self.key);
        m.update(body.as_bytes());
        m.finalize().into_bytes().into()
    }

    /// A token for `access_key_id`, valid from `now` for the configured lifetime.
    pub fn issue(&self, access_key_id: &str, now: DateTime<Utc>) -> IssuedToken {
        let expires = now.timestamp().saturating_add(self.lifetime_secs);
        let body = format!(
            "{VERSION}.{}.{expires}",
            URL_SAFE_NO_PAD.encode(access_key_id)
        );
        let signature = URL_SAFE_NO_PAD.encode(self.sign(&body));
        IssuedToken {
            token: format!("{body}.{signature}"),
            expires_in: self.lifetime_secs,
        }
    }

    /// The access key id a token was issued for, if the token is genuine and unexpired at `now`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<String, AuthError> {
        let malformed = || AuthError::Malformed("the bearer token is not a Tablebay token".into());
        let (body, signature) = token.rsplit_once('.').ok_or_else(malformed)?;
        let mut parts = body.split('.');
        let (Some(VERSION), Some(key), Some(expires), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed());
        };
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| malformed())?;
        if !bool::from(self.sign(body).as_slice().ct_eq(signature.as_slice())) {
            return Err(AuthError::SignatureMismatch);
        }
        let expires: i64 = expires.parse().map_err(|_| malformed())?;
        if now.timestamp() >= expires {
            return Err(AuthError::RequestExpired);
        }
        let key = URL_SAFE_NO_PAD.decode(key).map_err(|_| malformed())?;
        String::from_utf8(key).map_err(|_| malformed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_then_verify() {
        let tokens = BearerTokens::derive("secret", 60);
        let now = Utc::now();
        let issued = tokens.issue("AKID1", now);
        assert_eq!(issued.expires_in, 60);
        assert_eq!(tokens.verify(&issued.token, now).unwrap(), "AKID1");
        // Another instance with the same root secret agrees.
        assert_eq!(
            BearerTokens::derive("secret", 5)
                .verify(&issued.token, now)
                .unwrap(),
            "AKID1"
        );
        // Expired, another secret, tampered, garbage.
        let later = now + chrono::Duration::seconds(61);
        assert_eq!(
            tokens.verify(&issued.token, later),
            Err(AuthError::RequestExpired)
        );
        assert_eq!(
            BearerTokens::derive("other", 60).verify(&issued.token, now),
            Err(AuthError::SignatureMismatch)
        );
        let forged = issued.token.replacen("tb1.", "tb1.QQ", 1);
        assert!(tokens.verify(&forged, now).is_err());
        for bad in ["", "tb1", "tb1.a.b", "x.y.z.w", "tb1.a.1.!!", "tb1.a.b.c.d"] {
            assert!(tokens.verify(bad, now).is_err(), "{bad}");
        }
    }
}
