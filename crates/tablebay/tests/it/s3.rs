//! The S3 data plane against the real binary, signed by `tablebay-auth`'s client signer: a table's storage
//! bucket takes PUT/GET/HEAD/DELETE and ListObjectsV2 with a hex payload hash and with `UNSIGNED-PAYLOAD`,
//! ranged reads, presigned GETs; other buckets are `NoSuchBucket` and a wrong secret is
//! `SignatureDoesNotMatch`. The wide client coverage (boto3, the Java SDK, pyarrow, aws-chunked forms,
//! checksums, multipart) is in `clients/`; this is the `cargo test` smoke of the same surface.

// Test helpers outside `#[test]` functions, which clippy's `allow-*-in-tests` does not cover.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use http::{Method, Method as M, Request, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::server::{ACCESS_KEY, REGION, SECRET, TestServer, seg};

/// Creates a bucket, namespace and table through the control plane; returns the table's storage bucket.
pub(crate) async fn new_table(server: &TestServer, bucket: &str) -> String {
    let created: Value = server
        .call(M::PUT, "/buckets", json!({"name": bucket}))
        .await
        .json()
        .await
        .unwrap();
    let arn = seg(created["arn"].as_str().unwrap());
    let ns = server
        .call(
            M::PUT,
            &format!("/namespaces/{arn}"),
            json!({"namespace": ["data"]}),
        )
        .await;
    assert_eq!(ns.status(), StatusCode::OK);
    let table = server
        .call(
            M::PUT,
            &format!("/tables/{arn}/data"),
            json!({"name": "t", "format": "ICEBERG"}),
        )
        .await;
    assert_eq!(table.status(), StatusCode::OK);
    let location: Value = server
        .call(
            M::GET,
            &format!("/tables/{arn}/data/t/metadata-location"),
            Value::Null,
        )
        .await
        .json()
        .await
        .unwrap();
    let warehouse = location["warehouseLocation"].as_str().unwrap();
    let name = warehouse.strip_prefix("s3://").unwrap().to_string();
    assert!(name.ends_with("--table-s3"), "{warehouse}");
    name
}

/// An S3 request signed for service `s3`; `unsigned_payload` sends `UNSIGNED-PAYLOAD` instead of the hash.
pub(crate) async fn s3(
    server: &TestServer,
    method: Method,
    path: &str,
    body: &[u8],
    extra: &[(&str, &str)],
    secret: &str,
    unsigned_payload: bool,
) -> reqwest::Response {
    try_s3(server, method, path, body, extra, secret, unsigned_payload)
        .await
        .unwrap()
}

/// [`s3`] as the instance's root, with the body's hash and no extra headers.
pub(crate) async fn s3_signed(
    server: &TestServer,
    method: Method,
    path: &str,
    body: &[u8],
) -> reqwest::Response {
    s3(server, method, path, body, &[], SECRET, false).await
}

/// [`s3`], for a request whose answer may be cut off.
pub(crate) async fn try_s3(
    server: &TestServer,
    method: Method,
    path: &str,
    body: &[u8],
    extra: &[(&str, &str)],
    secret: &str,
    unsigned_payload: bool,
) -> reqwest::Result<reqwest::Response> {
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("{}{path}", server.s3_url));
    let payload = if unsigned_payload {
        "UNSIGNED-PAYLOAD".to_string()
    } else {
        hex::encode(Sha256::digest(body))
    };
    builder = builder.header("x-amz-content-sha256", payload.as_str());
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    let (mut parts, ()) = builder.body(()).unwrap().into_parts();
    // The crate's signer always puts the body's hash in the canonical request, which matches the
    // x-amz-content-sha256 header set above; UNSIGNED-PAYLOAD needs its own canonical request.
    if unsigned_payload {
        sign_unsigned_payload(&mut parts, secret);
    } else {
        crate::server::sign(&mut parts, body, ACCESS_KEY, secret, "s3");
    }
    server.try_send_parts(parts, body).await
}

/// SigV4 with `UNSIGNED-PAYLOAD` as the canonical payload (the crate's signer always hashes the body).
fn sign_unsigned_payload(parts: &mut http::request::Parts, secret: &str) {
    use hmac::{Hmac, Mac};
    type HmacSha256 = Hmac<Sha256>;
    fn mac(key: &[u8], data: &str) -> Vec<u8> {
        let mut m = HmacSha256::new_from_slice(key).unwrap();
        m.update(data.as_bytes());
        m.finalize().into_bytes().to_vec()
    }
    let now = chrono::Utc::now();
    let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
    let day = &amz_date[..8];
    let host = parts.uri.authority().unwrap().to_string();
    parts.headers.insert("host", host.parse().unwrap());
    parts
        .headers
        .insert("x-amz-date", amz_date.parse().unwrap());
    let mut names: Vec<String> = parts
        .headers
        .keys()
        .map(|n| n.as_str().to_string())
        .collect();
    names.sort();
    let canonical_headers: String = names
        .iter()
        .map(|n| {
            format!(
                "{n}:{}\n",
                parts.headers[n.as_str()].to_str().unwrap().trim()
            )
        })
        .collect();
    let signed = names.join(";");
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\nUNSIGNED-PAYLOAD",
        parts.method,
        parts.uri.path(),
        parts.uri.query().unwrap_or("")
    );
    let scope = format!("{day}/{REGION}/s3/aws4_request");
    let sts = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical.as_bytes()))
    );
    let key = mac(
        &mac(
            &mac(&mac(format!("AWS4{secret}").as_bytes(), day), REGION),
            "s3",
        ),
        "aws4_request",
    );
    let signature = hex::encode(mac(&key, &sts));
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, SignedHeaders={signed}, Signature={signature}"
    );
    parts.headers.insert("authorization", auth.parse().unwrap());
}

pub(crate) fn error_code(text: &str) -> Option<&str> {
    let start = text.find("<Code>")? + "<Code>".len();
    let end = text[start..].find("</Code>")? + start;
    Some(&text[start..end])
}

#[tokio::test]
async fn objects_round_trip_in_a_table_bucket() {
    let server = TestServer::start();
    let bucket = new_table(&server, "s3-smoke").await;
    let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();

    let put = s3_signed(&server, M::PUT, &format!("/{bucket}/data/a.bin"), &body).await;
    assert_eq!(put.status(), StatusCode::OK, "{:?}", put.text().await);
    let etag = put.headers()["etag"].to_str().unwrap().to_string();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() == 34,
        "{etag}"
    );

    let put2 = s3(
        &server,
        M::PUT,
        &format!("/{bucket}/data/b.bin"),
        &body[..10],
        &[],
        SECRET,
        true,
    )
    .await;
    assert_eq!(put2.status(), StatusCode::OK, "{:?}", put2.text().await);

    let head = s3_signed(&server, M::HEAD, &format!("/{bucket}/data/a.bin"), b"").await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(
        head.headers()["content-length"].to_str().unwrap(),
        body.len().to_string()
    );
    assert_eq!(head.headers()["etag"].to_str().unwrap(), etag);

    let get = s3_signed(&server, M::GET, &format!("/{bucket}/data/a.bin"), b"").await;
    assert_eq!(get.status(), StatusCode::OK);
    assert_eq!(get.bytes().await.unwrap().as_ref(), &body[..]);

    let ranged = s3(
        &server,
        M::GET,
        &format!("/{bucket}/data/a.bin"),
        b"",
        &[("range", "bytes=-5")],
        SECRET,
        false,
    )
    .await;
    assert_eq!(ranged.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(
        ranged.bytes().await.unwrap().as_ref(),
        &body[body.len() - 5..]
    );

    let list = s3_signed(
        &server,
        M::GET,
        &format!("/{bucket}?list-type=2&prefix=data%2F"),
        b"",
    )
    .await;
    assert_eq!(list.status(), StatusCode::OK);
    let xml = list.text().await.unwrap();
    assert!(
        xml.contains("<Key>data/a.bin</Key>") && xml.contains("<Key>data/b.bin</Key>"),
        "{xml}"
    );

    let delete = s3_signed(&server, M::DELETE, &format!("/{bucket}/data/a.bin"), b"").await;
    assert_eq!(delete.status(), StatusCode::NO_CONTENT);
    let gone = s3_signed(&server, M::GET, &format!("/{bucket}/data/a.bin"), b"").await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_code(&gone.text().await.unwrap()), Some("NoSuchKey"));
}

#[tokio::test]
async fn presigned_get_works_and_bad_requests_get_s3_errors() {
    let server = TestServer::start();
    let bucket = new_table(&server, "s3-errors").await;
    let put = s3_signed(&server, M::PUT, &format!("/{bucket}/k"), b"hello").await;
    assert_eq!(put.status(), StatusCode::OK);

    let (mut parts, ()) = Request::builder()
        .method(M::GET)
        .uri(format!("{}/{bucket}/k", server.s3_url))
        .body(())
        .unwrap()
        .into_parts();
    let params = tablebay_auth::signer::SigningParams {
        access_key_id: ACCESS_KEY,
        secret_access_key: SECRET,
        session_token: None,
        region: REGION,
        service: "s3",
        time: chrono::Utc::now(),
    };
    tablebay_auth::signer::presign(&mut parts, &params, 300).unwrap();
    let presigned = server.http.get(parts.uri.to_string()).send().await.unwrap();
    assert_eq!(presigned.status(), StatusCode::OK);
    assert_eq!(presigned.text().await.unwrap(), "hello");

    let wrong = s3(
        &server,
        M::GET,
        &format!("/{bucket}/k"),
        b"",
        &[],
        "not-the-secret",
        false,
    )
    .await;
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        error_code(&wrong.text().await.unwrap()),
        Some("SignatureDoesNotMatch")
    );

    for other in [
        "not-a-table",
        "01234567-89ab-7def-8123-456789abcdef--table-s3",
    ] {
        let missing = s3_signed(&server, M::GET, &format!("/{other}/k"), b"").await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND, "{other}");
        assert_eq!(
            error_code(&missing.text().await.unwrap()),
            Some("NoSuchBucket"),
            "{other}"
        );
    }

    let unsigned = server
        .http
        .get(format!("{}/{bucket}/k", server.s3_url))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        error_code(&unsigned.text().await.unwrap()),
        Some("AccessDenied")
    );
}
