//! A running `tablebay serve` for one test, and a small signed HTTP client for it.
// Test helpers outside `#[test]` functions, which clippy's `allow-*-in-tests` does not cover.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http::{Method, Request};

#[path = "../../build/source_id.rs"]
mod source_id;

pub const ACCESS_KEY: &str = "AKIDTABLEBAYTEST0001";
pub const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
pub const REGION: &str = "us-east-1";
pub const ACCOUNT: &str = "111122223333";

/// Set to `1`, the harness starts `TABLEBAY_BIN` without checking that it was built from this tree (a test of an
/// older build on purpose).
pub const UNCHECKED_VAR: &str = "TABLEBAY_BIN_UNCHECKED";

/// The `tablebay` binary the tests run: `TABLEBAY_BIN` when set, else the one cargo built for this test run. Either
/// must report the digest of this tree's sources in `tablebay --version` (`build/source_id.rs`): a binary built
/// from other or older sources (another worktree's build in a shared target directory, a stale copy) fails the
/// test instead of silently testing something else. [`UNCHECKED_VAR`] turns the check off.
pub fn binary() -> &'static str {
    static BINARY: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    match BINARY.get_or_init(checked_binary) {
        Ok(binary) => binary,
        Err(problem) => panic!("{problem}"),
    }
}

fn checked_binary() -> Result<String, String> {
    let (binary, origin) = match std::env::var("TABLEBAY_BIN") {
        Ok(binary) if !binary.is_empty() => (binary, "TABLEBAY_BIN"),
        _ => (
            env!("CARGO_BIN_EXE_tablebay").to_string(),
            "the binary cargo built",
        ),
    };
    if std::env::var(UNCHECKED_VAR).is_ok_and(|v| v == "1") {
        return Ok(binary);
    }
    let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tree = tree.canonicalize().unwrap_or(tree);
    let want = source_id::digest(&tree)
        .map_err(|e| format!("cannot read the sources in {}: {e}", tree.display()))?;
    let output = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|e| format!("{origin} ({binary}) does not run: {e}"))?;
    let version = String::from_utf8_lossy(&output.stdout);
    let have = version.split_once("(source ").map(|(_, rest)| {
        rest.chars()
            .take_while(char::is_ascii_hexdigit)
            .collect::<String>()
    });
    match have {
        Some(have) if have == want => Ok(binary),
        _ => Err(format!(
            "{origin} ({binary}) was not built from the sources in {} (their digest is {want}; the binary says \
             {:?}). Rebuild it (`cargo build -p tablebay`, or scripts/build-bin.sh for a copy of this worktree's \
             binary), or set {UNCHECKED_VAR}=1 to run it anyway.",
            tree.display(),
            version.trim(),
        )),
    }
}

/// The server process; killed when dropped.
pub struct TestServer {
    child: Child,
    pub tables_url: String,
    pub s3_url: String,
    data: Option<tempfile::TempDir>,
    pub http: reqwest::Client,
}

impl TestServer {
    /// Starts the binary with `--arn-flavor aws` and waits (with a deadline) for both ready lines.
    pub fn start() -> Self {
        Self::start_with(&["--arn-flavor", "aws"])
    }

    pub fn start_with(extra: &[&str]) -> Self {
        Self::start_in(tempfile::tempdir().unwrap(), extra)
    }

    /// Starts the binary on an existing data directory (a restart after [`TestServer::stop`]).
    pub fn start_in(data: tempfile::TempDir, extra: &[&str]) -> Self {
        Self::start_under(data, &[], extra)
    }

    /// Starts the binary through `wrapper` (a command that execs its arguments, e.g. a shell that lowers
    /// `ulimit -n` first); an empty wrapper runs it directly.
    pub fn start_under(data: tempfile::TempDir, wrapper: &[&str], extra: &[&str]) -> Self {
        let binary = binary();
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(binary);
                command
            }
            None => Command::new(binary),
        };
        let mut child = command
            .args(["serve", "--data-dir"])
            .arg(data.path())
            .args([
                "--tables-addr",
                "127.0.0.1:0",
                "--s3-addr",
                "127.0.0.1:0",
                "--region",
                REGION,
            ])
            .args(["--account-id", ACCOUNT])
            .args(extra)
            .env("TABLEBAY_ROOT_ACCESS_KEY_ID", ACCESS_KEY)
            .env("TABLEBAY_ROOT_SECRET_ACCESS_KEY", SECRET)
            .env("TABLEBAY_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let (mut tables_url, mut s3_url) = (None, None);
        while tables_url.is_none() || s3_url.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .expect("server did not announce its listeners in time");
            if let Some(url) = line.strip_prefix("tablebay tables listener ready at ") {
                tables_url = Some(url.to_string());
            } else if let Some(url) = line.strip_prefix("tablebay s3 listener ready at ") {
                s3_url = Some(url.to_string());
            }
        }
        Self {
            child,
            tables_url: tables_url.unwrap(),
            s3_url: s3_url.unwrap(),
            data: Some(data),
            http: reqwest::Client::new(),
        }
    }

    /// Sends a request to the tables listener signed for `service` with the given secret.
    pub async fn send_signed(
        &self,
        method: Method,
        path_and_query: &str,
        body: &[u8],
        service: &str,
        secret: &str,
    ) -> reqwest::Response {
        let url = format!("{}{path_and_query}", self.tables_url);
        let mut builder = Request::builder().method(method).uri(&url);
        if !body.is_empty() {
            builder = builder.header("content-type", "application/json");
        }
        let (mut parts, ()) = builder.body(()).unwrap().into_parts();
        sign(&mut parts, body, ACCESS_KEY, secret, service);
        self.send_parts(parts, body).await
    }

    /// Sends already built request parts as they are.
    pub async fn send_parts(&self, parts: http::request::Parts, body: &[u8]) -> reqwest::Response {
        self.try_send_parts(parts, body).await.unwrap()
    }

    /// [`TestServer::send_parts`], for a request whose answer may be cut off.
    pub async fn try_send_parts(
        &self,
        parts: http::request::Parts,
        body: &[u8],
    ) -> reqwest::Result<reqwest::Response> {
        let mut request = self
            .http
            .request(parts.method, parts.uri.to_string())
            .body(body.to_vec());
        for (name, value) in &parts.headers {
            if name != http::header::HOST {
                request = request.header(name, value);
            }
        }
        request.send().await
    }

    /// A correctly signed control-plane request (service `s3tables`).
    pub async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        body: serde_json::Value,
    ) -> reqwest::Response {
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(&body).unwrap()
        };
        self.send_signed(method, path_and_query, &bytes, "s3tables", SECRET)
            .await
    }
}

impl TestServer {
    /// A second catalog on the server's data directory (SQLite in WAL mode and the blob directory are safe to
    /// share between processes), with the server's master keys: what tests use to reach table files below the
    /// HTTP surfaces.
    pub async fn open_catalog(&self) -> tablebay_catalog::Catalog {
        let data = self.data_dir();
        let meta = tablebay_store::MetaStore::connect(&format!(
            "sqlite://{}?mode=rwc",
            data.join("meta.db").display()
        ))
        .await
        .unwrap();
        let blobs =
            tablebay_store::BlobStore::open(&tablebay_store::BlobUrl::Local(data.join("blobs")))
                .unwrap();
        let keys = std::fs::read_to_string(data.join("encryption.key")).unwrap();
        let keys = tablebay_store::encryption::LocalKeys::parse(&keys).unwrap();
        tablebay_catalog::Catalog::new(
            meta,
            blobs,
            tablebay_catalog::CatalogConfig {
                region: REGION.to_string(),
                flavor: tablebay_catalog::ArnFlavor::Aws,
            },
            std::sync::Arc::new(keys),
        )
    }

    /// iceberg-rust's REST catalog on this server's `/iceberg` for `warehouse`, authenticated with OAuth2 client
    /// credentials (the instance's root key), files in memory (iceberg-rust 0.10 has no S3 FileIO).
    pub async fn rest_catalog(&self, warehouse: &str) -> iceberg_catalog_rest::RestCatalog {
        use iceberg::CatalogBuilder as _;
        let uri = format!("{}/iceberg", self.tables_url);
        let properties = std::collections::HashMap::from([
            ("uri".to_string(), uri.clone()),
            ("warehouse".to_string(), warehouse.to_string()),
            ("credential".to_string(), format!("{ACCESS_KEY}:{SECRET}")),
            (
                "oauth2-server-uri".to_string(),
                format!("{uri}/v1/oauth/tokens"),
            ),
        ]);
        iceberg_catalog_rest::RestCatalogBuilder::default()
            .with_storage_factory(std::sync::Arc::new(iceberg::io::MemoryStorageFactory))
            .load("tablebay", properties)
            .await
            .unwrap()
    }

    /// An unsigned GET of `url` (a listener's URL and path).
    pub async fn get_unsigned(&self, url: &str) -> reqwest::Response {
        self.http.get(url).send().await.unwrap()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        self.data.as_ref().unwrap().path()
    }

    /// Stops the server and hands back its data directory.
    pub fn stop(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.data.take().unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Signs `parts` and `body` with SigV4 for `service`, in the tests' region, now.
pub fn sign(parts: &mut http::request::Parts, body: &[u8], key: &str, secret: &str, service: &str) {
    tablebay_auth::signer::sign(
        parts,
        body,
        key,
        secret,
        REGION,
        service,
        chrono::Utc::now(),
    )
    .unwrap();
}

/// Percent-encodes an ARN as one path segment, as botocore does.
pub fn seg(arn: &str) -> String {
    percent_encoding::utf8_percent_encode(arn, percent_encoding::NON_ALPHANUMERIC).to_string()
}
