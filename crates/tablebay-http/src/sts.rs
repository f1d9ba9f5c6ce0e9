//! The STS endpoint at `/sts` on the tables listener: AWS's Query protocol (a form-encoded POST, or GET with the
//! same parameters in the query, `Action=…&Version=2011-06-15`), SigV4 with the signing name `sts`, and XML answers
//! and errors in STS's own shapes, so `aws sts --endpoint-url http://…/sts get-session-token|assume-role` and
//! boto3's STS client work unchanged. `GetCallerIdentity` is answered too (it is how tools test credentials).

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use chrono::SecondsFormat;
use http::request::Parts;
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use tablebay_auth::{AuthError, Principal};
use tablebay_iam::{AssumeRoleRequest, IssuedSession, ServiceError};

use crate::form::FormPairs;
use crate::pipeline::{
    self, Context, Need, PipelineError, RequestBody, Schemes, Surface, WireError,
};
use crate::state::AppState;
const XMLNS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

/// An STS error: status, `Code`, message, and whether the caller (`Sender`) or the server is at fault.
#[derive(Debug)]
pub(crate) struct StsError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl StsError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidParameterValue", message)
    }

    /// 503 ServiceUnavailable: a store could not be reached and nothing changed; retry.
    fn unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            message,
        )
    }

    fn missing(name: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            format!("The request must contain the parameter {name}"),
        )
    }

    fn xml_body(&self, request_id: &str) -> Response {
        let kind = if self.status.is_server_error() {
            "Receiver"
        } else {
            "Sender"
        };
        let body = format!(
            "<ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>{kind}</Type><Code>{}</Code><Message>{}</Message></Error>\
             <RequestId>{request_id}</RequestId></ErrorResponse>",
            self.code,
            escape(&self.message)
        );
        xml(self.status, body)
    }
}

impl From<AuthError> for StsError {
    fn from(e: AuthError) -> Self {
        let forbidden = |code, message: String| Self::new(StatusCode::FORBIDDEN, code, message);
        match e {
            AuthError::Missing => forbidden(
                "MissingAuthenticationToken",
                "Request is missing Authentication Token".into(),
            ),
            AuthError::UnknownAccessKey | AuthError::InvalidSessionToken => forbidden(
                "InvalidClientTokenId",
                "The security token included in the request is invalid.".into(),
            ),
            AuthError::ExpiredSessionToken => Self::new(
                StatusCode::BAD_REQUEST,
                "ExpiredToken",
                "The security token included in the request is expired",
            ),
            AuthError::SignatureMismatch => forbidden(
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided."
                    .into(),
            ),
            AuthError::RequestExpired => forbidden("RequestExpired", "Request has expired.".into()),
            AuthError::Malformed(why) => forbidden(
                "IncompleteSignature",
                format!("Malformed authorization: {why}"),
            ),
            AuthError::ScopeMismatch(why) => forbidden(
                "SignatureDoesNotMatch",
                format!("Credential should be scoped correctly: {why}"),
            ),
            AuthError::PayloadMismatch | AuthError::ContentMd5Mismatch => {
                Self::invalid(e.to_string())
            }
            AuthError::Unavailable => {
                Self::unavailable("The credential store is unavailable; retry")
            }
        }
    }
}

impl From<PipelineError> for StsError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Auth(e) | PipelineError::BearerToken(e) => e.into(),
            PipelineError::BodyTooLarge { .. } | PipelineError::BodyUnreadable(_) => {
                Self::invalid(e.to_string())
            }
            PipelineError::Busy => Self::unavailable(e.to_string()),
        }
    }
}

impl WireError for StsError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn kind(&self) -> &'static str {
        self.code
    }

    fn render(self, request_id: &str) -> Response {
        self.xml_body(request_id)
    }
}

impl From<ServiceError> for StsError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::MalformedPolicy(m) => {
                Self::new(StatusCode::BAD_REQUEST, "MalformedPolicyDocument", m)
            }
            ServiceError::Invalid(m) => Self::new(StatusCode::BAD_REQUEST, "ValidationError", m),
            ServiceError::NotFound(m) => Self::new(StatusCode::NOT_FOUND, "NoSuchEntity", m),
            ServiceError::AlreadyExists(m) | ServiceError::Conflict(m) => {
                Self::new(StatusCode::CONFLICT, "Conflict", m)
            }
            ServiceError::Denied(m) => Self::new(StatusCode::FORBIDDEN, "AccessDenied", m),
            ServiceError::Internal(m) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, detail = m, "sts request failed");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "InternalFailure",
                    format!("internal error {error_id}"),
                )
            }
            ServiceError::Unavailable(source) => {
                Self::unavailable(ServiceError::retry_message(&source))
            }
            ServiceError::Store(source) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, error = %source, "sts request failed");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "InternalFailure",
                    format!("internal error {error_id}"),
                )
            }
        }
    }
}

/// The STS operations.
pub(crate) enum Endpoint {
    GetSessionToken { duration_secs: Option<i64> },
    AssumeRole(AssumeRoleRequest),
    GetCallerIdentity,
}

/// The STS surface.
pub(crate) struct Sts;

impl Surface for Sts {
    const NAME: &'static str = "sts";
    const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-amzn-requestid");
    /// STS requests are a few form fields and a session policy of at most 2048 characters.
    const MAX_BODY_BYTES: usize = 16 * 1024;

    type Endpoint = Endpoint;
    type Resolved = Endpoint;
    type Error = StsError;

    fn schemes(&self, app: &AppState) -> Schemes {
        Schemes::signed(&app.sts_verifier)
    }

    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Endpoint, StsError> {
        let text = match parts.method {
            Method::POST => body.text().map_err(StsError::invalid)?,
            Method::GET => parts.uri.query().unwrap_or_default(),
            _ => {
                return Err(StsError::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "InvalidAction",
                    "Use POST",
                ));
            }
        };
        let params = FormPairs::parse(text).map_err(|e| StsError::invalid(e.to_string()))?;
        let required = |name: &str| {
            params
                .first(name)
                .map(str::to_string)
                .ok_or_else(|| StsError::missing(name))
        };
        match params.first("Action") {
            Some("GetSessionToken") => Ok(Endpoint::GetSessionToken {
                duration_secs: duration(&params)?,
            }),
            Some("AssumeRole") => Ok(Endpoint::AssumeRole(AssumeRoleRequest {
                role_arn: required("RoleArn")?,
                session_name: required("RoleSessionName")?,
                duration_secs: duration(&params)?,
                policy: params.first("Policy").map(str::to_string),
            })),
            Some("GetCallerIdentity") => Ok(Endpoint::GetCallerIdentity),
            Some(other) => Err(StsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidAction",
                format!("Could not find operation {other} for version 2011-06-15"),
            )),
            None => Err(StsError::missing("Action")),
        }
    }

    fn operation(endpoint: &Endpoint) -> &'static str {
        match endpoint {
            Endpoint::GetSessionToken { .. } => "GetSessionToken",
            Endpoint::AssumeRole(_) => "AssumeRole",
            Endpoint::GetCallerIdentity => "GetCallerIdentity",
        }
    }

    /// STS needs nothing of the pipeline: who may get which session is the IAM service's STS decision (the
    /// role's trust policy with the caller's own policies), made and audited in the call itself.
    async fn resolve(
        &self,
        _cx: &Context<'_>,
        endpoint: Endpoint,
    ) -> Result<(Endpoint, Vec<Need>), StsError> {
        Ok((endpoint, Vec::new()))
    }

    async fn handle(&self, cx: &Context<'_>, endpoint: Endpoint) -> Result<Response, StsError> {
        let request_id = cx.access.request_id.as_str();
        let iam = &cx.app.iam;
        match endpoint {
            Endpoint::GetSessionToken { duration_secs } => {
                let session = iam
                    .get_session_token(&cx.principal, duration_secs, request_id)
                    .await?;
                Ok(result_xml(
                    "GetSessionToken",
                    &credentials_xml(&session),
                    request_id,
                ))
            }
            Endpoint::AssumeRole(request) => {
                let session = iam.assume_role(&cx.principal, &request, &cx.access).await?;
                let (arn, id) = session.assumed_role.clone().unwrap_or_default();
                let inner = format!(
                    "{}<AssumedRoleUser><Arn>{}</Arn><AssumedRoleId>{}</AssumedRoleId></AssumedRoleUser>",
                    credentials_xml(&session),
                    escape(&arn),
                    escape(&id)
                );
                Ok(result_xml("AssumeRole", &inner, request_id))
            }
            Endpoint::GetCallerIdentity => Ok(result_xml(
                "GetCallerIdentity",
                &caller_identity(&cx.principal),
                request_id,
            )),
        }
    }
}

/// Handles one request at `/sts`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    pipeline::serve(&app, &Sts, request).await
}

/// `DurationSeconds`, if given (its range is the IAM service's to check).
fn duration(params: &FormPairs) -> Result<Option<i64>, StsError> {
    params
        .first("DurationSeconds")
        .map(|raw| {
            raw.parse::<i64>()
                .map_err(|_| StsError::invalid(format!("Invalid DurationSeconds '{raw}'")))
        })
        .transpose()
}

fn credentials_xml(session: &IssuedSession) -> String {
    format!(
        "<Credentials><AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>\
         <SessionToken>{}</SessionToken><Expiration>{}</Expiration></Credentials>",
        escape(&session.access_key_id),
        escape(&session.secret_access_key),
        escape(&session.session_token),
        session
            .expiration
            .to_rfc3339_opts(SecondsFormat::Secs, true)
    )
}

fn caller_identity(principal: &Principal) -> String {
    let user_id = if principal.name.is_empty() {
        principal.account_id.clone()
    } else {
        principal.access_key_id.clone()
    };
    format!(
        "<UserId>{}</UserId><Account>{}</Account><Arn>{}</Arn>",
        escape(&user_id),
        escape(&principal.account_id),
        escape(&principal.arn)
    )
}

fn result_xml(action: &str, inner: &str, request_id: &str) -> Response {
    let body = format!(
        "<{action}Response xmlns=\"{XMLNS}\"><{action}Result>{inner}</{action}Result>\
         <ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata></{action}Response>"
    );
    xml(StatusCode::OK, body)
}

fn xml(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/xml"));
    response
}

/// Escapes text for an XML element.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(method: Method, query: Option<&str>, body: &str) -> Result<Endpoint, StsError> {
        let uri = match query {
            Some(q) => format!("/sts?{q}"),
            None => "/sts".to_string(),
        };
        let (parts, ()) = http::Request::builder()
            .method(method)
            .uri(uri)
            .body(())
            .unwrap()
            .into_parts();
        Sts.parse(
            &parts,
            RequestBody::new(bytes::Bytes::copy_from_slice(body.as_bytes())),
        )
    }

    #[test]
    fn forms_and_escaping() {
        let assume = parse(
            Method::POST,
            None,
            "Action=AssumeRole&RoleArn=arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fr&RoleSessionName=s&Policy=%7B%22a%22+%3A1%7D&Action=x",
        )
        .unwrap();
        let Endpoint::AssumeRole(request) = assume else {
            panic!("not AssumeRole");
        };
        assert_eq!(request.role_arn, "arn:aws:iam::111122223333:role/r");
        assert_eq!(request.policy.as_deref(), Some("{\"a\" :1}"));
        assert!(matches!(
            parse(
                Method::GET,
                Some("Action=GetCallerIdentity&Version=2011-06-15"),
                ""
            ),
            Ok(Endpoint::GetCallerIdentity)
        ));
        for (method, query, body, code) in [
            (Method::POST, None, "", "MissingParameter"),
            (
                Method::POST,
                None,
                "Action=AssumeRole&RoleArn=x",
                "MissingParameter",
            ),
            (Method::POST, None, "Action=Nope", "InvalidAction"),
            (
                Method::POST,
                None,
                "Action=GetSessionToken&DurationSeconds=abc",
                "InvalidParameterValue",
            ),
            (Method::POST, None, "Action=%FF", "InvalidParameterValue"),
            (Method::DELETE, None, "", "InvalidAction"),
        ] {
            let err = parse(method, query, body).err().unwrap();
            assert_eq!(err.code, code, "{body}");
        }
        assert_eq!(escape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
    }
}
