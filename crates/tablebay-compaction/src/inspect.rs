//! What the web console shows of a table's current snapshot, read exactly the way compaction reads it: the live
//! files of the `main` snapshot (the manifests, through the table's own storage), and its first rows streamed
//! through iceberg-rust's Arrow reader with the delete files that apply to each data file (the same scan tasks
//! as a rewrite, `rewrite::scan_task`). Rows are rendered to text here so that callers need no Arrow.

use arrow_array::Array;
use futures::{StreamExt, TryStreamExt};
use iceberg::Runtime;
use iceberg::arrow::ArrowReaderBuilder;
use iceberg::spec::{DataContentType, DataFileFormat};
use tablebay_catalog::{Catalog, TableRef};

use crate::CompactionError;
use crate::plan::{DeleteIndex, Input, read_snapshot};
use crate::rewrite::scan_task;

/// Characters of one rendered cell, at most (longer values end in `…`).
const MAX_CELL_CHARS: usize = 200;

/// The live files of a table's current snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveFiles {
    /// The snapshot read (`None`: the table has no snapshot yet).
    pub snapshot_id: Option<i64>,
    /// The size in bytes of each live data file.
    pub data_file_sizes: Vec<u64>,
    /// Live position and equality delete files.
    pub delete_files: u64,
}

/// The first rows of a table's current snapshot with deletes applied, each cell rendered as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preview {
    /// The snapshot read (`None`: the table has no snapshot yet, and no rows).
    pub snapshot_id: Option<i64>,
    /// The column names of the current schema, in order.
    pub columns: Vec<String>,
    /// At most the asked-for number of rows; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

/// What [`inspect`] read of one snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    /// Its live files.
    pub files: LiveFiles,
    /// Its first rows, when asked for.
    pub preview: Option<Preview>,
}

/// The live data and delete files of the table's current `main` snapshot and, with `preview_rows`, its first
/// rows with deletes applied (read file by file until that many rows have come, so a large table costs only the
/// files those rows are in). The snapshot's manifests are read once for both.
pub async fn inspect(
    catalog: &Catalog,
    table: &TableRef,
    preview_rows: Option<usize>,
) -> Result<Inspection, CompactionError> {
    let loaded = catalog.load_iceberg_table(table).await?;
    let metadata = &loaded.metadata.metadata;
    let schema = metadata.current_schema().clone();
    let columns: Vec<String> = schema
        .as_struct()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let Some(current) = metadata.snapshot_for_ref("main") else {
        return Ok(Inspection {
            files: LiveFiles::default(),
            preview: preview_rows.map(|_| Preview {
                snapshot_id: None,
                columns,
                rows: Vec::new(),
            }),
        });
    };
    let files = catalog.table_files(loaded.table.id);
    files.check_metadata(metadata)?;
    let io = crate::storage::file_io(&files);
    let snapshot = read_snapshot(&io, &files, metadata, current.snapshot_id()).await?;
    let mut live = LiveFiles {
        snapshot_id: Some(current.snapshot_id()),
        ..LiveFiles::default()
    };
    for file in snapshot.live() {
        match file.content() {
            DataContentType::Data => live.data_file_sizes.push(file.entry.file_size_in_bytes()),
            DataContentType::PositionDeletes | DataContentType::EqualityDeletes => {
                live.delete_files += 1;
            }
        }
    }
    let Some(limit) = preview_rows else {
        return Ok(Inspection {
            files: live,
            preview: None,
        });
    };
    let deletes = DeleteIndex::new(metadata, &snapshot);
    let field_ids: Vec<i32> = schema.as_struct().fields().iter().map(|f| f.id).collect();
    let mut tasks = Vec::new();
    for data in snapshot
        .live()
        .filter(|f| f.content() == DataContentType::Data)
    {
        let applying = deletes.for_data(metadata, data);
        if data.entry.file_format() != DataFileFormat::Parquet
            || applying
                .iter()
                .any(|d| d.entry.file_format() != DataFileFormat::Parquet)
        {
            return Err(CompactionError::Invalid(format!(
                "{} (or a delete file that applies to it) is not Parquet; the preview reads Parquet only",
                data.path()
            )));
        }
        tasks.push(scan_task(
            &schema,
            &field_ids,
            &Input {
                data: data.clone(),
                deletes: applying,
            },
        ));
    }
    let reader = ArrowReaderBuilder::new(io.clone(), Runtime::try_current()?)
        .with_batch_size(limit.clamp(1, 8192))
        // One file at a time: the stream is dropped as soon as enough rows came.
        .with_data_file_concurrency_limit(1)
        .build();
    let mut batches = reader.read(futures::stream::iter(tasks).boxed())?.stream();
    let mut rows = Vec::new();
    while rows.len() < limit {
        let Some(batch) = batches.try_next().await? else {
            break;
        };
        let options = arrow_cast::display::FormatOptions::default();
        let formatters = batch
            .columns()
            .iter()
            .map(|column| arrow_cast::display::ArrayFormatter::try_new(column.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CompactionError::Internal(format!("a column cannot be shown: {e}")))?;
        for row in 0..batch.num_rows() {
            if rows.len() >= limit {
                break;
            }
            let cells = batch
                .columns()
                .iter()
                .zip(&formatters)
                .map(|(column, formatter)| {
                    (!column.is_null(row)).then(|| cell(formatter.value(row).to_string()))
                })
                .collect();
            rows.push(cells);
        }
    }
    Ok(Inspection {
        files: live,
        preview: Some(Preview {
            snapshot_id: Some(current.snapshot_id()),
            columns,
            rows,
        }),
    })
}

/// A cell's text, cut at [`MAX_CELL_CHARS`].
fn cell(text: String) -> String {
    match text.char_indices().nth(MAX_CELL_CHARS) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cells_are_cut() {
        assert_eq!(cell("abc".into()), "abc");
        let long = "é".repeat(MAX_CELL_CHARS + 5);
        let cut = cell(long);
        assert_eq!(cut.chars().count(), MAX_CELL_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
