//! The control plane's errors and their restJson1 wire form (`reference/s3tables-api.md` §1.5): the modeled
//! shape name in `x-amzn-ErrorType`, `{"message": …}`, `Content-Type: application/json` exactly. Only the
//! modeled names are used, so boto3 raises its typed exceptions.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use tablebay_auth::AuthError;
use tablebay_catalog::ServiceError;
use tablebay_migration::MigrationError;

use crate::pipeline::{PipelineError, WireError};

/// An error answered by the control plane.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ControlPlaneError {
    /// 400 BadRequestException.
    #[error("{0}")]
    BadRequest(String),
    /// 403 ForbiddenException: authentication failed.
    #[error("{0}")]
    Forbidden(String),
    /// 403 AccessDeniedException: authenticated, but not allowed.
    #[error("{0}")]
    AccessDenied(String),
    /// 404 NotFoundException.
    #[error("{0}")]
    NotFound(String),
    /// 405 MethodNotAllowedException.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409 ConflictException.
    #[error("{0}")]
    Conflict(String),
    /// 503 ServiceUnavailableException: a dependency is down and nothing was changed; retry.
    #[error("{0}")]
    Unavailable(String),
    /// 500 InternalServerErrorException; the cause is logged under an error id, not sent.
    #[error("internal error")]
    Internal(String),
}

impl ControlPlaneError {
    fn status_and_type(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "BadRequestException"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "ForbiddenException"),
            Self::AccessDenied(_) => (StatusCode::FORBIDDEN, "AccessDeniedException"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "NotFoundException"),
            Self::MethodNotAllowed(_) => {
                (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowedException")
            }
            Self::Conflict(_) => (StatusCode::CONFLICT, "ConflictException"),
            Self::Unavailable(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailableException",
            ),
            Self::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServerErrorException",
            ),
        }
    }
}

impl From<ServiceError> for ControlPlaneError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(msg) | ServiceError::MalformedPolicy(msg) => {
                Self::BadRequest(msg)
            }
            ServiceError::NotFound(msg) => Self::NotFound(msg),
            ServiceError::AlreadyExists(msg) | ServiceError::Conflict(msg) => Self::Conflict(msg),
            ServiceError::Denied(msg) => Self::AccessDenied(msg),
            ServiceError::Internal(msg) => Self::Internal(msg),
            ServiceError::Unavailable(source) => {
                Self::Unavailable(ServiceError::retry_message(&source))
            }
            ServiceError::Store(source) => Self::Internal(format!(
                "{source}: {:?}",
                std::error::Error::source(&source)
            )),
        }
    }
}

/// The control plane's (and admin's) answer to a failed authentication.
impl From<MigrationError> for ControlPlaneError {
    /// A request the migration service refused (a run's own failures are recorded, not answered).
    fn from(e: MigrationError) -> Self {
        match e {
            MigrationError::Catalog(e) => e.into(),
            MigrationError::Invalid(msg)
            | MigrationError::SourceNotSupported(msg)
            | MigrationError::Source(msg) => Self::BadRequest(msg),
            MigrationError::NotFound(msg) | MigrationError::SourceNotFound(msg) => {
                Self::NotFound(msg)
            }
            MigrationError::Conflict(msg) => Self::Conflict(msg),
            MigrationError::Denied(msg) | MigrationError::SourcePermissions(msg) => {
                Self::AccessDenied(msg)
            }
            MigrationError::Internal(msg) => Self::Internal(msg),
        }
    }
}

fn auth_error(e: AuthError) -> ControlPlaneError {
    ControlPlaneError::Forbidden(match e {
        AuthError::Missing => "Missing Authentication Token".to_string(),
        AuthError::UnknownAccessKey => "The security token included in the request is invalid.".to_string(),
        AuthError::SignatureMismatch => "The request signature we calculated does not match the signature you \
                                         provided. Check your AWS Secret Access Key and signing method."
            .to_string(),
        AuthError::RequestExpired => "Signature expired: the request time is too far from the server time.".to_string(),
        AuthError::Malformed(why) => format!("Malformed authorization: {why}"),
        AuthError::ScopeMismatch(why) => format!("Credential should be scoped correctly: {why}"),
        AuthError::InvalidSessionToken => "The security token included in the request is invalid.".to_string(),
        AuthError::ExpiredSessionToken => "The security token included in the request is expired".to_string(),
        AuthError::PayloadMismatch => return ControlPlaneError::BadRequest(
            "The body does not match the payload hash it was signed with".to_string()),
        AuthError::ContentMd5Mismatch => return ControlPlaneError::BadRequest(
            "The body does not match its Content-MD5 header".to_string()),
        AuthError::Unavailable => return ControlPlaneError::Unavailable("The credential store is unavailable; retry".to_string()),
    })
}

impl From<PipelineError> for ControlPlaneError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Auth(e) | PipelineError::BearerToken(e) => auth_error(e),
            PipelineError::BodyTooLarge { .. } | PipelineError::BodyUnreadable(_) => {
                Self::BadRequest(e.to_string())
            }
            PipelineError::Busy => Self::Unavailable(e.to_string()),
        }
    }
}

impl WireError for ControlPlaneError {
    fn status(&self) -> StatusCode {
        self.status_and_type().0
    }

    fn kind(&self) -> &'static str {
        self.status_and_type().1
    }

    fn render(self, request_id: &str) -> Response {
        let (status, error_type) = self.status_and_type();
        let message = match &self {
            Self::Internal(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, request_id, detail, "control plane internal error");
                format!("An internal error occurred (error id {error_id}).")
            }
            other => other.to_string(),
        };
        // `code` too: AWS SDKs read the type from `x-amzn-ErrorType`, Alibaba's Go SDK (ossutil) from the body.
        let body = serde_json::json!({ "code": error_type, "message": message }).to_string();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert("x-amzn-errortype", HeaderValue::from_static(error_type));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

impl IntoResponse for ControlPlaneError {
    fn into_response(self) -> Response {
        self.render("-")
    }
}
