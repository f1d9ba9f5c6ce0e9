//! Server access logging: the requests of a bucket whose logging is on become records, buffered in memory and
//! delivered by a background task, in batches, as rows of the bucket's log table (`tablebay_catalog::
//! LoggingTarget` says which; `rows.rs` gives its schema).
//!
//! A request never waits for delivery: recording is a lookup in a map of the buckets with logging on (refreshed
//! from the database every [`REFRESH`]) and a push onto a bounded buffer. Records that cannot be delivered (the
//! target is gone, the database is down) stay buffered and are retried; past [`MAX_BUFFERED`] the oldest are
//! dropped and counted. A clean shutdown delivers what is buffered after the listeners have drained. Delivery is
//! at least once: a commit whose outcome was unknown is retried, so a record may then appear twice (its
//! `request_id` tells).

mod rows;

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tablebay_catalog::{
    AccountId, BucketName, Catalog, LoggingTarget, NewTable, ServiceError, TableRef, Tags,
};
use tablebay_compaction::{CompactionError, append_rows};

pub use rows::LOG_TABLE_COLUMNS;

/// How often the buckets with logging on are re-read: a change of configuration reaches every instance within it.
pub const REFRESH: Duration = Duration::from_secs(2);

/// Records buffered at most; beyond it the oldest are dropped (and counted).
pub const MAX_BUFFERED: usize = 200_000;

/// A buffer this full is delivered without waiting for the interval.
const EARLY_DELIVERY: usize = 20_000;

/// One request of a logged bucket, with the fields of S3's server access log format that apply here.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessRecord {
    /// The bucket's account (`bucket_owner`).
    pub account: AccountId,
    /// The bucket (`bucket`).
    pub bucket: BucketName,
    /// When the request arrived.
    pub event_time: DateTime<Utc>,
    /// The client's address.
    pub remote_ip: Option<IpAddr>,
    /// The authenticated principal's ARN.
    pub requester: Option<String>,
    /// The request id the answer carried.
    pub request_id: String,
    /// The surface: `control_plane`, `iceberg`, `s3`, `admin`, `console`, ….
    pub surface: &'static str,
    /// The operation (`GetTable`, `loadTable`, `PutObject`, …).
    pub operation: &'static str,
    /// What the request was about within the bucket: an object key, `namespace/table` or a namespace.
    pub key: Option<String>,
    /// `METHOD /path?query HTTP/x.y`.
    pub request_uri: String,
    /// The answer's status.
    pub http_status: u16,
    /// The answer's error code.
    pub error_code: Option<String>,
    /// The answer's body size, when it declared one.
    pub bytes_sent: Option<u64>,
    /// The size of the object written or read, when there is one.
    pub object_size: Option<u64>,
    /// Time from the request's arrival to its answer.
    pub total_time: Duration,
    /// The `Referer` header.
    pub referer: Option<String>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
    /// `SigV4`, `OSS4`, … (`-` when unsigned).
    pub signature_version: Option<&'static str>,
    /// `AuthHeader`, `QueryString`, `Bearer` or `Cookie`.
    pub authentication_type: Option<&'static str>,
    /// The `Host` header.
    pub host_header: Option<String>,
}

/// The access log of this instance: which buckets are logged, and the records not delivered yet.
#[derive(Debug, Default)]
pub struct AccessLog {
    /// `account/bucket` → where its records go; replaced whole on each refresh.
    targets: RwLock<HashMap<String, Arc<LoggingTarget>>>,
    /// Whether any bucket is logged (the request path's first, lock-free check).
    any: AtomicBool,
    buffered: Mutex<VecDeque<AccessRecord>>,
    delivered: AtomicU64,
    dropped: AtomicU64,
    failed_deliveries: AtomicU64,
    /// Wakes the delivery task early when the buffer fills.
    full: tokio::sync::Notify,
}

/// A log table: its bucket (`account/bucket`), namespace and name.
type TableKey = (String, String, String);

fn target_key(account: &AccountId, bucket: &BucketName) -> String {
    format!("{account}/{bucket}")
}

impl AccessLog {
    /// Whether any bucket's logging is on (cheap: a request builds a record only then).
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Whether the bucket's requests are logged.
    pub fn is_logged(&self, account: &AccountId, bucket: &BucketName) -> bool {
        self.any()
            && self
                .targets
                .read()
                .is_ok_and(|t| t.contains_key(&target_key(account, bucket)))
    }

    /// Buffers a record of a logged bucket (one of another bucket is ignored). Never waits.
    pub fn record(&self, record: AccessRecord) {
        if !self.is_logged(&record.account, &record.bucket) {
            return;
        }
        let Ok(mut buffered) = self.buffered.lock() else {
            return;
        };
        if buffered.len() >= MAX_BUFFERED {
            buffered.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        buffered.push_back(record);
        if buffered.len() == EARLY_DELIVERY {
            self.full.notify_one();
        }
    }

    /// Re-reads the buckets whose logging is on.
    pub async fn refresh(&self, catalog: &Catalog) -> Result<(), ServiceError> {
        let targets: HashMap<String, Arc<LoggingTarget>> = catalog
            .logging_targets()
            .await?
            .into_iter()
            .map(|t| {
                (
                    target_key(&t.source.arn.account, &t.source.arn.name),
                    Arc::new(t),
                )
            })
            .collect();
        self.any.store(!targets.is_empty(), Ordering::Relaxed);
        if let Ok(mut current) = self.targets.write() {
            *current = targets;
        }
        Ok(())
    }

    /// Delivers every buffered record: one append per log table. Records of a table whose delivery failed go
    /// back to the buffer (ahead of newer ones); records of a bucket whose logging was turned off are dropped.
    /// Returns how many were delivered.
    pub async fn deliver(&self, catalog: &Catalog) -> usize {
        let records = match self.buffered.lock() {
            Ok(mut buffered) => std::mem::take(&mut *buffered),
            Err(_) => return 0,
        };
        if records.is_empty() {
            return 0;
        }
        let targets = self.targets.read().map(|t| t.clone()).unwrap_or_default();
        let mut by_table: HashMap<TableKey, (Arc<LoggingTarget>, Vec<AccessRecord>)> =
            HashMap::new();
        for record in records {
            let Some(target) = targets.get(&target_key(&record.account, &record.bucket)) else {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            let table = (
                target_key(&target.bucket.account, &target.bucket.name),
                target.namespace.to_string(),
                target.table.to_string(),
            );
            by_table
                .entry(table)
                .or_insert_with(|| (target.clone(), Vec::new()))
                .1
                .push(record);
        }
        let mut delivered = 0;
        let mut failed = Vec::new();
        for (target, records) in by_table.into_values() {
            let count = records.len();
            match deliver_to(catalog, &target, &records).await {
                Ok(()) => delivered += count,
                Err(e) => {
                    self.failed_deliveries.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        bucket = %target.source.arn.name, target_bucket = %target.bucket.name,
                        table = %format!("{}.{}", target.namespace, target.table), records = count, error = %e,
                        "could not deliver access log records; they stay buffered and are retried"
                    );
                    failed.extend(records);
                }
            }
        }
        self.delivered
            .fetch_add(delivered as u64, Ordering::Relaxed);
        if !failed.is_empty()
            && let Ok(mut buffered) = self.buffered.lock()
        {
            let mut kept: VecDeque<AccessRecord> = failed.into();
            kept.append(&mut buffered);
            let excess = kept.len().saturating_sub(MAX_BUFFERED);
            kept.drain(..excess);
            self.dropped.fetch_add(excess as u64, Ordering::Relaxed);
            *buffered = kept;
        }
        delivered
    }

    /// Refreshes the logged buckets and delivers every `interval` (earlier when the buffer fills) until `stop`
    /// resolves. The caller delivers once more after the listeners drained.
    pub async fn run(
        self: Arc<Self>,
        catalog: Catalog,
        interval: Duration,
        stop: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(stop);
        let mut last_delivery = Instant::now();
        loop {
            if let Err(e) = self.refresh(&catalog).await {
                tracing::warn!(error = %e, "could not read the access logging configurations");
            }
            let due = last_delivery.elapsed() >= interval
                || self
                    .buffered
                    .lock()
                    .is_ok_and(|b| b.len() >= EARLY_DELIVERY);
            if due {
                self.deliver(&catalog).await;
                last_delivery = Instant::now();
            }
            let tick = interval.min(REFRESH);
            tokio::select! {
                () = &mut stop => return,
                () = tokio::time::sleep(tick) => {}
                () = self.full.notified() => {}
            }
        }
    }

    /// Prometheus text of the delivery counters.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let buffered = self.buffered.lock().map(|b| b.len()).unwrap_or(0);
        let _ = writeln!(
            out,
            "# HELP tablebay_access_log_records_total Access log records by outcome: delivered to their log table, or dropped (the buffer was full, or the bucket's logging was turned off before delivery).\n\
             # TYPE tablebay_access_log_records_total counter\n\
             tablebay_access_log_records_total{{outcome=\"delivered\"}} {}\n\
             tablebay_access_log_records_total{{outcome=\"dropped\"}} {}\n\
             # HELP tablebay_access_log_records_buffered Access log records waiting for delivery.\n\
             # TYPE tablebay_access_log_records_buffered gauge\n\
             tablebay_access_log_records_buffered {buffered}\n\
             # HELP tablebay_access_log_failed_deliveries_total Deliveries to a log table that failed (their records were kept).\n\
             # TYPE tablebay_access_log_failed_deliveries_total counter\n\
             tablebay_access_log_failed_deliveries_total {}",
            self.delivered.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
            self.failed_deliveries.load(Ordering::Relaxed),
        );
        out
    }
}

/// Appends records to their log table, creating its namespace and table first when they are missing.
async fn deliver_to(
    catalog: &Catalog,
    target: &LoggingTarget,
    records: &[AccessRecord],
) -> Result<(), CompactionError> {
    let table_ref = TableRef::Name {
        bucket: target.bucket.clone(),
        namespace: target.namespace.clone(),
        name: target.table.clone(),
    };
    let table = match catalog.table(&table_ref).await {
        Ok(table) if table.metadata_location.is_some() => table,
        Ok(_) => {
            return Err(CompactionError::Invalid(
                "the log table exists without Iceberg metadata".into(),
            ));
        }
        Err(ServiceError::NotFound(_)) => create_log_table(catalog, target, &table_ref).await?,
        Err(e) => return Err(e.into()),
    };
    let loaded = catalog.reload_iceberg_table(&table).await?;
    let batches = rows::partition_rows(
        &loaded.metadata.metadata,
        target.config.partition_date_source,
        records,
        Utc::now(),
    )?;
    append_rows(catalog, &table, batches).await?;
    Ok(())
}

async fn create_log_table(
    catalog: &Catalog,
    target: &LoggingTarget,
    table_ref: &TableRef,
) -> Result<tablebay_catalog::Table, CompactionError> {
    let owner = &target.bucket.account;
    match catalog
        .create_namespace(
            &target.bucket,
            target.namespace.clone(),
            Default::default(),
            owner,
        )
        .await
    {
        Ok(_) | Err(ServiceError::AlreadyExists(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let new = NewTable {
        name: target.table.clone(),
        format: "ICEBERG".into(),
        definition: Some(rows::definition(target.config.partition_date_source)?),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    match catalog
        .create_table(&target.bucket, &target.namespace, new, owner)
        .await
    {
        Ok(table) => Ok(table),
        // Another instance created it meanwhile.
        Err(ServiceError::AlreadyExists(_)) => Ok(catalog.table(table_ref).await?),
        Err(e) => Err(e.into()),
    }
}
