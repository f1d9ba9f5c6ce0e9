//! What both SigV4 targets share: the fixed clock and key store, a reader that turns fuzz bytes into request parts
//! the way a client could send them, one-byte edits, and "verifies as the server would".
#![allow(dead_code)]

use chrono::{DateTime, TimeZone, Utc};
use http::request::Parts;
use tablebay_auth::{SigV4Verifier, SignedRequest};

pub const REGION: &str = "us-east-1";
pub const SERVICES: &[&str] = &["s3tables", "execute-api"];
pub const HOST: &str = "tables.example.test:8765";
pub const KEY_ID: &str = "AKIDEXAMPLE";
pub const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

/// The server's clock: fixed, so that every input is judged at the same instant.
pub fn now() -> DateTime<Utc> {
    Utc.timestamp_opt(1_780_000_000, 0).unwrap()
}

pub fn verifier() -> SigV4Verifier {
    SigV4Verifier::new(REGION, SERVICES)
}

/// The key store the server consults between `parse` and `verify`: one key. The access key id is not part of the
/// string to sign, so without this lookup any id would "verify" with the fixed secret.
pub fn secret_of(access_key_id: &str) -> Option<&'static str> {
    (access_key_id == KEY_ID).then_some(SECRET)
}

/// Parses and verifies as the pipeline does; `Some` with the parsed request when the signature holds.
pub fn verified(verifier: &SigV4Verifier, parts: &Parts, body: &[u8]) -> Option<SignedRequest> {
    let request = verifier.parse(parts, now()).ok()?;
    let secret = secret_of(&request.access_key_id)?;
    verifier.verify(&request, parts, body, secret).ok()?;
    Some(request)
}

/// Request parts for a method, path-and-query and headers; `None` when `http` refuses them (a client could not
/// send them either).
pub fn parts(method: &str, path_and_query: &str, headers: &[(&str, Vec<u8>)]) -> Option<Parts> {
    let mut builder = http::Request::builder().method(method).uri(path_and_query);
    for (name, value) in headers {
        builder = builder.header(*name, http::HeaderValue::from_bytes(value).ok()?);
    }
    builder.body(()).ok().map(|r| r.into_parts().0)
}

/// A cursor over the fuzz input.
pub struct Input<'a>(pub &'a [u8]);

impl<'a> Input<'a> {
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    /// A length-prefixed chunk of at most `max` bytes.
    pub fn chunk(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.byte()) % (max + 1);
        self.take(n)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.0.len())
    }
}

/// Characters a path or query may carry unencoded (RFC 3986 `pchar` and `/`, `?`-free); `&` and `=` only where
/// `query` says so. Anything else is sent as `%XX`, as a client would.
fn uri_text(bytes: &[u8], query: bool) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &b in bytes {
        let plain = b.is_ascii_alphanumeric()
            || b"-._~!$'()*+,;:@/".contains(&b)
            || (query && (b == b'&' || b == b'='));
        // Bytes 0x80..: a raw `%` so that the fuzzer can also write broken escapes (`%G1`, a lone `%`).
        if plain || b == b'%' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn path(bytes: &[u8]) -> String {
    format!("/{}", uri_text(bytes, false))
}

pub fn query(bytes: &[u8]) -> String {
    uri_text(bytes, true)
}

/// A header value a client could send: visible ASCII, spaces and tabs.
pub fn header_text(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| if b == b'\t' || (0x20..0x7f).contains(&b) { b } else { b'a' + b % 26 })
        .collect()
}

/// One one-byte edit of `value` chosen by the input: replace, insert or delete a byte. `None` when it would not
/// change anything.
pub fn edit(input: &mut Input<'_>, value: &[u8]) -> Option<Vec<u8>> {
    let op = input.byte() % 3;
    let at = usize::from(input.u16());
    let byte = input.byte();
    let mut out = value.to_vec();
    match op {
        0 if !out.is_empty() => {
            let at = at % out.len();
            if out[at] == byte {
                return None;
            }
            out[at] = byte;
        }
        1 => out.insert(at % (out.len() + 1), byte),
        2 if !out.is_empty() => {
            out.remove(at % out.len());
        }
        _ => return None,
    }
    Some(out)
}

/// Another spelling of one character of a query, chosen by the input: a `%XX` escape written as the character it
/// stands for, or a character written as its escape. A client may spell a query either way, and an attacker who
/// holds a signed request may try it, so a re-spelling must verify only when the application reads it the same.
pub fn respell(input: &mut Input<'_>, query: &str) -> Option<String> {
    let bytes = query.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let at = usize::from(input.u16()) % bytes.len();
    let escape = bytes
        .get(at..at + 3)
        .filter(|e| e[0] == b'%' && e[1].is_ascii_hexdigit() && e[2].is_ascii_hexdigit())
        .and_then(|e| u8::from_str_radix(std::str::from_utf8(&e[1..]).ok()?, 16).ok());
    let mut out = String::with_capacity(query.len() + 2);
    out.push_str(query.get(..at)?);
    match escape {
        // Only characters a URI may carry unescaped.
        Some(b) if b.is_ascii_graphic() && !b"#%?\"<>`^{|}[]".contains(&b) => {
            out.push(char::from(b));
            out.push_str(query.get(at + 3..)?);
        }
        Some(_) => return None,
        None => {
            out.push_str(&format!("%{:02X}", bytes[at]));
            out.push_str(query.get(at + 1..)?);
        }
    }
    Some(out)
}

/// A query string as the application reads it (`application/x-www-form-urlencoded`: `+` is a space), sorted:
/// SigV4 does not sign the order of parameters, so the order is not part of what a signature vouches for.
pub fn query_meaning(raw: &str, skip: &[&str]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let decode = |s: &str| -> Vec<u8> {
        percent_encoding::percent_decode_str(&s.replace('+', " ")).collect()
    };
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = raw
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .map(|(k, v)| (decode(k), decode(v)))
        .filter(|(k, _)| !skip.iter().any(|s| s.as_bytes() == k.as_slice()))
        .collect();
    pairs.sort();
    pairs
}
