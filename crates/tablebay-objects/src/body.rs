//! Upload bodies and the one path every byte written takes: the body streams into a fresh, sealed blob while MD5
//! and the checksums are computed, and the claimed MD5 / checksum (sent before the body or in a trailer after
//! it) and the declared length are verified *before* the blob is finished, so a rejected body leaves nothing.

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use tablebay_store::StoreError;
use tablebay_store::encryption::{BlobEncryption, KeyId};
use tablebay_store::meta::BlobSegment;

use crate::checksum::{self, ChecksumAlgorithm, DigestValues, StreamHasher};
use crate::location::new_blob_key;
use crate::{BodyError, ObjectError, Objects, RequestedEncryption, Storage};

/// A request body: a stream of chunks.
pub type ByteStream = BoxStream<'static, Result<Bytes, BodyError>>;

/// A stream of an object's bytes.
pub type ObjectStream = BoxStream<'static, Result<Bytes, ObjectError>>;

/// Where the client put the checksum value it claims for a body.
pub enum ChecksumClaim {
    /// Before the body (a request header); known before the body.
    Header(String),
    /// In a trailer after the body; the function reads it once the body is consumed (`None` if the client did
    /// not send it).
    Trailer(Box<dyn FnOnce() -> Option<String> + Send>),
}

impl std::fmt::Debug for ChecksumClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Header(value) => f.debug_tuple("Header").field(value).finish(),
            Self::Trailer(_) => f.write_str("Trailer"),
        }
    }
}

/// An upload body and its integrity claims.
pub struct ObjectBody {
    /// The bytes.
    pub stream: ByteStream,
    /// The declared length, if known.
    pub content_length: Option<u64>,
    /// The claimed MD5 (base64, as `Content-MD5` carries it).
    pub content_md5: Option<String>,
    /// A flexible checksum the body must match.
    pub checksum: Option<(ChecksumAlgorithm, ChecksumClaim)>,
}

impl ObjectBody {
    /// A body of known bytes with no claims (how the server writes its own files).
    pub fn from_bytes(bytes: Bytes) -> Self {
        let len = bytes.len() as u64;
        Self {
            stream: futures::stream::once(async move { Ok(bytes) }).boxed(),
            content_length: Some(len),
            content_md5: None,
            checksum: None,
        }
    }

    /// A body streamed from `stream`, of unknown length, with no claims.
    pub fn from_stream(stream: ByteStream) -> Self {
        Self {
            stream,
            content_length: None,
            content_md5: None,
            checksum: None,
        }
    }
}

impl std::fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectBody")
            .field("content_length", &self.content_length)
            .field("content_md5", &self.content_md5)
            .field("checksum", &self.checksum)
            .finish_non_exhaustive()
    }
}

/// Where the body streamed to and what it hashed to.
pub(crate) struct Ingested {
    pub blob_key: String,
    pub size: u64,
    pub digests: DigestValues,
    pub encryption: Option<BlobEncryption>,
}

impl Ingested {
    /// The blob as an object's segment.
    pub(crate) fn segment(&self) -> BlobSegment {
        BlobSegment {
            key: self.blob_key.clone(),
            size: self.size,
            encryption: self.encryption.clone(),
        }
    }
}

impl Objects {
    /// Streams `body` into a fresh blob of the table, sealed as the storage's encryption says, hashing MD5 and
    /// `algorithms` (plus a claimed algorithm) of the plaintext on the way; verifies the claims and the length
    /// before finishing the blob, so a rejected body leaves nothing behind. `TooLarge` past `max_size` bytes;
    /// `EncryptionMismatch` when the request asks for another encryption than the table's.
    pub(crate) async fn ingest(
        &self,
        storage: &Storage,
        body: ObjectBody,
        max_size: u64,
        algorithms: &[ChecksumAlgorithm],
        requested: Option<&RequestedEncryption>,
    ) -> Result<Ingested, ObjectError> {
        if let Some(requested) = requested {
            requested.check(&storage.encryption)?;
        }
        if body.content_length.is_some_and(|len| len > max_size) {
            return Err(ObjectError::TooLarge(max_size));
        }
        let content_md5 = body
            .content_md5
            .as_deref()
            .map(checksum::decode_content_md5)
            .transpose()?;
        let mut algorithms = algorithms.to_vec();
        if let Some((algorithm, claim)) = &body.checksum {
            if let ChecksumClaim::Header(value) = claim
                && algorithm.decode(value).is_none()
            {
                return Err(ObjectError::MalformedChecksum(*algorithm));
            }
            algorithms.push(*algorithm);
        }
        let blob_key = new_blob_key(storage.table_id);
        let mut writer = if cfg!(feature = "unencrypted-bench") {
            self.blobs.writer(&blob_key)
        } else {
            let key = storage.encryption.key();
            self.blobs
                .sealed_writer(&blob_key, self.keys.as_ref(), &key)
                .await
                .map_err(|e| match (e, &key) {
                    // Wrapping fails only for a key this server does not hold.
                    (StoreError::Key(message), KeyId::Kms(_)) => {
                        ObjectError::UnknownKmsKey(message)
                    }
                    (other, _) => other.into(),
                })?
        };
        let blob_encryption = writer.encryption().cloned();
        let mut hasher = StreamHasher::new(&algorithms);
        let mut stream = body.stream;
        let mut size = 0u64;
        let streamed: Result<(), ObjectError> = async {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(ObjectError::Body)?;
                size += chunk.len() as u64;
                if size > max_size {
                    return Err(ObjectError::TooLarge(max_size));
                }
                hasher.update(&chunk).await?;
                writer.write(chunk).await?;
            }
            Ok(())
        }
        .await;
        drop(stream);
        let verified = match streamed {
            Ok(()) => {
                verify(
                    hasher,
                    size,
                    body.content_length,
                    content_md5,
                    body.checksum,
                )
                .await
            }
            Err(e) => Err(e),
        };
        match verified {
            Ok(digests) => {
                writer.finish().await?;
                Ok(Ingested {
                    blob_key,
                    size,
                    digests,
                    encryption: blob_encryption,
                })
            }
            Err(e) => {
                writer.abort().await;
                Err(e)
            }
        }
    }
}

/// Finishes the hashes and checks the body against its declared length and claimed digests.
async fn verify(
    hasher: StreamHasher,
    size: u64,
    declared: Option<u64>,
    content_md5: Option<[u8; 16]>,
    claim: Option<(ChecksumAlgorithm, ChecksumClaim)>,
) -> Result<DigestValues, ObjectError> {
    let digests = hasher.finish().await?;
    if declared.is_some_and(|len| len != size) {
        return Err(ObjectError::LengthMismatch);
    }
    if content_md5.is_some_and(|md5| md5 != digests.md5) {
        return Err(ObjectError::Md5Mismatch);
    }
    if let Some((algorithm, claim)) = claim {
        let claimed = match claim {
            ChecksumClaim::Header(value) => algorithm
                .decode(&value)
                .ok_or(ObjectError::MalformedChecksum(algorithm))?,
            ChecksumClaim::Trailer(read) => {
                let value = read().ok_or(ObjectError::MissingChecksumTrailer(algorithm))?;
                algorithm
                    .decode(&value)
                    .ok_or(ObjectError::MalformedChecksumTrailer(algorithm))?
            }
        };
        if digests.checksum(algorithm) != Some(claimed.as_slice()) {
            return Err(ObjectError::ChecksumMismatch(algorithm));
        }
    }
    Ok(digests)
}
