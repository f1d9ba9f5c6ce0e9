//! The blob store: where table files live. A thin wrapper over `object_store`, so the rest of the server never
//! sees the backing store's layout or its error types.
//!
//! Writes stream through a [`BlobWriter`]: small blobs are collected and written at once (straight to their file
//! on local disk, with one atomic `put` remotely), larger ones are streamed (to their file in batches on local
//! disk, through an S3 multipart upload remotely), so memory stays bounded. On local disk a finished blob is
//! durable as [`Durability`] says (`local.rs`). A blob key
//! is never reused and no row points at a blob before its writer finished, so no reader sees a blob half-written.
//! Reads stream a byte range in large chunks ([`BlobStore::read`]). Encrypted blobs are written and read through
//! the same writer and reader ([`BlobStore::sealed_writer`], [`BlobStore::read_sealed`]), in the format of
//! `encryption::chunks`.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::{
    GetOptions, GetRange, GetResultPayload, ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart,
};

mod local;

use local::{LocalFile, LocalFiles, blocking, local_error, read_chunk, read_file};

use crate::StoreError;
use crate::durability::Durability;
use crate::encryption::{
    BlobEncryption, ChunkCipher, KeyId, KeyProvider, Sealer, StoredBytes, open_range,
};

/// Where blobs go: a local directory (default) or an S3-compatible bucket and prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobUrl {
    /// A directory on local disk.
    Local(std::path::PathBuf),
    /// `s3://bucket/prefix` on an S3-compatible store.
    S3 {
        /// Bucket name.
        bucket: String,
        /// Key prefix inside the bucket (no leading or trailing `/`; may be empty).
        prefix: String,
        /// Endpoint URL (`http://host:port`); AWS when absent.
        endpoint: Option<String>,
        /// Region.
        region: String,
        /// Access key id.
        access_key_id: Option<String>,
        /// Secret access key.
        secret_access_key: Option<String>,
        /// Path-style addressing.
        path_style: bool,
    },
}

/// Handle to the blob store (cheap to clone).
#[derive(Clone, Debug)]
pub struct BlobStore {
    inner: Arc<dyn ObjectStore>,
    prefix: object_store::path::Path,
    /// The directory of a local store, which writes and reads use directly (see [`LocalFiles`]).
    local: Option<LocalFiles>,
}

impl BlobStore {
    /// Opens the store at `url`, creating the local directory if needed. Local blobs are made durable
    /// ([`Durability::Full`]) unless [`BlobStore::with_durability`] relaxes it.
    pub fn open(url: &BlobUrl) -> Result<Self, StoreError> {
        match url {
            BlobUrl::Local(dir) => {
                crate::durability::create_dir_all_durably(dir)
                    .map_err(|e| StoreError::Config(format!("{}: {e}", dir.display())))?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| StoreError::Config(format!("{}: {e}", dir.display())))?;
                Ok(Self {
                    inner: Arc::new(fs),
                    prefix: object_store::path::Path::default(),
                    local: Some(LocalFiles::new(dir, Durability::Full)),
                })
            }
            BlobUrl::S3 {
                bucket,
                prefix,
                endpoint,
                region,
                access_key_id,
                secret_access_key,
                path_style,
            } => {
                let mut builder = object_store::aws::AmazonS3Builder::new()
                    .with_bucket_name(bucket)
                    .with_region(region)
                    .with_virtual_hosted_style_request(!path_style)
                    .with_client_options(s3_client_options())
                    .with_retry(s3_retry_config());
                if let Some(endpoint) = endpoint {
                    builder = builder
                        .with_endpoint(endpoint)
                        .with_allow_http(endpoint.starts_with("http://"));
                }
                if let (Some(id), Some(secret)) = (access_key_id, secret_access_key) {
                    builder = builder
                        .with_access_key_id(id)
                        .with_secret_access_key(secret);
                }
                let s3 = builder
                    .build()
                    .map_err(|e| StoreError::Config(e.to_string()))?;
                Ok(Self {
                    inner: Arc::new(s3),
                    prefix: object_store::path::Path::from(prefix.as_str()),
                    local: None,
                })
            }
        }
    }

    /// This store with local blobs made as durable as `durability` says (remote stores keep their own promise).
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.local = self.local.map(|local| local.with_durability(durability));
        self
    }

    fn path(&self, key: &str) -> object_store::path::Path {
        self.prefix
            .parts()
            .chain(object_store::path::Path::from(key).parts())
            .collect()
    }

    /// Writes `bytes` at `key` atomically (readers see the old blob or the whole new one).
    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), StoreError> {
        self.inner
            .put(&self.path(key), bytes.into())
            .await
            .map_err(StoreError::from)?;
        Ok(())
    }

    /// Reads the whole blob at `key`; `NotFound` if absent.
    pub async fn get(&self, key: &str) -> Result<Bytes, StoreError> {
        match self.inner.get(&self.path(key)).await {
            Ok(result) => result.bytes().await.map_err(StoreError::from),
            Err(object_store::Error::NotFound { .. }) => Err(StoreError::NotFound),
            Err(e) => Err(StoreError::from(e)),
        }
    }

    /// A writer of a new blob at `key`; nothing is visible at `key` until [`BlobWriter::finish`] succeeds.
    pub fn writer(&self, key: &str) -> BlobWriter {
        BlobWriter {
            inner: Arc::clone(&self.inner),
            path: self.path(key),
            local: self
                .local
                .as_ref()
                .and_then(|local| Some((local.clone(), local.file(key)?))),
            state: WriterState::default(),
            seal: None,
        }
    }

    /// A writer of a new encrypted blob at `key`: a fresh data key wrapped under the newest version of master
    /// key `key_id`. [`BlobWriter::encryption`] is what a reader needs besides the master key.
    pub async fn sealed_writer(
        &self,
        key: &str,
        keys: &dyn KeyProvider,
        key_id: &KeyId,
    ) -> Result<BlobWriter, StoreError> {
        let (cipher, encryption) = ChunkCipher::create(keys, key_id).await?;
        let mut writer = self.writer(key);
        writer.seal = Some((Box::new(Sealer::new(cipher)), encryption));
        Ok(writer)
    }

    /// Streams plaintext bytes `range` of the encrypted blob at `key` holding `plain_size` plaintext bytes,
    /// reading and opening only the chunks that cover the range. Fails before streaming when the master key is
    /// missing or wrong ([`StoreError::Key`]); altered bytes fail the stream ([`StoreError::Integrity`]).
    pub async fn read_sealed(
        &self,
        key: &str,
        encryption: &BlobEncryption,
        keys: &dyn KeyProvider,
        plain_size: u64,
        range: Range<u64>,
    ) -> Result<BlobStream, StoreError> {
        let cipher = ChunkCipher::open(keys, encryption).await?;
        let source = match self.local.as_ref().and_then(|local| local.file(key)) {
            // One open file serves every batch of the read (opened by the first): fewer opens, and a blob
            // removed while it is read (the old file of an overwritten key) still reads to its end. A batch of
            // chunks is far below `CHUNK_BYTES`, so one `read_chunk` reads all of it.
            Some(path) => {
                let file = Arc::new(std::sync::Mutex::new(None::<std::fs::File>));
                StoredBytes::Blocking(Arc::new(move |stored: Range<u64>| {
                    let mut file = file
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let file = match file.as_mut() {
                        Some(file) => file,
                        None => file.insert(std::fs::File::open(&path).map_err(local_error)?),
                    };
                    read_chunk(file, stored.start, stored.end).map_err(local_error)
                }))
            }
            None => {
                let (store, key) = (self.clone(), key.to_string());
                StoredBytes::Fetch(Box::new(move |stored| {
                    let (store, key) = (store.clone(), key.clone());
                    Box::pin(async move { store.read(&key, stored).await })
                }))
            }
        };
        open_range(cipher, plain_size, range, source).await
    }

    /// Streams bytes `range` of the blob at `key` (the range must lie inside the blob); `NotFound` if absent.
    pub async fn read(&self, key: &str, range: Range<u64>) -> Result<BlobStream, StoreError> {
        if range.is_empty() {
            return Ok(futures::stream::empty().boxed());
        }
        if let Some(path) = self.local.as_ref().and_then(|local| local.file(key)) {
            return read_file(move || std::fs::File::open(path), range).await;
        }
        if self.local.is_none() {
            return self.read_remote(key, range).await;
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            ..GetOptions::default()
        };
        let result = match self.inner.get_opts(&self.path(key), options).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return Err(StoreError::NotFound),
            Err(e) => return Err(StoreError::from(e)),
        };
        match result.payload {
            // object_store reads local files 8 KiB per blocking task; large sequential reads want far bigger
            // chunks.
            GetResultPayload::File(file, _) => read_file(move || Ok(file), result.range).await,
            GetResultPayload::Stream(stream) => Ok(stream.map_err(StoreError::from).boxed()),
        }
    }

    /// Bytes `range` of a blob in an S3 store, as one ranged GET per [`CHUNK_BYTES`], each read whole before it is
    /// handed on: every request to the store is short and bounded by the client's timeout however slowly the
    /// caller consumes the stream (one long GET would be cut by the timeout or hold a connection for a stalled
    /// client). The first chunk is fetched before the stream is returned, so a failing store fails here.
    async fn read_remote(&self, key: &str, range: Range<u64>) -> Result<BlobStream, StoreError> {
        let path = self.path(key);
        let end = range.end;
        let first = remote_chunk(self.inner.as_ref(), &path, range.start, end).await?;
        let next = range.start + first.len() as u64;
        let store = Arc::clone(&self.inner);
        let rest = futures::stream::try_unfold(next, move |offset| {
            let (store, path) = (Arc::clone(&store), path.clone());
            async move {
                if offset >= end {
                    return Ok(None);
                }
                let bytes = remote_chunk(store.as_ref(), &path, offset, end).await?;
                let next = offset + bytes.len() as u64;
                Ok(Some((bytes, next)))
            }
        });
        Ok(futures::stream::once(async move { Ok(first) })
            .chain(rest)
            .boxed())
    }

    /// Checks that the store answers (an S3 store: a `HEAD` of a key that need not exist; a local store: always),
    /// so that a server started against an unreachable or misconfigured store fails at start-up, not on its first
    /// request.
    pub async fn probe(&self) -> Result<(), StoreError> {
        if self.local.is_some() {
            return Ok(());
        }
        match self.inner.head(&self.path(".tablebay-probe")).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::from(e)),
        }
    }

    /// Deletes every blob whose key lies under the folder `prefix` (segment-wise: `tables/a` covers `tables/a/x`,
    /// not `tables/ab`); returns how many were deleted. A missing folder is not an error. Used to purge a dropped
    /// table's storage (`tables/<table-id>/`).
    pub async fn delete_prefix(&self, prefix: &str) -> Result<u64, StoreError> {
        let folder = self.path(prefix.trim_end_matches('/'));
        if folder.parts().count() <= self.prefix.parts().count() {
            return Err(StoreError::Config(format!(
                "refusing to delete the whole blob store (prefix {prefix:?})"
            )));
        }
        let listed = self
            .inner
            .list(Some(&folder))
            .map(|meta| meta.map(|m| m.location))
            .boxed();
        if let Some(local) = &self.local {
            local.forget_prefix(prefix.trim_end_matches('/'));
        }
        let mut deleted = self.inner.delete_stream(listed);
        let mut count = 0;
        while let Some(result) = deleted.next().await {
            match result {
                Ok(_) => count += 1,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(StoreError::from(e)),
            }
        }
        Ok(count)
    }

    /// Deletes the blob at `key`; deleting a missing blob is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), StoreError> {
        match self.inner.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::from(e)),
        }
    }
}

/// How the S3 client talks to the store: a short connect timeout, so a store that is down is noticed at once,
/// and a request timeout that bounds one request of at most [`CHUNK_BYTES`] (reads are split into such requests,
/// see [`BlobStore::read_remote`]), so a store that hangs is noticed too.
fn s3_client_options() -> object_store::ClientOptions {
    object_store::ClientOptions::new()
        .with_connect_timeout(std::time::Duration::from_secs(2))
        .with_timeout(std::time::Duration::from_secs(10))
}

/// Retries of the S3 client: a few, within 5 s, then the error reaches the caller as `Unavailable` (503; the
/// client retries). object_store's default (10 retries within 3 minutes) held requests until the client's own
/// stall timeout while the store restarted (issue 17).
fn s3_retry_config() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: std::time::Duration::from_millis(100),
            max_backoff: std::time::Duration::from_secs(1),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: std::time::Duration::from_secs(5),
    }
}

/// Up to [`CHUNK_BYTES`] of the remote blob at `path` from `offset`, short of `end`, in one ranged GET.
async fn remote_chunk(
    store: &dyn ObjectStore,
    path: &object_store::path::Path,
    offset: u64,
    end: u64,
) -> Result<Bytes, StoreError> {
    let upto = end.min(offset.saturating_add(CHUNK_BYTES as u64));
    let bytes = match store.get_range(path, offset..upto).await {
        Ok(bytes) => bytes,
        // Only blobs a row references are read, and the store acknowledged each of them: a store that now says
        // it has none, or refuses the credentials it accepted, is restarting or recovering (SeaweedFS answers so
        // while its volumes load). Retry later, rather than a 500 for a file that is there.
        Err(
            e @ (object_store::Error::NotFound { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }),
        ) => {
            return Err(StoreError::Unavailable {
                store: "blob store",
                source: Box::new(e),
            });
        }
        Err(e) => return Err(StoreError::from(e)),
    };
    if bytes.is_empty() {
        return checked_chunk(Vec::new(), offset, end);
    }
    Ok(bytes)
}

/// A chunk read at `offset`; an empty one means the file is shorter than the row says: fail rather than end
/// the response early without a sign.
fn checked_chunk(chunk: Vec<u8>, offset: u64, end: u64) -> Result<Bytes, StoreError> {
    if chunk.is_empty() {
        return Err(StoreError::Corrupt(format!(
            "blob ends at {offset}, expected {end} bytes"
        )));
    }
    Ok(Bytes::from(chunk))
}

/// A stream of a blob's bytes.
pub type BlobStream = BoxStream<'static, Result<Bytes, StoreError>>;

/// Size of the chunks read from a local file, and of the parts a large blob is written in.
const CHUNK_BYTES: usize = 8 * 1024 * 1024;

/// Writes one new blob from a stream of chunks. Dropping it without [`BlobWriter::finish`] abandons the write:
/// nothing becomes visible, and at most a staging file or an incomplete S3 upload is left behind.
pub struct BlobWriter {
    inner: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    /// The blob's file in a local store, written directly.
    local: Option<(LocalFiles, std::path::PathBuf)>,
    state: WriterState,
    /// Set for an encrypted blob: plaintext goes through the sealer, ciphertext to the store.
    seal: Option<(Box<Sealer>, BlobEncryption)>,
}

#[derive(Default)]
enum WriterState {
    /// Up to [`CHUNK_BYTES`] collected in memory, not yet written anywhere.
    #[default]
    Empty,
    Buffering(Vec<Bytes>, usize),
    /// Past [`CHUNK_BYTES`]: a multipart upload of the store, fed part by part.
    Streaming(Box<WriteMultipart>, u64),
    /// Past [`CHUNK_BYTES`] on local disk: the blob's file, written a batch at a time, and the stored length.
    LocalStreaming(Box<LocalFile>, u64),
}

impl std::fmt::Debug for BlobWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobWriter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Parts of one blob in flight at once (memory per writer is bounded by this times [`CHUNK_BYTES`]).
const MAX_PARTS_IN_FLIGHT: usize = 2;

impl BlobWriter {
    /// How the blob is encrypted, for a writer from [`BlobStore::sealed_writer`].
    pub fn encryption(&self) -> Option<&BlobEncryption> {
        self.seal.as_ref().map(|(_, encryption)| encryption)
    }

    /// Appends `bytes`; waits when the store is behind, so memory stays bounded.
    pub async fn write(&mut self, bytes: Bytes) -> Result<(), StoreError> {
        let Some((sealer, _)) = &mut self.seal else {
            return self.write_stored(bytes).await;
        };
        let mut frames = Vec::new();
        sealer.push(&bytes, &mut frames)?;
        for frame in frames {
            self.write_stored(frame).await?;
        }
        Ok(())
    }

    /// Appends bytes as stored (ciphertext for an encrypted blob).
    async fn write_stored(&mut self, bytes: Bytes) -> Result<(), StoreError> {
        if bytes.is_empty() {
            return Ok(());
        }
        match &mut self.state {
            WriterState::Empty => {
                let len = bytes.len();
                self.state = WriterState::Buffering(vec![bytes], len);
            }
            WriterState::Buffering(chunks, len) => {
                *len += bytes.len();
                chunks.push(bytes);
            }
            WriterState::Streaming(upload, written) => {
                upload
                    .wait_for_capacity(MAX_PARTS_IN_FLIGHT)
                    .await
                    .map_err(StoreError::from)?;
                *written += bytes.len() as u64;
                upload.put(bytes);
                return Ok(());
            }
            WriterState::LocalStreaming(file, written) => {
                *written += bytes.len() as u64;
                return file.push(bytes).await;
            }
        }
        if let WriterState::Buffering(_, len) = &self.state
            && *len > CHUNK_BYTES
        {
            let WriterState::Buffering(chunks, len) = std::mem::take(&mut self.state) else {
                return Ok(());
            };
            if let Some((files, path)) = &self.local {
                let (files, path) = (files.clone(), path.clone());
                let mut file = Box::new(blocking(move || files.start_file(path)).await?);
                for chunk in chunks {
                    file.push(chunk).await?;
                }
                self.state = WriterState::LocalStreaming(file, len as u64);
                return Ok(());
            }
            let upload = self
                .inner
                .put_multipart(&self.path)
                .await
                .map_err(StoreError::from)?;
            let mut upload = Box::new(WriteMultipart::new_with_chunk_size(upload, CHUNK_BYTES));
            for chunk in chunks {
                upload.put(chunk);
            }
            self.state = WriterState::Streaming(upload, len as u64);
        }
        Ok(())
    }

    /// Makes the blob visible at its key, whole; returns its stored length.
    pub async fn finish(mut self) -> Result<u64, StoreError> {
        if let Some((sealer, _)) = self.seal.take() {
            let last = sealer.finish()?;
            self.write_stored(last).await?;
        }
        let (chunks, len) = match self.state {
            WriterState::Empty => (Vec::new(), 0),
            WriterState::Buffering(chunks, len) => (chunks, len),
            WriterState::Streaming(upload, written) => {
                upload.finish().await.map_err(StoreError::from)?;
                return Ok(written);
            }
            WriterState::LocalStreaming(file, written) => {
                file.finish().await?;
                return Ok(written);
            }
        };
        match self.local {
            Some((files, path)) => blocking(move || files.write_new_file(&path, &chunks)).await?,
            None => {
                self.inner
                    .put(&self.path, PutPayload::from_iter(chunks))
                    .await
                    .map_err(StoreError::from)?;
            }
        }
        Ok(len as u64)
    }

    /// Abandons the write, cleaning up what the store started (best effort).
    pub async fn abort(self) {
        match self.state {
            WriterState::Streaming(upload, _) => {
                if let Err(e) = upload.abort().await {
                    tracing::debug!(error = %e, "could not abort a blob upload");
                }
            }
            WriterState::LocalStreaming(file, _) => file.remove().await,
            WriterState::Empty | WriterState::Buffering(..) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::LocalKeys;

    /// A local encrypted read keeps the file its first batch opened: the blob's removal part-way (an
    /// overwritten key's old file, once its grace period is over) does not cut a slow reader short.
    #[tokio::test]
    async fn a_local_sealed_read_outlives_the_removal_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::open(&BlobUrl::Local(dir.path().to_path_buf())).unwrap();
        let keys = LocalKeys::ephemeral();
        let data: Vec<u8> = (0..5 * 1024 * 1024 + 7).map(|i| (i % 251) as u8).collect();
        let mut writer = store
            .sealed_writer("t/blob", &keys, &KeyId::Managed)
            .await
            .unwrap();
        let encryption = writer.encryption().unwrap().clone();
        writer.write(Bytes::from(data.clone())).await.unwrap();
        writer.finish().await.unwrap();

        let plain = data.len() as u64;
        let mut stream = store
            .read_sealed("t/blob", &encryption, &keys, plain, 0..plain)
            .await
            .unwrap();
        let mut read = stream.next().await.unwrap().unwrap().to_vec();
        store.delete("t/blob").await.unwrap();
        assert!(!dir.path().join("t/blob").exists());
        while let Some(piece) = stream.next().await {
            read.extend_from_slice(&piece.unwrap());
        }
        assert_eq!(read, data);
    }
}
