//! The Iceberg REST catalog's errors and their wire form, Iceberg's `ErrorModel`
//! `{"error": {"message", "type", "code"}}` with `code` equal to the HTTP status and the exception types and
//! messages of Java's reference server (`reference/iceberg-rest.md` §3, traps 2 and 3): Java picks the exception
//! from `code` and `type`, and the REST compatibility kit compares messages.
//!
//! Domain errors are mapped here, per what the request was about (a namespace, a table, a view), with exhaustive
//! matches; a 5xx hides its cause behind a logged error id.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use tablebay_auth::AuthError;
use tablebay_catalog::{CommitError, ServiceError};

use super::router::Ident;
use crate::pipeline::{PipelineError, WireError};

/// An error answered by the Iceberg REST catalog.
#[derive(Debug)]
pub(crate) struct IcebergError {
    status: StatusCode,
    kind: &'static str,
    message: String,
    /// For 5xx: the cause, logged under an error id and never sent.
    detail: Option<String>,
}

impl IcebergError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            message: message.into(),
            detail: None,
        }
    }

    fn internal(status: StatusCode, kind: &'static str, detail: impl Into<String>) -> Self {
        let message = "An internal error occurred";
        Self {
            status,
            kind,
            message: message.into(),
            detail: Some(detail.into()),
        }
    }

    /// 400 BadRequestException.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequestException", message)
    }

    /// 400 IllegalArgumentException: a request that parsed but does not apply (Java rethrows this type as
    /// `IllegalArgumentException`, as its reference server raises it).
    pub(crate) fn illegal_argument(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "IllegalArgumentException", message)
    }

    /// 405 for a known path with a method it does not have.
    pub(crate) fn method_not_allowed(method: &Method, path: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowedException",
            format!("Method {method} is not allowed on {path}"),
        )
    }

    /// 401 NotAuthorizedException: the request is not authenticated.
    pub(crate) fn not_authorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "NotAuthorizedException", message)
    }

    /// 403 ForbiddenException: authenticated, but not allowed.
    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "ForbiddenException", message)
    }

    /// 404 NoSuchNamespaceException with Java's message.
    pub(crate) fn no_such_namespace(namespace: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchNamespaceException",
            format!("Namespace does not exist: {namespace}"),
        )
    }

    /// 404 NoSuchTableException with Java's message.
    pub(crate) fn no_such_table(table: &Ident) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchTableException",
            format!("Table does not exist: {table}"),
        )
    }

    /// 404 NoSuchViewException with Java's message.
    pub(crate) fn no_such_view(view: &Ident) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchViewException",
            format!("View does not exist: {view}"),
        )
    }

    /// 404 NoSuchWarehouseException: the `warehouse` of `GET /v1/config` names no bucket.
    pub(crate) fn no_such_warehouse(warehouse: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchWarehouseException",
            format!("Warehouse does not exist: {warehouse}"),
        )
    }

    /// 503 ServiceUnavailableException: a store could not be reached and nothing changed; retry.
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailableException",
            message,
        )
    }

    /// 409 AlreadyExistsException.
    pub(crate) fn already_exists(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "AlreadyExistsException", message)
    }

    /// 422 UnprocessableEntityException.
    pub(crate) fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "UnprocessableEntityException",
            message,
        )
    }

    /// A SigV4 authentication failure: 403 ForbiddenException, as AWS answers (the message never carries
    /// secrets).
    pub(crate) fn from_auth(e: &AuthError) -> Self {
        let message = match e {
            AuthError::Missing => {
                "Missing authentication: sign the request with SigV4 or send a bearer token"
                    .to_string()
            }
            AuthError::UnknownAccessKey => "The access key id is not known".to_string(),
            AuthError::SignatureMismatch => "The request signature does not match".to_string(),
            AuthError::RequestExpired => "The request time or token has expired".to_string(),
            AuthError::Malformed(why) => format!("Malformed authorization: {why}"),
            AuthError::ScopeMismatch(why) => {
                format!("Credential should be scoped correctly: {why}")
            }
            AuthError::InvalidSessionToken => {
                "The security token included in the request is invalid".to_string()
            }
            AuthError::ExpiredSessionToken => {
                "The security token included in the request is expired".to_string()
            }
            AuthError::PayloadMismatch | AuthError::ContentMd5Mismatch => {
                return Self::bad_request(e.to_string());
            }
            AuthError::Unavailable => {
                return Self::unavailable("The credential store is unavailable; retry");
            }
        };
        Self::forbidden(message)
    }

    /// A bearer-token failure: 401 NotAuthorizedException, on which OAuth2 clients fetch a new token.
    pub(crate) fn from_bearer(e: &AuthError) -> Self {
        let message = match e {
            AuthError::RequestExpired => "The bearer token has expired".to_string(),
            AuthError::UnknownAccessKey => "The bearer token's access key is not known".to_string(),
            AuthError::ExpiredSessionToken => "The bearer token's session has expired".to_string(),
            AuthError::Unavailable => {
                return Self::unavailable("The credential store is unavailable; retry");
            }
            AuthError::InvalidSessionToken
            | AuthError::Missing
            | AuthError::SignatureMismatch
            | AuthError::PayloadMismatch
            | AuthError::ContentMd5Mismatch
            | AuthError::Malformed(_)
            | AuthError::ScopeMismatch(_) => "The bearer token is not valid".to_string(),
        };
        Self::not_authorized(message)
    }

    /// A catalog error raised while acting on a namespace.
    pub(crate) fn for_namespace(e: ServiceError, namespace: &str) -> Self {
        match e {
            ServiceError::NotFound(_) => Self::no_such_namespace(namespace),
            ServiceError::AlreadyExists(_) => {
                Self::already_exists(format!("Namespace already exists: {namespace}"))
            }
            ServiceError::Conflict(_) => Self::new(
                StatusCode::CONFLICT,
                "NamespaceNotEmptyException",
                format!("Namespace {namespace} is not empty"),
            ),
            other @ (ServiceError::Invalid(_)
            | ServiceError::MalformedPolicy(_)
            | ServiceError::Denied(_)
            | ServiceError::Internal(_)
            | ServiceError::Unavailable(_)
            | ServiceError::Store(_)) => Self::from(other),
        }
    }

    /// A catalog error raised while acting on a table (a missing namespace is a missing table: trap 3).
    pub(crate) fn for_table(e: ServiceError, table: &Ident) -> Self {
        match e {
            ServiceError::NotFound(_) => Self::no_such_table(table),
            ServiceError::AlreadyExists(_) => {
                Self::already_exists(format!("Table already exists: {table}"))
            }
            ServiceError::Conflict(message) => {
                Self::new(StatusCode::CONFLICT, "CommitFailedException", message)
            }
            other @ (ServiceError::Invalid(_)
            | ServiceError::MalformedPolicy(_)
            | ServiceError::Denied(_)
            | ServiceError::Internal(_)
            | ServiceError::Unavailable(_)
            | ServiceError::Store(_)) => Self::from(other),
        }
    }

    /// A catalog error raised while acting on a view.
    pub(crate) fn for_view(e: ServiceError, view: &Ident) -> Self {
        match e {
            ServiceError::NotFound(_) => Self::no_such_view(view),
            ServiceError::AlreadyExists(message) => Self::already_exists(message),
            ServiceError::Conflict(message) => {
                Self::new(StatusCode::CONFLICT, "CommitFailedException", message)
            }
            ServiceError::Invalid(message) => Self::illegal_argument(message),
            other @ (ServiceError::MalformedPolicy(_)
            | ServiceError::Denied(_)
            | ServiceError::Internal(_)
            | ServiceError::Unavailable(_)
            | ServiceError::Store(_)) => Self::from(other),
        }
    }

    /// A commit's failure (trap 16: 5xx only when the outcome is unknown).
    pub(crate) fn for_commit(e: CommitError, table: &Ident) -> Self {
        match e {
            CommitError::Invalid(message) => Self::illegal_argument(message),
            CommitError::NotFound(_) => Self::no_such_table(table),
            CommitError::AlreadyExists(message) => Self::already_exists(message),
            CommitError::Conflict(message) => {
                Self::new(StatusCode::CONFLICT, "CommitFailedException", message)
            }
            CommitError::Unavailable(detail) => Self::internal(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailableException",
                detail,
            ),
            CommitError::StateUnknown(detail) => Self::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "CommitStateUnknownException",
                detail,
            ),
            CommitError::Forbidden(message) => Self::forbidden(message),
            // The dispatcher answers with the winner's stored reply; reached only when that is gone.
            CommitError::KeyTaken(message) => {
                Self::new(StatusCode::CONFLICT, "CommitFailedException", message)
            }
        }
    }
}

impl From<ServiceError> for IcebergError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(message) | ServiceError::MalformedPolicy(message) => {
                Self::bad_request(message)
            }
            ServiceError::NotFound(message) => {
                Self::new(StatusCode::NOT_FOUND, "NotFoundException", message)
            }
            ServiceError::AlreadyExists(message) => Self::already_exists(message),
            ServiceError::Conflict(message) => {
                Self::new(StatusCode::CONFLICT, "CommitFailedException", message)
            }
            ServiceError::Denied(message) => Self::forbidden(message),
            ServiceError::Internal(detail) => Self::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServerError",
                detail,
            ),
            ServiceError::Unavailable(source) => {
                Self::unavailable(ServiceError::retry_message(&source))
            }
            ServiceError::Store(source) => Self::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServerError",
                format!("{source}: {:?}", std::error::Error::source(&source)),
            ),
        }
    }
}

impl From<PipelineError> for IcebergError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Auth(e) => Self::from_auth(&e),
            PipelineError::BearerToken(e) => Self::from_bearer(&e),
            PipelineError::BodyTooLarge { .. } | PipelineError::BodyUnreadable(_) => {
                Self::bad_request(e.to_string())
            }
            PipelineError::Busy => Self::unavailable(e.to_string()),
        }
    }
}

impl WireError for IcebergError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn kind(&self) -> &'static str {
        self.kind
    }

    fn render(self, request_id: &str) -> Response {
        let message = match &self.detail {
            Some(detail) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, request_id, status = self.status.as_u16(), kind = self.kind, detail, "iceberg request failed");
                format!("{} (error id {error_id})", self.message)
            }
            None => self.message.clone(),
        };
        let body = serde_json::json!({
            "error": { "message": message, "type": self.kind, "code": self.status.as_u16() }
        })
        .to_string();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            // Java retries a 503 with Retry-After, POST included (trap 16): only sent when nothing was applied.
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}
