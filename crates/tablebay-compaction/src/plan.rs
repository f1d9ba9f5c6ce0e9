//! Planning: the live files of a snapshot, which delete files apply to which data file (the spec's scan
//! rules), and the groups of data files to rewrite — per partition spec and partition value, small files and
//! files that have deletes, split so that no group reads more than [`MAX_GROUP_BYTES`].
//!
//! Delete application follows the spec's rules ("Scan Planning"): a position delete applies to data files of
//! its partition (or any, when its spec is unpartitioned) with a data sequence number ≤ its own; an equality
//! delete to those with a number strictly lower.

use std::collections::HashMap;
use std::sync::Arc;

use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFileFormat, FormatVersion, ManifestEntry, ManifestFile, ManifestList,
    Struct, TableMetadata,
};
use tablebay_catalog::{IcebergTable, TableFiles};

use crate::{CompactionError, CompactionSettings};

/// The most input bytes one group rewrites: bounds the work (and the delete sets) a group holds at once.
pub(crate) const MAX_GROUP_BYTES: u64 = 8 * 1024 * 1024 * 1024;

/// The most delete-file bytes one group applies (they are loaded into memory while it is rewritten); files
/// whose deletes exceed it are left for a later run of a larger-memory tool rather than risk the heap.
pub(crate) const MAX_GROUP_DELETE_BYTES: u64 = 256 * 1024 * 1024;

/// A file is small, and so compacted, below this fraction of the target size (Java's default 0.75).
const SMALL_FILE_RATIO: f64 = 0.75;

/// One live entry of a snapshot with the spec of its manifest.
#[derive(Clone, Debug)]
pub(crate) struct Live {
    pub entry: Arc<ManifestEntry>,
    pub spec_id: i32,
}

impl Live {
    pub fn path(&self) -> &str {
        self.entry.file_path()
    }

    /// The data sequence number (inherited from the manifest when the entry had none).
    pub fn sequence(&self) -> i64 {
        self.entry.sequence_number().unwrap_or(0)
    }

    pub fn content(&self) -> DataContentType {
        self.entry.content_type()
    }

    pub fn partition(&self) -> &Struct {
        self.entry.data_file().partition()
    }
}

/// Every manifest of a snapshot with its live entries.
pub(crate) struct Snapshot {
    pub manifests: Vec<(ManifestFile, Vec<Live>)>,
}

impl Snapshot {
    pub fn live(&self) -> impl Iterator<Item = &Live> {
        self.manifests
            .iter()
            .flat_map(|(_, entries)| entries.iter())
    }
}

/// Reads the manifest list and manifests of a snapshot. Every file they name must lie in the table's own
/// storage (`files`): a table that references another table's files is not compacted (`Invalid`), so its rows
/// are neither read nor rewritten.
pub(crate) async fn read_snapshot(
    io: &FileIO,
    files: &TableFiles,
    metadata: &TableMetadata,
    snapshot_id: i64,
) -> Result<Snapshot, CompactionError> {
    let snapshot = metadata
        .snapshot_by_id(snapshot_id)
        .ok_or_else(|| CompactionError::Conflict(format!("snapshot {snapshot_id} is gone")))?;
    if snapshot.encryption_key_id().is_some() {
        return Err(CompactionError::Invalid(
            "tables with encrypted manifest lists are not compacted".into(),
        ));
    }
    files.resolve(snapshot.manifest_list())?;
    let bytes = io.new_input(snapshot.manifest_list())?.read().await?;
    let list = ManifestList::parse_with_version(&bytes, metadata.format_version())?;
    let mut manifests = Vec::with_capacity(list.entries().len());
    // Collected first: the iterator `consume_entries` returns is not `Send`, and this future must be (the
    // console awaits it on a request task).
    let files_listed: Vec<ManifestFile> = list.consume_entries().into_iter().collect();
    for file in files_listed {
        files.resolve(&file.manifest_path)?;
        let manifest = file.load_manifest(io).await?;
        let (entries, _) = manifest.into_parts();
        let live: Vec<Live> = entries
            .into_iter()
            .filter(|e| e.is_alive())
            .map(|entry| Live {
                entry,
                spec_id: file.partition_spec_id,
            })
            .collect();
        for entry in &live {
            files.resolve(entry.path())?;
        }
        manifests.push((file, live));
    }
    Ok(Snapshot { manifests })
}

/// Where deletes apply: one partition of one spec, or everything (a delete file of an unpartitioned spec).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    Global,
    Partition(i32, Struct),
}

pub(crate) fn scope_of(metadata: &TableMetadata, file: &Live) -> Scope {
    match metadata.partition_spec_by_id(file.spec_id) {
        Some(spec) if spec.is_unpartitioned() => Scope::Global,
        _ => Scope::Partition(file.spec_id, file.partition().clone()),
    }
}

/// Whether delete file `delete` applies to data file `data` by the spec's sequence-number rules (scopes are
/// checked by the caller's index).
pub(crate) fn applies(delete: &Live, data: &Live) -> bool {
    match delete.content() {
        DataContentType::PositionDeletes => {
            delete.sequence() >= data.sequence()
                && delete
                    .entry
                    .data_file()
                    .referenced_data_file()
                    .is_none_or(|path| path == data.path())
        }
        DataContentType::EqualityDeletes => delete.sequence() > data.sequence(),
        DataContentType::Data => false,
    }
}

/// The delete files of a snapshot by scope.
pub(crate) struct DeleteIndex {
    by_scope: HashMap<Scope, Vec<Live>>,
}

impl DeleteIndex {
    pub fn new(metadata: &TableMetadata, snapshot: &Snapshot) -> Self {
        let mut by_scope: HashMap<Scope, Vec<Live>> = HashMap::new();
        for file in snapshot
            .live()
            .filter(|f| f.content() != DataContentType::Data)
        {
            by_scope
                .entry(scope_of(metadata, file))
                .or_default()
                .push(file.clone());
        }
        Self { by_scope }
    }

    /// The delete files that apply to a data file.
    pub fn for_data(&self, metadata: &TableMetadata, data: &Live) -> Vec<Live> {
        let own = self
            .by_scope
            .get(&scope_of(metadata, data))
            .into_iter()
            .flatten();
        let global = self.by_scope.get(&Scope::Global).into_iter().flatten();
        let mut found: Vec<Live> = own
            .chain(global)
            .filter(|d| applies(d, data))
            .cloned()
            .collect();
        found.dedup_by(|a, b| a.path() == b.path());
        found
    }
}

/// A data file to rewrite and the delete files to apply while reading it.
#[derive(Clone, Debug)]
pub(crate) struct Input {
    pub data: Live,
    pub deletes: Vec<Live>,
}

/// Data files of one spec and partition rewritten together.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub spec_id: i32,
    pub partition: Struct,
    pub inputs: Vec<Input>,
}

/// What a run rewrites, from which snapshot.
pub(crate) struct Plan {
    pub start: IcebergTable,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub groups: Vec<Group>,
}

impl Plan {
    pub fn metadata(&self) -> &TableMetadata {
        &self.start.metadata.metadata
    }
}

/// Plans a run on the current `main` snapshot; `None` when there is nothing to do.
pub(crate) async fn plan(
    io: &FileIO,
    files: &TableFiles,
    start: &IcebergTable,
    settings: &CompactionSettings,
) -> Result<Option<Plan>, CompactionError> {
    let metadata = &start.metadata.metadata;
    if metadata.format_version() == FormatVersion::V3 {
        // v3 deletion vectors and row lineage are not handled: leave such tables alone rather than mishandle them.
        tracing::info!(table = %start.table.id, "format v3 tables are not compacted");
        return Ok(None);
    }
    let Some(current) = metadata.snapshot_for_ref("main") else {
        return Ok(None);
    };
    let snapshot = read_snapshot(io, files, metadata, current.snapshot_id()).await?;
    let deletes = DeleteIndex::new(metadata, &snapshot);
    let small = (settings.target_file_size_bytes as f64 * SMALL_FILE_RATIO) as u64;
    let mut by_partition: HashMap<(i32, Struct), Vec<Input>> = HashMap::new();
    for data in snapshot
        .live()
        .filter(|f| f.content() == DataContentType::Data)
    {
        if data.entry.file_format() != DataFileFormat::Parquet {
            continue;
        }
        let applying = deletes.for_data(metadata, data);
        // Deletes the reader cannot apply (deletion vectors, non-Parquet delete files) keep the file as it is.
        if applying
            .iter()
            .any(|d| d.entry.file_format() != DataFileFormat::Parquet)
        {
            continue;
        }
        if data.entry.file_size_in_bytes() >= small && applying.is_empty() {
            continue;
        }
        by_partition
            .entry((data.spec_id, data.partition().clone()))
            .or_default()
            .push(Input {
                data: data.clone(),
                deletes: applying,
            });
    }
    let mut groups = Vec::new();
    for ((spec_id, partition), inputs) in by_partition {
        for inputs in split(inputs) {
            // Without deletes to apply, rewriting pays only when it leaves fewer files (one file would only be
            // copied, and files that already fill the target would be rewritten on every run).
            let bytes: u64 = inputs
                .iter()
                .map(|i| i.data.entry.file_size_in_bytes())
                .sum();
            let outputs = bytes.div_ceil(settings.target_file_size_bytes.max(1));
            if inputs.iter().all(|i| i.deletes.is_empty()) && outputs >= inputs.len() as u64 {
                continue;
            }
            groups.push(Group {
                spec_id,
                partition: partition.clone(),
                inputs,
            });
        }
    }
    if groups.is_empty() {
        return Ok(None);
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.inputs.len()));
    Ok(Some(Plan {
        start: start.clone(),
        snapshot_id: current.snapshot_id(),
        sequence_number: current.sequence_number(),
        groups,
    }))
}

/// Splits one partition's inputs into groups of at most [`MAX_GROUP_BYTES`] of data and
/// [`MAX_GROUP_DELETE_BYTES`] of deletes; a file whose own deletes exceed the cap is left out.
fn split(mut inputs: Vec<Input>) -> Vec<Vec<Input>> {
    inputs.sort_by(|a, b| a.data.path().cmp(b.data.path()));
    let mut groups = Vec::new();
    let mut current: Vec<Input> = Vec::new();
    let mut bytes = 0u64;
    let mut delete_paths: HashMap<String, u64> = HashMap::new();
    for input in inputs {
        let size = input.data.entry.file_size_in_bytes();
        let own_deletes: u64 = input
            .deletes
            .iter()
            .map(|d| d.entry.file_size_in_bytes())
            .sum();
        if own_deletes > MAX_GROUP_DELETE_BYTES {
            continue;
        }
        let new_deletes: u64 = input
            .deletes
            .iter()
            .filter(|d| !delete_paths.contains_key(d.path()))
            .map(|d| d.entry.file_size_in_bytes())
            .sum();
        let delete_bytes: u64 = delete_paths.values().sum();
        if !current.is_empty()
            && (bytes + size > MAX_GROUP_BYTES
                || delete_bytes + new_deletes > MAX_GROUP_DELETE_BYTES)
        {
            groups.push(std::mem::take(&mut current));
            bytes = 0;
            delete_paths.clear();
        }
        for d in &input.deletes {
            delete_paths.insert(d.path().to_string(), d.entry.file_size_in_bytes());
        }
        bytes += size;
        current.push(input);
    }
    if !current.is_empty() {
        groups.push(current);
    }
    groups
}
