//! `tablebay serve`: opens the stores, builds the services, binds both listeners, announces them, and serves
//! them (`listener.rs`: timeouts and connection limits) until SIGINT/SIGTERM, then drains in-flight requests.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tablebay_catalog::{Catalog, CatalogConfig};
use tablebay_http::AppState;
use tablebay_iam::{Iam, IamConfig};
use tablebay_maintenance::JobRunner;
use tablebay_objects::Objects;
use tablebay_replication::{ReplicationSettings, Replicator, ServerUrls};
use tablebay_store::{BlobStore, BlobUrl, MetaStore};
use tokio::net::TcpListener;

use crate::config::{Config, LogFormat};
use crate::listener;

/// Logs go to stderr; stdout carries only the ready lines and the one-time credentials notice. With
/// `--audit-log`, the audit events (target `tablebay::audit`) are also appended to that file as JSON lines.
pub fn init_logging(config: &Config) -> anyhow::Result<()> {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_env("TABLEBAY_LOG")
        // s3s logs every error answer (a 404 included) at ERROR level; the S3 surface logs its own line per request.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn,s3s=off"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let stderr = match config.log_format {
        LogFormat::Text => stderr.boxed(),
        LogFormat::Json => stderr.json().boxed(),
    };
    // Opened once at startup (blocking is fine here); each event is one small appended line.
    let audit = match &config.audit_log {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening the audit log {}", path.display()))?;
            let only_audit = tracing_subscriber::filter::Targets::new()
                .with_target(tablebay_iam::AUDIT_TARGET, tracing::Level::INFO);
            Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(std::sync::Mutex::new(file))
                    .with_filter(only_audit),
            )
        }
        None => None,
    };
    tracing_subscriber::registry()
        .with(stderr.with_filter(filter))
        .with(audit)
        .init();
    Ok(())
}

/// Opens the configured stores and the catalog over them with the configured master keys, checked against
/// the ones the metadata store has seen (`serve` and `compact` open them the same way).
pub async fn open_catalog(config: &Config) -> anyhow::Result<(MetaStore, Catalog)> {
    // Each store is reached before anything else happens, and a failure names the one that could not be reached
    // (issue 17: an instance started against an unreachable dependency fails fast and says which).
    let meta = MetaStore::connect_with(&config.meta_url, config.durability)
        .await
        .with_context(|| {
            format!(
                "could not open the metadata store at {}",
                redacted_url(&config.meta_url)
            )
        })?;
    let blobs = BlobStore::open(&config.blob_url)
        .context("opening the blob store")?
        .with_durability(config.durability);
    blobs.probe().await.with_context(|| {
        format!(
            "could not reach the blob store {}",
            blob_location(&config.blob_url)
        )
    })?;
    if !config.durability.syncs() {
        tracing::warn!(
            "durability is relaxed: acknowledged writes to the local metadata file and blob directory are not \
             synced, and a power loss or kernel crash may lose the last of them"
        );
    }
    let catalog = Catalog::new(
        meta.clone(),
        blobs,
        CatalogConfig {
            region: config.region.clone(),
            flavor: config.arn_flavor,
        },
        Arc::new(config.keys.clone()),
    );
    catalog
        .verify_keys()
        .await
        .context("checking the encryption keys")?;
    Ok((meta, catalog))
}

/// `url` without the password of its user part (`postgres://user:secret@host/db` → `postgres://user@host/db`).
fn redacted_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{user}@{host}{path}")
        }
        None => url.to_string(),
    }
}

/// Where the blob store is, for messages: the directory, or the bucket, prefix and endpoint (never a key).
fn blob_location(url: &BlobUrl) -> String {
    match url {
        BlobUrl::Local(dir) => dir.display().to_string(),
        BlobUrl::S3 {
            bucket,
            prefix,
            endpoint,
            ..
        } => format!(
            "s3://{bucket}/{prefix} at {}",
            endpoint.as_deref().unwrap_or("the AWS endpoint")
        ),
    }
}

pub async fn run(config: Config) -> anyhow::Result<()> {
    let (meta, catalog) = open_catalog(&config).await?;
    let maintenance = JobRunner::new(catalog.clone(), meta.clone(), config.maintenance.clone());
    let replication_meta = meta.clone();
    let iam = Iam::new(
        meta.clone(),
        catalog.clone(),
        IamConfig {
            region: config.region.clone(),
            flavor: config.arn_flavor,
            default_account: config.account_id.clone(),
            root_access_key_id: config.root.access_key_id.clone(),
            root_secret: config.root.secret.expose().to_string(),
            min_session_secs: config.sts_min_duration_secs,
        },
    );
    let sealed = iam
        .seal_stored_secrets()
        .await
        .context("sealing the IAM secrets stored before secrets were sealed")?;
    if sealed > 0 {
        tracing::info!(
            sealed,
            "sealed IAM secrets stored in clear by an earlier version"
        );
    }
    iam.ensure_default_account()
        .await
        .context("creating the default account")?;
    let replication_parts = (catalog.clone(), iam.clone());
    let migrations = tablebay_migration::Migrations::new(
        catalog.clone(),
        meta.clone(),
        config.migration_local_root.clone(),
    );
    let state = AppState::new(catalog, iam)
        .with_maintenance(maintenance.clone())
        .with_migrations(migrations);

    let tables = TcpListener::bind(config.tables_addr)
        .await
        .with_context(|| format!("binding the tables listener to {}", config.tables_addr))?;
    let s3 = TcpListener::bind(config.s3_addr)
        .await
        .with_context(|| format!("binding the S3 listener to {}", config.s3_addr))?;

    if let Some(path) = &config.generated_key_at {
        println!(
            "tablebay generated an encryption master key in {} (back it up)",
            path.display()
        );
    }
    if let Some(path) = &config.root.generated_at {
        println!(
            "tablebay generated root credentials (stored in {}):",
            path.display()
        );
        println!("  access key id:     {}", config.root.access_key_id);
        println!("  secret access key: {}", config.root.secret.expose());
    }
    let s3_bound = s3.local_addr()?;
    let s3_public_url = match &config.s3_public_url {
        Some(url) => url.clone(),
        // A wildcard bind is reachable on loopback at least; deployments behind a proxy set --s3-public-url.
        None if s3_bound.ip().is_unspecified() => format!("http://127.0.0.1:{}", s3_bound.port()),
        None => format!("http://{s3_bound}"),
    };
    let state = state.with_s3_public_url(s3_public_url);
    println!(
        "tablebay tables listener ready at http://{}",
        tables.local_addr()?
    );
    println!("tablebay s3 listener ready at http://{}", s3.local_addr()?);

    let shutdown = shutdown_signal();
    maintenance.spawn(shutdown.0.clone());
    // Destinations on this server are reached through its own listeners, like remote ones.
    let tables_bound = tables.local_addr()?;
    let loopback = |addr: std::net::SocketAddr| {
        if addr.ip().is_unspecified() {
            format!("http://127.0.0.1:{}", addr.port())
        } else {
            format!("http://{addr}")
        }
    };
    let replicator = Replicator::new(
        replication_parts.0,
        replication_meta,
        replication_parts.1,
        ReplicationSettings {
            enabled: true,
            poll_interval: config.replication.poll_interval,
            lease: config.replication.lease,
            instance: config.maintenance.instance.clone(),
            local: ServerUrls {
                tables: loopback(tables_bound),
                s3: loopback(s3_bound),
                region: config.region.clone(),
            },
            remotes: config.replication.remotes.clone(),
        },
    );
    replicator.spawn(shutdown.0.clone());
    tokio::spawn(delete_unlinked_blobs(
        state.objects.clone(),
        shutdown.clone(),
    ));
    if let Some(max_age) = config.multipart_expiry {
        tokio::spawn(expire_uploads(
            state.objects.clone(),
            max_age,
            shutdown.clone(),
        ));
    }
    let (limits, open_files) = config.limits.fit_open_file_limit();
    if let Some(open_files) = open_files {
        tracing::warn!(
            configured = config.limits.max_connections,
            max_connections = limits.max_connections,
            open_files,
            "lowered the connection limit per listener to fit the open-file limit (raise it with ulimit -n or \
             systemd's LimitNOFILE)"
        );
    }
    tokio::spawn(state.access_log.clone().run(
        state.catalog.clone(),
        config.access_log_interval,
        shutdown.clone().wait(),
    ));
    let access_log = state.access_log.clone();
    let catalog = state.catalog.clone();
    let tables_app = tablebay_http::tables_router(state.clone(), config.metrics_access.clone());
    let s3_app = tablebay_http::s3_router(state);
    tokio::join!(
        listener::serve(tables, tables_app, limits, shutdown.clone().wait()),
        listener::serve(s3, s3_app, limits, shutdown.wait()),
    );
    // Every request has been answered: deliver the access log records still buffered.
    match tokio::time::timeout(ACCESS_LOG_FINAL_DELIVERY, access_log.deliver(&catalog)).await {
        Ok(0) => {}
        Ok(delivered) => tracing::info!(delivered, "delivered the buffered access log records"),
        Err(_) => tracing::warn!("gave up delivering the buffered access log records at shutdown"),
    }
    tracing::info!("stopped");
    Ok(())
}

/// How long a shutdown waits for the last access log delivery.
const ACCESS_LOG_FINAL_DELIVERY: Duration = Duration::from_secs(30);

/// Aborts data-plane multipart uploads older than `max_age`, now and then periodically (every tenth of the age,
/// between a second and an hour), until shutdown. Several instances may sweep at once: an upload is aborted once.
async fn expire_uploads(objects: Objects, max_age: Duration, shutdown: Shutdown) {
    let period = (max_age / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        match objects.expire_uploads(max_age).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(expired = n, "aborted expired multipart uploads"),
            Err(e) => tracing::warn!(error = %e, "multipart expiry sweep failed"),
        }
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(period) => {}
        }
    }
}

/// Deletes the blobs the meta store queued for deletion once they are due, now (what a crash left queued) and then
/// every second, until shutdown.
async fn delete_unlinked_blobs(objects: Objects, shutdown: Shutdown) {
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        match objects.delete_unlinked_blobs().await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(deleted = n, "deleted unlinked blobs"),
            Err(e) => tracing::warn!(error = %e, "deleting unlinked blobs failed"),
        }
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

/// Resolves on SIGINT or SIGTERM, for every listener that waits on a clone.
#[derive(Clone)]
struct Shutdown(tokio::sync::watch::Receiver<bool>);

impl Shutdown {
    async fn wait(mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}

fn shutdown_signal() -> Shutdown {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
        tracing::info!("shutting down");
        let _ = tx.send(true);
    });
    Shutdown(rx)
}

#[cfg(test)]
mod tests {
    use super::redacted_url;

    #[test]
    fn urls_lose_their_password() {
        for (url, want) in [
            ("postgres://u:secret@db:5432/x", "postgres://u@db:5432/x"),
            ("postgres://u@db/x", "postgres://u@db/x"),
            ("postgres://db/x", "postgres://db/x"),
            ("postgres://u:p@ss@db/x", "postgres://u@db/x"),
            ("sqlite:///var/lib/t.db", "sqlite:///var/lib/t.db"),
            ("sqlite:t.db", "sqlite:t.db"),
        ] {
            assert_eq!(redacted_url(url), want, "{url}");
        }
    }
}
