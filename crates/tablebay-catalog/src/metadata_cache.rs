//! The parsed-metadata cache: Iceberg `metadata.json` files are immutable once written, so a file read and parsed
//! once is kept, keyed by its location, until evicted (bounded by total file size). Loads of an unchanged table
//! then cost one row read and no blob read or JSON parse (issue 4, "Parsed metadata is cached").

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg::spec::TableMetadata;
use serde::Deserialize;

/// Upper bound of the cache, in bytes of metadata files.
const CAPACITY_BYTES: u64 = 256 * 1024 * 1024;

/// One metadata file: its parsed form and the bytes as stored (served as-is to clients that load the table).
#[derive(Debug)]
pub struct LoadedMetadata {
    /// The parsed metadata.
    pub metadata: TableMetadata,
    /// The file's bytes, a JSON document.
    pub json: Bytes,
    /// Its branches and tags (iceberg-rust keeps them private), for requirement messages and `snapshots=refs`.
    pub refs: HashMap<String, SnapshotRefInfo>,
}

/// A branch or tag of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotRefInfo {
    /// The snapshot it points at.
    pub snapshot_id: i64,
    /// A branch (else a tag).
    pub is_branch: bool,
}

impl LoadedMetadata {
    /// Wraps a parsed metadata document and the bytes it was parsed from (or serialized to).
    pub(crate) fn new(metadata: TableMetadata, json: Bytes) -> Self {
        let refs = refs_of(&json);
        Self {
            metadata,
            json,
            refs,
        }
    }
}

#[derive(Deserialize)]
struct RefsOnly {
    #[serde(default)]
    refs: Option<HashMap<String, RefWire>>,
    #[serde(default, rename = "current-snapshot-id")]
    current_snapshot_id: Option<i64>,
}

#[derive(Deserialize)]
struct RefWire {
    #[serde(rename = "snapshot-id")]
    snapshot_id: i64,
    #[serde(rename = "type")]
    kind: String,
}

/// The refs of a metadata document; a v1 document without `refs` has an implicit `main` at its current snapshot.
fn refs_of(json: &[u8]) -> HashMap<String, SnapshotRefInfo> {
    let Ok(doc) = serde_json::from_slice::<RefsOnly>(json) else {
        return HashMap::new();
    };
    match doc.refs {
        Some(refs) => refs
            .into_iter()
            .map(|(name, r)| {
                (
                    name,
                    SnapshotRefInfo {
                        snapshot_id: r.snapshot_id,
                        is_branch: r.kind != "tag",
                    },
                )
            })
            .collect(),
        None => doc
            .current_snapshot_id
            .filter(|id| *id != -1)
            .map(|id| {
                (
                    "main".to_string(),
                    SnapshotRefInfo {
                        snapshot_id: id,
                        is_branch: true,
                    },
                )
            })
            .into_iter()
            .collect(),
    }
}

/// Cache of parsed metadata files by location. Cheap to clone.
#[derive(Clone)]
pub(crate) struct MetadataCache {
    inner: moka::future::Cache<String, Arc<LoadedMetadata>>,
}

impl std::fmt::Debug for MetadataCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataCache")
            .field("entries", &self.inner.entry_count())
            .finish()
    }
}

impl MetadataCache {
    pub(crate) fn new() -> Self {
        let inner = moka::future::Cache::builder()
            .max_capacity(CAPACITY_BYTES)
            .weigher(|key: &String, value: &Arc<LoadedMetadata>| {
                u32::try_from(key.len() + value.json.len()).unwrap_or(u32::MAX)
            })
            .build();
        Self { inner }
    }

    pub(crate) async fn get(&self, location: &str) -> Option<Arc<LoadedMetadata>> {
        self.inner.get(location).await
    }

    pub(crate) async fn insert(&self, location: String, loaded: Arc<LoadedMetadata>) {
        self.inner.insert(location, loaded).await;
    }

    pub(crate) async fn remove(&self, location: &str) {
        self.inner.invalidate(location).await;
    }
}
