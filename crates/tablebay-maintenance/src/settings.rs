//! Effective maintenance settings of a table: the control plane's configuration (defaults as S3 Tables,
//! filled in by the catalog), overridden by the table's Iceberg properties where Iceberg defines one, so a table
//! written by Spark or PyIceberg with `history.expire.*` keeps the retention its writers asked for.

use std::collections::HashMap;
use std::time::Duration;

use tablebay_catalog::{
    CompactionSettings, CompactionStrategy, SnapshotManagementSettings,
    UnreferencedFileRemovalSettings,
};

/// Table property overriding `minSnapshotsToKeep` (Iceberg `TableProperties.MIN_SNAPSHOTS_TO_KEEP`).
pub const MIN_SNAPSHOTS_PROPERTY: &str = "history.expire.min-snapshots-to-keep";
/// Table property overriding `maxSnapshotAgeHours`, in milliseconds (`TableProperties.MAX_SNAPSHOT_AGE_MS`).
pub const MAX_SNAPSHOT_AGE_PROPERTY: &str = "history.expire.max-snapshot-age-ms";
/// Table property overriding `targetFileSizeMB`, in bytes (`TableProperties.WRITE_TARGET_FILE_SIZE_BYTES`).
pub const TARGET_FILE_SIZE_PROPERTY: &str = "write.target-file-size-bytes";

/// Snapshot expiration as it applies to one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveSnapshotManagement {
    /// Snapshots of each branch's history always kept, newest first (at least 1).
    pub min_snapshots_to_keep: usize,
    /// Older snapshots beyond the minimum expire.
    pub max_snapshot_age: Duration,
}

impl EffectiveSnapshotManagement {
    /// The configured settings with the table's property overrides applied (an unparsable property is ignored).
    pub fn resolve(
        configured: &SnapshotManagementSettings,
        properties: &HashMap<String, String>,
    ) -> Self {
        let min = property::<usize>(properties, MIN_SNAPSHOTS_PROPERTY)
            .unwrap_or(configured.min_snapshots_to_keep as usize)
            .max(1);
        let age = property::<u64>(properties, MAX_SNAPSHOT_AGE_PROPERTY)
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(
                u64::from(configured.max_snapshot_age_hours) * 3600,
            ));
        Self {
            min_snapshots_to_keep: min,
            max_snapshot_age: age,
        }
    }
}

/// Compaction as it applies to one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveCompaction {
    /// Output files aim at this size.
    pub target_file_size_bytes: u64,
    /// The configured strategy.
    pub strategy: CompactionStrategy,
}

impl EffectiveCompaction {
    /// The configured settings with the table's property overrides applied.
    pub fn resolve(configured: &CompactionSettings, properties: &HashMap<String, String>) -> Self {
        let target = property::<u64>(properties, TARGET_FILE_SIZE_PROPERTY)
            .filter(|bytes| *bytes > 0)
            .unwrap_or(u64::from(configured.target_file_size_mb) * 1024 * 1024);
        Self {
            target_file_size_bytes: target,
            strategy: configured.strategy,
        }
    }
}

/// Unreferenced-file removal as it applies to one table of a bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveUnreferencedRemoval {
    /// An unreferenced object older than this becomes noncurrent.
    pub unreferenced_after: Duration,
    /// A noncurrent object is deleted this long after it became noncurrent.
    pub delete_after: Duration,
}

impl EffectiveUnreferencedRemoval {
    /// The bucket's settings, with `day` as the length of a day (shortened for tests).
    pub fn resolve(configured: &UnreferencedFileRemovalSettings, day: Duration) -> Self {
        Self {
            unreferenced_after: day.saturating_mul(configured.unreferenced_days),
            delete_after: day.saturating_mul(configured.non_current_days),
        }
    }
}

fn property<T: std::str::FromStr>(properties: &HashMap<String, String>, name: &str) -> Option<T> {
    properties.get(name).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_override_the_configuration() {
        let configured = SnapshotManagementSettings {
            min_snapshots_to_keep: 3,
            max_snapshot_age_hours: 2,
        };
        let none = HashMap::new();
        assert_eq!(
            EffectiveSnapshotManagement::resolve(&configured, &none),
            EffectiveSnapshotManagement {
                min_snapshots_to_keep: 3,
                max_snapshot_age: Duration::from_secs(7200)
            }
        );
        for (min, age, want_min, want_age_ms) in [
            ("5", "1000", 5, 1000),
            ("0", "oops", 1, 7_200_000),
            ("x", "60000", 3, 60_000),
        ] {
            let props: HashMap<String, String> = [
                (MIN_SNAPSHOTS_PROPERTY.to_string(), min.to_string()),
                (MAX_SNAPSHOT_AGE_PROPERTY.to_string(), age.to_string()),
            ]
            .into();
            let got = EffectiveSnapshotManagement::resolve(&configured, &props);
            assert_eq!(got.min_snapshots_to_keep, want_min, "{min}");
            assert_eq!(
                got.max_snapshot_age,
                Duration::from_millis(want_age_ms),
                "{age}"
            );
        }
        let compaction = CompactionSettings::default();
        assert_eq!(
            EffectiveCompaction::resolve(&compaction, &none).target_file_size_bytes,
            512 * 1024 * 1024
        );
        let props: HashMap<String, String> =
            [(TARGET_FILE_SIZE_PROPERTY.to_string(), "1048576".to_string())].into();
        assert_eq!(
            EffectiveCompaction::resolve(&compaction, &props).target_file_size_bytes,
            1_048_576
        );
        let removal = EffectiveUnreferencedRemoval::resolve(
            &UnreferencedFileRemovalSettings::default(),
            Duration::from_secs(2),
        );
        assert_eq!(
            (removal.unreferenced_after, removal.delete_after),
            (Duration::from_secs(6), Duration::from_secs(20))
        );
    }
}
