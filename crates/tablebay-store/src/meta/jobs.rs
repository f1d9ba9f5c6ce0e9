//! Maintenance jobs, their leases, run records and noncurrent-file marks (migration 0006).
//!
//! A job row exists while a (table, job type) has work pending or running, never more than one (a unique
//! index). Claiming sets a lease: on Postgres the candidate row is picked with `FOR UPDATE SKIP LOCKED`, so
//! concurrent claimers of several instances never take the same row; on SQLite the claim runs inside the
//! single-writer transaction (`BEGIN IMMEDIATE`). A row whose lease lapsed is claimable again: its worker died.
//! Renewing and finishing are conditional on the lease owner, so a worker that lost its lease cannot finish (or
//! extend) a job another worker took over. Times are parameters (unix milliseconds via `DateTime`), which keeps
//! the lease rules testable without sleeping.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::codec;
use super::objects::to_i64;
use super::{Backend, MetaStore};
use crate::StoreError;

/// The job type of table replication: its rows only lease a source table to one replication worker at a time.
pub const REPLICATION_JOB_TYPE: &str = "replication";

/// A claimed job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The job id.
    pub id: Uuid,
    /// The table it maintains.
    pub table_id: Uuid,
    /// The job type's name (`icebergSnapshotManagement`, …).
    pub job_type: String,
    /// Why it was queued (`commit`, `sweep`, `manual`).
    pub trigger: String,
    /// Who holds the lease.
    pub lease_owner: String,
    /// When the lease lapses unless renewed.
    pub lease_expires: DateTime<Utc>,
    /// How many times it was claimed (more than one: a worker died or gave it back).
    pub attempts: i64,
}

/// One finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRecord {
    /// The run id.
    pub id: Uuid,
    /// The job it ran.
    pub job_id: Uuid,
    /// The table.
    pub table_id: Uuid,
    /// The table's ARN as it was when the run started.
    pub table_arn: String,
    /// The job type's name.
    pub job_type: String,
    /// Why it ran.
    pub trigger: String,
    /// Which worker ran it.
    pub worker: String,
    /// `Successful`, `Failed` or `Skipped` (backed off; the job stays queued).
    pub outcome: String,
    /// Failure or skip reason, or a summary.
    pub message: Option<String>,
    /// Files the run took in (compaction: rewritten; removal jobs: deleted).
    pub files_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Files the run wrote.
    pub files_out: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Job-specific counters as a JSON object.
    pub details: String,
    /// Start time.
    pub started_at: DateTime<Utc>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// Every column of `maintenance_runs`, in `RunRecord` order.
macro_rules! run_columns {
    () => {
        "id, job_id, table_id, table_arn, job_type, trigger_reason, worker, outcome, message, files_in, bytes_in, \
         files_out, bytes_out, details, started_at_ms, duration_ms"
    };
}

impl MetaStore {
    /// Queues a job of `job_type` for the table unless one is pending or running; returns whether it queued one.
    pub async fn enqueue_job(
        &self,
        table_id: Uuid,
        job_type: &str,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO maintenance_jobs (id, table_id, job_type, trigger_reason, state, created_at_ms) \
             VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (table_id, job_type) DO NOTHING",
        )
        .bind(Uuid::now_v7().to_string())
        .bind(table_id.to_string())
        .bind(job_type)
        .bind(trigger)
        .bind(codec::millis(now))
        .execute(&self.pool)
        .await?;
        Ok(inserted.rows_affected() > 0)
    }

    /// Claims the oldest job that is pending or whose lease lapsed before `now`, leasing it to `owner` until
    /// `lease_until`; `None` when there is none. Replication jobs ([`REPLICATION_JOB_TYPE`]) are leased by the
    /// replication workers alone (with [`MetaStore::claim_job_for`]), never here.
    pub async fn claim_next_job(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<JobRecord>, StoreError> {
        // Postgres: SKIP LOCKED lets concurrent claimers pass over each other's candidate; the outer UPDATE
        // re-checks nothing else because the locked row cannot change under it. SQLite has one writer anyway.
        let statement = match self.backend {
            Backend::Postgres => concat!(
                "UPDATE maintenance_jobs SET state = 'running', lease_owner = $1, lease_expires_ms = $2, \
                 attempts = attempts + 1 WHERE id = (SELECT id FROM maintenance_jobs \
                 WHERE (state = 'pending' OR lease_expires_ms < $3) AND job_type <> 'replication' ORDER BY created_at_ms LIMIT 1 \
                 FOR UPDATE SKIP LOCKED) RETURNING ",
                "id, table_id, job_type, trigger_reason, lease_owner, lease_expires_ms, attempts"
            ),
            Backend::Sqlite => concat!(
                "UPDATE maintenance_jobs SET state = 'running', lease_owner = $1, lease_expires_ms = $2, \
                 attempts = attempts + 1 WHERE id = (SELECT id FROM maintenance_jobs \
                 WHERE (state = 'pending' OR lease_expires_ms < $3) AND job_type <> 'replication' ORDER BY created_at_ms LIMIT 1) RETURNING ",
                "id, table_id, job_type, trigger_reason, lease_owner, lease_expires_ms, attempts"
            ),
        };
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(statement)
            .bind(owner)
            .bind(codec::millis(lease_until))
            .bind(codec::millis(now))
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.as_ref().map(job_from_row).transpose()
    }

    /// Claims the job of `job_type` for one table now (run-now): queues it if absent, then leases it unless
    /// another worker holds a live lease on it (`Conflict`).
    pub async fn claim_job_for(
        &self,
        table_id: Uuid,
        job_type: &str,
        owner: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<JobRecord, StoreError> {
        let select = match self.backend {
            Backend::Postgres => {
                "SELECT state, lease_expires_ms FROM maintenance_jobs WHERE table_id = $1 AND job_type = $2 FOR UPDATE"
            }
            Backend::Sqlite => {
                "SELECT state, lease_expires_ms FROM maintenance_jobs WHERE table_id = $1 AND job_type = $2"
            }
        };
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO maintenance_jobs (id, table_id, job_type, trigger_reason, state, created_at_ms) \
             VALUES ($1, $2, $3, 'manual', 'pending', $4) ON CONFLICT (table_id, job_type) DO NOTHING",
        )
        .bind(Uuid::now_v7().to_string())
        .bind(table_id.to_string())
        .bind(job_type)
        .bind(codec::millis(now))
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(select)
            .bind(table_id.to_string())
            .bind(job_type)
            .fetch_one(&mut *tx)
            .await?;
        let state: String = row.try_get("state")?;
        let expires: Option<i64> = row.try_get("lease_expires_ms")?;
        if state == "running" && expires.is_some_and(|ms| ms >= codec::millis(now)) {
            return Err(StoreError::Conflict(format!(
                "a {job_type} job of this table is running"
            )));
        }
        let row = sqlx::query(
            "UPDATE maintenance_jobs SET state = 'running', lease_owner = $1, lease_expires_ms = $2, \
             attempts = attempts + 1, trigger_reason = 'manual' WHERE table_id = $3 AND job_type = $4 RETURNING \
             id, table_id, job_type, trigger_reason, lease_owner, lease_expires_ms, attempts",
        )
        .bind(owner)
        .bind(codec::millis(lease_until))
        .bind(table_id.to_string())
        .bind(job_type)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        job_from_row(&row)
    }

    /// Extends the lease of a job `owner` still holds; `false` when it lost the lease (another worker took over).
    pub async fn renew_lease(
        &self,
        job_id: Uuid,
        owner: &str,
        lease_until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query(
            "UPDATE maintenance_jobs SET lease_expires_ms = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'running'",
        )
        .bind(codec::millis(lease_until))
        .bind(job_id.to_string())
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(updated.rows_affected() > 0)
    }

    /// Ends a job `owner` holds: deletes it (done), or with `retry_at` puts it back as pending to be claimed
    /// again after that time (a backed-off run). `false` when `owner` no longer held it.
    pub async fn finish_job(
        &self,
        job_id: Uuid,
        owner: &str,
        retry_at: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let done = match retry_at {
            None => {
                sqlx::query("DELETE FROM maintenance_jobs WHERE id = $1 AND lease_owner = $2")
                    .bind(job_id.to_string())
                    .bind(owner)
                    .execute(&self.pool)
                    .await?
            }
            // Waiting: no owner, and the lapse time is the not-before time, so `claim_next_job` takes it again
            // exactly like a job whose worker died, once `at` has passed.
            Some(at) => {
                sqlx::query(
                    "UPDATE maintenance_jobs SET state = 'waiting', lease_owner = NULL, lease_expires_ms = $1 \
                     WHERE id = $2 AND lease_owner = $3",
                )
                .bind(codec::millis(at))
                .bind(job_id.to_string())
                .bind(owner)
                .execute(&self.pool)
                .await?
            }
        };
        Ok(done.rows_affected() > 0)
    }

    /// Records a finished run.
    pub async fn insert_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        sqlx::query(concat!(
            "INSERT INTO maintenance_runs (",
            run_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
        ))
        .bind(run.id.to_string())
        .bind(run.job_id.to_string())
        .bind(run.table_id.to_string())
        .bind(run.table_arn.as_str())
        .bind(run.job_type.as_str())
        .bind(run.trigger.as_str())
        .bind(run.worker.as_str())
        .bind(run.outcome.as_str())
        .bind(run.message.as_deref())
        .bind(to_i64(run.files_in)?)
        .bind(to_i64(run.bytes_in)?)
        .bind(to_i64(run.files_out)?)
        .bind(to_i64(run.bytes_out)?)
        .bind(run.details.as_str())
        .bind(codec::millis(run.started_at))
        .bind(to_i64(run.duration_ms)?)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Up to `limit` runs, newest first, of one table if given, started before `before` if given.
    pub async fn list_runs(
        &self,
        table_id: Option<Uuid>,
        before: Option<DateTime<Utc>>,
        limit: u32,
    ) -> Result<Vec<RunRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM maintenance_runs WHERE ($1 IS NULL OR table_id = $1) AND ($2 IS NULL OR started_at_ms < $2) \
             ORDER BY started_at_ms DESC, id DESC LIMIT $3"
        ))
        .bind(table_id.map(|id| id.to_string()))
        .bind(before.map(codec::millis))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(run_from_row)
        .collect()
    }

    /// The latest run of `job_type` on the table with outcome `Successful` or `Failed` (a skipped run does not
    /// change a job's status).
    pub async fn last_decided_run(
        &self,
        table_id: Uuid,
        job_type: &str,
    ) -> Result<Option<RunRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM maintenance_runs WHERE table_id = $1 AND job_type = $2 AND outcome IN ('Successful', 'Failed') \
             ORDER BY started_at_ms DESC, id DESC LIMIT 1"
        ))
        .bind(table_id.to_string())
        .bind(job_type)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(run_from_row)
        .transpose()
    }

    /// Ids of up to `limit` tables after `after`, in id order (the periodic sweep walks every table).
    pub async fn table_ids_after(
        &self,
        after: Option<Uuid>,
        limit: u32,
    ) -> Result<Vec<Uuid>, StoreError> {
        sqlx::query("SELECT id FROM tables WHERE ($1 IS NULL OR id > $1) ORDER BY id LIMIT $2")
            .bind(after.map(|id| id.to_string()))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| codec::uuid(row, "id"))
            .collect()
    }

    /// The noncurrent marks of a table: key → (the object's modification time when marked, when marked).
    pub async fn noncurrent_marks(
        &self,
        table_id: Uuid,
    ) -> Result<std::collections::HashMap<String, (DateTime<Utc>, DateTime<Utc>)>, StoreError> {
        sqlx::query("SELECT key, object_modified_ms, since_ms FROM maintenance_noncurrent WHERE table_id = $1")
            .bind(table_id.to_string())
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| Ok((codec::text(row, "key")?, (codec::time(row, "object_modified_ms")?, codec::time(row, "since_ms")?))))
            .collect()
    }

    /// Marks objects noncurrent as of `since` (keeping an existing mark of the same object version).
    pub async fn mark_noncurrent(
        &self,
        table_id: Uuid,
        objects: &[(String, DateTime<Utc>)],
        since: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for (key, modified) in objects {
            sqlx::query(
                "INSERT INTO maintenance_noncurrent (table_id, key, object_modified_ms, since_ms) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (table_id, key) DO UPDATE SET object_modified_ms = $3, since_ms = $4 \
                 WHERE maintenance_noncurrent.object_modified_ms <> $3",
            )
            .bind(table_id.to_string())
            .bind(key.as_str())
            .bind(codec::millis(*modified))
            .bind(codec::millis(since))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Forgets noncurrent marks (the object is referenced again, changed, or deleted).
    pub async fn clear_noncurrent(
        &self,
        table_id: Uuid,
        keys: &[String],
    ) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        for key in keys {
            sqlx::query("DELETE FROM maintenance_noncurrent WHERE table_id = $1 AND key = $2")
                .bind(table_id.to_string())
                .bind(key.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

fn job_from_row(row: &AnyRow) -> Result<JobRecord, StoreError> {
    Ok(JobRecord {
        id: codec::uuid(row, "id")?,
        table_id: codec::uuid(row, "table_id")?,
        job_type: codec::text(row, "job_type")?,
        trigger: codec::text(row, "trigger_reason")?,
        lease_owner: codec::text(row, "lease_owner")?,
        lease_expires: codec::time(row, "lease_expires_ms")?,
        attempts: row
            .try_get::<i64, _>("attempts")
            .or_else(|_| row.try_get::<i32, _>("attempts").map(i64::from))?,
    })
}

fn count(row: &AnyRow, column: &str) -> Result<u64, StoreError> {
    let n: i64 = row.try_get(column)?;
    u64::try_from(n).map_err(|_| StoreError::Corrupt(format!("{column} {n}")))
}

fn run_from_row(row: &AnyRow) -> Result<RunRecord, StoreError> {
    Ok(RunRecord {
        id: codec::uuid(row, "id")?,
        job_id: codec::uuid(row, "job_id")?,
        table_id: codec::uuid(row, "table_id")?,
        table_arn: codec::text(row, "table_arn")?,
        job_type: codec::text(row, "job_type")?,
        trigger: codec::text(row, "trigger_reason")?,
        worker: codec::text(row, "worker")?,
        outcome: codec::text(row, "outcome")?,
        message: row.try_get("message")?,
        files_in: count(row, "files_in")?,
        bytes_in: count(row, "bytes_in")?,
        files_out: count(row, "files_out")?,
        bytes_out: count(row, "bytes_out")?,
        details: codec::text(row, "details")?,
        started_at: codec::time(row, "started_at_ms")?,
        duration_ms: count(row, "duration_ms")?,
    })
}
