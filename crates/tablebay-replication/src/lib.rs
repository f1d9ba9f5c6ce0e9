//! Tablebay's table replication (`docs/replication.md`): workers that copy every commit of a source table, in
//! order, to a read-only replica of the same namespace and name in each destination table bucket — on this
//! server or on another Tablebay server — through the destination's public APIs (STS, control plane, S3).
//!
//! A source table is leased to one worker at a time through the maintenance job rows (job type
//! [`REPLICATION_JOB_TYPE`]), so any number of instances share the work and a dead worker's tables are taken
//! over when its lease lapses. Commits wake the workers; a poll catches what a wake-up missed. The catalog owns
//! the configurations, the status and the replica rules; this crate only moves files and commits.
#![warn(missing_docs)]

mod client;
mod engine;
mod rewrite;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use futures::StreamExt;
use iceberg::spec::TableMetadata;
use serde_json::Value;
use tablebay_auth::{Principal, PrincipalKind};
use tablebay_catalog::{BucketArn, Catalog, CommitObserver, DestinationStatus, Table, role_parts};
use tablebay_iam::{AccessContext, AssumeRoleRequest, Iam};
use tablebay_store::MetaStore;
use tablebay_store::meta::REPLICATION_JOB_TYPE;
use tokio::sync::{Notify, watch};
use uuid::Uuid;

pub use client::{Credentials, ServerUrls};

/// Source tables one worker replicates at the same time.
const TABLES_AT_ONCE: usize = 4;

/// Why a replication step failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplicationError {
    /// The replica moved under the worker (a stale version token): the next pass re-reads it.
    #[error("{0}")]
    Conflict(String),
    /// Anything else; the message is what the status reports.
    #[error("{0}")]
    Failed(String),
}

/// Another Tablebay server that destinations may live on, and the credentials this server uses there to assume
/// the replication role.
#[derive(Clone)]
pub struct RemoteServer {
    /// The account whose destination buckets live there.
    pub account_id: String,
    /// Only destinations in this region (any when `None`).
    pub region: Option<String>,
    /// Its listeners (its region is the one requests are signed for).
    pub urls: ServerUrls,
    /// Long-term keys of a principal there that may assume the role.
    pub credentials: Credentials,
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteServer")
            .field("account_id", &self.account_id)
            .field("region", &self.region)
            .field("urls", &self.urls)
            .finish_non_exhaustive()
    }
}

/// How replication runs in this instance.
#[derive(Clone, Debug)]
pub struct ReplicationSettings {
    /// Run the workers (`false`: configurations are kept, nothing replicates from this instance).
    pub enabled: bool,
    /// How often the worker looks for work without being woken by a commit.
    pub poll_interval: Duration,
    /// How long a source table stays leased to a worker without renewal.
    pub lease: Duration,
    /// This instance's name in leases.
    pub instance: String,
    /// This server's own listeners (destinations on this server are reached through them).
    pub local: ServerUrls,
    /// Other servers, by account.
    pub remotes: Vec<RemoteServer>,
}

/// The replication service. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Replicator {
    catalog: Catalog,
    meta: MetaStore,
    iam: Iam,
    settings: ReplicationSettings,
    http: reqwest::Client,
    wake: Arc<Notify>,
    sessions: Mutex<HashMap<(String, String), Credentials>>,
    /// Per replica ARN: the source files already copied there.
    copied: tokio::sync::Mutex<HashMap<String, HashSet<String>>>,
}

/// Wakes the workers after every commit.
#[derive(Debug)]
struct Wake(Arc<Notify>);

impl CommitObserver for Wake {
    fn committed(&self, _table: &Table, _metadata: &TableMetadata) {
        self.0.notify_one();
    }
}

impl Replicator {
    /// The service; installs the commit observer that wakes it.
    pub fn new(
        catalog: Catalog,
        meta: MetaStore,
        iam: Iam,
        settings: ReplicationSettings,
    ) -> Arc<Self> {
        let wake = Arc::new(Notify::new());
        catalog.observe_commits(Arc::new(Wake(Arc::clone(&wake))));
        Arc::new(Self {
            catalog,
            meta,
            iam,
            settings,
            http: reqwest::Client::new(),
            wake,
            sessions: Mutex::new(HashMap::new()),
            copied: tokio::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Starts the worker; it stops when `stop` turns true.
    pub fn spawn(self: &Arc<Self>, mut stop: watch::Receiver<bool>) {
        if !self.settings.enabled {
            return;
        }
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let owner = format!("{}/replication", this.settings.instance);
            loop {
                if let Err(e) = this.pass(&owner).await {
                    tracing::warn!(error = %e, "replication pass failed");
                }
                tokio::select! {
                    _ = stop.wait_for(|s| *s) => return,
                    _ = this.wake.notified() => {}
                    _ = tokio::time::sleep(this.settings.poll_interval) => {}
                }
            }
        });
    }

    /// One pass over every replicated table this worker can lease.
    async fn pass(&self, owner: &str) -> Result<(), ReplicationError> {
        let ids = self
            .catalog
            .replicated_table_ids()
            .await
            .map_err(|e| ReplicationError::Failed(e.to_string()))?;
        // A few tables at a time: one slow destination does not hold up the others.
        futures::stream::iter(ids)
            .for_each_concurrent(TABLES_AT_ONCE, |id| self.lease_and_replicate(id, owner))
            .await;
        Ok(())
    }

    /// Replicates one table if it has work and no other worker holds it.
    async fn lease_and_replicate(&self, id: Uuid, owner: &str) {
        // Reads only: a table whose destinations all hold its current version needs no lease.
        match self.up_to_date(id).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(table = %id, error = %e, "could not read a table's replication status");
                return;
            }
        }
        let lease = chrono::Duration::from_std(self.settings.lease)
            .unwrap_or(chrono::Duration::seconds(60));
        let now = Utc::now();
        let job = match self
            .meta
            .claim_job_for(id, REPLICATION_JOB_TYPE, owner, now, now + lease)
            .await
        {
            Ok(job) => job,
            // Another worker holds the table.
            Err(tablebay_store::StoreError::Conflict(_)) => return,
            Err(e) => {
                tracing::warn!(table = %id, error = %e, "could not lease a table for replication");
                return;
            }
        };
        let heartbeat = self.heartbeat(job.id, owner.to_string());
        let result = self.replicate_table(id).await;
        heartbeat.abort();
        if let Err(e) = self.meta.finish_job(job.id, owner, None).await {
            tracing::warn!(error = %e, "could not release a replication lease");
        }
        if let Err(e) = result {
            tracing::warn!(table = %id, error = %e, "replication of a table failed");
        }
    }

    fn heartbeat(&self, job: Uuid, owner: String) -> tokio::task::JoinHandle<()> {
        let meta = self.meta.clone();
        let lease = self.settings.lease;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep((lease / 3).max(Duration::from_millis(100))).await;
                let until = Utc::now()
                    + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::seconds(60));
                if !matches!(meta.renew_lease(job, &owner, until).await, Ok(true)) {
                    tracing::warn!(%job, "lost a replication lease");
                    return;
                }
            }
        })
    }

    /// Whether every destination of the table holds its current version (or it has nothing to replicate).
    async fn up_to_date(&self, id: Uuid) -> Result<bool, tablebay_catalog::ServiceError> {
        let Some(table) = self.catalog.table_by_id(id).await? else {
            return Ok(true);
        };
        if table.metadata_location.is_none() {
            return Ok(true);
        }
        let (_, statuses) = match self
            .catalog
            .replication_status(&tablebay_catalog::TableRef::Arn(table.arn.clone()))
            .await
        {
            Ok(found) => found,
            Err(tablebay_catalog::ServiceError::NotFound(_)) => return Ok(true),
            Err(e) => return Err(e),
        };
        Ok(statuses
            .iter()
            .all(|s| s.state == tablebay_catalog::ReplicationState::Completed))
    }

    /// Brings every destination of one source table up to date, and records their status.
    async fn replicate_table(&self, id: Uuid) -> Result<(), ReplicationError> {
        let failed = |e: tablebay_catalog::ServiceError| ReplicationError::Failed(e.to_string());
        let Some(table) = self.catalog.table_by_id(id).await.map_err(failed)? else {
            return Ok(());
        };
        let Some((_, config)) = self
            .catalog
            .effective_replication(&table)
            .await
            .map_err(failed)?
        else {
            return Ok(());
        };
        let Some(location) = table.metadata_location.clone() else {
            return Ok(());
        };
        let files = self.catalog.table_files(table.id);
        let metadata: Value = match files.read(&location).await.map_err(failed)? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| ReplicationError::Failed(format!("{location}: {e}")))?,
            None => return Err(ReplicationError::Failed(format!("{location} is missing"))),
        };
        let source = engine::Source {
            table: &table,
            files,
            location,
            metadata,
        };
        let previous: Vec<DestinationStatus> = self
            .catalog
            .replication_status(&tablebay_catalog::TableRef::Arn(table.arn.clone()))
            .await
            .map(|(_, s)| s)
            .unwrap_or_default();
        let mut statuses = Vec::new();
        for destination in &config.destinations {
            let prior = previous.iter().find(|p| &p.destination == destination);
            let status = match self.client_for(&table, destination, &config.role).await {
                Ok(client) => {
                    let mut copied = self.take_copied(prior).await;
                    let status = engine::replicate(
                        &source,
                        destination,
                        &config.role,
                        &client,
                        &mut copied,
                        prior,
                    )
                    .await;
                    if let Some(arn) = &status.destination_table_arn {
                        self.copied.lock().await.insert(arn.clone(), copied);
                    }
                    status
                }
                Err(e) => DestinationStatus {
                    destination: destination.clone(),
                    state: tablebay_catalog::ReplicationState::Failed,
                    destination_table_arn: prior.and_then(|p| p.destination_table_arn.clone()),
                    last_replicated: prior.and_then(|p| p.last_replicated.clone()),
                    failure_message: Some(e.to_string()),
                },
            };
            statuses.push(status);
        }
        self.catalog
            .set_replication_status(table.id, &statuses)
            .await
            .map_err(failed)
    }

    async fn take_copied(&self, prior: Option<&DestinationStatus>) -> HashSet<String> {
        let Some(arn) = prior.and_then(|p| p.destination_table_arn.as_ref()) else {
            return HashSet::new();
        };
        let mut copied = self.copied.lock().await.remove(arn).unwrap_or_default();
        // A bound on the memory per replica: forgetting only costs repeated (identical) copies.
        if copied.len() > 200_000 {
            copied.clear();
        }
        copied
    }

    /// A client of the destination's server acting as a session of `role` there: a configured remote server
    /// (AssumeRole through its `/sts` with the configured keys), else this server (AssumeRole through this
    /// server's IAM as the root of the source table's account: a role that trusts the account is enough).
    async fn client_for(
        &self,
        source: &Table,
        destination: &str,
        role: &str,
    ) -> Result<client::Client, ReplicationError> {
        let arn =
            BucketArn::parse(destination).map_err(|e| ReplicationError::Failed(e.to_string()))?;
        let remote = self.settings.remotes.iter().find(|r| {
            r.account_id == arn.account.to_string()
                && r.region.as_ref().is_none_or(|region| *region == arn.region)
        });
        let (urls, key) = match remote {
            Some(remote) => (remote.urls.clone(), remote.urls.tables.clone()),
            None => (self.settings.local.clone(), String::from("local")),
        };
        let cache_key = (key, role.to_string());
        let cached = self
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.get(&cache_key).cloned())
            .filter(|c| {
                c.expiration
                    .is_some_and(|at| at > Utc::now() + chrono::Duration::minutes(5))
            });
        let credentials = match cached {
            Some(credentials) => credentials,
            None => {
                let credentials = match remote {
                    Some(remote) => {
                        client::Client::new(
                            self.http.clone(),
                            remote.urls.clone(),
                            remote.credentials.clone(),
                        )
                        .assume_role(role)
                        .await?
                    }
                    None => self.assume_locally(source, role).await?,
                };
                if let Ok(mut sessions) = self.sessions.lock() {
                    sessions.insert(cache_key, credentials.clone());
                }
                credentials
            }
        };
        Ok(client::Client::new(self.http.clone(), urls, credentials))
    }

    async fn assume_locally(
        &self,
        source: &Table,
        role: &str,
    ) -> Result<Credentials, ReplicationError> {
        if role_parts(role).is_none() {
            return Err(ReplicationError::Failed(format!("Invalid role {role}")));
        }
        let account = source.bucket.arn.account.to_string();
        let caller = Principal {
            arn: self.iam.root_arn(&account),
            account_id: account,
            access_key_id: String::new(),
            kind: PrincipalKind::AccountRoot,
            name: String::new(),
            session: None,
        };
        let session = self
            .iam
            .assume_role(
                &caller,
                &AssumeRoleRequest {
                    role_arn: role.to_string(),
                    session_name: "tablebay-replication".into(),
                    duration_secs: None,
                    policy: None,
                },
                &AccessContext {
                    source_ip: None,
                    request_id: format!("replication-{}", Uuid::now_v7().simple()),
                },
            )
            .await
            .map_err(|e| ReplicationError::Failed(format!("assuming {role}: {e}")))?;
        Ok(Credentials {
            access_key_id: session.access_key_id,
            secret_access_key: session.secret_access_key,
            session_token: Some(session.session_token),
            expiration: Some(session.expiration),
        })
    }
}
