//! Appending rows the server itself produces (access log records): Arrow batches written as Parquet data files
//! in their partitions, committed as one `append` snapshot through the catalog's ordinary commit.
//!
//! It is a fast append: the parent's manifests stay as they are and one new manifest lists the new files, so a
//! commit costs the same however large the table is. A commit that loses a race to another writer is rebased
//! (the data files are kept; the manifest and manifest list are written again for the new parent).

use std::collections::HashMap;
use std::time::Duration;

use arrow_array::RecordBatch;
use iceberg::io::FileIO;
use iceberg::spec::{
    DataFile, FormatVersion, ManifestContentType, ManifestFile, ManifestList, ManifestListWriter,
    Operation, PartitionKey, Snapshot, SnapshotReference, Struct, Summary,
};
use iceberg::{TableRequirement, TableUpdate};
use tablebay_catalog::{Catalog, CommitError, IcebergTable, Table, TableChange};

use crate::commit::{
    discard_paths, main_retention, manifest_location, manifest_writer, new_snapshot_id,
};
use crate::rewrite::{OutputWriter, discard_written};
use crate::{CompactionError, CompactionSettings, storage};

/// How many times an append is rebased onto a table that moved before it gives up.
const MAX_REBASES: u32 = 16;

/// Rows of one partition (its values in the table's default spec; [`Struct::empty`] when unpartitioned).
pub struct PartitionRows {
    /// The partition's values.
    pub partition: Struct,
    /// The rows, in the table's current schema.
    pub rows: RecordBatch,
}

/// Writes `batches` into `table` as one `append` snapshot on `main`; returns the snapshot id. Nothing is
/// visible unless the commit succeeds; files of a failed append are removed (unless its outcome is unknown).
pub async fn append_rows(
    catalog: &Catalog,
    table: &Table,
    batches: Vec<PartitionRows>,
) -> Result<i64, CompactionError> {
    let mut base = catalog.reload_iceberg_table(table).await?;
    let files = catalog.table_files(table.id);
    let io = storage::file_io(&files);
    let written = write(&io, &base, batches).await?;
    for attempt in 0..MAX_REBASES {
        let prepared = match prepare(&io, &base, &written).await {
            Ok(p) => p,
            Err(e) => {
                discard_written(&io, &written).await;
                return Err(e);
            }
        };
        let change = TableChange {
            requirements: vec![TableRequirement::RefSnapshotIdMatch {
                r#ref: "main".into(),
                snapshot_id: prepared.parent,
            }],
            updates: vec![
                TableUpdate::AddSnapshot {
                    snapshot: prepared.snapshot.clone(),
                },
                TableUpdate::SetSnapshotRef {
                    ref_name: "main".into(),
                    reference: SnapshotReference {
                        snapshot_id: prepared.snapshot.snapshot_id(),
                        retention: main_retention(&base),
                    },
                },
            ],
        };
        match catalog
            .commit_table(&base.table, change, &table.bucket.arn.account)
            .await
        {
            Ok(_) => return Ok(prepared.snapshot.snapshot_id()),
            Err(CommitError::Conflict(message)) => {
                tracing::debug!(table = %table.id, attempt, %message, "append lost a race: rebasing");
                discard_paths(&io, &prepared.metadata_files).await;
                base = match catalog.reload_iceberg_table(&base.table).await {
                    Ok(b) => b,
                    Err(e) => {
                        discard_written(&io, &written).await;
                        return Err(e.into());
                    }
                };
                let jitter = u64::from(rand::random::<u8>() % 20);
                tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt + 1) + jitter))
                    .await;
            }
            // The snapshot may be live: keep every file it might reference.
            Err(e @ CommitError::StateUnknown(_)) => return Err(e.into()),
            Err(e) => {
                discard_paths(&io, &prepared.metadata_files).await;
                discard_written(&io, &written).await;
                return Err(e.into());
            }
        }
    }
    discard_written(&io, &written).await;
    Err(CompactionError::Conflict(format!(
        "the table kept changing: gave up the append after {MAX_REBASES} rebases"
    )))
}

/// Writes each partition's rows into data files of the table's default spec.
async fn write(
    io: &FileIO,
    base: &IcebergTable,
    batches: Vec<PartitionRows>,
) -> Result<Vec<DataFile>, CompactionError> {
    let metadata = &base.metadata.metadata;
    let schema = metadata.current_schema().clone();
    let spec = metadata.default_partition_spec().as_ref().clone();
    let mut written = Vec::new();
    for batch in batches {
        if batch.rows.num_rows() == 0 {
            continue;
        }
        let key = (!spec.is_unpartitioned())
            .then(|| PartitionKey::new(spec.clone(), schema.clone(), batch.partition));
        let result = async {
            let writer = OutputWriter::new(
                io,
                metadata,
                schema.clone(),
                key,
                &CompactionSettings::default(),
                "append",
            )?;
            let mut out = writer.open().await?;
            out.write(batch.rows).await?;
            out.close().await
        }
        .await;
        match result {
            Ok(files) => written.extend(files),
            Err(e) => {
                discard_written(io, &written).await;
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// A snapshot ready to commit on top of `parent`, and the metadata files written for it.
struct Prepared {
    parent: Option<i64>,
    snapshot: Snapshot,
    metadata_files: Vec<String>,
}

async fn prepare(
    io: &FileIO,
    base: &IcebergTable,
    files: &[DataFile],
) -> Result<Prepared, CompactionError> {
    let metadata = &base.metadata.metadata;
    let parent = metadata.snapshot_for_ref("main");
    let snapshot_id = new_snapshot_id(metadata);
    let sequence_number = metadata.last_sequence_number() + 1;
    let mut manifests: Vec<ManifestFile> = match parent {
        Some(parent) => {
            let bytes = io.new_input(parent.manifest_list())?.read().await?;
            ManifestList::parse_with_version(&bytes, metadata.format_version())?
                .consume_entries()
                .into_iter()
                .collect()
        }
        None => Vec::new(),
    };
    let location = manifest_location(metadata, 0);
    let mut writer = manifest_writer(
        io,
        metadata,
        &location,
        snapshot_id,
        metadata.default_partition_spec_id(),
        ManifestContentType::Data,
    )?;
    for file in files {
        writer.add_file(file.clone(), sequence_number)?;
    }
    let mut metadata_files = vec![location];
    manifests.push(writer.write_manifest_file().await?);

    let parent_id = parent.map(|p| p.snapshot_id());
    let list_location = format!(
        "{}/metadata/snap-{snapshot_id}-1-{}.avro",
        metadata.location().trim_end_matches('/'),
        uuid::Uuid::now_v7()
    );
    let output = io.new_output(&list_location)?.writer().await?;
    let mut list = match metadata.format_version() {
        FormatVersion::V1 => ManifestListWriter::v1(output, snapshot_id, parent_id),
        _ => ManifestListWriter::v2(output, snapshot_id, parent_id, sequence_number),
    };
    list.add_manifests(manifests.into_iter())?;
    list.close().await?;
    metadata_files.push(list_location.clone());

    let snapshot = Snapshot::builder()
        .with_snapshot_id(snapshot_id)
        .with_parent_snapshot_id(parent_id)
        .with_sequence_number(sequence_number)
        .with_timestamp_ms(chrono::Utc::now().timestamp_millis())
        .with_manifest_list(list_location)
        .with_summary(Summary {
            operation: Operation::Append,
            additional_properties: summary(parent.map(|p| p.summary()), files),
        })
        .with_schema_id(metadata.current_schema_id())
        .build();
    Ok(Prepared {
        parent: parent_id,
        snapshot,
        metadata_files,
    })
}

/// The snapshot summary: what this append adds, and the totals after it (the parent's plus the added).
fn summary(parent: Option<&Summary>, files: &[DataFile]) -> HashMap<String, String> {
    let records: u64 = files.iter().map(DataFile::record_count).sum();
    let bytes: u64 = files.iter().map(DataFile::file_size_in_bytes).sum();
    let partitions: std::collections::HashSet<&Struct> =
        files.iter().map(DataFile::partition).collect();
    let total = |key: &str| -> u64 {
        parent
            .and_then(|s| s.additional_properties.get(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    [
        ("added-data-files", files.len() as u64),
        ("added-records", records),
        ("added-files-size", bytes),
        ("changed-partition-count", partitions.len() as u64),
        (
            "total-data-files",
            total("total-data-files") + files.len() as u64,
        ),
        ("total-records", total("total-records") + records),
        ("total-files-size", total("total-files-size") + bytes),
        ("total-delete-files", total("total-delete-files")),
        ("total-position-deletes", total("total-position-deletes")),
        ("total-equality-deletes", total("total-equality-deletes")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}
