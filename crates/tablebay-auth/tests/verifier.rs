//! Verifier behaviour around the signature: clock skew, expiry, scope, missing and garbage credentials,
//! and round trips through the crate's own signer (including a Java-style request, traps 17 and 19).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use base64::Engine as _;
use chrono::Duration;
use common::{Rng, at, parts};
use http::request::Parts;
use sha2::{Digest, Sha256};
use tablebay_auth::signer::{self, SigningParams};
use tablebay_auth::{
    AuthError, AuthMechanism, SigV4Verifier, SignedPayload, check_claimed_payload,
    claimed_payload_hash,
};

const AK: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const T0: &str = "2026-11-30T00:06:33Z";
const ICEBERG_PATH: &str = "/iceberg/v1/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fb/namespaces/ns%1Fsub/tables";

fn verifier() -> SigV4Verifier {
    SigV4Verifier::new("us-east-1", &["s3tables", "osstables"])
}

fn signed(
    method: &str,
    target: &str,
    body: &[u8],
    region: &str,
    service: &str,
    time: &str,
) -> Parts {
    let mut p = parts(
        method,
        target,
        &[
            ("host", "127.0.0.1:8765"),
            ("content-type", "application/json"),
        ],
    );
    signer::sign(&mut p, body, AK, SECRET, region, service, at(time)).unwrap();
    p
}

fn check(p: &Parts, body: &[u8], now: &str) -> Result<(), AuthError> {
    let req = verifier().parse(p, at(now))?;
    verifier().verify(&req, p, body, SECRET).map(|_| ())
}

#[test]
fn own_signer_round_trips() {
    for (method, target, body) in [
        (
            "PUT",
            "/namespaces/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket",
            &b"{\"namespace\":[\"a\"]}"[..],
        ),
        (
            "GET",
            "/buckets?prefix=a&maxBuckets=10&continuationToken=abc%2F%2B%3D",
            b"",
        ),
        (
            "DELETE",
            "/buckets/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket",
            b"",
        ),
        ("POST", ICEBERG_PATH, b"{\"name\":\"t\"}"),
        (
            "GET",
            "/iceberg/v1/config?warehouse=arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb",
            b"",
        ),
        ("GET", "/a/./b/../c//d?x=a+b&x=%20&y", b""),
    ] {
        let p = signed(method, target, body, "us-east-1", "s3tables", T0);
        assert_eq!(check(&p, body, T0), Ok(()), "{method} {target}");
        assert_eq!(
            check(&p, b"tampered", T0),
            Err(AuthError::SignatureMismatch),
            "{method} {target}"
        );
    }
}

#[test]
fn clock_skew() {
    let p = signed("GET", "/buckets", b"", "us-east-1", "s3tables", T0);
    let t0 = at(T0);
    for (offset_minutes, ok) in [
        (-16, false),
        (-14, true),
        (0, true),
        (14, true),
        (16, false),
    ] {
        let now = t0 + Duration::minutes(offset_minutes);
        let result = verifier().parse(&p, now).map(|_| ());
        assert_eq!(result.is_ok(), ok, "{offset_minutes} min");
        if !ok {
            assert_eq!(result, Err(AuthError::RequestExpired));
        }
    }
    let strict = verifier().with_max_skew(Duration::minutes(1));
    assert_eq!(
        strict.parse(&p, t0 + Duration::minutes(2)).map(|_| ()),
        Err(AuthError::RequestExpired)
    );
}

#[test]
fn date_header_fallback() {
    // Without x-amz-date the request time comes from Date (signature checked by the
    // botocore-date-header fixture in client_vectors.rs).
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential={AK}/20261130/us-east-1/s3tables/aws4_request, SignedHeaders=date;host, \
         Signature={}",
        "0".repeat(64)
    );
    let p = parts(
        "GET",
        "/buckets",
        &[
            ("host", "h"),
            ("date", "Mon, 30 Nov 2026 00:06:33 GMT"),
            ("authorization", auth.as_str()),
        ],
    );
    let req = verifier().parse(&p, at(T0)).unwrap();
    assert_eq!(req.request_time, at(T0));
    assert_eq!(
        verifier().parse(&p, at("2026-11-30T00:30:00Z")).map(|_| ()),
        Err(AuthError::RequestExpired)
    );
    let mut bad = p.clone();
    bad.headers.insert("date", "yesterday".parse().unwrap());
    assert!(matches!(
        verifier().parse(&bad, at(T0)),
        Err(AuthError::Malformed(_))
    ));
}

#[test]
fn scope_mismatches() {
    let wrong_service = signed("GET", "/buckets", b"", "us-east-1", "s3", T0);
    assert!(matches!(
        verifier().parse(&wrong_service, at(T0)),
        Err(AuthError::ScopeMismatch(_))
    ));
    let wrong_region = signed("GET", "/buckets", b"", "eu-west-1", "s3tables", T0);
    assert!(matches!(
        verifier().parse(&wrong_region, at(T0)),
        Err(AuthError::ScopeMismatch(_))
    ));
    let oss = signed("GET", "/buckets", b"", "us-east-1", "osstables", T0);
    assert_eq!(check(&oss, b"", T0), Ok(()));

    // A credential date other than the x-amz-date day, and a wrong terminator.
    let p = signed("GET", "/buckets", b"", "us-east-1", "s3tables", T0);
    for (from, to) in [
        ("/20261130/", "/20261129/"),
        ("/aws4_request", "/aws4_reqest"),
    ] {
        let auth = p.headers["authorization"]
            .to_str()
            .unwrap()
            .replace(from, to);
        let mut q = p.clone();
        q.headers.insert("authorization", auth.parse().unwrap());
        assert!(
            matches!(
                verifier().parse(&q, at(T0)),
                Err(AuthError::ScopeMismatch(_))
            ),
            "{to}"
        );
    }
}

#[test]
fn missing_and_malformed() {
    let p = parts("GET", "/buckets", &[("host", "h")]);
    assert_eq!(verifier().parse(&p, at(T0)), Err(AuthError::Missing));
    let p = parts(
        "GET",
        "/buckets?prefix=a&X-Amz-Date=20261130T000633Z",
        &[("host", "h")],
    );
    assert_eq!(verifier().parse(&p, at(T0)), Err(AuthError::Missing));
    let p = parts(
        "GET",
        "/buckets",
        &[("host", "h"), ("authorization", "Bearer abc")],
    );
    assert!(matches!(
        verifier().parse(&p, at(T0)),
        Err(AuthError::Malformed(_))
    ));

    // No date at all, two Authorization headers, header and presigned together.
    let signed = signed("GET", "/buckets", b"", "us-east-1", "s3tables", T0);
    let mut no_date = signed.clone();
    no_date.headers.remove("x-amz-date");
    assert!(matches!(
        verifier().parse(&no_date, at(T0)),
        Err(AuthError::Malformed(_))
    ));
    let mut twice = signed.clone();
    let auth = twice.headers["authorization"].clone();
    twice.headers.append("authorization", auth);
    assert!(matches!(
        verifier().parse(&twice, at(T0)),
        Err(AuthError::Malformed(_))
    ));
    let mut both = signed.clone();
    both.uri = "/buckets?X-Amz-Signature=00".parse().unwrap();
    assert!(matches!(
        verifier().parse(&both, at(T0)),
        Err(AuthError::Malformed(_))
    ));
}

#[test]
fn presigned_round_trip_and_expiry() {
    let mut p = parts(
        "GET",
        "/buckets/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb?x=1",
        &[("host", "127.0.0.1:8765")],
    );
    let params = SigningParams {
        access_key_id: AK,
        secret_access_key: SECRET,
        session_token: Some("token/+="),
        region: "us-east-1",
        service: "s3tables",
        time: at(T0),
    };
    signer::presign(&mut p, &params, 600).unwrap();
    let req = verifier().parse(&p, at(T0)).unwrap();
    assert_eq!(req.session_token.as_deref(), Some("token/+="));
    assert_eq!(
        req.mechanism,
        AuthMechanism::Presigned {
            expires_at: at(T0) + Duration::seconds(600)
        }
    );
    assert_eq!(
        verifier().verify(&req, &p, b"", SECRET),
        Ok(SignedPayload::Unsigned)
    );
    assert_eq!(
        verifier().verify(&req, &p, b"", "other").map(|_| ()),
        Err(AuthError::SignatureMismatch)
    );
    assert!(
        verifier()
            .parse(&p, at(T0) + Duration::seconds(600))
            .is_ok()
    );
    assert_eq!(
        verifier()
            .parse(&p, at(T0) + Duration::seconds(601))
            .map(|_| ()),
        Err(AuthError::RequestExpired)
    );
    assert_eq!(
        verifier()
            .parse(&p, at(T0) - Duration::minutes(16))
            .map(|_| ()),
        Err(AuthError::RequestExpired)
    );

    let mut week = parts("GET", "/buckets", &[("host", "h")]);
    assert!(signer::presign(&mut week.clone(), &params, 604_800).is_ok());
    signer::presign(&mut week, &params, 604_801).unwrap();
    assert!(matches!(
        verifier().parse(&week, at(T0)),
        Err(AuthError::Malformed(_))
    ));
}

/// Trap 17, built with the crate's signer: a Java-style request whose signed `x-amz-content-sha256`
/// is the BASE64 digest, with Java's base headers; the canonical request uses the hex digest.
#[test]
fn java_style_base64_content_sha() {
    let body = br#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;
    let base64_digest = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body));
    let mut p = parts(
        "POST",
        ICEBERG_PATH,
        &[
            ("accept", "application/json"),
            ("content-type", "application/json"),
            ("host", "127.0.0.1:8765"),
            ("x-amz-content-sha256", base64_digest.as_str()),
            ("x-client-git-commit-short", "2114bf63"),
            (
                "x-client-version",
                "Apache Iceberg 1.10.0 (commit 2114bf631e49af532d66e2ce148ee49dd1dd1f1f)",
            ),
        ],
    );
    signer::sign(&mut p, body, AK, SECRET, "us-east-1", "s3tables", at(T0)).unwrap();
    let auth = p.headers["authorization"].to_str().unwrap();
    assert!(auth.contains(
        "SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-client-git-commit-short;x-client-version"
    ));
    // Headers the Apache client adds after signing.
    p.headers
        .insert("user-agent", "Apache-HttpClient/5.5".parse().unwrap());
    p.headers
        .insert("connection", "keep-alive".parse().unwrap());
    assert_eq!(check(&p, body, T0), Ok(()));
}

/// Trap 19, built with the crate's signer: signed over the UTF-8 JSON, sent as ISO-8859-1.
#[test]
fn java_style_latin1_body() {
    let json = "{\"namespace\":[\"caf\u{e9}\"]}";
    let latin1: Vec<u8> = json
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    assert!(std::str::from_utf8(&latin1).is_err());
    let p = signed(
        "POST",
        ICEBERG_PATH,
        json.as_bytes(),
        "us-east-1",
        "s3tables",
        T0,
    );
    assert_eq!(check(&p, &latin1, T0), Ok(()));
    assert_eq!(check(&p, json.as_bytes(), T0), Ok(()));
    let mut other = latin1.clone();
    other[16] ^= 0x01;
    assert_eq!(check(&p, &other, T0), Err(AuthError::SignatureMismatch));
    // Which reading the signature covers decides how the body is read: never a guess.
    let req = verifier().parse(&p, at(T0)).unwrap();
    assert_eq!(
        verifier().verify(&req, &p, &latin1, SECRET),
        Ok(SignedPayload::Latin1AsUtf8)
    );
    assert_eq!(
        verifier().verify(&req, &p, json.as_bytes(), SECRET),
        Ok(SignedPayload::AsSent)
    );
}

/// A claimed `x-amz-content-sha256` (hex, or base64 as Java sends it: trap 17) lets the signature be checked
/// before the body arrives; the body must then hash to the claim.
#[test]
fn claimed_payload_hash_before_the_body() {
    let json = "{\"namespace\":[\"caf\u{e9}\"]}";
    let digest: [u8; 32] = Sha256::digest(json.as_bytes()).into();
    for claim in [
        hex::encode(digest),
        base64::engine::general_purpose::STANDARD.encode(digest),
    ] {
        let mut p = parts(
            "POST",
            ICEBERG_PATH,
            &[
                ("host", "127.0.0.1:8765"),
                ("content-type", "application/json"),
                ("x-amz-content-sha256", claim.as_str()),
            ],
        );
        signer::sign(
            &mut p,
            json.as_bytes(),
            AK,
            SECRET,
            "us-east-1",
            "s3tables",
            at(T0),
        )
        .unwrap();
        let claimed = claimed_payload_hash(&p).unwrap();
        assert_eq!(claimed, digest);
        let req = verifier().parse(&p, at(T0)).unwrap();
        assert_eq!(
            verifier().verify_claimed(&req, &p, &claimed, SECRET),
            Ok(())
        );
        assert_eq!(
            verifier().verify_claimed(&req, &p, &[0u8; 32], SECRET),
            Err(AuthError::SignatureMismatch)
        );
        assert_eq!(
            check_claimed_payload(&claimed, json.as_bytes()),
            Ok(SignedPayload::AsSent)
        );
        let latin1: Vec<u8> = json
            .chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap())
            .collect();
        assert_eq!(
            check_claimed_payload(&claimed, &latin1),
            Ok(SignedPayload::Latin1AsUtf8)
        );
        assert_eq!(
            check_claimed_payload(&claimed, b"{}"),
            Err(AuthError::PayloadMismatch)
        );
    }
    let p = parts(
        "POST",
        ICEBERG_PATH,
        &[("x-amz-content-sha256", "UNSIGNED-PAYLOAD")],
    );
    assert_eq!(claimed_payload_hash(&p), None);
}

/// Garbage never panics: random `Authorization` values, random presigned queries and random paths, both
/// through `parse` and (when it succeeds) `verify`.
#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let header_alphabet: Vec<u8> = (0x20u8..0x7f)
        .chain([b'\t', 0x80, 0xff, 0xc3, 0xa9])
        .collect();
    let pieces: [&[u8]; 12] = [
        b"AWS4-HMAC-SHA256 ",
        b"Credential=",
        b"AK/20261130/us-east-1/s3tables/aws4_request",
        b"SignedHeaders=",
        b"host;x-amz-date",
        b"Signature=",
        b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        b", ",
        b",",
        b"=",
        b"/",
        b";",
    ];
    let query_alphabet = b"abcXYZ019%=&+-._~/;:";
    let query_pieces: [&str; 9] = [
        "X-Amz-Algorithm=AWS4-HMAC-SHA256",
        "X-Amz-Credential=AK%2F20261130%2Fus-east-1%2Fs3tables%2Faws4_request",
        "X-Amz-Date=20261130T000633Z",
        "X-Amz-Expires=600",
        "X-Amz-SignedHeaders=host",
        "X-Amz-Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "X-Amz-Security-Token=%FF%FE",
        "X-Amz-Expires=99999999999",
        "%",
    ];
    let mut parsed = [0usize; 2];
    for _ in 0..20_000 {
        // Authorization header: random bytes, or a shuffle of plausible pieces with random noise.
        const VALID: &[u8] = b"AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3tables/aws4_request, \
            SignedHeaders=host;x-amz-date, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let mode = rng.below(3);
        let value = if mode == 0 {
            rng.bytes(200, &header_alphabet)
        } else if mode == 1 {
            // A valid header with a few bytes replaced, inserted or removed.
            let mut v = VALID.to_vec();
            for _ in 0..rng.below(3) {
                let at = rng.below(v.len());
                match rng.below(3) {
                    0 => v[at] = header_alphabet[rng.below(header_alphabet.len())],
                    1 => v.insert(at, header_alphabet[rng.below(header_alphabet.len())]),
                    _ => {
                        v.remove(at);
                    }
                }
            }
            v
        } else {
            let mut v = Vec::new();
            for _ in 0..rng.below(10) {
                v.extend_from_slice(pieces[rng.below(pieces.len())]);
                if rng.below(4) == 0 {
                    v.extend(rng.bytes(4, &header_alphabet));
                }
            }
            v
        };
        let Ok(value) = http::HeaderValue::from_bytes(&value) else {
            continue;
        };
        let path_bytes = rng.bytes(30, b"/abc%2F1F.~:+");
        let path = format!("/{}", String::from_utf8_lossy(&path_bytes));
        let mut query = String::new();
        let presigned_attempt = rng.below(4) == 0;
        for (i, piece) in query_pieces.iter().take(6).enumerate() {
            // Sometimes a (nearly) complete presigned query.
            if presigned_attempt && rng.below(8) != 0 {
                if i > 0 {
                    query.push('&');
                }
                query.push_str(piece);
            }
        }
        for _ in 0..rng.below(6) {
            if !query.is_empty() {
                query.push('&');
            }
            if rng.below(2) == 0 {
                query.push_str(query_pieces[rng.below(query_pieces.len())]);
            } else {
                query.push_str(&String::from_utf8_lossy(&rng.bytes(12, query_alphabet)));
            }
        }
        let target = if query.is_empty() {
            path
        } else {
            format!("{path}?{query}")
        };
        let Ok(uri) = target.parse::<http::Uri>() else {
            continue;
        };
        let mut builder = http::Request::builder().uri(uri).header("host", "h");
        if rng.below(3) > 0 {
            builder = builder.header("authorization", value);
        }
        if rng.below(2) == 0 {
            builder = builder.header("x-amz-date", "20261130T000633Z");
        }
        let p = builder.body(()).unwrap().into_parts().0;
        if let Ok(req) = verifier().parse(&p, at(T0)) {
            parsed[usize::from(matches!(req.mechanism, AuthMechanism::Presigned { .. }))] += 1;
            assert_eq!(
                verifier().verify(&req, &p, b"body", SECRET).map(|_| ()),
                Err(AuthError::SignatureMismatch)
            );
        }
    }
    assert!(
        parsed[0] > 0 && parsed[1] > 0,
        "the generator produced too few parseable requests: {parsed:?}"
    );
}
