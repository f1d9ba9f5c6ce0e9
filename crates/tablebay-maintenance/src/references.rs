//! The files a table's snapshots and metadata reference: manifest lists, manifests, the live data and delete
//! files of those manifests, statistics files, the current metadata file and the metadata log. Both removal
//! jobs decide from this set, so a file is removed only when nothing that is kept can reach it.
//!
//! Manifests and manifest lists are read whole through the table's own storage (`TableFiles`, bounded by its
//! file limit) and parsed on the blocking pool; a manifest shared by many snapshots is read once. A file that
//! cannot be read or parsed fails the computation: deciding with an incomplete set could delete live data. So
//! does a reference outside the table's storage: such a table's files are neither read nor judged, and the
//! job fails with the reason, having removed nothing.

use std::collections::{BTreeSet, HashSet};

use iceberg::spec::{FormatVersion, Manifest, ManifestList, TableMetadata};
use tablebay_catalog::TableFiles;

use crate::MaintenanceError;

/// Files referenced by a set of snapshots, as keys inside the table's storage.
#[derive(Debug, Default)]
pub(crate) struct FileSet {
    pub keys: BTreeSet<String>,
    /// Manifests read (for run details).
    pub manifests_read: u64,
}

impl FileSet {
    /// Adds the file at `path`, which must lie in the table's storage.
    fn add(&mut self, files: &TableFiles, path: &str) -> Result<(), MaintenanceError> {
        self.keys.insert(confined(files, path)?);
        Ok(())
    }
}

/// The key of `path` in the table's storage; a reference outside it fails the job.
fn confined(files: &TableFiles, path: &str) -> Result<String, MaintenanceError> {
    files.resolve(path).map(|file| file.key).map_err(|e| {
        MaintenanceError::Unreadable(format!(
            "the table references a file outside its storage, so it is not maintained and nothing was \
             removed: {e}"
        ))
    })
}

/// What the snapshots `snapshot_ids` of `metadata` reference (manifest lists, manifests, live content files).
pub(crate) async fn snapshot_files(
    files: &TableFiles,
    metadata: &TableMetadata,
    snapshot_ids: impl IntoIterator<Item = i64>,
) -> Result<FileSet, MaintenanceError> {
    let mut set = FileSet::default();
    let mut manifests_seen = HashSet::new();
    let version = metadata.format_version();
    for id in snapshot_ids {
        let Some(snapshot) = metadata.snapshot_by_id(id) else {
            continue;
        };
        let list_path = snapshot.manifest_list().to_string();
        if list_path.is_empty() {
            continue;
        }
        set.add(files, &list_path)?;
        let bytes = read(files, &list_path).await?;
        let list = parse_manifest_list(bytes, version, &list_path).await?;
        for manifest in list.entries() {
            set.add(files, &manifest.manifest_path)?;
            if !manifests_seen.insert(manifest.manifest_path.clone()) {
                continue;
            }
            let bytes = read(files, &manifest.manifest_path).await?;
            let path = manifest.manifest_path.clone();
            let live = blocking(move || {
                let parsed = Manifest::parse_avro(&bytes).map_err(|e| {
                    MaintenanceError::Unreadable(format!("manifest {path}: {}", e.message()))
                })?;
                Ok(parsed
                    .entries()
                    .iter()
                    .filter(|e| e.is_alive())
                    .map(|e| e.file_path().to_string())
                    .collect::<Vec<_>>())
            })
            .await?;
            set.manifests_read += 1;
            for path in live {
                set.add(files, &path)?;
            }
        }
    }
    Ok(set)
}

/// Everything the table's current metadata keeps: every snapshot's files, statistics files, the current
/// metadata file and the metadata log (which Iceberg trims to `write.metadata.previous-versions-max`).
pub(crate) async fn table_files(
    files: &TableFiles,
    metadata: &TableMetadata,
    metadata_location: &str,
) -> Result<FileSet, MaintenanceError> {
    let ids: Vec<i64> = metadata.snapshots().map(|s| s.snapshot_id()).collect();
    let mut set = snapshot_files(files, metadata, ids).await?;
    set.add(files, metadata_location)?;
    for log in metadata.metadata_log() {
        set.add(files, &log.metadata_file)?;
    }
    for statistics in metadata.statistics_iter() {
        set.add(files, &statistics.statistics_path)?;
    }
    for statistics in metadata.partition_statistics_iter() {
        set.add(files, &statistics.statistics_path)?;
    }
    Ok(set)
}

async fn read(files: &TableFiles, path: &str) -> Result<bytes::Bytes, MaintenanceError> {
    confined(files, path)?;
    files
        .read(path)
        .await?
        .ok_or_else(|| MaintenanceError::Unreadable(format!("{path} is referenced but missing")))
}

async fn parse_manifest_list(
    bytes: bytes::Bytes,
    version: FormatVersion,
    path: &str,
) -> Result<ManifestList, MaintenanceError> {
    let path = path.to_string();
    blocking(move || {
        ManifestList::parse_with_version(&bytes, version).map_err(|e| {
            MaintenanceError::Unreadable(format!("manifest list {path}: {}", e.message()))
        })
    })
    .await
}

/// Runs Avro decoding on the blocking pool; a panic there becomes an error, not a crash.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, MaintenanceError> + Send + 'static,
) -> Result<T, MaintenanceError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| MaintenanceError::Unreadable(format!("decoding task failed: {e}")))?
}
