//! An iceberg-rust [`FileIO`] over one table's storage: every byte compaction reads or writes (data files,
//! delete files, manifests, manifest lists) goes through that table's [`TableFiles`], so through the object rows
//! and the blob store exactly as the S3 data plane's, and output files are listed, sized and encrypted like
//! client writes. Only locations inside the storage of the table it was opened for resolve: a manifest or data
//! file of another table's storage is refused, never read, and nothing is written or deleted anywhere else.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use iceberg::io::{
    FileIO, FileIOBuilder, FileMetadata, FileRead, FileWrite, InputFile, OutputFile, Storage,
    StorageConfig, StorageFactory,
};
use iceberg::{Error, ErrorKind};
use serde::{Deserialize, Serialize};
use tablebay_catalog::{CatalogError, MAX_TABLE_FILE_RANGE, TableFiles};
use tablebay_objects::BodyError;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How many written chunks may wait for the object service before a writer waits (bounds memory).
const WRITE_QUEUE: usize = 4;

/// A [`FileIO`] over the storage of one table.
pub(crate) fn file_io(files: &TableFiles) -> FileIO {
    FileIOBuilder::new(Arc::new(ObjectStorageFactory {
        files: Some(files.clone()),
    }))
    .build()
}

fn io_error(e: CatalogError) -> Error {
    let kind = match e {
        CatalogError::NotFound(_) | CatalogError::Invalid(_) => ErrorKind::DataInvalid,
        _ => ErrorKind::Unexpected,
    };
    Error::new(kind, e.to_string())
}

fn detached() -> Error {
    Error::new(
        ErrorKind::Unexpected,
        "the object storage was deserialized without its table's files",
    )
}

/// Builds [`ObjectStorage`]; the catalog is not serializable, so a deserialized factory cannot build.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ObjectStorageFactory {
    #[serde(skip)]
    files: Option<TableFiles>,
}

#[typetag::serde]
impl StorageFactory for ObjectStorageFactory {
    fn build(&self, _config: &StorageConfig) -> iceberg::Result<Arc<dyn Storage>> {
        Ok(Arc::new(ObjectStorage {
            files: self.files.clone(),
        }))
    }
}

/// One table's files through the catalog's object service.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ObjectStorage {
    #[serde(skip)]
    files: Option<TableFiles>,
}

impl ObjectStorage {
    fn files(&self) -> iceberg::Result<&TableFiles> {
        self.files.as_ref().ok_or_else(detached)
    }
}

#[async_trait]
#[typetag::serde]
impl Storage for ObjectStorage {
    async fn exists(&self, path: &str) -> iceberg::Result<bool> {
        Ok(self.files()?.size(path).await.map_err(io_error)?.is_some())
    }

    async fn metadata(&self, path: &str) -> iceberg::Result<FileMetadata> {
        let size = self.files()?.size(path).await.map_err(io_error)?;
        let size = size
            .ok_or_else(|| Error::new(ErrorKind::DataInvalid, format!("File not found: {path}")))?;
        Ok(FileMetadata { size })
    }

    async fn read(&self, path: &str) -> iceberg::Result<Bytes> {
        let files = self.files()?;
        let size = files.size(path).await.map_err(io_error)?;
        let size = size
            .ok_or_else(|| Error::new(ErrorKind::DataInvalid, format!("File not found: {path}")))?;
        if size > MAX_TABLE_FILE_RANGE {
            return Err(Error::new(
                ErrorKind::DataInvalid,
                format!("{path} is too large to read whole ({size} bytes)"),
            ));
        }
        files.read_range(path, 0..size).await.map_err(io_error)
    }

    async fn reader(&self, path: &str) -> iceberg::Result<Box<dyn FileRead>> {
        Ok(Box::new(ObjectRead {
            files: self.files()?.clone(),
            path: path.to_string(),
        }))
    }

    async fn write(&self, path: &str, bs: Bytes) -> iceberg::Result<()> {
        let body = futures::stream::once(async move { Ok::<_, BodyError>(bs) }).boxed();
        self.files()?.write(path, body).await.map_err(io_error)?;
        Ok(())
    }

    async fn writer(&self, path: &str) -> iceberg::Result<Box<dyn FileWrite>> {
        Ok(Box::new(ObjectWrite::start(
            self.files()?.clone(),
            path.to_string(),
        )))
    }

    async fn delete(&self, path: &str) -> iceberg::Result<()> {
        self.files()?.delete(path).await.map_err(io_error)
    }

    async fn delete_prefix(&self, path: &str) -> iceberg::Result<()> {
        // Compaction deletes single files it wrote; whole prefixes are unreferenced-file removal's job.
        Err(Error::new(
            ErrorKind::FeatureUnsupported,
            format!("delete_prefix({path}) is not supported here"),
        ))
    }

    async fn delete_stream(&self, mut paths: BoxStream<'static, String>) -> iceberg::Result<()> {
        while let Some(path) = paths.next().await {
            self.delete(&path).await?;
        }
        Ok(())
    }

    fn new_input(&self, path: &str) -> iceberg::Result<InputFile> {
        Ok(InputFile::new(Arc::new(self.clone()), path.to_string()))
    }

    fn new_output(&self, path: &str) -> iceberg::Result<OutputFile> {
        Ok(OutputFile::new(Arc::new(self.clone()), path.to_string()))
    }
}

/// Ranged reads of one file.
struct ObjectRead {
    files: TableFiles,
    path: String,
}

#[async_trait]
impl FileRead for ObjectRead {
    async fn read(&self, range: Range<u64>) -> iceberg::Result<Bytes> {
        self.files
            .read_range(&self.path, range)
            .await
            .map_err(io_error)
    }
}

/// A streamed upload: chunks go through a small queue into one `put` of the object service, which makes the
/// file visible only when the stream ends after [`FileWrite::close`]. A writer dropped without `close` ends
/// its stream with an error, so a half-written file never becomes visible.
struct ObjectWrite {
    path: String,
    sender: Option<mpsc::Sender<Bytes>>,
    closed: Arc<AtomicBool>,
    upload: Option<JoinHandle<Result<u64, CatalogError>>>,
}

impl ObjectWrite {
    fn start(files: TableFiles, path: String) -> Self {
        let (sender, receiver) = mpsc::channel::<Bytes>(WRITE_QUEUE);
        let closed = Arc::new(AtomicBool::new(false));
        let finished = closed.clone();
        let body = futures::stream::unfold(
            (receiver, finished, false),
            |(mut receiver, finished, done)| async move {
                if done {
                    return None;
                }
                match receiver.recv().await {
                    Some(chunk) => Some((Ok(chunk), (receiver, finished, false))),
                    None if finished.load(Ordering::Acquire) => None,
                    None => {
                        let error: BodyError = "the writer was dropped before it was closed".into();
                        Some((Err(error), (receiver, finished, true)))
                    }
                }
            },
        )
        .boxed();
        let target = path.clone();
        let upload = tokio::spawn(async move { files.write(&target, body).await });
        Self {
            path,
            sender: Some(sender),
            closed,
            upload: Some(upload),
        }
    }

    async fn upload_result(&mut self) -> iceberg::Result<u64> {
        let upload = self.upload.take().ok_or_else(|| {
            Error::new(
                ErrorKind::Unexpected,
                format!("{} was already closed", self.path),
            )
        })?;
        match upload.await {
            Ok(result) => result.map_err(io_error),
            Err(e) => Err(Error::new(
                ErrorKind::Unexpected,
                format!("the upload of {} failed: {e}", self.path),
            )),
        }
    }
}

#[async_trait]
impl FileWrite for ObjectWrite {
    async fn write(&mut self, bs: Bytes) -> iceberg::Result<()> {
        let sender = self
            .sender
            .as_ref()
            .ok_or_else(|| Error::new(ErrorKind::Unexpected, format!("{} is closed", self.path)))?;
        if sender.send(bs).await.is_err() {
            // The upload ended early: report why.
            self.sender = None;
            self.upload_result().await?;
            return Err(Error::new(
                ErrorKind::Unexpected,
                format!("the upload of {} ended early", self.path),
            ));
        }
        Ok(())
    }

    async fn close(&mut self) -> iceberg::Result<()> {
        self.closed.store(true, Ordering::Release);
        self.sender = None;
        self.upload_result().await.map(|_| ())
    }
}
