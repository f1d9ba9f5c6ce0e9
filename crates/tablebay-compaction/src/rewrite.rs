//! Rewriting one group: iceberg-rust's Arrow reader streams the group's data files with their delete files
//! applied (record batches, a few at a time), and its rolling Parquet writer writes them into files near the
//! target size in the group's partition. With a sort or z-order, rows are buffered up to [`SORT_BUFFER_BYTES`],
//! ordered on the blocking pool, and each buffer becomes its own file(s), so memory stays bounded whatever the
//! group's size. Record expiration rewrites a file through the same reader and writer, keeping only the rows its
//! cutoff lets through.

use arrow_array::RecordBatch;
use futures::{StreamExt, TryStreamExt};
use iceberg::Runtime;
use iceberg::arrow::ArrowReaderBuilder;
use iceberg::io::FileIO;
use iceberg::scan::{FileScanTask, FileScanTaskDeleteFile};
use iceberg::spec::{DataFile, DataFileFormat, PartitionKey, SchemaRef};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::expire::Cutoff;
use crate::order::{Ordering, ordering};
use crate::plan::{Group, Input, Plan};
use crate::{CompactionError, CompactionSettings};

/// Rows buffered for a sort or z-order, in bytes of Arrow memory.
const SORT_BUFFER_BYTES: usize = 256 * 1024 * 1024;

/// Data files read at once within a group (batches of different files interleave; order is not kept anyway
/// by bin-packing, and sorting reorders).
const READ_AHEAD_FILES: usize = 2;

/// Rows per record batch read.
const BATCH_ROWS: usize = 8192;

/// Rows per Parquet row group written: bounds the writer's buffer.
const ROW_GROUP_ROWS: usize = 1024 * 1024;

/// Bytes (in memory) per row group, at most. The rolling writer measures a file as its flushed, compressed
/// bytes plus the uncompressed estimate of the row group in progress; row groups of an eighth of the target
/// keep that estimate's error small, so files roll near the target as stored, not as held in memory.
const ROW_GROUP_BYTES: (usize, usize) = (8 * 1024, 128 * 1024 * 1024);

/// The reader's task for one data file with the delete files that apply to it: every column of `schema`, the
/// whole file. Compaction's rewrite and the console's preview read through it, so both see the same rows.
pub(crate) fn scan_task(
    schema: &SchemaRef,
    field_ids: &[i32],
    input: &Input,
) -> iceberg::Result<FileScanTask> {
    let data = input.data.entry.data_file();
    let deletes = input
        .deletes
        .iter()
        .map(|d| {
            FileScanTaskDeleteFile::builder()
                .with_file_path(d.path().to_string())
                .with_file_size_in_bytes(d.entry.file_size_in_bytes())
                .with_file_type(d.content())
                .with_partition_spec_id(d.spec_id)
                .with_equality_ids(d.entry.data_file().equality_ids())
                .build()
        })
        .collect();
    Ok(FileScanTask::builder()
        .with_file_size_in_bytes(data.file_size_in_bytes())
        .with_start(0)
        .with_length(data.file_size_in_bytes())
        .with_record_count(Some(data.record_count()))
        .with_data_file_path(data.file_path().to_string())
        .with_data_file_format(DataFileFormat::Parquet)
        .with_schema(schema.clone())
        .with_project_field_ids(field_ids.to_vec())
        .with_deletes(deletes)
        // No partition constants: the reader would fill identity columns as run-end-encoded arrays, which the
        // writer refuses; Iceberg data files carry their source columns anyway.
        .with_case_sensitive(true)
        .build())
}

/// Rows a rewrite read (with its deletes applied) and wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowCounts {
    pub read: u64,
    pub written: u64,
}

/// Rewrites one group; returns the data files written (not yet committed), or `None` when the rewrite would
/// not reduce the number of files. On failure, or when pointless, the files written are deleted.
pub(crate) async fn rewrite(
    io: &FileIO,
    plan: &Plan,
    group: &Group,
    settings: &CompactionSettings,
) -> Result<Option<Vec<DataFile>>, CompactionError> {
    let mut written = Vec::new();
    let outcome = rewrite_into(io, plan, group, settings, None, &mut written).await;
    // Without deletes applied, as many files out as in gains nothing and would be redone on every run.
    let pointless = outcome.is_ok()
        && group.inputs.iter().all(|i| i.deletes.is_empty())
        && written.len() >= group.inputs.len();
    match outcome {
        Ok(_) if !pointless => Ok(Some(written)),
        other => {
            discard_written(io, &written).await;
            other.map(|_| None)
        }
    }
}

/// Rewrites one group keeping only the rows `keep` lets through (record expiration); returns the data files
/// written (not yet committed) and the rows read and written. On failure the files written are deleted.
pub(crate) async fn rewrite_kept(
    io: &FileIO,
    plan: &Plan,
    group: &Group,
    settings: &CompactionSettings,
    keep: &Cutoff,
) -> Result<(Vec<DataFile>, RowCounts), CompactionError> {
    let mut written = Vec::new();
    match rewrite_into(io, plan, group, settings, Some(keep), &mut written).await {
        Ok(rows) => Ok((written, rows)),
        Err(e) => {
            discard_written(io, &written).await;
            Err(e)
        }
    }
}

/// Deletes files a rewrite wrote that will not be committed.
pub(crate) async fn discard_written(io: &FileIO, written: &[DataFile]) {
    for file in written {
        if let Err(e) = io.delete(file.file_path()).await {
            tracing::warn!(path = file.file_path(), error = %e, "could not remove a rewrite output");
        }
    }
}

async fn rewrite_into(
    io: &FileIO,
    plan: &Plan,
    group: &Group,
    settings: &CompactionSettings,
    keep: Option<&Cutoff>,
    written: &mut Vec<DataFile>,
) -> Result<RowCounts, CompactionError> {
    let metadata = plan.metadata();
    let schema = metadata.current_schema().clone();
    let spec = metadata
        .partition_spec_by_id(group.spec_id)
        .ok_or_else(|| {
            CompactionError::Internal(format!("partition spec {} is missing", group.spec_id))
        })?
        .clone();
    let field_ids: Vec<i32> = schema.as_struct().fields().iter().map(|f| f.id).collect();
    let tasks: Vec<iceberg::Result<FileScanTask>> = group
        .inputs
        .iter()
        .map(|input| scan_task(&schema, &field_ids, input))
        .collect();
    let reader = ArrowReaderBuilder::new(io.clone(), Runtime::try_current()?)
        .with_batch_size(BATCH_ROWS)
        // Two files in flight: the next file's fetch and decode overlap the current one's encoding.
        .with_data_file_concurrency_limit(READ_AHEAD_FILES)
        .build();
    let mut batches = reader.read(futures::stream::iter(tasks).boxed())?.stream();

    let partition_key = (!spec.is_unpartitioned()).then(|| {
        PartitionKey::new(
            spec.as_ref().clone(),
            schema.clone(),
            group.partition.clone(),
        )
    });
    let prefix = if keep.is_some() {
        "rewritten"
    } else {
        "compacted"
    };
    let writer = OutputWriter::new(
        io,
        metadata,
        schema.clone(),
        partition_key,
        settings,
        prefix,
    )?;
    let order = ordering(metadata, &schema, settings.strategy);
    let mut rows = RowCounts::default();
    match order {
        None => {
            let mut out = writer.open().await?;
            while let Some(batch) = next_kept(&mut batches, keep, &mut rows).await? {
                out.write(batch).await?;
            }
            written.extend(out.close().await?);
        }
        Some(order) => {
            let mut buffer: Vec<RecordBatch> = Vec::new();
            let mut buffered = 0usize;
            while let Some(batch) = next_kept(&mut batches, keep, &mut rows).await? {
                buffered += batch.get_array_memory_size();
                buffer.push(batch);
                if buffered >= SORT_BUFFER_BYTES {
                    written
                        .extend(write_ordered(&writer, &order, std::mem::take(&mut buffer)).await?);
                    buffered = 0;
                }
            }
            if !buffer.is_empty() {
                written.extend(write_ordered(&writer, &order, buffer).await?);
            }
        }
    }
    Ok(rows)
}

/// The next batch read, counted, and cut to the rows kept.
async fn next_kept(
    batches: &mut (impl futures::Stream<Item = iceberg::Result<RecordBatch>> + Unpin),
    keep: Option<&Cutoff>,
    rows: &mut RowCounts,
) -> Result<Option<RecordBatch>, CompactionError> {
    let Some(batch) = batches.try_next().await? else {
        return Ok(None);
    };
    rows.read += batch.num_rows() as u64;
    let batch = match keep {
        Some(cutoff) => cutoff.keep(&batch)?,
        None => batch,
    };
    rows.written += batch.num_rows() as u64;
    Ok(Some(batch))
}

/// Orders one buffer on the blocking pool and writes it as its own file(s).
async fn write_ordered(
    writer: &OutputWriter,
    order: &Ordering,
    buffer: Vec<RecordBatch>,
) -> Result<Vec<DataFile>, CompactionError> {
    let order = order.clone();
    let schema = writer.arrow_schema(&buffer)?;
    let sorted = tokio::task::spawn_blocking(move || order.apply(&schema, &buffer))
        .await
        .map_err(|e| CompactionError::Internal(format!("the sort task failed: {e}")))??;
    let mut out = writer.open().await?;
    out.write(sorted).await?;
    out.close().await
}

type Writer = iceberg::writer::base_writer::data_file_writer::DataFileWriter<
    ParquetWriterBuilder,
    DefaultLocationGenerator,
    DefaultFileNameGenerator,
>;

/// Opens data file writers of the group's partition that roll over at the target size.
pub(crate) struct OutputWriter {
    builder: DataFileWriterBuilder<
        ParquetWriterBuilder,
        DefaultLocationGenerator,
        DefaultFileNameGenerator,
    >,
    partition_key: Option<PartitionKey>,
}

impl OutputWriter {
    pub(crate) fn new(
        io: &FileIO,
        metadata: &iceberg::spec::TableMetadata,
        schema: SchemaRef,
        partition_key: Option<PartitionKey>,
        settings: &CompactionSettings,
        prefix: &str,
    ) -> Result<Self, CompactionError> {
        // Java's default codec; zstd level 1 keeps compaction CPU-cheap.
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(1).map_err(|e| CompactionError::Internal(e.to_string()))?,
            ))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(
                usize::try_from(settings.target_file_size_bytes / 8)
                    .unwrap_or(usize::MAX)
                    .clamp(ROW_GROUP_BYTES.0, ROW_GROUP_BYTES.1),
            ))
            .build();
        let parquet = ParquetWriterBuilder::new(properties, schema);
        let names = DefaultFileNameGenerator::new(
            format!("{prefix}-{}", uuid::Uuid::now_v7()),
            None,
            DataFileFormat::Parquet,
        );
        let target = usize::try_from(settings.target_file_size_bytes).unwrap_or(usize::MAX);
        let rolling = RollingFileWriterBuilder::new(
            parquet,
            target,
            io.clone(),
            DefaultLocationGenerator::new(metadata)?,
            names,
        );
        Ok(Self {
            builder: DataFileWriterBuilder::new(rolling),
            partition_key,
        })
    }

    pub(crate) async fn open(&self) -> Result<OpenWriter, CompactionError> {
        Ok(OpenWriter(
            self.builder.build(self.partition_key.clone()).await?,
        ))
    }

    fn arrow_schema(
        &self,
        buffer: &[RecordBatch],
    ) -> Result<arrow_schema::SchemaRef, CompactionError> {
        buffer
            .first()
            .map(|b| b.schema())
            .ok_or_else(|| CompactionError::Internal("an empty sort buffer".into()))
    }
}

pub(crate) struct OpenWriter(Writer);

impl OpenWriter {
    pub(crate) async fn write(&mut self, batch: RecordBatch) -> Result<(), CompactionError> {
        if batch.num_rows() > 0 {
            self.0.write(batch).await?;
        }
        Ok(())
    }

    pub(crate) async fn close(mut self) -> Result<Vec<DataFile>, CompactionError> {
        Ok(self.0.close().await?)
    }
}
