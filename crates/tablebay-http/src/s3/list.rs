//! ListObjectsV2 and ListObjects (v1). Continuation tokens are the last entry of the page, base64url-encoded (opaque
//! to clients, stable across servers). With `encoding-type=url` (boto3's default) keys and prefixes in the answer
//! are percent-encoded.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use s3s::dto;
use s3s::{S3Request, S3Response, S3Result};
use tablebay_objects::{ListRequest, Listing, MAX_LIST_KEYS, ObjectError, ObjectInfo, Objects};

use super::service::Ctx;
use super::wire;

/// What `encoding-type=url` leaves unencoded: RFC 3986 unreserved characters and `/`.
const KEY_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Encodes keys when the client asked for `encoding-type=url`.
struct Encoder(bool);

impl Encoder {
    fn new(encoding: Option<&dto::EncodingType>) -> Self {
        Self(encoding.is_some_and(|e| e.as_str().eq_ignore_ascii_case(dto::EncodingType::URL)))
    }

    fn apply(&self, s: &str) -> String {
        if self.0 {
            utf8_percent_encode(s, KEY_ENCODE).to_string()
        } else {
            s.to_string()
        }
    }

    fn opt(&self, s: Option<&String>) -> Option<String> {
        s.map(|s| self.apply(s))
    }
}

fn max_keys(max: Option<i32>) -> S3Result<u32> {
    match max {
        None => Ok(MAX_LIST_KEYS),
        Some(n) => u32::try_from(n)
            .map_err(|_| wire::invalid_request("max-keys must be a non-negative integer")),
    }
}

fn entry(info: &ObjectInfo, encoder: &Encoder) -> dto::Object {
    dto::Object {
        key: Some(encoder.apply(&info.key)),
        size: i64::try_from(info.size).ok(),
        e_tag: Some(wire::etag(&info.etag)),
        last_modified: Some(wire::timestamp(info.last_modified)),
        storage_class: Some(dto::ObjectStorageClass::from_static(
            dto::ObjectStorageClass::STANDARD,
        )),
        checksum_algorithm: info
            .checksum
            .as_ref()
            .map(|c| vec![wire::checksum_algorithm(c.algorithm)]),
        checksum_type: info.checksum.as_ref().map(|c| wire::checksum_type(c.kind)),
        ..Default::default()
    }
}

fn entries(
    listing: &Listing,
    encoder: &Encoder,
) -> (Option<Vec<dto::Object>>, Option<Vec<dto::CommonPrefix>>) {
    let objects = listing
        .objects
        .iter()
        .map(|info| entry(info, encoder))
        .collect::<Vec<_>>();
    let prefixes = listing
        .common_prefixes
        .iter()
        .map(|p| dto::CommonPrefix {
            prefix: Some(encoder.apply(p)),
        })
        .collect::<Vec<_>>();
    (Some(objects), (!prefixes.is_empty()).then_some(prefixes))
}

/// ListObjectsV2.
pub(crate) async fn list_objects_v2(
    objects: &Objects,
    req: S3Request<dto::ListObjectsV2Input>,
) -> S3Result<S3Response<dto::ListObjectsV2Output>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let after = match input.continuation_token.as_deref() {
        Some(token) => Some(decode_token(token).map_err(|e| ctx.error(e))?),
        None => input.start_after.clone(),
    };
    let request = ListRequest {
        prefix: input.prefix.clone().unwrap_or_default(),
        delimiter: input.delimiter.clone(),
        after,
        max_keys: max_keys(input.max_keys)?,
    };
    let listing = objects
        .list_objects(ctx.table_id()?, &request)
        .await
        .map_err(|e| ctx.error(e))?;
    let encoder = Encoder::new(input.encoding_type.as_ref());
    let (contents, common_prefixes) = entries(&listing, &encoder);
    let key_count = listing.objects.len() + listing.common_prefixes.len();
    Ok(S3Response::new(dto::ListObjectsV2Output {
        name: Some(input.bucket),
        prefix: Some(encoder.apply(&request.prefix)),
        delimiter: encoder.opt(input.delimiter.as_ref()),
        start_after: encoder.opt(input.start_after.as_ref()),
        max_keys: Some(i32::try_from(request.max_keys).unwrap_or(i32::MAX)),
        key_count: i32::try_from(key_count).ok(),
        continuation_token: input.continuation_token,
        next_continuation_token: listing.next_after.as_deref().map(encode_token),
        is_truncated: Some(listing.truncated),
        encoding_type: input.encoding_type,
        contents,
        common_prefixes,
        ..Default::default()
    }))
}

/// ListObjects (v1).
pub(crate) async fn list_objects(
    objects: &Objects,
    req: S3Request<dto::ListObjectsInput>,
) -> S3Result<S3Response<dto::ListObjectsOutput>> {
    let ctx = Ctx::of(&req.extensions)?;
    let input = req.input;
    let request = ListRequest {
        prefix: input.prefix.clone().unwrap_or_default(),
        delimiter: input.delimiter.clone(),
        after: input.marker.clone().filter(|m| !m.is_empty()),
        max_keys: max_keys(input.max_keys)?,
    };
    let listing = objects
        .list_objects(ctx.table_id()?, &request)
        .await
        .map_err(|e| ctx.error(e))?;
    let encoder = Encoder::new(input.encoding_type.as_ref());
    let (contents, common_prefixes) = entries(&listing, &encoder);
    Ok(S3Response::new(dto::ListObjectsOutput {
        name: Some(input.bucket),
        prefix: Some(encoder.apply(&request.prefix)),
        delimiter: encoder.opt(input.delimiter.as_ref()),
        marker: Some(encoder.apply(input.marker.as_deref().unwrap_or_default())),
        next_marker: encoder.opt(listing.next_after.as_ref()),
        max_keys: Some(i32::try_from(request.max_keys).unwrap_or(i32::MAX)),
        is_truncated: Some(listing.truncated),
        encoding_type: input.encoding_type,
        contents,
        common_prefixes,
        ..Default::default()
    }))
}

fn encode_token(after: &str) -> String {
    URL_SAFE_NO_PAD.encode(after.as_bytes())
}

fn decode_token(token: &str) -> Result<String, ObjectError> {
    URL_SAFE_NO_PAD
        .decode(token.trim())
        .ok()
        .and_then(|raw| String::from_utf8(raw).ok())
        .ok_or_else(|| {
            ObjectError::Invalid("The continuation token provided is incorrect".to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for key in ["a", "dir/sub/", "ünï cödé+%/x"] {
            assert_eq!(decode_token(&encode_token(key)).unwrap(), key);
        }
        assert!(decode_token("not base64 !").is_err());
    }

    #[test]
    fn url_encoding() {
        let on = Encoder(true);
        assert_eq!(on.apply("a b/c+d%e~f.g-h_i"), "a%20b/c%2Bd%25e~f.g-h_i");
        assert_eq!(on.apply("ü"), "%C3%BC");
        assert_eq!(Encoder(false).apply("a b"), "a b");
    }
}
