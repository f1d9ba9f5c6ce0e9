//! The client-side counterpart of the verifier: a small, spec-following SigV4 signer.
//!
//! It signs the way botocore's `SigV4Auth` does (`reference/s3tables-api.md` §1.1): the canonical URI is
//! the wire path with dot segments removed and `UriEncode`d again (double encoding), the canonical query
//! is decoded (a raw `+` as a space, as the server reads it; botocore never sends one), re-encoded and sorted,
//! every header present is signed except the ones proxies and HTTP stacks add or change (`user-agent`,
//! `expect`, `transfer-encoding`, `connection`, `x-amzn-trace-id`),
//! and the payload hash is the hex SHA-256 of the body. Tablebay's own integration tests use it as
//! their client. The server signs with it in one place: the Iceberg REST remote signer, which signs a client's
//! data-plane request with the payload hash the client declared (`UNSIGNED-PAYLOAD` when none), never seeing the
//! body ([`sign_with_payload_hash`]).

use chrono::{DateTime, Utc};
use http::header::{AUTHORIZATION, HOST};
use http::request::Parts;
use http::uri::PathAndQuery;
use http::{HeaderName, HeaderValue, Uri};

use super::canonical::{
    ALGORITHM, AMZ_DATE_FORMAT, CanonicalRequest, Plus, UNSIGNED_PAYLOAD, canonical_headers,
    canonical_query, credential_scope, double_encoded_uri, hex_sha256, hmac_sha256, signing_key,
    string_to_sign, uri_encode,
};
use super::presigned::is_presigned;
use crate::error::AuthError;

/// Headers botocore leaves unsigned because something between client and server may add or change them.
const UNSIGNED_HEADERS: [&str; 6] = [
    "authorization",
    "connection",
    "expect",
    "transfer-encoding",
    "user-agent",
    "x-amzn-trace-id",
];

/// Everything a signature depends on besides the request itself.
#[derive(Debug, Clone, Copy)]
pub struct SigningParams<'a> {
    /// The access key id, first element of the credential.
    pub access_key_id: &'a str,
    /// The secret access key.
    pub secret_access_key: &'a str,
    /// A session token, sent (and signed) as `x-amz-security-token` / `X-Amz-Security-Token`.
    pub session_token: Option<&'a str>,
    /// The region of the credential scope.
    pub region: &'a str,
    /// The service of the credential scope (`s3tables`, `osstables`, …).
    pub service: &'a str,
    /// The signing time.
    pub time: DateTime<Utc>,
}

/// Signs a request in place, as botocore does: sets `x-amz-date` (replacing any), signs every header
/// present except `user-agent`, `expect`, `transfer-encoding`, `connection` and `x-amzn-trace-id`, and
/// sets `Authorization`. The `Host` header must already be
/// present, or the URI must carry an authority (it is then copied into a `Host` header).
pub fn sign(
    parts: &mut Parts,
    body: &[u8],
    access_key: &str,
    secret: &str,
    region: &str,
    service: &str,
    now: DateTime<Utc>,
) -> Result<(), AuthError> {
    let params = SigningParams {
        access_key_id: access_key,
        secret_access_key: secret,
        session_token: None,
        region,
        service,
        time: now,
    };
    sign_with(parts, body, &params)
}

/// The hex SHA-256 of a body: the `x-amz-content-sha256` value of a signed payload (S3 wants it as a header).
pub fn payload_hash(body: &[u8]) -> String {
    hex_sha256(body)
}

/// [`sign`] with all parameters, including a session token (added as a signed `x-amz-security-token`).
pub fn sign_with(
    parts: &mut Parts,
    body: &[u8],
    params: &SigningParams<'_>,
) -> Result<(), AuthError> {
    sign_with_payload_hash(parts, &hex_sha256(body), params)
}

/// [`sign_with`] for a body the signer does not have: `payload` is the `x-amz-content-sha256` value the
/// canonical request carries (`UNSIGNED-PAYLOAD`, a streaming form, or a hex SHA-256 that the verifier checks
/// against the body). The header itself is not set here: the caller sends it.
pub fn sign_with_payload_hash(
    parts: &mut Parts,
    payload: &str,
    params: &SigningParams<'_>,
) -> Result<(), AuthError> {
    ensure_host(parts)?;
    // The verifier refuses a request authenticated both ways; so does the signer, rather than sign one.
    if parts.uri.query().is_some_and(is_presigned) {
        return Err(AuthError::Malformed(
            "the query carries presigned authentication parameters (X-Amz-*)".into(),
        ));
    }
    let amz_date = params.time.format(AMZ_DATE_FORMAT).to_string();
    parts.headers.remove(AUTHORIZATION);
    parts.headers.insert(
        HeaderName::from_static("x-amz-date"),
        header_value(&amz_date)?,
    );
    if let Some(token) = params.session_token {
        parts.headers.insert(
            HeaderName::from_static("x-amz-security-token"),
            header_value(token)?,
        );
    }

    let mut names: Vec<String> = parts
        .headers
        .keys()
        .map(|name| name.as_str().to_owned())
        .filter(|name| !UNSIGNED_HEADERS.contains(&name.as_str()))
        .collect();
    names.sort();
    names.dedup();
    let signed_headers = names.join(";");
    let headers = canonical_headers(&parts.headers, None, &names);
    let uri = double_encoded_uri(parts.uri.path());
    let query = canonical_query(parts.uri.query().unwrap_or(""), Plus::Space, false);
    let canonical = CanonicalRequest {
        method: parts.method.as_str(),
        uri: &uri,
        query: &query,
        headers: &headers,
        signed_headers: &signed_headers,
        payload,
    };
    let signature = signature(params, &amz_date, &canonical.to_bytes());
    let date = amz_date.get(..8).unwrap_or_default();
    let authorization = format!(
        "{ALGORITHM} Credential={}/{}, SignedHeaders={signed_headers}, Signature={signature}",
        params.access_key_id,
        credential_scope(date, params.region, params.service),
    );
    parts
        .headers
        .insert(AUTHORIZATION, header_value(&authorization)?);
    Ok(())
}

/// Turns the request into a presigned URL valid for `expires_secs` (at most 604800): appends the
/// `X-Amz-*` parameters and `X-Amz-Signature` to the query. Only `host` is signed and the payload is
/// `UNSIGNED-PAYLOAD`, as for S3 presigned URLs.
pub fn presign(
    parts: &mut Parts,
    params: &SigningParams<'_>,
    expires_secs: u32,
) -> Result<(), AuthError> {
    ensure_host(parts)?;
    let amz_date = params.time.format(AMZ_DATE_FORMAT).to_string();
    let date = amz_date.get(..8).unwrap_or_default();
    let credential = format!(
        "{}/{}",
        params.access_key_id,
        credential_scope(date, params.region, params.service)
    );
    let expires = expires_secs.to_string();
    let mut auth_params = vec![
        ("X-Amz-Algorithm", ALGORITHM),
        ("X-Amz-Credential", credential.as_str()),
        ("X-Amz-Date", amz_date.as_str()),
        ("X-Amz-Expires", expires.as_str()),
        ("X-Amz-SignedHeaders", "host"),
    ];
    if let Some(token) = params.session_token {
        auth_params.push(("X-Amz-Security-Token", token));
    }
    let mut query = parts.uri.query().unwrap_or("").to_owned();
    for (key, value) in auth_params {
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str(key);
        query.push('=');
        uri_encode(value.as_bytes(), false, &mut query);
    }

    let names = ["host".to_owned()];
    let headers = canonical_headers(&parts.headers, None, &names);
    let uri = double_encoded_uri(parts.uri.path());
    let canonical_query = canonical_query(&query, Plus::Space, false);
    let canonical = CanonicalRequest {
        method: parts.method.as_str(),
        uri: &uri,
        query: &canonical_query,
        headers: &headers,
        signed_headers: "host",
        payload: UNSIGNED_PAYLOAD,
    };
    let signature = signature(params, &amz_date, &canonical.to_bytes());
    query.push_str("&X-Amz-Signature=");
    query.push_str(&signature);

    let path_and_query = PathAndQuery::try_from(format!("{}?{query}", parts.uri.path()))
        .map_err(|_| AuthError::Malformed("cannot build the presigned URI".into()))?;
    let mut uri_parts = parts.uri.clone().into_parts();
    uri_parts.path_and_query = Some(path_and_query);
    parts.uri = Uri::from_parts(uri_parts)
        .map_err(|_| AuthError::Malformed("cannot build the presigned URI".into()))?;
    Ok(())
}

fn signature(params: &SigningParams<'_>, amz_date: &str, canonical_request: &[u8]) -> String {
    let date = amz_date.get(..8).unwrap_or_default();
    let key = signing_key(
        params.secret_access_key,
        date,
        params.region,
        params.service,
    );
    let scope = credential_scope(date, params.region, params.service);
    hex::encode(hmac_sha256(
        &key,
        string_to_sign(amz_date, &scope, canonical_request).as_bytes(),
    ))
}

/// Makes sure a `Host` header is present, copying the URI authority if needed.
fn ensure_host(parts: &mut Parts) -> Result<(), AuthError> {
    if parts.headers.contains_key(HOST) {
        return Ok(());
    }
    let authority = parts.uri.authority().ok_or_else(|| {
        AuthError::Malformed("the request needs a Host header or an absolute URI".into())
    })?;
    let value = header_value(authority.as_str())?;
    parts.headers.insert(HOST, value);
    Ok(())
}

fn header_value(value: &str) -> Result<HeaderValue, AuthError> {
    HeaderValue::from_str(value).map_err(|_| AuthError::Malformed("invalid header value".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap().into_parts().0
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    // AWS test suite (aws-c-auth `v4/`) get-vanilla and get-vanilla-query-order-key-case.
    #[test]
    fn reproduces_suite_signatures() {
        for (uri, expected) in [
            (
                "/",
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
            ),
            (
                "/?Param2=value2&Param1=value1",
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
        ] {
            let mut p = parts(
                "GET",
                uri,
                &[("host", "example.amazonaws.com"), ("user-agent", "x")],
            );
            sign(
                &mut p,
                b"",
                "AKIDEXAMPLE",
                SECRET,
                "us-east-1",
                "service",
                at("2015-08-30T12:36:00Z"),
            )
            .unwrap();
            assert_eq!(
                p.headers[AUTHORIZATION],
                format!(
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                     SignedHeaders=host;x-amz-date, Signature={expected}"
                )
            );
            assert_eq!(p.headers["x-amz-date"], "20150830T123600Z");
        }
    }

    // Found by the sigv4_header fuzz target: the signer signed a query holding `X-Amz-Signature`, which the
    // verifier (rightly) refuses as authenticated both ways.
    #[test]
    fn refuses_a_query_with_presigned_parameters() {
        for uri in [
            "/t?X-Amz-Signature",
            "/t?a=1&X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "/t?X%2DAmz%2DCredential=x",
        ] {
            let mut p = parts("GET", uri, &[("host", "example.amazonaws.com")]);
            let signed = sign(
                &mut p,
                b"",
                "AKIDEXAMPLE",
                SECRET,
                "us-east-1",
                "s3",
                at("2015-08-30T12:36:00Z"),
            );
            assert!(matches!(signed, Err(AuthError::Malformed(_))), "{uri}");
        }
    }

    #[test]
    fn host_from_authority() {
        let mut p = parts("GET", "http://127.0.0.1:8765/buckets", &[]);
        sign(
            &mut p,
            b"",
            "AK",
            "S",
            "us-east-1",
            "s3tables",
            at("2026-01-01T00:00:00Z"),
        )
        .unwrap();
        assert_eq!(p.headers[HOST], "127.0.0.1:8765");
        let mut p = parts("GET", "/buckets", &[]);
        assert!(
            sign(
                &mut p,
                b"",
                "AK",
                "S",
                "us-east-1",
                "s3tables",
                at("2026-01-01T00:00:00Z")
            )
            .is_err()
        );
    }

    #[test]
    fn presigns() {
        let mut p = parts("GET", "/buckets?maxBuckets=10", &[("host", "h")]);
        let params = SigningParams {
            access_key_id: "AK",
            secret_access_key: "S",
            session_token: Some("tok+/="),
            region: "us-east-1",
            service: "s3tables",
            time: at("2026-01-01T00:00:00Z"),
        };
        presign(&mut p, &params, 60).unwrap();
        let q = p.uri.query().unwrap();
        assert!(q.starts_with(
            "maxBuckets=10&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20260101%2F"
        ));
        assert!(q.contains("&X-Amz-Security-Token=tok%2B%2F%3D&X-Amz-Signature="));
    }
}
