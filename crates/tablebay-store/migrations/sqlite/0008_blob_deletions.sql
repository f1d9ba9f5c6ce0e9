-- Tablebay metadata, version 8 (SQLite): the queue of blobs to delete.
-- A write that unlinks blobs (an overwrite, a delete, a replaced part, an aborted or completed upload) queues them
-- here in its own transaction, due after the grace period that readers of the old row get; a background task
-- deletes the due ones and removes their rows. A crash therefore loses no deletion: the next start drains the
-- queue. `attempts` counts claims, for the retry back-off; a claim pushes `due_at_ms` forward (a lease), so a
-- drainer that dies mid-way leaves the row to be claimed again.

CREATE TABLE blob_deletions (
    blob_key   TEXT    NOT NULL PRIMARY KEY,
    due_at_ms  INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX blob_deletions_due_idx ON blob_deletions (due_at_ms);
