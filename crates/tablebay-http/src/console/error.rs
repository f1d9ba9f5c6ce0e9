//! The console's errors and their one wire form: an HTML page with the status and a message (a page request
//! without a live session is sent to sign in instead). Domain errors are mapped here with exhaustive matches.

use axum::response::Response;
use http::StatusCode;
use maud::html;
use tablebay_auth::AuthError;
use tablebay_catalog::ServiceError;
use tablebay_compaction::CompactionError;
use tablebay_maintenance::MaintenanceError;

use super::layout::{self, Page};
use super::session;
use crate::pipeline::{PipelineError, WireError};

/// An error answered by the console.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConsoleError {
    /// 303 to `/console/login`: a page asked for without a live session.
    #[error("sign in first")]
    SignIn,
    /// 400: a form or address that is not valid.
    #[error("{0}")]
    BadRequest(String),
    /// 403: not allowed, or a form without its session's csrf token.
    #[error("{0}")]
    Forbidden(String),
    /// 404: the page or what it shows does not exist.
    #[error("{0}")]
    NotFound(String),
    /// 405: a known path without that method.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// 409: already exists, not empty, or a maintenance run in progress.
    #[error("{0}")]
    Conflict(String),
    /// 413: the form is too large.
    #[error("{0}")]
    TooLarge(String),
    /// 500; the cause is logged under an error id.
    #[error("internal error")]
    Internal(String),
    /// 503: a store could not be asked; nothing changed.
    #[error("{0}")]
    Unavailable(String),
}

impl ConsoleError {
    fn status_and_kind(&self) -> (StatusCode, &'static str) {
        match self {
            Self::SignIn => (StatusCode::SEE_OTHER, "SignIn"),
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "BadRequest"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "AccessDenied"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "NotFound"),
            Self::MethodNotAllowed(_) => (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "Conflict"),
            Self::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
            Self::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
        }
    }

    /// The error page (without a request id: errors outside the pipeline).
    pub(super) fn page(self) -> Response {
        self.render("-")
    }
}

impl From<ServiceError> for ConsoleError {
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

impl From<MaintenanceError> for ConsoleError {
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

impl From<CompactionError> for ConsoleError {
    fn from(e: CompactionError) -> Self {
        match e {
            CompactionError::NotFound(m) => Self::NotFound(m),
            CompactionError::Invalid(m) => Self::BadRequest(m),
            CompactionError::Conflict(m) => Self::Conflict(m),
            CompactionError::Unavailable(m) => Self::Unavailable(m),
            CompactionError::Internal(m) => Self::Internal(m),
        }
    }
}

impl From<PipelineError> for ConsoleError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Auth(e) | PipelineError::BearerToken(e) => match e {
                // A page without a live session (none, expired, or its key no longer works): sign in again.
                AuthError::Missing
                | AuthError::UnknownAccessKey
                | AuthError::InvalidSessionToken
                | AuthError::ExpiredSessionToken
                | AuthError::RequestExpired => Self::SignIn,
                AuthError::Unavailable => {
                    Self::Unavailable("The credential store is unavailable; retry".into())
                }
                // A form without a live session or its csrf token (`session::forged`).
                AuthError::Malformed(_)
                | AuthError::ScopeMismatch(_)
                | AuthError::SignatureMismatch
                | AuthError::PayloadMismatch
                | AuthError::ContentMd5Mismatch => Self::Forbidden(format!("Refused: {e}")),
            },
            PipelineError::BodyTooLarge { .. } => Self::TooLarge(e.to_string()),
            PipelineError::BodyUnreadable(_) => Self::BadRequest(e.to_string()),
            PipelineError::Busy => Self::Unavailable(e.to_string()),
        }
    }
}

impl WireError for ConsoleError {
    fn status(&self) -> StatusCode {
        self.status_and_kind().0
    }

    fn kind(&self) -> &'static str {
        self.status_and_kind().1
    }

    fn render(self, request_id: &str) -> Response {
        let (status, _) = self.status_and_kind();
        let message = match &self {
            Self::SignIn => return session::to_sign_in(),
            Self::Internal(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, request_id, detail, "console request failed");
                format!("An internal error occurred (error id {error_id}).")
            }
            other => other.to_string(),
        };
        let title = format!(
            "{} {} — Tablebay console",
            status.as_u16(),
            status.canonical_reason().unwrap_or("Error")
        );
        let page = Page::anonymous(title.clone()).crumb("Table buckets", "/console/buckets");
        layout::respond(
            status,
            page.render(html! {
                main class="narrow" {
                    h1 { (title.trim_end_matches(" — Tablebay console")) }
                    p class="error" role="alert" { (message) }
                    p { a href="/console/buckets" { "Back to the table buckets" } }
                }
            }),
        )
    }
}
