//! The S3 listener's entry point: builds the s3s service (SigV4 via [`KeyStore`], per-request authorization via
//! [`TableAccess`], virtual hosts via [`TableHost`], body limits) around [`DataPlane`], and wraps every request
//! with a request id (`x-amz-request-id`, also in error bodies), one structured log line and metrics.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, StatusCode};
use s3s::config::{S3Config, StaticConfigProvider};
use s3s::service::{S3Service, S3ServiceBuilder};
use tower::ServiceExt;

use super::auth::{KeyStore, PreAuthorized, TableAccess, TableHost, check_scope};
use super::chunked::require_final_chunk;
use super::range;
use super::service::DataPlane;
use crate::access_record::{self, Answer, RequestLine};
use crate::state::AppState;
use tablebay_catalog::BucketArn;

/// Largest XML request body (CompleteMultipartUpload with 10000 parts is about 1.3 MB; DeleteObjects with 1000
/// keys of 1 KiB about 1.1 MB).
const MAX_XML_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The table bucket a request is about, and the object key.
type Subject = (BucketArn, Option<String>);

/// Per-request facts the wrapper uses, filled in by the access check: the operation and the principal (for the
/// log line), and the authorization granted (for a second run, `range.rs`). Cloned into the request's
/// extensions; the clones share one slot.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    /// The id in `x-amz-request-id` and in error bodies.
    pub request_id: Arc<str>,
    seen: Arc<Mutex<(&'static str, String)>>,
    authorized: Arc<Mutex<Option<PreAuthorized>>>,
    /// The table bucket and object key of a request on a logged bucket (server access logging).
    subject: Arc<Mutex<Option<Subject>>>,
}

impl RequestContext {
    fn new() -> Self {
        Self {
            request_id: Arc::from(uuid::Uuid::new_v4().simple().to_string().to_uppercase()),
            seen: Arc::new(Mutex::new(("unknown", "-".to_string()))),
            authorized: Arc::new(Mutex::new(None)),
            subject: Arc::new(Mutex::new(None)),
        }
    }

    /// Records the table bucket and key the request is about.
    pub(crate) fn set_subject(&self, bucket: &BucketArn, key: Option<String>) {
        if let Ok(mut subject) = self.subject.lock() {
            *subject = Some((bucket.clone(), key));
        }
    }

    fn take_subject(&self) -> Option<Subject> {
        self.subject.lock().ok().and_then(|mut s| s.take())
    }

    /// Records that the access check authorized the request.
    pub(crate) fn set_authorized(&self, authorized: PreAuthorized) {
        if let Ok(mut slot) = self.authorized.lock() {
            *slot = Some(authorized);
        }
    }

    /// The authorization the access check granted, if it did.
    fn authorized(&self) -> Option<PreAuthorized> {
        self.authorized.lock().ok().and_then(|slot| slot.clone())
    }

    pub(crate) fn set_operation(&self, operation: &'static str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.0 = operation;
        }
    }

    pub(crate) fn set_principal(&self, arn: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.1 = arn.to_string();
        }
    }

    fn seen(&self) -> (&'static str, String) {
        self.seen
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or(("unknown", "-".to_string()))
    }
}

/// The router of the S3 listener: every path goes to the S3 service.
pub(crate) fn router(state: AppState) -> Router {
    let mut builder = S3ServiceBuilder::new(DataPlane {
        catalog: state.catalog.clone(),
        objects: state.objects.clone(),
    });
    builder.set_auth(KeyStore {
        iam: state.iam.clone(),
    });
    builder.set_access(TableAccess {
        catalog: state.catalog.clone(),
        iam: state.iam.clone(),
    });
    builder.set_host(TableHost);
    let mut config = S3Config::default();
    config.xml_max_body_size = MAX_XML_BODY_BYTES;
    builder.set_config(Arc::new(StaticConfigProvider::new(Arc::new(config))));
    let service = builder.build();
    Router::new().fallback(handle).with_state((state, service))
}

/// Runs one request through s3s with a request id, then logs and counts it.
async fn handle(
    State((app, service)): State<(AppState, S3Service)>,
    mut request: Request,
) -> Response {
    let started = Instant::now();
    let context = RequestContext::new();
    request.extensions_mut().insert(context.clone());
    let method = request.method().clone();
    let line = state_line(&app, &request);
    // boto3 sends PutObject and UploadPart with `Expect: 100-continue` and, given a final error instead of 100,
    // never sends the body; the connection must then close, or the next request's bytes are read as that body.
    let expects_continue = request
        .headers()
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let scope = check_scope(
        request.headers(),
        request.uri().query(),
        &app.catalog.config().region,
    );
    let outcome = match scope {
        Ok(()) => dispatch(&service, request, &context).await,
        Err(mut err) => {
            err.set_request_id(context.request_id.to_string());
            err.to_http_response()
                .map_err(|e| s3s::HttpError::new(Box::new(e)))
        }
    };
    let mut response = match outcome {
        Ok(response) => response.map(axum::body::Body::new),
        Err(e) => {
            let error_id = uuid::Uuid::new_v4();
            tracing::error!(%error_id, error = ?e, "s3 service failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal error {error_id}"),
            )
                .into_response()
        }
    };
    if expects_continue
        && (response.status().is_client_error() || response.status().is_server_error())
    {
        response
            .headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    if response.status() == StatusCode::NOT_MODIFIED {
        // s3s renders NotModified like any error, as an XML body; a 304 carries none (RFC 9110 §15.4.5).
        let headers = response.headers_mut();
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::CONTENT_TYPE);
        *response.body_mut() = axum::body::Body::empty();
    }
    let (operation, principal) = context.seen();
    if let (Some(line), Some((bucket, key))) = (line, context.take_subject()) {
        access_record::record(
            &app,
            &line,
            (&bucket, key),
            Answer {
                surface: "s3",
                operation,
                request_id: &context.request_id,
                principal: Some(&principal),
                // s3s renders its errors itself; the status is recorded, the code is not.
                error_code: None,
                total_time: started.elapsed(),
            },
            &response,
        );
    }
    crate::pipeline::finish(
        &app,
        "s3",
        HeaderName::from_static("x-amz-request-id"),
        &method,
        response,
        &context.request_id,
        started,
        operation,
        Some(&principal),
    )
}

/// The request line an access log record needs, taken only when some bucket's logging is on.
fn state_line(app: &AppState, request: &Request) -> Option<RequestLine> {
    if !app.access_log.any() {
        return None;
    }
    Some(RequestLine::of_request(request))
}

/// Runs the request through s3s. A GET or HEAD with a `Range` header S3 ignores runs twice (`range.rs`): s3s
/// verifies the signature, which covers the header, and the access check authorizes the request before s3s
/// refuses the header with 400; the second run, without the header and carrying that authorization, serves the
/// whole object. A request the first run did not authorize keeps the first run's answer.
async fn dispatch(
    service: &S3Service,
    request: Request,
    context: &RequestContext,
) -> Result<http::Response<s3s::Body>, s3s::HttpError> {
    if !range::is_ignored(&request) {
        return service.clone().oneshot(require_final_chunk(request)).await;
    }
    let mut second = range::second_pass(&request);
    let first = service.clone().oneshot(request).await?;
    match context.authorized() {
        Some(authorized) if first.status() == StatusCode::BAD_REQUEST => {
            second.extensions_mut().insert(authorized);
            service.clone().oneshot(second).await
        }
        _ => Ok(first),
    }
}

/// The listener end to end in-process: SigV4 through s3s, the access check, the object service over a temporary
/// SQLite database and blob directory.
#[cfg(test)]
mod tests {
    use axum::body::Body;
    use http::{Method, Request, StatusCode};
    use sha2::{Digest, Sha256};
    use tablebay_auth::signer;
    use tablebay_catalog::{
        AccountId, ArnFlavor, BucketName, Catalog, CatalogConfig, NamespaceName, NewBucket,
        NewTable, TableName, Tags,
    };
    use tablebay_store::{BlobStore, BlobUrl, MetaStore};

    use super::*;

    const KEY: &str = "AKTEST";
    const SECRET: &str = "secret";

    struct Fixture {
        router: Router,
        bucket: String,
        _dir: tempfile::TempDir,
    }

    async fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let meta = MetaStore::connect(&format!(
            "sqlite://{}",
            dir.path().join("meta.db").display()
        ))
        .await
        .unwrap();
        let blobs = BlobStore::open(&BlobUrl::Local(dir.path().join("blobs"))).unwrap();
        let meta_for_iam = meta.clone();
        let catalog = Catalog::new(
            meta,
            blobs,
            CatalogConfig {
                region: "us-east-1".into(),
                flavor: ArnFlavor::Aws,
            },
            std::sync::Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
        );
        let account = AccountId::parse("111122223333").unwrap();
        let bucket = catalog
            .create_bucket(
                &account,
                NewBucket {
                    name: BucketName::parse("data").unwrap(),
                    encryption: None,
                    storage_class: None,
                    tags: Tags::default(),
                },
            )
            .await
            .unwrap();
        let ns = NamespaceName::parse("ns").unwrap();
        catalog
            .create_namespace(&bucket.arn, ns.clone(), Default::default(), &account)
            .await
            .unwrap();
        let new = NewTable {
            name: TableName::parse("t").unwrap(),
            format: "ICEBERG".into(),
            definition: None,
            encryption: None,
            storage_class: None,
            tags: Tags::default(),
        };
        let table = catalog
            .create_table(&bucket.arn, &ns, new, &account)
            .await
            .unwrap();
        let iam = tablebay_iam::Iam::new(
            meta_for_iam,
            catalog.clone(),
            tablebay_iam::IamConfig {
                region: "us-east-1".into(),
                flavor: ArnFlavor::Aws,
                default_account: account,
                root_access_key_id: KEY.into(),
                root_secret: SECRET.into(),
                min_session_secs: tablebay_iam::MIN_SESSION_SECS,
            },
        );
        let bucket = table
            .warehouse_location
            .trim_start_matches("s3://")
            .to_string();
        Fixture {
            router: router(AppState::new(catalog, iam)),
            bucket,
            _dir: dir,
        }
    }

    /// A path-style request signed with a hex payload hash (`secret` picks the key).
    fn request(
        method: Method,
        path: &str,
        body: &[u8],
        headers: &[(&str, &str)],
        secret: &str,
    ) -> Request<Body> {
        let mut builder = Request::builder()
            .method(method)
            .uri(format!("http://127.0.0.1:9000{path}"));
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder = builder.header("x-amz-content-sha256", hex::encode(Sha256::digest(body)));
        let (mut parts, ()) = builder.body(()).unwrap().into_parts();
        signer::sign(
            &mut parts,
            body,
            KEY,
            secret,
            "us-east-1",
            "s3",
            chrono::Utc::now(),
        )
        .unwrap();
        Request::from_parts(parts, Body::from(body.to_vec()))
    }

    async fn send(
        router: &Router,
        request: Request<Body>,
    ) -> (StatusCode, http::HeaderMap, Vec<u8>) {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), 1 << 24)
            .await
            .unwrap()
            .to_vec();
        (status, headers, body)
    }

    #[tokio::test]
    async fn put_get_head_delete() {
        let f = fixture().await;
        let path = format!("/{}/dir/file.txt", f.bucket);
        let (status, headers, _) = send(
            &f.router,
            request(Method::PUT, &path, b"hello", &[], SECRET),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["etag"], "\"5d41402abc4b2a76b9719d911017c592\"");
        assert!(headers.contains_key("x-amz-request-id"));
        let (status, headers, body) =
            send(&f.router, request(Method::GET, &path, b"", &[], SECRET)).await;
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::OK, b"hello".as_slice())
        );
        assert_eq!(headers["content-length"], "5");
        let ranged = request(Method::GET, &path, b"", &[("range", "bytes=1-3")], SECRET);
        let (status, headers, body) = send(&f.router, ranged).await;
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::PARTIAL_CONTENT, b"ell".as_slice())
        );
        assert_eq!(headers["content-range"], "bytes 1-3/5");
        let (status, _, _) =
            send(&f.router, request(Method::DELETE, &path, b"", &[], SECRET)).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, _, body) =
            send(&f.router, request(Method::GET, &path, b"", &[], SECRET)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let text = String::from_utf8(body).unwrap();
        assert!(
            text.contains("<Code>NoSuchKey</Code>") && text.contains("<RequestId>"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn ranges_s3_ignores_get_the_whole_object() {
        let f = fixture().await;
        let path = format!("/{}/r", f.bucket);
        let (status, _, _) = send(
            &f.router,
            request(Method::PUT, &path, b"0123456789", &[], SECRET),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        for range in ["bytes=9-5", "bytes=0-1,3-4"] {
            for method in [Method::GET, Method::HEAD] {
                let signed = request(method.clone(), &path, b"", &[("range", range)], SECRET);
                let (status, headers, body) = send(&f.router, signed).await;
                assert_eq!(status, StatusCode::OK, "{method} {range}");
                assert_eq!(headers["content-length"], "10", "{method} {range}");
                assert!(!headers.contains_key("content-range"), "{range}");
                if method == Method::GET {
                    assert_eq!(body, b"0123456789");
                }
            }
            // The signature still counts: a wrong one is refused, not served by a second run.
            let forged = request(Method::GET, &path, b"", &[("range", range)], "wrong");
            let (status, _, body) = send(&f.router, forged).await;
            assert_eq!(status, StatusCode::FORBIDDEN);
            assert!(!body.windows(10).any(|w| w == b"0123456789"));
        }
        let past = request(Method::GET, &path, b"", &[("range", "bytes=10-")], SECRET);
        let (status, _, body) = send(&f.router, past).await;
        assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
        assert!(String::from_utf8_lossy(&body).contains("<Code>InvalidRange</Code>"));
    }

    #[tokio::test]
    async fn integrity_failures_leave_nothing() {
        let f = fixture().await;
        let path = format!("/{}/x", f.bucket);
        let md5 = [("content-md5", "AAAAAAAAAAAAAAAAAAAAAA==")];
        let (status, _, body) =
            send(&f.router, request(Method::PUT, &path, b"abc", &md5, SECRET)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(String::from_utf8_lossy(&body).contains("BadDigest"));
        let crc = [("x-amz-checksum-crc32", "AAAAAA==")];
        let (status, _, body) =
            send(&f.router, request(Method::PUT, &path, b"abc", &crc, SECRET)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(String::from_utf8_lossy(&body).contains("BadDigest"));
        let bad_md5 = [("content-md5", "nope")];
        let (status, _, body) = send(
            &f.router,
            request(Method::PUT, &path, b"abc", &bad_md5, SECRET),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(String::from_utf8_lossy(&body).contains("InvalidDigest"));
        let (status, _, _) = send(&f.router, request(Method::HEAD, &path, b"", &[], SECRET)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        // The right CRC32 of "abc" is accepted.
        let good = [("x-amz-checksum-crc32", "NSRBwg==")];
        let (status, headers, _) = send(
            &f.router,
            request(Method::PUT, &path, b"abc", &good, SECRET),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["x-amz-checksum-crc32"], "NSRBwg==");
    }

    #[tokio::test]
    async fn authentication_and_addressing() {
        let f = fixture().await;
        let path = format!("/{}/k", f.bucket);
        let (status, _, body) =
            send(&f.router, request(Method::GET, &path, b"", &[], "wrong")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(String::from_utf8_lossy(&body).contains("SignatureDoesNotMatch"));
        let anonymous = Request::builder()
            .uri(format!("http://127.0.0.1:9000{path}"))
            .body(Body::empty())
            .unwrap();
        let (status, _, _) = send(&f.router, anonymous).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let other = "/0190f0a0-0000-7000-8000-000000000000--table-s3/k";
        let (status, _, body) =
            send(&f.router, request(Method::GET, other, b"", &[], SECRET)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(String::from_utf8_lossy(&body).contains("NoSuchBucket"));
        let (status, _, _) = send(
            &f.router,
            request(Method::GET, "/not-a-table-bucket/k", b"", &[], SECRET),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        for escape in ["a/../b", "a/%2e%2e/b", "%2E%2E/x", "./x"] {
            let path = format!("/{}/{escape}", f.bucket);
            let (status, _, _) =
                send(&f.router, request(Method::PUT, &path, b"x", &[], SECRET)).await;
            assert!(status.is_client_error(), "{escape}: {status}");
        }
        // Virtual-hosted style: the bucket in the Host header.
        let put = request(
            Method::PUT,
            "/vk",
            b"v",
            &[("host", &format!("{}.s3.example.com", f.bucket))],
            SECRET,
        );
        assert_eq!(send(&f.router, put).await.0, StatusCode::OK);
        let get = request(Method::GET, &format!("/{}/vk", f.bucket), b"", &[], SECRET);
        assert_eq!(send(&f.router, get).await.2, b"v");
    }
}
