//! `Range` headers S3 ignores. S3 answers 200 with the whole object when the header of a GET or HEAD is not one
//! byte range it can use: an invalid range (`bytes=9-5`), several ranges (`bytes=0-1,3-4`), another unit, or
//! several `Range` headers (RFC 9110 §14.2 lets a server ignore it). A valid range that starts past the end
//! stays, and is 416 `InvalidRange`.
//!
//! s3s refuses such a header with 400 while it parses the operation's input, and the header cannot simply be
//! removed first: SigV4 signs it. So `router.rs` runs such a request twice: once as sent, where s3s verifies the
//! signature and the access check authorizes the request before the header is refused; then, when that
//! authorization happened, once more as [`second_pass`] builds it: without the header and without its
//! signature, carrying the first run's authorization ([`super::auth::PreAuthorized`]).

use axum::body::Body;
use axum::extract::Request;
use http::{Method, header};

/// Whether `request` is a GET or HEAD whose `Range` header S3 would ignore.
pub(crate) fn is_ignored(request: &Request) -> bool {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return false;
    }
    let mut values = request.headers().get_all(header::RANGE).iter();
    match (values.next(), values.next()) {
        (None, _) => false,
        (Some(value), None) => !value
            .to_str()
            .is_ok_and(|text| s3s::dto::Range::parse(text).is_ok()),
        (Some(_), Some(_)) => true,
    }
}

/// Query parameters of SigV4 presigned URLs.
fn is_presign_parameter(pair: &str) -> bool {
    let name = pair.split('=').next().unwrap_or_default();
    name.len() > 6
        && name
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("X-Amz-"))
}

/// `request` without its `Range` header and without its authentication (the `Authorization` and
/// `x-amz-security-token` headers, the `X-Amz-*` query of a presigned URL): s3s sees it as anonymous, and the
/// access check relies on the authorization the caller adds. Same method, path, other query parameters, other
/// headers and extensions; GET and HEAD have no body.
pub(crate) fn second_pass(request: &Request) -> Request {
    let mut uri = request.uri().clone();
    if let Some(query) = request.uri().query() {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.is_empty() && !is_presign_parameter(pair))
            .collect();
        let path_and_query = if kept.is_empty() {
            request.uri().path().to_string()
        } else {
            format!("{}?{}", request.uri().path(), kept.join("&"))
        };
        let mut parts = request.uri().clone().into_parts();
        if let Ok(pq) = path_and_query.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(stripped) = http::Uri::from_parts(parts) {
                uri = stripped;
            }
        }
    }
    let mut headers = request.headers().clone();
    for name in [
        header::RANGE,
        header::AUTHORIZATION,
        header::HeaderName::from_static("x-amz-security-token"),
    ] {
        headers.remove(name);
    }
    let mut out = Request::new(Body::empty());
    *out.method_mut() = request.method().clone();
    *out.uri_mut() = uri;
    *out.version_mut() = request.version();
    *out.headers_mut() = headers;
    *out.extensions_mut() = request.extensions().clone();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(range: &[&str]) -> Request {
        let mut builder = Request::builder().method(Method::GET).uri("/b/k");
        for value in range {
            builder = builder.header(header::RANGE, *value);
        }
        builder.body(Body::empty()).unwrap()
    }

    #[test]
    fn ranges_s3_ignores() {
        for ignored in [
            &["bytes=9-5"][..],
            &["bytes=0-1,3-4"],
            &["bytes=abc"],
            &["items=0-1"],
            &["bytes=0-1", "bytes=2-3"],
        ] {
            assert!(is_ignored(&get(ignored)), "{ignored:?}");
        }
        for used in [&[][..], &["bytes=0-1"], &["bytes=1000-"], &["bytes=-5"]] {
            assert!(!is_ignored(&get(used)), "{used:?}");
        }
        let put = Request::builder()
            .method(Method::PUT)
            .uri("/b/k")
            .header(header::RANGE, "bytes=9-5")
            .body(Body::empty())
            .unwrap();
        assert!(!is_ignored(&put));
    }

    #[test]
    fn the_second_pass_drops_range_and_authentication() {
        let request = Request::builder()
            .method(Method::GET)
            .uri("http://h/b/k?partNumber=1&X-Amz-Algorithm=AWS4-HMAC-SHA256&x-amz-signature=ab&response-content-type=a%2Fb")
            .header(header::RANGE, "bytes=9-5")
            .header(header::AUTHORIZATION, "AWS4-HMAC-SHA256 x")
            .header("x-amz-security-token", "t")
            .header("if-match", "\"e\"")
            .body(Body::empty())
            .unwrap();
        let second = second_pass(&request);
        assert_eq!(second.method(), Method::GET);
        assert_eq!(
            second.uri().to_string(),
            "http://h/b/k?partNumber=1&response-content-type=a%2Fb"
        );
        assert!(!second.headers().contains_key(header::RANGE));
        assert!(!second.headers().contains_key(header::AUTHORIZATION));
        assert!(!second.headers().contains_key("x-amz-security-token"));
        assert_eq!(second.headers()["if-match"], "\"e\"");
        let bare = second_pass(&get(&["bytes=9-5"]));
        assert_eq!(bare.uri(), "/b/k");
    }
}
