//! Master keys and the providers that hold them: [`KeyProvider`] wraps and unwraps the per-blob data keys, and
//! [`LocalKeys`] is the built-in provider over keys given in a key file or an environment variable.
//!
//! Key material never leaves this module in readable form: [`MasterKey`] and [`DataKey`] print as `<redacted>`,
//! and what is stored (a [`WrappedKey`], a key-check value) reveals nothing about the key.

use std::collections::BTreeMap;
use std::fmt;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::StoreError;

/// Which master key protects a blob: the server-managed key (`AES256`) or a KMS key named by its ARN
/// (`aws:kms`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum KeyId {
    /// The server-managed key: `default` in key files and rows.
    Managed,
    /// A KMS key, by its ARN (`arn:aws:kms:…:key/…` or `acs:kms:…`).
    Kms(String),
}

/// How the server-managed key is named in key files and stored rows.
const MANAGED_NAME: &str = "default";

impl KeyId {
    /// Parses `default` or a KMS key ARN.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == MANAGED_NAME {
            Ok(Self::Managed)
        } else if (text.starts_with("arn:") || text.starts_with("acs:")) && text.len() <= 2048 {
            Ok(Self::Kms(text.to_string()))
        } else {
            Err(format!("'{text}' is neither 'default' nor a KMS key ARN"))
        }
    }

    /// The stored form.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Managed => MANAGED_NAME,
            Self::Kms(arn) => arn,
        }
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<KeyId> for String {
    fn from(id: KeyId) -> Self {
        id.as_str().to_string()
    }
}

impl TryFrom<String> for KeyId {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text)
    }
}

/// One version of a master key, as recorded with every blob it protects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct KeyVersion {
    /// The key.
    pub id: KeyId,
    /// Its version (1, 2, …); new data uses the newest.
    pub version: u32,
}

impl fmt::Display for KeyVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} version {}", self.id, self.version)
    }
}

/// 32 bytes of AES-256 key material. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct MasterKey([u8; 32]);

impl MasterKey {
    /// A key from raw bytes.
    pub fn new(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        Self(rand::random())
    }

    /// Decodes base64 of exactly 32 bytes.
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let raw = BASE64
            .decode(text.trim())
            .map_err(|_| "a key is not valid base64".to_string())?;
        <[u8; 32]>::try_from(raw)
            .map(Self)
            .map_err(|raw| format!("a key is {} bytes, not 32", raw.len()))
    }

    /// The base64 form written to a generated key file.
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.0)
    }

    /// A value that identifies the key without revealing it (SHA-256 over a label and the key), stored in the
    /// meta store so that a server started with other key material for the same version refuses to run.
    pub fn check_value(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"tablebay key check v1\0");
        hash.update(self.0);
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The AES-256-GCM key of version `version` (a 32-byte key is always accepted).
    fn cipher(&self, version: &KeyVersion) -> Result<LessSafeKey, KeyError> {
        let key = UnboundKey::new(&AES_256_GCM, &self.0)
            .map_err(|_| KeyError::WrongKey(version.clone()))?;
        Ok(LessSafeKey::new(key))
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

/// A blob's own data key (fresh per blob). `Debug` never shows it.
#[derive(Clone)]
pub struct DataKey(pub(super) [u8; 32]);

impl DataKey {
    /// A fresh random data key.
    pub fn generate() -> Self {
        Self(rand::random())
    }
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DataKey(<redacted>)")
    }
}

/// A data key encrypted under a master key version: base64 of nonce ‖ ciphertext ‖ tag (AES-256-GCM, the key
/// version bound in the associated data, so a wrapped key cannot be moved to another version).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrappedKey {
    /// The master key version that wrapped it.
    pub key: KeyVersion,
    /// The wrapped bytes, base64.
    pub wrapped: String,
}

/// Errors of key handling; each says which key, never what it is.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// No such key, or no such version of it, is configured.
    #[error("encryption key {0} is not configured on this server")]
    Unknown(String),
    /// The wrapped key does not open with the configured key: other key material than it was written with.
    #[error(
        "the data key of this object does not open with {0}: the configured key differs from the one it was written with"
    )]
    WrongKey(KeyVersion),
}

impl From<KeyError> for StoreError {
    fn from(e: KeyError) -> Self {
        StoreError::Key(e.to_string())
    }
}

/// Holds master keys and wraps data keys with them. The built-in provider is [`LocalKeys`]; a provider for an
/// external KMS would call its GenerateDataKey/Decrypt here.
#[async_trait::async_trait]
pub trait KeyProvider: Send + Sync + fmt::Debug {
    /// Wraps `data_key` under the newest version of `key`.
    async fn wrap_key(&self, key: &KeyId, data_key: &DataKey) -> Result<WrappedKey, KeyError>;
    /// Unwraps a data key wrapped by [`KeyProvider::wrap_key`] (any version this provider still holds).
    async fn unwrap_key(&self, wrapped: &WrappedKey) -> Result<DataKey, KeyError>;
    /// The key-check value of every key version held, for the startup check against the meta store.
    fn key_checks(&self) -> Vec<(KeyVersion, String)>;
}

/// The built-in provider: master keys held in memory, read from a key file or an environment variable.
///
/// The text format is one key version per line, `<key-id> <version> <base64 of 32 bytes>`, where the key id is
/// `default` (the server-managed key of `AES256` tables) or a KMS key ARN (tables with `aws:kms` and that
/// ARN). Blank lines and `#` comments are ignored. A text that is just one base64 key means `default 1 <key>`.
#[derive(Clone, Default)]
pub struct LocalKeys {
    keys: BTreeMap<KeyId, BTreeMap<u32, MasterKey>>,
}

impl fmt::Debug for LocalKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let versions: Vec<String> = self
            .keys
            .iter()
            .flat_map(|(id, v)| v.keys().map(move |n| format!("{id} v{n}")))
            .collect();
        f.debug_struct("LocalKeys")
            .field("versions", &versions)
            .finish_non_exhaustive()
    }
}

/// Most key versions one key text may hold.
const MAX_KEY_LINES: usize = 10_000;

impl LocalKeys {
    /// Parses the key text (see the type's doc). Errors name the line, never the key.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        if !trimmed.is_empty()
            && !trimmed.contains(char::is_whitespace)
            && !trimmed.starts_with('#')
        {
            let key = MasterKey::from_base64(trimmed)?;
            return Ok(Self::single(KeyId::Managed, key));
        }
        let mut keys = Self::default();
        for (number, line) in text.lines().enumerate().take(MAX_KEY_LINES) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |e: String| format!("line {}: {e}", number + 1);
            let mut fields = line.split_whitespace();
            let (Some(id), Some(version), Some(key), None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(at("expected '<key-id> <version> <base64 key>'".to_string()));
            };
            let id = KeyId::parse(id).map_err(at)?;
            let version: u32 = version
                .parse()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| at(format!("bad version '{version}'")))?;
            let key = MasterKey::from_base64(key).map_err(at)?;
            if keys
                .keys
                .entry(id.clone())
                .or_default()
                .insert(version, key)
                .is_some()
            {
                return Err(at(format!("{id} version {version} is given twice")));
            }
        }
        if text.lines().count() > MAX_KEY_LINES {
            return Err(format!("more than {MAX_KEY_LINES} lines"));
        }
        Ok(keys)
    }

    /// One key, version 1.
    pub fn single(id: KeyId, key: MasterKey) -> Self {
        Self {
            keys: BTreeMap::from([(id, BTreeMap::from([(1, key)]))]),
        }
    }

    /// A throwaway random server-managed key (tests, and a catalog built without configured keys).
    pub fn ephemeral() -> Self {
        Self::single(KeyId::Managed, MasterKey::generate())
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether the server-managed key is held.
    pub fn has_managed(&self) -> bool {
        self.keys.contains_key(&KeyId::Managed)
    }

    fn version(&self, key: &KeyVersion) -> Result<&MasterKey, KeyError> {
        self.keys
            .get(&key.id)
            .and_then(|v| v.get(&key.version))
            .ok_or_else(|| KeyError::Unknown(key.to_string()))
    }
}

/// Associated data of a wrapped key: its master key version.
fn wrap_aad(key: &KeyVersion) -> Vec<u8> {
    format!("tablebay data key v1\0{}\0{}", key.id, key.version).into_bytes()
}

#[async_trait::async_trait]
impl KeyProvider for LocalKeys {
    async fn wrap_key(&self, key: &KeyId, data_key: &DataKey) -> Result<WrappedKey, KeyError> {
        let (version, master) = self
            .keys
            .get(key)
            .and_then(|versions| versions.last_key_value())
            .ok_or_else(|| KeyError::Unknown(key.to_string()))?;
        let key = KeyVersion {
            id: key.clone(),
            version: *version,
        };
        let nonce: [u8; 12] = rand::random();
        let mut buffer = data_key.0.to_vec();
        let tag = master
            .cipher(&key)?
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(wrap_aad(&key)),
                &mut buffer,
            )
            .map_err(|_| KeyError::WrongKey(key.clone()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buffer);
        out.extend_from_slice(tag.as_ref());
        Ok(WrappedKey {
            key,
            wrapped: BASE64.encode(out),
        })
    }

    async fn unwrap_key(&self, wrapped: &WrappedKey) -> Result<DataKey, KeyError> {
        let master = self.version(&wrapped.key)?;
        let wrong = || KeyError::WrongKey(wrapped.key.clone());
        let raw = BASE64.decode(&wrapped.wrapped).map_err(|_| wrong())?;
        if raw.len() != 12 + 32 + 16 {
            return Err(wrong());
        }
        let (nonce, rest) = raw.split_at(12);
        let (body, tag) = rest.split_at(32);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| wrong())?;
        let mut buffer = body.to_vec();
        master
            .cipher(&wrapped.key)?
            .open_in_place_separate_tag(nonce, Aad::from(wrap_aad(&wrapped.key)), tag, &mut buffer)
            .map_err(|_| wrong())?;
        let key = <[u8; 32]>::try_from(buffer).map_err(|_| wrong())?;
        Ok(DataKey(key))
    }

    fn key_checks(&self) -> Vec<(KeyVersion, String)> {
        self.keys
            .iter()
            .flat_map(|(id, versions)| {
                versions.iter().map(|(version, key)| {
                    (
                        KeyVersion {
                            id: id.clone(),
                            version: *version,
                        },
                        key.check_value(),
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data key wrapped by an independent AES-256-GCM (Python `cryptography`:
    /// `AESGCM(master).encrypt(nonce, data_key, "tablebay data key v1\0default\01")`, stored as base64 of
    /// nonce ‖ ciphertext ‖ tag) unwraps: the wrapped-key format does not depend on the AES-GCM library.
    #[tokio::test]
    async fn a_key_wrapped_elsewhere_unwraps() {
        let keys = LocalKeys::single(KeyId::Managed, MasterKey::new([7; 32]));
        let wrapped = WrappedKey {
            key: KeyVersion {
                id: KeyId::Managed,
                version: 1,
            },
            wrapped:
                "AAECAwQFBgcICQoLfOSPF3VgsyIb34vzkikeiZVJwPlgGw1KarMdxQ5W74ZAl0b6U0wEpb1MN6j0Uqm3"
                    .to_string(),
        };
        let data_key = keys.unwrap_key(&wrapped).await.unwrap();
        assert_eq!(
            data_key.0,
            std::array::from_fn::<u8, 32, _>(|i| 100 + u8::try_from(i).unwrap())
        );
    }

    fn b64(byte: u8) -> String {
        MasterKey::new([byte; 32]).to_base64()
    }

    #[test]
    fn key_texts() {
        let arn = "arn:aws:kms:us-east-1:111122223333:key/abc";
        let text = format!(
            "# keys\n\ndefault 1 {}\ndefault 2 {}\n{arn} 1 {}\n",
            b64(1),
            b64(2),
            b64(3)
        );
        let keys = LocalKeys::parse(&text).unwrap();
        assert_eq!(keys.key_checks().len(), 3);
        assert!(keys.has_managed());
        assert!(LocalKeys::parse(&b64(7)).unwrap().has_managed());
        for bad in [
            "default 1".to_string(),
            format!("default 0 {}", b64(1)),
            format!("default x {}", b64(1)),
            format!("other 1 {}", b64(1)),
            "default 1 c2hvcnQ=".to_string(),
            format!("default 1 {} extra", b64(1)),
            format!("default 1 {}\ndefault 1 {}", b64(1), b64(2)),
            "not base64!".to_string(),
        ] {
            let err = LocalKeys::parse(&bad).unwrap_err();
            assert!(!err.contains(&b64(1)) && !err.contains(&b64(2)), "{err}");
        }
        assert!(!format!("{keys:?}").contains(&b64(1)));
        assert!(!format!("{:?}", MasterKey::new([1; 32])).contains(&b64(1)));
    }

    #[tokio::test]
    async fn wrap_and_rotate() {
        let v1 = LocalKeys::parse(&format!("default 1 {}", b64(1))).unwrap();
        let both =
            LocalKeys::parse(&format!("default 1 {}\ndefault 2 {}", b64(1), b64(2))).unwrap();
        let data = DataKey::generate();
        let old = v1.wrap_key(&KeyId::Managed, &data).await.unwrap();
        assert_eq!(old.key.version, 1);
        let new = both.wrap_key(&KeyId::Managed, &data).await.unwrap();
        assert_eq!(new.key.version, 2, "new data uses the newest version");
        assert_eq!(
            both.unwrap_key(&old).await.unwrap().0,
            data.0,
            "old versions stay readable"
        );
        assert!(matches!(
            v1.unwrap_key(&new).await,
            Err(KeyError::Unknown(_))
        ));
        let other = LocalKeys::parse(&format!("default 1 {}", b64(9))).unwrap();
        assert!(matches!(
            other.unwrap_key(&old).await,
            Err(KeyError::WrongKey(_))
        ));
        // A wrapped key relabelled to another version does not open.
        let moved = WrappedKey {
            key: KeyVersion {
                id: KeyId::Managed,
                version: 2,
            },
            ..old.clone()
        };
        assert!(matches!(
            both.unwrap_key(&moved).await,
            Err(KeyError::WrongKey(_))
        ));
        assert!(matches!(
            v1.wrap_key(&KeyId::Kms("arn:aws:kms:x".into()), &data)
                .await,
            Err(KeyError::Unknown(_))
        ));
    }
}
