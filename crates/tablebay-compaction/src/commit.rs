//! Committing a compaction: one `replace` snapshot through the catalog's ordinary commit path, guarded by
//! `assert-ref-snapshot-id` on `main`.
//!
//! The snapshot keeps every manifest no rewritten file lives in, rewrites the ones that do (removed files as
//! `DELETED` entries, the rest `EXISTING`), and adds one manifest per spec of new files whose data sequence
//! number is the *starting* snapshot's, so equality deletes committed meanwhile still apply to them. Delete
//! files that existed at the start and no longer apply to any remaining live data file are removed in the same
//! snapshot.
//!
//! When a writer committed meanwhile, the commit reloads the table, checks that the new `main` descends from the
//! starting snapshot, and re-validates each group: a group is given up when one of its files is no longer
//! live, or when a position delete (which names files by path) was added that may cover one of them. Appends
//! and equality deletes by others need nothing: they stay as they are.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, FormatVersion, ManifestContentType, ManifestFile,
    ManifestListWriter, ManifestWriterBuilder, Operation, Snapshot as IcebergSnapshot,
    SnapshotReference, SnapshotRetention, Summary, TableMetadata,
};
use iceberg::{TableRequirement, TableUpdate};
use tablebay_catalog::{Catalog, CommitError, IcebergTable, Table, TableChange};

use crate::CompactionError;
use crate::plan::{Group, Live, Plan, Scope, Snapshot, applies, read_snapshot, scope_of};

/// How many times a commit is rebased onto a table that moved before the run gives up.
const MAX_REBASES: u32 = 8;

/// A group rewritten: its inputs and the files written in their place (none when every row is dropped).
#[derive(Debug)]
pub(crate) struct Rewritten {
    pub group: Group,
    pub outputs: Vec<DataFile>,
    /// Rows the rewrite removed (record expiration; compaction removes none).
    pub removed_rows: u64,
}

/// What the commit published.
#[derive(Debug, Default)]
pub(crate) struct Committed {
    pub files_in: u64,
    pub bytes_in: u64,
    pub files_out: u64,
    pub bytes_out: u64,
    pub delete_files_removed: u64,
    pub rows_removed: u64,
    pub groups_committed: u64,
    /// Groups committed with no files in their place.
    pub groups_emptied: u64,
    pub groups_skipped: u64,
    pub snapshot_id: Option<i64>,
}

/// Commits the rewritten groups as one snapshot of `operation` (`replace` for compaction, `delete`/`overwrite`
/// for record expiration), rebasing on concurrent commits; outputs of groups given up are deleted.
pub(crate) async fn commit(
    catalog: &Catalog,
    io: &FileIO,
    table: &Table,
    plan: &Plan,
    mut groups: Vec<Rewritten>,
    operation: Operation,
) -> Result<Committed, CompactionError> {
    let mut base: IcebergTable = plan.start.clone();
    let files = catalog.table_files(table.id);
    let mut skipped = 0u64;
    for attempt in 0..MAX_REBASES {
        let metadata = &base.metadata.metadata;
        let head = metadata.snapshot_for_ref("main").map(|s| s.snapshot_id());
        let Some(head) = head.filter(|head| descends_from(metadata, *head, plan.snapshot_id))
        else {
            // `main` was reset or replaced: nothing of this run applies any more.
            skipped += groups.len() as u64;
            discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
            return Ok(Committed {
                groups_skipped: skipped,
                ..Committed::default()
            });
        };
        let snapshot = match read_snapshot(io, &files, metadata, head).await {
            Ok(s) => s,
            Err(e) => {
                discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
                return Err(e);
            }
        };
        if head != plan.snapshot_id {
            let (keep, give_up) = revalidate(metadata, &snapshot, plan, groups);
            skipped += give_up.len() as u64;
            discard_outputs(io, give_up.iter().flat_map(|g| g.outputs.iter())).await;
            groups = keep;
            if groups.is_empty() {
                return Ok(Committed {
                    groups_skipped: skipped,
                    ..Committed::default()
                });
            }
        }
        let prepared =
            match prepare(io, &base, &snapshot, head, plan, &groups, operation.clone()).await {
                Ok(p) => p,
                Err(e) => {
                    discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
                    return Err(e);
                }
            };
        let snapshot_id = prepared.snapshot.snapshot_id();
        let change = TableChange {
            requirements: vec![TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: Some(head),
            }],
            updates: vec![
                TableUpdate::AddSnapshot {
                    snapshot: prepared.snapshot.clone(),
                },
                TableUpdate::SetSnapshotRef {
                    ref_name: "main".into(),
                    reference: prepared.main_ref.clone(),
                },
            ],
        };
        match catalog
            .commit_table(&base.table, change, &table.bucket.arn.account)
            .await
        {
            Ok(_) => {
                let mut committed = prepared.counts;
                committed.groups_skipped = skipped;
                committed.snapshot_id = Some(snapshot_id);
                return Ok(committed);
            }
            Err(CommitError::Conflict(message)) => {
                tracing::info!(table = %table.id, attempt, %message, "compaction commit lost a race: rebasing");
                discard_paths(io, &prepared.metadata_files).await;
                base = match catalog.reload_iceberg_table(&base.table).await {
                    Ok(b) => b,
                    Err(e) => {
                        discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
                        return Err(e.into());
                    }
                };
                let jitter = u64::from(rand::random::<u8>() % 20);
                tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt + 1) + jitter))
                    .await;
            }
            Err(e @ CommitError::StateUnknown(_)) => {
                // The snapshot may be live: keep every file it might reference.
                return Err(e.into());
            }
            Err(e) => {
                discard_paths(io, &prepared.metadata_files).await;
                discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
                return Err(e.into());
            }
        }
    }
    discard_outputs(io, groups.iter().flat_map(|g| g.outputs.iter())).await;
    Err(CompactionError::Conflict(format!(
        "the table kept changing: gave up after {MAX_REBASES} rebases"
    )))
}

/// Whether `ancestor` is `head` or one of its parents.
fn descends_from(metadata: &TableMetadata, head: i64, ancestor: i64) -> bool {
    let mut next = Some(head);
    while let Some(id) = next {
        if id == ancestor {
            return true;
        }
        next = metadata
            .snapshot_by_id(id)
            .and_then(|s| s.parent_snapshot_id());
    }
    false
}

/// Splits the groups into those that still apply on the moved table and those to give up.
fn revalidate(
    metadata: &TableMetadata,
    current: &Snapshot,
    plan: &Plan,
    groups: Vec<Rewritten>,
) -> (Vec<Rewritten>, Vec<Rewritten>) {
    let live: HashSet<&str> = current.live().map(|f| f.path()).collect();
    // Position deletes (and deletion vectors) added since the start name files by path: they may cover a file
    // being replaced, whose rows they would then no longer delete.
    let new_positional: Vec<&Live> = current
        .live()
        .filter(|f| {
            f.content() == DataContentType::PositionDeletes && f.sequence() > plan.sequence_number
        })
        .collect();
    groups.into_iter().partition(|rewritten| {
        let group = &rewritten.group;
        let paths: HashSet<&str> = group.inputs.iter().map(|i| i.data.path()).collect();
        let all_live = paths.iter().all(|p| live.contains(p));
        let touched = new_positional.iter().any(|d| {
            let in_scope = match scope_of(metadata, d) {
                Scope::Global => true,
                Scope::Partition(spec, partition) => {
                    spec == group.spec_id && partition == group.partition
                }
            };
            in_scope
                && d.entry
                    .data_file()
                    .referenced_data_file()
                    .is_none_or(|p| paths.contains(p.as_str()))
        });
        all_live && !touched
    })
}

/// A snapshot ready to commit and the files written for it.
struct Prepared {
    snapshot: IcebergSnapshot,
    main_ref: SnapshotReference,
    metadata_files: Vec<String>,
    counts: Committed,
}

async fn prepare(
    io: &FileIO,
    base: &IcebergTable,
    current: &Snapshot,
    head: i64,
    plan: &Plan,
    groups: &[Rewritten],
    operation: Operation,
) -> Result<Prepared, CompactionError> {
    let metadata = &base.metadata.metadata;
    let version = metadata.format_version();
    let snapshot_id = new_snapshot_id(metadata);
    let sequence_number = metadata.last_sequence_number() + 1;
    let rewritten: HashSet<&str> = groups
        .iter()
        .flat_map(|g| g.group.inputs.iter().map(|i| i.data.path()))
        .collect();
    let removed_deletes = dangling_deletes(metadata, current, &rewritten, plan.sequence_number);
    let mut metadata_files = Vec::new();
    let mut manifests: Vec<ManifestFile> = Vec::new();
    let mut counts = Committed {
        groups_committed: groups.len() as u64,
        rows_removed: groups.iter().map(|g| g.removed_rows).sum(),
        groups_emptied: groups.iter().filter(|g| g.outputs.is_empty()).count() as u64,
        ..Committed::default()
    };
    let mut delta = SummaryDelta::default();

    for (file, entries) in &current.manifests {
        let touched = entries
            .iter()
            .any(|e| rewritten.contains(e.path()) || removed_deletes.contains(e.path()));
        if !touched {
            manifests.push(file.clone());
            continue;
        }
        let location = manifest_location(metadata, metadata_files.len());
        let mut writer = manifest_writer(
            io,
            metadata,
            &location,
            snapshot_id,
            file.partition_spec_id,
            file.content,
        )?;
        for entry in entries {
            let data_file = entry.entry.data_file().clone();
            let sequence = entry.sequence();
            let file_sequence = entry.entry.file_sequence_number.or(Some(sequence));
            if rewritten.contains(entry.path()) || removed_deletes.contains(entry.path()) {
                delta.removed.add(&data_file);
                if data_file.content_type() == DataContentType::Data {
                    counts.files_in += 1;
                    counts.bytes_in += data_file.file_size_in_bytes();
                } else {
                    counts.delete_files_removed += 1;
                }
                writer.add_delete_file(data_file, sequence, file_sequence)?;
            } else {
                let added_by = entry.entry.snapshot_id().unwrap_or(head);
                writer.add_existing_file(data_file, added_by, sequence, file_sequence)?;
            }
        }
        metadata_files.push(location);
        manifests.push(writer.write_manifest_file().await?);
    }

    let mut outputs_by_spec: BTreeMap<i32, Vec<&DataFile>> = BTreeMap::new();
    for rewritten in groups {
        outputs_by_spec
            .entry(rewritten.group.spec_id)
            .or_default()
            .extend(rewritten.outputs.iter());
    }
    for (spec_id, outputs) in outputs_by_spec {
        if outputs.is_empty() {
            continue;
        }
        let location = manifest_location(metadata, metadata_files.len());
        let mut writer = manifest_writer(
            io,
            metadata,
            &location,
            snapshot_id,
            spec_id,
            ManifestContentType::Data,
        )?;
        for output in outputs {
            let output = output.clone();
            delta.added.add(&output);
            counts.files_out += 1;
            counts.bytes_out += output.file_size_in_bytes();
            // The starting snapshot's data sequence number: deletes committed meanwhile still apply.
            writer.add_file(output, plan.sequence_number)?;
        }
        metadata_files.push(location);
        manifests.push(writer.write_manifest_file().await?);
    }

    let list_location = format!(
        "{}/metadata/snap-{snapshot_id}-1-{}.avro",
        metadata.location().trim_end_matches('/'),
        uuid::Uuid::now_v7()
    );
    let list_output = io.new_output(&list_location)?.writer().await?;
    let mut list = match version {
        FormatVersion::V1 => ManifestListWriter::v1(list_output, snapshot_id, Some(head)),
        _ => ManifestListWriter::v2(list_output, snapshot_id, Some(head), sequence_number),
    };
    list.add_manifests(manifests.into_iter())?;
    list.close().await?;
    metadata_files.push(list_location.clone());

    let mut totals = SummaryCounts::default();
    for file in current
        .live()
        .filter(|f| !rewritten.contains(f.path()) && !removed_deletes.contains(f.path()))
    {
        totals.add(file.entry.data_file());
    }
    for output in groups.iter().flat_map(|g| g.outputs.iter()) {
        totals.add(output);
    }
    let snapshot = IcebergSnapshot::builder()
        .with_snapshot_id(snapshot_id)
        .with_parent_snapshot_id(Some(head))
        .with_sequence_number(sequence_number)
        .with_timestamp_ms(chrono::Utc::now().timestamp_millis())
        .with_manifest_list(list_location)
        .with_summary(Summary {
            operation,
            additional_properties: delta.render(&totals, groups),
        })
        .with_schema_id(metadata.current_schema_id())
        .build();
    let main_ref = SnapshotReference {
        snapshot_id,
        retention: main_retention(base),
    };
    Ok(Prepared {
        snapshot,
        main_ref,
        metadata_files,
        counts,
    })
}

/// The delete files that existed at the start and apply to no live data file once `rewritten` is gone.
fn dangling_deletes(
    metadata: &TableMetadata,
    current: &Snapshot,
    rewritten: &HashSet<&str>,
    start_sequence: i64,
) -> HashSet<String> {
    let mut data_by_scope: HashMap<Scope, Vec<&Live>> = HashMap::new();
    let mut all_data = Vec::new();
    for file in current
        .live()
        .filter(|f| f.content() == DataContentType::Data && !rewritten.contains(f.path()))
    {
        data_by_scope
            .entry(scope_of(metadata, file))
            .or_default()
            .push(file);
        all_data.push(file);
    }
    current
        .live()
        .filter(|d| d.content() != DataContentType::Data && d.sequence() <= start_sequence)
        .filter(|d| {
            let candidates: &[&Live] = match scope_of(metadata, d) {
                Scope::Global => &all_data,
                scope => data_by_scope.get(&scope).map(Vec::as_slice).unwrap_or(&[]),
            };
            !candidates.iter().any(|data| applies(d, data))
        })
        .map(|d| d.path().to_string())
        .collect()
}

pub(crate) fn manifest_location(metadata: &TableMetadata, index: usize) -> String {
    format!(
        "{}/metadata/{}-m{index}.avro",
        metadata.location().trim_end_matches('/'),
        uuid::Uuid::now_v7()
    )
}

pub(crate) fn manifest_writer(
    io: &FileIO,
    metadata: &TableMetadata,
    location: &str,
    snapshot_id: i64,
    spec_id: i32,
    content: ManifestContentType,
) -> Result<iceberg::spec::ManifestWriter, CompactionError> {
    let spec = metadata
        .partition_spec_by_id(spec_id)
        .ok_or_else(|| CompactionError::Internal(format!("partition spec {spec_id} is missing")))?;
    let builder = ManifestWriterBuilder::new(
        io.new_output(location)?,
        Some(snapshot_id),
        metadata.current_schema().clone(),
        spec.as_ref().clone(),
    );
    Ok(match (metadata.format_version(), content) {
        (FormatVersion::V1, _) => builder.build_v1(),
        (_, ManifestContentType::Data) => builder.build_v2_data(),
        (_, ManifestContentType::Deletes) => builder.build_v2_deletes(),
    })
}

/// A fresh positive snapshot id that the table does not use.
pub(crate) fn new_snapshot_id(metadata: &TableMetadata) -> i64 {
    loop {
        let id = rand::random::<i64>() & i64::MAX;
        if id != 0 && metadata.snapshot_by_id(id).is_none() {
            return id;
        }
    }
}

/// The retention settings of `main`, kept as they are.
pub(crate) fn main_retention(base: &IcebergTable) -> SnapshotRetention {
    #[derive(serde::Deserialize)]
    struct Refs {
        #[serde(default)]
        refs: HashMap<String, SnapshotReference>,
    }
    serde_json::from_slice::<Refs>(&base.metadata.json)
        .ok()
        .and_then(|mut r| r.refs.remove("main"))
        .map(|r| r.retention)
        .unwrap_or(SnapshotRetention::branch(None, None, None))
}

/// Snapshot summary counts (the spec's "Optional Snapshot Summary Fields").
#[derive(Default)]
struct SummaryCounts {
    data_files: u64,
    delete_files: u64,
    position_delete_files: u64,
    equality_delete_files: u64,
    records: u64,
    position_deletes: u64,
    equality_deletes: u64,
    bytes: u64,
}

impl SummaryCounts {
    fn add(&mut self, file: &DataFile) {
        self.bytes += file.file_size_in_bytes();
        match file.content_type() {
            DataContentType::Data => {
                self.data_files += 1;
                self.records += file.record_count();
            }
            DataContentType::PositionDeletes => {
                self.delete_files += 1;
                self.position_delete_files += 1;
                self.position_deletes += file.record_count();
            }
            DataContentType::EqualityDeletes => {
                self.delete_files += 1;
                self.equality_delete_files += 1;
                self.equality_deletes += file.record_count();
            }
        }
    }
}

/// What the snapshot adds and removes.
#[derive(Default)]
struct SummaryDelta {
    added: SummaryCounts,
    removed: SummaryCounts,
}

impl SummaryDelta {
    fn render(&self, totals: &SummaryCounts, groups: &[Rewritten]) -> HashMap<String, String> {
        let partitions: HashSet<(i32, &iceberg::spec::Struct)> = groups
            .iter()
            .map(|g| (g.group.spec_id, &g.group.partition))
            .collect();
        let (a, r, t) = (&self.added, &self.removed, totals);
        [
            ("added-data-files", a.data_files),
            ("deleted-data-files", r.data_files),
            ("added-records", a.records),
            ("deleted-records", r.records),
            ("added-files-size", a.bytes),
            ("removed-files-size", r.bytes),
            ("removed-delete-files", r.delete_files),
            ("removed-position-delete-files", r.position_delete_files),
            ("removed-equality-delete-files", r.equality_delete_files),
            ("removed-position-deletes", r.position_deletes),
            ("removed-equality-deletes", r.equality_deletes),
            ("changed-partition-count", partitions.len() as u64),
            ("total-records", t.records),
            ("total-files-size", t.bytes),
            ("total-data-files", t.data_files),
            ("total-delete-files", t.delete_files),
            ("total-position-deletes", t.position_deletes),
            ("total-equality-deletes", t.equality_deletes),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}

pub(crate) async fn discard_paths(io: &FileIO, paths: &[String]) {
    for path in paths {
        if let Err(e) = io.delete(path).await {
            tracing::warn!(%path, error = %e, "could not remove an unpublished compaction file");
        }
    }
}

async fn discard_outputs<'a>(io: &FileIO, files: impl Iterator<Item = &'a DataFile>) {
    let paths: Vec<String> = files.map(|f| f.file_path().to_string()).collect();
    discard_paths(io, &paths).await;
}
