//! The S3 surface's errors: every object-service outcome mapped to S3's XML error code, status and message, in
//! one exhaustive match (a new `ObjectError` variant does not compile until it has a code), likewise the catalog's
//! outcomes of resolving a bucket, with the request id in the body. 5xx answers hide their cause behind a logged
//! error id. S3's wording lives here only: the services below name what happened.

use http::StatusCode;
use s3s::{S3Error, S3ErrorCode};
use tablebay_catalog::CatalogError;
use tablebay_objects::{ObjectEncryption, ObjectError, RequestedEncryption};

use super::chunked::MISSING_FINAL_CHUNK;
use super::router::RequestContext;
use super::wire::{checksum_header, requested_sse_name, sse_name};
use crate::BODY_TIMEOUT;

/// `ObjectError` → `S3Error`, with the request's id.
pub(crate) fn s3_error(err: ObjectError, request: Option<&RequestContext>) -> S3Error {
    with_request_id(object_error(err), request)
}

/// A failure to resolve a bucket to its table (`CatalogError`) → `S3Error`, with the request's id.
pub(crate) fn catalog_error(err: CatalogError, request: Option<&RequestContext>) -> S3Error {
    let message = err.to_string();
    let out = match err {
        CatalogError::NotFound(_) => return no_such_bucket(request),
        CatalogError::Invalid(_) => S3Error::with_message(S3ErrorCode::InvalidArgument, message),
        CatalogError::Denied(_) => S3Error::with_message(S3ErrorCode::AccessDenied, message),
        CatalogError::Conflict(_) | CatalogError::AlreadyExists(_) => {
            S3Error::with_message(S3ErrorCode::OperationAborted, message)
        }
        CatalogError::Internal(_) => internal(&message),
        CatalogError::Store(source) => internal(&err_chain(&message, Some(&source))),
    };
    with_request_id(out, request)
}

/// `NoSuchBucket`: the name is not the storage bucket of an existing table.
pub(crate) fn no_such_bucket(request: Option<&RequestContext>) -> S3Error {
    with_request_id(
        S3Error::with_message(
            S3ErrorCode::NoSuchBucket,
            "The specified bucket does not exist",
        ),
        request,
    )
}

/// `MalformedXML` (400) with a message: an XML body S3 would refuse.
pub(crate) fn malformed_xml(
    message: impl Into<String>,
    request: Option<&RequestContext>,
) -> S3Error {
    with_request_id(
        S3Error::with_message(S3ErrorCode::MalformedXML, message.into()),
        request,
    )
}

fn with_request_id(mut err: S3Error, request: Option<&RequestContext>) -> S3Error {
    if let Some(request) = request {
        err.set_request_id(request.request_id.to_string());
    }
    err
}

/// S3's code, status and message for each object-service outcome.
fn object_error(err: ObjectError) -> S3Error {
    use S3ErrorCode as Code;
    let error = |code: Code, message: String| S3Error::with_message(code, message);
    match err {
        ObjectError::ObjectNotFound => error(Code::NoSuchKey, "The specified key does not exist.".into()),
        ObjectError::UploadNotFound => error(
            Code::NoSuchUpload,
            "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart \
             upload might have been aborted or completed."
                .into(),
        ),
        ObjectError::Invalid(message) => error(Code::InvalidArgument, message),
        ObjectError::MalformedChecksum(algorithm) => error(
            Code::InvalidArgument,
            format!("Value for {} header is invalid.", checksum_header(algorithm)),
        ),
        ObjectError::MalformedChecksumTrailer(algorithm) => error(
            Code::InvalidArgument,
            format!("Value for {} is invalid.", checksum_header(algorithm)),
        ),
        ObjectError::MissingChecksumTrailer(algorithm) => error(
            Code::InvalidArgument,
            format!(
                "The {} trailer was declared but not sent",
                checksum_header(algorithm)
            ),
        ),
        ObjectError::ChecksumAlgorithmMismatch { expected, got } => error(
            Code::InvalidArgument,
            format!(
                "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
                expected.as_str().to_lowercase(),
                got.as_str().to_lowercase()
            ),
        ),
        ObjectError::UnsupportedChecksumType { algorithm, kind } => error(
            Code::InvalidArgument,
            format!(
                "The {} checksum type cannot be used with the {algorithm} algorithm.",
                kind.as_str()
            ),
        ),
        ObjectError::RangeAndPart => error(
            Code::InvalidArgument,
            "Cannot specify both Range header and partNumber".into(),
        ),
        ObjectError::InvalidRange => error(
            Code::InvalidRange,
            "The requested range is not satisfiable".into(),
        ),
        ObjectError::PreconditionFailed => error(
            Code::PreconditionFailed,
            "At least one of the pre-conditions you specified did not hold".into(),
        ),
        ObjectError::NotModified => S3Error::new(Code::NotModified),
        ObjectError::MalformedMd5 => error(
            Code::InvalidDigest,
            "The Content-MD5 you specified is not valid.".into(),
        ),
        ObjectError::Md5Mismatch => error(
            Code::BadDigest,
            "The Content-MD5 you specified did not match what we received.".into(),
        ),
        ObjectError::ChecksumMismatch(algorithm) => error(
            Code::BadDigest,
            format!("The {algorithm} you specified did not match the calculated checksum."),
        ),
        ObjectError::TooLarge(max) => error(
            Code::EntityTooLarge,
            format!("Your proposed upload exceeds the maximum allowed size of {max} bytes"),
        ),
        ObjectError::PartTooSmall => error(
            Code::EntityTooSmall,
            "Your proposed upload is smaller than the minimum allowed size".into(),
        ),
        ObjectError::LengthMismatch => error(
            Code::IncompleteBody,
            "You did not provide the number of bytes specified by the Content-Length HTTP header.".into(),
        ),
        ObjectError::NoParts => error(
            Code::MalformedXML,
            "You must specify at least one part".into(),
        ),
        ObjectError::PartsOutOfOrder => error(
            Code::InvalidPartOrder,
            "The list of parts was not in ascending order. Parts must be ordered by part number.".into(),
        ),
        ObjectError::PartMismatch(part_number) => error(
            Code::InvalidPart,
            format!(
                "One or more of the specified parts could not be found. The part may not have been uploaded, or \
                 the specified entity tag may not match the part's entity tag. (part {part_number})"
            ),
        ),
        ObjectError::PartWithoutChecksum {
            part_number,
            algorithm,
        } => error(
            Code::InvalidPart,
            format!("Part {part_number} has no {algorithm} checksum"),
        ),
        ObjectError::EncryptionMismatch { requested, table } => {
            error(Code::InvalidArgument, encryption_refusal(&requested, &table))
        }
        ObjectError::Conflict(message) => error(Code::OperationAborted, message),
        ObjectError::Body(source) => body_error(source.as_ref()),
        // The stored bytes or the server's keys are at fault, not the request: 500, with a message that says
        // which (it names a key id and version at most, never key material).
        ObjectError::Integrity(detail) => stored_data_error(format!(
            "The object's stored data failed its integrity check: {detail}"
        )),
        ObjectError::KeyUnavailable(detail) => stored_data_error(format!(
            "The object's encryption key is unavailable: {detail}"
        )),
        ObjectError::UnknownKmsKey(detail) => {
            let mut out = error(
                "KMS.NotFoundException"
                    .parse()
                    .unwrap_or(Code::InvalidArgument),
                format!("Invalid keyId: {detail}"),
            );
            out.set_status_code(StatusCode::BAD_REQUEST);
            out
        }
        ObjectError::Internal(_) => internal(&err.to_string()),
        ObjectError::Store(ref source) => internal(&err_chain(&err.to_string(), Some(source))),
    }
}

/// Why a write's server-side encryption is refused: another algorithm than the table's, or another KMS key.
fn encryption_refusal(requested: &RequestedEncryption, table: &ObjectEncryption) -> String {
    match (requested, table) {
        (
            RequestedEncryption::Kms {
                key_id: Some(asked),
            },
            ObjectEncryption::Kms(_),
        ) => format!(
            "The KMS key {asked} is not allowed: this table's data is encrypted with its own KMS key"
        ),
        (RequestedEncryption::Managed, _)
        | (RequestedEncryption::Kms { .. }, ObjectEncryption::Managed)
        | (RequestedEncryption::Kms { key_id: None }, ObjectEncryption::Kms(_)) => format!(
            "The server-side encryption {} is not allowed: this table's data is encrypted with {}",
            requested_sse_name(requested),
            sse_name(table)
        ),
    }
}

/// A 500 about stored data or keys, with its (safe) message.
fn stored_data_error(message: String) -> S3Error {
    tracing::error!(error = %message, "s3 request failed");
    S3Error::with_message(S3ErrorCode::InternalError, message)
}

/// An internal error: logged with an id; the client sees only the id.
pub(crate) fn internal(detail: &str) -> S3Error {
    let error_id = uuid::Uuid::new_v4();
    tracing::error!(%error_id, error = %detail, "s3 request failed");
    S3Error::with_message(
        S3ErrorCode::InternalError,
        format!("We encountered an internal error. Please try again. (error id {error_id})"),
    )
}

fn err_chain(message: &str, source: Option<&(dyn std::error::Error + 'static)>) -> String {
    let mut out = message.to_string();
    let mut next = source;
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}

/// A failure while reading the request body. s3s keeps its body error types private (and drops the source of
/// the errors it wraps), so they are told apart by their messages here, in this one place: a payload that does
/// not match the signed `x-amz-content-sha256`, a bad aws-chunked chunk signature, an aws-chunked body without
/// its final chunk, a client that stopped sending (the listener's body timeout), a malformed chunk, or a body
/// that ended early (a client that went away).
fn body_error(source: &(dyn std::error::Error + Send + Sync + 'static)) -> S3Error {
    let text = err_chain("", Some(source));
    if text.contains("Sha256Mismatch") {
        let mut err = S3Error::with_message(
            "XAmzContentSHA256Mismatch"
                .parse()
                .unwrap_or(S3ErrorCode::BadDigest),
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        );
        err.set_status_code(StatusCode::BAD_REQUEST);
        err
    } else if text.contains("SignatureMismatch") {
        S3Error::with_message(
            S3ErrorCode::SignatureDoesNotMatch,
            "The request signature we calculated does not match the signature you provided.",
        )
    } else if text.contains(MISSING_FINAL_CHUNK) {
        S3Error::with_message(
            S3ErrorCode::IncompleteBody,
            "The aws-chunked request body ended without its final zero-length chunk.",
        )
    } else if text.contains(BODY_TIMEOUT) {
        let mut err = S3Error::with_message(
            S3ErrorCode::RequestTimeout,
            "Your socket connection to the server was not read from or written to within the timeout period.",
        );
        err.set_status_code(StatusCode::BAD_REQUEST);
        err
    } else if text.contains("FormatError") || text.contains("TooLarge") || text.contains("TooMany")
    {
        S3Error::with_message(
            S3ErrorCode::InvalidRequest,
            format!("Malformed aws-chunked body:{text}"),
        )
    } else {
        tracing::debug!(error = %text, "request body ended early");
        S3Error::with_message(
            S3ErrorCode::IncompleteBody,
            "The request body ended before its declared length.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tablebay_objects::{ChecksumAlgorithm, ChecksumType};

    #[test]
    fn codes_and_statuses() {
        let crc32 = ChecksumAlgorithm::Crc32;
        for (err, code, status) in [
            (ObjectError::ObjectNotFound, "NoSuchKey", 404),
            (ObjectError::UploadNotFound, "NoSuchUpload", 404),
            (ObjectError::Md5Mismatch, "BadDigest", 400),
            (ObjectError::ChecksumMismatch(crc32), "BadDigest", 400),
            (ObjectError::MalformedMd5, "InvalidDigest", 400),
            (ObjectError::PartMismatch(1), "InvalidPart", 400),
            (
                ObjectError::PartWithoutChecksum {
                    part_number: 1,
                    algorithm: crc32,
                },
                "InvalidPart",
                400,
            ),
            (ObjectError::PartsOutOfOrder, "InvalidPartOrder", 400),
            (ObjectError::PartTooSmall, "EntityTooSmall", 400),
            (ObjectError::TooLarge(1), "EntityTooLarge", 400),
            (ObjectError::LengthMismatch, "IncompleteBody", 400),
            (ObjectError::InvalidRange, "InvalidRange", 416),
            (ObjectError::PreconditionFailed, "PreconditionFailed", 412),
            (ObjectError::NotModified, "NotModified", 304),
            (ObjectError::Invalid("x".into()), "InvalidArgument", 400),
            (
                ObjectError::MalformedChecksum(crc32),
                "InvalidArgument",
                400,
            ),
            (
                ObjectError::MalformedChecksumTrailer(crc32),
                "InvalidArgument",
                400,
            ),
            (
                ObjectError::MissingChecksumTrailer(crc32),
                "InvalidArgument",
                400,
            ),
            (
                ObjectError::ChecksumAlgorithmMismatch {
                    expected: crc32,
                    got: ChecksumAlgorithm::Sha1,
                },
                "InvalidArgument",
                400,
            ),
            (
                ObjectError::UnsupportedChecksumType {
                    algorithm: ChecksumAlgorithm::Sha256,
                    kind: ChecksumType::FullObject,
                },
                "InvalidArgument",
                400,
            ),
            (ObjectError::RangeAndPart, "InvalidArgument", 400),
            (
                ObjectError::EncryptionMismatch {
                    requested: RequestedEncryption::Managed,
                    table: ObjectEncryption::Kms("k".into()),
                },
                "InvalidArgument",
                400,
            ),
            (ObjectError::NoParts, "MalformedXML", 400),
            (ObjectError::Conflict("x".into()), "OperationAborted", 409),
            (
                ObjectError::UnknownKmsKey("k".into()),
                "KMS.NotFoundException",
                400,
            ),
            (ObjectError::Integrity("x".into()), "InternalError", 500),
            (
                ObjectError::KeyUnavailable("x".into()),
                "InternalError",
                500,
            ),
            (
                ObjectError::Internal("secret detail".into()),
                "InternalError",
                500,
            ),
        ] {
            let e = s3_error(err, None);
            assert_eq!(e.code().as_str(), code);
            assert_eq!(e.status_code().map(|s| s.as_u16()), Some(status), "{code}");
            if code == "InternalError" {
                assert!(!e.message().unwrap_or_default().contains("secret"));
            }
        }
        for (err, code, status) in [
            (CatalogError::NotFound("x".into()), "NoSuchBucket", 404),
            (CatalogError::Denied("x".into()), "AccessDenied", 403),
            (CatalogError::Invalid("x".into()), "InvalidArgument", 400),
            (
                CatalogError::Internal("secret".into()),
                "InternalError",
                500,
            ),
        ] {
            let e = catalog_error(err, None);
            assert_eq!(e.code().as_str(), code);
            assert_eq!(e.status_code().map(|s| s.as_u16()), Some(status), "{code}");
        }
    }

    /// S3's messages, word for word where clients or people read them.
    #[test]
    fn messages() {
        let message = |err| {
            s3_error(err, None)
                .message()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(
            message(ObjectError::MalformedChecksum(ChecksumAlgorithm::Crc32c)),
            "Value for x-amz-checksum-crc32c header is invalid."
        );
        assert_eq!(
            message(ObjectError::UnsupportedChecksumType {
                algorithm: ChecksumAlgorithm::Crc64Nvme,
                kind: ChecksumType::Composite,
            }),
            "The COMPOSITE checksum type cannot be used with the CRC64NVME algorithm."
        );
        assert_eq!(
            message(ObjectError::EncryptionMismatch {
                requested: RequestedEncryption::Managed,
                table: ObjectEncryption::Kms("arn".into()),
            }),
            "The server-side encryption AES256 is not allowed: this table's data is encrypted with aws:kms"
        );
        assert_eq!(
            message(ObjectError::EncryptionMismatch {
                requested: RequestedEncryption::Kms {
                    key_id: Some("other".into())
                },
                table: ObjectEncryption::Kms("arn".into()),
            }),
            "The KMS key other is not allowed: this table's data is encrypted with its own KMS key"
        );
        assert_eq!(
            message(ObjectError::UnknownKmsKey("arn:x is not configured".into())),
            "Invalid keyId: arn:x is not configured"
        );
    }

    #[test]
    fn body_errors() {
        let err = |msg: &str| -> tablebay_objects::BodyError { msg.to_string().into() };
        let code = |msg: &str| {
            s3_error(ObjectError::Body(err(msg)), None)
                .code()
                .as_str()
                .to_string()
        };
        assert_eq!(
            code("UploadStreamError: Sha256Mismatch"),
            "XAmzContentSHA256Mismatch"
        );
        assert_eq!(
            s3_error(ObjectError::Body(err("Sha256Mismatch")), None).status_code(),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code("AwsChunkedStreamError: SignatureMismatch"),
            "SignatureDoesNotMatch"
        );
        assert_eq!(code("AwsChunkedStreamError: FormatError"), "InvalidRequest");
        assert_eq!(code("connection reset"), "IncompleteBody");
        assert_eq!(
            code(&format!(
                "AwsChunkedStreamError: Underlying: {MISSING_FINAL_CHUNK}"
            )),
            "IncompleteBody"
        );
        let timeout = s3_error(ObjectError::Body(err(BODY_TIMEOUT)), None);
        assert_eq!(timeout.code().as_str(), "RequestTimeout");
        assert_eq!(timeout.status_code(), Some(StatusCode::BAD_REQUEST));
    }
}
