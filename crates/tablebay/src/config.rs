//! Tablebay's configuration, in two stages: [`ServeArgs`] and the optional TOML file hold what was given
//! (flag > environment > file > default), and [`Config::load`] derives and validates the typed [`Config`]
//! once at startup, failing with one clear message. No other module reads the environment.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;
use tablebay_catalog::{AccountId, ArnFlavor};
use tablebay_http::{MetricsAccess, Secret};
use tablebay_maintenance::MaintenanceConfig;
use tablebay_replication::{Credentials, RemoteServer, ServerUrls};
use tablebay_store::encryption::{LocalKeys, MasterKey};
use tablebay_store::{BlobUrl, Durability};

use crate::listener::ListenerLimits;

/// Flags of `tablebay serve`; each also reads its `TABLEBAY_*` environment variable.
#[derive(Args, Debug, Default)]
pub struct ServeArgs {
    /// A TOML file carrying any of the keys below (snake_case, e.g. `data_dir = "/var/lib/tablebay"`).
    #[arg(long, env = "TABLEBAY_CONFIG")]
    config: Option<PathBuf>,
    /// Where the embedded metadata database, table files and generated credentials live.
    #[arg(long, env = "TABLEBAY_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Address of the tables listener (control plane, Iceberg REST, admin).
    #[arg(long, env = "TABLEBAY_TABLES_ADDR")]
    tables_addr: Option<String>,
    /// Address of the S3 listener (data plane).
    #[arg(long, env = "TABLEBAY_S3_ADDR")]
    s3_addr: Option<String>,
    /// The S3 listener's URL as clients reach it (Iceberg `s3.endpoint`), e.g. behind a proxy.
    #[arg(long, env = "TABLEBAY_S3_PUBLIC_URL")]
    s3_public_url: Option<String>,
    /// The region this instance serves (ARNs, SigV4 scope).
    #[arg(long, env = "TABLEBAY_REGION")]
    region: Option<String>,
    /// The account the root credentials act for (12 to 16 digits).
    #[arg(long, env = "TABLEBAY_ACCOUNT_ID")]
    account_id: Option<String>,
    /// ARN spelling: `oss` (acs:osstables:…) or `aws` (arn:aws:s3tables:…).
    #[arg(long, env = "TABLEBAY_ARN_FLAVOR")]
    arn_flavor: Option<String>,
    /// Metadata database: `sqlite://<path>` (default `<data-dir>/meta.db`) or `postgres://…`.
    #[arg(long, env = "TABLEBAY_META_URL")]
    meta_url: Option<String>,
    /// Table file storage: a local directory (default `<data-dir>/blobs`) or `s3://bucket/prefix`.
    #[arg(long, env = "TABLEBAY_BLOB_URL")]
    blob_url: Option<String>,
    /// Endpoint of the S3-compatible blob store (`http://host:port`).
    #[arg(long, env = "TABLEBAY_BLOB_S3_ENDPOINT")]
    blob_s3_endpoint: Option<String>,
    /// Region of the S3-compatible blob store.
    #[arg(long, env = "TABLEBAY_BLOB_S3_REGION")]
    blob_s3_region: Option<String>,
    /// Access key id for the S3-compatible blob store.
    #[arg(long, env = "TABLEBAY_BLOB_S3_ACCESS_KEY_ID")]
    blob_s3_access_key_id: Option<String>,
    /// Secret access key for the S3-compatible blob store.
    #[arg(
        long,
        env = "TABLEBAY_BLOB_S3_SECRET_ACCESS_KEY",
        hide_env_values = true
    )]
    blob_s3_secret_access_key: Option<String>,
    /// Use path-style requests against the S3-compatible blob store (`true`/`false`, default true).
    #[arg(long, env = "TABLEBAY_BLOB_S3_PATH_STYLE")]
    blob_s3_path_style: Option<bool>,
    /// Access key id of the instance root (generated on first start when unset).
    #[arg(long, env = "TABLEBAY_ROOT_ACCESS_KEY_ID")]
    root_access_key_id: Option<String>,
    /// Secret access key of the instance root.
    #[arg(long, env = "TABLEBAY_ROOT_SECRET_ACCESS_KEY", hide_env_values = true)]
    root_secret_access_key: Option<String>,
    /// Log format: `text` (default) or `json`.
    #[arg(long, env = "TABLEBAY_LOG_FORMAT")]
    log_format: Option<String>,
    /// What an acknowledged write means on local disk: `full` (default: synced to stable storage before the
    /// answer, so it survives a power loss) or `relaxed` (left in the page cache: survives a killed process,
    /// not a power loss or kernel crash).
    #[arg(long, env = "TABLEBAY_DURABILITY")]
    durability: Option<String>,
    /// Hours after which an incomplete multipart upload of the data plane is aborted and its parts deleted
    /// (default 168, one week; fractions allowed, e.g. 0.5; 0 keeps them forever).
    #[arg(long, env = "TABLEBAY_MULTIPART_EXPIRY_HOURS")]
    multipart_expiry_hours: Option<f64>,
    /// Also append the audit events (every mutation and every denial, as JSON lines) to this file.
    #[arg(long, env = "TABLEBAY_AUDIT_LOG")]
    audit_log: Option<PathBuf>,
    /// The one local directory whose `file:` paths a table migration's source may name (a warehouse on this
    /// machine). Unset: migrations read S3 sources only, never this machine's files.
    #[arg(long, env = "TABLEBAY_MIGRATION_LOCAL_ROOT")]
    migration_local_root: Option<PathBuf>,
    /// Shortest `DurationSeconds` STS accepts (default 900, as AWS; lower values are for testing expiry).
    #[arg(long, env = "TABLEBAY_STS_MIN_DURATION_SECS")]
    sts_min_duration_secs: Option<i64>,
    /// Maintenance worker tasks in this instance (default 1; 0 runs no workers and no sweep, run-now still works).
    #[arg(long, env = "TABLEBAY_MAINTENANCE_WORKERS")]
    maintenance_workers: Option<usize>,
    /// Seconds an idle maintenance worker waits before looking for a job again (default 10).
    #[arg(long, env = "TABLEBAY_MAINTENANCE_POLL_SECONDS")]
    maintenance_poll_seconds: Option<f64>,
    /// Seconds a claimed maintenance job stays leased without renewal (default 300); a dead worker's job is
    /// taken over after this.
    #[arg(long, env = "TABLEBAY_MAINTENANCE_LEASE_SECONDS")]
    maintenance_lease_seconds: Option<f64>,
    /// Seconds between sweeps that queue maintenance for every table (default 3600; 0 turns the sweep off).
    #[arg(long, env = "TABLEBAY_MAINTENANCE_SWEEP_SECONDS")]
    maintenance_sweep_seconds: Option<f64>,
    /// Seconds a maintenance job that backed off (a writer committed meanwhile) waits (default 60).
    #[arg(long, env = "TABLEBAY_MAINTENANCE_BACKOFF_SECONDS")]
    maintenance_backoff_seconds: Option<f64>,
    /// The length of a "day" in unreferenced-file removal, in seconds (default 86400; shorten only for tests).
    #[arg(long, env = "TABLEBAY_MAINTENANCE_DAY_SECONDS")]
    maintenance_day_seconds: Option<f64>,
    /// Seconds a table must go without commits before automatic compaction rewrites it (default 60; 0 never
    /// waits). Run-now does not wait.
    #[arg(long, env = "TABLEBAY_MAINTENANCE_COMPACTION_QUIET_SECONDS")]
    maintenance_compaction_quiet_seconds: Option<f64>,
    /// Seconds the replication worker waits before looking for unreplicated commits when no commit woke it
    /// (default 1).
    #[arg(long, env = "TABLEBAY_REPLICATION_POLL_SECONDS")]
    replication_poll_seconds: Option<f64>,
    /// Seconds a source table stays leased to one instance's replication worker without renewal (default 60); a
    /// dead instance's tables are taken over after this.
    #[arg(long, env = "TABLEBAY_REPLICATION_LEASE_SECONDS")]
    replication_lease_seconds: Option<f64>,
    /// A TOML file naming the other Tablebay servers that replication destinations live on, by account, with
    /// the credentials this server uses there to assume the replication role (`[[remote]]` entries; see
    /// docs/replication.md). Keep it readable by the server only.
    #[arg(long, env = "TABLEBAY_REPLICATION_REMOTES")]
    replication_remotes: Option<PathBuf>,
    /// File with the master keys of encryption at rest (`<key-id> <version> <base64 key>` per line; see
    /// docs/encryption.md). Default `<data-dir>/encryption.key`, generated on first start.
    #[arg(long, env = "TABLEBAY_ENCRYPTION_KEY_FILE")]
    encryption_key_file: Option<PathBuf>,
    /// Name of an environment variable holding the master keys instead of a file (same text format).
    #[arg(long, env = "TABLEBAY_ENCRYPTION_KEY_ENV")]
    encryption_key_env: Option<String>,
    /// Seconds between deliveries of server access log records to their log tables (default 60; sooner when many
    /// are buffered). See docs/access-logging.md.
    #[arg(long, env = "TABLEBAY_ACCESS_LOG_INTERVAL_SECONDS")]
    access_log_interval_seconds: Option<f64>,
    /// Seconds a client has to send a complete request head, counted from the connection's start or from the
    /// end of the previous response (so an idle kept-alive connection closes after it too); default 30.
    #[arg(long, env = "TABLEBAY_HEADER_READ_TIMEOUT_SECONDS")]
    header_read_timeout_seconds: Option<f64>,
    /// Seconds the server waits on a client that stopped in the middle of a request: no byte of the request
    /// body arrives, or a response cannot be written because the client does not read (default 60).
    #[arg(long, env = "TABLEBAY_IDLE_TIMEOUT_SECONDS")]
    idle_timeout_seconds: Option<f64>,
    /// Most open connections per listener (default 4096; lowered to fit the open-file limit). At the limit a
    /// new connection closes the connection that has been idle longest.
    #[arg(long, env = "TABLEBAY_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Who may read `GET /metrics`: `none` (anyone, the default), `token` (`Authorization: Bearer` with
    /// --metrics-token) or `sigv4` (requests signed by the instance root).
    #[arg(long, env = "TABLEBAY_METRICS_AUTH")]
    metrics_auth: Option<String>,
    /// The bearer token of `--metrics-auth token`.
    #[arg(long, env = "TABLEBAY_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
}

/// The same keys as a config file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    tables_addr: Option<String>,
    s3_addr: Option<String>,
    s3_public_url: Option<String>,
    region: Option<String>,
    account_id: Option<String>,
    arn_flavor: Option<String>,
    meta_url: Option<String>,
    blob_url: Option<String>,
    blob_s3_endpoint: Option<String>,
    blob_s3_region: Option<String>,
    blob_s3_access_key_id: Option<String>,
    blob_s3_secret_access_key: Option<String>,
    blob_s3_path_style: Option<bool>,
    root_access_key_id: Option<String>,
    root_secret_access_key: Option<String>,
    log_format: Option<String>,
    durability: Option<String>,
    multipart_expiry_hours: Option<f64>,
    audit_log: Option<PathBuf>,
    migration_local_root: Option<PathBuf>,
    sts_min_duration_secs: Option<i64>,
    maintenance_workers: Option<usize>,
    maintenance_poll_seconds: Option<f64>,
    maintenance_lease_seconds: Option<f64>,
    maintenance_sweep_seconds: Option<f64>,
    maintenance_backoff_seconds: Option<f64>,
    maintenance_day_seconds: Option<f64>,
    maintenance_compaction_quiet_seconds: Option<f64>,
    replication_poll_seconds: Option<f64>,
    replication_lease_seconds: Option<f64>,
    replication_remotes: Option<PathBuf>,
    encryption_key_file: Option<PathBuf>,
    encryption_key_env: Option<String>,
    access_log_interval_seconds: Option<f64>,
    header_read_timeout_seconds: Option<f64>,
    idle_timeout_seconds: Option<f64>,
    max_connections: Option<usize>,
    metrics_auth: Option<String>,
    metrics_token: Option<String>,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The root credentials and whether they were just generated (then they are printed once).
#[derive(Clone, Debug)]
pub struct RootCredentials {
    pub access_key_id: String,
    pub secret: Secret,
    pub generated_at: Option<PathBuf>,
}

/// The validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub tables_addr: SocketAddr,
    pub s3_addr: SocketAddr,
    /// The data plane's URL for clients; derived from the bound S3 address when absent.
    pub s3_public_url: Option<String>,
    pub region: String,
    pub account_id: AccountId,
    pub arn_flavor: ArnFlavor,
    pub meta_url: String,
    pub blob_url: BlobUrl,
    pub root: RootCredentials,
    pub log_format: LogFormat,
    /// Whether acknowledged writes to the local SQLite file and blob directory are synced.
    pub durability: Durability,
    /// How long an incomplete multipart upload lives; `None` keeps them forever.
    pub multipart_expiry: Option<Duration>,
    /// A file that receives a copy of the audit events.
    pub audit_log: Option<PathBuf>,
    /// The local directory migration sources may read (`file:` paths), canonical; none by default.
    pub migration_local_root: Option<PathBuf>,
    /// Shortest STS session in seconds.
    pub sts_min_duration_secs: i64,
    /// Maintenance workers, sweep, leases and the test-shortened day.
    pub maintenance: MaintenanceConfig,
    /// Replication's poll period, lease and remote servers.
    pub replication: ReplicationConfig,
    /// The master keys of encryption at rest (`Debug` shows key ids and versions only).
    pub keys: LocalKeys,
    /// Where a key file was generated on this start (then a notice is printed once).
    pub generated_key_at: Option<PathBuf>,
    /// Timeouts and the connection limit of both listeners.
    pub limits: ListenerLimits,
    /// Who may read `/metrics`.
    pub metrics_access: MetricsAccess,
    /// How often access log records are delivered.
    pub access_log_interval: Duration,
}

const DEFAULT_TABLES_ADDR: &str = "127.0.0.1:8181";
/// AWS delivers server access logs within hours; a minute keeps log tables' files few and fresh.
const DEFAULT_ACCESS_LOG_INTERVAL: Duration = Duration::from_secs(60);
const DEFAULT_S3_ADDR: &str = "127.0.0.1:9000";
const DEFAULT_REGION: &str = "us-east-1";
const DEFAULT_ACCOUNT_ID: &str = "123456789012";
const ROOT_CREDENTIALS_FILE: &str = "root-credentials.json";
const ENCRYPTION_KEY_FILE: &str = "encryption.key";
/// Largest key text read (a line per key version).
const MAX_KEY_TEXT_BYTES: u64 = 1024 * 1024;
const DEFAULT_MULTIPART_EXPIRY_HOURS: f64 = 168.0;
/// Ten years: anything longer is a typo.
const MAX_MULTIPART_EXPIRY_HOURS: f64 = 24.0 * 365.0 * 10.0;
/// An hour: the longest header or idle timeout that is not a typo.
const MAX_LISTENER_TIMEOUT_SECONDS: f64 = 3600.0;
/// The most connections per listener that can be asked for.
const MAX_MAX_CONNECTIONS: usize = 1_000_000;

impl Config {
    /// Merges flags/environment with the config file and defaults, and validates everything.
    pub fn load(args: ServeArgs) -> anyhow::Result<Self> {
        let args_m = MaintenanceArgs {
            workers: args.maintenance_workers,
            poll: args.maintenance_poll_seconds,
            lease: args.maintenance_lease_seconds,
            sweep: args.maintenance_sweep_seconds,
            backoff: args.maintenance_backoff_seconds,
            day: args.maintenance_day_seconds,
            quiet: args.maintenance_compaction_quiet_seconds,
        };
        let file: FileConfig = match &args.config {
            None => FileConfig::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
            }
        };
        let maintenance = maintenance_config(&args_maintenance(&args_m, &file))?;
        let data_dir = args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("tablebay-data"));
        tablebay_store::durability::create_dir_all_durably(&data_dir)
            .with_context(|| format!("creating data directory {}", data_dir.display()))?;
        let addr =
            |given: Option<String>, default: &str, what: &str| -> anyhow::Result<SocketAddr> {
                let text = given.unwrap_or_else(|| default.to_string());
                text.parse().with_context(|| {
                    format!("invalid {what} address '{text}' (expected host:port)")
                })
            };
        let region = args
            .region
            .or(file.region)
            .unwrap_or_else(|| DEFAULT_REGION.to_string());
        if region.is_empty()
            || !region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            bail!("invalid region '{region}' (lowercase letters, digits and '-')");
        }
        let account = args
            .account_id
            .or(file.account_id)
            .unwrap_or_else(|| DEFAULT_ACCOUNT_ID.to_string());
        let account_id =
            AccountId::parse(&account).map_err(|e| anyhow::anyhow!("invalid account id: {e}"))?;
        let flavor = args
            .arn_flavor
            .or(file.arn_flavor)
            .unwrap_or_else(|| "oss".to_string());
        let arn_flavor: ArnFlavor =
            tablebay_catalog::parse_arn_flavor(&flavor).map_err(|e| anyhow::anyhow!("{e}"))?;
        let meta_url = match args.meta_url.or(file.meta_url) {
            Some(url) => url,
            None => format!("sqlite://{}?mode=rwc", data_dir.join("meta.db").display()),
        };
        if !(meta_url.starts_with("sqlite:")
            || meta_url.starts_with("postgres://")
            || meta_url.starts_with("postgresql://"))
        {
            bail!("invalid meta URL '{meta_url}' (expected sqlite://… or postgres://…)");
        }
        let blob_url = match args.blob_url.or(file.blob_url) {
            None => BlobUrl::Local(data_dir.join("blobs")),
            Some(url) => match url.strip_prefix("s3://") {
                None => BlobUrl::Local(PathBuf::from(url.strip_prefix("file://").unwrap_or(&url))),
                Some(rest) => {
                    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                    if bucket.is_empty() {
                        bail!("invalid blob URL '{url}' (expected s3://bucket/prefix)");
                    }
                    BlobUrl::S3 {
                        bucket: bucket.to_string(),
                        prefix: prefix.trim_matches('/').to_string(),
                        endpoint: args.blob_s3_endpoint.or(file.blob_s3_endpoint),
                        region: args
                            .blob_s3_region
                            .or(file.blob_s3_region)
                            .unwrap_or_else(|| region.clone()),
                        access_key_id: args.blob_s3_access_key_id.or(file.blob_s3_access_key_id),
                        secret_access_key: args
                            .blob_s3_secret_access_key
                            .or(file.blob_s3_secret_access_key),
                        path_style: args
                            .blob_s3_path_style
                            .or(file.blob_s3_path_style)
                            .unwrap_or(true),
                    }
                }
            },
        };
        let root = root_credentials(
            args.root_access_key_id.or(file.root_access_key_id),
            args.root_secret_access_key.or(file.root_secret_access_key),
            &data_dir,
        )?;
        let log_format = match args.log_format.or(file.log_format).as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => bail!("invalid log format '{other}' (expected text or json)"),
        };
        let durability = match args.durability.or(file.durability) {
            None => Durability::default(),
            Some(text) => Durability::parse(&text).map_err(|e| anyhow::anyhow!("invalid {e}"))?,
        };
        let expiry_hours = args
            .multipart_expiry_hours
            .or(file.multipart_expiry_hours)
            .unwrap_or(DEFAULT_MULTIPART_EXPIRY_HOURS);
        if !(0.0..=MAX_MULTIPART_EXPIRY_HOURS).contains(&expiry_hours) {
            bail!(
                "invalid multipart expiry {expiry_hours} hours (0 to {MAX_MULTIPART_EXPIRY_HOURS}; 0 disables expiry)"
            );
        }
        let multipart_expiry =
            (expiry_hours > 0.0).then(|| Duration::from_secs_f64(expiry_hours * 3600.0));
        let sts_min_duration_secs = args
            .sts_min_duration_secs
            .or(file.sts_min_duration_secs)
            .unwrap_or(900);
        if !(1..=900).contains(&sts_min_duration_secs) {
            bail!("invalid STS minimum duration {sts_min_duration_secs} seconds (1 to 900)");
        }
        let (keys, generated_key_at) = encryption_keys(
            args.encryption_key_file.or(file.encryption_key_file),
            args.encryption_key_env.or(file.encryption_key_env),
            &data_dir,
        )?;
        let limits = listener_limits(
            args.header_read_timeout_seconds
                .or(file.header_read_timeout_seconds),
            args.idle_timeout_seconds.or(file.idle_timeout_seconds),
            args.max_connections.or(file.max_connections),
        )?;
        let metrics_access = metrics_access(
            args.metrics_auth.or(file.metrics_auth),
            args.metrics_token.or(file.metrics_token),
        )?;
        let replication = replication_config(
            args.replication_poll_seconds
                .or(file.replication_poll_seconds),
            args.replication_lease_seconds
                .or(file.replication_lease_seconds),
            args.replication_remotes.or(file.replication_remotes),
        )?;
        let access_log_interval = match args
            .access_log_interval_seconds
            .or(file.access_log_interval_seconds)
        {
            None => DEFAULT_ACCESS_LOG_INTERVAL,
            Some(v) if (0.1..=3600.0).contains(&v) => Duration::from_secs_f64(v),
            Some(v) => bail!("invalid access log interval {v} (0.1 to 3600 seconds)"),
        };
        let s3_public_url = args.s3_public_url.or(file.s3_public_url);
        if let Some(url) = &s3_public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            bail!("invalid S3 public URL '{url}' (expected http://… or https://…)");
        }
        Ok(Self {
            maintenance,
            replication,
            s3_public_url: s3_public_url.map(|u| u.trim_end_matches('/').to_string()),
            tables_addr: addr(
                args.tables_addr.or(file.tables_addr),
                DEFAULT_TABLES_ADDR,
                "tables",
            )?,
            s3_addr: addr(args.s3_addr.or(file.s3_addr), DEFAULT_S3_ADDR, "s3")?,
            region,
            account_id,
            arn_flavor,
            meta_url,
            blob_url,
            root,
            log_format,
            durability,
            multipart_expiry,
            audit_log: args.audit_log.or(file.audit_log),
            migration_local_root: match args.migration_local_root.or(file.migration_local_root) {
                None => None,
                Some(dir) => Some(
                    std::fs::canonicalize(&dir)
                        .with_context(|| format!("migration local root {}", dir.display()))?,
                ),
            },
            sts_min_duration_secs,
            keys,
            generated_key_at,
            limits,
            metrics_access,
            access_log_interval,
        })
    }
}

/// Validates the listener timeouts and connection limit and fills the defaults.
fn listener_limits(
    header_read: Option<f64>,
    idle: Option<f64>,
    max_connections: Option<usize>,
) -> anyhow::Result<ListenerLimits> {
    let defaults = ListenerLimits::default();
    let timeout = |value: Option<f64>, default: Duration, name: &str| -> anyhow::Result<Duration> {
        match value {
            None => Ok(default),
            Some(v) if v > 0.0 && v <= MAX_LISTENER_TIMEOUT_SECONDS => {
                Ok(Duration::from_secs_f64(v))
            }
            Some(v) => bail!(
                "invalid {name} {v} (more than 0, at most {MAX_LISTENER_TIMEOUT_SECONDS} seconds)"
            ),
        }
    };
    let max_connections = max_connections.unwrap_or(defaults.max_connections);
    if !(1..=MAX_MAX_CONNECTIONS).contains(&max_connections) {
        bail!("invalid max connections {max_connections} (1 to {MAX_MAX_CONNECTIONS})");
    }
    Ok(ListenerLimits {
        header_read_timeout: timeout(
            header_read,
            defaults.header_read_timeout,
            "header read timeout",
        )?,
        idle_timeout: timeout(idle, defaults.idle_timeout, "idle timeout")?,
        max_connections,
    })
}

/// `--metrics-auth` and its token.
fn metrics_access(mode: Option<String>, token: Option<String>) -> anyhow::Result<MetricsAccess> {
    match (mode.as_deref().unwrap_or("none"), token) {
        ("none", None) => Ok(MetricsAccess::Open),
        ("sigv4", None) => Ok(MetricsAccess::InstanceRoot),
        ("token", Some(token)) if !token.trim().is_empty() => {
            Ok(MetricsAccess::Token(Secret::new(token.trim())))
        }
        ("token", _) => bail!("--metrics-auth token needs a non-empty --metrics-token"),
        ("none" | "sigv4", Some(_)) => {
            bail!("--metrics-token is only used with --metrics-auth token")
        }
        (other, _) => bail!("invalid metrics auth '{other}' (expected none, token or sigv4)"),
    }
}

/// Replication's options, validated; the local listeners join them once bound.
#[derive(Clone, Debug)]
pub struct ReplicationConfig {
    pub poll_interval: Duration,
    pub lease: Duration,
    pub remotes: Vec<RemoteServer>,
}

/// One `[[remote]]` entry of the replication remotes file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoteEntry {
    /// The account whose destination buckets live on that server.
    account_id: String,
    /// Only destinations in this region (default: any).
    region: Option<String>,
    /// Its tables listener URL.
    endpoint: String,
    /// Its S3 listener URL.
    s3_endpoint: String,
    /// The region to sign for (default: `region`, else us-east-1).
    signing_region: Option<String>,
    access_key_id: String,
    secret_access_key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemotesFile {
    #[serde(default)]
    remote: Vec<RemoteEntry>,
}

/// Validates the replication options and reads the remotes file.
fn replication_config(
    poll: Option<f64>,
    lease: Option<f64>,
    remotes: Option<PathBuf>,
) -> anyhow::Result<ReplicationConfig> {
    let seconds = |value: Option<f64>, default: f64, name: &str| -> anyhow::Result<Duration> {
        let v = value.unwrap_or(default);
        if v > 0.0 && v <= MAX_MAINTENANCE_PERIOD_SECONDS {
            Ok(Duration::from_secs_f64(v))
        } else {
            bail!(
                "invalid {name} {v} (more than 0, at most {MAX_MAINTENANCE_PERIOD_SECONDS} seconds)"
            )
        }
    };
    let remotes = match remotes {
        None => Vec::new(),
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let file: RemotesFile =
                toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
            file.remote
                .into_iter()
                .map(|r| {
                    AccountId::parse(&r.account_id).map_err(|e| {
                        anyhow::anyhow!("{}: invalid account_id: {e}", path.display())
                    })?;
                    for url in [&r.endpoint, &r.s3_endpoint] {
                        if !(url.starts_with("http://") || url.starts_with("https://")) {
                            bail!(
                                "{}: invalid URL '{url}' (expected http://… or https://…)",
                                path.display()
                            );
                        }
                    }
                    let signing_region = r
                        .signing_region
                        .or_else(|| r.region.clone())
                        .unwrap_or_else(|| DEFAULT_REGION.to_string());
                    Ok(RemoteServer {
                        account_id: r.account_id,
                        region: r.region,
                        urls: ServerUrls {
                            tables: r.endpoint.trim_end_matches('/').to_string(),
                            s3: r.s3_endpoint.trim_end_matches('/').to_string(),
                            region: signing_region,
                        },
                        credentials: Credentials {
                            access_key_id: r.access_key_id,
                            secret_access_key: r.secret_access_key,
                            session_token: None,
                            expiration: None,
                        },
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?
        }
    };
    Ok(ReplicationConfig {
        poll_interval: seconds(poll, 1.0, "replication poll period")?,
        lease: seconds(lease, 60.0, "replication lease")?,
        remotes,
    })
}

/// The maintenance options as given (flag/env first, then the file).
struct MaintenanceArgs {
    workers: Option<usize>,
    poll: Option<f64>,
    lease: Option<f64>,
    sweep: Option<f64>,
    backoff: Option<f64>,
    day: Option<f64>,
    quiet: Option<f64>,
}

fn args_maintenance(given: &MaintenanceArgs, file: &FileConfig) -> MaintenanceArgs {
    MaintenanceArgs {
        workers: given.workers.or(file.maintenance_workers),
        poll: given.poll.or(file.maintenance_poll_seconds),
        lease: given.lease.or(file.maintenance_lease_seconds),
        sweep: given.sweep.or(file.maintenance_sweep_seconds),
        backoff: given.backoff.or(file.maintenance_backoff_seconds),
        day: given.day.or(file.maintenance_day_seconds),
        quiet: given.quiet.or(file.maintenance_compaction_quiet_seconds),
    }
}

/// A week: the longest poll, lease, backoff or sweep period that is not a typo.
const MAX_MAINTENANCE_PERIOD_SECONDS: f64 = 7.0 * 86_400.0;

/// Validates the maintenance options and fills the defaults.
fn maintenance_config(given: &MaintenanceArgs) -> anyhow::Result<MaintenanceConfig> {
    let defaults = MaintenanceConfig::default();
    let seconds =
        |value: Option<f64>, default: Duration, name: &str, max: f64| -> anyhow::Result<Duration> {
            match value {
                None => Ok(default),
                Some(v) if v > 0.0 && v <= max => Ok(Duration::from_secs_f64(v)),
                Some(v) => bail!("invalid {name} {v} (more than 0, at most {max} seconds)"),
            }
        };
    let workers = given.workers.unwrap_or(defaults.workers);
    if workers > 64 {
        bail!("invalid maintenance workers {workers} (0 to 64)");
    }
    let sweep_interval = match given.sweep {
        Some(0.0) => None,
        other => Some(seconds(
            other,
            Duration::from_secs(3600),
            "maintenance sweep period",
            MAX_MAINTENANCE_PERIOD_SECONDS,
        )?),
    };
    Ok(MaintenanceConfig {
        workers,
        poll_interval: seconds(
            given.poll,
            defaults.poll_interval,
            "maintenance poll period",
            MAX_MAINTENANCE_PERIOD_SECONDS,
        )?,
        lease: seconds(
            given.lease,
            defaults.lease,
            "maintenance lease",
            MAX_MAINTENANCE_PERIOD_SECONDS,
        )?,
        sweep_interval,
        backoff: seconds(
            given.backoff,
            defaults.backoff,
            "maintenance backoff",
            MAX_MAINTENANCE_PERIOD_SECONDS,
        )?,
        // A day of at most a day: the option exists to shorten periods for tests.
        day: seconds(given.day, defaults.day, "maintenance day", 86_400.0)?,
        compaction_quiet: match given.quiet {
            Some(0.0) => Duration::ZERO,
            other => seconds(
                other,
                defaults.compaction_quiet,
                "compaction quiet period",
                MAX_MAINTENANCE_PERIOD_SECONDS,
            )?,
        },
        instance: defaults.instance,
    })
}

#[derive(serde::Serialize, Deserialize)]
struct StoredRootCredentials {
    access_key_id: String,
    secret_access_key: String,
}

/// The root credentials: given (both variables), else stored in the data dir, else generated and stored 0600.
fn root_credentials(
    access_key_id: Option<String>,
    secret: Option<String>,
    data_dir: &Path,
) -> anyhow::Result<RootCredentials> {
    match (access_key_id, secret) {
        (Some(id), Some(secret)) => {
            if id.is_empty() || secret.is_empty() {
                bail!(
                    "TABLEBAY_ROOT_ACCESS_KEY_ID and TABLEBAY_ROOT_SECRET_ACCESS_KEY must not be empty"
                );
            }
            return Ok(RootCredentials {
                access_key_id: id,
                secret: Secret::new(secret),
                generated_at: None,
            });
        }
        (None, None) => {}
        _ => bail!(
            "set both TABLEBAY_ROOT_ACCESS_KEY_ID and TABLEBAY_ROOT_SECRET_ACCESS_KEY, or neither"
        ),
    }
    let path = data_dir.join(ROOT_CREDENTIALS_FILE);
    if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let stored: StoredRootCredentials =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        return Ok(RootCredentials {
            access_key_id: stored.access_key_id,
            secret: Secret::new(stored.secret_access_key),
            generated_at: None,
        });
    }
    const ID_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const SECRET_ALPHABET: &[u8] =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let pick = |alphabet: &[u8], n: usize| -> String {
        (0..n)
            .filter_map(|_| {
                alphabet
                    .get(rand::random_range(0..alphabet.len()))
                    .copied()
                    .map(char::from)
            })
            .collect()
    };
    let stored = StoredRootCredentials {
        access_key_id: format!("TBRK{}", pick(ID_ALPHABET, 16)),
        secret_access_key: pick(SECRET_ALPHABET, 40),
    };
    write_private(&path, &serde_json::to_vec_pretty(&stored)?)?;
    Ok(RootCredentials {
        access_key_id: stored.access_key_id,
        secret: Secret::new(stored.secret_access_key),
        generated_at: Some(path),
    })
}

/// The master keys: from the variable named by `key_env`, else from `key_file`, else from
/// `<data-dir>/encryption.key`, which is generated (one random server-managed key, 0600) when missing. Errors
/// name the source and line, never a key.
fn encryption_keys(
    key_file: Option<PathBuf>,
    key_env: Option<String>,
    data_dir: &Path,
) -> anyhow::Result<(LocalKeys, Option<PathBuf>)> {
    let (text, source, generated) = match (key_env, key_file) {
        (Some(_), Some(_)) => {
            bail!("set an encryption key file or an encryption key variable, not both")
        }
        (Some(name), None) => {
            let text = std::env::var(&name).map_err(|_| {
                anyhow::anyhow!("the encryption key variable {name} is not set (or not UTF-8)")
            })?;
            (text, format!("variable {name}"), None)
        }
        (None, Some(path)) => (read_key_file(&path)?, path.display().to_string(), None),
        (None, None) => {
            let path = data_dir.join(ENCRYPTION_KEY_FILE);
            if path.exists() {
                (read_key_file(&path)?, path.display().to_string(), None)
            } else {
                let text = format!(
                    "# Tablebay master keys: <key-id> <version> <base64 of 32 bytes>. Back this file up: table data\n\
                     # cannot be read without it. Add a version to rotate; keep old ones for old data.\n\
                     default 1 {}\n",
                    MasterKey::generate().to_base64()
                );
                write_private(&path, text.as_bytes())?;
                (text, path.display().to_string(), Some(path))
            }
        }
    };
    let keys = LocalKeys::parse(&text)
        .map_err(|e| anyhow::anyhow!("invalid encryption keys in {source}: {e}"))?;
    if !keys.has_managed() {
        bail!(
            "the encryption keys in {source} have no 'default' key (the server-managed key of AES256 tables)"
        );
    }
    Ok((keys, generated))
}

fn read_key_file(path: &Path) -> anyhow::Result<String> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if size > MAX_KEY_TEXT_BYTES {
        bail!(
            "{} is larger than {MAX_KEY_TEXT_BYTES} bytes",
            path.display()
        );
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Writes a file readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    // The new file's name too: without it a power loss can leave the data dir without the file.
    tablebay_store::durability::sync_parent_dir(path)
        .with_context(|| format!("syncing the directory of {}", path.display()))?;
    Ok(())
}
