//! The [`JobRunner`]: workers that claim jobs with leases and run them, the periodic sweep that queues work for
//! every table, run-now for operators, and the run records.
//!
//! A worker holds a job's lease while it runs and renews it every third of the lease period; if the process
//! dies, the lease lapses and another worker (of any instance) takes the job over. A run that backs off (a
//! writer committed meanwhile) puts the job back to wait; a finished run deletes it. Concurrency is capped by a
//! semaphore shared by the workers and run-now, so maintenance never takes more than its share of the server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use tablebay_catalog::{
    Catalog, MaintenanceJobType, MaintenanceStatus, ServiceError, Table, TableArn, TableRef,
};
use tablebay_store::MetaStore;
use tablebay_store::meta::JobRecord;
use tokio::sync::{Semaphore, watch};
use uuid::Uuid;

use crate::expire_snapshots::expire;
use crate::planner::CommitTrigger;
use crate::run::JobOutcome;
use crate::settings::{
    EffectiveCompaction, EffectiveSnapshotManagement, EffectiveUnreferencedRemoval,
};
use crate::unreferenced_files::remove_unreferenced;
use crate::{
    MaintenanceError, MaintenanceMetrics, MaintenanceRun, RunOutcome, compaction, record_expiration,
};

/// The most runs one listing returns.
pub const MAX_LISTED_RUNS: u32 = 1000;

/// How the maintenance service runs in this instance.
#[derive(Clone, Debug)]
pub struct MaintenanceConfig {
    /// Worker tasks; 0 turns the workers and the sweep off (run-now still works).
    pub workers: usize,
    /// How often an idle worker looks for a job.
    pub poll_interval: Duration,
    /// How long a claimed job stays leased without renewal.
    pub lease: Duration,
    /// How often the sweep queues work for every table; `None` turns it off.
    pub sweep_interval: Option<Duration>,
    /// How long a backed-off job waits before it is claimable again.
    pub backoff: Duration,
    /// The length of a "day" in unreferenced-file removal (shortened for tests).
    pub day: Duration,
    /// How long a table must have gone without commits before an automatic (not run-now) compaction touches
    /// it: a row-level writer (merge-on-read DELETE/UPDATE/MERGE) that read files a compaction then replaced
    /// fails its own commit validation, so compaction waits for a pause in the writes instead.
    pub compaction_quiet: Duration,
    /// This instance's name in leases and run records.
    pub instance: String,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        Self {
            workers: 1,
            poll_interval: Duration::from_secs(10),
            lease: Duration::from_secs(300),
            sweep_interval: Some(Duration::from_secs(3600)),
            backoff: Duration::from_secs(60),
            day: Duration::from_secs(86_400),
            compaction_quiet: Duration::from_secs(60),
            instance: format!("tablebay-{}", &Uuid::new_v4().simple().to_string()[..8]),
        }
    }
}

/// The maintenance service. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct JobRunner {
    catalog: Catalog,
    meta: MetaStore,
    config: MaintenanceConfig,
    metrics: MaintenanceMetrics,
    slots: Semaphore,
}

impl JobRunner {
    /// The service over a catalog and the metadata store holding its jobs; installs the commit trigger.
    pub fn new(catalog: Catalog, meta: MetaStore, config: MaintenanceConfig) -> Arc<Self> {
        let cooldown = config
            .poll_interval
            .saturating_mul(6)
            .max(Duration::from_secs(1));
        catalog.observe_commits(CommitTrigger::new(meta.clone(), cooldown));
        let slots = Semaphore::new(config.workers.max(1));
        Arc::new(Self {
            catalog,
            meta,
            config,
            metrics: MaintenanceMetrics::default(),
            slots,
        })
    }

    /// The counters of this instance.
    pub fn metrics(&self) -> &MaintenanceMetrics {
        &self.metrics
    }

    /// Starts the workers and the sweep; they stop when `stop` turns true.
    pub fn spawn(self: &Arc<Self>, stop: watch::Receiver<bool>) {
        if self.config.workers == 0 {
            return;
        }
        for n in 0..self.config.workers {
            let runner = Arc::clone(self);
            let stop = stop.clone();
            tokio::spawn(async move {
                runner
                    .work(format!("{}/{n}", runner.config.instance), stop)
                    .await
            });
        }
        if let Some(every) = self.config.sweep_interval {
            let runner = Arc::clone(self);
            tokio::spawn(async move { runner.sweep_every(every, stop).await });
        }
    }

    /// Runs one job type on one table now and returns its run record. `NotFound` when the table does not exist,
    /// `Busy` when a run of that type is in progress.
    pub async fn run_now(
        &self,
        table: &TableArn,
        job_type: MaintenanceJobType,
    ) -> Result<MaintenanceRun, MaintenanceError> {
        let table = self.catalog.table(&TableRef::Arn(table.clone())).await?;
        let owner = format!(
            "{}/run-now-{}",
            self.config.instance,
            Uuid::now_v7().simple()
        );
        // The slot first: a lease must not tick away while the run waits for one.
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|e| MaintenanceError::Unavailable(e.to_string()))?;
        let now = Utc::now();
        let job = self
            .meta
            .claim_job_for(table.id, job_type.as_str(), &owner, now, now + self.lease())
            .await?;
        Ok(self.execute(job, Some(table), true).await)
    }

    /// Recorded runs, newest first: of one table if given, up to `limit` (at most [`MAX_LISTED_RUNS`]).
    pub async fn runs(
        &self,
        table: Option<&TableArn>,
        limit: u32,
    ) -> Result<Vec<MaintenanceRun>, MaintenanceError> {
        let table_id = match table {
            Some(arn) => Some(self.catalog.table(&TableRef::Arn(arn.clone())).await?.id),
            None => None,
        };
        let records = self
            .meta
            .list_runs(table_id, None, limit.clamp(1, MAX_LISTED_RUNS))
            .await?;
        records
            .into_iter()
            .map(MaintenanceRun::from_record)
            .collect()
    }

    fn lease(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.config.lease).unwrap_or(chrono::Duration::seconds(300))
    }

    /// One worker: take a slot, claim, run, repeat; idle for the poll interval when there is nothing to do.
    async fn work(&self, owner: String, mut stop: watch::Receiver<bool>) {
        loop {
            // The slot first: a claimed job's lease must not tick away while the worker waits for one.
            let Ok(slot) = self.slots.acquire().await else {
                return;
            };
            let now = Utc::now();
            let claimed = match self
                .meta
                .claim_next_job(&owner, now, now + self.lease())
                .await
            {
                Ok(claimed) => claimed,
                Err(e) => {
                    tracing::warn!(worker = %owner, error = %e, "could not claim a maintenance job");
                    None
                }
            };
            match claimed {
                Some(job) => {
                    let run = self.execute(job, None, false).await;
                    drop(slot);
                    tracing::info!(
                        worker = %owner, table = %run.table_arn, job = run.job_type.as_str(),
                        outcome = run.outcome.as_str(), files_in = run.files_in, bytes_in = run.bytes_in,
                        duration_ms = run.duration_ms, "maintenance run"
                    );
                }
                None => {
                    drop(slot);
                    tokio::select! {
                        _ = stop.wait_for(|s| *s) => return,
                        _ = tokio::time::sleep(self.config.poll_interval) => {}
                    }
                }
            }
            if *stop.borrow() {
                return;
            }
        }
    }

    /// Runs a claimed job under its lease, records the run and releases the job. A job of a table that no longer
    /// exists (deleted after the job was queued, or while it ran) runs nothing and, unless asked for explicitly,
    /// ends without a record; an explicit run of it is recorded as failed, not found. A disabled type (when not
    /// asked for explicitly) ends without a record too.
    async fn execute(
        &self,
        job: JobRecord,
        table: Option<Table>,
        explicit: bool,
    ) -> MaintenanceRun {
        let started_at = Utc::now();
        let clock = Instant::now();
        let heartbeat = self.heartbeat(&job);
        let job_type: Result<MaintenanceJobType, _> = job.job_type.parse();
        // The table, resolved once: its ARN names the run even if the table is deleted while the job runs.
        let table = match table {
            Some(table) => Ok(Some(table)),
            None => self.catalog.table_by_id(job.table_id).await,
        };
        let table_arn = match &table {
            Ok(Some(table)) => table.arn.to_string(),
            _ => format!("table/{}", job.table_id),
        };
        let result = match (job_type, table) {
            (Err(_), _) => Err(MaintenanceError::Invalid(format!(
                "unknown job type {}",
                job.job_type
            ))),
            (Ok(_), Err(e)) => Err(e.into()),
            (Ok(_), Ok(None)) => Err(MaintenanceError::NotFound(
                "The specified table does not exist: it was deleted after the job was queued"
                    .into(),
            )),
            (Ok(job_type), Ok(Some(table))) => self
                .dispatch(job_type, table, explicit)
                .await
                .map(|o| (job_type, o)),
        };
        // A table deleted while its job ran: whatever the job saw, the table is gone, and so is any claim that
        // it was maintained.
        let result = match result {
            Ok(_) if matches!(self.catalog.table_by_id(job.table_id).await, Ok(None)) => {
                Err(MaintenanceError::NotFound(
                    "The specified table was deleted while the job ran".into(),
                ))
            }
            other => other,
        };
        heartbeat.abort();
        let duration_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        let job_type = job
            .job_type
            .parse()
            .unwrap_or(MaintenanceJobType::IcebergSnapshotManagement);
        let mut run = MaintenanceRun {
            id: Uuid::now_v7(),
            job_id: job.id,
            table_arn,
            job_type,
            trigger: job.trigger.clone(),
            worker: job.lease_owner.clone(),
            outcome: RunOutcome::Successful,
            message: None,
            files_in: 0,
            bytes_in: 0,
            files_out: 0,
            bytes_out: 0,
            details: Default::default(),
            started_at,
            duration_ms,
        };
        let mut retry = None;
        let mut record = true;
        match result {
            Ok((_, Some(outcome))) => {
                run.files_in = outcome.files_in;
                run.bytes_in = outcome.bytes_in;
                run.files_out = outcome.files_out;
                run.bytes_out = outcome.bytes_out;
                run.details = outcome.details;
                run.message = outcome.message;
                if let Some(why) = outcome.backed_off {
                    run.outcome = RunOutcome::Skipped;
                    run.message = Some(why);
                    let backoff = chrono::Duration::from_std(self.config.backoff)
                        .unwrap_or(chrono::Duration::seconds(60));
                    retry = Some(Utc::now() + backoff);
                }
            }
            // Disabled: nothing ran.
            Ok((_, None)) => {
                record = false;
                run.message = Some("disabled".into());
            }
            // The table is gone: nothing to record of it (its runs are not listed any more anyway).
            Err(MaintenanceError::NotFound(m)) if !explicit => {
                record = false;
                run.outcome = RunOutcome::Failed;
                run.message = Some(m);
            }
            Err(e) => {
                run.outcome = RunOutcome::Failed;
                run.message = Some(e.to_string());
            }
        }
        if record {
            if let Err(e) = self.meta.insert_run(&run.to_record(job.table_id)).await {
                tracing::warn!(error = %e, "could not record a maintenance run");
            }
            self.metrics.record(&run);
            let job_type = run.job_type.as_str();
            if run.outcome == RunOutcome::Successful
                && tablebay_catalog::MAINTENANCE_JOBS.contains(&job_type)
            {
                self.catalog.table_counters().maintenance(
                    job.table_id,
                    job_type,
                    run.bytes_in,
                    run.bytes_out,
                );
            }
        }
        match self.meta.finish_job(job.id, &job.lease_owner, retry).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(job = %job.id, "a maintenance job's lease was lost before it finished")
            }
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "could not release a maintenance job")
            }
        }
        run
    }

    /// Renews the job's lease every third of the lease period until aborted.
    fn heartbeat(&self, job: &JobRecord) -> tokio::task::JoinHandle<()> {
        let meta = self.meta.clone();
        let (id, owner, lease) = (job.id, job.lease_owner.clone(), self.lease());
        let every = (self.config.lease / 3).max(Duration::from_millis(100));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match meta.renew_lease(id, &owner, Utc::now() + lease).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(job = %id, "lost a maintenance lease; another worker took the job over");
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(job = %id, error = %e, "could not renew a maintenance lease")
                    }
                }
            }
        })
    }

    /// Runs one job type on a table with its effective settings; `None` when the type is disabled (and the run
    /// was not asked for explicitly).
    async fn dispatch(
        &self,
        job_type: MaintenanceJobType,
        table: Table,
        explicit: bool,
    ) -> Result<Option<JobOutcome>, MaintenanceError> {
        let arn = table.arn.clone();
        let (table, configured) = self
            .catalog
            .table_maintenance(&TableRef::Arn(arn.clone()))
            .await?;
        let enabled = |status: MaintenanceStatus| explicit || status == MaintenanceStatus::Enabled;
        let loaded = match self.catalog.reload_iceberg_table(&table).await {
            Ok(loaded) => loaded,
            // A table created without a schema has nothing to maintain yet.
            Err(ServiceError::NotFound(_))
                if self.catalog.table_by_id(arn.table_id).await?.is_some() =>
            {
                let message = Some("the table has no Iceberg metadata yet".to_string());
                return Ok(Some(JobOutcome {
                    message,
                    ..JobOutcome::default()
                }));
            }
            Err(e) => return Err(e.into()),
        };
        // Maintenance reads, writes and deletes only inside the table's own storage: a table whose metadata
        // names files elsewhere is not maintained at all (and is told why) rather than half-maintained.
        self.catalog
            .table_files(table.id)
            .check_metadata(&loaded.metadata.metadata)
            .map_err(|e| {
                MaintenanceError::Unreadable(format!(
                    "the table is not maintained, and nothing was changed: {e}"
                ))
            })?;
        let properties = loaded.metadata.metadata.properties().clone();
        // A replica receives its source's compaction and expirations as replicated commits (S3 Tables mirrors
        // the source's maintenance); only unreferenced-file removal runs on it.
        if tablebay_catalog::replica_refusal(&properties).is_some()
            && job_type != MaintenanceJobType::IcebergUnreferencedFileRemoval
        {
            return Ok(None);
        }
        match job_type {
            MaintenanceJobType::IcebergSnapshotManagement => {
                if !enabled(configured.snapshot_management.status) {
                    return Ok(None);
                }
                let settings = EffectiveSnapshotManagement::resolve(
                    &configured.snapshot_management.settings,
                    &properties,
                );
                expire(&self.catalog, &self.meta, loaded, &settings)
                    .await
                    .map(Some)
            }
            MaintenanceJobType::IcebergUnreferencedFileRemoval => {
                let bucket = self.catalog.bucket_maintenance(&arn.bucket).await?;
                if !enabled(bucket.unreferenced_file_removal.status) {
                    return Ok(None);
                }
                let settings = EffectiveUnreferencedRemoval::resolve(
                    &bucket.unreferenced_file_removal.settings,
                    self.config.day,
                );
                remove_unreferenced(&self.catalog, &self.meta, loaded, &settings, Utc::now())
                    .await
                    .map(Some)
            }
            MaintenanceJobType::IcebergCompaction => {
                if !enabled(configured.compaction.status) {
                    return Ok(None);
                }
                let last_commit_ms = loaded.metadata.metadata.last_updated_ms();
                let quiet_ms =
                    i64::try_from(self.config.compaction_quiet.as_millis()).unwrap_or(i64::MAX);
                if !explicit && Utc::now().timestamp_millis() - last_commit_ms < quiet_ms {
                    return Ok(Some(JobOutcome {
                        backed_off: Some(format!(
                            "the table was written in the last {} s; compaction waits for a pause",
                            self.config.compaction_quiet.as_secs()
                        )),
                        ..JobOutcome::default()
                    }));
                }
                let settings =
                    EffectiveCompaction::resolve(&configured.compaction.settings, &properties);
                compaction::compact(&self.catalog, loaded, &settings)
                    .await
                    .map(Some)
            }
            MaintenanceJobType::IcebergRecordExpiration => {
                let configured = configured.record_expiration;
                if !enabled(configured.status) {
                    return Ok(None);
                }
                // Rewritten files roll at the size compaction aims at.
                let target = EffectiveCompaction::resolve(&Default::default(), &properties)
                    .target_file_size_bytes;
                record_expiration::expire(
                    &self.catalog,
                    loaded,
                    configured.days,
                    Utc::now(),
                    target,
                )
                .await
                .map(Some)
            }
        }
    }

    /// Queues work for every table now and then until stopped.
    async fn sweep_every(&self, every: Duration, mut stop: watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.sweep().await {
                tracing::warn!(error = %e, "maintenance sweep failed");
            }
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return,
                _ = tokio::time::sleep(every) => {}
            }
        }
    }

    /// Queues snapshot expiration (and compaction, when available) for every table, and unreferenced-file
    /// removal and record expiration for tables whose last run of them is more than a day old (a table with
    /// record expiration disabled runs nothing and records nothing).
    async fn sweep(&self) -> Result<(), MaintenanceError> {
        let day = chrono::Duration::from_std(self.config.day).unwrap_or(chrono::Duration::days(1));
        let mut after = None;
        loop {
            let ids = self.meta.table_ids_after(after, 500).await?;
            let Some(last) = ids.last() else {
                return Ok(());
            };
            after = Some(*last);
            for id in ids {
                let now = Utc::now();
                self.meta
                    .enqueue_job(
                        id,
                        MaintenanceJobType::IcebergSnapshotManagement.as_str(),
                        "sweep",
                        now,
                    )
                    .await?;
                if compaction::AVAILABLE {
                    self.meta
                        .enqueue_job(
                            id,
                            MaintenanceJobType::IcebergCompaction.as_str(),
                            "sweep",
                            now,
                        )
                        .await?;
                }
                // Daily jobs: unreferenced-file removal reads every manifest and counts its periods in days;
                // record expiration's retention is in days.
                for daily in [
                    MaintenanceJobType::IcebergUnreferencedFileRemoval,
                    MaintenanceJobType::IcebergRecordExpiration,
                ] {
                    let last_run = self.meta.last_decided_run(id, daily.as_str()).await?;
                    if last_run.is_none_or(|run| {
                        run.started_at
                            .checked_add_signed(day)
                            .is_none_or(|due| due <= now)
                    }) {
                        self.meta
                            .enqueue_job(id, daily.as_str(), "sweep", now)
                            .await?;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
