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
use std::sync::Arc;

// AWS-LC's AES-256-GCM: the cipher's cost is what an encrypted GET adds, and AWS-LC's AVX-512/VAES code opens a
// chunk about 1.4x as fast as ring's AVX2 code (and several times RustCrypto's).
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, Tag, UnboundKey};
use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use futures::stream::StreamExt;
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

    /// Checks and decrypts the stored chunk (ciphertext ‖ tag) that starts `shift` bytes into `frame`, leaving
    /// its plaintext at the start of `frame`; returns the plaintext's length.
    fn unseal_within(
        &self,
        index: u64,
        last: bool,
        frame: &mut [u8],
        shift: usize,
    ) -> Result<usize, StoreError> {
        let plain = self
            .cipher
            .open_within(
                Nonce::assume_unique_for_key(self.nonce(index)),
                Aad::from(aad(index, last)),
                frame,
                shift..,
            )
            .map_err(|_| {
                StoreError::Integrity(format!(
                    "encrypted chunk {index} failed its integrity check (the stored bytes were altered or damaged)"
                ))
            })?;
        Ok(plain.len())
    }

    /// Opens a blob of one chunk held whole in memory (a sealed secret).
    pub(super) fn open_one(&self, mut stored: Vec<u8>) -> Result<Vec<u8>, StoreError> {
        let plain = self.unseal_within(0, true, &mut stored, 0)?;
        stored.truncate(plain);
        Ok(stored)
    }

    /// Plaintext bytes per chunk.
    fn chunk_len(&self) -> usize {
        usize::try_from(self.chunk).unwrap_or(usize::MAX)
    }

    /// Room for one frame: a chunk and its tag.
    fn frame_capacity(&self) -> usize {
        self.chunk_len().saturating_add(TAG_BYTES as usize)
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

/// The encrypting side of a [`crate::BlobWriter`]: collects plaintext into the next chunk's own buffer (the one
/// copy a write makes) and seals it there in place, so a sealed frame leaves as that buffer with no further copy.
/// A full chunk is sealed only once more bytes follow, because whether it is the last one is bound in it.
pub(crate) struct Sealer {
    cipher: ChunkCipher,
    pending: BytesMut,
    index: u64,
}

impl Sealer {
    pub(crate) fn new(cipher: ChunkCipher) -> Self {
        Self {
            pending: BytesMut::with_capacity(cipher.frame_capacity()),
            cipher,
            index: 0,
        }
    }

    /// Takes plaintext; appends the frames (ciphertext ‖ tag) of the chunks it completed to `frames`.
    pub(crate) fn push(
        &mut self,
        mut bytes: &[u8],
        frames: &mut Vec<Bytes>,
    ) -> Result<(), StoreError> {
        let chunk = self.cipher.chunk_len();
        while !bytes.is_empty() {
            if self.pending.len() == chunk {
                frames.push(self.seal_pending(false)?);
            }
            let (head, rest) = bytes.split_at((chunk - self.pending.len()).min(bytes.len()));
            self.pending.extend_from_slice(head);
            bytes = rest;
        }
        Ok(())
    }

    /// Seals what is left as the last chunk.
    pub(crate) fn finish(mut self) -> Result<Bytes, StoreError> {
        self.seal_pending(true)
    }

    fn seal_pending(&mut self, last: bool) -> Result<Bytes, StoreError> {
        let next = BytesMut::with_capacity(self.cipher.frame_capacity());
        let mut frame = std::mem::replace(&mut self.pending, next);
        let tag = self.cipher.seal(self.index, last, &mut frame)?;
        // Within the capacity reserved for the tag: no reallocation.
        frame.extend_from_slice(tag.as_ref());
        self.index += 1;
        Ok(frame.freeze())
    }
}

/// The stored bytes to fetch for plaintext `range` of a blob of `plain` bytes, and the first chunk's index.
fn stored_range(cipher: &ChunkCipher, plain: u64, chunks: &Range<u64>) -> Range<u64> {
    let frame = cipher.chunk + TAG_BYTES;
    let end = (chunks.end * frame).min(sealed_len(
        plain,
        u32::try_from(cipher.chunk).unwrap_or(u32::MAX),
    ));
    chunks.start * frame..end
}

/// Chunks fetched and opened together: 1 MiB of plaintext, opened on the blocking pool.
const BATCH_CHUNKS: u64 = 16;
/// The first batch is smaller (256 KiB), so that sending starts sooner and a 1 MiB read is pipelined too.
const FIRST_BATCH_CHUNKS: u64 = 4;
/// Batches fetched and opened ahead of the one being sent, so that reading, opening and sending overlap and
/// one large GET keeps more than one core busy. Memory per stream: about (1 + this) × 1 MiB.
const BATCHES_AHEAD: usize = 2;

/// Reads a stored byte range of a blob from any store, as a stream.
pub(crate) type Fetch =
    Box<dyn Fn(Range<u64>) -> BoxFuture<'static, Result<BlobStream, StoreError>> + Send + Sync>;

/// Reads a stored byte range of a blob synchronously (fewer bytes if the blob ends first: opening then reports
/// the truncation).
pub(crate) type ReadBlocking = Arc<dyn Fn(Range<u64>) -> Result<Vec<u8>, StoreError> + Send + Sync>;

/// Where an encrypted blob's stored bytes come from.
pub(crate) enum StoredBytes {
    /// A blocking reader (a local file): each batch is read and opened in one blocking call, while its bytes are
    /// still in cache.
    Blocking(ReadBlocking),
    /// Any store, through a stream.
    Fetch(Fetch),
}

/// Plaintext `range` of an encrypted blob of `plain` bytes stored in `source`: only the chunks covering the
/// range are read and opened, a batch of [`BATCH_CHUNKS`] at a time (the first one smaller) with
/// [`BATCHES_AHEAD`] batches in flight. The first batch is read before this returns, so a missing blob or a
/// damaged first chunk is an error here rather than in the stream.
pub(crate) async fn open_range(
    cipher: ChunkCipher,
    plain: u64,
    range: Range<u64>,
    source: StoredBytes,
) -> Result<BlobStream, StoreError> {
    if range.is_empty() {
        return Ok(futures::stream::empty().boxed());
    }
    if range.end > plain {
        return Err(StoreError::Corrupt(format!(
            "read of {range:?} past the end of a {plain}-byte blob"
        )));
    }
    let first = range.start / cipher.chunk;
    let end = (range.end - 1) / cipher.chunk + 1;
    let mut batches = Vec::new();
    let (mut start, mut size) = (first, FIRST_BATCH_CHUNKS);
    while start < end {
        let stop = (start + size).min(end);
        batches.push(start..stop);
        (start, size) = (stop, BATCH_CHUNKS);
    }
    let opener = Arc::new(Opener {
        cipher,
        plain,
        range,
        source,
    });
    let mut batches = batches.into_iter();
    let Some(head) = batches.next() else {
        return Ok(futures::stream::empty().boxed());
    };
    let head = Arc::clone(&opener).open(head).await?;
    let rest = futures::stream::iter(batches)
        .map(move |batch| Arc::clone(&opener).open(batch))
        .buffered(BATCHES_AHEAD);
    Ok(futures::stream::once(async move { Ok(head) })
        .chain(rest)
        .boxed())
}

/// What every batch of one [`open_range`] shares.
struct Opener {
    cipher: ChunkCipher,
    plain: u64,
    range: Range<u64>,
    source: StoredBytes,
}

impl Opener {
    /// Reads the frames of `chunks` into one buffer and opens them, returning the plaintext cut to the range: on
    /// the blocking pool (a single chunk from a stream inline: a small read is not worth a thread hand-off).
    async fn open(self: Arc<Self>, chunks: Range<u64>) -> Result<Bytes, StoreError> {
        let stored = stored_range(&self.cipher, self.plain, &chunks);
        let fetch = match &self.source {
            StoredBytes::Blocking(read) => {
                let read = Arc::clone(read);
                return tokio::task::spawn_blocking(move || {
                    let buffer = BytesMut::from(Bytes::from(read(stored)?));
                    self.open_frames(chunks, buffer)
                })
                .await
                .map_err(|e| StoreError::Config(format!("chunk opening task failed: {e}")))?;
            }
            StoredBytes::Fetch(fetch) => fetch,
        };
        let want = usize::try_from(stored.end - stored.start)
            .map_err(|_| StoreError::Corrupt("chunk batch larger than memory".to_string()))?;
        let mut source = fetch(stored).await?;
        let mut buffer = match source.next().await.transpose()? {
            Some(piece) => piece
                .try_into_mut()
                .unwrap_or_else(|shared| BytesMut::from(&shared[..])),
            None => BytesMut::new(),
        };
        while let Some(piece) = source.next().await {
            buffer.extend_from_slice(&piece?);
        }
        buffer.truncate(want);
        if chunks.end - chunks.start == 1 {
            self.open_frames(chunks, buffer)
        } else {
            tokio::task::spawn_blocking(move || self.open_frames(chunks, buffer))
                .await
                .map_err(|e| StoreError::Config(format!("chunk opening task failed: {e}")))?
        }
    }

    /// Opens the frames of `chunks` held in `buffer` in place, each chunk's plaintext moved up against the one
    /// before it (past the tags), so the batch's plaintext leaves as one piece cut to the range: one body frame
    /// per batch rather than per chunk, which is fewer socket writes for the response.
    fn open_frames(&self, chunks: Range<u64>, mut buffer: BytesMut) -> Result<Bytes, StoreError> {
        let cipher = &self.cipher;
        let last_chunk = cipher.chunks(self.plain) - 1;
        let (mut stored, mut plain) = (0usize, 0usize);
        for index in chunks.clone() {
            let frame_len = usize::try_from(cipher.frame_len(index, self.plain))
                .map_err(|_| StoreError::Corrupt("chunk larger than memory".to_string()))?;
            let frame = buffer
                .get_mut(plain..stored + frame_len)
                .ok_or_else(|| truncated(index))?;
            plain += cipher.unseal_within(index, index == last_chunk, frame, stored - plain)?;
            stored += frame_len;
        }
        // Cut the first and last chunks to the range.
        let start = chunks.start * cipher.chunk;
        let from = usize::try_from(self.range.start.saturating_sub(start)).unwrap_or(usize::MAX);
        let to = usize::try_from((self.range.end - start).min(plain as u64)).unwrap_or(usize::MAX);
        if from >= to {
            return Err(truncated(chunks.end - 1));
        }
        buffer.truncate(to);
        Ok(buffer.freeze().slice(from..))
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
        let mut frames = Vec::new();
        for p in data.chunks(piece.max(1)) {
            sealer.push(p, &mut frames).unwrap();
        }
        frames.push(sealer.finish().unwrap());
        let out = frames.concat();
        (out, encryption)
    }

    /// Reads `range` both from a stream (delivered in awkward pieces, as a network would) and from a local
    /// file; the two must agree, bytes or error.
    async fn read(
        keys: &LocalKeys,
        stored: &[u8],
        enc: &BlobEncryption,
        plain: u64,
        range: Range<u64>,
    ) -> Result<Vec<u8>, StoreError> {
        let bytes = Bytes::copy_from_slice(stored);
        let fetch: Fetch = Box::new(move |r: Range<u64>| {
            let slice = bytes.slice(
                usize::try_from(r.start).unwrap()..usize::try_from(r.end).unwrap().min(bytes.len()),
            );
            let pieces: Vec<Result<Bytes, StoreError>> = slice
                .chunks(7777)
                .map(|c| Ok(Bytes::copy_from_slice(c)))
                .collect();
            Box::pin(async move { Ok(futures::stream::iter(pieces).boxed()) })
        });
        let streamed = read_from(keys, enc, plain, range.clone(), StoredBytes::Fetch(fetch)).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blob");
        std::fs::write(&path, stored).unwrap();
        let read: ReadBlocking = Arc::new(move |r: Range<u64>| {
            let bytes = std::fs::read(&path).unwrap();
            let end = usize::try_from(r.end).unwrap().min(bytes.len());
            Ok(bytes[usize::try_from(r.start).unwrap()..end].to_vec())
        });
        let from_file = read_from(keys, enc, plain, range, StoredBytes::Blocking(read)).await;
        assert_eq!(format!("{streamed:?}"), format!("{from_file:?}"));
        streamed
    }

    async fn read_from(
        keys: &LocalKeys,
        enc: &BlobEncryption,
        plain: u64,
        range: Range<u64>,
        source: StoredBytes,
    ) -> Result<Vec<u8>, StoreError> {
        let cipher = ChunkCipher::open(keys, enc).await?;
        let stream = open_range(cipher, plain, range, source).await?;
        let chunks: Vec<Bytes> = stream.try_collect().await?;
        Ok(chunks.concat())
    }

    #[tokio::test]
    async fn round_trips_and_ranges() {
        let keys = LocalKeys::ephemeral();
        let c = CHUNK_BYTES as usize;
        let batch = BATCH_CHUNKS as usize * c;
        let first_batch = FIRST_BATCH_CHUNKS as usize * c;
        for size in [0, 1, c - 1, c, c + 1, 3 * c, 3 * c + 5, 2 * batch + 5] {
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
                // Across the boundaries of batches, and spanning several.
                first_batch as u64 - 3..first_batch as u64 + 3,
                (first_batch + batch) as u64 - 3..(first_batch + batch) as u64 + 3,
                c as u64 + 1..n.saturating_sub(c as u64),
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

    /// The stored format, pinned to bytes made by an independent AES-256-GCM (Python `cryptography`: per chunk
    /// `AESGCM(key).encrypt(prefix ‖ index, chunk, "tablebay chunk 1" ‖ index ‖ last)`), so blobs written by any
    /// earlier build open whatever AES-GCM library is underneath.
    #[tokio::test]
    async fn the_format_matches_an_independent_implementation() {
        let cipher = || {
            let key = DataKey(std::array::from_fn(|i| u8::try_from(i).unwrap()));
            ChunkCipher::with_key(&key, [0xa1, 0xb2, 0xc3, 0xd4], 16).unwrap()
        };
        let plain = b"tablebay chunk format, fixed vector";
        let stored = hex_bytes(
            "f6625784f9fca27d2be8bbdbb370686c65470e84ce85dc0c768a6d9ccc9fced5305d2c0bcdb20dea23c8304027f8946a\
             3da9a3e90e40bc00da12e083e2e1fa5b12c255b5c4d4e758c06e941005679045026587",
        );

        let mut sealer = Sealer::new(cipher());
        let mut frames = Vec::new();
        sealer.push(plain, &mut frames).unwrap();
        frames.push(sealer.finish().unwrap());
        assert_eq!(frames.concat(), stored);

        let n = plain.len() as u64;
        for range in [0..n, 3..30, 16..32, 34..35] {
            let stored = stored.clone();
            let read: ReadBlocking = Arc::new(move |r: Range<u64>| {
                let end = usize::try_from(r.end).unwrap().min(stored.len());
                Ok(stored[usize::try_from(r.start).unwrap()..end].to_vec())
            });
            let stream = open_range(cipher(), n, range.clone(), StoredBytes::Blocking(read));
            let opened: Vec<Bytes> = stream.await.unwrap().try_collect().await.unwrap();
            let want =
                &plain[usize::try_from(range.start).unwrap()..usize::try_from(range.end).unwrap()];
            assert_eq!(opened.concat(), want, "range {range:?}");
        }
    }

    fn hex_bytes(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
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
