//! Names of IAM things, validated once at the edge (IAM's rules), and the generation of key material.

use rand::Rng;

use crate::ServiceError;

/// A user or role name: 1–64 characters of `[A-Za-z0-9+=,.@_-]` (IAM's rule).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PrincipalName(String);

/// An identity policy's name: 1–128 characters of `[A-Za-z0-9+=,.@_-]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PolicyName(String);

/// A role session's name: 2–64 characters of `[A-Za-z0-9+=,.@_-]` (STS's rule).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionName(String);

fn valid_chars(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "+=,.@_-".contains(c))
}

fn parse(raw: &str, what: &str, min: usize, max: usize) -> Result<String, ServiceError> {
    if raw.len() < min || raw.len() > max || !valid_chars(raw) {
        return Err(ServiceError::Invalid(format!(
            "Invalid {what} '{raw}': it must be {min} to {max} characters of letters, digits and +=,.@_-"
        )));
    }
    Ok(raw.to_string())
}

impl PrincipalName {
    /// Validates a user or role name.
    pub fn parse(raw: &str) -> Result<Self, ServiceError> {
        parse(raw, "name", 1, 64).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PolicyName {
    /// Validates a policy name.
    pub fn parse(raw: &str) -> Result<Self, ServiceError> {
        parse(raw, "policy name", 1, 128).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl SessionName {
    /// Validates a role session name.
    pub fn parse(raw: &str) -> Result<Self, ServiceError> {
        parse(raw, "RoleSessionName", 2, 64).map(Self)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PrincipalName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const KEY_ID_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const SECRET_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn random_string(alphabet: &[u8], n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .filter_map(|_| {
            alphabet
                .get(rng.random_range(0..alphabet.len()))
                .copied()
                .map(char::from)
        })
        .collect()
}

/// A new long-term access key id (`TBAK` + 16, shaped like AWS's `AKIA…`).
pub(crate) fn long_term_key_id() -> String {
    format!("TBAK{}", random_string(KEY_ID_ALPHABET, 16))
}

/// A new temporary access key id (`TBAS` + 16, shaped like AWS's `ASIA…`).
pub(crate) fn temporary_key_id() -> String {
    format!("TBAS{}", random_string(KEY_ID_ALPHABET, 16))
}

/// A new 40-character secret access key.
pub(crate) fn secret_key() -> String {
    random_string(SECRET_ALPHABET, 40)
}

/// A new session token (only its SHA-256 is stored).
pub(crate) fn session_token() -> String {
    format!("TBST{}", random_string(SECRET_ALPHABET, 96))
}

/// A new 12-digit account id that does not start with 0.
pub(crate) fn account_id() -> String {
    let mut rng = rand::rng();
    let first = rng.random_range(1..10u8);
    let rest: String = (0..11)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect();
    format!("{first}{rest}")
}

/// The SHA-256 of a session token, hex.
pub(crate) fn token_digest(token: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for (name, ok) in [
            ("alice", true),
            ("a", true),
            ("a.b+c=d,e@f_g-h", true),
            ("", false),
            ("a b", false),
            ("a/b", false),
            ("ä", false),
        ] {
            assert_eq!(PrincipalName::parse(name).is_ok(), ok, "{name}");
        }
        assert!(PrincipalName::parse(&"x".repeat(64)).is_ok());
        assert!(PrincipalName::parse(&"x".repeat(65)).is_err());
        assert!(SessionName::parse("a").is_err());
        assert!(SessionName::parse("ab").is_ok());
        assert!(PolicyName::parse(&"p".repeat(129)).is_err());
    }

    #[test]
    fn key_material() {
        assert_eq!(long_term_key_id().len(), 20);
        assert!(temporary_key_id().starts_with("TBAS"));
        assert_eq!(secret_key().len(), 40);
        let id = account_id();
        assert_eq!(id.len(), 12);
        assert!(id.bytes().all(|b| b.is_ascii_digit()) && !id.starts_with('0'));
        assert_ne!(session_token(), session_token());
    }
}
