//! Blobs on local disk, used without `object_store`'s indirections where they cost, and made durable.
//!
//! A blob key is never reused and an object becomes visible only when its row commits, so a new blob is written
//! straight to its final path: no staging file and rename (the costliest part of a small write). A read opens the
//! file and reads its first chunk in one blocking call.
//!
//! Under [`Durability::Full`] a blob is acknowledged only once its bytes are synced and so is every directory
//! entry on the way to it. Directory syncs are shared: writers that created files in one directory meanwhile
//! wait for one `fsync` of it instead of each issuing their own ([`SyncGroup`]).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::stream::StreamExt;

use super::{BlobStream, CHUNK_BYTES, checked_chunk};
use crate::StoreError;
use crate::durability::{Durability, SyncGroup};

/// The directory of a local store.
#[derive(Clone, Debug)]
pub(super) struct LocalFiles {
    root: Arc<Path>,
    durability: Durability,
    dirs: Arc<DirSyncs>,
}

impl LocalFiles {
    pub(super) fn new(root: &Path, durability: Durability) -> Self {
        Self {
            root: Arc::from(root),
            durability,
            dirs: Arc::default(),
        }
    }

    pub(super) fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The file of `key`, where `object_store`'s local store keeps it too; `None` for a key with characters that
    /// store would encode (left to it, so both always agree). The server's own blob keys are always plain.
    pub(super) fn file(&self, key: &str) -> Option<PathBuf> {
        let plain = key.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        });
        plain.then(|| self.root.join(key))
    }

    /// Creates the new file `path` (and its missing directories); fails if it exists.
    fn create(&self, path: &Path) -> std::io::Result<std::fs::File> {
        let open = || {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
        };
        match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                    // A directory made now may replace one removed after its entry was synced.
                    self.dirs.forget_under(&self.root, dir);
                }
                open()
            }
            other => other,
        }
    }

    /// Makes the finished file `file` at `path` durable: its bytes, its entry in its directory and that
    /// directory's entries up to the store's root. A no-op when durability is relaxed.
    fn make_durable(&self, file: &std::fs::File, path: &Path) -> std::io::Result<()> {
        if !self.durability.syncs() {
            return Ok(());
        }
        file.sync_data()?;
        let Some(dir) = path.parent() else {
            return Ok(());
        };
        self.dirs.sync(dir)?;
        self.dirs.sync_entries_up_to(&self.root, dir)
    }

    /// Writes the new blob file `path` from `chunks` at once and makes it durable. On failure the file is
    /// removed: no row references it yet, so nothing is left for unreferenced-file removal.
    pub(super) fn write_new_file(&self, path: &Path, chunks: &[Bytes]) -> std::io::Result<()> {
        use std::io::Write;
        let mut file = self.create(path)?;
        let written = chunks
            .iter()
            .try_for_each(|chunk| file.write_all(chunk))
            .and_then(|()| self.make_durable(&file, path));
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// Starts a blob file written in batches ([`LocalFile::push`]).
    pub(super) fn start_file(&self, path: PathBuf) -> std::io::Result<LocalFile> {
        let file = self.create(&path)?;
        Ok(LocalFile {
            files: self.clone(),
            path,
            idle: Some(file),
            writing: None,
            buffer: Vec::new(),
            buffered: 0,
        })
    }

    /// Forgets which directories under `prefix` were synced (their files are being removed).
    pub(super) fn forget_prefix(&self, prefix: &str) {
        self.dirs.forget_under(&self.root, &self.root.join(prefix));
    }
}

/// A blob file being written in batches of [`CHUNK_BYTES`] on the blocking pool: one batch is written while
/// the next is collected, so the disk and the network overlap and memory stays at two batches.
#[derive(Debug)]
pub(super) struct LocalFile {
    files: LocalFiles,
    path: PathBuf,
    /// The file, when no batch is being written.
    idle: Option<std::fs::File>,
    /// The batch being written; hands the file back.
    writing: Option<tokio::task::JoinHandle<std::io::Result<std::fs::File>>>,
    buffer: Vec<Bytes>,
    buffered: usize,
}

impl LocalFile {
    /// Appends `bytes`; waits only when a full batch is ready and the previous one is still being written.
    pub(super) async fn push(&mut self, bytes: Bytes) -> Result<(), StoreError> {
        self.buffered += bytes.len();
        self.buffer.push(bytes);
        if self.buffered >= CHUNK_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    /// Starts writing the collected batch.
    async fn flush(&mut self) -> Result<(), StoreError> {
        let mut file = self.wait().await?;
        let chunks = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        self.writing = Some(tokio::task::spawn_blocking(move || {
            use std::io::Write;
            chunks.iter().try_for_each(|chunk| file.write_all(chunk))?;
            Ok(file)
        }));
        Ok(())
    }

    /// The file, once the batch being written is done.
    async fn wait(&mut self) -> Result<std::fs::File, StoreError> {
        if let Some(writing) = self.writing.take() {
            return writing
                .await
                .map_err(|e| StoreError::Config(format!("blob file task failed: {e}")))?
                .map_err(local_error);
        }
        self.idle.take().ok_or_else(|| {
            StoreError::Config(format!(
                "blob file {} is unusable after a failed write",
                self.path.display()
            ))
        })
    }

    /// Writes what is left and makes the file durable; it is complete. On failure the file is removed.
    pub(super) async fn finish(mut self) -> Result<(), StoreError> {
        let result = async {
            if !self.buffer.is_empty() {
                self.flush().await?;
            }
            let file = self.wait().await?;
            let (files, path) = (self.files.clone(), self.path.clone());
            blocking(move || files.make_durable(&file, &path)).await
        }
        .await;
        if result.is_err() {
            self.remove().await;
        }
        result
    }

    /// Abandons the file: waits for the batch in flight, then removes what was written.
    pub(super) async fn remove(mut self) {
        let _ = self.wait().await;
        let path = self.path;
        if let Err(e) = blocking(move || std::fs::remove_file(&path)).await {
            tracing::debug!(error = %e, "could not remove an abandoned blob file");
        }
    }
}

/// Directory syncs, grouped per directory ([`SyncGroup`]), and which directories' own entries are known durable,
/// so a new table's directories are synced up to the root once, not on every write.
#[derive(Debug, Default)]
struct DirSyncs {
    dirs: Mutex<HashMap<PathBuf, Arc<DirSync>>>,
}

#[derive(Debug, Default)]
struct DirSync {
    group: SyncGroup,
    /// This directory's entry in its parent is durable.
    entry_durable: AtomicBool,
}

impl DirSyncs {
    fn entry(&self, dir: &Path) -> Arc<DirSync> {
        let mut dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(dirs.entry(dir.to_path_buf()).or_default())
    }

    /// Returns once a sync of `dir` that started after this call has finished.
    fn sync(&self, dir: &Path) -> std::io::Result<()> {
        self.entry(dir)
            .group
            .sync(|| std::fs::File::open(dir)?.sync_all())
    }

    /// Makes the entries of `dir` and its ancestors below `root` durable, syncing each parent once.
    fn sync_entries_up_to(&self, root: &Path, dir: &Path) -> std::io::Result<()> {
        let mut dir = dir;
        while dir != root && dir.starts_with(root) {
            let entry = self.entry(dir);
            if entry.entry_durable.load(Ordering::Acquire) {
                return Ok(());
            }
            let Some(parent) = dir.parent() else {
                return Ok(());
            };
            self.sync(parent)?;
            entry.entry_durable.store(true, Ordering::Release);
            dir = parent;
        }
        Ok(())
    }

    /// Forgets `dir` and everything under it, and the durability of its ancestors' entries below `root`: they
    /// may have been removed and made again.
    fn forget_under(&self, root: &Path, dir: &Path) {
        let mut dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
        dirs.retain(|path, _| !path.starts_with(dir));
        for ancestor in dir.ancestors().take_while(|a| *a != root) {
            if let Some(entry) = dirs.get(ancestor) {
                entry.entry_durable.store(false, Ordering::Release);
            }
        }
    }
}

pub(super) fn local_error(e: std::io::Error) -> StoreError {
    if e.kind() == std::io::ErrorKind::NotFound {
        return StoreError::NotFound;
    }
    StoreError::Unavailable {
        store: "blob store",
        source: Box::new(e),
    }
}

/// Runs blocking file work on the blocking pool.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Config(format!("blob file task failed: {e}")))?
        .map_err(local_error)
}

/// Reads up to [`CHUNK_BYTES`] of `file` from `offset`, short of `end`.
pub(super) fn read_chunk(
    file: &mut std::fs::File,
    offset: u64,
    end: u64,
) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let want = usize::try_from((end - offset).min(CHUNK_BYTES as u64)).unwrap_or(CHUNK_BYTES);
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::with_capacity(want);
    file.take(want as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

/// [`read_chunk`] for a file moved in and out of a blocking task.
fn read_chunk_owned(
    mut file: std::fs::File,
    offset: u64,
    end: u64,
) -> std::io::Result<(std::fs::File, Vec<u8>)> {
    let chunk = read_chunk(&mut file, offset, end)?;
    Ok((file, chunk))
}

/// Bytes `range` of the local file `open` opens, [`CHUNK_BYTES`] at a time on the blocking pool; the file is
/// opened with the first chunk, so a missing blob is `NotFound` here, not in the stream.
pub(super) async fn read_file(
    open: impl FnOnce() -> std::io::Result<std::fs::File> + Send + 'static,
    range: Range<u64>,
) -> Result<BlobStream, StoreError> {
    let (start, end) = (range.start, range.end);
    let (file, first) = blocking(move || read_chunk_owned(open()?, start, end)).await?;
    let first = checked_chunk(first, start, end)?;
    let next = start + first.len() as u64;
    let rest = futures::stream::try_unfold((file, next), move |(file, offset)| async move {
        if offset >= end {
            return Ok(None);
        }
        let (file, chunk) = blocking(move || read_chunk_owned(file, offset, end)).await?;
        let chunk = checked_chunk(chunk, offset, end)?;
        let next = offset + chunk.len() as u64;
        Ok(Some((chunk, (file, next))))
    });
    Ok(futures::stream::once(async move { Ok(first) })
        .chain(rest)
        .boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_chain_is_synced_once_and_again_after_it_is_forgotten() {
        let root = tempfile::tempdir().unwrap();
        let files = LocalFiles::new(root.path(), Durability::Full);
        let path = root.path().join("tables/t1/objects/a");
        files
            .write_new_file(&path, &[Bytes::from_static(b"x")])
            .unwrap();
        let objects = root.path().join("tables/t1/objects");
        for dir in [
            &objects,
            &root.path().join("tables/t1"),
            &root.path().join("tables"),
        ] {
            assert!(
                files.dirs.entry(dir).entry_durable.load(Ordering::Acquire),
                "{dir:?}"
            );
        }
        files.forget_prefix("tables/t1");
        assert!(
            !files
                .dirs
                .entry(&root.path().join("tables"))
                .entry_durable
                .load(Ordering::Acquire)
        );
        assert!(
            !files
                .dirs
                .entry(&objects)
                .entry_durable
                .load(Ordering::Acquire)
        );
        files
            .write_new_file(
                &root.path().join("tables/t1/objects/b"),
                &[Bytes::from_static(b"y")],
            )
            .unwrap();
        assert!(
            files
                .dirs
                .entry(&objects)
                .entry_durable
                .load(Ordering::Acquire)
        );
        assert_eq!(std::fs::read(objects.join("b")).unwrap(), b"y");
    }
}
