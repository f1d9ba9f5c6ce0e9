//! Known answers for the OSS V4 verifier: requests signed by Alibaba's own signer (`alibabacloud-oss-v2` 1.4.1,
//! `TablesSignerV4`), as its Tables client sends them — header and presigned forms, path style and virtual-hosted,
//! bodies with `Content-MD5`, security tokens, additional headers. `clients/python/oss4_vectors.py` regenerates
//! `fixtures/oss4_vectors.json`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tablebay_auth::AuthError;
use tablebay_auth::oss4::{Oss4Verifier, check_body};

fn vectors() -> Vec<Value> {
    let text = include_str!("fixtures/oss4_vectors.json");
    let fixture: Value = serde_json::from_str(text).unwrap();
    fixture["vectors"].as_array().unwrap().clone()
}

fn body(vector: &Value) -> Vec<u8> {
    let text = vector["body"].as_str().unwrap_or_default();
    match vector["body_encoding"].as_str() {
        Some("base64") => base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap(),
        _ => text.as_bytes().to_vec(),
    }
}

/// The request as the server receives it: the request line's path and query, every header the SDK sent.
fn parts(vector: &Value) -> http::request::Parts {
    let path = vector["path"].as_str().unwrap();
    let query = vector["query"].as_str().unwrap_or_default();
    let target = if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    };
    let mut builder = http::Request::builder()
        .method(vector["method"].as_str().unwrap())
        .uri(target);
    for (name, value) in vector["headers"].as_object().unwrap() {
        builder = builder.header(name.as_str(), value.as_str().unwrap());
    }
    builder.body(()).unwrap().into_parts().0
}

fn time(vector: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(vector["time"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

fn verify(vector: &Value, parts: &http::request::Parts, secret: &str) -> Result<(), AuthError> {
    let verifier = Oss4Verifier::new(vector["region"].as_str().unwrap());
    let request = verifier.parse(parts, time(vector))?;
    assert_eq!(
        request.access_key_id,
        vector["access_key_id"].as_str().unwrap()
    );
    assert_eq!(
        request.session_token.as_deref(),
        vector["security_token"].as_str()
    );
    verifier.verify(&request, parts, secret)
}

#[test]
fn every_sdk_signed_request_verifies() {
    let vectors = vectors();
    assert!(vectors.len() >= 20, "{} vectors", vectors.len());
    for vector in &vectors {
        let name = vector["name"].as_str().unwrap();
        let parts = parts(vector);
        assert!(Oss4Verifier::is_oss4(&parts), "{name}");
        let secret = vector["secret"].as_str().unwrap();
        verify(vector, &parts, secret).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_body(&parts, &body(vector)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn sdk_signed_requests_fail_with_another_secret_path_or_body() {
    for vector in &vectors() {
        let name = vector["name"].as_str().unwrap();
        let parts = parts(vector);
        assert_eq!(
            verify(vector, &parts, "another-secret"),
            Err(AuthError::SignatureMismatch),
            "{name}"
        );
        let mut moved = parts.clone();
        let uri = moved.uri.to_string().replacen('/', "/x", 1);
        moved.uri = uri.parse().unwrap();
        assert_eq!(
            verify(vector, &moved, vector["secret"].as_str().unwrap()),
            Err(AuthError::SignatureMismatch),
            "{name}"
        );
        if parts.headers.contains_key("content-md5") {
            let mut altered = body(vector);
            altered.push(b' ');
            assert_eq!(
                check_body(&parts, &altered),
                Err(AuthError::ContentMd5Mismatch),
                "{name}"
            );
        }
    }
}
