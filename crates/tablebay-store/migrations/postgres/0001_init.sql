-- Tablebay metadata, version 1 (PostgreSQL): table buckets, namespaces, tables and per-resource attributes.
-- Ids are UUID strings, timestamps unix milliseconds, structured values JSON text. Names use COLLATE "C" so that
-- ordering and the `name > $after` pagination are bytewise whatever the cluster's locale, as on SQLite.

CREATE TABLE table_buckets (
    id            TEXT                NOT NULL PRIMARY KEY,
    account_id    TEXT                NOT NULL,
    name          TEXT COLLATE "C"    NOT NULL,
    created_at_ms BIGINT              NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE namespaces (
    id            TEXT                NOT NULL PRIMARY KEY,
    bucket_id     TEXT                NOT NULL REFERENCES table_buckets (id),
    name          TEXT COLLATE "C"    NOT NULL,
    created_at_ms BIGINT              NOT NULL,
    created_by    TEXT                NOT NULL,
    properties    TEXT                NOT NULL DEFAULT '{}',
    UNIQUE (bucket_id, name)
);

CREATE TABLE tables (
    id                 TEXT             NOT NULL PRIMARY KEY,
    bucket_id          TEXT             NOT NULL REFERENCES table_buckets (id),
    namespace_id       TEXT             NOT NULL REFERENCES namespaces (id),
    name               TEXT COLLATE "C" NOT NULL,
    format             TEXT             NOT NULL,
    version_token      TEXT             NOT NULL,
    metadata_location  TEXT,
    warehouse_location TEXT             NOT NULL,
    created_at_ms      BIGINT           NOT NULL,
    created_by         TEXT             NOT NULL,
    modified_at_ms     BIGINT           NOT NULL,
    modified_by        TEXT             NOT NULL,
    UNIQUE (namespace_id, name)
);

-- Bucket-wide table listings; also serves the foreign key from tables to table_buckets.
CREATE INDEX tables_bucket_idx ON tables (bucket_id, namespace_id, name);

-- No foreign key: resource_id is a bucket or a table id. Deleting either removes its rows here.
CREATE TABLE resource_attributes (
    resource_id TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (resource_id, key)
);
