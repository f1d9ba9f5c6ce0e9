//! Reads: head and get as clients ask for them (preconditions, a range or a part; `selection.rs`), and the plain
//! reads of a table's own files by the server ([`Objects::find`], [`Objects::read`]). Bytes stream lazily, segment
//! by segment, opening sealed blobs with the master keys.

use std::ops::Range;

use chrono::{DateTime, Utc};
use futures::stream::{StreamExt, TryStreamExt};
use tablebay_store::meta::{BlobSegment, ObjectRecord};
use uuid::Uuid;

use crate::object::object_info;
use crate::selection::{self, ReadRequest};
use crate::{ObjectError, ObjectKey, ObjectStream, ObjectView, Objects, TableLocation};

/// A stored object found by its location, ready to be read (what the server reads of a table's own files).
#[derive(Clone, Debug)]
pub struct StoredObject {
    /// Length in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: DateTime<Utc>,
    segments: Vec<BlobSegment>,
}

impl Objects {
    /// The object and the range a get with the same request would return, without the bytes.
    pub async fn head_object(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        request: &ReadRequest,
    ) -> Result<ObjectView, ObjectError> {
        let record = self
            .meta
            .object(table_id, key.as_str())
            .await?
            .ok_or(ObjectError::ObjectNotFound)?;
        view(record, request).map(|(view, _)| view)
    }

    /// The object, the range answered, and a stream of those bytes (across part boundaries for multipart
    /// objects, which are stored as their parts' blobs).
    pub async fn get_object(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        request: &ReadRequest,
    ) -> Result<(ObjectView, ObjectStream), ObjectError> {
        let record = self
            .meta
            .object(table_id, key.as_str())
            .await?
            .ok_or(ObjectError::ObjectNotFound)?;
        let (view, segments) = view(record, request)?;
        let mut stream = self.read_segments(segments, view.range.clone());
        // Read the first bytes before answering, so that a missing blob or a damaged first chunk is an error
        // answer, not a response cut short after its headers.
        let first = match stream.next().await {
            Some(first) => Some(first?),
            None => None,
        };
        let stream = futures::stream::iter(first.map(Ok)).chain(stream).boxed();
        Ok((view, stream))
    }

    /// The object at `file`, if there is one. No precondition or key rule applies: a location that names no
    /// object (whatever its key) is `None`.
    pub async fn find(&self, file: &TableLocation) -> Result<Option<StoredObject>, ObjectError> {
        Ok(self
            .meta
            .object(file.table_id, &file.key)
            .await?
            .map(|record| StoredObject {
                size: record.size,
                modified: record.modified_at,
                segments: record.blobs,
            }))
    }

    /// The bytes `range` of a found object (clamped to its end), read lazily.
    pub fn read(&self, object: &StoredObject, range: Range<u64>) -> ObjectStream {
        let end = range.end.min(object.size);
        let start = range.start.min(end);
        self.read_segments(object.segments.clone(), start..end)
    }

    /// The bytes `range` of an object stored as `segments`, read lazily segment by segment.
    fn read_segments(&self, segments: Vec<BlobSegment>, range: Range<u64>) -> ObjectStream {
        let blobs = self.blobs.clone();
        let keys = self.keys.clone();
        futures::stream::iter(selection::pieces(&segments, range))
            .then(move |(segment, range)| {
                let (blobs, keys) = (blobs.clone(), keys.clone());
                async move {
                    match &segment.encryption {
                        None => blobs.read(&segment.key, range).await,
                        Some(encryption) => {
                            blobs
                                .read_sealed(
                                    &segment.key,
                                    encryption,
                                    keys.as_ref(),
                                    segment.size,
                                    range,
                                )
                                .await
                        }
                    }
                }
            })
            .try_flatten()
            .map_err(ObjectError::from)
            .boxed()
    }
}

/// The view `request` asks of `record`, and the record's segments to read it from.
fn view(
    record: ObjectRecord,
    request: &ReadRequest,
) -> Result<(ObjectView, Vec<BlobSegment>), ObjectError> {
    request
        .preconditions
        .check(&record.etag, record.modified_at)?;
    let (range, partial) =
        selection::select(request, &record.blobs, record.size, record.parts_count)?;
    let segments = record.blobs.clone();
    Ok((
        ObjectView {
            info: object_info(record)?,
            range,
            partial,
        },
        segments,
    ))
}
