//! Which commits queue maintenance: a cheap check of the committed metadata (snapshot count and age, the current
//! snapshot's summary totals) against the table's Iceberg properties or S3 Tables' defaults. The check runs on
//! the committing request's task, so it reads nothing; the job itself applies the full configuration, and the
//! periodic sweep catches tables whose control-plane settings are stricter than what a commit can see.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iceberg::spec::TableMetadata;
use tablebay_catalog::{
    CommitObserver, CompactionSettings, MaintenanceJobType, SnapshotManagementSettings, Table,
};
use tablebay_store::MetaStore;
use uuid::Uuid;

use crate::compaction;
use crate::settings::{EffectiveCompaction, EffectiveSnapshotManagement};

/// A table needs compaction when it has at least this many data files …
const SMALL_FILES_TRIGGER: u64 = 16;
/// … averaging less than this fraction of the target size.
const SMALL_FILE_FRACTION: u64 = 4;

/// Queues jobs after commits; at most one enqueue attempt per table and type per cooldown.
#[derive(Debug)]
pub(crate) struct CommitTrigger {
    meta: MetaStore,
    cooldown: Duration,
    recent: Mutex<HashMap<(Uuid, MaintenanceJobType), Instant>>,
}

impl CommitTrigger {
    pub(crate) fn new(meta: MetaStore, cooldown: Duration) -> Arc<Self> {
        Arc::new(Self {
            meta,
            cooldown,
            recent: Mutex::new(HashMap::new()),
        })
    }

    /// The job types the committed metadata calls for.
    pub(crate) fn due(metadata: &TableMetadata, now_ms: i64) -> Vec<MaintenanceJobType> {
        let mut due = Vec::new();
        let properties = metadata.properties();
        let expiry = EffectiveSnapshotManagement::resolve(
            &SnapshotManagementSettings::default(),
            properties,
        );
        let max_age_ms = i64::try_from(expiry.max_snapshot_age.as_millis()).unwrap_or(i64::MAX);
        let oldest = metadata.snapshots().map(|s| s.timestamp_ms()).min();
        if metadata.snapshots().len() > expiry.min_snapshots_to_keep
            && oldest.is_some_and(|t| t < now_ms.saturating_sub(max_age_ms))
        {
            due.push(MaintenanceJobType::IcebergSnapshotManagement);
        }
        if compaction::AVAILABLE
            && let Some(summary) = metadata.current_snapshot().map(|s| s.summary())
        {
            let total = |key: &str| {
                summary
                    .additional_properties
                    .get(key)
                    .and_then(|v| v.parse::<u64>().ok())
            };
            let target = EffectiveCompaction::resolve(&CompactionSettings::default(), properties)
                .target_file_size_bytes;
            if let (Some(files), Some(bytes)) =
                (total("total-data-files"), total("total-files-size"))
                && files >= SMALL_FILES_TRIGGER
                && bytes / files < target / SMALL_FILE_FRACTION
            {
                due.push(MaintenanceJobType::IcebergCompaction);
            }
        }
        due
    }
}

impl CommitObserver for CommitTrigger {
    fn committed(&self, table: &Table, metadata: &TableMetadata) {
        let due = Self::due(metadata, chrono::Utc::now().timestamp_millis());
        if due.is_empty() {
            return;
        }
        let now = Instant::now();
        let due: Vec<MaintenanceJobType> = {
            let Ok(mut recent) = self.recent.lock() else {
                return;
            };
            recent.retain(|_, at| now.duration_since(*at) < self.cooldown);
            due.into_iter()
                .filter(|job| recent.insert((table.id, *job), now).is_none())
                .collect()
        };
        for job in due {
            let meta = self.meta.clone();
            let table_id = table.id;
            tokio::spawn(async move {
                if let Err(e) = meta
                    .enqueue_job(table_id, job.as_str(), "commit", chrono::Utc::now())
                    .await
                {
                    tracing::warn!(%table_id, job = job.as_str(), error = %e, "could not queue maintenance after a commit");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(
        properties: serde_json::Value,
        snapshot_ages_ms: &[i64],
        now_ms: i64,
        files: u64,
        bytes: u64,
    ) -> TableMetadata {
        let snapshots: Vec<serde_json::Value> = snapshot_ages_ms
            .iter()
            .enumerate()
            .map(|(i, age)| {
                serde_json::json!({
                    "snapshot-id": i + 1, "sequence-number": i + 1, "timestamp-ms": now_ms - age,
                    "manifest-list": format!("s3://x/metadata/snap-{i}.avro"), "schema-id": 0,
                    "summary": {"operation": "append", "total-data-files": files.to_string(),
                                "total-files-size": bytes.to_string()}
                })
            })
            .collect();
        let current = snapshot_ages_ms.len() as i64;
        serde_json::from_value(serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://x",
            "last-sequence-number": current, "last-updated-ms": now_ms, "last-column-id": 1,
            "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": true}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": properties, "current-snapshot-id": if current > 0 { current } else { -1 },
            "snapshots": snapshots, "snapshot-log": [], "metadata-log": []
        }))
        .unwrap()
    }

    #[test]
    fn commits_queue_what_they_leave_due() {
        let now = 10_000_000_000;
        let hour = 3_600_000;
        let none = serde_json::json!({});
        let short = serde_json::json!({"history.expire.max-snapshot-age-ms": "1000", "write.target-file-size-bytes": "1048576"});
        let due = |props: &serde_json::Value, ages: &[i64], files, bytes| {
            CommitTrigger::due(&metadata(props.clone(), ages, now, files, bytes), now)
        };
        // Defaults: 120 hours, keep 1.
        assert!(due(&none, &[10 * hour, hour], 1, 100).is_empty());
        assert_eq!(
            due(&none, &[121 * hour, hour], 1, 100),
            vec![MaintenanceJobType::IcebergSnapshotManagement]
        );
        assert!(
            due(&none, &[121 * hour], 1, 100).is_empty(),
            "the only snapshot is kept"
        );
        // Properties shorten the age; many small files call for compaction.
        assert_eq!(
            due(&short, &[5000, 10], 1, 100),
            vec![MaintenanceJobType::IcebergSnapshotManagement]
        );
        assert_eq!(
            due(&short, &[10], 16, 16 * 1000),
            vec![MaintenanceJobType::IcebergCompaction]
        );
        assert!(
            due(&short, &[10], 15, 15 * 1000).is_empty(),
            "too few files"
        );
        assert!(
            due(&short, &[10], 16, 16 * 900_000).is_empty(),
            "files already near the target"
        );
    }
}
