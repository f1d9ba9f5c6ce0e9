//! The admin API's errors and their one wire form, for identities and maintenance alike: the HTTP status with
//! `{"code": …, "message": …}` and the same code in `x-amzn-ErrorType`. Domain errors are mapped here with
//! exhaustive matches.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use tablebay_auth::AuthError;
use tablebay_catalog::ServiceError;
use tablebay_maintenance::MaintenanceError;

use crate::pipeline::{PipelineError, WireError};

/// An error answered by the admin API.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdminError {
    /// 400: malformed or invalid input.
    #[error("{0}")]
    BadRequest(String),
    /// 403: not authenticated, or not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// 404: the account, user, role, key, policy or table does not exist.
    #[error("{0}")]
    NotFound(String),
    /// 405: a known path without that method.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409: already exists, or conflicts with the current state (a maintenance job already running).
    #[error("{0}")]
    Conflict(String),
    /// 500; the cause is logged under an error id.
    #[error("internal error")]
    Internal(String),
    /// 503: a store could not be asked; nothing changed.
    #[error("{0}")]
    Unavailable(String),
}

impl AdminError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "BadRequest"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "AccessDenied"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "NotFound"),
            Self::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "Conflict"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
            Self::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
        }
    }
}

impl From<ServiceError> for AdminError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(m) | ServiceError::MalformedPolicy(m) => Self::BadRequest(m),
            ServiceError::NotFound(m) => Self::NotFound(m),
            ServiceError::AlreadyExists(m) | ServiceError::Conflict(m) => Self::Conflict(m),
            ServiceError::Denied(m) => Self::Forbidden(m),
            ServiceError::Internal(m) => Self::Internal(m),
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

impl From<MaintenanceError> for AdminError {
    fn from(e: MaintenanceError) -> Self {
        let message = e.to_string();
        match e {
            MaintenanceError::NotFound(_) => Self::NotFound(message),
            MaintenanceError::Invalid(_) => Self::BadRequest(message),
            MaintenanceError::Busy(_) => Self::Conflict(message),
            MaintenanceError::Unavailable(_) => Self::Unavailable(message),
            MaintenanceError::Unreadable(_) => Self::Internal(message),
            MaintenanceError::Catalog(source) => source.into(),
            MaintenanceError::Store(source) => ServiceError::from(source).into(),
        }
    }
}

/// An authentication failure.
fn auth_error(e: AuthError) -> AdminError {
    match e {
        AuthError::Unavailable => {
            AdminError::Unavailable("The credential store is unavailable; retry".to_string())
        }
        AuthError::PayloadMismatch | AuthError::ContentMd5Mismatch => {
            AdminError::BadRequest(e.to_string())
        }
        AuthError::Missing
        | AuthError::Malformed(_)
        | AuthError::RequestExpired
        | AuthError::ScopeMismatch(_)
        | AuthError::UnknownAccessKey
        | AuthError::InvalidSessionToken
        | AuthError::ExpiredSessionToken
        | AuthError::SignatureMismatch => {
            AdminError::Forbidden(format!("Authentication failed: {e}"))
        }
    }
}

impl From<PipelineError> for AdminError {
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

impl WireError for AdminError {
    fn status(&self) -> StatusCode {
        self.status_and_code().0
    }

    fn kind(&self) -> &'static str {
        self.status_and_code().1
    }

    fn render(self, request_id: &str) -> Response {
        let (status, code) = self.status_and_code();
        let message = match &self {
            Self::Internal(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, request_id, detail, "admin request failed");
                format!("An internal error occurred (error id {error_id}).")
            }
            other => other.to_string(),
        };
        let body = serde_json::json!({ "code": code, "message": message }).to_string();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert("x-amzn-errortype", HeaderValue::from_static(code));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}
