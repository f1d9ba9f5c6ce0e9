-- Tablebay metadata, version 2 (SQLite): the objects of the S3 data plane and its multipart uploads.
-- An object is visible exactly when its row exists; its bytes are the blob segments listed in `blobs` (one for a
-- single PUT, one per part for a completed multipart upload), written before the row commits. Keys compare
-- bytewise (BINARY collation), like the COLLATE "C" columns on Postgres, so listings agree on both backends.
-- No foreign key to `tables`: a dropped table's rows and blobs are left to unreferenced-file removal.

CREATE TABLE objects (
    table_id           TEXT    NOT NULL,
    key                TEXT    NOT NULL,
    size               INTEGER NOT NULL,
    etag               TEXT    NOT NULL,
    content_type       TEXT,
    headers            TEXT    NOT NULL DEFAULT '{}',
    user_metadata      TEXT    NOT NULL DEFAULT '{}',
    checksum_algorithm TEXT,
    checksum_value     TEXT,
    checksum_type      TEXT,
    parts_count        INTEGER,
    blobs              TEXT    NOT NULL,
    created_at_ms      INTEGER NOT NULL,
    modified_at_ms     INTEGER NOT NULL,
    PRIMARY KEY (table_id, key)
) STRICT;

CREATE TABLE multipart_uploads (
    upload_id          TEXT    NOT NULL PRIMARY KEY,
    table_id           TEXT    NOT NULL,
    key                TEXT    NOT NULL,
    content_type       TEXT,
    headers            TEXT    NOT NULL DEFAULT '{}',
    user_metadata      TEXT    NOT NULL DEFAULT '{}',
    checksum_algorithm TEXT,
    checksum_type      TEXT,
    initiator          TEXT    NOT NULL,
    initiated_at_ms    INTEGER NOT NULL
) STRICT;

-- ListMultipartUploads (by key, then upload id) and the expiry sweep (by age).
CREATE INDEX multipart_uploads_key_idx ON multipart_uploads (table_id, key, upload_id);
CREATE INDEX multipart_uploads_age_idx ON multipart_uploads (initiated_at_ms);

CREATE TABLE multipart_parts (
    upload_id          TEXT    NOT NULL REFERENCES multipart_uploads (upload_id) ON DELETE CASCADE,
    part_number        INTEGER NOT NULL,
    size               INTEGER NOT NULL,
    etag               TEXT    NOT NULL,
    checksum_algorithm TEXT,
    checksum_value     TEXT,
    blob_key           TEXT    NOT NULL,
    uploaded_at_ms     INTEGER NOT NULL,
    PRIMARY KEY (upload_id, part_number)
) STRICT;
