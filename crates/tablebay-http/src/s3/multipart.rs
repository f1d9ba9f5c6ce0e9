//! Multipart operations: CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload,
//! ListParts, ListMultipartUploads.

use s3s::dto;
use s3s::{S3Request, S3Response, S3Result};
use tablebay_objects::{
    ChecksumAlgorithm, CompleteRequest, CompletedPart, MAX_LIST_PARTS, Objects, Upload,
    UploadListRequest,
};

use super::objects::put_condition;
use super::service::Ctx;
use super::wire::{self, ChecksumFields, ContentHeaders};

/// Most parts CompleteMultipartUpload may list.
const MAX_COMPLETE_PARTS: usize = 10_000;

/// CreateMultipartUpload.
pub(crate) async fn create(
    objects: &Objects,
    req: S3Request<dto::CreateMultipartUploadInput>,
) -> S3Result<S3Response<dto::CreateMultipartUploadOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let attributes = ContentHeaders {
        content_type: input.content_type.as_ref(),
        cache_control: input.cache_control.as_ref(),
        content_disposition: input.content_disposition.as_ref(),
        content_encoding: input.content_encoding.as_ref(),
        content_language: input.content_language.as_ref(),
        expires: input.expires.as_ref(),
        metadata: input.metadata.as_ref(),
    }
    .attributes();
    let algorithm = input
        .checksum_algorithm
        .as_ref()
        .map(wire::algorithm_of)
        .transpose()?;
    let kind = input
        .checksum_type
        .as_ref()
        .map(|t| t.as_str().parse())
        .transpose()
        .map_err(|e| ctx.error(e))?;
    if algorithm.is_none() && kind.is_some() {
        return Err(wire::invalid_request(
            "x-amz-checksum-type requires x-amz-checksum-algorithm",
        ));
    }
    let checksum = algorithm.map(|a| (a, kind));
    let encryption = wire::requested_encryption(
        input.server_side_encryption.as_ref(),
        input.ssekms_key_id.as_ref(),
        input.sse_customer_algorithm.as_ref(),
    )?;
    let upload = objects
        .create_upload(
            ctx.storage()?,
            &key,
            attributes,
            checksum,
            encryption,
            &ctx.principal.arn,
        )
        .await
        .map_err(|e| ctx.error(e))?;
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(upload.encryption.as_ref());
    Ok(S3Response::new(dto::CreateMultipartUploadOutput {
        server_side_encryption,
        ssekms_key_id,
        bucket: Some(input.bucket),
        key: Some(input.key),
        upload_id: Some(upload.upload_id),
        checksum_algorithm: upload.checksum.map(|(a, _)| wire::checksum_algorithm(a)),
        checksum_type: upload.checksum.map(|(_, t)| wire::checksum_type(t)),
        ..Default::default()
    }))
}

fn part_number(n: i32) -> S3Result<u32> {
    u32::try_from(n).map_err(|_| {
        wire::invalid_request("Part number must be an integer between 1 and 10000, inclusive")
    })
}

/// UploadPart.
pub(crate) async fn upload_part(
    objects: &Objects,
    counters: &tablebay_catalog::TableCounters,
    req: S3Request<dto::UploadPartInput>,
) -> S3Result<S3Response<dto::UploadPartOutput>> {
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
    let body = wire::object_body(
        input.body,
        input.content_length,
        input.content_md5,
        header_checksum,
        &req.headers,
        req.trailing_headers,
    )?;
    let part = objects
        .upload_part(
            ctx.storage()?,
            &key,
            &input.upload_id,
            part_number(input.part_number)?,
            body,
        )
        .await
        .map_err(|e| ctx.error(e))?;
    counters.bytes_in(ctx.table_id()?, part.size);
    let fields = ChecksumFields::of(part.checksum.as_ref());
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(part.encryption.as_ref());
    Ok(S3Response::new(dto::UploadPartOutput {
        server_side_encryption,
        ssekms_key_id,
        e_tag: Some(wire::etag(&part.etag)),
        checksum_crc32: fields.crc32,
        checksum_crc32c: fields.crc32c,
        checksum_crc64nvme: fields.crc64nvme,
        checksum_sha1: fields.sha1,
        checksum_sha256: fields.sha256,
        ..Default::default()
    }))
}

/// CompleteMultipartUpload.
pub(crate) async fn complete(
    objects: &Objects,
    req: S3Request<dto::CompleteMultipartUploadInput>,
) -> S3Result<S3Response<dto::CompleteMultipartUploadOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let listed = input
        .multipart_upload
        .and_then(|m| m.parts)
        .unwrap_or_default();
    if listed.len() > MAX_COMPLETE_PARTS {
        return Err(ctx.malformed_xml(format!("At most {MAX_COMPLETE_PARTS} parts may be listed")));
    }
    let mut parts = Vec::with_capacity(listed.len());
    for part in listed {
        let (Some(number), Some(etag)) = (part.part_number, part.e_tag) else {
            return Err(ctx.malformed_xml("Each part needs a PartNumber and an ETag"));
        };
        let checksum = wire::single_checksum(
            part.checksum_crc32.as_ref(),
            part.checksum_crc32c.as_ref(),
            part.checksum_crc64nvme.as_ref(),
            part.checksum_sha1.as_ref(),
            part.checksum_sha256.as_ref(),
        )?;
        parts.push(CompletedPart {
            part_number: part_number(number)?,
            etag: etag.into_value(),
            checksum,
        });
    }
    let whole: Option<(ChecksumAlgorithm, String)> = wire::single_checksum(
        input.checksum_crc32.as_ref(),
        input.checksum_crc32c.as_ref(),
        input.checksum_crc64nvme.as_ref(),
        input.checksum_sha1.as_ref(),
        input.checksum_sha256.as_ref(),
    )?;
    let request = CompleteRequest {
        parts,
        checksum: whole,
        condition: put_condition(input.if_match.as_ref(), input.if_none_match.as_ref()),
    };
    let info = objects
        .complete_upload(ctx.table_id()?, &key, &input.upload_id, request)
        .await
        .map_err(|e| ctx.error(e))?;
    let fields = ChecksumFields::of(info.checksum.as_ref());
    let (server_side_encryption, ssekms_key_id) =
        wire::encryption_headers(info.encryption.as_ref());
    Ok(S3Response::new(dto::CompleteMultipartUploadOutput {
        server_side_encryption,
        ssekms_key_id,
        bucket: Some(input.bucket.clone()),
        key: Some(input.key.clone()),
        location: Some(format!("/{}/{}", input.bucket, input.key)),
        e_tag: Some(wire::etag(&info.etag)),
        checksum_crc32: fields.crc32,
        checksum_crc32c: fields.crc32c,
        checksum_crc64nvme: fields.crc64nvme,
        checksum_sha1: fields.sha1,
        checksum_sha256: fields.sha256,
        checksum_type: fields.kind,
        ..Default::default()
    }))
}

/// AbortMultipartUpload.
pub(crate) async fn abort(
    objects: &Objects,
    req: S3Request<dto::AbortMultipartUploadInput>,
) -> S3Result<S3Response<dto::AbortMultipartUploadOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let key = ctx.key(&req.input.key)?;
    objects
        .abort_upload(ctx.table_id()?, &key, &req.input.upload_id)
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(S3Response::new(dto::AbortMultipartUploadOutput::default()))
}

fn initiator(upload: &Upload) -> dto::Initiator {
    dto::Initiator {
        id: Some(upload.initiator.clone()),
        display_name: Some(upload.initiator.clone()),
    }
}

/// ListParts.
pub(crate) async fn list_parts(
    objects: &Objects,
    req: S3Request<dto::ListPartsInput>,
) -> S3Result<S3Response<dto::ListPartsOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let key = ctx.key(&input.key)?;
    let marker = input
        .part_number_marker
        .map(part_number)
        .transpose()?
        .unwrap_or(0);
    let max = input
        .max_parts
        .map(part_number)
        .transpose()?
        .unwrap_or(MAX_LIST_PARTS);
    let listing = objects
        .list_parts(ctx.table_id()?, &key, &input.upload_id, marker, max)
        .await
        .map_err(|e| ctx.error(e))?;
    let parts = listing
        .parts
        .iter()
        .map(|p| {
            let fields = ChecksumFields::of(p.checksum.as_ref());
            dto::Part {
                part_number: i32::try_from(p.part_number).ok(),
                size: i64::try_from(p.size).ok(),
                e_tag: Some(wire::etag(&p.etag)),
                last_modified: Some(wire::timestamp(p.last_modified)),
                checksum_crc32: fields.crc32,
                checksum_crc32c: fields.crc32c,
                checksum_crc64nvme: fields.crc64nvme,
                checksum_sha1: fields.sha1,
                checksum_sha256: fields.sha256,
            }
        })
        .collect();
    let upload = listing.upload.as_ref();
    Ok(S3Response::new(dto::ListPartsOutput {
        bucket: Some(input.bucket),
        key: Some(input.key),
        upload_id: Some(input.upload_id),
        parts: Some(parts),
        is_truncated: Some(listing.truncated),
        part_number_marker: i32::try_from(marker).ok(),
        next_part_number_marker: listing.next_marker.and_then(|n| i32::try_from(n).ok()),
        max_parts: i32::try_from(max.min(MAX_LIST_PARTS)).ok(),
        initiator: upload.map(initiator),
        owner: Some(dto::Owner {
            id: Some(ctx.principal.account_id.clone()),
            display_name: None,
        }),
        storage_class: Some(dto::StorageClass::from_static(dto::StorageClass::STANDARD)),
        checksum_algorithm: upload
            .and_then(|u| u.checksum)
            .map(|(a, _)| wire::checksum_algorithm(a)),
        checksum_type: upload
            .and_then(|u| u.checksum)
            .map(|(_, t)| wire::checksum_type(t)),
        ..Default::default()
    }))
}

/// ListMultipartUploads.
pub(crate) async fn list_uploads(
    objects: &Objects,
    req: S3Request<dto::ListMultipartUploadsInput>,
) -> S3Result<S3Response<dto::ListMultipartUploadsOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let max = input
        .max_uploads
        .map(|n| {
            u32::try_from(n)
                .map_err(|_| wire::invalid_request("max-uploads must be a non-negative integer"))
        })
        .transpose()?
        .unwrap_or(MAX_LIST_PARTS);
    let request = UploadListRequest {
        prefix: input.prefix.clone().unwrap_or_default(),
        key_marker: input.key_marker.clone().filter(|m| !m.is_empty()),
        upload_id_marker: input.upload_id_marker.clone().filter(|m| !m.is_empty()),
        max_uploads: max,
    };
    let listing = objects
        .list_uploads(ctx.table_id()?, &request)
        .await
        .map_err(|e| ctx.error(e))?;
    let uploads = listing
        .uploads
        .iter()
        .map(|u| dto::MultipartUpload {
            key: Some(u.key.clone()),
            upload_id: Some(u.upload_id.clone()),
            initiated: Some(wire::timestamp(u.initiated_at)),
            initiator: Some(initiator(u)),
            owner: Some(dto::Owner {
                id: Some(ctx.principal.account_id.clone()),
                display_name: None,
            }),
            storage_class: Some(dto::StorageClass::from_static(dto::StorageClass::STANDARD)),
            checksum_algorithm: u.checksum.map(|(a, _)| wire::checksum_algorithm(a)),
            checksum_type: u.checksum.map(|(_, t)| wire::checksum_type(t)),
        })
        .collect();
    let (next_key, next_upload) = listing.next_marker.unzip();
    Ok(S3Response::new(dto::ListMultipartUploadsOutput {
        bucket: Some(input.bucket),
        prefix: input.prefix,
        key_marker: input.key_marker,
        upload_id_marker: input.upload_id_marker,
        next_key_marker: next_key,
        next_upload_id_marker: next_upload,
        max_uploads: i32::try_from(max.min(MAX_LIST_PARTS)).ok(),
        is_truncated: Some(listing.truncated),
        uploads: Some(uploads),
        ..Default::default()
    }))
}
