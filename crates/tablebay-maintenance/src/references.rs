//! The files a table's snapshots and metadata reference: manifest lists, manifests, the live data and delete
//! files of those manifests, statistics files, the current metadata file and the metadata log. Both removal
//! jobs decide from this set, so a file is removed only when nothing that is kept can reach it.
//!
//! Manifests and manifest lists are read whole through the catalog (bounded by its table-file limit) and parsed
//! on the blocking pool; a manifest shared by many snapshots is read once. A file that cannot be read or parsed
//! fails the computation: deciding with an incomplete set could delete live data.

use std::collections::{BTreeSet, HashSet};

use iceberg::spec::{FormatVersion, Manifest, ManifestList, TableMetadata};
use tablebay_catalog::{Catalog, TableLocation};
use uuid::Uuid;

use crate::MaintenanceError;

/// Files referenced by a set of snapshots, as full locations (`s3://<id>--table-s3/<key>`).
#[derive(Debug, Default)]
pub(crate) struct FileSet {
    pub files: BTreeSet<String>,
    /// Manifests read (for run details).
    pub manifests_read: u64,
}

impl FileSet {
    /// The keys inside `table_id`'s storage.
    pub fn keys_of(&self, table_id: Uuid) -> HashSet<String> {
        self.files
            .iter()
            .filter_map(|f| TableLocation::parse(f))
            .filter(|l| l.table_id == table_id)
            .map(|l| l.key)
            .collect()
    }
}

/// What the snapshots `snapshot_ids` of `metadata` reference (manifest lists, manifests, live content files).
pub(crate) async fn snapshot_files(
    catalog: &Catalog,
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
        let bytes = read(catalog, &list_path).await?;
        let list = parse_manifest_list(bytes, version, &list_path).await?;
        set.files.insert(list_path);
        for manifest in list.entries() {
            set.files.insert(manifest.manifest_path.clone());
            if !manifests_seen.insert(manifest.manifest_path.clone()) {
                continue;
            }
            let bytes = read(catalog, &manifest.manifest_path).await?;
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
            set.files.extend(live);
        }
    }
    Ok(set)
}

/// Everything the table's current metadata keeps: every snapshot's files, statistics files, the current
/// metadata file and the metadata log (which Iceberg trims to `write.metadata.previous-versions-max`).
pub(crate) async fn table_files(
    catalog: &Catalog,
    metadata: &TableMetadata,
    metadata_location: &str,
) -> Result<FileSet, MaintenanceError> {
    let ids: Vec<i64> = metadata.snapshots().map(|s| s.snapshot_id()).collect();
    let mut set = snapshot_files(catalog, metadata, ids).await?;
    set.files.insert(metadata_location.to_string());
    set.files.extend(
        metadata
            .metadata_log()
            .iter()
            .map(|log| log.metadata_file.clone()),
    );
    set.files.extend(
        metadata
            .statistics_iter()
            .map(|s| s.statistics_path.clone()),
    );
    set.files.extend(
        metadata
            .partition_statistics_iter()
            .map(|s| s.statistics_path.clone()),
    );
    Ok(set)
}

async fn read(catalog: &Catalog, path: &str) -> Result<bytes::Bytes, MaintenanceError> {
    let location = TableLocation::parse(path).ok_or_else(|| {
        MaintenanceError::Unreadable(format!("{path} is outside every table's storage"))
    })?;
    catalog
        .read_table_object(&location)
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
