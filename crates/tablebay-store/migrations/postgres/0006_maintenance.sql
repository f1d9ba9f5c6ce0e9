-- Tablebay metadata, version 6: automatic table maintenance.
-- `maintenance_jobs` holds the work queue: at most one row per (table, job type), pending or running; a worker
-- claims a row by setting its lease, renews the lease while it works, and deletes the row when done. A row whose
-- lease lapsed (its worker died) is claimable again. `maintenance_runs` records every run (what the admin
-- endpoint lists, what GetTableMaintenanceJobStatus reports). `maintenance_noncurrent` remembers when
-- unreferenced-file removal first found an object unreferenced, so it is deleted `nonCurrentDays` later.
CREATE TABLE maintenance_jobs (
    id               TEXT    NOT NULL PRIMARY KEY,
    table_id         TEXT    NOT NULL,
    job_type         TEXT    NOT NULL,
    trigger_reason   TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    created_at_ms    BIGINT  NOT NULL,
    lease_owner      TEXT,
    lease_expires_ms BIGINT,
    attempts         INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX maintenance_jobs_one_per_type ON maintenance_jobs (table_id, job_type);
CREATE INDEX maintenance_jobs_claim_idx ON maintenance_jobs (state, created_at_ms);

CREATE TABLE maintenance_runs (
    id             TEXT    NOT NULL PRIMARY KEY,
    job_id         TEXT    NOT NULL,
    table_id       TEXT    NOT NULL,
    table_arn      TEXT    NOT NULL,
    job_type       TEXT    NOT NULL,
    trigger_reason TEXT    NOT NULL,
    worker         TEXT    NOT NULL,
    outcome        TEXT    NOT NULL,
    message        TEXT,
    files_in       BIGINT  NOT NULL,
    bytes_in       BIGINT  NOT NULL,
    files_out      BIGINT  NOT NULL,
    bytes_out      BIGINT  NOT NULL,
    details        TEXT    NOT NULL,
    started_at_ms  BIGINT  NOT NULL,
    duration_ms    BIGINT  NOT NULL
);
CREATE INDEX maintenance_runs_table_idx ON maintenance_runs (table_id, job_type, started_at_ms);
CREATE INDEX maintenance_runs_time_idx ON maintenance_runs (started_at_ms);

CREATE TABLE maintenance_noncurrent (
    table_id           TEXT   NOT NULL,
    key                TEXT   NOT NULL,
    object_modified_ms BIGINT NOT NULL,
    since_ms           BIGINT NOT NULL,
    PRIMARY KEY (table_id, key)
);
