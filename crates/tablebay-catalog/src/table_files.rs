//! The files of one table, and the rule that confines them: everything a table references (its metadata files,
//! manifest lists, manifests, data, delete and statistics files) lies in its own storage
//! `s3://<table-id>--table-s3/`, and the server reads, writes and deletes files on a table's behalf only there.
//!
//! [`TableFiles`] is that storage as a handle, opened for one table id. Every server-side access to a table's
//! files goes through it: the catalog's own metadata reads and writes, compaction's FileIO, and maintenance's
//! reads and removals. A location outside the storage the handle was opened for (another table's storage, a
//! path with `.` or `..` segments, any other scheme or bucket) is refused before anything is read, so a table
//! pointed at another table's files can never make the server read them on a caller's behalf (issue 14,
//! findings 3 and 13). [`TableFiles::check_metadata`] applies the same rule to every location a metadata
//! document names; the catalog calls it whenever it writes or adopts metadata, and maintenance before it acts.
//!
//! The files are objects of the object service (`tablebay-objects`), so they are listed, sized and encrypted like
//! a client's. The data plane addresses storage by bucket name and authorizes the caller instead.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use iceberg::spec::TableMetadata;
use tablebay_objects::{
    ByteStream, ObjectAttributes, ObjectBody, ObjectError, ObjectKey, PutOptions, RowSync,
    StoredObject, TABLE_BUCKET_SUFFIX, TableLocation, warehouse_location,
};
use uuid::Uuid;

use crate::iceberg_tables::parse_metadata;
use crate::metadata_cache::LoadedMetadata;
use crate::{Catalog, ServiceError};

/// The largest range one [`TableFiles::read_range`] call returns (readers fetch files piecewise).
pub const MAX_TABLE_FILE_RANGE: u64 = 256 * 1024 * 1024;

/// The largest table file the server reads whole (S3 Tables refuses metadata files over 50 MB).
const MAX_TABLE_FILE_READ: u64 = 64 * 1024 * 1024;

/// Table properties that tell writers (and compaction) where to put files (Java `TableProperties`); each must
/// lie in the table's storage like the files themselves (a migrated table drops them).
pub const PATH_PROPERTIES: &[&str] = &[
    "write.data.path",
    "write.metadata.path",
    "write.object-storage.path",
    "write.folder-storage.path",
];

/// The storage of one table: the only files the server touches on that table's behalf. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TableFiles {
    catalog: Catalog,
    table_id: Uuid,
}

impl Catalog {
    /// The files of the table (or view) `table_id`: a handle that reads, writes and deletes only inside its
    /// storage `s3://<table_id>--table-s3/`.
    pub fn table_files(&self, table_id: Uuid) -> TableFiles {
        TableFiles {
            catalog: self.clone(),
            table_id,
        }
    }
}

impl TableFiles {
    /// The table whose storage this is.
    pub fn table_id(&self) -> Uuid {
        self.table_id
    }

    /// The storage's location, `s3://<table-id>--table-s3` (the table's Iceberg `location`).
    pub fn location(&self) -> String {
        warehouse_location(self.table_id)
    }

    fn outside(&self, what: &str, location: &str) -> ServiceError {
        ServiceError::invalid(format!(
            "{what} {location} is outside the table's storage {}/: a table's files lie in its own storage",
            self.location()
        ))
    }

    /// The file at `location`, which must lie inside this storage (`s3://`, `s3a://` or `oss://`, no `.` or `..`
    /// segment); `Invalid` otherwise.
    pub fn resolve(&self, location: &str) -> Result<TableLocation, ServiceError> {
        self.resolve_as("the file", location)
    }

    /// [`TableFiles::resolve`], naming the location in the refusal (`the manifest list of snapshot 7`, …).
    pub(crate) fn resolve_as(
        &self,
        what: &str,
        location: &str,
    ) -> Result<TableLocation, ServiceError> {
        TableLocation::parse(location)
            .filter(|file| file.table_id == self.table_id)
            .ok_or_else(|| self.outside(what, location))
    }

    /// Whether `location` names the storage itself (`s3://<id>--table-s3`, with or without a trailing `/`): the
    /// only location the table may have.
    pub fn is_location(&self, location: &str) -> bool {
        ["s3://", "s3a://", "oss://"]
            .iter()
            .find_map(|scheme| location.strip_prefix(scheme))
            .map(|rest| rest.trim_end_matches('/'))
            .and_then(|bucket| bucket.strip_suffix(TABLE_BUCKET_SUFFIX))
            .is_some_and(|id| id == self.table_id.hyphenated().to_string())
    }

    /// Checks that a prefix writers put files under (a path property) is the storage or lies inside it.
    fn check_prefix(&self, what: &str, location: &str) -> Result<(), ServiceError> {
        if self.is_location(location) {
            return Ok(());
        }
        self.resolve_as(what, location).map(drop)
    }

    /// Checks every location `metadata` names — its location, each snapshot's manifest list, statistics and
    /// partition statistics files, the metadata log, and the path properties writers follow — against this
    /// storage; `Invalid`, naming the first one outside it, otherwise. Manifests and the files they list are
    /// checked when they are read ([`TableFiles::read`] and its callers).
    pub fn check_metadata(&self, metadata: &TableMetadata) -> Result<(), ServiceError> {
        if !self.is_location(metadata.location()) {
            return Err(self.outside("the table location", metadata.location()));
        }
        for snapshot in metadata.snapshots() {
            let what = format!("the manifest list of snapshot {}", snapshot.snapshot_id());
            self.resolve_as(&what, snapshot.manifest_list())?;
        }
        for statistics in metadata.statistics_iter() {
            self.resolve_as("the statistics file", &statistics.statistics_path)?;
        }
        for statistics in metadata.partition_statistics_iter() {
            self.resolve_as("the partition statistics file", &statistics.statistics_path)?;
        }
        for log in metadata.metadata_log() {
            self.resolve_as("the previous metadata file", &log.metadata_file)?;
        }
        for property in PATH_PROPERTIES {
            if let Some(path) = metadata.properties().get(*property) {
                self.check_prefix(&format!("the property {property} ="), path)?;
            }
        }
        Ok(())
    }

    /// The size of the file at `location`; `None` when there is none.
    pub async fn size(&self, location: &str) -> Result<Option<u64>, ServiceError> {
        let file = self.resolve(location)?;
        Ok(self
            .catalog
            .objects
            .find(&file)
            .await?
            .map(|found| found.size))
    }

    /// The bytes `range` of the file at `location` (clamped to its end); `NotFound` when there is no file.
    /// A range longer than [`MAX_TABLE_FILE_RANGE`] is refused rather than buffered.
    pub async fn read_range(
        &self,
        location: &str,
        range: Range<u64>,
    ) -> Result<Bytes, ServiceError> {
        let length = range.end.saturating_sub(range.start);
        if length > MAX_TABLE_FILE_RANGE {
            return Err(ServiceError::invalid(format!(
                "a read of {length} bytes of {location} is more than the {MAX_TABLE_FILE_RANGE} bytes one read may return"
            )));
        }
        let file = self.resolve(location)?;
        let found = self
            .catalog
            .objects
            .find(&file)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("{location} does not exist")))?;
        self.collect(&found, range, location).await
    }

    /// The bytes `range` of a found file, in one buffer (the caller bounds the length).
    async fn collect(
        &self,
        found: &StoredObject,
        range: Range<u64>,
        location: &str,
    ) -> Result<Bytes, ServiceError> {
        let chunks: Vec<Bytes> = self
            .catalog
            .objects
            .read(found, range)
            .try_collect()
            .await
            .map_err(|e| match e {
                // A store that cannot be reached is an outage (503, retry), not an internal error: a load that
                // answered 500 here read to Iceberg clients as a broken table (issue 17).
                ObjectError::Unavailable(source) => ServiceError::from(source),
                other => ServiceError::Internal(format!("reading {location}: {other}")),
            })?;
        Ok(chunks.concat().into())
    }

    /// The whole file at `location` (a metadata file, a manifest list, a manifest); `None` when there is none.
    /// Files larger than 64 MiB are refused rather than buffered.
    pub async fn read(&self, location: &str) -> Result<Option<Bytes>, ServiceError> {
        let file = self.resolve(location)?;
        self.read_file(&file).await
    }

    async fn read_file(&self, file: &TableLocation) -> Result<Option<Bytes>, ServiceError> {
        let Some(found) = self.catalog.objects.find(file).await? else {
            return Ok(None);
        };
        if found.size > MAX_TABLE_FILE_READ {
            return Err(ServiceError::invalid(format!(
                "{} is {} bytes, more than the {MAX_TABLE_FILE_READ} bytes a metadata file may have",
                file.uri(),
                found.size
            )));
        }
        self.collect(&found, 0..found.size, &file.uri())
            .await
            .map(Some)
    }

    /// Streams `body` into a new file at `location` and makes it visible atomically; returns its size. Written
    /// through the object rows like a client's file, so it is listed, sized and encrypted the same way.
    pub async fn write(&self, location: &str, body: ByteStream) -> Result<u64, ServiceError> {
        let file = self.resolve(location)?;
        let key = ObjectKey::parse(&file.key)?;
        let storage = self.catalog.storage(file.table_id).await?;
        let info = self
            .catalog
            .objects
            .put_object(
                &storage,
                &key,
                ObjectBody::from_stream(body),
                PutOptions::default(),
            )
            .await?;
        Ok(info.size)
    }

    /// Writes a whole file the server made itself (a metadata file); visible atomically. Its row is made durable
    /// by the caller's next commit, which must follow (the pointer swap naming the file).
    pub(crate) async fn put(&self, location: &str, bytes: Bytes) -> Result<(), ServiceError> {
        let file = self.resolve(location)?;
        let key = ObjectKey::parse(&file.key)?;
        let content_type = file
            .key
            .ends_with(".json")
            .then(|| "application/json".to_string());
        let options = PutOptions {
            attributes: ObjectAttributes {
                content_type,
                ..ObjectAttributes::default()
            },
            // Every caller names the file in a commit right after (the table or view pointer): its sync covers
            // this row too, one sync fewer per commit.
            row_sync: RowSync::WithNextCommit,
            ..PutOptions::default()
        };
        let storage = self.catalog.storage(file.table_id).await?;
        self.catalog
            .objects
            .put_object(&storage, &key, ObjectBody::from_bytes(bytes), options)
            .await?;
        Ok(())
    }

    /// Deletes the file at `location` (a missing file is not an error).
    pub async fn delete(&self, location: &str) -> Result<(), ServiceError> {
        let file = self.resolve(location)?;
        let key = ObjectKey::parse(&file.key)?;
        self.catalog
            .objects
            .delete_object(file.table_id, &key)
            .await?;
        Ok(())
    }

    /// Best-effort removal of a file the server wrote but could not publish; unreferenced-file removal
    /// collects whatever this misses.
    pub(crate) async fn discard(&self, location: &str) {
        if let Err(e) = self.delete(location).await {
            tracing::warn!(error = %e, %location, "could not remove an unpublished table file");
        }
    }

    /// Deletes the object at `key` of this storage if it is still the version modified at `modified` (one
    /// written since it was judged unreferenced is kept); returns the size removed.
    pub async fn remove_unreferenced(
        &self,
        key: &str,
        modified: DateTime<Utc>,
    ) -> Result<Option<u64>, ServiceError> {
        let key = ObjectKey::parse(key)?;
        let Some(size) = self
            .catalog
            .objects
            .delete_if_unmodified(self.table_id, &key, modified)
            .await?
        else {
            return Ok(None);
        };
        if key.as_str().ends_with(".metadata.json") {
            let file = TableLocation {
                table_id: self.table_id,
                key: key.to_string(),
            };
            self.catalog.metadata_cache.remove(&file.uri()).await;
        }
        Ok(Some(size))
    }

    /// Aborts the storage's multipart uploads started before `cutoff` (abandoned) and deletes their parts;
    /// returns how many.
    pub async fn abort_stale_uploads(&self, cutoff: DateTime<Utc>) -> Result<u64, ServiceError> {
        Ok(self
            .catalog
            .objects
            .abort_stale_uploads(self.table_id, cutoff)
            .await?)
    }

    /// Reads and parses the metadata file at `location`, or takes it from the cache (files are immutable once
    /// written, so the location is the key). The location is checked before the cache is asked.
    pub(crate) async fn read_metadata(
        &self,
        location: &str,
    ) -> Result<Arc<LoadedMetadata>, ServiceError> {
        let file = self.resolve_as("the metadata file", location)?;
        if let Some(hit) = self.catalog.metadata_cache.get(location).await {
            return Ok(hit);
        }
        if location.ends_with(".gz.metadata.json") {
            return Err(ServiceError::Internal(format!(
                "gzip-compressed metadata {location} is not supported"
            )));
        }
        let json = self.read_file(&file).await?.ok_or_else(|| {
            ServiceError::Internal(format!("metadata file {location} does not exist"))
        })?;
        let metadata = parse_metadata(json.clone()).await?;
        let loaded = Arc::new(LoadedMetadata::new(metadata, json));
        self.catalog
            .metadata_cache
            .insert(location.to_string(), loaded.clone())
            .await;
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests;
