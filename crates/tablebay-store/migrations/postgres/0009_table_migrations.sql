-- Tablebay metadata, version 9 (PostgreSQL): table migrations (StartTableMigration, SyncTableMigration).
-- One row per start or sync run. `table_id` is the destination table's id, fixed when the start is accepted (its
-- row appears in `tables` only when the first run succeeds). `document` is the JSON of everything else the
-- operations report: the request as given (secrets sealed), statistics, failure and report objects.

CREATE TABLE table_migrations (
    id                    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    bucket_id             TEXT             NOT NULL,
    namespace             TEXT             NOT NULL,
    name                  TEXT             NOT NULL,
    table_id              TEXT             NOT NULL,
    kind                  TEXT             NOT NULL,
    state                 TEXT             NOT NULL,
    created_at_ms         BIGINT           NOT NULL,
    state_updated_at_ms   BIGINT           NOT NULL,
    document              TEXT             NOT NULL
);

CREATE INDEX table_migrations_bucket_idx ON table_migrations (bucket_id, id);
CREATE INDEX table_migrations_table_idx ON table_migrations (table_id, created_at_ms);
