//! Snapshot expiration (`icebergSnapshotManagement`): per branch, the newest `minSnapshotsToKeep` ancestors and
//! every ancestor younger than `maxSnapshotAgeHours` are kept, and the first ancestor that is neither ends the
//! branch's history; snapshots no branch reaches are kept while younger than the age limit. Every branch and tag
//! head is kept. (S3 Tables: "the oldest snapshot expires when its age exceeds maxSnapshotAgeHours and the
//! total number of snapshots exceeds minSnapshotsToKeep"; Iceberg's `ExpireSnapshots` applies it per branch.)
//!
//! The removal is an ordinary catalog commit (`remove-snapshots`) whose requirements pin the table's uuid and
//! every ref, so it applies only to the state it was computed from; a writer that commits meanwhile wins and
//! this run backs off. After the commit, the files that only expired snapshots referenced are deleted.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use iceberg::spec::TableMetadata;
use tablebay_catalog::spec::{TableRequirement, TableUpdate};
use tablebay_catalog::{Catalog, CommitError, IcebergTable, SnapshotRefInfo, TableChange};
use tablebay_store::MetaStore;

use crate::MaintenanceError;
use crate::references::snapshot_files;
use crate::run::JobOutcome;
use crate::settings::EffectiveSnapshotManagement;
use crate::unreferenced_files::delete_keys;

/// The snapshots to expire from `metadata`, given its refs, at time `now`.
pub(crate) fn expired_snapshots(
    metadata: &TableMetadata,
    refs: &std::collections::HashMap<String, SnapshotRefInfo>,
    settings: &EffectiveSnapshotManagement,
    now: DateTime<Utc>,
) -> Vec<i64> {
    let max_age_ms = i64::try_from(settings.max_snapshot_age.as_millis()).unwrap_or(i64::MAX);
    let cutoff_ms = now.timestamp_millis().saturating_sub(max_age_ms);
    let mut kept: HashSet<i64> = refs.values().map(|r| r.snapshot_id).collect();
    let mut reached: HashSet<i64> = HashSet::new();
    for branch in refs.values().filter(|r| r.is_branch) {
        let mut next = Some(branch.snapshot_id);
        let mut count = 0;
        let mut keeping = true;
        let mut steps = 0;
        while let Some(id) = next {
            // Bounded by the number of snapshots: a malformed parent cycle cannot loop forever.
            steps += 1;
            if steps > metadata.snapshots().len() {
                break;
            }
            let Some(snapshot) = metadata.snapshot_by_id(id) else {
                break;
            };
            reached.insert(id);
            if keeping
                && (count < settings.min_snapshots_to_keep || snapshot.timestamp_ms() >= cutoff_ms)
            {
                kept.insert(id);
                count += 1;
            } else {
                keeping = false;
            }
            next = snapshot.parent_snapshot_id();
        }
    }
    let mut expired: Vec<i64> = metadata
        .snapshots()
        .filter(|s| !kept.contains(&s.snapshot_id()))
        .filter(|s| reached.contains(&s.snapshot_id()) || s.timestamp_ms() < cutoff_ms)
        .map(|s| s.snapshot_id())
        .collect();
    expired.sort_unstable();
    expired
}

/// Runs snapshot expiration on one table.
pub(crate) async fn expire(
    catalog: &Catalog,
    meta: &MetaStore,
    loaded: IcebergTable,
    settings: &EffectiveSnapshotManagement,
) -> Result<JobOutcome, MaintenanceError> {
    let started = Utc::now();
    let metadata = &loaded.metadata.metadata;
    let refs = &loaded.metadata.refs;
    let expired = expired_snapshots(metadata, refs, settings, started);
    let mut outcome = JobOutcome::default();
    outcome.detail("snapshotsBefore", metadata.snapshots().len() as u64);
    if expired.is_empty() {
        outcome.detail("snapshotsExpired", 0);
        outcome.message = Some("no snapshot is due to expire".to_string());
        return Ok(outcome);
    }
    let expired_set: HashSet<i64> = expired.iter().copied().collect();
    let retained: Vec<i64> = metadata
        .snapshots()
        .map(|s| s.snapshot_id())
        .filter(|id| !expired_set.contains(id))
        .collect();
    // Decide which files go before committing: reading is what can fail, and after the commit the expired
    // snapshots' manifest lists are no longer named anywhere.
    // Both sets hold keys of the table's own storage only: a reference elsewhere fails the job here, before
    // anything is committed or deleted.
    let files = catalog.table_files(loaded.table.id);
    let expired_files = snapshot_files(&files, metadata, expired.iter().copied()).await?;
    let retained_files = snapshot_files(&files, metadata, retained).await?;
    let doomed: Vec<String> = expired_files
        .keys
        .into_iter()
        .filter(|k| !retained_files.keys.contains(k))
        .collect();

    let mut requirements = vec![TableRequirement::UuidMatch {
        uuid: metadata.uuid(),
    }];
    let mut names: Vec<&String> = refs.keys().collect();
    names.sort();
    for name in names {
        let snapshot_id = refs.get(name).map(|r| r.snapshot_id);
        requirements.push(TableRequirement::RefSnapshotIdMatch {
            r#ref: name.clone(),
            snapshot_id,
        });
    }
    let change = TableChange {
        requirements,
        updates: vec![TableUpdate::RemoveSnapshots {
            snapshot_ids: expired.clone(),
        }],
    };
    let owner = loaded.table.bucket.arn.account.clone();
    match catalog.commit_table(&loaded.table, change, &owner).await {
        Ok(_) => {}
        Err(CommitError::Conflict(why)) => {
            outcome.backed_off = Some(format!(
                "the table changed while expiring snapshots; retrying later ({why})"
            ));
            return Ok(outcome);
        }
        Err(CommitError::NotFound(m)) => return Err(MaintenanceError::NotFound(m)),
        Err(e) => {
            return Err(MaintenanceError::Unreadable(format!(
                "the expiration commit failed: {e}"
            )));
        }
    }
    let (deleted, bytes) = delete_keys(&files, meta, doomed, started).await?;
    outcome.files_in = deleted;
    outcome.bytes_in = bytes;
    outcome.detail("snapshotsExpired", expired.len() as u64);
    outcome.detail("filesDeleted", deleted);
    outcome.message = Some(format!(
        "expired {} snapshots, deleted {deleted} files",
        expired.len()
    ));
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::HashMap;
    use std::time::Duration;

    /// Metadata with snapshots `(id, parent, age in hours)` and refs `(name, id, is_branch)`.
    fn metadata(
        snapshots: &[(i64, Option<i64>, i64)],
        refs: &[(&str, i64, bool)],
        now: DateTime<Utc>,
    ) -> TableMetadata {
        let snaps: Vec<serde_json::Value> = snapshots
            .iter()
            .enumerate()
            .map(|(i, (id, parent, age))| {
                let mut s = serde_json::json!({
                    "snapshot-id": id, "sequence-number": i + 1,
                    "timestamp-ms": now.timestamp_millis() - age * 3_600_000,
                    "manifest-list": format!("s3://x/metadata/snap-{id}.avro"),
                    "summary": {"operation": "append"}, "schema-id": 0
                });
                if let Some(p) = parent {
                    s["parent-snapshot-id"] = serde_json::json!(p);
                }
                s
            })
            .collect();
        let refs_json: serde_json::Map<String, serde_json::Value> = refs
            .iter()
            .map(|(n, id, branch)| {
                (n.to_string(), serde_json::json!({"snapshot-id": id, "type": if *branch {"branch"} else {"tag"}}))
            })
            .collect();
        let current = refs
            .iter()
            .find(|(n, _, _)| *n == "main")
            .map(|(_, id, _)| *id);
        let doc = serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://x",
            "last-sequence-number": snapshots.len(), "last-updated-ms": now.timestamp_millis(), "last-column-id": 1,
            "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": true}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": {}, "current-snapshot-id": current.unwrap_or(-1), "snapshots": snaps, "refs": refs_json,
            "snapshot-log": [], "metadata-log": []
        });
        serde_json::from_value(doc).unwrap()
    }

    fn refs(list: &[(&str, i64, bool)]) -> HashMap<String, SnapshotRefInfo> {
        list.iter()
            .map(|(n, id, b)| {
                (
                    n.to_string(),
                    SnapshotRefInfo {
                        snapshot_id: *id,
                        is_branch: *b,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn expiration_rules() {
        let now = Utc::now();
        let settings = |min: usize, hours: u64| EffectiveSnapshotManagement {
            min_snapshots_to_keep: min,
            max_snapshot_age: Duration::from_secs(hours * 3600),
        };
        // main: 1 <- 2 <- 3 <- 4 <- 5 (ages 50, 40, 30, 20, 10 hours); tag on 2; 6: orphan of a rollback, 45 h.
        let snaps = [
            (1, None, 50),
            (2, Some(1), 40),
            (3, Some(2), 30),
            (4, Some(3), 20),
            (5, Some(4), 10),
            (6, Some(1), 45),
        ];
        let r = [("main", 5, true), ("v1", 2, false)];
        let md = metadata(&snaps, &r, now);
        let refs = refs(&r);
        for (min, hours, want) in [
            // Count and age must both be exceeded.
            (1, 25, vec![1, 3, 6]),
            (1, 100, vec![]),
            (4, 1, vec![1, 6]),
            (10, 1, vec![6]),
            (1, 1, vec![1, 3, 4, 6]),
        ] {
            assert_eq!(
                expired_snapshots(&md, &refs, &settings(min, hours), now),
                want,
                "min {min} hours {hours}"
            );
        }
        // A second branch keeps its own history.
        let r = [("main", 5, true), ("audit", 3, true)];
        let md = metadata(&snaps, &r, now);
        assert_eq!(
            expired_snapshots(&md, &refs_of(&r), &settings(2, 1), now),
            vec![1, 6]
        );
    }

    fn refs_of(list: &[(&str, i64, bool)]) -> HashMap<String, SnapshotRefInfo> {
        refs(list)
    }
}
