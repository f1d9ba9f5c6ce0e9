//! The STS endpoint at `/sts` on the tables listener: AWS's Query protocol (a form-encoded POST, or GET with the
//! same parameters in the query, `Action=…&Version=2011-06-15`), SigV4 with the signing name `sts`, and XML answers
//! and errors in STS's own shapes, so `aws sts --endpoint-url http://…/sts get-session-token|assume-role` and
//! boto3's STS client work unchanged. `GetCallerIdentity` is answered too (it is how tools test credentials).

use std::collections::BTreeMap;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use chrono::SecondsFormat;
use http::{HeaderValue, Method, StatusCode, header};
use tablebay_auth::{AuthError, Principal};
use tablebay_iam::{AssumeRoleRequest, IamError, IssuedSession};

use crate::authn::{access_context, authenticate};
use crate::state::AppState;

/// STS requests are a few form fields and a session policy of at most 2048 characters.
const MAX_BODY_BYTES: usize = 16 * 1024;
const XMLNS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

/// An STS error: status, `Code`, message, and whether the caller (`Sender`) or the server is at fault.
#[derive(Debug)]
struct StsError {
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

    fn missing(name: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            format!("The request must contain the parameter {name}"),
        )
    }

    fn render(&self, request_id: &str) -> Response {
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
            AuthError::PayloadMismatch => Self::invalid(
                "The body does not match the x-amz-content-sha256 header it was signed with",
            ),
            AuthError::Unavailable => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "The credential store is unavailable",
            ),
        }
    }
}

impl From<IamError> for StsError {
    fn from(e: IamError) -> Self {
        match e {
            IamError::Invalid(m) if m.contains("policy") => {
                Self::new(StatusCode::BAD_REQUEST, "MalformedPolicyDocument", m)
            }
            IamError::Invalid(m) => Self::new(StatusCode::BAD_REQUEST, "ValidationError", m),
            IamError::NotFound(m) => Self::new(StatusCode::NOT_FOUND, "NoSuchEntity", m),
            IamError::AlreadyExists(m) | IamError::Conflict(m) => {
                Self::new(StatusCode::CONFLICT, "Conflict", m)
            }
            IamError::Denied(m) => Self::new(StatusCode::FORBIDDEN, "AccessDenied", m),
            IamError::Internal(m) => {
                let error_id = uuid::Uuid::new_v4();
                tracing::error!(%error_id, detail = m, "sts request failed");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "InternalFailure",
                    format!("internal error {error_id}"),
                )
            }
            IamError::Store(source) => {
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

/// Handles one request at `/sts`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let mut operation = "unknown";
    let mut principal_arn = String::from("-");
    let result = async {
        let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
            .await
            .map_err(|_| StsError::invalid(format!("The request body is larger than {MAX_BODY_BYTES} bytes")))?;
        let principal = authenticate(&app.sts_verifier, &app.iam, &parts, &body).await?;
        principal_arn.clone_from(&principal.arn);
        let params = match parts.method {
            Method::POST => form(&body),
            Method::GET => form(parts.uri.query().unwrap_or_default().as_bytes()),
            _ => return Err(StsError::new(StatusCode::METHOD_NOT_ALLOWED, "InvalidAction", "Use POST")),
        };
        let action = params.get("Action").map(String::as_str).ok_or_else(|| StsError::missing("Action"))?;
        let cx = access_context(&parts, &request_id);
        match action {
            "GetSessionToken" => {
                operation = "GetSessionToken";
                let duration = duration(&params)?;
                let session = app.iam.get_session_token(&principal, duration, &request_id).await?;
                tablebay_iam::audit_mutation(&principal, "sts:GetSessionToken", &principal.arn, &request_id);
                Ok(result_xml("GetSessionToken", &credentials_xml(&session), &request_id))
            }
            "AssumeRole" => {
                operation = "AssumeRole";
                let request = AssumeRoleRequest {
                    role_arn: params.get("RoleArn").cloned().ok_or_else(|| StsError::missing("RoleArn"))?,
                    session_name: params.get("RoleSessionName").cloned().ok_or_else(|| StsError::missing("RoleSessionName"))?,
                    duration_secs: duration(&params)?,
                    policy: params.get("Policy").cloned(),
                };
                let session = app.iam.assume_role(&principal, &request, &cx).await?;
                tablebay_iam::audit_mutation(&principal, "sts:AssumeRole", &request.role_arn, &request_id);
                let (arn, id) = session.assumed_role.clone().unwrap_or_default();
                let inner = format!(
                    "{}<AssumedRoleUser><Arn>{}</Arn><AssumedRoleId>{}</AssumedRoleId></AssumedRoleUser>",
                    credentials_xml(&session),
                    escape(&arn),
                    escape(&id)
                );
                Ok(result_xml("AssumeRole", &inner, &request_id))
            }
            "GetCallerIdentity" => {
                operation = "GetCallerIdentity";
                Ok(result_xml("GetCallerIdentity", &caller_identity(&principal), &request_id))
            }
            other => Err(StsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidAction",
                format!("Could not find operation {other} for version 2011-06-15"),
            )),
        }
    }
    .await;
    let response = match result {
        Ok(response) => response,
        Err(e) => {
            if e.status == StatusCode::FORBIDDEN {
                tracing::info!(
                    target: tablebay_iam::AUDIT_TARGET,
                    principal = %principal_arn,
                    action = operation,
                    decision = "deny",
                    reason = %e.message,
                    request_id,
                    "audit"
                );
            }
            e.render(&request_id)
        }
    };
    let status = response.status().as_u16();
    let latency = started.elapsed();
    app.metrics.record("sts", operation, status, latency);
    tracing::info!(
        surface = "sts",
        method = %parts.method,
        operation,
        principal = %principal_arn,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        request_id,
        "request"
    );
    response
}

/// `DurationSeconds`, if given (its range is the IAM service's to check).
fn duration(params: &BTreeMap<String, String>) -> Result<Option<i64>, StsError> {
    params
        .get("DurationSeconds")
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

/// The decoded fields of a form-encoded body or query (`+` is a space); a repeated name keeps its first value.
fn form(raw: &[u8]) -> BTreeMap<String, String> {
    let text = String::from_utf8_lossy(raw);
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    let mut fields = BTreeMap::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        fields.entry(decode(name)).or_insert_with(|| decode(value));
    }
    fields
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

    #[test]
    fn forms_and_escaping() {
        let fields = form(b"Action=AssumeRole&RoleArn=arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fr&Policy=%7B%22a%22+%3A1%7D&Action=x");
        assert_eq!(fields.get("Action").map(String::as_str), Some("AssumeRole"));
        assert_eq!(
            fields.get("RoleArn").map(String::as_str),
            Some("arn:aws:iam::111122223333:role/r")
        );
        assert_eq!(fields.get("Policy").map(String::as_str), Some("{\"a\" :1}"));
        assert_eq!(escape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
        assert!(form(b"").is_empty());
    }
}
