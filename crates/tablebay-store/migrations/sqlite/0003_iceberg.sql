-- Tablebay metadata, version 3 (SQLite): what the Iceberg REST catalog adds — views, and the responses of
-- mutations that carried an `Idempotency-Key` header.

-- An Iceberg view: a pointer to its current metadata file, swapped with a version token like a table's.
-- The foreign key to namespaces keeps a namespace with views from being deleted (NamespaceNotEmpty).
CREATE TABLE iceberg_views (
    id                TEXT    NOT NULL PRIMARY KEY,
    bucket_id         TEXT    NOT NULL REFERENCES table_buckets (id),
    namespace_id      TEXT    NOT NULL REFERENCES namespaces (id),
    name              TEXT    NOT NULL,
    version_token     TEXT    NOT NULL,
    metadata_location TEXT    NOT NULL,
    created_at_ms     INTEGER NOT NULL,
    created_by        TEXT    NOT NULL,
    modified_at_ms    INTEGER NOT NULL,
    modified_by       TEXT    NOT NULL,
    UNIQUE (namespace_id, name)
) STRICT;

-- The first answer to a mutation with an `Idempotency-Key`, replayed to retries until it expires.
-- `scope` is the caller's account, so keys of different accounts never collide.
CREATE TABLE idempotency_keys (
    scope         TEXT    NOT NULL,
    key           TEXT    NOT NULL,
    fingerprint   TEXT    NOT NULL,
    status        INTEGER NOT NULL,
    body          TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT;

CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at_ms);
