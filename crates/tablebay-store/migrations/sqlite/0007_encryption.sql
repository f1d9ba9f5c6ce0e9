-- Tablebay metadata, version 7 (SQLite): encryption at rest.
-- An object row's `blobs` JSON carries each encrypted segment's wrapped data key and key version (no column
-- needed); a part row gets the same for its blob, which becomes a segment when the upload completes.
-- `encryption_keys` holds one key-check value per master key version ever used, so that a server started with
-- other key material for the same version refuses to start instead of failing every read.
ALTER TABLE multipart_parts ADD COLUMN encryption TEXT;

CREATE TABLE encryption_keys (
    key_id        TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    check_value   TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (key_id, version)
) STRICT;
