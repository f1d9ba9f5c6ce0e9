//! Helpers shared by the integration tests: building request parts and times.
#![allow(dead_code)]

use chrono::{DateTime, Utc};
use http::request::Parts;

/// Request parts from a method, a raw request target and headers (appended in order, so repeated names
/// become multiple values).
pub fn parts<K: AsRef<str>, V: AsRef<[u8]>>(
    method: &str,
    target: &str,
    headers: &[(K, V)],
) -> Parts {
    let mut builder = http::Request::builder().method(method).uri(target);
    for (k, v) in headers {
        builder = builder.header(
            k.as_ref(),
            http::HeaderValue::from_bytes(v.as_ref()).unwrap(),
        );
    }
    builder.body(()).unwrap().into_parts().0
}

/// An RFC 3339 time.
pub fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// A tiny deterministic PRNG (xorshift64*), so the garbage tests need no extra dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn bytes(&mut self, max_len: usize, alphabet: &[u8]) -> Vec<u8> {
        let len = self.below(max_len + 1);
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}
