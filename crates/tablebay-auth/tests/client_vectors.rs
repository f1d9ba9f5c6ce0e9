//! Real-client fixtures (`testdata/sigv4/*.json`, made by `testdata/gen_botocore_vectors.py`): requests
//! as botocore's s3tables client, PyIceberg, Java Iceberg 1.10 and DuckDB 1.5 sign them. Each must
//! verify as recorded, and must fail when one byte of the body, the path or the query, a signed header,
//! or the secret changes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::PathBuf;

use base64::Engine as _;
use common::{at, parts};
use http::request::Parts;
use serde_json::Value;
use tablebay_auth::{AuthError, AuthMechanism, SigV4Verifier, SignedRequest};

struct Fixture {
    name: String,
    presigned: bool,
    method: String,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    now: String,
    region: String,
    service: String,
    access_key_id: String,
    secret: String,
    session_token: Option<String>,
}

fn load() -> Vec<Fixture> {
    // The directory `cargo test` runs us from, not the one we were compiled in: a shared target dir may hold a
    // test binary another clone compiled, whose compile-time path is gone.
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let dir = crate_dir.join("testdata/sigv4");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_owned();
            Fixture {
                name: s("name"),
                presigned: s("mechanism") == "presigned",
                method: s("method"),
                target: s("target"),
                headers: v["headers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| {
                        let value = h[1].as_str().unwrap();
                        // Header values are stored as text; map code points back to their bytes.
                        let bytes = value
                            .chars()
                            .map(|c| u8::try_from(u32::from(c)).unwrap())
                            .collect();
                        (h[0].as_str().unwrap().to_owned(), bytes)
                    })
                    .collect(),
                body: base64::engine::general_purpose::STANDARD
                    .decode(s("body_base64"))
                    .unwrap(),
                now: s("now"),
                region: s("region"),
                service: s("service"),
                access_key_id: s("access_key_id"),
                secret: s("secret_access_key"),
                session_token: v["session_token"].as_str().map(str::to_owned),
            }
        })
        .collect()
}

fn verifier() -> SigV4Verifier {
    SigV4Verifier::new("us-east-1", &["s3tables", "osstables"])
}

impl Fixture {
    fn parts(&self) -> Parts {
        self.parts_with(&self.target, &self.headers)
    }

    fn parts_with(&self, target: &str, headers: &[(String, Vec<u8>)]) -> Parts {
        parts(&self.method, target, headers)
    }

    fn check(&self, p: &Parts, body: &[u8], secret: &str) -> Result<SignedRequest, AuthError> {
        let req = verifier().parse(p, at(&self.now))?;
        verifier().verify(&req, p, body, secret)?;
        Ok(req)
    }
}

#[test]
fn fixtures_cover_every_client() {
    let names: Vec<String> = load().into_iter().map(|f| f.name).collect();
    for prefix in ["botocore-", "pyiceberg-", "presigned-", "java-", "duckdb-"] {
        assert!(
            names.iter().any(|n| n.starts_with(prefix)),
            "no {prefix} fixture in {names:?}"
        );
    }
}

#[test]
fn recorded_requests_verify() {
    for f in load() {
        assert_eq!(
            (f.region.as_str(), f.service.as_str()),
            ("us-east-1", "s3tables"),
            "{}",
            f.name
        );
        let req = f
            .check(&f.parts(), &f.body, &f.secret)
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert_eq!(req.access_key_id, f.access_key_id, "{}", f.name);
        assert_eq!(req.session_token, f.session_token, "{}", f.name);
        assert_eq!(req.service, "s3tables");
        assert_eq!(
            matches!(req.mechanism, AuthMechanism::Presigned { .. }),
            f.presigned,
            "{}",
            f.name
        );
    }
}

#[test]
fn changed_body_is_rejected() {
    for f in load().into_iter().filter(|f| !f.presigned) {
        let mut body = f.body.clone();
        match body.last_mut() {
            Some(b) => *b ^= 0x01,
            None => body.push(b' '),
        }
        assert_eq!(
            f.check(&f.parts(), &body, &f.secret).err(),
            Some(AuthError::SignatureMismatch),
            "{}",
            f.name
        );
    }
}

/// Replaces the byte at `index` of the target with another character of the same class, so the target
/// stays a valid URI.
fn mutate_target(target: &str, index: usize) -> String {
    let mut bytes = target.as_bytes().to_vec();
    bytes[index] = match bytes[index] {
        b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => bytes[index] + 1,
        b'9' => b'0',
        b'z' => b'a',
        b'Z' => b'A',
        other => panic!("unexpected byte {other}"),
    };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn changed_path_or_query_is_rejected() {
    for f in load() {
        let path_end = f.target.find('?').unwrap_or(f.target.len());
        let in_path = f.target[..path_end]
            .rfind(|c: char| c.is_ascii_alphanumeric())
            .unwrap();
        let mut targets = vec![mutate_target(&f.target, in_path)];
        if !f.presigned && path_end < f.target.len() {
            targets.push(mutate_target(&f.target, f.target.len() - 1));
        }
        for target in targets {
            let p = f.parts_with(&target, &f.headers);
            assert_eq!(
                f.check(&p, &f.body, &f.secret).err(),
                Some(AuthError::SignatureMismatch),
                "{} {target}",
                f.name
            );
        }
    }
}

#[test]
fn changed_signed_header_is_rejected() {
    for f in load() {
        let req = f.check(&f.parts(), &f.body, &f.secret).unwrap();
        for name in req.signed_headers() {
            let headers: Vec<(String, Vec<u8>)> = f
                .headers
                .iter()
                .map(|(k, v)| {
                    let mut v = v.clone();
                    if k.eq_ignore_ascii_case(name) {
                        let last = v.last_mut().unwrap();
                        *last = if *last == b'0' { b'1' } else { b'0' };
                    }
                    (k.clone(), v)
                })
                .collect();
            let p = f.parts_with(&f.target, &headers);
            let result = verifier()
                .parse(&p, at(&f.now))
                .and_then(|req| verifier().verify(&req, &p, &f.body, &f.secret).map(|_| ()));
            // x-amz-date also moves the request time; any refusal is fine as long as it is a refusal.
            assert!(result.is_err(), "{}: changing {name} was accepted", f.name);
        }
    }
}

#[test]
fn wrong_secret_is_rejected() {
    for f in load() {
        let mut secret = f.secret.clone().into_bytes();
        secret[0] ^= 0x01;
        let secret = String::from_utf8(secret).unwrap();
        assert_eq!(
            f.check(&f.parts(), &f.body, &secret).err(),
            Some(AuthError::SignatureMismatch),
            "{}",
            f.name
        );
    }
}

/// Trap 17: Java's `x-amz-content-sha256` is the base64 digest, signed, but the canonical request
/// uses the hex digest of the body.
#[test]
fn java_base64_content_sha_fixture_is_what_it_claims() {
    let f = load()
        .into_iter()
        .find(|f| f.name == "java-create-table-base64-content-sha")
        .unwrap();
    let (_, value) = f
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("x-amz-content-sha256"))
        .unwrap();
    let value = std::str::from_utf8(value).unwrap();
    assert!(value.ends_with('=') && value.len() == 44, "{value}");
    let req = f.check(&f.parts(), &f.body, &f.secret).unwrap();
    assert!(req.is_header_signed("x-amz-content-sha256"));
}

/// Trap 19: the Java Latin-1 body is not UTF-8 on the wire.
#[test]
fn java_latin1_fixture_is_not_utf8() {
    let f = load()
        .into_iter()
        .find(|f| f.name == "java-latin1-body")
        .unwrap();
    assert!(std::str::from_utf8(&f.body).is_err());
}
