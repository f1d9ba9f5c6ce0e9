//! Integrity of object bytes: the MD5 behind S3 ETags and the flexible checksums (`CRC32`, `CRC32C`, `CRC64NVME`,
//! `SHA1`, `SHA256`) clients send in headers or trailers, computed in one pass while the bytes stream through.
//!
//! Multipart objects get S3's derived values (`reference/rust-stack.md` §2.5): the ETag is the MD5 of the
//! concatenated binary part MD5s with `-N`; a `COMPOSITE` checksum is the checksum of the concatenated binary
//! part checksums with `-N`; a `FULL_OBJECT` CRC is the parts' CRCs combined as if computed over the whole object.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use sha2_v011 as sha2;
// md-5 0.10 (assembly core) and sha1/sha2 0.11 implement different versions of the `Digest` trait.
use md5::Digest as _;
use sha2::Digest as _;

use crate::ObjectError;

/// A flexible checksum algorithm (the ones current S3 SDKs compute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChecksumAlgorithm {
    /// CRC-32 (ISO-HDLC), 4 bytes.
    Crc32,
    /// CRC-32C (Castagnoli), 4 bytes.
    Crc32c,
    /// CRC-64/NVME, 8 bytes.
    Crc64Nvme,
    /// SHA-1, 20 bytes.
    Sha1,
    /// SHA-256, 32 bytes.
    Sha256,
}

impl ChecksumAlgorithm {
    /// Every algorithm, in S3's order.
    pub const ALL: [Self; 5] = [
        Self::Crc32,
        Self::Crc32c,
        Self::Crc64Nvme,
        Self::Sha1,
        Self::Sha256,
    ];

    /// The algorithm's name (`CRC32`, …), as stored and as S3 spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Crc32c => "CRC32C",
            Self::Crc64Nvme => "CRC64NVME",
            Self::Sha1 => "SHA1",
            Self::Sha256 => "SHA256",
        }
    }

    /// Length of a digest in bytes.
    pub fn digest_len(self) -> usize {
        match self {
            Self::Crc32 | Self::Crc32c => 4,
            Self::Crc64Nvme => 8,
            Self::Sha1 => 20,
            Self::Sha256 => 32,
        }
    }

    /// Whether parts' values can be combined into a whole-object value (CRCs only).
    pub fn supports_full_object(self) -> bool {
        matches!(self, Self::Crc32 | Self::Crc32c | Self::Crc64Nvme)
    }

    fn crc(self) -> Option<crc_fast::CrcAlgorithm> {
        match self {
            Self::Crc32 => Some(crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            Self::Crc32c => Some(crc_fast::CrcAlgorithm::Crc32Iscsi),
            Self::Crc64Nvme => Some(crc_fast::CrcAlgorithm::Crc64Nvme),
            Self::Sha1 | Self::Sha256 => None,
        }
    }

    /// Decodes a base64 value of this algorithm; `None` if it is not base64 of the right length.
    pub fn decode(self, value: &str) -> Option<Vec<u8>> {
        BASE64
            .decode(value.trim())
            .ok()
            .filter(|raw| raw.len() == self.digest_len())
    }

    /// The digest of `data` (for tests and small inputs).
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        let mut hasher = AlgorithmHasher::new(self);
        hasher.update(data);
        hasher.finalize()
    }
}

impl fmt::Display for ChecksumAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ChecksumAlgorithm {
    type Err = ObjectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                ObjectError::Invalid(format!("Checksum algorithm {s:?} is not supported"))
            })
    }
}

/// How a multipart object's checksum relates to its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumType {
    /// A checksum of the whole object's bytes.
    FullObject,
    /// A checksum of the parts' checksums, with `-N`.
    Composite,
}

impl ChecksumType {
    /// The type's name (`FULL_OBJECT`, `COMPOSITE`), as stored and as S3 spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FullObject => "FULL_OBJECT",
            Self::Composite => "COMPOSITE",
        }
    }
}

impl FromStr for ChecksumType {
    type Err = ObjectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            t if t.eq_ignore_ascii_case("FULL_OBJECT") => Ok(Self::FullObject),
            t if t.eq_ignore_ascii_case("COMPOSITE") => Ok(Self::Composite),
            other => Err(ObjectError::Invalid(format!(
                "Checksum type {other:?} is not supported"
            ))),
        }
    }
}

/// An object's (or part's) checksum: algorithm, base64 value, type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// The algorithm.
    pub algorithm: ChecksumAlgorithm,
    /// Base64 value, with `-N` for composite multipart checksums.
    pub value: String,
    /// Whole-object or composite.
    pub kind: ChecksumType,
}

/// Incremental digest of one algorithm.
enum AlgorithmHasher {
    Crc(crc_fast::Digest, usize),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl AlgorithmHasher {
    fn new(algorithm: ChecksumAlgorithm) -> Self {
        match (algorithm, algorithm.crc()) {
            (_, Some(crc)) => Self::Crc(crc_fast::Digest::new(crc), algorithm.digest_len()),
            (ChecksumAlgorithm::Sha1, None) => Self::Sha1(sha1::Sha1::new()),
            (_, None) => Self::Sha256(sha2::Sha256::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Self::Crc(digest, _) => digest.update(data),
            Self::Sha1(h) => h.update(data),
            Self::Sha256(h) => h.update(data),
        }
    }

    fn finalize(self) -> Vec<u8> {
        match self {
            Self::Crc(digest, len) => crc_bytes(digest.finalize(), len),
            Self::Sha1(h) => h.finalize().to_vec(),
            Self::Sha256(h) => h.finalize().to_vec(),
        }
    }
}

/// A CRC value as S3 transmits it: big-endian, 4 or 8 bytes.
fn crc_bytes(value: u64, len: usize) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    bytes
        .get(8usize.saturating_sub(len)..)
        .unwrap_or(&bytes)
        .to_vec()
}

/// The digests of a byte stream: always MD5 (for the ETag), plus the requested checksums.
pub(crate) struct Digests {
    md5: md5::Md5,
    checksums: Vec<(ChecksumAlgorithm, AlgorithmHasher)>,
}

/// The finished digests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DigestValues {
    pub md5: [u8; 16],
    pub checksums: Vec<(ChecksumAlgorithm, Vec<u8>)>,
}

impl DigestValues {
    /// The raw digest of `algorithm`, if it was computed.
    pub(crate) fn checksum(&self, algorithm: ChecksumAlgorithm) -> Option<&[u8]> {
        self.checksums
            .iter()
            .find(|(a, _)| *a == algorithm)
            .map(|(_, v)| v.as_slice())
    }
}

impl Digests {
    pub(crate) fn new(algorithms: &[ChecksumAlgorithm]) -> Self {
        let mut unique = algorithms.to_vec();
        unique.sort();
        unique.dedup();
        Self {
            md5: md5::Md5::new(),
            checksums: unique
                .into_iter()
                .map(|a| (a, AlgorithmHasher::new(a)))
                .collect(),
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        self.md5.update(data);
        for (_, hasher) in &mut self.checksums {
            hasher.update(data);
        }
    }

    pub(crate) fn finalize(self) -> DigestValues {
        DigestValues {
            md5: self.md5.finalize().into(),
            checksums: self
                .checksums
                .into_iter()
                .map(|(a, h)| (a, h.finalize()))
                .collect(),
        }
    }
}

/// Bytes hashed inline before hashing moves to a blocking thread: small bodies (most Iceberg metadata and
/// manifests) avoid a thread hand-off; large ones are hashed in parallel with their network and disk I/O and off
/// the async runtime.
const INLINE_HASH_BYTES: u64 = 256 * 1024;

/// Hashes a stream's chunks as they pass, inline at first and on a blocking thread past [`INLINE_HASH_BYTES`].
pub(crate) struct StreamHasher {
    state: HasherState,
}

enum HasherState {
    Inline(Box<Digests>, u64),
    Background(
        tokio::sync::mpsc::Sender<Bytes>,
        tokio::task::JoinHandle<Digests>,
    ),
    Failed,
}

impl StreamHasher {
    pub(crate) fn new(algorithms: &[ChecksumAlgorithm]) -> Self {
        Self {
            state: HasherState::Inline(Box::new(Digests::new(algorithms)), 0),
        }
    }

    pub(crate) async fn update(&mut self, chunk: &Bytes) -> Result<(), ObjectError> {
        match &mut self.state {
            HasherState::Inline(digests, seen) => {
                digests.update(chunk);
                *seen += chunk.len() as u64;
                if *seen > INLINE_HASH_BYTES {
                    let HasherState::Inline(mut digests, _) =
                        std::mem::replace(&mut self.state, HasherState::Failed)
                    else {
                        return Ok(());
                    };
                    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(32);
                    let handle = tokio::task::spawn_blocking(move || {
                        while let Some(chunk) = rx.blocking_recv() {
                            digests.update(&chunk);
                        }
                        *digests
                    });
                    self.state = HasherState::Background(tx, handle);
                }
                Ok(())
            }
            HasherState::Background(tx, _) => tx
                .send(chunk.clone())
                .await
                .map_err(|_| ObjectError::Internal("the hashing thread stopped".to_string())),
            HasherState::Failed => Err(ObjectError::Internal("hashing failed earlier".to_string())),
        }
    }

    pub(crate) async fn finish(self) -> Result<DigestValues, ObjectError> {
        match self.state {
            HasherState::Inline(digests, _) => Ok(digests.finalize()),
            HasherState::Background(tx, handle) => {
                drop(tx);
                let digests = handle
                    .await
                    .map_err(|e| ObjectError::Internal(format!("hashing thread: {e}")))?;
                Ok(digests.finalize())
            }
            HasherState::Failed => Err(ObjectError::Internal("hashing failed earlier".to_string())),
        }
    }
}

/// Base64 of raw bytes.
pub(crate) fn base64(raw: &[u8]) -> String {
    BASE64.encode(raw)
}

/// Decodes a claimed MD5 (`Content-MD5`); `MalformedMd5` unless it is base64 of 16 bytes.
pub(crate) fn decode_content_md5(value: &str) -> Result<[u8; 16], ObjectError> {
    BASE64
        .decode(value.trim())
        .ok()
        .and_then(|raw| <[u8; 16]>::try_from(raw).ok())
        .ok_or(ObjectError::MalformedMd5)
}

/// The ETag of a multipart object: MD5 of the concatenated binary part MD5s, then `-N`. `None` if a part ETag is
/// not 32 hex digits.
pub(crate) fn multipart_etag<'a>(part_etags: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut md5 = md5::Md5::new();
    let mut count = 0usize;
    for etag in part_etags {
        let raw = hex::decode(etag).ok().filter(|raw| raw.len() == 16)?;
        md5.update(&raw);
        count += 1;
    }
    Some(format!("{}-{count}", hex::encode(md5.finalize())))
}

/// The `COMPOSITE` checksum of parts: the checksum of their concatenated raw checksums, base64, then `-N`.
pub(crate) fn composite_checksum(algorithm: ChecksumAlgorithm, parts: &[Vec<u8>]) -> String {
    let mut hasher = AlgorithmHasher::new(algorithm);
    for part in parts {
        hasher.update(part);
    }
    format!("{}-{}", base64(&hasher.finalize()), parts.len())
}

/// The `FULL_OBJECT` CRC of an object from its parts' raw CRCs and sizes; `None` for a non-CRC algorithm or a
/// malformed part value.
pub(crate) fn combined_crc(
    algorithm: ChecksumAlgorithm,
    parts: &[(Vec<u8>, u64)],
) -> Option<Vec<u8>> {
    let crc = algorithm.crc()?;
    let mut combined: Option<u64> = None;
    for (raw, size) in parts {
        let mut buf = [0u8; 8];
        let start = 8usize.checked_sub(raw.len())?;
        buf.get_mut(start..)?.copy_from_slice(raw);
        let value = u64::from_be_bytes(buf);
        combined = Some(match combined {
            None => value,
            Some(acc) => crc_fast::checksum_combine(crc, acc, value, *size),
        });
    }
    // Zero parts: the CRC of no bytes.
    Some(match combined {
        Some(value) => crc_bytes(value, algorithm.digest_len()),
        None => algorithm.digest(&[]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // Values from the AWS documentation examples and the standard check inputs.
        assert_eq!(
            base64(&ChecksumAlgorithm::Crc32.digest(b"123456789")),
            base64(&0xCBF4_3926u32.to_be_bytes())
        );
        assert_eq!(
            base64(&ChecksumAlgorithm::Crc32c.digest(b"123456789")),
            base64(&0xE306_9283u32.to_be_bytes())
        );
        assert_eq!(
            base64(&ChecksumAlgorithm::Crc64Nvme.digest(b"123456789")),
            base64(&0xAE8B_1486_0A79_9888u64.to_be_bytes())
        );
        assert_eq!(
            hex::encode(ChecksumAlgorithm::Sha1.digest(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex::encode(ChecksumAlgorithm::Sha256.digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn algorithm_names() {
        for a in ChecksumAlgorithm::ALL {
            assert_eq!(a.as_str().parse::<ChecksumAlgorithm>().unwrap(), a);
            assert_eq!(
                a.decode(&base64(&a.digest(b"x"))).map(|v| v.len()),
                Some(a.digest_len())
            );
        }
        assert!("MD5".parse::<ChecksumAlgorithm>().is_err());
        assert_eq!(
            ChecksumAlgorithm::Crc32.decode("AAAA"),
            None,
            "3 bytes is not a CRC32"
        );
    }

    #[test]
    fn multipart_etag_is_md5_of_md5s() {
        let a = hex::encode(md5::Md5::digest(b"part one"));
        let b = hex::encode(md5::Md5::digest(b"part two"));
        let mut concat = hex::decode(&a).unwrap();
        concat.extend(hex::decode(&b).unwrap());
        let want = format!("{}-2", hex::encode(md5::Md5::digest(&concat)));
        assert_eq!(multipart_etag([a.as_str(), b.as_str()]), Some(want));
        assert_eq!(multipart_etag(["nothex"]), None);
    }

    #[test]
    fn composite_and_full_object_checksums() {
        let parts: [&[u8]; 3] = [b"hello ", b"multipart ", b"world"];
        for algorithm in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let raw: Vec<(Vec<u8>, u64)> = parts
                .iter()
                .map(|p| (algorithm.digest(p), p.len() as u64))
                .collect();
            let whole = algorithm.digest(&parts.concat());
            assert_eq!(combined_crc(algorithm, &raw), Some(whole), "{algorithm}");
        }
        assert_eq!(combined_crc(ChecksumAlgorithm::Sha256, &[]), None);
        let raw: Vec<Vec<u8>> = parts
            .iter()
            .map(|p| ChecksumAlgorithm::Sha256.digest(p))
            .collect();
        let want = base64(&ChecksumAlgorithm::Sha256.digest(&raw.concat()));
        assert_eq!(
            composite_checksum(ChecksumAlgorithm::Sha256, &raw),
            format!("{want}-3")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stream_hasher_matches_one_shot_digests() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut hasher = StreamHasher::new(&[ChecksumAlgorithm::Crc32, ChecksumAlgorithm::Sha256]);
        for chunk in data.chunks(65_536) {
            hasher.update(&Bytes::copy_from_slice(chunk)).await.unwrap();
        }
        let got = hasher.finish().await.unwrap();
        let mut one_shot = Digests::new(&[ChecksumAlgorithm::Sha256, ChecksumAlgorithm::Crc32]);
        one_shot.update(&data);
        assert_eq!(got, one_shot.finalize());
        assert_eq!(
            got.checksum(ChecksumAlgorithm::Crc32),
            Some(ChecksumAlgorithm::Crc32.digest(&data).as_slice())
        );
    }

    #[test]
    fn content_md5() {
        assert!(decode_content_md5(&base64(&[7u8; 16])).is_ok());
        assert!(matches!(
            decode_content_md5("not base64!"),
            Err(ObjectError::MalformedMd5)
        ));
        assert!(matches!(
            decode_content_md5(&base64(&[7u8; 15])),
            Err(ObjectError::MalformedMd5)
        ));
    }
}
