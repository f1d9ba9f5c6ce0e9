//! Fuzzes the `Authorization: AWS4-HMAC-SHA256 …` parser and verifier through the crate's public API
//! (`SigV4Verifier::parse` + `verify`, `signer::sign_with`), at a fixed clock, with a one-key key store.
//!
//! The first byte picks the mode:
//! - even: the rest is the header value, set on a fixed, otherwise valid request (host, `x-amz-date`, a body);
//!   nothing may panic, and a value that verifies must parse exactly as the value the signer wrote for that
//!   request. The fuzzer cannot compute an HMAC, so verifying means it kept the reference signature, and the
//!   signature covers the scope, the date and the signed-header list: only spellings of the same
//!   `SignedRequest` (hex case, header-name case, spaces around separators) can verify.
//! - odd: a request is built from the input (method, path, query, headers, session token, body) and signed with
//!   `signer::sign_with`; it must verify (round trip), and then any one-byte edit of its `Authorization` value
//!   (replace, insert, delete) must not verify unless it parses to the same `SignedRequest`; and a re-spelling of
//!   one character of its query (`%XX` ↔ the character) must not verify unless the application reads the same
//!   parameters (form-decoded, `+` is a space, in any order: SigV4 sorts them).
#![no_main]

mod common;

use std::sync::OnceLock;

use common::{
    HOST, Input, KEY_ID, REGION, SECRET, edit, header_text, now, parts, query_meaning, respell, verified,
};
use http::header::AUTHORIZATION;
use http::request::Parts;
use libfuzzer_sys::fuzz_target;
use tablebay_auth::signer::{SigningParams, sign_with};
use tablebay_auth::{SigV4Verifier, SignedRequest};

const REFERENCE_BODY: &[u8] =
    br#"{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}"#;
const REFERENCE_PATH: &str = "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders";

fn params<'a>(service: &'a str, session_token: Option<&'a str>) -> SigningParams<'a> {
    SigningParams {
        access_key_id: KEY_ID,
        secret_access_key: SECRET,
        session_token,
        region: REGION,
        service,
        time: now(),
    }
}

/// The fixed request, signed; and what its header parses to.
fn reference() -> &'static (Parts, SignedRequest) {
    static REFERENCE: OnceLock<(Parts, SignedRequest)> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let mut p = parts(
            "POST",
            REFERENCE_PATH,
            &[
                ("host", HOST.into()),
                ("content-type", b"application/json".to_vec()),
            ],
        )
        .unwrap();
        sign_with(&mut p, REFERENCE_BODY, &params("s3tables", None)).unwrap();
        let parsed = verified(&common::verifier(), &p, REFERENCE_BODY).unwrap();
        (p, parsed)
    })
}

fn with_authorization(parts: &Parts, value: &[u8]) -> Option<Parts> {
    let value = http::HeaderValue::from_bytes(value).ok()?;
    let mut parts = parts.clone();
    parts.headers.insert(AUTHORIZATION, value);
    Some(parts)
}

fn arbitrary_header(verifier: &SigV4Verifier, value: &[u8]) {
    let (reference_parts, reference_parsed) = reference();
    let Some(p) = with_authorization(reference_parts, value) else {
        return;
    };
    if let Some(parsed) = verified(verifier, &p, REFERENCE_BODY) {
        assert_eq!(&parsed, reference_parsed, "a header other than the signed one verified");
    }
}

fn round_trip(verifier: &SigV4Verifier, input: &mut Input<'_>) {
    let method = ["GET", "PUT", "POST", "DELETE", "HEAD"][usize::from(input.byte() % 5)];
    let service = common::SERVICES[usize::from(input.byte() % 2)];
    let flags = input.byte();
    let path = common::path(input.chunk(48));
    let query = common::query(input.chunk(48));
    let custom = header_text(input.chunk(24));
    let token = String::from_utf8(header_text(input.chunk(32))).unwrap();
    let mutation = input.take(4).to_vec();
    let respelling = input.take(2).to_vec();
    let body = input.rest();

    let path_and_query = if flags & 1 != 0 { format!("{path}?{query}") } else { path };
    let mut headers = vec![("host", HOST.as_bytes().to_vec())];
    if flags & 2 != 0 {
        headers.push(("x-tablebay-custom", custom));
    }
    if flags & 4 != 0 {
        // Unsigned by the signer (botocore's list): changing it must not matter.
        headers.push(("user-agent", b"fuzz/1".to_vec()));
    }
    let Some(mut p) = parts(method, &path_and_query, &headers) else {
        return;
    };
    let token = (flags & 8 != 0).then_some(token.as_str());
    if sign_with(&mut p, body, &params(service, token)).is_err() {
        return;
    }
    let Some(signed) = verified(verifier, &p, body) else {
        panic!("a request the signer signed does not verify: {p:?}");
    };

    let original = p.headers[AUTHORIZATION].as_bytes().to_vec();
    if let Some(mutated) = edit(&mut Input(&mutation), &original)
        && let Some(edited) = with_authorization(&p, &mutated)
        && let Some(parsed) = verified(verifier, &edited, body)
    {
        assert_eq!(
            parsed,
            signed,
            "an edited Authorization header verified: {:?}",
            String::from_utf8_lossy(&mutated)
        );
    }

    let query = p.uri.query().unwrap_or("");
    if let Some(respelled) = respell(&mut Input(&respelling), query)
        && let Ok(uri) = format!("{}?{respelled}", p.uri.path()).parse()
    {
        let mut edited = p.clone();
        edited.uri = uri;
        if verified(verifier, &edited, body).is_some() {
            assert_eq!(
                query_meaning(&respelled, &[]),
                query_meaning(query, &[]),
                "a re-spelled query verified and reads otherwise: {query:?} -> {respelled:?}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let verifier = common::verifier();
    let mut input = Input(data);
    if input.byte() % 2 == 0 {
        arbitrary_header(&verifier, input.rest());
    } else {
        round_trip(&verifier, &mut input);
    }
});
