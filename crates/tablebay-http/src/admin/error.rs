//! The admin API's errors and their wire form: the HTTP status with `{"code": …, "message": …}`.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use tablebay_auth::AuthError;
use tablebay_iam::IamError;

/// An error answered by the admin API.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdminError {
    /// 400: malformed or invalid input.
    #[error("{0}")]
    BadRequest(String),
    /// 403: not authenticated, or not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// 404: the account, user, role, key or policy does not exist.
    #[error("{0}")]
    NotFound(String),
    /// 409: already exists, or conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// 500; the cause is logged under an error id.
    #[error("internal error")]
    Internal(String),
    /// 503: the credential store could not be asked.
    #[error("service unavailable")]
    Unavailable,
}

impl AdminError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "BadRequest"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "AccessDenied"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "NotFound"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "Conflict"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
            Self::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
        }
    }

    /// The status code (for logs and metrics).
    pub(crate) fn status(&self) -> StatusCode {
        self.status_and_code().0
    }
}

impl From<IamError> for AdminError {
    fn from(e: IamError) -> Self {
        match e {
            IamError::Invalid(m) => Self::BadRequest(m),
            IamError::NotFound(m) => Self::NotFound(m),
            IamError::AlreadyExists(m) | IamError::Conflict(m) => Self::Conflict(m),
            IamError::Denied(m) => Self::Forbidden(m),
            IamError::Internal(m) => Self::Internal(m),
            IamError::Store(source) => Self::Internal(format!(
                "{source}: {:?}",
                std::error::Error::source(&source)
            )),
        }
    }
}

impl From<AuthError> for AdminError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Unavailable => Self::Unavailable,
            other => Self::Forbidden(format!("Authentication failed: {other}")),
        }
    }
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let message = match &self {
            Self::Internal(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, detail, "admin request failed");
                format!("An internal error occurred (error id {error_id}).")
            }
            other => other.to_string(),
        };
        let body = serde_json::json!({ "code": code, "message": message }).to_string();
        let mut response = (status, body).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}
