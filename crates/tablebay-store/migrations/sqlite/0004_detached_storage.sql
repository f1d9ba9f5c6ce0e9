-- Tablebay metadata, version 4: storage of tables that have no table row, yet must stay reachable on the data
-- plane by the owning account: staged creates (engines write data files before the create commits) and tables
-- dropped without purge (engines such as Spark purge client-side after a plain drop, reading the old metadata).
-- A row goes away when the table is committed or purged; unreferenced-file removal collects what is left.
CREATE TABLE detached_storage (
    table_id     TEXT   NOT NULL PRIMARY KEY,
    account_id   TEXT   NOT NULL,
    bucket_name  TEXT   NOT NULL,
    reason       TEXT   NOT NULL,
    since_ms     BIGINT NOT NULL
);
