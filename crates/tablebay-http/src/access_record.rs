//! Turning a request and its answer into a server access log record (`tablebay_maintenance::AccessLog` buffers
//! and delivers it). Built only for a bucket whose logging is on, at the end of the request: nothing here runs
//! on the request path of an unlogged bucket but one atomic load.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::response::Response;
use http::request::Parts;
use http::{Extensions, HeaderMap, Method, Uri, Version, header};
use tablebay_catalog::BucketArn;
use tablebay_iam::Resource;
use tablebay_maintenance::AccessRecord;

use crate::pipeline::Need;
use crate::state::AppState;

/// What a record needs of the request itself, taken before the request is handed on (the S3 listener's
/// request is consumed by s3s).
#[derive(Clone, Debug)]
pub(crate) struct RequestLine {
    request_uri: String,
    host: Option<String>,
    user_agent: Option<String>,
    referer: Option<String>,
    remote_ip: Option<IpAddr>,
    signature_version: Option<&'static str>,
    authentication_type: Option<&'static str>,
    /// The declared size of the body written (`x-amz-decoded-content-length` for aws-chunked bodies).
    written: Option<u64>,
}

impl RequestLine {
    /// What a record keeps of a request's head.
    pub(crate) fn of(parts: &Parts) -> Self {
        Self::build(
            &parts.method,
            &parts.uri,
            parts.version,
            &parts.headers,
            &parts.extensions,
        )
    }

    /// What a record keeps of a request not taken apart.
    pub(crate) fn of_request<B>(request: &http::Request<B>) -> Self {
        Self::build(
            request.method(),
            request.uri(),
            request.version(),
            request.headers(),
            request.extensions(),
        )
    }

    fn build(
        method: &Method,
        uri: &Uri,
        version: Version,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Self {
        let text = |name: header::HeaderName| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let (signature_version, authentication_type) =
            credentials_kind(headers, uri.query().unwrap_or(""));
        let written = (*method == Method::PUT || *method == Method::POST)
            .then(|| {
                ["x-amz-decoded-content-length", "content-length"]
                    .iter()
                    .find_map(|name| headers.get(*name)?.to_str().ok()?.parse().ok())
            })
            .flatten();
        Self {
            request_uri: format!(
                "{method} {} {version:?}",
                uri.path_and_query().map_or("/", |p| p.as_str()),
            ),
            host: text(header::HOST),
            user_agent: text(header::USER_AGENT),
            referer: text(header::REFERER),
            remote_ip: extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| addr.ip()),
            signature_version,
            authentication_type,
            written,
        }
    }
}

/// The signature version and how the credentials came, as S3's log format names them.
fn credentials_kind(
    headers: &HeaderMap,
    query: &str,
) -> (Option<&'static str>, Option<&'static str>) {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if authorization.starts_with("AWS4-") {
        (Some("SigV4"), Some("AuthHeader"))
    } else if authorization.starts_with("OSS4-") {
        (Some("OSS4"), Some("AuthHeader"))
    } else if authorization.len() > 7 && authorization[..7].eq_ignore_ascii_case("bearer ") {
        (None, Some("Bearer"))
    } else if query.contains("X-Amz-Signature=") {
        (Some("SigV4"), Some("QueryString"))
    } else if query.contains("x-oss-signature=") {
        (Some("OSS4"), Some("QueryString"))
    } else if headers.contains_key(header::COOKIE) {
        (None, Some("Cookie"))
    } else {
        (None, None)
    }
}

/// The bucket and the key within it a request was about, as its needs name them.
pub(crate) fn subject_of(needs: &[Need]) -> Option<(BucketArn, Option<String>)> {
    needs.iter().find_map(|need| {
        let resource = match need {
            Need::Actions(_, resource) | Need::Owner(resource) | Need::OwnAccount(resource) => {
                resource
            }
            Need::Admin { .. } => return None,
        };
        let key = match (resource.names(), resource.target()) {
            (Some((namespace, Some(table))), _) => Some(format!("{namespace}/{table}")),
            (Some((namespace, None)), _) => Some(namespace.to_string()),
            (None, Resource::Table(table)) => Some(table.table_id.to_string()),
            _ => None,
        };
        Some((resource.bucket()?.clone(), key))
    })
}

/// How a request was answered.
pub(crate) struct Answer<'a> {
    pub surface: &'static str,
    pub operation: &'static str,
    pub request_id: &'a str,
    pub principal: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub total_time: Duration,
}

/// Buffers the record of a request on `bucket` when that bucket's logging is on.
pub(crate) fn record(
    app: &AppState,
    line: &RequestLine,
    (bucket, key): (&BucketArn, Option<String>),
    answer: Answer<'_>,
    response: &Response,
) {
    if !app.access_log.is_logged(&bucket.account, &bucket.name) {
        return;
    }
    // The header when the handler set it, else the body's exact size (hyper writes it as the header later).
    let bytes_sent = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .or_else(|| axum::body::HttpBody::size_hint(response.body()).exact());
    let status = response.status();
    let object_size = line.written.or(bytes_sent.filter(|_| status.is_success()));
    let total_time = chrono::Duration::from_std(answer.total_time).unwrap_or_default();
    app.access_log.record(AccessRecord {
        account: bucket.account.clone(),
        bucket: bucket.name.clone(),
        event_time: chrono::Utc::now() - total_time,
        remote_ip: line.remote_ip,
        requester: answer.principal.map(str::to_string),
        request_id: answer.request_id.to_string(),
        surface: answer.surface,
        operation: answer.operation,
        key,
        request_uri: line.request_uri.clone(),
        http_status: status.as_u16(),
        error_code: answer
            .error_code
            .map(str::to_string)
            .filter(|_| !status.is_success()),
        bytes_sent,
        object_size,
        total_time: answer.total_time,
        referer: line.referer.clone(),
        user_agent: line.user_agent.clone(),
        signature_version: line.signature_version,
        authentication_type: line.authentication_type,
        host_header: line.host.clone(),
    });
}
