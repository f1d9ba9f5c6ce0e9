//! The SigV4 canonical request, string to sign and signing key, shared by the verifier and the signer.
//!
//! Spec: <https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html>. What the real
//! clients put into each part (and where they differ) is in `reference/iceberg-rest.md` §5 and traps 17–19,
//! and `reference/s3tables-api.md` §1.1. This module only builds byte strings; deciding which variants to
//! try lives in `verifier.rs`, parsing the credentials in `header.rs` and `presigned.rs`.

use hmac::digest::{Key, KeyInit};
use hmac::{Hmac, Mac};
use http::HeaderMap;
use percent_encoding::percent_decode_str;
use sha2::{Digest, Sha256};

/// The only algorithm Tablebay accepts (SigV4a's `AWS4-ECDSA-P256-SHA256` is not supported).
pub(crate) const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The last element of every credential scope.
pub(crate) const TERMINATOR: &str = "aws4_request";
/// The payload hash a presigned URL signs instead of the body's hash.
pub(crate) const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// `x-amz-date` / `X-Amz-Date` layout (ISO 8601 basic, UTC).
pub(crate) const AMZ_DATE_FORMAT: &str = "%Y%m%dT%H%M%SZ";

/// SigV4 `UriEncode`: keeps `A-Za-z0-9-._~` (and `/` when `keep_slash`), writes every other byte as
/// `%XX` with upper-case hex. A space becomes `%20`, never `+`.
pub(crate) fn uri_encode(input: &[u8], keep_slash: bool, out: &mut String) {
    for &b in input {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(hex_upper(b >> 4));
            out.push(hex_upper(b & 0x0f));
        }
    }
}

fn hex_upper(nibble: u8) -> char {
    match nibble {
        0..=9 => char::from(b'0' + nibble),
        _ => char::from(b'A' + (nibble & 0x0f).saturating_sub(10)),
    }
}

/// Removes `.` and `..` segments from an absolute path (RFC 3986 §5.2.4) and collapses empty segments,
/// as botocore's `remove_dot_segments` and `java.net.URI.normalize` (AWS SDK for Java) do. The result
/// always starts with `/`; a trailing `/` (or a final `.`/`..`) is kept as a trailing `/`.
pub(crate) fn remove_dot_segments(path: &str) -> String {
    let mut output: Vec<&str> = Vec::new();
    let trimmed = path.strip_prefix('/').unwrap_or(path);
    let mut segments = trimmed.split('/').peekable();
    let mut trailing_slash = false;
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        match segment {
            "." => trailing_slash = last,
            ".." => {
                output.pop();
                trailing_slash = last;
            }
            "" => trailing_slash = last,
            _ => {
                output.push(segment);
                trailing_slash = false;
            }
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    out.push('/');
    out.push_str(&output.join("/"));
    if trailing_slash && !output.is_empty() {
        out.push('/');
    }
    out
}

/// The double-encoded canonical URI botocore and the AWS SDK for Java produce: the wire path with dot
/// segments removed, then `UriEncode`d again with `/` kept (`%1F` → `%251F`, `:` → `%3A`). Trap 18.
pub(crate) fn double_encoded_uri(raw_path: &str) -> String {
    let normalized = remove_dot_segments(raw_path);
    let mut out = String::with_capacity(normalized.len() + 16);
    uri_encode(normalized.as_bytes(), true, &mut out);
    out
}

/// How a `+` in a raw query string is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plus {
    /// `+` is a literal plus (SigV4 and RFC 3986; botocore sends a plus as `%2B` anyway).
    Literal,
    /// `+` is a space (HTML form encoding: PyIceberg's signer re-parses the query with `parse_qsl`).
    Space,
}

/// The canonical query string: every raw `k=v` pair percent-decoded, re-encoded with `UriEncode`,
/// sorted by key then value, joined with `&`; a pair without `=` becomes `k=`. With
/// `exclude_signature`, the `X-Amz-Signature` parameter of a presigned URL is left out.
pub(crate) fn canonical_query(raw_query: &str, plus: Plus, exclude_signature: bool) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = query_decode(raw_key, plus);
        if exclude_signature && key == b"X-Amz-Signature" {
            continue;
        }
        let mut k = String::with_capacity(raw_key.len());
        uri_encode(&key, false, &mut k);
        let mut v = String::with_capacity(raw_value.len());
        uri_encode(&query_decode(raw_value, plus), false, &mut v);
        pairs.push((k, v));
    }
    pairs.sort();
    let mut out = String::with_capacity(raw_query.len());
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// Percent-decodes one query key or value into bytes (not necessarily UTF-8).
pub(crate) fn query_decode(raw: &str, plus: Plus) -> Vec<u8> {
    match plus {
        Plus::Literal => percent_decode_str(raw).collect(),
        Plus::Space => percent_decode_str(&raw.replace('+', " ")).collect(),
    }
}

/// The canonical headers block: one `name:value\n` line per signed header, in the order of `signed`
/// (already lower-cased). Values are trimmed and inner runs of spaces/tabs collapse to one space;
/// several values of one header are joined with `,`. `host` falls back to the URI authority (HTTP/2
/// `:authority`) when there is no `Host` header. A signed header that is absent gives `name:`.
pub(crate) fn canonical_headers(
    headers: &HeaderMap,
    authority: Option<&str>,
    signed: &[String],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(signed.len() * 32);
    for name in signed {
        out.extend_from_slice(name.as_bytes());
        out.push(b':');
        let mut count = 0usize;
        for value in headers.get_all(name.as_str()) {
            if count > 0 {
                out.push(b',');
            }
            trim_all(value.as_bytes(), &mut out);
            count += 1;
        }
        if let Some(authority) = authority.filter(|_| count == 0 && name == "host") {
            trim_all(authority.as_bytes(), &mut out);
        }
        out.push(b'\n');
    }
    out
}

/// SigV4 `Trimall`: drops leading and trailing whitespace and collapses inner runs to one space.
fn trim_all(value: &[u8], out: &mut Vec<u8>) {
    let mut started = false;
    let mut pending_space = false;
    for &b in value {
        if b == b' ' || b == b'\t' {
            pending_space = started;
        } else {
            if pending_space {
                out.push(b' ');
                pending_space = false;
            }
            out.push(b);
            started = true;
        }
    }
}

/// The pieces of one canonical request.
pub(crate) struct CanonicalRequest<'a> {
    /// HTTP method as sent (`GET`, `PUT`, …).
    pub(crate) method: &'a str,
    /// Canonical URI (one of the variants).
    pub(crate) uri: &'a str,
    /// Canonical query string (one of the variants).
    pub(crate) query: &'a str,
    /// Canonical headers block, each line ending in `\n`.
    pub(crate) headers: &'a [u8],
    /// Signed header names joined with `;`.
    pub(crate) signed_headers: &'a str,
    /// Hex SHA-256 of the payload, or `UNSIGNED-PAYLOAD`.
    pub(crate) payload: &'a str,
}

impl CanonicalRequest<'_> {
    /// The canonical request bytes: the six parts joined with `\n` (the headers block brings its own).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            self.method.len() + self.uri.len() + self.query.len() + self.headers.len() + 160,
        );
        for part in [self.method, self.uri, self.query] {
            out.extend_from_slice(part.as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(self.headers);
        out.push(b'\n');
        out.extend_from_slice(self.signed_headers.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(self.payload.as_bytes());
        out
    }
}

/// `AWS4-HMAC-SHA256\n<amz-date>\n<scope>\n<hex sha256(canonical request)>`.
pub(crate) fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &[u8]) -> String {
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex_sha256(canonical_request)
    )
}

/// `<yyyymmdd>/<region>/<service>/aws4_request`.
pub(crate) fn credential_scope(date: &str, region: &str, service: &str) -> String {
    format!("{date}/{region}/{service}/{TERMINATOR}")
}

/// The SigV4 signing key: HMAC chain `AWS4<secret>` → date → region → service → `aws4_request`.
pub(crate) fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_secret = format!("AWS4{secret}");
    let k_date = hmac_sha256(k_secret.as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    hmac_sha256(&k_service, TERMINATOR.as_bytes())
}

/// HMAC-SHA256 of `msg` under `key` (any key length).
pub(crate) fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    // RFC 2104 key preparation, done here so that no fallible constructor is needed: a key longer than
    // the 64-byte block is hashed first, a shorter one is zero-padded to the block.
    let mut block = Key::<Hmac<Sha256>>::default();
    if key.len() > block.len() {
        let digest = Sha256::digest(key);
        block
            .iter_mut()
            .zip(digest.iter())
            .for_each(|(dst, src)| *dst = *src);
    } else {
        block
            .iter_mut()
            .zip(key.iter())
            .for_each(|(dst, src)| *dst = *src);
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new(&block);
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// Lower-case hex SHA-256 of `data`.
pub(crate) fn hex_sha256(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_encoding() {
        for (input, keep_slash, expected) in [
            ("/a b/c", true, "/a%20b/c"),
            ("/a b/c", false, "%2Fa%20b%2Fc"),
            ("-._~AZaz09", false, "-._~AZaz09"),
            ("a+b=c&d", false, "a%2Bb%3Dc%26d"),
            ("/ns%1Fsub", true, "/ns%251Fsub"),
            ("é", false, "%C3%A9"),
        ] {
            let mut out = String::new();
            uri_encode(input.as_bytes(), keep_slash, &mut out);
            assert_eq!(out, expected, "{input}");
        }
    }

    #[test]
    fn dot_segments() {
        for (path, expected) in [
            ("/", "/"),
            ("", "/"),
            ("/a/b", "/a/b"),
            ("/a/b/", "/a/b/"),
            ("/example/..", "/"),
            ("/example1/example2/../..", "/"),
            ("/./", "/"),
            ("/./example", "/example"),
            ("//", "/"),
            ("//example//", "/example/"),
            ("/a/./b/../c", "/a/c"),
            ("/a/b/.", "/a/b/"),
            ("/..", "/"),
            ("/a//b/../c/.", "/a/c/"),
        ] {
            assert_eq!(remove_dot_segments(path), expected, "{path}");
        }
    }

    #[test]
    fn query_canonicalization() {
        use Plus::{Literal, Space};
        for (raw, plus, expected) in [
            ("", Literal, ""),
            (
                "Param2=value2&Param1=value1",
                Literal,
                "Param1=value1&Param2=value2",
            ),
            (
                "Param-3=Value3&Param=Value2&%E1%88%B4=Value1",
                Literal,
                "%E1%88%B4=Value1&Param=Value2&Param-3=Value3",
            ),
            ("b=2&a&c=", Literal, "a=&b=2&c="),
            ("k=b&k=a", Literal, "k=a&k=b"),
            ("a=x+y", Literal, "a=x%2By"),
            ("a=x+y", Space, "a=x%20y"),
            ("a=x%2By", Space, "a=x%2By"),
            ("token=abc%2F%2B%3D", Literal, "token=abc%2F%2B%3D"),
            ("a=%zz", Literal, "a=%25zz"),
            ("a=b/c:d", Literal, "a=b%2Fc%3Ad"),
            ("&&a=1&", Literal, "a=1"),
        ] {
            assert_eq!(
                canonical_query(raw, plus, false),
                expected,
                "{raw} {plus:?}"
            );
        }
        assert_eq!(
            canonical_query("X-Amz-Signature=ab&b=1", Literal, true),
            "b=1"
        );
        assert_eq!(
            canonical_query("X-Amz-Signature=ab&b=1", Literal, false),
            "X-Amz-Signature=ab&b=1"
        );
    }

    #[test]
    fn header_trimming() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "my-header2",
            http::HeaderValue::from_static("  \"a   b \t  c\"  "),
        );
        headers.append("my-header1", http::HeaderValue::from_static("value2"));
        headers.append("my-header1", http::HeaderValue::from_static(" value1"));
        let signed = [
            "host".to_owned(),
            "my-header1".to_owned(),
            "my-header2".to_owned(),
        ];
        let block = canonical_headers(&headers, Some("example.com:8080"), &signed);
        assert_eq!(
            String::from_utf8(block).unwrap(),
            "host:example.com:8080\nmy-header1:value2,value1\nmy-header2:\"a b c\"\n"
        );
    }

    // RFC 4231 test cases 1, 2 and 6 (key longer than the block).
    #[test]
    fn hmac_vectors() {
        assert_eq!(
            hex::encode(hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    // AWS docs' signing-key example: secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 20120215, us-east-1, iam.
    #[test]
    fn signing_key_example() {
        assert_eq!(
            hex::encode(signing_key(
                "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                "20120215",
                "us-east-1",
                "iam"
            )),
            "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
        );
    }
}
