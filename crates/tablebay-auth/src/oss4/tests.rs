//! Round trips through a test signer written from the SDK's `tables_v4.py` (the known-answer vectors the SDK itself
//! produced are in `tests/oss4_vectors.rs`), and the refusals.

use super::*;

const AK: &str = "LTAI5tTablebayExample";
const SECRET: &str = "TablebayExampleSecret0123456789abcdefgh";
const REGION: &str = "cn-hangzhou";
const ARN: &str = "acs:osstables:cn-hangzhou:111122223333:bucket/orders";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn now() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

fn quoted(arn: &str) -> String {
    let mut out = String::new();
    uri_encode(arn.as_bytes(), false, &mut out);
    out
}

/// Signs like the SDK's header form: `x-oss-date`, `x-oss-content-sha256: UNSIGNED-PAYLOAD`, the optional token
/// and additional headers, with `bucket` as the SDK's `signing_ctx.bucket`.
fn sign(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    bucket: Option<&str>,
    token: Option<&str>,
    additional: &[&str],
) -> Parts {
    let mut builder = http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let mut parts = builder.body(()).unwrap().into_parts().0;
    let date = "20260601T120000Z";
    parts.headers.insert("x-oss-date", date.parse().unwrap());
    parts
        .headers
        .insert("x-oss-content-sha256", UNSIGNED_PAYLOAD.parse().unwrap());
    if let Some(token) = token {
        parts
            .headers
            .insert("x-oss-security-token", token.parse().unwrap());
    }
    let additional: Vec<String> = additional.iter().map(|h| (*h).to_owned()).collect();
    let canonical = format!(
        "{method}\n{}\n{}\n{}\n{}\n{UNSIGNED_PAYLOAD}",
        canonical_uri(bucket, REGION, parts.uri.path()),
        canonical_query(parts.uri.query().unwrap_or(""), false),
        canonical_headers(&parts, &additional).unwrap(),
        additional.join(";"),
    );
    let scope = format!("20260601/{REGION}/osstables/aliyun_v4_request");
    let sts = format!(
        "{OSS4_ALGORITHM}\n{date}\n{scope}\n{}",
        hex_sha256(canonical.as_bytes())
    );
    let signature = hex::encode(hmac_sha256(
        &signing_key(SECRET, "20260601", REGION),
        sts.as_bytes(),
    ));
    let mut value = format!("{OSS4_ALGORITHM} Credential={AK}/{scope}");
    if !additional.is_empty() {
        value.push_str(&format!(",AdditionalHeaders={}", additional.join(";")));
    }
    value.push_str(&format!(",Signature={signature}"));
    parts
        .headers
        .insert(http::header::AUTHORIZATION, value.parse().unwrap());
    parts
}

fn check(parts: &Parts) -> Result<Oss4Request, AuthError> {
    let verifier = Oss4Verifier::new(REGION);
    let request = verifier.parse(parts, now())?;
    verifier.verify(&request, parts, SECRET)?;
    Ok(request)
}

#[test]
fn signed_requests_verify_with_the_bucket_they_name() {
    let q = quoted(ARN);
    let cases = [
        ("PUT", "http://h/buckets".to_owned(), None),
        (
            "GET",
            "http://h/buckets?maxBuckets=2&prefix=or".to_owned(),
            None,
        ),
        ("GET", format!("http://h/buckets/{q}"), Some(ARN)),
        ("PUT", format!("http://h/namespaces/{q}"), Some(ARN)),
        (
            "GET",
            format!("http://h/tables/{q}/ns1/t1/metadata-location"),
            Some(ARN),
        ),
        (
            "GET",
            format!("http://h/get-table?name=t1&namespace=ns1&tableBucketARN={q}"),
            Some(ARN),
        ),
        (
            "GET",
            format!(
                "http://h/get-table?tableArn={}",
                quoted(&format!("{ARN}/table/0f3c"))
            ),
            Some(ARN),
        ),
    ];
    for (method, uri, bucket) in cases {
        let parts = sign(
            method,
            &uri,
            &[("content-type", "application/json")],
            bucket,
            None,
            &[],
        );
        let request = check(&parts).unwrap_or_else(|e| panic!("{method} {uri}: {e}"));
        assert_eq!(request.access_key_id, AK);
        assert_eq!(request.mechanism, AuthMechanism::Header);
    }
}

#[test]
fn a_virtual_hosted_request_signs_the_same_uri() {
    let uri = format!(
        "http://orders-111122223333.tables.example/namespaces/{}",
        quoted(ARN)
    );
    check(&sign("GET", &uri, &[], Some(ARN), None, &[])).unwrap();
}

#[test]
fn tokens_and_additional_headers_are_signed() {
    let uri = format!("http://h/buckets/{}", quoted(ARN));
    let parts = sign(
        "GET",
        &uri,
        &[("x-custom", "v")],
        Some(ARN),
        Some("tok"),
        &["x-custom"],
    );
    assert_eq!(check(&parts).unwrap().session_token.as_deref(), Some("tok"));
    let mut edited = parts.clone();
    edited.headers.insert("x-custom", "w".parse().unwrap());
    assert_eq!(check(&edited), Err(AuthError::SignatureMismatch));
    let mut missing = parts;
    missing.headers.remove("x-custom");
    assert!(matches!(check(&missing), Err(AuthError::Malformed(m)) if m.contains("x-custom")));
}

#[test]
fn refusals() {
    let uri = format!("http://h/buckets/{}", quoted(ARN));
    let good = sign("GET", &uri, &[], Some(ARN), None, &[]);
    let with_auth = |value: &str| {
        let mut parts = good.clone();
        parts
            .headers
            .insert(http::header::AUTHORIZATION, value.parse().unwrap());
        parts
    };
    let auth = good.headers[http::header::AUTHORIZATION]
        .to_str()
        .unwrap()
        .to_owned();
    // Another bucket than the one signed, another path, another method.
    let other = format!(
        "http://h/buckets/{}",
        quoted(&ARN.replace("orders", "others"))
    );
    let mut moved = sign("GET", &other, &[], Some(ARN), None, &[]);
    moved
        .headers
        .insert(http::header::AUTHORIZATION, auth.parse().unwrap());
    assert_eq!(check(&moved), Err(AuthError::SignatureMismatch));
    let mut method = good.clone();
    method.method = http::Method::DELETE;
    assert_eq!(check(&method), Err(AuthError::SignatureMismatch));
    // Wrong product, region, terminator; malformed header; missing date; skew.
    for (bad, scope) in [
        (auth.replace("/osstables/", "/oss/"), true),
        (auth.replace("/cn-hangzhou/", "/cn-beijing/"), true),
        (auth.replace("aliyun_v4_request", "aws4_request"), true),
        (auth.replace("Credential=", "Credentials="), false),
        (auth.replace(",Signature=", ",Sig="), false),
        (format!("{auth},Signature=00"), false),
        (auth[..auth.len() - 2].to_owned(), false),
    ] {
        let refused = check(&with_auth(&bad));
        if scope {
            assert!(
                matches!(refused, Err(AuthError::ScopeMismatch(_))),
                "{bad}: {refused:?}"
            );
        } else {
            assert!(
                matches!(refused, Err(AuthError::Malformed(_))),
                "{bad}: {refused:?}"
            );
        }
    }
    let mut undated = good.clone();
    undated.headers.remove("x-oss-date");
    assert!(matches!(check(&undated), Err(AuthError::Malformed(m)) if m.contains("x-oss-date")));
    let verifier = Oss4Verifier::new(REGION);
    assert_eq!(
        verifier.parse(&good, at("2026-06-01T12:16:00Z")),
        Err(AuthError::RequestExpired)
    );
    assert_eq!(
        verifier.verify(&verifier.parse(&good, now()).unwrap(), &good, "wrong"),
        Err(AuthError::SignatureMismatch)
    );
}

#[test]
fn presigned_urls_verify_until_they_expire() {
    let scope = format!("{AK}/20260601/{REGION}/osstables/aliyun_v4_request");
    let query = format!(
        "x-oss-signature-version=OSS4-HMAC-SHA256&x-oss-date=20260601T120000Z&x-oss-expires=600&x-oss-credential={}",
        quoted(&scope)
    );
    let uri = format!("http://h/buckets/{}?{query}", quoted(ARN));
    let parts = http::Request::builder()
        .uri(&uri)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let canonical = format!(
        "GET\n{}\n{}\n\n\n{UNSIGNED_PAYLOAD}",
        canonical_uri(Some(ARN), REGION, parts.uri.path()),
        canonical_query(&query, true),
    );
    let sts = format!(
        "{OSS4_ALGORITHM}\n20260601T120000Z\n20260601/{REGION}/osstables/aliyun_v4_request\n{}",
        hex_sha256(canonical.as_bytes())
    );
    let signature = hex::encode(hmac_sha256(
        &signing_key(SECRET, "20260601", REGION),
        sts.as_bytes(),
    ));
    let signed = format!("{uri}&x-oss-signature={signature}");
    let parts = http::Request::builder()
        .uri(&signed)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    assert!(Oss4Verifier::is_oss4(&parts));
    let request = check(&parts).unwrap();
    assert!(matches!(request.mechanism, AuthMechanism::Presigned { .. }));
    let verifier = Oss4Verifier::new(REGION);
    assert_eq!(
        verifier.parse(&parts, at("2026-06-01T12:10:01Z")),
        Err(AuthError::RequestExpired)
    );
    let tampered = signed.replace("x-oss-expires=600", "x-oss-expires=6000");
    let parts = http::Request::builder()
        .uri(&tampered)
        .body(())
        .unwrap()
        .into_parts()
        .0;
    assert_eq!(check(&parts), Err(AuthError::SignatureMismatch));
}

#[test]
fn bodies_match_their_declared_digests() {
    let body = br#"{"namespace":["ns1"]}"#;
    let md5 = base64::engine::general_purpose::STANDARD.encode(Md5::digest(body));
    let sha = hex::encode(Sha256::digest(body));
    let parts = |headers: &[(&str, &str)]| {
        let mut builder = http::Request::builder()
            .method("PUT")
            .uri("http://h/namespaces/x");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).unwrap().into_parts().0
    };
    assert_eq!(check_body(&parts(&[]), body), Ok(()));
    assert_eq!(check_body(&parts(&[("content-md5", &md5)]), body), Ok(()));
    assert_eq!(
        check_body(&parts(&[("x-oss-content-sha256", &sha)]), body),
        Ok(())
    );
    assert_eq!(
        check_body(&parts(&[("x-oss-content-sha256", UNSIGNED_PAYLOAD)]), b"x"),
        Ok(())
    );
    assert_eq!(
        check_body(&parts(&[("content-md5", &md5)]), b"{}"),
        Err(AuthError::ContentMd5Mismatch)
    );
    assert_eq!(
        check_body(&parts(&[("x-oss-content-sha256", &sha)]), b"{}"),
        Err(AuthError::PayloadMismatch)
    );
    assert!(matches!(
        check_body(&parts(&[("content-md5", "nope")]), body),
        Err(AuthError::Malformed(_))
    ));
}
