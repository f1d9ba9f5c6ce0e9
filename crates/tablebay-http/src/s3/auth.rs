//! Authentication and authorization of the data plane, and bucket addressing.
//!
//! s3s verifies every SigV4 form itself (header, presigned with expiry, signed and unsigned aws-chunked with
//! trailers) against the secrets [`KeyStore`] looks up through the same IAM service as the tables listener;
//! [`check_scope`] runs first and refuses Signature Version 2, which s3s would accept without a clock. Then
//! [`TableAccess::check`] runs once per request, before the operation: it checks the session token of temporary
//! credentials (s3s does not), resolves the bucket to its table, decides the action the operation needs, and asks
//! the IAM service's one authorization decision ([`authorize`]). The outcome travels to the operation as an
//! [`S3Context`] in the request extensions.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use s3s::access::{S3Access, S3AccessContext};
use s3s::auth::{S3Auth, SecretKey};
use s3s::host::{S3Host, VirtualHost};
use s3s::{S3Error, S3ErrorCode, S3Result};
use tablebay_auth::{AuthError, Principal};
use tablebay_catalog::{Catalog, TableStorage};
use tablebay_iam::{AccessContext, Iam, Resource};
use tablebay_objects::TableLocation;
use tablebay_policy::Action;

use super::error::{catalog_error, no_such_bucket};
use super::router::RequestContext;
use crate::pipeline::lookup;

/// What an operation does to a table's data; named after the S3 Tables actions that grant it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataAction {
    /// `s3tables:GetTableData` (`oss:GetTableData`): read objects, list, head.
    GetTableData,
    /// `s3tables:PutTableData` (`oss:PutTableData`): write and delete objects, multipart uploads.
    PutTableData,
}

impl DataAction {
    /// The IAM action.
    pub(crate) fn action(self) -> Action {
        match self {
            Self::GetTableData => Action::GetTableData,
            Self::PutTableData => Action::PutTableData,
        }
    }
}

/// The action an S3 operation needs on the bucket's table; `None` for operations without a table (ListBuckets)
/// or that this server does not implement (they answer `NotImplemented`).
pub(crate) fn action_of(operation: &str) -> Option<DataAction> {
    use DataAction::{GetTableData, PutTableData};
    Some(match operation {
        "GetObject"
        | "HeadObject"
        | "ListObjects"
        | "ListObjectsV2"
        | "HeadBucket"
        | "GetBucketLocation"
        | "ListParts"
        | "ListMultipartUploads"
        | "GetObjectAttributes" => GetTableData,
        "PutObject"
        | "DeleteObject"
        | "DeleteObjects"
        | "CopyObject"
        | "CreateMultipartUpload"
        | "UploadPart"
        | "CompleteMultipartUpload"
        | "AbortMultipartUpload" => PutTableData,
        _ => return None,
    })
}

/// Every operation name the data plane serves, as a `'static` label for logs and metrics (s3s lends the name
/// only for the request); anything else is `other`.
pub(crate) fn operation_label(operation: &str) -> &'static str {
    const SERVED: [&str; 20] = [
        "GetObject",
        "HeadObject",
        "ListObjects",
        "ListObjectsV2",
        "HeadBucket",
        "GetBucketLocation",
        "ListParts",
        "ListMultipartUploads",
        "GetObjectAttributes",
        "PutObject",
        "DeleteObject",
        "DeleteObjects",
        "CopyObject",
        "CreateMultipartUpload",
        "UploadPart",
        "CompleteMultipartUpload",
        "AbortMultipartUpload",
        "ListBuckets",
        "PostObject",
        "UploadPartCopy",
    ];
    SERVED
        .into_iter()
        .find(|name| *name == operation)
        .unwrap_or("other")
}

/// The data plane's authorization: may `principal` perform `action` on `table`'s data? Asks the IAM service
/// (identity, bucket and table policies, session policy); a denial is S3's `AccessDenied`, a store that cannot
/// answer is `ServiceUnavailable` (503, retried by S3 clients), like any other failure of the catalog.
pub(crate) async fn authorize(
    iam: &Iam,
    principal: &Principal,
    action: DataAction,
    table: &TableStorage,
    cx: &AccessContext,
) -> Result<(), S3Error> {
    iam.authorize(
        principal,
        action.action(),
        &Resource::Table(table.arn.clone()),
        cx,
    )
    .await
    .map_err(|e| catalog_error(e, None))
}

/// The session token a request carries: the `x-amz-security-token` header, or `X-Amz-Security-Token` of a
/// presigned URL.
fn session_token(headers: &http::HeaderMap, query: Option<&str>) -> Option<String> {
    if let Some(token) = headers
        .get("x-amz-security-token")
        .and_then(|v| v.to_str().ok())
    {
        return Some(token.to_string());
    }
    url_pairs(query.unwrap_or_default())
        .find(|(name, _)| name.eq_ignore_ascii_case("X-Amz-Security-Token"))
        .map(|(_, value)| value)
}

/// A session-token failure as S3 answers it.
fn token_error(e: &AuthError) -> S3Error {
    let (code, message) = match e {
        AuthError::ExpiredSessionToken => {
            (S3ErrorCode::ExpiredToken, "The provided token has expired.")
        }
        _ => (
            S3ErrorCode::InvalidToken,
            "The provided token is malformed or otherwise invalid.",
        ),
    };
    let mut err = S3Error::with_message(code, message);
    err.set_status_code(http::StatusCode::BAD_REQUEST);
    err
}

/// Longest validity of a presigned URL: 7 days, as S3.
const MAX_PRESIGNED_EXPIRY_SECS: u64 = 604_800;

/// S3's answer to Signature Version 2 in every region opened since 2014.
fn unsupported_signature() -> S3Error {
    let mut err = S3Error::with_message(
        S3ErrorCode::InvalidRequest,
        "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
    );
    err.set_status_code(http::StatusCode::BAD_REQUEST);
    err
}

/// Whether a request is signed with Signature Version 2: the `AWS <key>:<signature>` authorization scheme, or
/// the `AWSAccessKeyId`/`Signature` query of a V2 presigned URL. s3s verifies V2 without any clock (a request
/// dated 2001 passes, a presigned URL never expires, the body is not signed), so such requests never reach it.
fn is_sigv2(headers: &http::HeaderMap, query: Option<&str>) -> bool {
    let header = headers
        .get_all(http::header::AUTHORIZATION)
        .iter()
        .any(|v| v.as_bytes().starts_with(b"AWS "));
    header
        || url_pairs(query.unwrap_or_default()).any(|(name, _)| {
            name.eq_ignore_ascii_case("AWSAccessKeyId") || name.eq_ignore_ascii_case("Signature")
        })
}

/// Checks what s3s's verifier leaves open, before it runs: Signature Version 2 is refused as S3 refuses it
/// (400 `InvalidRequest`); in a SigV4 credential scope the region must be this server's (a signature for
/// another region is AWS's `AuthorizationHeaderMalformed`), the service `s3` (s3s would answer a control-plane
/// `s3tables` scope with 501), and a presigned URL may live at most 7 days. Requests without a credential pass
/// (s3s treats them as anonymous, and the access check refuses those).
pub(crate) fn check_scope(
    headers: &http::HeaderMap,
    query: Option<&str>,
    region: &str,
) -> Result<(), S3Error> {
    if is_sigv2(headers, query) {
        return Err(unsupported_signature());
    }
    let from_header = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .filter(|v| v.starts_with("AWS4-"))
        .and_then(|v| v.split("Credential=").nth(1))
        .map(|rest| {
            rest.split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_string()
        });
    let mut from_query = None;
    let mut expires = None;
    for (name, value) in url_pairs(query.unwrap_or_default()) {
        if name.eq_ignore_ascii_case("X-Amz-Credential") {
            from_query = Some(value);
        } else if name.eq_ignore_ascii_case("X-Amz-Expires") {
            expires = Some(value);
        }
    }
    let (credential, code) = match (from_header, from_query) {
        (Some(credential), _) => (credential, "AuthorizationHeaderMalformed"),
        (None, Some(credential)) => (credential, "AuthorizationQueryParametersError"),
        (None, None) => return Ok(()),
    };
    let malformed = |message: String| {
        let mut err =
            S3Error::with_message(code.parse().unwrap_or(S3ErrorCode::InvalidRequest), message);
        err.set_status_code(http::StatusCode::BAD_REQUEST);
        err
    };
    // <key>/<date>/<region>/<service>/aws4_request; the key id itself may not contain '/'.
    let parts: Vec<&str> = credential.split('/').collect();
    let [_, _, signed_region, service, "aws4_request"] = parts.as_slice() else {
        return Err(malformed(format!(
            "The credential {credential:?} is malformed"
        )));
    };
    if *signed_region != region {
        return Err(malformed(format!(
            "The authorization header is malformed; the region '{signed_region}' is wrong; expecting '{region}'"
        )));
    }
    if *service != "s3" {
        return Err(malformed(format!(
            "The credential is scoped to service '{service}'; expecting 's3'"
        )));
    }
    if let Some(expires) = expires {
        match expires.parse::<u64>() {
            Ok(secs) if secs <= MAX_PRESIGNED_EXPIRY_SECS => {}
            Ok(_) => {
                return Err(malformed(format!(
                    "X-Amz-Expires must be less than a week (in seconds) that is {MAX_PRESIGNED_EXPIRY_SECS}"
                )));
            }
            Err(_) => return Err(malformed("X-Amz-Expires should be a number".to_string())),
        }
    }
    Ok(())
}

/// The decoded name/value pairs of a query string.
fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        (decode(name), decode(value))
    })
}

/// Who is calling and which table the bucket is, established once per request by [`TableAccess`], with what
/// further authorization needs (CopyObject's source table).
#[derive(Clone, Debug)]
pub(crate) struct S3Context {
    /// The verified caller.
    pub principal: Principal,
    /// The bucket's table (absent for requests without a bucket).
    pub table: Option<TableStorage>,
    /// The IAM service.
    pub iam: Iam,
    /// Source address and request id.
    pub access: AccessContext,
}

/// Looks up secrets for s3s's signature verification.
pub(crate) struct KeyStore {
    pub iam: Iam,
}

fn unknown_key() -> S3Error {
    S3Error::with_message(
        S3ErrorCode::InvalidAccessKeyId,
        "The AWS Access Key Id you provided does not exist in our records.",
    )
}

#[async_trait::async_trait]
impl S3Auth for KeyStore {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        match lookup(&self.iam, access_key).await {
            Ok(key) => Ok(SecretKey::from(key.secret())),
            Err(AuthError::Unavailable) => Err(S3Error::with_message(
                S3ErrorCode::ServiceUnavailable,
                "Please retry",
            )),
            Err(_) => Err(unknown_key()),
        }
    }
}

/// The outcome of an access check, carried into a second run of the same request that s3s sees as anonymous
/// (`range.rs`: the run without a `Range` header S3 ignores). Only the server inserts it into a request's
/// extensions; nothing from the wire can.
#[derive(Clone, Debug)]
pub(crate) struct PreAuthorized {
    /// The operation it was granted for; another operation is not covered.
    operation: &'static str,
    context: S3Context,
}

/// The per-request access check: session token, principal, bucket → table, action, [`authorize`].
pub(crate) struct TableAccess {
    pub catalog: Catalog,
    pub iam: Iam,
}

#[async_trait::async_trait]
impl S3Access for TableAccess {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let operation = operation_label(cx.s3_op().name());
        let request = cx.extensions_mut().get::<RequestContext>().cloned();
        if let Some(request) = &request {
            request.set_operation(operation);
        }
        let Some(credentials) = cx.credentials() else {
            if let Some(pre) = cx.extensions_mut().remove::<PreAuthorized>()
                && pre.operation == operation
            {
                cx.extensions_mut().insert(pre.context);
                return Ok(());
            }
            return Err(S3Error::with_message(
                S3ErrorCode::AccessDenied,
                "Anonymous access is not allowed",
            ));
        };
        let key = match lookup(&self.iam, &credentials.access_key).await {
            Ok(key) => key,
            Err(AuthError::Unavailable) => {
                return Err(S3Error::with_message(
                    S3ErrorCode::ServiceUnavailable,
                    "Please retry",
                ));
            }
            Err(_) => return Err(unknown_key()),
        };
        let token = session_token(cx.headers(), cx.uri().query());
        key.check_session_token(token.as_deref(), chrono::Utc::now())
            .map_err(|e| token_error(&e))?;
        let principal = key.into_principal();
        if let Some(request) = &request {
            request.set_principal(&principal.arn);
        }
        let request_id = request
            .as_ref()
            .map(|r| r.request_id.to_string())
            .unwrap_or_default();
        let source_ip = cx
            .extensions_mut()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        let access = AccessContext {
            source_ip,
            request_id,
        };
        let table = match (cx.s3_path().get_bucket_name(), action_of(operation)) {
            (Some(bucket), Some(action)) => {
                let table = self
                    .catalog
                    .table_storage(bucket)
                    .await
                    .map_err(|e| catalog_error(e, request.as_ref()))?
                    .ok_or_else(|| no_such_bucket(request.as_ref()))?;
                if let Some(request) = &request {
                    request.set_subject(
                        &table.arn.bucket,
                        cx.s3_path().get_object_key().map(str::to_string),
                    );
                }
                authorize(&self.iam, &principal, action, &table, &access).await?;
                Some(table)
            }
            _ => None,
        };
        let context = S3Context {
            principal,
            table,
            iam: self.iam.clone(),
            access,
        };
        if let Some(request) = &request {
            request.set_authorized(PreAuthorized {
                operation,
                context: context.clone(),
            });
        }
        cx.extensions_mut().insert(context);
        Ok(())
    }
}

/// Virtual-hosted-style addressing: a `Host` whose first label is a table bucket (`<table-id>--table-s3.<any
/// host>`) names that bucket; any other host (`localhost`, a load balancer's name) is path-style. s3s itself
/// treats IP-address hosts as path-style.
pub(crate) struct TableHost;

impl S3Host for TableHost {
    fn parse_host_header<'a>(&'a self, host: &'a str) -> S3Result<VirtualHost<'a>> {
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        };
        if let Some((first, rest)) = name.split_once('.')
            && TableLocation::table_of_bucket(first).is_some()
        {
            return Ok(VirtualHost::new(rest).with_bucket(first));
        }
        Ok(VirtualHost::new(host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    /// Every operation the data plane serves, with the action it needs (the router table of STYLE.md).
    #[test]
    fn operations_and_actions() {
        use DataAction::*;
        for (operation, action) in [
            ("GetObject", Some(GetTableData)),
            ("HeadObject", Some(GetTableData)),
            ("ListObjects", Some(GetTableData)),
            ("ListObjectsV2", Some(GetTableData)),
            ("HeadBucket", Some(GetTableData)),
            ("GetBucketLocation", Some(GetTableData)),
            ("ListParts", Some(GetTableData)),
            ("ListMultipartUploads", Some(GetTableData)),
            ("PutObject", Some(PutTableData)),
            ("CopyObject", Some(PutTableData)),
            ("DeleteObject", Some(PutTableData)),
            ("DeleteObjects", Some(PutTableData)),
            ("CreateMultipartUpload", Some(PutTableData)),
            ("UploadPart", Some(PutTableData)),
            ("CompleteMultipartUpload", Some(PutTableData)),
            ("AbortMultipartUpload", Some(PutTableData)),
            ("ListBuckets", None),
            ("PutBucketPolicy", None),
        ] {
            assert_eq!(action_of(operation), action, "{operation}");
        }
    }

    #[test]
    fn credential_scopes() {
        let header = |credential: &str| {
            let mut h = http::HeaderMap::new();
            let value = format!(
                "AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host, Signature=ab"
            );
            h.insert(http::header::AUTHORIZATION, value.parse().unwrap());
            h
        };
        let none = http::HeaderMap::new();
        let code = |r: Result<(), S3Error>| r.err().map(|e| e.code().as_str().to_string());
        assert_eq!(
            code(check_scope(
                &header("AK/20260101/us-east-1/s3/aws4_request"),
                None,
                "us-east-1"
            )),
            None
        );
        assert_eq!(
            code(check_scope(
                &header("AK/20260101/eu-west-1/s3/aws4_request"),
                None,
                "us-east-1"
            ))
            .as_deref(),
            Some("AuthorizationHeaderMalformed")
        );
        assert!(
            check_scope(
                &header("AK/20260101/us-east-1/s3tables/aws4_request"),
                None,
                "us-east-1"
            )
            .is_err()
        );
        assert!(check_scope(&header("garbage"), None, "us-east-1").is_err());
        let query = |expires: &str| {
            format!(
                "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires={expires}"
            )
        };
        assert_eq!(
            code(check_scope(&none, Some(&query("604800")), "us-east-1")),
            None
        );
        assert_eq!(
            code(check_scope(&none, Some(&query("604801")), "us-east-1")).as_deref(),
            Some("AuthorizationQueryParametersError")
        );
        assert!(check_scope(&none, Some(&query("soon")), "us-east-1").is_err());
        assert_eq!(
            code(check_scope(&none, Some("list-type=2"), "us-east-1")),
            None
        );
        assert_eq!(code(check_scope(&none, None, "us-east-1")), None);
    }

    #[test]
    fn signature_version_2_is_refused() {
        let refused = |headers: &http::HeaderMap, query: Option<&str>| {
            let err = check_scope(headers, query, "us-east-1").unwrap_err();
            assert_eq!(err.code().as_str(), "InvalidRequest");
            assert_eq!(err.status_code(), Some(http::StatusCode::BAD_REQUEST));
            assert!(
                err.message()
                    .unwrap_or_default()
                    .contains("AWS4-HMAC-SHA256")
            );
        };
        let mut v2 = http::HeaderMap::new();
        v2.insert(
            http::header::AUTHORIZATION,
            "AWS AKIDEXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="
                .parse()
                .unwrap(),
        );
        refused(&v2, None);
        let none = http::HeaderMap::new();
        refused(
            &none,
            Some("AWSAccessKeyId=AK&Expires=1700000000&Signature=abc%3D"),
        );
        refused(&none, Some("Signature=abc"));
        refused(&none, Some("awsaccesskeyid=AK"));
        // A V2 URL with a SigV4 header is still V2 to s3s (it checks V2 first).
        let mut both = http::HeaderMap::new();
        both.insert(
            http::header::AUTHORIZATION,
            "AWS4-HMAC-SHA256 Credential=AK/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab"
                .parse()
                .unwrap(),
        );
        refused(&both, Some("Signature=abc"));
        assert!(check_scope(&both, Some("X-Amz-Signature=abc"), "us-east-1").is_ok());
    }

    #[test]
    fn virtual_hosts() {
        let id = Uuid::now_v7();
        let bucket = format!("{id}--table-s3");
        for (host, want) in [
            (format!("{bucket}.s3.example.com"), Some(bucket.as_str())),
            (format!("{bucket}.localhost:9000"), Some(bucket.as_str())),
            (format!("{bucket}.tablebay"), Some(bucket.as_str())),
            ("localhost:9000".to_string(), None),
            ("s3.example.com".to_string(), None),
            ("other--table-s3.example.com".to_string(), None),
            (format!("{}--table-s3.example.com", id.simple()), None),
        ] {
            let vh = TableHost.parse_host_header(&host).unwrap();
            assert_eq!(vh.bucket(), want, "{host}");
        }
    }
}
