//! Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects, CopyObject, and the bucket
//! probes clients make first (HeadBucket, GetBucketLocation, ListBuckets). Each parses its input into domain
//! types, makes one object-service call and maps the result.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use s3s::dto::{self, CopySource, StreamingBlob};
use s3s::{S3Request, S3Response, S3Result};
use tablebay_catalog::{Catalog, TableCounters};
use tablebay_objects::{
    ByteRange, ObjectError, ObjectInfo, ObjectStream, ObjectView, Objects, PutCondition,
    PutOptions, ReadRequest, RowSync,
};

use super::auth::DataAction;
use super::service::Ctx;
use super::wire::{self, ChecksumFields, ContentHeaders};

/// Most keys one DeleteObjects request may name.
const MAX_DELETE_KEYS: usize = 1000;

/// PutObject.
pub(crate) async fn put_object(
    objects: &Objects,
    counters: &TableCounters,
    req: S3Request<dto::PutObjectInput>,
) -> S3Result<S3Response<dto::PutObjectOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let header_checksum = wire::single_checksum(
        input.checksum_crc32.as_ref(),
        input.checksum_crc32c.as_ref(),
        input.checksum_crc64nvme.as_ref(),
        input.checksum_sha1.as_ref(),
        input.checksum_sha256.as_ref(),
    )?;
    let options = PutOptions {
        attributes: ContentHeaders {
            content_type: input.content_type.as_ref(),
            cache_control: input.cache_control.as_ref(),
            content_disposition: input.content_disposition.as_ref(),
            content_encoding: input.content_encoding.as_ref(),
            content_language: input.content_language.as_ref(),
            expires: input.expires.as_ref(),
            metadata: input.metadata.as_ref(),
        }
        .attributes(),
        checksum_algorithm: input
            .checksum_algorithm
            .as_ref()
            .map(wire::algorithm_of)
            .transpose()?,
        condition: put_condition(input.if_match.as_ref(), input.if_none_match.as_ref()),
        encryption: wire::requested_encryption(
            input.server_side_encryption.as_ref(),
            input.ssekms_key_id.as_ref(),
            input.sse_customer_algorithm.as_ref(),
        )?,
        row_sync: RowSync::Now,
    };
    let body = wire::object_body(
        input.body,
        input.content_length,
        input.content_md5,
        header_checksum,
        &req.headers,
        req.trailing_headers,
    )?;
    let info = objects
        .put_object(ctx.storage()?, &key, body, options)
        .await
        .map_err(|e| ctx.error(e))?;
    counters.bytes_in(ctx.table_id()?, info.size);
    let fields = ChecksumFields::of(info.checksum.as_ref());
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(info.encryption.as_ref());
    Ok(S3Response::new(dto::PutObjectOutput {
        server_side_encryption,
        ssekms_key_id,
        e_tag: Some(wire::etag(&info.etag)),
        checksum_crc32: fields.crc32,
        checksum_crc32c: fields.crc32c,
        checksum_crc64nvme: fields.crc64nvme,
        checksum_sha1: fields.sha1,
        checksum_sha256: fields.sha256,
        checksum_type: fields.kind,
        size: i64::try_from(info.size).ok(),
        ..Default::default()
    }))
}

/// The conditional-write headers of a PUT or completion.
pub(crate) fn put_condition(
    if_match: Option<&dto::IfMatch>,
    if_none_match: Option<&dto::IfNoneMatch>,
) -> PutCondition {
    match (if_match, if_none_match) {
        (Some(dto::ETagCondition::ETag(tag)), _) => PutCondition::IfMatch(tag.value().to_string()),
        (_, Some(_)) => PutCondition::IfAbsent,
        _ => PutCondition::Always,
    }
}

fn byte_range(range: Option<&dto::Range>) -> Option<ByteRange> {
    range.map(|range| match *range {
        dto::Range::Int { first, last } => ByteRange::From { first, last },
        dto::Range::Suffix { length } => ByteRange::Suffix(length),
    })
}

fn part_number(part: Option<i32>) -> S3Result<Option<u32>> {
    part.map(|n| {
        u32::try_from(n)
            .map_err(|_| wire::invalid_request("Part number must be a positive integer"))
    })
    .transpose()
}

/// The `Content-Range` of a partial answer.
fn content_range(view: &ObjectView) -> Option<String> {
    view.partial.then(|| {
        format!(
            "bytes {}-{}/{}",
            view.range.start,
            view.range.end.saturating_sub(1),
            view.info.size
        )
    })
}

/// Checksums are returned for whole-object reads when asked (`x-amz-checksum-mode: ENABLED`); a range's bytes
/// would not match them.
fn read_checksums(view: &ObjectView, mode: Option<&dto::ChecksumMode>) -> ChecksumFields {
    if wire::checksum_mode_enabled(mode) && !view.partial {
        ChecksumFields::of(view.info.checksum.as_ref())
    } else {
        ChecksumFields::default()
    }
}

/// GetObject: one range (or part) of an object, streamed.
pub(crate) async fn get_object(
    objects: &Objects,
    counters: &TableCounters,
    req: S3Request<dto::GetObjectInput>,
) -> S3Result<S3Response<dto::GetObjectOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let read = ReadRequest {
        range: byte_range(input.range.as_ref()),
        part_number: part_number(input.part_number)?,
        preconditions: wire::preconditions(
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        ),
    };
    let (view, stream) = objects
        .get_object(ctx.table_id()?, &key, &read)
        .await
        .map_err(|e| ctx.error(e))?;
    counters.bytes_out(ctx.table_id()?, view.range.end - view.range.start);
    let fields = read_checksums(&view, input.checksum_mode.as_ref());
    let info = &view.info;
    let header = |name: &str| info.attributes.headers.get(name).cloned();
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(info.encryption.as_ref());
    Ok(S3Response::new(dto::GetObjectOutput {
        body: Some(StreamingBlob::wrap(SyncBody(std::sync::Mutex::new(stream)))),
        accept_ranges: Some("bytes".to_string()),
        content_length: i64::try_from(view.range.end - view.range.start).ok(),
        content_range: content_range(&view),
        content_type: Some(
            info.attributes
                .content_type
                .clone()
                .unwrap_or_else(|| "binary/octet-stream".into()),
        ),
        cache_control: header("cache-control"),
        content_disposition: header("content-disposition"),
        content_encoding: header("content-encoding"),
        content_language: header("content-language"),
        expires: wire::expires(&info.attributes),
        metadata: wire::metadata(&info.attributes),
        e_tag: Some(wire::etag(&info.etag)),
        last_modified: Some(wire::timestamp(info.last_modified)),
        parts_count: info
            .parts_count
            .and_then(|n| i32::try_from(n).ok())
            .filter(|_| read.part_number.is_some()),
        checksum_crc32: fields.crc32,
        checksum_crc32c: fields.crc32c,
        checksum_crc64nvme: fields.crc64nvme,
        checksum_sha1: fields.sha1,
        checksum_sha256: fields.sha256,
        checksum_type: fields.kind,
        server_side_encryption,
        ssekms_key_id,
        ..Default::default()
    }))
}

/// HeadObject: what GetObject with the same headers would answer, without the bytes.
pub(crate) async fn head_object(
    objects: &Objects,
    req: S3Request<dto::HeadObjectInput>,
) -> S3Result<S3Response<dto::HeadObjectOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let read = ReadRequest {
        range: byte_range(input.range.as_ref()),
        part_number: part_number(input.part_number)?,
        preconditions: wire::preconditions(
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        ),
    };
    let view = objects
        .head_object(ctx.table_id()?, &key, &read)
        .await
        .map_err(|e| ctx.error(e))?;
    let fields = read_checksums(&view, input.checksum_mode.as_ref());
    let info = &view.info;
    let header = |name: &str| info.attributes.headers.get(name).cloned();
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(info.encryption.as_ref());
    Ok(S3Response::new(dto::HeadObjectOutput {
        accept_ranges: Some("bytes".to_string()),
        content_length: i64::try_from(view.range.end - view.range.start).ok(),
        content_range: content_range(&view),
        content_type: Some(
            info.attributes
                .content_type
                .clone()
                .unwrap_or_else(|| "binary/octet-stream".into()),
        ),
        cache_control: header("cache-control"),
        content_disposition: header("content-disposition"),
        content_encoding: header("content-encoding"),
        content_language: header("content-language"),
        expires: wire::expires(&info.attributes),
        metadata: wire::metadata(&info.attributes),
        e_tag: Some(wire::etag(&info.etag)),
        last_modified: Some(wire::timestamp(info.last_modified)),
        parts_count: info
            .parts_count
            .and_then(|n| i32::try_from(n).ok())
            .filter(|_| read.part_number.is_some()),
        checksum_crc32: fields.crc32,
        checksum_crc32c: fields.crc32c,
        checksum_crc64nvme: fields.crc64nvme,
        checksum_sha1: fields.sha1,
        checksum_sha256: fields.sha256,
        checksum_type: fields.kind,
        server_side_encryption,
        ssekms_key_id,
        ..Default::default()
    }))
}

/// DeleteObject: 204 whether or not the key existed.
pub(crate) async fn delete_object(
    objects: &Objects,
    req: S3Request<dto::DeleteObjectInput>,
) -> S3Result<S3Response<dto::DeleteObjectOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let key = ctx.key(&req.input.key)?;
    objects
        .delete_object(ctx.table_id()?, &key)
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(S3Response::new(dto::DeleteObjectOutput::default()))
}

/// DeleteObjects: up to 1000 keys, each reported (errors only in quiet mode).
pub(crate) async fn delete_objects(
    objects: &Objects,
    req: S3Request<dto::DeleteObjectsInput>,
) -> S3Result<S3Response<dto::DeleteObjectsOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let delete = req.input.delete;
    if delete.objects.len() > MAX_DELETE_KEYS {
        return Err(ctx.malformed_xml(format!(
            "The request may name at most {MAX_DELETE_KEYS} keys"
        )));
    }
    let quiet = delete.quiet.unwrap_or(false);
    let keys: Vec<String> = delete.objects.into_iter().map(|o| o.key).collect();
    let mut deleted = Vec::new();
    let mut errors = Vec::new();
    for (key, outcome) in objects.delete_objects(ctx.table_id()?, &keys).await {
        match outcome {
            Ok(()) if quiet => {}
            Ok(()) => deleted.push(dto::DeletedObject {
                key: Some(key),
                ..Default::default()
            }),
            Err(e) => {
                let e = ctx.error(e);
                errors.push(dto::Error {
                    code: Some(e.code().as_str().to_string()),
                    key: Some(key),
                    message: e.message().map(str::to_string),
                    version_id: None,
                });
            }
        }
    }
    Ok(S3Response::new(dto::DeleteObjectsOutput {
        deleted: (!deleted.is_empty()).then_some(deleted),
        errors: (!errors.is_empty()).then_some(errors),
        ..Default::default()
    }))
}

/// CopyObject: a whole object into this bucket, from any table the caller may read.
pub(crate) async fn copy_object(
    catalog: &Catalog,
    objects: &Objects,
    req: S3Request<dto::CopyObjectInput>,
) -> S3Result<S3Response<dto::CopyObjectOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let CopySource::Bucket {
        bucket,
        key: source_key,
        ..
    } = &input.copy_source
    else {
        return Err(wire::invalid_request(
            "Access point copy sources are not supported",
        ));
    };
    let source_table = ctx.resolve(catalog, bucket).await?;
    ctx.authorize(DataAction::GetTableData, &source_table)
        .await?;
    let source_key = ctx.key(source_key)?;
    let read = ReadRequest {
        preconditions: wire::preconditions(
            input.copy_source_if_match.as_ref(),
            input.copy_source_if_none_match.as_ref(),
            input.copy_source_if_modified_since.as_ref(),
            input.copy_source_if_unmodified_since.as_ref(),
        ),
        ..ReadRequest::default()
    };
    let replace = input.metadata_directive.as_ref().is_some_and(|d| {
        d.as_str()
            .eq_ignore_ascii_case(dto::MetadataDirective::REPLACE)
    });
    let attributes = replace.then(|| {
        ContentHeaders {
            content_type: input.content_type.as_ref(),
            cache_control: input.cache_control.as_ref(),
            content_disposition: input.content_disposition.as_ref(),
            content_encoding: input.content_encoding.as_ref(),
            content_language: input.content_language.as_ref(),
            expires: input.expires.as_ref(),
            metadata: input.metadata.as_ref(),
        }
        .attributes()
    });
    let requested = wire::requested_encryption(
        input.server_side_encryption.as_ref(),
        input.ssekms_key_id.as_ref(),
        input.sse_customer_algorithm.as_ref(),
    )?;
    let info: ObjectInfo = objects
        .copy_object(
            (source_table.table_id(), &source_key),
            (ctx.storage()?, &key),
            &read,
            attributes,
            PutCondition::Always,
            requested,
        )
        .await
        .map_err(|e| match e {
            // A failed source precondition is 412 for copies, even If-None-Match.
            ObjectError::NotModified => ctx.error(ObjectError::PreconditionFailed),
            other => ctx.error(other),
        })?;
    let fields = ChecksumFields::of(info.checksum.as_ref());
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(info.encryption.as_ref());
    Ok(S3Response::new(dto::CopyObjectOutput {
        server_side_encryption,
        ssekms_key_id,
        copy_object_result: Some(dto::CopyObjectResult {
            e_tag: Some(wire::etag(&info.etag)),
            last_modified: Some(wire::timestamp(info.last_modified)),
            checksum_crc32: fields.crc32,
            checksum_crc32c: fields.crc32c,
            checksum_crc64nvme: fields.crc64nvme,
            checksum_sha1: fields.sha1,
            checksum_sha256: fields.sha256,
            checksum_type: fields.kind,
        }),
        ..Default::default()
    }))
}

/// HeadBucket: 200 when the table exists and the caller may read it (checked before this runs).
pub(crate) async fn head_bucket(
    catalog: &Catalog,
    req: S3Request<dto::HeadBucketInput>,
) -> S3Result<S3Response<dto::HeadBucketOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    ctx.table()?;
    Ok(S3Response::new(dto::HeadBucketOutput {
        bucket_region: Some(catalog.config().region.clone()),
        ..Default::default()
    }))
}

/// GetBucketLocation: the server's region (empty for us-east-1, as S3 answers).
pub(crate) async fn get_bucket_location(
    catalog: &Catalog,
    req: S3Request<dto::GetBucketLocationInput>,
) -> S3Result<S3Response<dto::GetBucketLocationOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    ctx.table()?;
    let region = catalog.config().region.clone();
    Ok(S3Response::new(dto::GetBucketLocationOutput {
        location_constraint: (region != "us-east-1")
            .then(|| dto::BucketLocationConstraint::from(region)),
    }))
}

/// ListBuckets: table storage buckets are addressed, not listed; the answer is an empty list.
pub(crate) async fn list_buckets(
    req: S3Request<dto::ListBucketsInput>,
) -> S3Result<S3Response<dto::ListBucketsOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    Ok(S3Response::new(dto::ListBucketsOutput {
        buckets: Some(Vec::new()),
        owner: Some(dto::Owner {
            id: Some(ctx.principal.account_id.clone()),
            display_name: None,
        }),
        ..Default::default()
    }))
}

/// An object stream made `Sync` for s3s's body type: the stream is only ever polled through `&mut`, so the
/// mutex is never locked (`get_mut`).
struct SyncBody(std::sync::Mutex<ObjectStream>);

impl Stream for SyncBody {
    type Item = Result<bytes::Bytes, ObjectError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let stream = match self.get_mut().0.get_mut() {
            Ok(stream) => stream,
            Err(poisoned) => poisoned.into_inner(),
        };
        stream.as_mut().poll_next(cx)
    }
}
