//! The control plane's errors and their restJson1 wire form (`reference/s3tables-api.md` §1.5): the modeled
//! shape name in `x-amzn-ErrorType`, `{"message": …}`, `Content-Type: application/json` exactly. Only the
//! modeled names are used, so boto3 raises its typed exceptions.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use tablebay_catalog::CatalogError;

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
            Self::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServerErrorException",
            ),
        }
    }

    /// The wire error type name (for logs and metrics).
    pub(crate) fn error_type(&self) -> &'static str {
        self.status_and_type().1
    }
}

impl From<CatalogError> for ControlPlaneError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::Invalid(msg) => Self::BadRequest(msg),
            CatalogError::NotFound(msg) => Self::NotFound(msg),
            CatalogError::AlreadyExists(msg) | CatalogError::Conflict(msg) => Self::Conflict(msg),
            CatalogError::Denied(msg) => Self::AccessDenied(msg),
            CatalogError::Internal(msg) => Self::Internal(msg),
            CatalogError::Store(source) => Self::Internal(format!(
                "{source}: {:?}",
                std::error::Error::source(&source)
            )),
        }
    }
}

impl IntoResponse for ControlPlaneError {
    fn into_response(self) -> Response {
        let (status, error_type) = self.status_and_type();
        let message = match &self {
            Self::Internal(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, detail, "control plane internal error");
                format!("An internal error occurred (error id {error_id}).")
            }
            other => other.to_string(),
        };
        let body = serde_json::json!({ "message": message }).to_string();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert("x-amzn-errortype", HeaderValue::from_static(error_type));
        response
    }
}
