//! Remote signing (`X-Iceberg-Access-Delegation: remote-signing`): the client holds no storage credentials and
//! posts each S3 request it is about to send (`RemoteSignRequest`) to the catalog, which answers the headers that
//! make it a SigV4-signed request the data plane accepts.
//!
//! What is signed: only requests to the S3 listener's own address (path style `/<bucket>/<key>`, or virtual-host
//! style `<bucket>.<host>`), for a table's storage bucket (`<table-id>--table-s3`), with a method the data plane
//! serves. Reads (GET, HEAD) need `GetTableData`, writes (PUT, POST, DELETE: uploads, multipart, deletes)
//! `PutTableData`, on that table (`access.rs`); on the spec's per-table endpoint the URI must also be in the
//! storage of the table the path names. Anything else is 403, and a URI that is not one is 400.
//!
//! Whose credentials sign: a short-lived session issued to the caller for this table, exactly what
//! `vended-credentials` hands out (`Iam::vend_table_credentials`: the caller's identity, narrowed to the table's
//! storage and to the rights the caller holds on it). The data plane then authorizes every signed request as the
//! caller, as if the caller had signed it: no shared server key can reach anything the caller could not. One
//! session serves a caller's requests on a table until it nears expiry, so signing costs no write per request.
//!
//! How: the payload is not sent to the signer, so the signature covers the payload hash the client declared
//! (`x-amz-content-sha256`), or `UNSIGNED-PAYLOAD` when it declared none; every header the client listed is signed
//! (but `user-agent` and the hop-by-hop ones), and the answer carries only the headers set here (`Authorization`,
//! `x-amz-date`, `x-amz-security-token` and, unless the client sent it, `x-amz-content-sha256`): PyIceberg
//! appends every header of the answer to its request.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{Duration, Utc};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};
use percent_encoding::percent_decode_str;
use tablebay_auth::signer::{SigningParams, sign_with_payload_hash};
use tablebay_catalog::{Table, TableArn};
use tablebay_iam::IssuedSession;
use tablebay_objects::TableLocation;
use tablebay_policy::Action;
use uuid::Uuid;

use super::context::Reply;
use super::error::IcebergError;
use super::wire::{RemoteSignRequest, RemoteSignResponse};
use crate::pipeline::Context;

/// The payload hash signed when the client declared none.
const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// Payload hashes a client may declare besides a hex SHA-256 (which the data plane checks against the body).
const UNSIGNED_FORMS: [&str; 2] = [UNSIGNED_PAYLOAD, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"];

/// A session is reused while it has at least this long to live: a signed request is sent at once.
const SESSION_MARGIN_SECS: i64 = 600;

/// At most this many sessions are remembered; past it the memory starts afresh.
const MAX_SESSIONS: usize = 10_000;

/// The data-plane request a sign request is about, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignTarget {
    /// The table whose storage the URI is in.
    pub table_id: Uuid,
    /// What the request does to it: `GetTableData` or `PutTableData`.
    pub action: Action,
}

/// Checks a sign request against the data plane's public URL: the URI must be an S3 request to that address, in
/// a table's storage bucket, with a method the data plane serves.
pub(crate) fn target(
    request: &RemoteSignRequest,
    s3_public_url: &str,
) -> Result<SignTarget, IcebergError> {
    if let Some(provider) = request.provider.as_deref().filter(|p| *p != "s3") {
        return Err(IcebergError::forbidden(format!(
            "Remote signing is for s3 requests only, not {provider}"
        )));
    }
    let action = match request.method.to_ascii_uppercase().as_str() {
        "GET" | "HEAD" => Action::GetTableData,
        "PUT" | "POST" | "DELETE" => Action::PutTableData,
        other => {
            return Err(IcebergError::forbidden(format!(
                "Cannot sign a {other} request: only GET, HEAD, PUT, POST and DELETE reach table storage"
            )));
        }
    };
    let uri: Uri = request
        .uri
        .parse()
        .map_err(|_| IcebergError::bad_request(format!("Invalid uri '{}'", request.uri)))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(IcebergError::bad_request(format!(
            "The uri '{}' must be absolute",
            request.uri
        )));
    };
    let public: Uri = s3_public_url
        .parse()
        .map_err(|_| IcebergError::forbidden("The data plane's address is not a URI"))?;
    let forbidden_host = || {
        IcebergError::forbidden(format!(
            "Only requests to the data plane at {s3_public_url} are signed, not {scheme}://{authority}"
        ))
    };
    if public.scheme_str() != Some(scheme) || public.port_u16() != uri.port_u16() {
        return Err(forbidden_host());
    }
    let public_host = public.host().unwrap_or_default().to_ascii_lowercase();
    let host = authority.host().to_ascii_lowercase();
    let segments = decoded_segments(uri.path())?;
    let bucket = if host == public_host {
        segments.first().cloned().unwrap_or_default()
    } else {
        // Virtual-host style: `<bucket>.<data plane host>`.
        host.strip_suffix(&format!(".{public_host}"))
            .map(str::to_string)
            .ok_or_else(forbidden_host)?
    };
    let table_id = TableLocation::table_of_bucket(&bucket).ok_or_else(|| {
        IcebergError::forbidden(format!(
            "Only requests for a table's storage are signed; '{bucket}' is not one"
        ))
    })?;
    Ok(SignTarget { table_id, action })
}

/// The path's segments, decoded; a `.` or `..` segment (encoded or not) is refused, since normalizing it would
/// move the request into another bucket than the one checked.
fn decoded_segments(path: &str) -> Result<Vec<String>, IcebergError> {
    let mut segments = Vec::new();
    for raw in path.trim_start_matches('/').split('/') {
        let segment = percent_decode_str(raw).decode_utf8_lossy().into_owned();
        if segment == "." || segment == ".." {
            return Err(IcebergError::forbidden(
                "Cannot sign a uri with dot segments",
            ));
        }
        segments.push(segment);
    }
    Ok(segments)
}

/// `POST …/tables/{table}/sign` and `POST /v1/aws/s3/sign`: signs the request for `table`, the table its URI is
/// in (authorized by `access.rs` for the request's action).
pub(super) async fn sign(
    ctx: &Context<'_>,
    request: RemoteSignRequest,
    table: Option<Table>,
) -> Result<Reply, IcebergError> {
    let table = table.ok_or_else(|| IcebergError::forbidden("No table to sign for"))?;
    let session = ctx.app.iceberg.signing.session(ctx, &table.arn).await?;
    let method = Method::from_bytes(request.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| IcebergError::bad_request("Invalid method"))?;
    let mut headers = HeaderMap::new();
    for (name, values) in &request.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| IcebergError::bad_request(format!("Invalid header name '{name}'")))?;
        if matches!(
            name.as_str(),
            "authorization" | "x-amz-date" | "x-amz-security-token" | "host"
        ) {
            continue;
        }
        let value = HeaderValue::from_str(&values.join(", "))
            .map_err(|_| IcebergError::bad_request(format!("Invalid value of header {name}")))?;
        headers.insert(name, value);
    }
    let content_sha256 = HeaderName::from_static("x-amz-content-sha256");
    let declared = headers
        .get(&content_sha256)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let payload = match declared.as_deref() {
        None => UNSIGNED_PAYLOAD.to_string(),
        Some(form) if UNSIGNED_FORMS.contains(&form) => form.to_string(),
        Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            hash.to_string()
        }
        Some(other) => {
            return Err(IcebergError::forbidden(format!(
                "Cannot sign a request with x-amz-content-sha256 '{other}'"
            )));
        }
    };
    if declared.is_none() {
        headers.insert(
            content_sha256.clone(),
            HeaderValue::from_static(UNSIGNED_PAYLOAD),
        );
    }
    let mut builder = http::Request::builder()
        .method(method)
        .uri(request.uri.as_str());
    if let Some(h) = builder.headers_mut() {
        *h = headers;
    }
    let (mut parts, ()) = builder
        .body(())
        .map_err(|_| IcebergError::bad_request(format!("Invalid uri '{}'", request.uri)))?
        .into_parts();
    let region = ctx.catalog().config().region.clone();
    let params = SigningParams {
        access_key_id: &session.access_key_id,
        secret_access_key: &session.secret_access_key,
        session_token: Some(&session.session_token),
        region: &region,
        service: "s3",
        time: Utc::now(),
    };
    sign_with_payload_hash(&mut parts, &payload, &params)
        .map_err(|e| IcebergError::forbidden(format!("Cannot sign this request: {e}")))?;
    let mut set = vec!["authorization", "x-amz-date", "x-amz-security-token"];
    if declared.is_none() {
        set.push("x-amz-content-sha256");
    }
    let headers = set
        .into_iter()
        .filter_map(|name| {
            let value = parts.headers.get(name)?.to_str().ok()?;
            Some((name.to_string(), vec![value.to_string()]))
        })
        .collect::<BTreeMap<_, _>>();
    Reply::json(&RemoteSignResponse {
        uri: request.uri,
        headers,
    })
}

/// The sessions that sign for each caller and table, reused until they near expiry.
#[derive(Clone, Default)]
pub(crate) struct SigningSessions {
    issued: Arc<Mutex<HashMap<SessionKey, IssuedSession>>>,
}

/// Who a session signs for: the caller's ARN and key (a rotated key gets its own), and the table.
type SessionKey = (String, String, Uuid);

impl SigningSessions {
    /// A live session of the caller for `table`: a remembered one, or a fresh one (then remembered).
    async fn session(
        &self,
        ctx: &Context<'_>,
        table: &TableArn,
    ) -> Result<IssuedSession, IcebergError> {
        let key = (
            ctx.principal.arn.clone(),
            ctx.principal.access_key_id.clone(),
            table.table_id,
        );
        let fresh_until = Utc::now() + Duration::seconds(SESSION_MARGIN_SECS);
        if let Some(session) = self.lock().get(&key).filter(|s| s.expiration > fresh_until) {
            return Ok(session.clone());
        }
        let session = ctx
            .app
            .iam
            .vend_table_credentials(&ctx.principal, table)
            .await?;
        let mut issued = self.lock();
        if issued.len() >= MAX_SESSIONS {
            issued.clear();
        }
        issued.insert(key, session.clone());
        Ok(session)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionKey, IssuedSession>> {
        // A poisoned map only holds sessions: keep using it.
        self.issued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for SigningSessions {
    /// Sessions hold secrets: only their number is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningSessions({})", self.lock().len())
    }
}

/// Remote-signing config of a table answer: what Iceberg Java (`s3.remote-signing-enabled`) and PyIceberg
/// (`s3.signer`, which needs its fsspec FileIO: PyArrow's has no signer hook) read. The signer endpoint is the
/// default one of both, relative to the catalog URI the client already has; Iceberg Java 1.12 posts to the
/// spec's per-table `…/tables/{table}/sign` instead, which is served too.
pub(super) fn remote_signing_config() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("s3.remote-signing-enabled".to_string(), "true".to_string()),
        ("s3.signer".to_string(), "S3V4RestSigner".to_string()),
        (
            "s3.signer.endpoint".to_string(),
            "v1/aws/s3/sign".to_string(),
        ),
        (
            "py-io-impl".to_string(),
            "pyiceberg.io.fsspec.FsspecFileIO".to_string(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::WireError;

    fn request(method: &str, uri: &str) -> RemoteSignRequest {
        RemoteSignRequest {
            region: "us-east-1".into(),
            uri: uri.into(),
            method: method.into(),
            headers: BTreeMap::new(),
            properties: None,
            body: None,
            provider: None,
        }
    }

    #[test]
    fn targets() {
        let id = "0190b8a0-1c2d-7e5f-9a0b-123456789abc";
        let public = "http://127.0.0.1:9000";
        let table_id = Uuid::parse_str(id).unwrap();
        for (method, uri, want) in [
            (
                "GET",
                format!("{public}/{id}--table-s3/data/a.parquet"),
                Ok(Action::GetTableData),
            ),
            (
                "head",
                format!("{public}/{id}--table-s3/metadata/x.json"),
                Ok(Action::GetTableData),
            ),
            (
                "PUT",
                format!("{public}/{id}--table-s3/data/a.parquet"),
                Ok(Action::PutTableData),
            ),
            (
                "POST",
                format!("{public}/{id}--table-s3/d?uploads"),
                Ok(Action::PutTableData),
            ),
            (
                "DELETE",
                format!("{public}/{id}--table-s3/d?uploadId=1"),
                Ok(Action::PutTableData),
            ),
            (
                "GET",
                format!("{public}/{id}--table-s3?list-type=2"),
                Ok(Action::GetTableData),
            ),
            ("PATCH", format!("{public}/{id}--table-s3/k"), Err(403)),
            ("OPTIONS", format!("{public}/{id}--table-s3/k"), Err(403)),
            (
                "GET",
                format!("http://127.0.0.1:9001/{id}--table-s3/k"),
                Err(403),
            ),
            (
                "GET",
                format!("https://127.0.0.1:9000/{id}--table-s3/k"),
                Err(403),
            ),
            (
                "GET",
                format!("http://evil.example:9000/{id}--table-s3/k"),
                Err(403),
            ),
            ("GET", format!("{public}/other-bucket/k"), Err(403)),
            (
                "GET",
                format!("{public}/{id}--table-s3/../other--table-s3/k"),
                Err(403),
            ),
            ("GET", format!("{public}/{id}--table-s3/%2e%2e/k"), Err(403)),
            ("GET", "not a uri".to_string(), Err(400)),
            ("GET", "/relative/path".to_string(), Err(400)),
        ] {
            let got = target(&request(method, &uri), public);
            match want {
                Ok(action) => assert_eq!(got.unwrap(), SignTarget { table_id, action }, "{uri}"),
                Err(status) => {
                    assert_eq!(got.unwrap_err().status().as_u16(), status, "{method} {uri}")
                }
            }
        }
        let mut other = request("GET", &format!("{public}/{id}--table-s3/k"));
        other.provider = Some("gcs".into());
        assert_eq!(target(&other, public).unwrap_err().status().as_u16(), 403);
    }
}
