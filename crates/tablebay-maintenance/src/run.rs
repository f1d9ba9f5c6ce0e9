//! A maintenance run: what one job did, as recorded in the store, listed by the admin endpoint and counted in
//! the metrics.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tablebay_catalog::MaintenanceJobType;
use tablebay_store::meta::RunRecord;
use uuid::Uuid;

use crate::MaintenanceError;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RunOutcome {
    /// It did its work (possibly nothing was due).
    Successful,
    /// It failed; the message says why. Nothing was half-done: removals happen only after a decision is final.
    Failed,
    /// It backed off (a writer committed meanwhile); the job stays queued and runs again later.
    Skipped,
}

impl RunOutcome {
    /// The stored and reported spelling (the first two are `GetTableMaintenanceJobStatus` values).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Successful => "Successful",
            Self::Failed => "Failed",
            Self::Skipped => "Skipped",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "Successful" => Self::Successful,
            "Skipped" => Self::Skipped,
            _ => Self::Failed,
        }
    }
}

/// One recorded run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaintenanceRun {
    /// The run id.
    pub id: Uuid,
    /// The job it ran.
    pub job_id: Uuid,
    /// The table's ARN.
    pub table_arn: String,
    /// The job type.
    pub job_type: MaintenanceJobType,
    /// Why it ran: `commit`, `sweep` or `manual`.
    pub trigger: String,
    /// The worker that ran it (`<instance>/<worker>`).
    pub worker: String,
    /// How it ended.
    pub outcome: RunOutcome,
    /// Why it failed or backed off, or a summary.
    pub message: Option<String>,
    /// Files taken in: rewritten by compaction, deleted by expiration and unreferenced-file removal.
    pub files_in: u64,
    /// Bytes of those files.
    pub bytes_in: u64,
    /// Files written (compaction output).
    pub files_out: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Job-specific counters (`snapshotsExpired`, `markedNoncurrent`, `uploadsAborted`, …).
    pub details: BTreeMap<String, u64>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
}

impl MaintenanceRun {
    pub(crate) fn to_record(&self, table_id: Uuid) -> RunRecord {
        RunRecord {
            id: self.id,
            job_id: self.job_id,
            table_id,
            table_arn: self.table_arn.clone(),
            job_type: self.job_type.as_str().to_string(),
            trigger: self.trigger.clone(),
            worker: self.worker.clone(),
            outcome: self.outcome.as_str().to_string(),
            message: self.message.clone(),
            files_in: self.files_in,
            bytes_in: self.bytes_in,
            files_out: self.files_out,
            bytes_out: self.bytes_out,
            details: serde_json::to_string(&self.details).unwrap_or_else(|_| "{}".to_string()),
            started_at: self.started_at,
            duration_ms: self.duration_ms,
        }
    }

    pub(crate) fn from_record(record: RunRecord) -> Result<Self, MaintenanceError> {
        let job_type = record.job_type.parse().map_err(|_| {
            MaintenanceError::Unreadable(format!("stored run has job type {}", record.job_type))
        })?;
        Ok(Self {
            id: record.id,
            job_id: record.job_id,
            table_arn: record.table_arn,
            job_type,
            trigger: record.trigger,
            worker: record.worker,
            outcome: RunOutcome::parse(&record.outcome),
            message: record.message,
            files_in: record.files_in,
            bytes_in: record.bytes_in,
            files_out: record.files_out,
            bytes_out: record.bytes_out,
            details: serde_json::from_str(&record.details).unwrap_or_default(),
            started_at: record.started_at,
            duration_ms: record.duration_ms,
        })
    }
}

/// What a job's work produced, before it becomes a run record.
#[derive(Debug, Default)]
pub(crate) struct JobOutcome {
    pub backed_off: Option<String>,
    pub message: Option<String>,
    pub files_in: u64,
    pub bytes_in: u64,
    pub files_out: u64,
    pub bytes_out: u64,
    pub details: BTreeMap<String, u64>,
}

impl JobOutcome {
    pub fn detail(&mut self, name: &str, value: u64) {
        self.details.insert(name.to_string(), value);
    }
}
