//! The server's own access to the files of a table by their `s3://<table-id>--table-s3/…` location: size,
//! ranged reads, streamed writes and deletes, all through the object rows (the same path the S3 data plane
//! takes), so what the server writes is visible, listed and stored (encrypted, when configured) like any
//! client-written file. Maintenance reads and rewrites data files through it.

use std::ops::Range;

use bytes::Bytes;
use futures::TryStreamExt;

use crate::objects::TableLocation;
use crate::{
    ByteStream, Catalog, CatalogError, IcebergTable, ObjectBody, ObjectKey, PutOptions, Table,
    TableRef,
};

/// The largest range one [`Catalog::read_table_file_range`] call returns (readers fetch files piecewise).
pub const MAX_TABLE_FILE_RANGE: u64 = 256 * 1024 * 1024;

fn location_of(uri: &str) -> Result<TableLocation, CatalogError> {
    TableLocation::parse(uri).ok_or_else(|| {
        CatalogError::invalid(format!(
            "{uri} is not inside a table's storage (s3://<uuid>--table-s3/…)"
        ))
    })
}

impl Catalog {
    /// A table with its current metadata, by ARN or name.
    pub async fn load_iceberg_table(&self, table: &TableRef) -> Result<IcebergTable, CatalogError> {
        let table = self.table(table).await?;
        self.with_metadata(table).await
    }

    /// The current metadata of a resolved table row (re-read from the store: the row may be stale).
    pub async fn reload_iceberg_table(&self, table: &Table) -> Result<IcebergTable, CatalogError> {
        let record =
            self.meta.table_by_id(table.id).await?.ok_or_else(|| {
                CatalogError::NotFound("The specified table does not exist.".into())
            })?;
        let table = Self::table_from_record(&table.bucket, record)?;
        self.with_metadata(table).await
    }

    /// The size of the file at `location`; `None` when there is none.
    pub async fn table_file_size(&self, location: &str) -> Result<Option<u64>, CatalogError> {
        let file = location_of(location)?;
        Ok(self
            .meta
            .object(file.table_id, &file.key)
            .await?
            .map(|record| record.size))
    }

    /// The bytes `range` of the file at `location` (clamped to its end); `NotFound` when there is no file.
    /// A range longer than [`MAX_TABLE_FILE_RANGE`] is refused rather than buffered.
    pub async fn read_table_file_range(
        &self,
        location: &str,
        range: Range<u64>,
    ) -> Result<Bytes, CatalogError> {
        if range.end.saturating_sub(range.start) > MAX_TABLE_FILE_RANGE {
            return Err(CatalogError::invalid(format!(
                "a read of {} bytes of {location} is more than the {MAX_TABLE_FILE_RANGE} bytes one read may return",
                range.end.saturating_sub(range.start)
            )));
        }
        let file = location_of(location)?;
        let record = self
            .meta
            .object(file.table_id, &file.key)
            .await?
            .ok_or_else(|| CatalogError::NotFound(format!("{location} does not exist")))?;
        let end = range.end.min(record.size);
        let start = range.start.min(end);
        let chunks: Vec<Bytes> = self
            .read_segments(record.blobs, start..end)
            .try_collect()
            .await
            .map_err(|e| CatalogError::Internal(format!("reading {location}: {e}")))?;
        Ok(chunks.concat().into())
    }

    /// Streams `body` into a new file at `location` and makes it visible atomically; returns its size.
    pub async fn write_table_file(
        &self,
        location: &str,
        body: ByteStream,
    ) -> Result<u64, CatalogError> {
        let file = location_of(location)?;
        let key = ObjectKey::parse(&file.key)?;
        let body = ObjectBody {
            stream: body,
            content_length: None,
            content_md5: None,
            checksum: None,
        };
        let info = self
            .put_object_row(file.table_id, &key, body, PutOptions::default())
            .await?;
        Ok(info.size)
    }

    /// Deletes the file at `location` (a missing file is not an error).
    pub async fn delete_table_file(&self, location: &str) -> Result<(), CatalogError> {
        let file = location_of(location)?;
        let key = ObjectKey::parse(&file.key)?;
        self.delete_object_row(file.table_id, &key).await?;
        Ok(())
    }
}
