//! Conversions between s3s's wire types and the object service's domain types: timestamps, ETags, checksum
//! headers and fields, stored content headers and user metadata, and request bodies with their integrity claims
//! (a `Content-MD5`, an `x-amz-checksum-*` header, or a checksum trailer announced in `x-amz-trailer`).

use std::collections::BTreeMap;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use http::HeaderMap;
use s3s::dto::{self, ETag, ETagCondition, StreamingBlob, Timestamp, TimestampFormat};
use s3s::{S3Error, S3ErrorCode, S3Result, TrailingHeaders};
use tablebay_objects::{
    Checksum, ChecksumAlgorithm, ChecksumClaim, ChecksumType, EtagCondition, ObjectAttributes,
    ObjectBody, ObjectEncryption, Preconditions, RequestedEncryption,
};

/// A stored time as an s3s timestamp.
pub(crate) fn timestamp(time: DateTime<Utc>) -> Timestamp {
    Timestamp::from(SystemTime::from(time))
}

/// An s3s timestamp as a UTC time (seconds precision is all HTTP dates carry).
pub(crate) fn utc(ts: &Timestamp) -> Option<DateTime<Utc>> {
    let odt = time::OffsetDateTime::from(ts.clone());
    DateTime::from_timestamp(odt.unix_timestamp(), odt.nanosecond())
}

/// An ETag for headers and XML (s3s adds the quotes).
pub(crate) fn etag(value: &str) -> ETag {
    ETag::Strong(value.to_string())
}

/// The conditions of an `If-Match` / `If-None-Match` header.
fn etag_condition(condition: &ETagCondition) -> EtagCondition {
    match condition {
        ETagCondition::Any => EtagCondition::Any,
        ETagCondition::ETag(tag) => EtagCondition::Etag(tag.value().to_string()),
    }
}

/// The preconditions of a GET or HEAD.
pub(crate) fn preconditions(
    if_match: Option<&ETagCondition>,
    if_none_match: Option<&ETagCondition>,
    if_modified_since: Option<&Timestamp>,
    if_unmodified_since: Option<&Timestamp>,
) -> Preconditions {
    Preconditions {
        if_match: if_match.map(etag_condition),
        if_none_match: if_none_match.map(etag_condition),
        if_modified_since: if_modified_since.and_then(utc),
        if_unmodified_since: if_unmodified_since.and_then(utc),
    }
}

/// The checksum fields of S3 outputs, filled from a stored checksum.
#[derive(Default)]
pub(crate) struct ChecksumFields {
    pub crc32: Option<String>,
    pub crc32c: Option<String>,
    pub crc64nvme: Option<String>,
    pub sha1: Option<String>,
    pub sha256: Option<String>,
    pub kind: Option<dto::ChecksumType>,
}

impl ChecksumFields {
    pub(crate) fn of(checksum: Option<&Checksum>) -> Self {
        let mut fields = Self::default();
        let Some(checksum) = checksum else {
            return fields;
        };
        let value = Some(checksum.value.clone());
        match checksum.algorithm {
            ChecksumAlgorithm::Crc32 => fields.crc32 = value,
            ChecksumAlgorithm::Crc32c => fields.crc32c = value,
            ChecksumAlgorithm::Crc64Nvme => fields.crc64nvme = value,
            ChecksumAlgorithm::Sha1 => fields.sha1 = value,
            ChecksumAlgorithm::Sha256 => fields.sha256 = value,
        }
        fields.kind = Some(checksum_type(checksum.kind));
        fields
    }
}

/// S3's checksum type value.
pub(crate) fn checksum_type(kind: ChecksumType) -> dto::ChecksumType {
    dto::ChecksumType::from_static(match kind {
        ChecksumType::FullObject => dto::ChecksumType::FULL_OBJECT,
        ChecksumType::Composite => dto::ChecksumType::COMPOSITE,
    })
}

/// S3's checksum algorithm value.
pub(crate) fn checksum_algorithm(algorithm: ChecksumAlgorithm) -> dto::ChecksumAlgorithm {
    dto::ChecksumAlgorithm::from(algorithm.as_str().to_string())
}

/// The header (and trailer) carrying a checksum value of `algorithm`: `x-amz-checksum-crc32`, ….
pub(crate) fn checksum_header(algorithm: ChecksumAlgorithm) -> &'static str {
    match algorithm {
        ChecksumAlgorithm::Crc32 => "x-amz-checksum-crc32",
        ChecksumAlgorithm::Crc32c => "x-amz-checksum-crc32c",
        ChecksumAlgorithm::Crc64Nvme => "x-amz-checksum-crc64nvme",
        ChecksumAlgorithm::Sha1 => "x-amz-checksum-sha1",
        ChecksumAlgorithm::Sha256 => "x-amz-checksum-sha256",
    }
}

/// The algorithm whose checksum header is `name` (any case).
fn algorithm_of_header(name: &str) -> Option<ChecksumAlgorithm> {
    ChecksumAlgorithm::ALL
        .into_iter()
        .find(|a| checksum_header(*a).eq_ignore_ascii_case(name.trim()))
}

/// The algorithm named by an s3s checksum-algorithm value.
pub(crate) fn algorithm_of(value: &dto::ChecksumAlgorithm) -> S3Result<ChecksumAlgorithm> {
    value.as_str().parse().map_err(|_| {
        invalid_request(format!(
            "Checksum algorithm {} is not supported",
            value.as_str()
        ))
    })
}

/// At most one `x-amz-checksum-*` value among an input's five checksum fields.
pub(crate) fn single_checksum(
    crc32: Option<&String>,
    crc32c: Option<&String>,
    crc64nvme: Option<&String>,
    sha1: Option<&String>,
    sha256: Option<&String>,
) -> S3Result<Option<(ChecksumAlgorithm, String)>> {
    let given: Vec<(ChecksumAlgorithm, &String)> = [
        (ChecksumAlgorithm::Crc32, crc32),
        (ChecksumAlgorithm::Crc32c, crc32c),
        (ChecksumAlgorithm::Crc64Nvme, crc64nvme),
        (ChecksumAlgorithm::Sha1, sha1),
        (ChecksumAlgorithm::Sha256, sha256),
    ]
    .into_iter()
    .filter_map(|(algorithm, value)| value.map(|v| (algorithm, v)))
    .collect();
    match given.as_slice() {
        [] => Ok(None),
        [(algorithm, value)] => Ok(Some((*algorithm, (*value).clone()))),
        _ => Err(invalid_request(
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
        )),
    }
}

/// `InvalidRequest` with a message.
pub(crate) fn invalid_request(message: impl Into<String>) -> S3Error {
    S3Error::with_message(S3ErrorCode::InvalidRequest, message.into())
}

/// The checksum a body claims: an `x-amz-checksum-*` header, else a checksum trailer announced in
/// `x-amz-trailer` (read from `trailers` once the body is consumed).
fn checksum_claim(
    header: Option<(ChecksumAlgorithm, String)>,
    headers: &HeaderMap,
    trailers: Option<TrailingHeaders>,
) -> S3Result<Option<(ChecksumAlgorithm, ChecksumClaim)>> {
    if let Some((algorithm, value)) = header {
        return Ok(Some((algorithm, ChecksumClaim::Header(value))));
    }
    let Some(announced) = headers.get("x-amz-trailer").and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let Some(algorithm) = announced.split(',').find_map(algorithm_of_header) else {
        return Ok(None);
    };
    let Some(trailers) = trailers else {
        return Err(invalid_request(
            "x-amz-trailer is only supported with an aws-chunked body",
        ));
    };
    let read = move || {
        trailers
            .read(|map| {
                map.get(checksum_header(algorithm))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            })
            .flatten()
    };
    Ok(Some((algorithm, ChecksumClaim::Trailer(Box::new(read)))))
}

/// A request body and its integrity claims.
pub(crate) fn object_body(
    blob: Option<StreamingBlob>,
    content_length: Option<i64>,
    content_md5: Option<String>,
    header_checksum: Option<(ChecksumAlgorithm, String)>,
    headers: &HeaderMap,
    trailers: Option<TrailingHeaders>,
) -> S3Result<ObjectBody> {
    let stream = match blob {
        Some(blob) => blob.boxed(),
        None => futures::stream::empty().boxed(),
    };
    // For an aws-chunked body the decoded length is the object's; s3s checks neither against the chunks.
    let decoded = headers.get("x-amz-decoded-content-length").map(|v| {
        v.to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| invalid_request("x-amz-decoded-content-length is not a number"))
    });
    let content_length = match decoded {
        Some(decoded) => Some(decoded?),
        None => content_length.and_then(|n| u64::try_from(n).ok()),
    };
    Ok(ObjectBody {
        stream,
        content_length,
        content_md5,
        checksum: checksum_claim(header_checksum, headers, trailers)?,
    })
}

/// The content headers an upload stores. `aws-chunked` is a transfer detail of the upload, not an encoding of the
/// object (S3 drops it too).
pub(crate) struct ContentHeaders<'a> {
    pub content_type: Option<&'a String>,
    pub cache_control: Option<&'a String>,
    pub content_disposition: Option<&'a String>,
    pub content_encoding: Option<&'a String>,
    pub content_language: Option<&'a String>,
    pub expires: Option<&'a Timestamp>,
    pub metadata: Option<&'a dto::Metadata>,
}

impl ContentHeaders<'_> {
    pub(crate) fn attributes(&self) -> ObjectAttributes {
        let mut headers = BTreeMap::new();
        let mut put = |name: &str, value: Option<&String>| {
            if let Some(value) = value.filter(|v| !v.is_empty()) {
                headers.insert(name.to_string(), value.clone());
            }
        };
        put("cache-control", self.cache_control);
        put("content-disposition", self.content_disposition);
        put("content-language", self.content_language);
        let encoding = self.content_encoding.map(|value| {
            value
                .split(',')
                .map(str::trim)
                .filter(|e| !e.eq_ignore_ascii_case("aws-chunked"))
                .collect::<Vec<_>>()
                .join(",")
        });
        put("content-encoding", encoding.as_ref());
        let expires = self.expires.and_then(|ts| {
            let mut buf = Vec::new();
            ts.format(TimestampFormat::HttpDate, &mut buf).ok()?;
            String::from_utf8(buf).ok()
        });
        put("expires", expires.as_ref());
        ObjectAttributes {
            content_type: self.content_type.filter(|v| !v.is_empty()).cloned(),
            headers,
            user_metadata: self
                .metadata
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
        }
    }
}

/// The stored `Expires` as a timestamp.
pub(crate) fn expires(attributes: &ObjectAttributes) -> Option<Timestamp> {
    attributes
        .headers
        .get("expires")
        .and_then(|v| Timestamp::parse(TimestampFormat::HttpDate, v).ok())
}

/// The stored user metadata as s3s's map.
pub(crate) fn metadata(attributes: &ObjectAttributes) -> Option<dto::Metadata> {
    (!attributes.user_metadata.is_empty()).then(|| {
        attributes
            .user_metadata
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    })
}

/// Whether `x-amz-checksum-mode: ENABLED` asks for checksums in the answer.
pub(crate) fn checksum_mode_enabled(mode: Option<&dto::ChecksumMode>) -> bool {
    mode.is_some_and(|m| m.as_str().eq_ignore_ascii_case(dto::ChecksumMode::ENABLED))
}

/// S3's name of the algorithm that encrypts under a master key: `AES256` (the server's managed key) or
/// `aws:kms`.
pub(crate) fn sse_name(encryption: &ObjectEncryption) -> &'static str {
    match encryption {
        ObjectEncryption::Managed => SSE_AES256,
        ObjectEncryption::Kms(_) => SSE_KMS,
    }
}

/// S3's name of the algorithm a write asks for.
pub(crate) fn requested_sse_name(requested: &RequestedEncryption) -> &'static str {
    match requested {
        RequestedEncryption::Managed => SSE_AES256,
        RequestedEncryption::Kms { .. } => SSE_KMS,
    }
}

const SSE_AES256: &str = "AES256";
const SSE_KMS: &str = "aws:kms";

/// The server-side encryption headers of a write: what it asks for (checked against the table's setting by the
/// object service). SSE-C (customer-provided keys) is refused: a table's data is encrypted with its own keys.
pub(crate) fn requested_encryption(
    algorithm: Option<&dto::ServerSideEncryption>,
    kms_key_id: Option<&String>,
    customer_algorithm: Option<&String>,
) -> S3Result<Option<RequestedEncryption>> {
    let invalid = |message: String| S3Error::with_message(S3ErrorCode::InvalidArgument, message);
    if customer_algorithm.is_some() {
        return Err(invalid(
            "Server-side encryption with customer-provided keys is not supported by table buckets"
                .into(),
        ));
    }
    let Some(algorithm) = algorithm else {
        return match kms_key_id {
            None => Ok(None),
            Some(_) => Err(invalid(
                "x-amz-server-side-encryption-aws-kms-key-id requires x-amz-server-side-encryption: aws:kms"
                    .into(),
            )),
        };
    };
    match (algorithm.as_str(), kms_key_id) {
        (SSE_AES256, None) => Ok(Some(RequestedEncryption::Managed)),
        (SSE_AES256, Some(_)) => Err(invalid(
            "Server Side Encryption with AWS KMS managed key requires HTTP header \
             x-amz-server-side-encryption : aws:kms"
                .into(),
        )),
        (SSE_KMS, key_id) => Ok(Some(RequestedEncryption::Kms {
            key_id: key_id.cloned(),
        })),
        (other, _) => Err(invalid(format!(
            "The server-side encryption {other:?} is not valid (AES256 or aws:kms)"
        ))),
    }
}

/// The `x-amz-server-side-encryption` and KMS key id headers of an answer about stored data.
pub(crate) fn encryption_headers(
    encryption: Option<&ObjectEncryption>,
) -> (Option<dto::ServerSideEncryption>, Option<String>) {
    match encryption {
        None => (None, None),
        Some(e) => (
            Some(dto::ServerSideEncryption::from(sse_name(e).to_string())),
            match e {
                ObjectEncryption::Managed => None,
                ObjectEncryption::Kms(arn) => Some(arn.clone()),
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_checksum_rejects_two() {
        let v = "AAAAAA==".to_string();
        assert_eq!(single_checksum(None, None, None, None, None).unwrap(), None);
        assert_eq!(
            single_checksum(Some(&v), None, None, None, None).unwrap(),
            Some((ChecksumAlgorithm::Crc32, v.clone()))
        );
        assert!(single_checksum(Some(&v), Some(&v), None, None, None).is_err());
    }

    #[test]
    fn checksum_headers() {
        for a in ChecksumAlgorithm::ALL {
            assert_eq!(
                algorithm_of_header(&checksum_header(a).to_uppercase()),
                Some(a)
            );
        }
        assert_eq!(algorithm_of_header("x-amz-checksum-md5"), None);
    }

    #[test]
    fn requested_encryptions() {
        let sse = |s: &str| dto::ServerSideEncryption::from(s.to_string());
        let key = "arn:aws:kms:us-east-1:111122223333:key/k".to_string();
        assert_eq!(requested_encryption(None, None, None).unwrap(), None);
        assert_eq!(
            requested_encryption(Some(&sse("AES256")), None, None).unwrap(),
            Some(RequestedEncryption::Managed)
        );
        assert_eq!(
            requested_encryption(Some(&sse("aws:kms")), Some(&key), None).unwrap(),
            Some(RequestedEncryption::Kms {
                key_id: Some(key.clone())
            })
        );
        for (algorithm, key_id, customer) in [
            (Some(sse("AES256")), Some(&key), None),
            (None, Some(&key), None),
            (Some(sse("aes256")), None, None),
            (None, None, Some(&key)),
        ] {
            let refused = requested_encryption(algorithm.as_ref(), key_id, customer).unwrap_err();
            assert_eq!(refused.code().as_str(), "InvalidArgument");
        }
        assert_eq!(
            encryption_headers(Some(&ObjectEncryption::Kms(key.clone()))).1,
            Some(key)
        );
        assert_eq!(encryption_headers(Some(&ObjectEncryption::Managed)).1, None);
    }

    #[test]
    fn trailer_claims() {
        let mut headers = HeaderMap::new();
        assert!(checksum_claim(None, &headers, None).unwrap().is_none());
        headers.insert("x-amz-trailer", "x-amz-checksum-crc32c".parse().unwrap());
        assert!(
            checksum_claim(None, &headers, None).is_err(),
            "a trailer needs an aws-chunked body"
        );
        let header = Some((ChecksumAlgorithm::Sha1, "x".to_string()));
        let (algorithm, claim) = checksum_claim(header, &headers, None).unwrap().unwrap();
        assert_eq!(algorithm, ChecksumAlgorithm::Sha1);
        assert!(matches!(claim, ChecksumClaim::Header(_)));
    }

    #[test]
    fn aws_chunked_is_not_stored_as_an_encoding() {
        let gzip = "gzip,aws-chunked".to_string();
        let chunked = "aws-chunked".to_string();
        let attrs = |enc| {
            ContentHeaders {
                content_type: None,
                cache_control: None,
                content_disposition: None,
                content_encoding: Some(enc),
                content_language: None,
                expires: None,
                metadata: None,
            }
            .attributes()
        };
        assert_eq!(
            attrs(&gzip)
                .headers
                .get("content-encoding")
                .map(String::as_str),
            Some("gzip")
        );
        assert_eq!(attrs(&chunked).headers.get("content-encoding"), None);
    }

    #[test]
    fn timestamps_round_trip() {
        let t = DateTime::from_timestamp(1_760_000_000, 0).unwrap();
        assert_eq!(utc(&timestamp(t)), Some(t));
    }
}
