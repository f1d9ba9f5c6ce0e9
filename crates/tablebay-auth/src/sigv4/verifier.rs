//! The server side of SigV4: [`SigV4Verifier`] parses a request's credentials into a [`SignedRequest`]
//! (checking time and scope), and verifies its signature once the caller has looked up the secret.
//!
//! The two steps are apart so that the caller can resolve the access key id (and the principal behind
//! it) between them, without this crate knowing the key store. The verifier accepts the canonical
//! variants real clients produce (`reference/iceberg-rest.md` traps 17–19 and §5): the payload hash is
//! always computed from the body, never read from `x-amz-content-sha256`.
//!
//! The caller must pass the request parts *as received*: the raw path and query of the request line
//! (before any router rewrote the URI, e.g. axum's `nest` keeps the original in `OriginalUri`), and the
//! body bytes exactly as sent.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use http::request::Parts;
use subtle::ConstantTimeEq;

use super::canonical::{
    AMZ_DATE_FORMAT, CanonicalRequest, Plus, TERMINATOR, UNSIGNED_PAYLOAD, canonical_headers,
    canonical_query, credential_scope, double_encoded_uri, hex_sha256, hmac_sha256, signing_key,
    string_to_sign,
};
use super::header::AuthorizationHeader;
use super::presigned::{PresignedQuery, is_presigned};
use super::scope::Credential;
use crate::error::AuthError;

/// Verifies AWS SigV4-signed requests for one region and a set of accepted service names.
#[derive(Debug, Clone)]
pub struct SigV4Verifier {
    region: String,
    services: Vec<String>,
    max_skew: Duration,
}

/// How a request carried its SigV4 credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMechanism {
    /// An `Authorization: AWS4-HMAC-SHA256 …` header.
    Header,
    /// A presigned URL (`X-Amz-*` query parameters), valid until `expires_at`.
    Presigned {
        /// `X-Amz-Date` + `X-Amz-Expires`.
        expires_at: DateTime<Utc>,
    },
}

/// A request whose credentials parsed and whose time and scope are acceptable, but whose signature is
/// not verified yet: look up the secret of [`SignedRequest::access_key_id`], then call
/// [`SigV4Verifier::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedRequest {
    /// The access key id from the credential scope.
    pub access_key_id: String,
    /// The session token (`x-amz-security-token` header, which must then be signed, or the
    /// `X-Amz-Security-Token` query parameter of a presigned URL).
    pub session_token: Option<String>,
    /// The service of the credential scope (one of the verifier's services).
    pub service: String,
    /// The region of the credential scope (the verifier's region).
    pub region: String,
    /// The request time the signature was made for (`x-amz-date`, `Date` or `X-Amz-Date`).
    pub request_time: DateTime<Utc>,
    /// Header or presigned URL.
    pub mechanism: AuthMechanism,
    amz_date: String,
    scope_date: String,
    signed_headers: Vec<String>,
    signature: [u8; 32],
}

impl SignedRequest {
    /// The signed header names, lower-cased, in the order the client listed them.
    pub fn signed_headers(&self) -> &[String] {
        &self.signed_headers
    }

    /// Whether `name` (lower-case) is among the signed headers.
    pub fn is_header_signed(&self, name: &str) -> bool {
        self.signed_headers.iter().any(|h| h == name)
    }
}

impl SigV4Verifier {
    /// The default allowed difference between the request time and the server's clock (AWS uses 15 min).
    pub const DEFAULT_MAX_SKEW_SECS: i64 = 15 * 60;

    /// A verifier accepting credential scopes for `region` and any of `services`
    /// (e.g. `["s3tables", "osstables", "execute-api"]`), with a 15-minute clock skew.
    pub fn new(region: impl Into<String>, services: &[&str]) -> Self {
        Self {
            region: region.into(),
            services: services.iter().map(|s| (*s).to_owned()).collect(),
            max_skew: Duration::seconds(Self::DEFAULT_MAX_SKEW_SECS),
        }
    }

    /// The same verifier with another allowed clock skew.
    #[must_use]
    pub fn with_max_skew(mut self, max_skew: Duration) -> Self {
        self.max_skew = max_skew;
        self
    }

    /// The configured region.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The accepted service names.
    pub fn services(&self) -> &[String] {
        &self.services
    }

    /// Parses the `Authorization` header (`AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`,
    /// components separated by `,` with or without spaces) or the presigned query (`X-Amz-Algorithm`,
    /// `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders`, `X-Amz-Signature`,
    /// `X-Amz-Security-Token`), and checks:
    /// - the request time (`x-amz-date`, else `Date`) is within the max skew of `now`; a presigned URL
    ///   is not expired, has `X-Amz-Expires` ≤ 7 days and is not dated in the future beyond the skew;
    /// - the scope date is the request's date, the region is the configured one, the service is one of
    ///   the configured services, and the terminator is `aws4_request`;
    /// - `host` is signed and present (`Host` header, else the URI authority).
    ///
    /// Errors: [`AuthError::Missing`] when the request carries no SigV4 authentication at all,
    /// [`AuthError::Malformed`], [`AuthError::ScopeMismatch`], [`AuthError::RequestExpired`].
    pub fn parse(&self, parts: &Parts, now: DateTime<Utc>) -> Result<SignedRequest, AuthError> {
        let mut authorization = parts.headers.get_all(http::header::AUTHORIZATION).iter();
        let first = authorization.next();
        let presigned = parts.uri.query().is_some_and(is_presigned);
        let request = match (first, authorization.next().is_some(), presigned) {
            (None, _, false) => return Err(AuthError::Missing),
            (Some(_), true, _) => {
                return Err(AuthError::Malformed(
                    "more than one Authorization header".into(),
                ));
            }
            (Some(_), false, true) => {
                return Err(AuthError::Malformed(
                    "both an Authorization header and a presigned query are present".into(),
                ));
            }
            (Some(value), false, false) => self.parse_header(parts, value.as_bytes(), now)?,
            (None, _, true) => self.parse_presigned(parts, now)?,
        };
        if parts.headers.get(http::header::HOST).is_none() && parts.uri.authority().is_none() {
            return Err(AuthError::Malformed("the request has no Host".into()));
        }
        Ok(request)
    }

    fn parse_header(
        &self,
        parts: &Parts,
        value: &[u8],
        now: DateTime<Utc>,
    ) -> Result<SignedRequest, AuthError> {
        let header = AuthorizationHeader::parse(value)?;
        let (amz_date, request_time) = request_time(&parts.headers)?;
        self.check_scope(&header.credential, &amz_date)?;
        if now.signed_duration_since(request_time).abs() > self.max_skew {
            return Err(AuthError::RequestExpired);
        }
        let session_token = single_header(&parts.headers, "x-amz-security-token")?;
        if session_token.is_some()
            && !header
                .signed_headers
                .iter()
                .any(|h| h == "x-amz-security-token")
        {
            return Err(AuthError::Malformed(
                "x-amz-security-token must be signed".into(),
            ));
        }
        let Credential {
            access_key_id,
            date,
            region,
            service,
            ..
        } = header.credential;
        Ok(SignedRequest {
            access_key_id,
            session_token,
            service,
            region,
            request_time,
            mechanism: AuthMechanism::Header,
            amz_date,
            scope_date: date,
            signed_headers: header.signed_headers,
            signature: header.signature,
        })
    }

    fn parse_presigned(
        &self,
        parts: &Parts,
        now: DateTime<Utc>,
    ) -> Result<SignedRequest, AuthError> {
        let query = PresignedQuery::parse(parts.uri.query().unwrap_or(""))?;
        let request_time = parse_amz_date(&query.amz_date)
            .ok_or_else(|| AuthError::Malformed("X-Amz-Date must be yyyymmddThhmmssZ".into()))?;
        self.check_scope(&query.credential, &query.amz_date)?;
        let expires_at = request_time
            .checked_add_signed(Duration::seconds(i64::from(query.expires_secs)))
            .ok_or_else(|| AuthError::Malformed("X-Amz-Date is out of range".into()))?;
        let not_before = now.checked_add_signed(self.max_skew).unwrap_or(now);
        if request_time > not_before || now > expires_at {
            return Err(AuthError::RequestExpired);
        }
        let Credential {
            access_key_id,
            date,
            region,
            service,
            ..
        } = query.credential;
        Ok(SignedRequest {
            access_key_id,
            session_token: query.security_token,
            service,
            region,
            request_time,
            mechanism: AuthMechanism::Presigned { expires_at },
            amz_date: query.amz_date,
            scope_date: date,
            signed_headers: query.signed_headers,
            signature: query.signature,
        })
    }

    fn check_scope(&self, credential: &Credential, amz_date: &str) -> Result<(), AuthError> {
        if credential.terminator != TERMINATOR {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential scope must end in {TERMINATOR}"
            )));
        }
        if amz_date.get(..8) != Some(credential.date.as_str()) {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential date {} is not the request date {}",
                credential.date,
                amz_date.get(..8).unwrap_or(amz_date)
            )));
        }
        if credential.region != self.region {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential region {:?} is not {:?}",
                credential.region, self.region
            )));
        }
        if !self.services.contains(&credential.service) {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential service {:?} is not one of {:?}",
                credential.service, self.services
            )));
        }
        Ok(())
    }

    /// Verifies the signature of a parsed request with the caller-supplied secret, in constant time, and says
    /// which reading of `body` the signature covers.
    ///
    /// The payload hash is the hex SHA-256 of `body` (never `x-amz-content-sha256`, which the AWS SDK for Java
    /// sends as base64: trap 17; see [`SigV4Verifier::verify_claimed`] for checking a claimed hash before the
    /// body is read); a presigned URL may instead sign `UNSIGNED-PAYLOAD`. The signature is accepted if any of
    /// these canonical variants verifies:
    /// - canonical URI: the wire path with dot segments removed and `UriEncode`d again with `/` kept
    ///   (double encoding, botocore and Java), the wire path as sent
    ///   (single encoding), and DuckDB's wire path with only `%2F` → `%252F` (trap 18);
    /// - canonical query: the query as the surfaces read it (`form.rs`: `+` is a space, as PyIceberg's signer
    ///   reads it with `parse_qsl`; botocore and the SDKs send a plus as `%2B`), and the raw query as sent (DuckDB
    ///   signs its own, unsorted). A `+` is never read as a plus: a signature over `a%2Bb` would then also vouch
    ///   for `a+b`, which the surfaces read as `a b`;
    /// - payload: when the body is not UTF-8, also the hash of `utf8(latin1_decode(body))` (Java 1.10
    ///   sends ISO-8859-1 but hashes UTF-8: trap 19). Then the answer is [`SignedPayload::Latin1AsUtf8`]: the
    ///   signed text is that transcoding, and the caller must read the body as it (never guess otherwise).
    pub fn verify(
        &self,
        req: &SignedRequest,
        parts: &Parts,
        body: &[u8],
        secret_access_key: &str,
    ) -> Result<SignedPayload, AuthError> {
        let presigned = matches!(req.mechanism, AuthMechanism::Presigned { .. });
        self.verify_payloads(
            req,
            parts,
            &payload_variants(body, presigned),
            secret_access_key,
        )
    }

    /// Verifies the signature against the payload hash the request claims in `x-amz-content-sha256`
    /// ([`claimed_payload_hash`]), before its body is read; the body must then pass
    /// [`check_claimed_payload`] once it has arrived.
    pub fn verify_claimed(
        &self,
        req: &SignedRequest,
        parts: &Parts,
        claimed: &[u8; 32],
        secret_access_key: &str,
    ) -> Result<(), AuthError> {
        let payload = (hex::encode(claimed), SignedPayload::AsSent);
        self.verify_payloads(req, parts, &[payload], secret_access_key)
            .map(|_| ())
    }

    fn verify_payloads(
        &self,
        req: &SignedRequest,
        parts: &Parts,
        payloads: &[(String, SignedPayload)],
        secret_access_key: &str,
    ) -> Result<SignedPayload, AuthError> {
        let key = signing_key(
            secret_access_key,
            &req.scope_date,
            &req.region,
            &req.service,
        );
        let scope = credential_scope(&req.scope_date, &req.region, &req.service);
        let headers = canonical_headers(
            &parts.headers,
            parts.uri.authority().map(http::uri::Authority::as_str),
            &req.signed_headers,
        );
        let signed_headers = req.signed_headers.join(";");
        let presigned = matches!(req.mechanism, AuthMechanism::Presigned { .. });
        let uris = uri_variants(parts.uri.path());
        let queries = query_variants(parts.uri.query().unwrap_or(""), presigned);

        // Every variant is computed and compared in constant time; which one matched only selects the answer.
        let mut matched = None;
        for uri in &uris {
            for query in &queries {
                for (payload, reading) in payloads {
                    let canonical = CanonicalRequest {
                        method: parts.method.as_str(),
                        uri,
                        query,
                        headers: &headers,
                        signed_headers: &signed_headers,
                        payload,
                    }
                    .to_bytes();
                    let sts = string_to_sign(&req.amz_date, &scope, &canonical);
                    let equal: bool = hmac_sha256(&key, sts.as_bytes())
                        .ct_eq(&req.signature)
                        .into();
                    if equal && matched.is_none() {
                        matched = Some(*reading);
                    }
                }
            }
        }
        if let Some(reading) = matched {
            return Ok(reading);
        }
        if tracing::enabled!(tracing::Level::DEBUG) {
            let first = CanonicalRequest {
                method: parts.method.as_str(),
                uri: uris.first().map_or("", String::as_str),
                query: queries.first().map_or("", String::as_str),
                headers: &redact_for_log(&headers),
                signed_headers: &signed_headers,
                payload: payloads.first().map_or("", |(p, _)| p.as_str()),
            }
            .to_bytes();
            tracing::debug!(
                access_key_id = %req.access_key_id,
                variants = uris.len() * queries.len() * payloads.len(),
                canonical_request = %String::from_utf8_lossy(&first),
                "SigV4 signature mismatch"
            );
        }
        Err(AuthError::SignatureMismatch)
    }
}

/// Which bytes a verified signature covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedPayload {
    /// The body as sent.
    AsSent,
    /// The UTF-8 encoding of the body read as ISO-8859-1: what Java 1.10 hashes while it sends Latin-1 bytes
    /// (trap 19). The request's text is that transcoding ([`latin1_to_utf8`]).
    Latin1AsUtf8,
    /// Nothing: a presigned URL that signs `UNSIGNED-PAYLOAD`.
    Unsigned,
}

/// The UTF-8 encoding of `body` read as ISO-8859-1 (each byte is the code point of the same value).
pub fn latin1_to_utf8(body: &[u8]) -> String {
    body.iter().copied().map(char::from).collect()
}

/// The payload hash a request claims in `x-amz-content-sha256`: hex, or base64 as the AWS SDK for Java sends it
/// for non-empty bodies (trap 17). `None` when there is no such header or it is not a hash
/// (`UNSIGNED-PAYLOAD`, streaming markers).
pub fn claimed_payload_hash(parts: &Parts) -> Option<[u8; 32]> {
    use base64::Engine;
    let value = parts
        .headers
        .get("x-amz-content-sha256")?
        .to_str()
        .ok()?
        .trim();
    let bytes = match value.len() {
        64 => hex::decode(value).ok()?,
        44 => base64::engine::general_purpose::STANDARD
            .decode(value)
            .ok()?,
        _ => return None,
    };
    bytes.try_into().ok()
}

/// Checks a body that arrived after [`SigV4Verifier::verify_claimed`] against the claimed hash: its SHA-256, or
/// for a body that is not UTF-8 the SHA-256 of its Latin-1 transcoding (trap 19).
pub fn check_claimed_payload(claimed: &[u8; 32], body: &[u8]) -> Result<SignedPayload, AuthError> {
    use sha2::Digest;
    let as_sent: [u8; 32] = sha2::Sha256::digest(body).into();
    if bool::from(as_sent.ct_eq(claimed)) {
        return Ok(SignedPayload::AsSent);
    }
    if std::str::from_utf8(body).is_err() {
        let latin1: [u8; 32] = sha2::Sha256::digest(latin1_to_utf8(body).as_bytes()).into();
        if bool::from(latin1.ct_eq(claimed)) {
            return Ok(SignedPayload::Latin1AsUtf8);
        }
    }
    Err(AuthError::PayloadMismatch)
}

/// Canonical URI variants for a wire path, without duplicates (trap 18).
fn uri_variants(raw_path: &str) -> Vec<String> {
    let path = if raw_path.is_empty() { "/" } else { raw_path };
    let mut out = Vec::with_capacity(4);
    for candidate in [
        double_encoded_uri(path),
        path.to_owned(),
        path.replace("%2F", "%252F"),
    ] {
        push_unique(&mut out, candidate);
    }
    out
}

/// Canonical query variants, without duplicates: the form reading the surfaces parse the query with (`+` is a
/// space), and the raw query as sent.
fn query_variants(raw_query: &str, presigned: bool) -> Vec<String> {
    let mut out = vec![canonical_query(raw_query, Plus::Space, presigned)];
    if !presigned {
        push_unique(&mut out, raw_query.to_owned());
    }
    out
}

/// Payload hash variants and the reading each stands for: the body's hex SHA-256; for a non-UTF-8 body also the
/// hash of its Latin-1 reading re-encoded as UTF-8 (trap 19); for a presigned URL also `UNSIGNED-PAYLOAD`.
fn payload_variants(body: &[u8], presigned: bool) -> Vec<(String, SignedPayload)> {
    let mut out = Vec::with_capacity(3);
    if presigned {
        out.push((UNSIGNED_PAYLOAD.to_owned(), SignedPayload::Unsigned));
    }
    out.push((hex_sha256(body), SignedPayload::AsSent));
    if std::str::from_utf8(body).is_err() {
        out.push((
            hex_sha256(latin1_to_utf8(body).as_bytes()),
            SignedPayload::Latin1AsUtf8,
        ));
    }
    out
}

fn push_unique(out: &mut Vec<String>, candidate: String) {
    if !out.contains(&candidate) {
        out.push(candidate);
    }
}

/// The request time for header authentication: `x-amz-date` (ISO 8601 basic), else `Date` (an HTTP
/// date, or ISO 8601 basic). Returns the string that goes into the string to sign, and the time.
fn request_time(headers: &http::HeaderMap) -> Result<(String, DateTime<Utc>), AuthError> {
    if let Some(value) = single_header(headers, "x-amz-date")? {
        let time = parse_amz_date(&value)
            .ok_or_else(|| AuthError::Malformed("x-amz-date must be yyyymmddThhmmssZ".into()))?;
        return Ok((value, time));
    }
    if let Some(value) = single_header(headers, "date")? {
        let time = DateTime::parse_from_rfc2822(value.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc))
            .or_else(|| parse_amz_date(value.trim()))
            .ok_or_else(|| AuthError::Malformed("the Date header is not a valid date".into()))?;
        return Ok((time.format(AMZ_DATE_FORMAT).to_string(), time));
    }
    Err(AuthError::Malformed(
        "the request has neither x-amz-date nor Date".into(),
    ))
}

/// Parses `yyyymmddThhmmssZ` strictly (exactly 16 characters).
pub(crate) fn parse_amz_date(value: &str) -> Option<DateTime<Utc>> {
    let shaped = value.len() == 16
        && value.bytes().enumerate().all(|(i, b)| match i {
            8 => b == b'T',
            15 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    if !shaped {
        return None;
    }
    NaiveDateTime::parse_from_str(value, AMZ_DATE_FORMAT)
        .ok()
        .map(|t| t.and_utc())
}

/// The value of a header that may appear at most once, as a string.
pub(crate) fn single_header(
    headers: &http::HeaderMap,
    name: &str,
) -> Result<Option<String>, AuthError> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(AuthError::Malformed(format!("more than one {name} header")));
    }
    let value = value
        .to_str()
        .map_err(|_| AuthError::Malformed(format!("the {name} header is not visible ASCII")))?;
    Ok(Some(value.to_owned()))
}

/// Blanks the values of credential-bearing headers in a canonical headers block, for debug logs.
fn redact_for_log(block: &[u8]) -> Vec<u8> {
    const SECRET_HEADERS: [&[u8]; 4] = [
        b"x-amz-security-token:",
        b"authorization:",
        b"original-authorization:",
        b"cookie:",
    ];
    let mut out = Vec::with_capacity(block.len());
    for line in block.split_inclusive(|&b| b == b'\n') {
        match SECRET_HEADERS
            .iter()
            .find(|prefix| line.starts_with(prefix))
        {
            Some(prefix) => {
                out.extend_from_slice(prefix);
                out.extend_from_slice(b"<redacted>\n");
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        assert_eq!(
            parse_amz_date("20150830T123600Z").map(|t| t.to_rfc3339()),
            Some("2015-08-30T12:36:00+00:00".into())
        );
        for bad in [
            "",
            "20150830T123600",
            "20150830T123600ZZ",
            "2015-08-30T12:36:00Z",
            "20151330T123600Z",
            "+0150830T123600Z",
        ] {
            assert!(parse_amz_date(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn variants() {
        let uris = uri_variants("/namespaces/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb");
        assert_eq!(
            uris,
            [
                "/namespaces/arn%253Aaws%253As3tables%253Aus-east-1%253A1%253Abucket%252Fb",
                "/namespaces/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb",
                "/namespaces/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%252Fb",
            ]
        );
        assert_eq!(uri_variants("/"), ["/"]);
        assert_eq!(
            query_variants("b=1&a=x+y", false),
            ["a=x%20y&b=1", "b=1&a=x+y"]
        );
        assert_eq!(query_variants("X-Amz-Signature=1&a=x", true), ["a=x"]);
        assert_eq!(payload_variants(b"", false).len(), 1);
        assert_eq!(payload_variants(b"caf\xe9", false).len(), 2);
        assert_eq!(
            payload_variants(b"", true),
            [
                (UNSIGNED_PAYLOAD.to_owned(), SignedPayload::Unsigned),
                (hex_sha256(b""), SignedPayload::AsSent)
            ]
        );
    }

    /// Found by the `sigv4_query` fuzz target: a signature over `a%2Bb` (a plus) verified for `a+b`, which the
    /// surfaces read as `a b`, so a captured request could be re-spelled into another one. Both ways are refused
    /// now, in headers and presigned URLs; re-spellings that read the same still verify.
    #[test]
    fn a_plus_is_read_as_the_surfaces_read_it() {
        use crate::sigv4::signer::{SigningParams, presign, sign_with};
        let now = Utc::now();
        let params = SigningParams {
            access_key_id: "AK",
            secret_access_key: "S",
            session_token: None,
            region: "us-east-1",
            service: "s3tables",
            time: now,
        };
        let verifier = SigV4Verifier::new("us-east-1", &["s3tables"]);
        let verifies = |p: &Parts, query: &str| {
            let mut p = p.clone();
            p.uri = format!("/buckets?{query}").parse().unwrap();
            let request = verifier.parse(&p, now).unwrap();
            verifier.verify(&request, &p, b"", "S").is_ok()
        };
        for (signed, respelled, same_meaning) in [
            ("prefix=a%2Bb", "prefix=a+b", false),
            ("prefix=a+b", "prefix=a%2Bb", false),
            ("prefix=a%20b", "prefix=a+b", true),
            ("prefix=a+b", "prefix=a%20b", true),
            ("prefix=a%2fb", "prefix=a%2Fb", true),
        ] {
            let parts = || {
                let request = http::Request::get(format!("/buckets?{signed}")).header("host", "h");
                request.body(()).unwrap().into_parts().0
            };
            let mut header = parts();
            sign_with(&mut header, b"", &params).unwrap();
            assert!(verifies(&header, signed), "{signed}");
            assert_eq!(
                verifies(&header, respelled),
                same_meaning,
                "{signed} -> {respelled}"
            );

            let mut url = parts();
            presign(&mut url, &params, 60).unwrap();
            let query = url.uri.query().unwrap().to_owned();
            assert!(verifies(&url, &query), "{query}");
            let query = query.replacen(signed, respelled, 1);
            assert_eq!(verifies(&url, &query), same_meaning, "{query}");
        }
    }

    #[test]
    fn redaction() {
        let block = b"host:h\nx-amz-security-token:SECRET\noriginal-authorization:Bearer SECRET\n";
        let redacted = String::from_utf8(redact_for_log(block)).unwrap();
        assert!(!redacted.contains("SECRET"));
        assert!(redacted.starts_with("host:h\n"));
    }
}
