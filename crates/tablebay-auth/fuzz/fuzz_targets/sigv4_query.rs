//! Fuzzes presigned-URL authentication (`X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
//! `X-Amz-SignedHeaders`, `X-Amz-Signature`, `X-Amz-Security-Token`) through the crate's public API
//! (`SigV4Verifier::parse` + `verify`, `signer::presign`), at a fixed clock, with a one-key key store.
//!
//! The first byte picks the mode:
//! - even: the rest is the query string of a fixed request (sent `%XX`-encoded where a URI cannot carry the byte
//!   raw); nothing may panic, and a query that verifies must parse exactly as the URL the signer presigned for
//!   that request and mean the same to the application (the same parameters once form-decoded, in any order:
//!   SigV4 sorts them, so order is not signed). The fuzzer cannot compute an HMAC: verifying means it kept the
//!   reference signature over the same canonical query.
//! - odd: a request is built from the input (method, path, query, session token, expiry) and presigned with
//!   `signer::presign`; it must verify (round trip, unless the input's own query already carries `X-Amz-*`
//!   authentication parameters), and then any one-byte edit of the query (replace, insert, delete) must not
//!   verify unless it parses to the same `SignedRequest` with the same meaning; nor may a re-spelling of one
//!   character (`%XX` ↔ the character).
#![no_main]

mod common;

use std::sync::OnceLock;

use common::{
    HOST, Input, KEY_ID, REGION, SECRET, edit, now, parts, query_meaning, respell, verified,
};
use http::request::Parts;
use libfuzzer_sys::fuzz_target;
use tablebay_auth::signer::{SigningParams, presign};
use tablebay_auth::{SigV4Verifier, SignedRequest};

const REFERENCE_PATH: &str = "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders";
const REFERENCE_QUERY: &str = "snapshots=refs&pageToken=a%2Bb";
/// The parameters a presigned URL adds; the signature itself is compared through the parsed request.
const AUTH_PARAMS: [&str; 7] = [
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
];

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

/// The signature is compared through the parsed request (its hex may be spelled in either case).
fn meaning(p: &Parts) -> (String, Vec<(Vec<u8>, Vec<u8>)>) {
    (
        p.uri.path().to_owned(),
        query_meaning(p.uri.query().unwrap_or(""), &["X-Amz-Signature"]),
    )
}

/// The fixed request, presigned; what it parses to and what it means.
fn reference() -> &'static (Parts, SignedRequest) {
    static REFERENCE: OnceLock<(Parts, SignedRequest)> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let mut p = parts(
            "GET",
            &format!("{REFERENCE_PATH}?{REFERENCE_QUERY}"),
            &[("host", HOST.into())],
        )
        .unwrap();
        presign(&mut p, &params("s3tables", Some("FwoGZXIvYXdzEXAMPLE+/=")), 900).unwrap();
        let parsed = verified(&common::verifier(), &p, b"").unwrap();
        (p, parsed)
    })
}

/// The same request with another query string; `None` when a URI cannot carry it.
fn with_query(p: &Parts, query: &str) -> Option<Parts> {
    let mut p = p.clone();
    p.uri = format!("{}?{query}", p.uri.path()).parse().ok()?;
    Some(p)
}

fn arbitrary_query(verifier: &SigV4Verifier, raw: &[u8]) {
    let (reference_parts, reference_parsed) = reference();
    let Some(p) = with_query(reference_parts, &common::query(raw)) else {
        return;
    };
    if let Some(parsed) = verified(verifier, &p, b"") {
        assert_eq!(&parsed, reference_parsed, "a query other than the presigned one verified");
        assert_eq!(meaning(&p), meaning(reference_parts), "a verified query means something else");
    }
}

fn round_trip(verifier: &SigV4Verifier, input: &mut Input<'_>) {
    let method = ["GET", "PUT", "POST", "DELETE", "HEAD"][usize::from(input.byte() % 5)];
    let service = common::SERVICES[usize::from(input.byte() % 2)];
    let flags = input.byte();
    let expires = 1 + u32::from(input.u16()) * 10 % 604_800;
    let path = common::path(input.chunk(48));
    let token = String::from_utf8(common::header_text(input.chunk(32))).unwrap();
    let mutation = input.take(5).to_vec();
    let query = common::query(input.rest());

    let path_and_query = if flags & 1 != 0 { format!("{path}?{query}") } else { path };
    let Some(mut p) = parts(method, &path_and_query, &[("host", HOST.as_bytes().to_vec())]) else {
        return;
    };
    let already_presigned = !query_meaning(p.uri.query().unwrap_or(""), &[])
        .iter()
        .chain(literal_keys(p.uri.query().unwrap_or("")).iter())
        .all(|(k, _)| !AUTH_PARAMS.iter().any(|a| a.as_bytes() == k.as_slice()));
    let token = (flags & 2 != 0).then_some(token.as_str());
    if presign(&mut p, &params(service, token), expires).is_err() {
        return;
    }
    let signed = match verified(verifier, &p, b"") {
        Some(signed) => signed,
        None if already_presigned => return,
        None => panic!("a presigned request does not verify: {p:?}"),
    };

    let original = p.uri.query().unwrap_or("");
    let mut mutation = Input(&mutation);
    let mutated = if mutation.byte() % 2 == 0 {
        edit(&mut mutation, original.as_bytes()).and_then(|m| String::from_utf8(m).ok())
    } else {
        respell(&mut mutation, original)
    };
    let Some(mutated) = mutated else {
        return;
    };
    let Some(edited) = with_query(&p, &mutated) else {
        return;
    };
    if let Some(parsed) = verified(verifier, &edited, b"") {
        assert_eq!(parsed, signed, "an edited presigned query verified: {mutated:?}");
        assert_eq!(meaning(&edited), meaning(&p), "an edited presigned query verified: {mutated:?}");
    }
}

/// The query's keys decoded with `+` kept literal (how the SigV4 parser reads them).
fn literal_keys(raw: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    raw.split('&')
        .map(|p| p.split_once('=').map_or(p, |(k, _)| k))
        .map(|k| (percent_encoding::percent_decode_str(k).collect(), Vec::new()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let verifier = common::verifier();
    let mut input = Input(data);
    if input.byte() % 2 == 0 {
        arbitrary_query(&verifier, input.rest());
    } else {
        round_trip(&verifier, &mut input);
    }
});
