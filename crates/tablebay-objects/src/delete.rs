//! Deletes: one object, many at once, an unreferenced file if unchanged, a whole table's storage; and the drain
//! of the blob-deletion queue that every overwrite, delete and abort feeds.
//!
//! A row's removal and the queueing of its blobs commit in one transaction (the meta store's `blob_deletions`);
//! the blobs go once their grace period is over (readers that fetched the old row may still be opening them).
//! [`Objects::delete_unlinked_blobs`], run periodically by the server, deletes them, so a crash loses no deletion.

use chrono::{DateTime, Utc};
use futures::stream::StreamExt;
use uuid::Uuid;

use crate::{ObjectError, ObjectKey, Objects};

/// Queued blob deletions claimed (and then deleted concurrently) at a time.
const DELETION_BATCH: u32 = 100;

/// Blob deletions in flight at once.
const DELETION_CONCURRENCY: usize = 16;

impl Objects {
    /// Removes the object at `key` if there is one (deleting a missing key is not an error).
    pub async fn delete_object(&self, table_id: Uuid, key: &ObjectKey) -> Result<(), ObjectError> {
        // The store queues the object's blobs for deletion with the row's removal.
        self.meta.delete_object(table_id, key.as_str()).await?;
        Ok(())
    }

    /// Deletes the keys in one transaction, reporting each outcome (a malformed key fails alone; a missing key is
    /// deleted, as in S3).
    pub async fn delete_objects(
        &self,
        table_id: Uuid,
        keys: &[String],
    ) -> Vec<(String, Result<(), ObjectError>)> {
        let mut outcomes = Vec::with_capacity(keys.len());
        let mut valid = Vec::with_capacity(keys.len());
        for key in keys {
            match ObjectKey::parse(key) {
                Ok(_) => valid.push(key.as_str()),
                Err(e) => outcomes.push((key.clone(), Err(e))),
            }
        }
        match self.meta.delete_objects(table_id, &valid).await {
            // The store queues the deleted objects' blobs for deletion in the same transaction.
            Ok(_deleted) => {
                outcomes.extend(valid.iter().map(|key| (key.to_string(), Ok(()))));
            }
            Err(e) => {
                let e = ObjectError::from(e);
                tracing::warn!(error = %e, "deleting objects failed");
                let message = e.to_string();
                outcomes.extend(
                    valid
                        .iter()
                        .map(|key| (key.to_string(), Err(ObjectError::Internal(message.clone())))),
                );
            }
        }
        outcomes
    }

    /// Deletes the object at `key` if it is still the version modified at `modified` (one written since it was
    /// judged unreferenced is kept), and its blobs at once; returns the size removed.
    pub async fn delete_if_unmodified(
        &self,
        table_id: Uuid,
        key: &ObjectKey,
        modified: DateTime<Utc>,
    ) -> Result<Option<u64>, ObjectError> {
        let Some(record) = self
            .meta
            .delete_object_if_unmodified(table_id, key.as_str(), modified)
            .await?
        else {
            return Ok(None);
        };
        // No grace period: the row is gone and was unreferenced for days, so no reader still holds it.
        self.delete_blobs_now(record.blobs.into_iter().map(|s| s.key).collect())
            .await;
        Ok(Some(record.size))
    }

    /// Deletes every file in a table's storage (`tables/<table-id>/` in the blob store); returns how many objects
    /// it had. For a table whose row is gone.
    pub async fn purge_table(&self, table_id: Uuid) -> Result<u64, ObjectError> {
        // Rows first: once they are gone nothing of the table is visible, so a crash mid-way leaves only
        // unreferenced blobs.
        let objects = self.meta.delete_table_objects(table_id).await?;
        self.blobs
            .delete_prefix(&format!("tables/{table_id}"))
            .await?;
        self.meta.forget_detached_storage(table_id).await?;
        Ok(objects)
    }

    /// Deletes the queued blobs that are due (unlinked by an overwrite, a delete or an abort whose grace period is
    /// over, or left queued by a crash), batch by batch until none is due; returns how many. A blob that cannot be
    /// deleted stays queued and is retried later, backing off. Safe to run on several instances at once: a claim
    /// leases its rows.
    pub async fn delete_unlinked_blobs(&self) -> Result<usize, ObjectError> {
        let mut deleted = 0;
        loop {
            let now = Utc::now();
            let batch = self.meta.claim_blob_deletions(now, DELETION_BATCH).await?;
            if batch.is_empty() {
                return Ok(deleted);
            }
            let claimed = batch.len();
            // Owned items and a cloned store handle: the future stays `'static`-friendly for `tokio::spawn`.
            let outcomes: Vec<_> = futures::stream::iter(batch)
                .map(|item| {
                    let blobs = self.blobs.clone();
                    async move {
                        let outcome = blobs.delete(&item.blob_key).await;
                        (item, outcome)
                    }
                })
                .buffer_unordered(DELETION_CONCURRENCY)
                .collect()
                .await;
            let mut done: Vec<String> = Vec::with_capacity(claimed);
            // While the blob store is down every blob of the batch fails alike: one warning per batch, not one per
            // blob (issue 17: an outage filled the logs).
            let mut failed: Option<(usize, String, chrono::Duration)> = None;
            for (item, outcome) in outcomes {
                match outcome {
                    Ok(()) => done.push(item.blob_key),
                    Err(e) => {
                        let wait = retry_delay(item.attempts);
                        self.meta
                            .retry_blob_deletion(&item.blob_key, now + wait)
                            .await?;
                        let entry = failed.get_or_insert_with(|| (0, e.to_string(), wait));
                        entry.0 += 1;
                        entry.2 = entry.2.min(wait);
                    }
                }
            }
            if let Some((count, error, wait)) = failed {
                tracing::warn!(%error, failed = count, retry_in_secs = wait.num_seconds(),
                    "could not delete unlinked blobs; they stay queued and are retried later");
            }
            let done: Vec<&str> = done.iter().map(String::as_str).collect();
            self.meta.finish_blob_deletions(&done).await?;
            deleted += done.len();
            if done.is_empty() {
                // Every one failed (the blob store is down): the next pass is the periodic one.
                return Ok(deleted);
            }
        }
    }

    /// Deletes blobs no row references (never visible, or unlinked). Those the blob store refuses are queued for
    /// the periodic drain ([`Objects::delete_unlinked_blobs`]) and logged once for the call, not once per blob.
    pub(crate) async fn delete_blobs_now(&self, keys: Vec<String>) {
        let mut failed = Vec::new();
        let mut first_error = None;
        for key in keys {
            if let Err(e) = self.blobs.delete(&key).await {
                first_error.get_or_insert(e);
                failed.push(key);
            }
        }
        let Some(error) = first_error else {
            return;
        };
        let due = Utc::now() + retry_delay(1);
        let keys: Vec<&str> = failed.iter().map(String::as_str).collect();
        match self.meta.queue_blob_deletions(&keys, due).await {
            Ok(()) => tracing::warn!(%error, blobs = failed.len(),
                "could not delete unreferenced blobs now; queued for a retry"),
            // The database is down too: unreferenced-file removal collects them.
            Err(queue_error) => tracing::warn!(%error, %queue_error, blobs = failed.len(),
                "could not delete unreferenced blobs nor queue them; unreferenced-file removal will"),
        }
    }
}

/// How long a blob deletion that failed `attempts` times waits before the next try: 2, 4, 8 … seconds, at most an
/// hour.
fn retry_delay(attempts: u32) -> chrono::Duration {
    chrono::Duration::seconds(1_i64 << attempts.clamp(1, 12)).min(chrono::Duration::hours(1))
}
