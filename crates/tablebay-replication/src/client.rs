//! A client of one Tablebay server's public APIs, as the replication worker uses them: STS `AssumeRole`, the
//! control plane (GetTable, CreateNamespace, CreateTable, UpdateTableMetadataLocation) and the S3 data plane
//! (GetObject, PutObject), each request SigV4-signed with the session's credentials.
//!
//! The same client serves a destination on this server (its own listeners) and one on another server, so both
//! paths run the same code and the destination's own authorization decides what the role may write.

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{Method, StatusCode};
use serde::Deserialize;
use tablebay_auth::signer::{SigningParams, sign_with};

use crate::ReplicationError;

/// Credentials that sign requests (long-term keys configured for a remote, or an STS session).
#[derive(Clone)]
pub struct Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token of temporary credentials.
    pub session_token: Option<String>,
    /// When temporary credentials expire.
    pub expiration: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("expiration", &self.expiration)
            .finish_non_exhaustive()
    }
}

/// Where a Tablebay server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerUrls {
    /// The tables listener (control plane, `/sts`).
    pub tables: String,
    /// The S3 listener.
    pub s3: String,
    /// The region to sign for.
    pub region: String,
}

/// The control plane's view of a table that the worker needs.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteTable {
    /// The table's ARN.
    #[serde(rename = "tableARN")]
    pub table_arn: String,
    /// Its version token.
    pub version_token: String,
    /// Its current metadata file.
    pub metadata_location: Option<String>,
    /// `s3://<id>--table-s3`.
    pub warehouse_location: String,
}

/// Signed requests to one server with one set of credentials.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    urls: ServerUrls,
    credentials: Credentials,
}

/// Percent-encodes a query value or an ARN path segment (RFC 3986 unreserved characters stay).
fn encode(value: &str) -> String {
    const RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(value, RESERVED).to_string()
}

/// The text between `<tag>` and `</tag>` of an STS answer.
fn xml_field<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = start + xml.get(start..)?.find(&format!("</{tag}>"))?;
    xml.get(start..end)
}

impl Client {
    /// A client of `urls` signing with `credentials`.
    pub fn new(http: reqwest::Client, urls: ServerUrls, credentials: Credentials) -> Self {
        Self {
            http,
            urls,
            credentials,
        }
    }

    /// Signs and sends one request; answers the status and body.
    async fn send(
        &self,
        method: Method,
        url: String,
        service: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes), ReplicationError> {
        let (status, _, body) = self
            .exchange(method, url, service, content_type, body)
            .await?;
        Ok((status, body))
    }

    /// [`Self::send`], with the answer's headers.
    async fn exchange(
        &self,
        method: Method,
        url: String,
        service: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<(StatusCode, http::HeaderMap, Bytes), ReplicationError> {
        let mut builder = http::Request::builder().method(method.clone()).uri(&url);
        if let Some(content_type) = content_type {
            builder = builder.header(http::header::CONTENT_TYPE, content_type);
        }
        if service == "s3" {
            // The S3 surface wants the payload hash as a header (signed with the rest).
            builder = builder.header("x-amz-content-sha256", sha256_hex(&body));
        }
        let (mut parts, ()) = builder
            .body(())
            .map_err(|e| ReplicationError::Failed(format!("invalid URL {url}: {e}")))?
            .into_parts();
        let c = &self.credentials;
        let params = SigningParams {
            access_key_id: &c.access_key_id,
            secret_access_key: &c.secret_access_key,
            session_token: c.session_token.as_deref(),
            region: &self.urls.region,
            service,
            time: Utc::now(),
        };
        sign_with(&mut parts, &body, &params)
            .map_err(|e| ReplicationError::Failed(format!("signing: {e}")))?;
        let mut request = self
            .http
            .request(method, &url)
            .timeout(Duration::from_secs(120))
            .body(body);
        for (name, value) in &parts.headers {
            if name != http::header::HOST {
                request = request.header(name, value);
            }
        }
        let response = request
            .send()
            .await
            .map_err(|e| ReplicationError::Failed(format!("calling {url}: {e}")))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| ReplicationError::Failed(format!("reading the answer of {url}: {e}")))?;
        Ok((status, headers, body))
    }

    /// A failed answer as an error naming the call.
    fn failure(what: &str, status: StatusCode, body: &[u8]) -> ReplicationError {
        let text = String::from_utf8_lossy(body);
        let message = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from))
            .unwrap_or_else(|| text.chars().take(300).collect());
        match status {
            StatusCode::CONFLICT => ReplicationError::Conflict(format!("{what}: {message}")),
            _ => ReplicationError::Failed(format!("{what}: {status} {message}")),
        }
    }

    /// STS AssumeRole on this server: a session of `role_arn` (an hour).
    pub async fn assume_role(&self, role_arn: &str) -> Result<Credentials, ReplicationError> {
        let body = format!(
            "Action=AssumeRole&Version=2011-06-15&RoleArn={}&RoleSessionName=tablebay-replication",
            encode(role_arn)
        );
        let url = format!("{}/sts", self.urls.tables);
        let (status, answer) = self
            .send(
                Method::POST,
                url,
                "sts",
                Some("application/x-www-form-urlencoded"),
                Bytes::from(body),
            )
            .await?;
        let xml = String::from_utf8_lossy(&answer);
        if !status.is_success() {
            let message = xml_field(&xml, "Message").unwrap_or("no message");
            return Err(ReplicationError::Failed(format!(
                "assuming {role_arn}: {status} {message}"
            )));
        }
        let field = |tag: &str| {
            xml_field(&xml, tag).map(String::from).ok_or_else(|| {
                ReplicationError::Failed(format!("the AssumeRole answer has no {tag}"))
            })
        };
        Ok(Credentials {
            access_key_id: field("AccessKeyId")?,
            secret_access_key: field("SecretAccessKey")?,
            session_token: Some(field("SessionToken")?),
            expiration: field("Expiration")?.parse().ok(),
        })
    }

    /// GetTable by bucket, namespace and name; `None` when there is no such table.
    pub async fn get_table(
        &self,
        bucket: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<RemoteTable>, ReplicationError> {
        let url = format!(
            "{}/get-table?tableBucketARN={}&namespace={}&name={}",
            self.urls.tables,
            encode(bucket),
            encode(namespace),
            encode(name)
        );
        let (status, body) = self
            .send(Method::GET, url, "s3tables", None, Bytes::new())
            .await?;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => serde_json::from_slice(&body)
                .map(Some)
                .map_err(|e| ReplicationError::Failed(format!("GetTable answer: {e}"))),
            s => Err(Self::failure("GetTable", s, &body)),
        }
    }

    /// A control-plane `PUT` with a JSON body; answers the status and body.
    async fn put_json(
        &self,
        url: String,
        body: serde_json::Value,
    ) -> Result<(StatusCode, Bytes), ReplicationError> {
        let body = Bytes::from(body.to_string());
        self.send(Method::PUT, url, "s3tables", Some("application/json"), body)
            .await
    }

    /// A creation that may find its resource there already (409): either way it exists afterwards.
    async fn ensure(
        &self,
        what: &str,
        url: String,
        body: serde_json::Value,
    ) -> Result<(), ReplicationError> {
        match self.put_json(url, body).await? {
            (s, _) if s.is_success() || s == StatusCode::CONFLICT => Ok(()),
            (s, answer) => Err(Self::failure(what, s, &answer)),
        }
    }

    /// CreateNamespace; an existing one is fine.
    pub async fn ensure_namespace(
        &self,
        bucket: &str,
        namespace: &str,
    ) -> Result<(), ReplicationError> {
        let url = format!("{}/namespaces/{}", self.urls.tables, encode(bucket));
        self.ensure(
            "CreateNamespace",
            url,
            serde_json::json!({ "namespace": [namespace] }),
        )
        .await
    }

    /// CreateTable (Iceberg, no metadata yet); an existing one is fine.
    pub async fn ensure_table(
        &self,
        bucket: &str,
        namespace: &str,
        name: &str,
    ) -> Result<(), ReplicationError> {
        let url = format!(
            "{}/tables/{}/{}",
            self.urls.tables,
            encode(bucket),
            encode(namespace)
        );
        self.ensure(
            "CreateTable",
            url,
            serde_json::json!({ "name": name, "format": "ICEBERG" }),
        )
        .await
    }

    /// UpdateTableMetadataLocation: the compare-and-swap that commits one replicated version. A stale token is
    /// [`ReplicationError::Conflict`].
    pub async fn update_metadata_location(
        &self,
        bucket: &str,
        namespace: &str,
        name: &str,
        version_token: &str,
        metadata_location: &str,
    ) -> Result<String, ReplicationError> {
        let url = format!(
            "{}/tables/{}/{}/{}/metadata-location",
            self.urls.tables,
            encode(bucket),
            encode(namespace),
            encode(name)
        );
        let body = serde_json::json!({
            "versionToken": version_token,
            "metadataLocation": metadata_location,
        });
        let (status, answer) = self.put_json(url, body).await?;
        if !status.is_success() {
            return Err(Self::failure(
                "UpdateTableMetadataLocation",
                status,
                &answer,
            ));
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Answer {
            version_token: String,
        }
        serde_json::from_slice::<Answer>(&answer)
            .map(|a| a.version_token)
            .map_err(|e| {
                ReplicationError::Failed(format!("UpdateTableMetadataLocation answer: {e}"))
            })
    }

    /// The S3 URL of `key` in `bucket` (path style). Keys are sent as they are: table file keys use URI-safe
    /// characters (`[A-Za-z0-9-_.=/]`), and SigV4 for S3 signs the path encoded once.
    fn object_url(&self, bucket: &str, key: &str) -> String {
        format!("{}/{bucket}/{key}", self.urls.s3)
    }

    /// GetObject; `None` when there is no such object.
    pub async fn get_object(
        &self,
        bucket: &str,
        key: &str,
    ) -> Result<Option<Bytes>, ReplicationError> {
        let url = self.object_url(bucket, key);
        let (status, body) = self
            .send(Method::GET, url, "s3", None, Bytes::new())
            .await?;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => Ok(Some(body)),
            s => Err(Self::failure(&format!("GetObject {key}"), s, &body)),
        }
    }

    /// PutObject (an overwrite: the replica's keys are deterministic, so a repeated copy is harmless).
    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Bytes,
    ) -> Result<(), ReplicationError> {
        let url = self.object_url(bucket, key);
        let (status, answer) = self.send(Method::PUT, url, "s3", None, body).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(Self::failure(&format!("PutObject {key}"), status, &answer))
        }
    }
}

impl Client {
    /// CreateMultipartUpload; the upload id.
    pub async fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
    ) -> Result<String, ReplicationError> {
        let url = format!("{}?uploads", self.object_url(bucket, key));
        let (status, answer) = self
            .send(Method::POST, url, "s3", None, Bytes::new())
            .await?;
        let text = String::from_utf8_lossy(&answer);
        match xml_field(&text, "UploadId") {
            Some(id) if status.is_success() => Ok(id.to_string()),
            _ => Err(Self::failure(
                &format!("CreateMultipartUpload {key}"),
                status,
                &answer,
            )),
        }
    }

    /// The URL of a multipart upload of `key`.
    fn upload_url(&self, bucket: &str, key: &str, upload_id: &str) -> String {
        format!(
            "{}?uploadId={}",
            self.object_url(bucket, key),
            encode(upload_id)
        )
    }

    /// UploadPart; the part's ETag.
    pub async fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: usize,
        body: Bytes,
    ) -> Result<String, ReplicationError> {
        let url = format!(
            "{}&partNumber={number}",
            self.upload_url(bucket, key, upload_id)
        );
        let (status, headers, answer) = self.exchange(Method::PUT, url, "s3", None, body).await?;
        match headers
            .get(http::header::ETAG)
            .and_then(|v| v.to_str().ok())
        {
            Some(etag) if status.is_success() => Ok(etag.to_string()),
            _ => Err(Self::failure(
                &format!("UploadPart {number} of {key}"),
                status,
                &answer,
            )),
        }
    }

    /// CompleteMultipartUpload of the parts whose ETags are `etags`, in order.
    pub async fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        etags: &[String],
    ) -> Result<(), ReplicationError> {
        let url = self.upload_url(bucket, key, upload_id);
        let mut xml = String::from("<CompleteMultipartUpload>");
        for (i, etag) in etags.iter().enumerate() {
            xml += &format!(
                "<Part><PartNumber>{}</PartNumber><ETag>{etag}</ETag></Part>",
                i + 1
            );
        }
        xml += "</CompleteMultipartUpload>";
        let (status, answer) = self
            .send(
                Method::POST,
                url,
                "s3",
                Some("application/xml"),
                Bytes::from(xml),
            )
            .await?;
        // S3 may answer 200 with an error document when the completion failed late.
        if status.is_success() && !String::from_utf8_lossy(&answer).contains("<Error>") {
            Ok(())
        } else {
            Err(Self::failure(
                &format!("CompleteMultipartUpload {key}"),
                status,
                &answer,
            ))
        }
    }

    /// AbortMultipartUpload, best effort: an upload left behind expires with the server's multipart expiry.
    pub async fn abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) {
        let url = self.upload_url(bucket, key, upload_id);
        if let Err(e) = self
            .send(Method::DELETE, url, "s3", None, Bytes::new())
            .await
        {
            tracing::debug!(%key, error = %e, "could not abort a replication upload");
        }
    }
}

fn sha256_hex(body: &[u8]) -> String {
    tablebay_auth::signer::payload_hash(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sts_fields() {
        let xml = "<R><Credentials><AccessKeyId>AK</AccessKeyId><SecretAccessKey>S</SecretAccessKey>\
                   <SessionToken>T</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration></Credentials></R>";
        assert_eq!(xml_field(xml, "AccessKeyId"), Some("AK"));
        assert_eq!(xml_field(xml, "SessionToken"), Some("T"));
        assert_eq!(xml_field(xml, "Missing"), None);
        assert_eq!(
            encode("arn:aws:iam::1:role/r"),
            "arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fr"
        );
    }
}
