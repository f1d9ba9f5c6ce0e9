//! The S3 surface's errors: every object-service outcome mapped to S3's XML error code and status, in one
//! exhaustive match (a new `ObjectError` variant does not compile until it has a code), with the request id in
//! the body. 5xx answers hide their cause behind a logged error id.

use http::StatusCode;
use s3s::{S3Error, S3ErrorCode};
use tablebay_catalog::ObjectError;

use super::chunked::MISSING_FINAL_CHUNK;
use super::router::RequestContext;
use crate::BODY_TIMEOUT;

/// `ObjectError` → `S3Error`, with the request's id.
pub(crate) fn s3_error(err: ObjectError, request: Option<&RequestContext>) -> S3Error {
    let message = err.to_string();
    let mut out = match err {
        ObjectError::NoSuchBucket => S3Error::with_message(S3ErrorCode::NoSuchBucket, message),
        ObjectError::NoSuchKey => S3Error::with_message(S3ErrorCode::NoSuchKey, message),
        ObjectError::NoSuchUpload => S3Error::with_message(S3ErrorCode::NoSuchUpload, message),
        ObjectError::AccessDenied(_) => S3Error::with_message(S3ErrorCode::AccessDenied, message),
        ObjectError::Invalid(_) => S3Error::with_message(S3ErrorCode::InvalidArgument, message),
        ObjectError::MalformedXml(_) => S3Error::with_message(S3ErrorCode::MalformedXML, message),
        ObjectError::InvalidRange => S3Error::with_message(S3ErrorCode::InvalidRange, message),
        ObjectError::PreconditionFailed => {
            S3Error::with_message(S3ErrorCode::PreconditionFailed, message)
        }
        ObjectError::NotModified => S3Error::new(S3ErrorCode::NotModified),
        ObjectError::InvalidDigest => S3Error::with_message(S3ErrorCode::InvalidDigest, message),
        ObjectError::BadDigest | ObjectError::ChecksumMismatch(_) => {
            S3Error::with_message(S3ErrorCode::BadDigest, message)
        }
        ObjectError::EntityTooLarge(_) => {
            S3Error::with_message(S3ErrorCode::EntityTooLarge, message)
        }
        ObjectError::EntityTooSmall => S3Error::with_message(S3ErrorCode::EntityTooSmall, message),
        ObjectError::IncompleteBody => S3Error::with_message(S3ErrorCode::IncompleteBody, message),
        ObjectError::InvalidPart(_) => S3Error::with_message(S3ErrorCode::InvalidPart, message),
        ObjectError::InvalidPartOrder => {
            S3Error::with_message(S3ErrorCode::InvalidPartOrder, message)
        }
        ObjectError::Conflict(_) => S3Error::with_message(S3ErrorCode::OperationAborted, message),
        ObjectError::Body(source) => body_error(source.as_ref()),
        // The stored bytes or the server's keys are at fault, not the request: 500, with a message that says
        // which (it names a key id and version at most, never key material).
        ObjectError::Integrity(_) | ObjectError::EncryptionKey(_) => {
            tracing::error!(error = %message, "s3 request failed");
            S3Error::with_message(S3ErrorCode::InternalError, message)
        }
        ObjectError::KmsKeyNotFound(_) => {
            let mut out = S3Error::with_message(
                "KMS.NotFoundException"
                    .parse()
                    .unwrap_or(S3ErrorCode::InvalidArgument),
                message,
            );
            out.set_status_code(StatusCode::BAD_REQUEST);
            out
        }
        ObjectError::Internal(_) | ObjectError::Store(_) => internal(&err_chain(&message, None)),
    };
    if let Some(request) = request {
        out.set_request_id(request.request_id.to_string());
    }
    out
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

fn err_chain(message: &str, source: Option<&dyn std::error::Error>) -> String {
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
    use tablebay_catalog::ChecksumAlgorithm;

    #[test]
    fn codes_and_statuses() {
        for (err, code, status) in [
            (ObjectError::NoSuchKey, "NoSuchKey", 404),
            (ObjectError::NoSuchBucket, "NoSuchBucket", 404),
            (ObjectError::NoSuchUpload, "NoSuchUpload", 404),
            (ObjectError::AccessDenied("x".into()), "AccessDenied", 403),
            (ObjectError::BadDigest, "BadDigest", 400),
            (
                ObjectError::ChecksumMismatch(ChecksumAlgorithm::Crc32),
                "BadDigest",
                400,
            ),
            (ObjectError::InvalidDigest, "InvalidDigest", 400),
            (ObjectError::InvalidPart("x".into()), "InvalidPart", 400),
            (ObjectError::InvalidPartOrder, "InvalidPartOrder", 400),
            (ObjectError::EntityTooSmall, "EntityTooSmall", 400),
            (ObjectError::EntityTooLarge(1), "EntityTooLarge", 400),
            (ObjectError::InvalidRange, "InvalidRange", 416),
            (ObjectError::PreconditionFailed, "PreconditionFailed", 412),
            (ObjectError::NotModified, "NotModified", 304),
            (ObjectError::Invalid("x".into()), "InvalidArgument", 400),
            (ObjectError::MalformedXml("x".into()), "MalformedXML", 400),
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
    }

    #[test]
    fn body_errors() {
        let err = |msg: &str| -> tablebay_catalog::BodyError { msg.to_string().into() };
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
