//! Reading a source: its current metadata (through the REST catalog's `loadTable`, or the metadata file itself)
//! and then any file it names. REST calls go through reqwest, signed with the project's SigV4 signer when the
//! source says `sigv4`; S3 reads go through the blob-store client (object_store) of `tablebay-store`, one per
//! bucket; `file:` paths are read only under the directory the operator allowed (`--migration-local-root`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;
use tablebay_store::{BlobStore, BlobUrl, StoreError};

use crate::MigrationError;
use crate::source::{Auth, MetadataSource, RestTableSource, S3Access, Source};

/// The largest file a migration reads (each is copied through memory).
pub const MAX_SOURCE_FILE: usize = 512 * 1024 * 1024;

/// How long one REST call may take.
const REST_TIMEOUT: Duration = Duration::from_secs(30);

const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A source's current state: where its metadata is and the document itself.
#[derive(Clone, Debug)]
pub struct SourceTable {
    /// The metadata file's location.
    pub metadata_location: String,
    /// The metadata document.
    pub metadata: serde_json::Value,
}

/// Reads the files a source's metadata names.
pub struct SourceFiles {
    s3: S3Access,
    local_root: Option<PathBuf>,
    stores: Mutex<HashMap<String, BlobStore>>,
}

#[derive(Deserialize)]
struct ConfigResponse {
    #[serde(default)]
    defaults: HashMap<String, String>,
    #[serde(default)]
    overrides: HashMap<String, String>,
}

#[derive(Deserialize)]
struct LoadTableResponse {
    #[serde(rename = "metadata-location")]
    metadata_location: Option<String>,
    metadata: serde_json::Value,
    #[serde(default)]
    config: HashMap<String, String>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
}

/// Loads the source's current metadata and opens its files.
pub async fn open(
    source: &Source,
    local_root: Option<&Path>,
) -> Result<(SourceTable, SourceFiles), MigrationError> {
    match source {
        Source::Rest(rest) => {
            let (table, config) = load_rest_table(rest).await?;
            // Credentials the request gives win over the ones the catalog vends.
            let s3 = rest.s3.clone().unwrap_or_else(|| s3_from_config(&config));
            Ok((table, SourceFiles::new(s3, local_root)))
        }
        Source::Metadata(MetadataSource {
            metadata_location,
            s3,
        }) => {
            let files = SourceFiles::new(s3.clone(), local_root);
            let bytes = files.read(metadata_location).await?;
            let metadata = serde_json::from_slice(&bytes).map_err(|e| {
                MigrationError::Source(format!(
                    "{metadata_location} is not a table metadata document: {e}"
                ))
            })?;
            Ok((
                SourceTable {
                    metadata_location: metadata_location.clone(),
                    metadata,
                },
                files,
            ))
        }
    }
}

/// The `s3.*` keys of a REST catalog's table config, as Iceberg's S3FileIO reads them.
fn s3_from_config(config: &HashMap<String, String>) -> S3Access {
    let get = |key: &str| config.get(key).cloned();
    S3Access {
        endpoint: get("s3.endpoint"),
        region: get("client.region").or_else(|| get("s3.region")),
        access_key_id: get("s3.access-key-id"),
        secret_access_key: get("s3.secret-access-key"),
        session_token: get("s3.session-token"),
        path_style: get("s3.path-style-access").map(|v| v == "true"),
    }
}

/// `GET v1/config`, then `GET v1/{prefix}/namespaces/{ns}/tables/{name}` asking for vended credentials.
async fn load_rest_table(
    rest: &RestTableSource,
) -> Result<(SourceTable, HashMap<String, String>), MigrationError> {
    let client = reqwest::Client::builder()
        .timeout(REST_TIMEOUT)
        .build()
        .map_err(|e| MigrationError::Internal(format!("HTTP client: {e}")))?;
    let base = rest.uri.trim_end_matches('/');
    let token = match &rest.auth {
        Auth::Oauth2 {
            credential,
            scope,
            server_uri,
        } => Some(
            oauth2_token(
                &client,
                base,
                credential,
                scope.as_deref(),
                server_uri.as_deref(),
            )
            .await?,
        ),
        Auth::Bearer { token } => Some(token.clone()),
        Auth::Sigv4 { .. } | Auth::None => None,
    };
    let mut config_url = format!("{base}/v1/config");
    if let Some(warehouse) = &rest.warehouse {
        config_url.push_str(&format!(
            "?warehouse={}",
            utf8_percent_encode(warehouse, SEGMENT)
        ));
    }
    let config: ConfigResponse = get_json(&client, rest, token.as_deref(), &config_url).await?;
    let prefix = config
        .overrides
        .get("prefix")
        .or_else(|| config.defaults.get("prefix"))
        .map(|p| format!("{}/", p.trim_matches('/')))
        .unwrap_or_default();
    // Multi-level namespaces are joined by the unit separator (0x1F), percent-encoded.
    let namespace = utf8_percent_encode(&rest.namespace.join("\u{1f}"), SEGMENT).to_string();
    let name = utf8_percent_encode(&rest.name, SEGMENT);
    let url = format!("{base}/v1/{prefix}namespaces/{namespace}/tables/{name}");
    let loaded: LoadTableResponse = get_json(&client, rest, token.as_deref(), &url).await?;
    let metadata_location = loaded
        .metadata_location
        .ok_or_else(|| MigrationError::Source("loadTable answered no metadata-location".into()))?;
    let mut table_config = config.defaults;
    table_config.extend(loaded.config);
    table_config.extend(config.overrides);
    Ok((
        SourceTable {
            metadata_location,
            metadata: loaded.metadata,
        },
        table_config,
    ))
}

async fn oauth2_token(
    client: &reqwest::Client,
    base: &str,
    credential: &str,
    scope: Option<&str>,
    server_uri: Option<&str>,
) -> Result<String, MigrationError> {
    let (id, secret) = credential
        .split_once(':')
        .ok_or_else(|| MigrationError::Invalid("oauth2 credential must be id:secret".into()))?;
    let url = server_uri
        .map(str::to_string)
        .unwrap_or_else(|| format!("{base}/v1/oauth/tokens"));
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", id),
        ("client_secret", secret),
        ("scope", scope.unwrap_or("catalog")),
    ];
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, SEGMENT)))
        .collect::<Vec<_>>()
        .join("&");
    let response = client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| unreachable_source(&url, &e))?;
    let token: TokenResponse = answer(response, &url).await?;
    Ok(token.access_token)
}

async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    rest: &RestTableSource,
    token: Option<&str>,
    url: &str,
) -> Result<T, MigrationError> {
    let mut headers = http::HeaderMap::new();
    headers.insert(
        "x-iceberg-access-delegation",
        http::HeaderValue::from_static("vended-credentials"),
    );
    if let Some(token) = token {
        let value = http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            MigrationError::Invalid("the bearer token is not a valid header".into())
        })?;
        headers.insert(http::header::AUTHORIZATION, value);
    }
    if let Auth::Sigv4 {
        access_key_id,
        secret_access_key,
        session_token,
        signing_name,
        region,
    } = &rest.auth
    {
        let (mut parts, ()) = http::Request::builder()
            .method(http::Method::GET)
            .uri(url)
            .body(())
            .map_err(|e| MigrationError::Invalid(format!("source URL {url}: {e}")))?
            .into_parts();
        parts.headers = headers.clone();
        let params = tablebay_auth::signer::SigningParams {
            access_key_id,
            secret_access_key,
            session_token: session_token.as_deref(),
            region: region.as_deref().unwrap_or("us-east-1"),
            service: signing_name.as_deref().unwrap_or("execute-api"),
            time: chrono::Utc::now(),
        };
        tablebay_auth::signer::sign_with(&mut parts, b"", &params)
            .map_err(|e| MigrationError::Internal(format!("signing: {e}")))?;
        headers = parts.headers;
        headers.remove(http::header::HOST);
    }
    let response = client
        .get(url)
        .headers(headers)
        .send()
        .await
        .map_err(|e| unreachable_source(url, &e))?;
    answer(response, url).await
}

fn unreachable_source(url: &str, e: &reqwest::Error) -> MigrationError {
    MigrationError::Source(format!("the source catalog at {url} is unreachable: {e}"))
}

/// The JSON of a 2xx answer; anything else names the status and the catalog's message.
async fn answer<T: serde::de::DeserializeOwned>(
    response: reqwest::Response,
    url: &str,
) -> Result<T, MigrationError> {
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| MigrationError::Source(format!("reading the answer of {url}: {e}")))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.chars().take(300).collect();
        return Err(match status.as_u16() {
            401 | 403 => {
                MigrationError::SourcePermissions(format!("{url} answered {status}: {text}"))
            }
            404 => MigrationError::SourceNotFound(format!("{url} answered {status}: {text}")),
            _ => MigrationError::Source(format!("{url} answered {status}: {text}")),
        });
    }
    serde_json::from_slice(&body).map_err(|e| {
        MigrationError::Source(format!("{url} answered a body that does not parse: {e}"))
    })
}

impl SourceFiles {
    fn new(s3: S3Access, local_root: Option<&Path>) -> Self {
        Self {
            s3,
            local_root: local_root.map(Path::to_path_buf),
            stores: Mutex::new(HashMap::new()),
        }
    }

    /// The whole file at `uri` (`s3://`, `s3a://`, `s3n://`, or `file:` under the allowed directory).
    pub async fn read(&self, uri: &str) -> Result<Bytes, MigrationError> {
        if let Some(rest) = ["s3://", "s3a://", "s3n://"]
            .iter()
            .find_map(|scheme| uri.strip_prefix(scheme))
        {
            let (bucket, key) = rest
                .split_once('/')
                .ok_or_else(|| MigrationError::Source(format!("{uri} names no object")))?;
            let store = self.store(bucket)?;
            let bytes = store.get(key).await.map_err(|e| match e {
                StoreError::NotFound => {
                    MigrationError::SourceNotFound(format!("{uri} does not exist"))
                }
                other => MigrationError::Source(format!("reading {uri}: {other}")),
            })?;
            return check_size(uri, bytes);
        }
        if let Some(path) = uri.strip_prefix("file:") {
            // `file:/a`, `file:///a` (Java writes the first, Python the second).
            let path = Path::new(path.trim_start_matches("//"));
            return self.read_local(uri, path).await;
        }
        Err(MigrationError::SourceNotSupported(format!(
            "{uri}: only s3:// and (when the server allows it) file: locations can be migrated"
        )))
    }

    async fn read_local(&self, uri: &str, path: &Path) -> Result<Bytes, MigrationError> {
        let Some(root) = &self.local_root else {
            return Err(MigrationError::SourceNotSupported(format!(
                "{uri} is a local file, and this server reads no local files for migrations \
                 (see --migration-local-root)"
            )));
        };
        // Refuse `..` outright: the allowed directory must hold the file whatever the links say.
        if !path.is_absolute()
            || path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
            || !path.starts_with(root)
        {
            return Err(MigrationError::SourcePermissions(format!(
                "{uri} is outside the directory this server reads migrations from"
            )));
        }
        let bytes = tokio::fs::read(path).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                MigrationError::SourceNotFound(format!("{uri} does not exist"))
            }
            _ => MigrationError::Source(format!("reading {uri}: {e}")),
        })?;
        check_size(uri, Bytes::from(bytes))
    }

    fn store(&self, bucket: &str) -> Result<BlobStore, MigrationError> {
        let mut stores = self
            .stores
            .lock()
            .map_err(|_| MigrationError::Internal("source store cache poisoned".into()))?;
        if let Some(store) = stores.get(bucket) {
            return Ok(store.clone());
        }
        let url = BlobUrl::S3 {
            bucket: bucket.to_string(),
            prefix: String::new(),
            endpoint: self.s3.endpoint.clone(),
            region: self.s3.region.clone().unwrap_or_else(|| "us-east-1".into()),
            access_key_id: self.s3.access_key_id.clone(),
            secret_access_key: self.s3.secret_access_key.clone(),
            path_style: self.s3.path_style.unwrap_or(false),
        };
        let store = BlobStore::open(&url).map_err(|e| {
            MigrationError::Source(format!("the source store of bucket {bucket}: {e}"))
        })?;
        stores.insert(bucket.to_string(), store.clone());
        Ok(store)
    }
}

fn check_size(uri: &str, bytes: Bytes) -> Result<Bytes, MigrationError> {
    if bytes.len() > MAX_SOURCE_FILE {
        return Err(MigrationError::SourceNotSupported(format!(
            "{uri} is {} bytes, more than the {MAX_SOURCE_FILE} a migrated file may have",
            bytes.len()
        )));
    }
    Ok(bytes)
}
