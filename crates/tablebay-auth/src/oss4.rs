//! Alibaba Cloud's OSS V4 signatures as the OSS Tables clients send them (`OSS4-HMAC-SHA256`, product
//! `osstables`): what `alibabacloud-oss-v2`'s `signer/tables_v4.py` and the Go SDK's `signer/tables_v4.go` write,
//! and ossutil 2.x with them (`reference/oss-v4-tables-signing.md`).
//!
//! It is SigV4's construction with other names, and one trap: the canonical URI is not the request path but
//! `/<bucket ARN>/<percent-decoded path>` (or `/acs:osstables:<region>::bucket//<path>` for the operations
//! without a bucket), percent-encoded again with `/` kept. The SDK takes the bucket ARN from the operation's input,
//! which the request carries in its path (`/buckets|namespaces|tables/<ARN>/…`) or, for GetTable, in its query
//! (`tableBucketARN`, or the bucket part of `tableArn`); [`Oss4Verifier::verify`] rebuilds it from there.
//!
//! The signature covers the headers and `x-oss-content-sha256` (`UNSIGNED-PAYLOAD` from the SDKs), never the body
//! itself, so it is verified before the body is read; [`check_body`] then checks the body against the digests the
//! request declares (`x-oss-content-sha256` when it is a hash, `Content-MD5`).

use base64::Engine as _;
use chrono::{DateTime, Duration, Utc};
use http::request::Parts;
use md5::Md5;
use percent_encoding::percent_decode_str;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::AuthError;
use crate::sigv4::AuthMechanism;
use crate::sigv4::canonical::{hex_sha256, hmac_sha256, uri_encode};
use crate::sigv4::scope::Credential;
use crate::sigv4::verifier::{parse_amz_date, single_header};

/// The algorithm of the header form and the `x-oss-signature-version` of the query form.
pub const OSS4_ALGORITHM: &str = "OSS4-HMAC-SHA256";
/// The product of the OSS Tables API's credential scope.
pub const TABLES_PRODUCT: &str = "osstables";
const TERMINATOR: &str = "aliyun_v4_request";
const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// The longest validity a presigned URL may ask for (OSS's limit: 7 days).
const MAX_EXPIRES_SECS: i64 = 7 * 24 * 3600;

/// Verifies OSS V4-signed requests of the OSS Tables API for one region.
#[derive(Debug, Clone)]
pub struct Oss4Verifier {
    region: String,
    max_skew: Duration,
}

/// A request whose OSS V4 credentials parsed and whose time and scope are acceptable; its signature is checked by
/// [`Oss4Verifier::verify`] once the caller has looked up the secret of [`Oss4Request::access_key_id`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oss4Request {
    /// The access key id of the credential.
    pub access_key_id: String,
    /// `x-oss-security-token` (header, or query of a presigned URL): temporary credentials.
    pub session_token: Option<String>,
    /// `x-oss-date`.
    pub request_time: DateTime<Utc>,
    /// Header or presigned URL.
    pub mechanism: AuthMechanism,
    oss_date: String,
    region: String,
    additional_headers: Vec<String>,
    signature: [u8; 32],
}

impl Oss4Verifier {
    /// A verifier for scopes of `region` and product `osstables`, with a 15-minute clock skew.
    pub fn new(region: impl Into<String>) -> Self {
        Self {
            region: region.into(),
            max_skew: Duration::minutes(15),
        }
    }

    /// Whether the request is OSS V4-signed (its `Authorization` names the algorithm, or its query carries
    /// `x-oss-signature-version`): such a request is answered by this verifier, and in OSS's error shape.
    pub fn is_oss4(parts: &Parts) -> bool {
        let header = parts
            .headers
            .get(http::header::AUTHORIZATION)
            .is_some_and(|v| v.as_bytes().starts_with(OSS4_ALGORITHM.as_bytes()));
        header
            || parts.uri.query().is_some_and(|q| {
                q.split('&')
                    .any(|pair| pair.split('=').next() == Some("x-oss-signature-version"))
            })
    }

    /// Parses the `Authorization` header (`OSS4-HMAC-SHA256 Credential=<AK>/<date>/<region>/osstables/
    /// aliyun_v4_request[,AdditionalHeaders=<h1;h2>],Signature=<hex>` with `x-oss-date`) or the presigned query,
    /// and checks the scope (the request's date, this region, `osstables`), the clock skew (±15 minutes), a
    /// presigned URL's expiry, and that every additional header is in the request.
    pub fn parse(&self, parts: &Parts, now: DateTime<Utc>) -> Result<Oss4Request, AuthError> {
        let header = single_header(&parts.headers, "authorization")?;
        let request = match header {
            Some(value) => self.parse_header(parts, &value, now)?,
            None => self.parse_query(parts, now)?,
        };
        for name in &request.additional_headers {
            if parts.headers.get(name.as_str()).is_none() {
                return Err(AuthError::Malformed(format!(
                    "the additional header {name} is not in the request"
                )));
            }
        }
        Ok(request)
    }

    fn parse_header(
        &self,
        parts: &Parts,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<Oss4Request, AuthError> {
        let Some(rest) = value.strip_prefix(OSS4_ALGORITHM) else {
            return Err(AuthError::Malformed(format!(
                "the Authorization header must start with {OSS4_ALGORITHM}"
            )));
        };
        let (mut credential, mut additional, mut signature) = (None, None, None);
        for component in rest.split(',').map(str::trim) {
            let (name, value) = component
                .split_once('=')
                .ok_or_else(|| AuthError::Malformed(format!("{component:?} is not name=value")))?;
            let slot = match name {
                "Credential" => &mut credential,
                "AdditionalHeaders" => &mut additional,
                "Signature" => &mut signature,
                other => {
                    return Err(AuthError::Malformed(format!(
                        "unknown Authorization component {other:?}"
                    )));
                }
            };
            if slot.replace(value).is_some() {
                return Err(AuthError::Malformed(format!("{name} appears twice")));
            }
        }
        let credential =
            credential.ok_or_else(|| AuthError::Malformed("Credential is missing".into()))?;
        let signature =
            signature.ok_or_else(|| AuthError::Malformed("Signature is missing".into()))?;
        let oss_date = single_header(&parts.headers, "x-oss-date")?
            .ok_or_else(|| AuthError::Malformed("the x-oss-date header is missing".into()))?;
        let request_time = parse_amz_date(&oss_date)
            .ok_or_else(|| AuthError::Malformed("x-oss-date must be yyyymmddThhmmssZ".into()))?;
        if now.signed_duration_since(request_time).abs() > self.max_skew {
            return Err(AuthError::RequestExpired);
        }
        let (access_key_id, region) = self.check_credential(credential, &oss_date)?;
        Ok(Oss4Request {
            access_key_id,
            session_token: single_header(&parts.headers, "x-oss-security-token")?,
            request_time,
            mechanism: AuthMechanism::Header,
            oss_date,
            region,
            additional_headers: header_names(additional.unwrap_or_default()),
            signature: parse_signature(signature)?,
        })
    }

    fn parse_query(&self, parts: &Parts, now: DateTime<Utc>) -> Result<Oss4Request, AuthError> {
        let mut params = std::collections::HashMap::new();
        for pair in parts.uri.query().unwrap_or("").split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if key.starts_with("x-oss-") {
                let value = percent_decode_str(value)
                    .decode_utf8()
                    .map_err(|_| AuthError::Malformed(format!("{key} is not UTF-8")))?;
                if params.insert(key, value.into_owned()).is_some() {
                    return Err(AuthError::Malformed(format!("{key} appears twice")));
                }
            }
        }
        let mut take = |name: &str| {
            params.remove(name).ok_or_else(|| {
                AuthError::Malformed(format!("the query parameter {name} is missing"))
            })
        };
        let version = take("x-oss-signature-version")?;
        if version != OSS4_ALGORITHM {
            return Err(AuthError::Malformed(format!(
                "x-oss-signature-version must be {OSS4_ALGORITHM}"
            )));
        }
        let oss_date = take("x-oss-date")?;
        let expires = take("x-oss-expires")?;
        let credential = take("x-oss-credential")?;
        let signature = take("x-oss-signature")?;
        let request_time = parse_amz_date(&oss_date)
            .ok_or_else(|| AuthError::Malformed("x-oss-date must be yyyymmddThhmmssZ".into()))?;
        let expires: i64 = expires
            .parse()
            .ok()
            .filter(|secs| (1..=MAX_EXPIRES_SECS).contains(secs))
            .ok_or_else(|| {
                AuthError::Malformed(format!(
                    "x-oss-expires must be between 1 and {MAX_EXPIRES_SECS} seconds"
                ))
            })?;
        let expires_at = request_time + Duration::seconds(expires);
        if request_time > now + self.max_skew || now > expires_at {
            return Err(AuthError::RequestExpired);
        }
        let (access_key_id, region) = self.check_credential(&credential, &oss_date)?;
        Ok(Oss4Request {
            access_key_id,
            session_token: params.remove("x-oss-security-token"),
            request_time,
            mechanism: AuthMechanism::Presigned { expires_at },
            oss_date,
            region,
            additional_headers: header_names(
                params
                    .remove("x-oss-additional-headers")
                    .as_deref()
                    .unwrap_or_default(),
            ),
            signature: parse_signature(&signature)?,
        })
    }

    /// `<AK>/<yyyymmdd>/<region>/osstables/aliyun_v4_request` (SigV4's credential shape, read by its parser):
    /// the access key id and the region.
    fn check_credential(
        &self,
        credential: &str,
        oss_date: &str,
    ) -> Result<(String, String), AuthError> {
        let Credential {
            access_key_id,
            date,
            region,
            service: product,
            terminator,
        } = Credential::parse(credential)?;
        if terminator != TERMINATOR {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential scope must end in {TERMINATOR}"
            )));
        }
        if oss_date.get(..8) != Some(date.as_str()) {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential date {date} is not the request date {}",
                oss_date.get(..8).unwrap_or(oss_date)
            )));
        }
        if region != self.region {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential region {region:?} is not {:?}",
                self.region
            )));
        }
        if product != TABLES_PRODUCT {
            return Err(AuthError::ScopeMismatch(format!(
                "the credential product {product:?} is not {TABLES_PRODUCT:?}"
            )));
        }
        Ok((access_key_id, region))
    }

    /// Verifies the signature with the caller-supplied secret, in constant time, against the canonical URI of
    /// every bucket ARN the request names (see the module documentation).
    pub fn verify(
        &self,
        request: &Oss4Request,
        parts: &Parts,
        secret_access_key: &str,
    ) -> Result<(), AuthError> {
        let date = request.oss_date.get(..8).unwrap_or_default();
        let scope = format!("{date}/{}/{TABLES_PRODUCT}/{TERMINATOR}", request.region);
        let key = signing_key(secret_access_key, date, &request.region);
        let presigned = matches!(request.mechanism, AuthMechanism::Presigned { .. });
        let query = canonical_query(parts.uri.query().unwrap_or(""), presigned);
        let headers = canonical_headers(parts, &request.additional_headers)?;
        let payload = parts
            .headers
            .get("x-oss-content-sha256")
            .and_then(|v| v.to_str().ok())
            .unwrap_or(UNSIGNED_PAYLOAD);
        let mut matched = false;
        for bucket in signed_buckets(parts) {
            let uri = canonical_uri(bucket.as_deref(), &request.region, parts.uri.path());
            let canonical = format!(
                "{}\n{uri}\n{query}\n{headers}\n{}\n{payload}",
                parts.method,
                request.additional_headers.join(";")
            );
            let string_to_sign = format!(
                "{OSS4_ALGORITHM}\n{}\n{scope}\n{}",
                request.oss_date,
                hex_sha256(canonical.as_bytes())
            );
            let equal: bool = hmac_sha256(&key, string_to_sign.as_bytes())
                .ct_eq(&request.signature)
                .into();
            matched |= equal;
        }
        if matched {
            Ok(())
        } else {
            Err(AuthError::SignatureMismatch)
        }
    }
}

/// Checks the body against what the request declares about it: `x-oss-content-sha256` when it is a hex SHA-256
/// (`UNSIGNED-PAYLOAD` and its absence declare nothing), and `Content-MD5` when it is sent.
pub fn check_body(parts: &Parts, body: &[u8]) -> Result<(), AuthError> {
    if let Some(declared) = single_header(&parts.headers, "x-oss-content-sha256")?
        && declared != UNSIGNED_PAYLOAD
    {
        let declared = hex::decode(&declared)
            .ok()
            .filter(|d| d.len() == 32)
            .ok_or_else(|| {
                AuthError::Malformed(
                    "x-oss-content-sha256 must be UNSIGNED-PAYLOAD or a hex SHA-256".into(),
                )
            })?;
        if !bool::from(Sha256::digest(body).as_slice().ct_eq(&declared)) {
            return Err(AuthError::PayloadMismatch);
        }
    }
    if let Some(declared) = single_header(&parts.headers, "content-md5")? {
        let declared = base64::engine::general_purpose::STANDARD
            .decode(declared.trim())
            .ok()
            .filter(|d| d.len() == 16)
            .ok_or_else(|| {
                AuthError::Malformed("Content-MD5 must be the base64 of 16 bytes".into())
            })?;
        if Md5::digest(body).as_slice() != declared.as_slice() {
            return Err(AuthError::ContentMd5Mismatch);
        }
    }
    Ok(())
}

/// The key chain: `aliyun_v4<secret>` → date → region → product → `aliyun_v4_request`.
fn signing_key(secret: &str, date: &str, region: &str) -> [u8; 32] {
    let k_date = hmac_sha256(format!("aliyun_v4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_product = hmac_sha256(&k_region, TABLES_PRODUCT.as_bytes());
    hmac_sha256(&k_product, TERMINATOR.as_bytes())
}

fn parse_signature(hex_signature: &str) -> Result<[u8; 32], AuthError> {
    hex::decode(hex_signature)
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| AuthError::Malformed("the signature must be 64 hex digits".into()))
}

/// `h1;h2` → sorted, lower-cased, de-duplicated names (the SDK signs them sorted).
fn header_names(list: &str) -> Vec<String> {
    let mut names: Vec<String> = list
        .split(';')
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty() && !is_default_signed(name))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn is_default_signed(name: &str) -> bool {
    name.starts_with("x-oss-") || name == "content-type" || name == "content-md5"
}

/// The bucket ARNs the SDK may have signed with: the one in the path of `/buckets|namespaces|tables/<ARN>…`,
/// GetTable's `tableBucketARN` or the bucket of its `tableArn`; `None` (no bucket) when the request names none.
fn signed_buckets(parts: &Parts) -> Vec<Option<String>> {
    let decode = |raw: &str| percent_decode_str(raw).decode_utf8_lossy().into_owned();
    let mut found = Vec::new();
    let mut segments = parts.uri.path().trim_start_matches('/').split('/');
    if let (Some("buckets" | "namespaces" | "tables"), Some(arn)) =
        (segments.next(), segments.next())
    {
        found.push(Some(decode(arn)));
    }
    for pair in parts.uri.query().unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "tableBucketARN" => found.push(Some(decode(value))),
            "tableArn" => {
                let arn = decode(value);
                if let Some(at) = arn.find("/table/") {
                    found.push(Some(arn[..at].to_owned()));
                }
            }
            _ => {}
        }
    }
    if found.is_empty() {
        found.push(None);
    }
    found.dedup();
    found
}

/// `/<bucket ARN>/<decoded key>` (`/acs:osstables:<region>::bucket//<decoded key>` without a bucket), encoded with
/// `/` kept: the SDK's canonical URI, where the key is the request path without its leading `/`.
fn canonical_uri(bucket: Option<&str>, region: &str, path: &str) -> String {
    let key = percent_decode_str(path.strip_prefix('/').unwrap_or(path)).decode_utf8_lossy();
    let plain = match bucket {
        Some(bucket) => format!("/{bucket}/{key}"),
        None => format!("/acs:osstables:{region}::bucket//{key}"),
    };
    let mut out = String::with_capacity(plain.len() + 16);
    uri_encode(plain.as_bytes(), true, &mut out);
    out
}

/// The raw `key=value` pairs as sent, sorted (a pair with an empty value as its key alone); a presigned URL's
/// `x-oss-signature` is not signed.
fn canonical_query(raw: &str, presigned: bool) -> String {
    if raw.is_empty() {
        return String::new();
    }
    let mut pairs: Vec<(&str, &str)> = raw
        .split('&')
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .filter(|(key, _)| !(presigned && *key == "x-oss-signature"))
        .collect();
    pairs.sort_unstable();
    pairs
        .iter()
        .map(|(key, value)| {
            if value.is_empty() {
                (*key).to_owned()
            } else {
                format!("{key}={value}")
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `name:value\n` for every `x-oss-*`, `content-type` and `content-md5` header and every additional header, sorted
/// by name, values as sent.
fn canonical_headers(parts: &Parts, additional: &[String]) -> Result<String, AuthError> {
    let mut names: Vec<&str> = parts
        .headers
        .keys()
        .map(http::HeaderName::as_str)
        .filter(|name| is_default_signed(name) || additional.iter().any(|a| a == name))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out = String::new();
    for name in names {
        let value = single_header(&parts.headers, name)?.unwrap_or_default();
        out.push_str(name);
        out.push(':');
        out.push_str(&value);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
