//! The on-disk format of an encrypted blob: chunked AES-256-GCM.
//!
//! The plaintext is cut into chunks of [`CHUNK_BYTES`] (the last one shorter, and one empty chunk for an empty
//! blob); each is stored as its ciphertext followed by its 16-byte tag, so plaintext chunk `i` sits at a fixed
//! offset `i × (CHUNK_BYTES + 16)` and a range read fetches and opens only the chunks it covers. The key is
//! the blob's own random data key; the nonce is the blob's random 4-byte prefix ‖ the chunk index; the chunk
//! index and a final-chunk flag are bound in the associated data, so reordered, dropped, appended or truncated
//! chunks fail to open, as does any flipped bit. Opening failures are [`StoreError::Integrity`]: a reader gets an
//! error, never wrong bytes.

use std::ops::Range;

// ring's AES-256-GCM (already in the tree through object_store) rather than RustCrypto's: the same cipher and
// format, several times the throughput on AES-NI/CLMUL/AVX hardware, which is what a large GET costs.
use bytes::{Bytes, BytesMut};
use futures::stream::StreamExt;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, Tag, UnboundKey};
use serde::{Deserialize, Serialize};

use super::keys::{DataKey, KeyId, KeyProvider, WrappedKey};
use crate::{BlobStream, StoreError};

/// Plaintext bytes per chunk. Large enough that the 16-byte tags cost 0.02 %, small enough that a short range
/// read opens little more than it returns.
pub const CHUNK_BYTES: u32 = 64 * 1024;
/// The GCM tag after each chunk.
const TAG_BYTES: u64 = 16;

/// How one blob is encrypted, recorded in the object (or part) row that points at it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobEncryption {
    /// The blob's data key, wrapped by a master key version.
    pub data_key: WrappedKey,
    /// The 4-byte nonce prefix, hex.
    pub nonce_prefix: String,
    /// Plaintext bytes per chunk.
    pub chunk_bytes: u32,
}

impl BlobEncryption {
    /// The master key protecting the blob.
    pub fn key_id(&self) -> &KeyId {
        &self.data_key.key.id
    }
}

/// The cipher state of one blob being written or read.
pub(crate) struct ChunkCipher {
    cipher: LessSafeKey,
    prefix: [u8; 4],
    chunk: u64,
}

impl ChunkCipher {
    /// A fresh data key and nonce prefix for a new blob, the data key wrapped under `key`'s newest version.
    pub(crate) async fn create(
        keys: &dyn KeyProvider,
        key: &KeyId,
    ) -> Result<(Self, BlobEncryption), StoreError> {
        let data_key = DataKey::generate();
        let wrapped = keys.wrap_key(key, &data_key).await?;
        let prefix: [u8; 4] = rand::random();
        let encryption = BlobEncryption {
            data_key: wrapped,
            nonce_prefix: prefix.iter().map(|b| format!("{b:02x}")).collect(),
            chunk_bytes: CHUNK_BYTES,
        };
        Ok((Self::with_key(&data_key, prefix, CHUNK_BYTES)?, encryption))
    }

    /// The cipher of an existing blob; a [`StoreError::Key`] when its master key is missing or wrong.
    pub(crate) async fn open(
        keys: &dyn KeyProvider,
        encryption: &BlobEncryption,
    ) -> Result<Self, StoreError> {
        let data_key = keys.unwrap_key(&encryption.data_key).await?;
        let prefix = parse_prefix(&encryption.nonce_prefix).ok_or_else(|| {
            StoreError::Corrupt(format!("bad nonce prefix {:?}", encryption.nonce_prefix))
        })?;
        if encryption.chunk_bytes == 0 {
            return Err(StoreError::Corrupt(
                "encrypted blob with chunk size 0".to_string(),
            ));
        }
        Self::with_key(&data_key, prefix, encryption.chunk_bytes)
    }

    fn with_key(key: &DataKey, prefix: [u8; 4], chunk: u32) -> Result<Self, StoreError> {
        let key = UnboundKey::new(&AES_256_GCM, &key.0)
            .map_err(|_| StoreError::Integrity("unusable data key".to_string()))?;
        Ok(Self {
            cipher: LessSafeKey::new(key),
            prefix,
            chunk: u64::from(chunk),
        })
    }

    fn nonce(&self, index: u64) -> [u8; 12] {
        let mut nonce = [0u8; 12];
        let (head, tail) = nonce.split_at_mut(4);
        head.copy_from_slice(&self.prefix);
        tail.copy_from_slice(&index.to_be_bytes());
        nonce
    }

    /// Encrypts one chunk in place, returning its tag.
    fn seal(&self, index: u64, last: bool, chunk: &mut [u8]) -> Result<Tag, StoreError> {
        self.cipher
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(self.nonce(index)),
                Aad::from(aad(index, last)),
                chunk,
            )
            .map_err(|_| StoreError::Integrity("chunk too large to encrypt".to_string()))
    }

    /// Checks and decrypts one stored chunk (ciphertext ‖ tag) in place, leaving the plaintext.
    fn unseal(&self, index: u64, last: bool, mut frame: BytesMut) -> Result<Bytes, StoreError> {
        let body_len = frame
            .len()
            .checked_sub(TAG_BYTES as usize)
            .ok_or_else(|| truncated(index))?;
        let stored_tag = frame.split_off(body_len);
        let tag = Tag::try_from(stored_tag.as_ref()).map_err(|_| truncated(index))?;
        self.cipher
            .open_in_place_separate_tag(
                Nonce::assume_unique_for_key(self.nonce(index)),
                Aad::from(aad(index, last)),
                tag,
                frame.as_mut(),
                0..,
            )
            .map_err(|_| {
                StoreError::Integrity(format!(
                    "encrypted chunk {index} failed its integrity check (the stored bytes were altered or damaged)"
                ))
            })?;
        Ok(frame.freeze())
    }

    /// Number of chunks of a blob with `plain` bytes (at least one).
    fn chunks(&self, plain: u64) -> u64 {
        plain.div_ceil(self.chunk).max(1)
    }

    /// Stored bytes of chunk `index` of a blob with `plain` bytes.
    fn frame_len(&self, index: u64, plain: u64) -> u64 {
        plain.saturating_sub(index * self.chunk).min(self.chunk) + TAG_BYTES
    }
}

/// Stored length of an encrypted blob of `plain` bytes in chunks of `chunk` bytes.
pub fn sealed_len(plain: u64, chunk: u32) -> u64 {
    plain + plain.div_ceil(u64::from(chunk)).max(1) * TAG_BYTES
}

fn parse_prefix(hex: &str) -> Option<[u8; 4]> {
    if hex.len() != 8 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 4];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Associated data of chunk `index`: a label, the index and whether it is the last chunk.
fn aad(index: u64, last: bool) -> [u8; 25] {
    let mut aad = [0u8; 25];
    let (label, rest) = aad.split_at_mut(16);
    label.copy_from_slice(b"tablebay chunk 1");
    let (idx, flag) = rest.split_at_mut(8);
    idx.copy_from_slice(&index.to_be_bytes());
    if let Some(f) = flag.first_mut() {
        *f = u8::from(last);
    }
    aad
}

fn truncated(index: u64) -> StoreError {
    StoreError::Integrity(format!(
        "encrypted blob ends inside chunk {index} (the stored bytes are truncated)"
    ))
}

/// The encrypting side of a [`crate::BlobWriter`]: buffers up to one chunk and seals full chunks as they fill.
/// A full chunk is sealed only once more bytes follow, because whether it is the last one is bound in it.
pub(crate) struct Sealer {
    cipher: ChunkCipher,
    pending: BytesMut,
    index: u64,
}

impl Sealer {
    pub(crate) fn new(cipher: ChunkCipher) -> Self {
        Self {
            pending: BytesMut::new(),
            cipher,
            index: 0,
        }
    }

    /// Takes plaintext; returns the ciphertext of the chunks it completed (possibly empty).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Bytes, StoreError> {
        let chunk = usize::try_from(self.cipher.chunk).unwrap_or(usize::MAX);
        self.pending.extend_from_slice(bytes);
        if self.pending.len() <= chunk {
            return Ok(Bytes::new());
        }
        let full = (self.pending.len() - 1) / chunk;
        let mut out = BytesMut::with_capacity(full * (chunk + TAG_BYTES as usize));
        for _ in 0..full {
            let piece = self.pending.split_to(chunk);
            let start = out.len();
            out.extend_from_slice(&piece);
            let tag =
                self.cipher
                    .seal(self.index, false, out.get_mut(start..).unwrap_or_default())?;
            out.extend_from_slice(tag.as_ref());
            self.index += 1;
        }
        Ok(out.freeze())
    }

    /// Seals what is left as the last chunk.
    pub(crate) fn finish(mut self) -> Result<Bytes, StoreError> {
        let mut last = std::mem::take(&mut self.pending);
        let tag = self.cipher.seal(self.index, true, &mut last)?;
        last.extend_from_slice(tag.as_ref());
        Ok(last.freeze())
    }
}

/// The stored bytes to fetch for plaintext `range` of a blob of `plain` bytes, and the first chunk's index.
fn stored_range(cipher: &ChunkCipher, plain: u64, range: &Range<u64>) -> (Range<u64>, u64) {
    let frame = cipher.chunk + TAG_BYTES;
    let first = range.start / cipher.chunk;
    let last = range.end.saturating_sub(1) / cipher.chunk;
    let end = ((last + 1) * frame).min(sealed_len(
        plain,
        u32::try_from(cipher.chunk).unwrap_or(u32::MAX),
    ));
    (first * frame..end, first)
}

/// Plaintext `range` of an encrypted blob of `plain` bytes, read by `fetch(stored range)`: only the chunks
/// covering the range are read and opened.
pub(crate) async fn open_range<F, Fut>(
    cipher: ChunkCipher,
    plain: u64,
    range: Range<u64>,
    fetch: F,
) -> Result<BlobStream, StoreError>
where
    F: FnOnce(Range<u64>) -> Fut,
    Fut: std::future::Future<Output = Result<BlobStream, StoreError>>,
{
    if range.is_empty() {
        return Ok(futures::stream::empty().boxed());
    }
    if range.end > plain {
        return Err(StoreError::Corrupt(format!(
            "read of {range:?} past the end of a {plain}-byte blob"
        )));
    }
    let (stored, first) = stored_range(&cipher, plain, &range);
    let source = fetch(stored).await?;
    let state = Opening {
        cipher,
        plain,
        range,
        index: first,
        buffer: BytesMut::new(),
        source,
        done: false,
    };
    Ok(futures::stream::try_unfold(state, Opening::next).boxed())
}

struct Opening {
    cipher: ChunkCipher,
    plain: u64,
    range: Range<u64>,
    index: u64,
    buffer: BytesMut,
    source: BlobStream,
    done: bool,
}

impl Opening {
    /// The next chunk's plaintext, cut to the range.
    async fn next(mut self) -> Result<Option<(Bytes, Self)>, StoreError> {
        loop {
            let start = self.index * self.cipher.chunk;
            if self.done || start >= self.range.end {
                return Ok(None);
            }
            let frame_len = usize::try_from(self.cipher.frame_len(self.index, self.plain))
                .map_err(|_| StoreError::Corrupt("chunk larger than memory".to_string()))?;
            if self.buffer.len() >= frame_len {
                let frame = self.buffer.split_to(frame_len);
                let last = self.index + 1 == self.cipher.chunks(self.plain);
                let mut plain = self.cipher.unseal(self.index, last, frame)?;
                self.index += 1;
                // Cut the first and last chunks to the range.
                let from =
                    usize::try_from(self.range.start.saturating_sub(start)).unwrap_or(usize::MAX);
                let to = usize::try_from((self.range.end - start).min(plain.len() as u64))
                    .unwrap_or(usize::MAX);
                if from >= to {
                    return Err(truncated(self.index - 1));
                }
                plain.truncate(to);
                let plain = plain.slice(from..);
                return Ok(Some((plain, self)));
            }
            match self.source.next().await {
                Some(bytes) => self.buffer.extend_from_slice(&bytes?),
                None => {
                    self.done = true;
                    return Err(truncated(self.index));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::keys::LocalKeys;
    use futures::TryStreamExt;

    async fn seal_all(keys: &LocalKeys, data: &[u8], piece: usize) -> (Vec<u8>, BlobEncryption) {
        let (cipher, encryption) = ChunkCipher::create(keys, &KeyId::Managed).await.unwrap();
        let mut sealer = Sealer::new(cipher);
        let mut out = Vec::new();
        for p in data.chunks(piece.max(1)) {
            out.extend_from_slice(&sealer.push(p).unwrap());
        }
        out.extend_from_slice(&sealer.finish().unwrap());
        (out, encryption)
    }

    async fn read(
        keys: &LocalKeys,
        stored: &[u8],
        enc: &BlobEncryption,
        plain: u64,
        range: Range<u64>,
    ) -> Result<Vec<u8>, StoreError> {
        let cipher = ChunkCipher::open(keys, enc).await?;
        let stored = Bytes::copy_from_slice(stored);
        let stream = open_range(cipher, plain, range, |r| async move {
            let slice = stored.slice(
                usize::try_from(r.start).unwrap()
                    ..usize::try_from(r.end).unwrap().min(stored.len()),
            );
            // Deliver in awkward pieces, as a network would.
            let pieces: Vec<Result<Bytes, StoreError>> = slice
                .chunks(7777)
                .map(|c| Ok(Bytes::copy_from_slice(c)))
                .collect();
            Ok(futures::stream::iter(pieces).boxed())
        })
        .await?;
        let chunks: Vec<Bytes> = stream.try_collect().await?;
        Ok(chunks.concat())
    }

    #[tokio::test]
    async fn round_trips_and_ranges() {
        let keys = LocalKeys::ephemeral();
        let c = CHUNK_BYTES as usize;
        for size in [0, 1, c - 1, c, c + 1, 3 * c, 3 * c + 5] {
            let data: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
            let (stored, enc) = seal_all(&keys, &data, 1000).await;
            assert_eq!(
                stored.len() as u64,
                sealed_len(size as u64, CHUNK_BYTES),
                "{size}"
            );
            assert_eq!(
                read(&keys, &stored, &enc, size as u64, 0..size as u64)
                    .await
                    .unwrap(),
                data,
                "{size}"
            );
            let n = size as u64;
            for range in [
                0..1,
                n / 2..n,
                c as u64 - 3..c as u64 + 3,
                1..n.saturating_sub(1),
                c as u64..2 * c as u64,
            ] {
                if range.start < range.end && range.end <= n {
                    let got = read(&keys, &stored, &enc, n, range.clone()).await.unwrap();
                    assert_eq!(
                        got,
                        &data[range.start as usize..range.end as usize],
                        "{size} {range:?}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn tampering_is_detected() {
        let keys = LocalKeys::ephemeral();
        let c = CHUNK_BYTES as usize;
        let data = vec![7u8; 2 * c + 10];
        let n = data.len() as u64;
        let (stored, enc) = seal_all(&keys, &data, 4096).await;
        let integrity = |r: Result<Vec<u8>, StoreError>| matches!(r, Err(StoreError::Integrity(_)));
        for at in [0, c / 2, c + 16, stored.len() - 1] {
            let mut bad = stored.clone();
            bad[at] ^= 1;
            assert!(
                integrity(read(&keys, &bad, &enc, n, 0..n).await),
                "flip at {at}"
            );
        }
        // Swapped chunks, a dropped last chunk (the row's size then lies), an appended chunk.
        let frame = c + 16;
        let mut swapped = stored.clone();
        swapped[..frame].copy_from_slice(&stored[frame..2 * frame]);
        swapped[frame..2 * frame].copy_from_slice(&stored[..frame]);
        assert!(integrity(read(&keys, &swapped, &enc, n, 0..n).await));
        assert!(integrity(
            read(&keys, &stored[..2 * frame], &enc, n, 0..n).await
        ));
        assert!(integrity(
            read(
                &keys,
                &stored[..2 * frame],
                &enc,
                2 * c as u64,
                0..2 * c as u64
            )
            .await
        ));
        // Another key does not open it.
        assert!(matches!(
            read(&LocalKeys::ephemeral(), &stored, &enc, n, 0..n).await,
            Err(StoreError::Key(_))
        ));
    }
}
