//! Secrets the server keeps in the meta store for its own use: IAM secret access keys, which SigV4 verification
//! needs back in clear. Each is sealed like a one-chunk blob (a fresh data key wrapped by the newest version of
//! the server-managed master key), so a copy of the meta store alone does not reveal them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use super::chunks::{BlobEncryption, ChunkCipher, Sealer};
use super::keys::{KeyId, KeyProvider};
use crate::StoreError;

/// Marks a sealed secret. A stored secret without it was stored before secrets were sealed and reads as it is.
pub(crate) const SEALED_PREFIX: &str = "sealed1:";

/// A sealed secret as stored, after [`SEALED_PREFIX`], as JSON.
#[derive(Serialize, Deserialize)]
struct SealedSecret {
    /// The data key (wrapped) and nonce prefix, as for a blob.
    encryption: BlobEncryption,
    /// The one chunk, ciphertext ‖ tag, base64.
    sealed: String,
}

/// Seals `secret` for storage (at most one chunk: a secret is a few dozen bytes).
pub async fn seal_secret(keys: &dyn KeyProvider, secret: &str) -> Result<String, StoreError> {
    if secret.len() > super::CHUNK_BYTES as usize {
        return Err(StoreError::Config(
            "a secret to seal is longer than one chunk".to_string(),
        ));
    }
    let (cipher, encryption) = ChunkCipher::create(keys, &KeyId::Managed).await?;
    let mut sealer = Sealer::new(cipher);
    let mut frames = Vec::new();
    sealer.push(secret.as_bytes(), &mut frames)?;
    frames.push(sealer.finish()?);
    let sealed = SealedSecret {
        encryption,
        sealed: BASE64.encode(frames.concat()),
    };
    let json = serde_json::to_string(&sealed)
        .map_err(|e| StoreError::Corrupt(format!("sealing a secret: {e}")))?;
    Ok(format!("{SEALED_PREFIX}{json}"))
}

/// The secret `stored` holds: opened if sealed, as it is if stored before sealing. A [`StoreError::Key`] when the
/// master key that sealed it is missing or wrong, [`StoreError::Integrity`] when the stored text was altered.
pub async fn open_secret(keys: &dyn KeyProvider, stored: &str) -> Result<String, StoreError> {
    let Some(json) = stored.strip_prefix(SEALED_PREFIX) else {
        return Ok(stored.to_string());
    };
    let damaged = |what: &str| StoreError::Corrupt(format!("a sealed secret's {what} is damaged"));
    let sealed: SealedSecret = serde_json::from_str(json).map_err(|_| damaged("record"))?;
    let frame = BASE64
        .decode(&sealed.sealed)
        .map_err(|_| damaged("ciphertext"))?;
    let cipher = ChunkCipher::open(keys, &sealed.encryption).await?;
    let plain = cipher.open_one(frame)?;
    String::from_utf8(plain).map_err(|_| damaged("plaintext"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::{LocalKeys, MasterKey};

    #[tokio::test]
    async fn secrets_round_trip_and_never_appear_in_what_is_stored() {
        let keys = LocalKeys::ephemeral();
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let stored = seal_secret(&keys, secret).await.unwrap();
        assert!(stored.starts_with(SEALED_PREFIX));
        assert!(!stored.contains(secret));
        assert!(!stored.contains("wJalrXUtnFEMI"));
        assert_eq!(open_secret(&keys, &stored).await.unwrap(), secret);
        // Two seals of one secret differ (fresh data key and nonce each time).
        assert_ne!(seal_secret(&keys, secret).await.unwrap(), stored);
    }

    #[tokio::test]
    async fn a_secret_stored_before_sealing_reads_as_it_is() {
        let keys = LocalKeys::ephemeral();
        assert_eq!(
            open_secret(&keys, "plain-old-secret").await.unwrap(),
            "plain-old-secret"
        );
    }

    #[tokio::test]
    async fn a_wrong_key_or_altered_text_is_an_error() {
        let keys = LocalKeys::ephemeral();
        let stored = seal_secret(&keys, "s3cr3t").await.unwrap();
        let other = LocalKeys::single(KeyId::Managed, MasterKey::generate());
        assert!(matches!(
            open_secret(&other, &stored).await,
            Err(StoreError::Key(_))
        ));

        let mut sealed: SealedSecret =
            serde_json::from_str(stored.strip_prefix(SEALED_PREFIX).unwrap()).unwrap();
        let mut frame = BASE64.decode(&sealed.sealed).unwrap();
        frame[0] ^= 1;
        sealed.sealed = BASE64.encode(frame);
        let altered = format!("{SEALED_PREFIX}{}", serde_json::to_string(&sealed).unwrap());
        assert!(matches!(
            open_secret(&keys, &altered).await,
            Err(StoreError::Integrity(_))
        ));
        assert!(matches!(
            open_secret(&keys, "sealed1:{not json").await,
            Err(StoreError::Corrupt(_))
        ));
    }
}
