//! Record expiration (issue 20): removes the rows whose expiration column is older than a cutoff, from the
//! current snapshot of `main`, in one `delete` (files dropped) or `overwrite` (files rewritten) snapshot.
//!
//! - **The column** is the one the table property [`EXPIRATION_COLUMN_PROPERTY`] names (a `timestamp`,
//!   `timestamptz` or `date` column), else the table's only column of those types; anything else fails the run
//!   with a message saying why. S3 Tables fixes the column of its own managed tables; this rule is ours.
//! - **A row expires** when its value is before the cutoff; a `date` counts as its midnight (UTC), and a null
//!   never expires.
//! - **Files proven expired are dropped whole**: a partition value of the column (identity, hour, day, month or
//!   year) whose whole range lies before the cutoff, or an upper bound before it with no nulls. Files proven
//!   live (a lower bound or partition range at or after the cutoff) are not read. Every other file is read
//!   with its deletes applied and rewritten without its expired rows — reading is needed to find them either
//!   way, and the rewrite leaves readers nothing to merge, where position deletes would — and left alone when
//!   none expired.
//! - **Committing** is compaction's ([`crate::commit`]): an `assert-ref-snapshot-id` compare-and-swap that
//!   rebases onto writers' commits and gives up only the files a concurrent change touched. Writers never fail
//!   because of it. Removed files become unreferenced and go the way of every other unreferenced file.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, TimestampMicrosecondType};
use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use chrono::{Datelike, NaiveDate};
use iceberg::spec::{
    DataContentType, DataFileFormat, FormatVersion, Literal, Operation, PrimitiveLiteral,
    PrimitiveType, Schema, Struct, TableMetadata, Transform, Type,
};
use tablebay_catalog::{Catalog, TableRef};

use crate::commit::{self, Rewritten};
use crate::plan::{DeleteIndex, Group, Input, Live, Plan, read_snapshot};
use crate::rewrite::{discard_written, rewrite_kept};
use crate::{CompactionError, CompactionSettings, Strategy, storage};

/// The table property naming the column record expiration compares (`tablebay.record-expiration.column`).
pub const EXPIRATION_COLUMN_PROPERTY: &str = "tablebay.record-expiration.column";

const DAY_MICROS: i64 = 86_400_000_000;
const HOUR_MICROS: i64 = 3_600_000_000;

/// What one record expiration run did (committed files only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpirationReport {
    /// The column compared.
    pub column: String,
    /// Data files removed from the table: dropped whole, or replaced by their rewrite.
    pub deleted_data_files: u64,
    /// Their bytes.
    pub removed_files_size: u64,
    /// Rows removed.
    pub deleted_records: u64,
    /// Files removed with nothing in their place: partition values or column bounds proved every row expired
    /// (the file was not read), or every row read had.
    pub files_dropped: u64,
    /// Files replaced by a rewrite without their expired rows.
    pub files_rewritten: u64,
    /// Files written by the rewrites.
    pub files_out: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Files read that held no expired row (left as they were).
    pub files_read_unchanged: u64,
    /// Files given up: a concurrent change touched them, or reading or writing them failed.
    pub files_skipped: u64,
    /// The snapshot committed, if any.
    pub snapshot_id: Option<i64>,
}

/// The column record expiration compares, and how its values read as microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cutoff {
    field_id: i32,
    name: String,
    kind: ColumnKind,
    required: bool,
    /// Rows whose value (as microseconds since the epoch) is below this expire.
    micros: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColumnKind {
    /// `timestamp` / `timestamptz`: microseconds.
    Timestamp,
    /// `date`: days, compared as their midnight.
    Date,
}

impl Cutoff {
    /// The column by the rule of this module's doc; `Invalid` says why none applies.
    pub(crate) fn resolve(
        schema: &Schema,
        properties: &HashMap<String, String>,
        micros: i64,
    ) -> Result<Self, CompactionError> {
        let kind_of = |t: &Type| match t {
            Type::Primitive(PrimitiveType::Timestamp | PrimitiveType::Timestamptz) => {
                Some(ColumnKind::Timestamp)
            }
            Type::Primitive(PrimitiveType::Date) => Some(ColumnKind::Date),
            _ => None,
        };
        let fields = schema.as_struct().fields();
        let field = match properties.get(EXPIRATION_COLUMN_PROPERTY) {
            Some(name) => {
                let field = fields.iter().find(|f| f.name == *name).ok_or_else(|| {
                    CompactionError::Invalid(format!(
                        "the column '{name}' named by the table property {EXPIRATION_COLUMN_PROPERTY} is not a \
                         top-level column of the table"
                    ))
                })?;
                if kind_of(&field.field_type).is_none() {
                    return Err(CompactionError::Invalid(format!(
                        "the column '{name}' named by the table property {EXPIRATION_COLUMN_PROPERTY} is of type \
                         {}; record expiration needs a timestamp, timestamptz or date column",
                        field.field_type
                    )));
                }
                field
            }
            None => {
                let candidates: Vec<_> = fields
                    .iter()
                    .filter(|f| kind_of(&f.field_type).is_some())
                    .collect();
                match candidates.as_slice() {
                    [only] => *only,
                    [] => {
                        return Err(CompactionError::Invalid(format!(
                            "the table has no timestamp, timestamptz or date column to expire records by; add \
                             one, or name one with the table property {EXPIRATION_COLUMN_PROPERTY}"
                        )));
                    }
                    many => {
                        let names: Vec<&str> = many.iter().map(|f| f.name.as_str()).collect();
                        return Err(CompactionError::Invalid(format!(
                            "the table has {} timestamp, timestamptz or date columns ({}); name the one to expire \
                             records by with the table property {EXPIRATION_COLUMN_PROPERTY}",
                            names.len(),
                            names.join(", ")
                        )));
                    }
                }
            }
        };
        let kind = kind_of(&field.field_type).ok_or_else(|| {
            CompactionError::Internal("the expiration column lost its type".into())
        })?;
        Ok(Self {
            field_id: field.id,
            name: field.name.clone(),
            kind,
            required: field.required,
            micros,
        })
    }

    /// A value of the column as microseconds, from a bound or an identity partition value.
    fn literal_micros(&self, literal: &PrimitiveLiteral) -> Option<i64> {
        match (self.kind, literal) {
            (ColumnKind::Timestamp, PrimitiveLiteral::Long(v)) => Some(*v),
            (ColumnKind::Date, PrimitiveLiteral::Int(d)) => i64::from(*d).checked_mul(DAY_MICROS),
            _ => None,
        }
    }

    /// The batch without its expired rows.
    pub(crate) fn keep(&self, batch: &RecordBatch) -> Result<RecordBatch, CompactionError> {
        let column = batch.column_by_name(&self.name).ok_or_else(|| {
            CompactionError::Internal(format!("the rows read lack the column '{}'", self.name))
        })?;
        let keep: BooleanArray = match column.data_type() {
            DataType::Timestamp(TimeUnit::Microsecond, _) => column
                .as_primitive::<TimestampMicrosecondType>()
                .iter()
                .map(|v| Some(v.is_none_or(|v| v >= self.micros)))
                .collect(),
            DataType::Date32 => column
                .as_primitive::<Date32Type>()
                .iter()
                .map(|v| Some(v.is_none_or(|d| i64::from(d) * DAY_MICROS >= self.micros)))
                .collect(),
            other => {
                return Err(CompactionError::Internal(format!(
                    "the column '{}' reads as {other}, not as a timestamp or date",
                    self.name
                )));
            }
        };
        arrow_select::filter::filter_record_batch(batch, &keep)
            .map_err(|e| CompactionError::Internal(format!("filtering expired rows: {e}")))
    }

    /// What a data file's partition value and column bounds prove about its rows.
    fn classify(&self, metadata: &TableMetadata, file: &Live) -> Verdict {
        let data = file.entry.data_file();
        if let Some(verdict) = self.by_partition(metadata, file.spec_id, data.partition()) {
            return verdict;
        }
        let bound = |bounds: &HashMap<i32, iceberg::spec::Datum>| {
            bounds
                .get(&self.field_id)
                .and_then(|d| self.literal_micros(d.literal()))
        };
        if bound(data.lower_bounds()).is_some_and(|lower| lower >= self.micros) {
            return Verdict::NoneExpired;
        }
        let no_nulls = self.required || data.null_value_counts().get(&self.field_id) == Some(&0);
        if no_nulls && bound(data.upper_bounds()).is_some_and(|upper| upper < self.micros) {
            return Verdict::AllExpired;
        }
        Verdict::Unknown
    }

    /// A partition value of the column proves all or none expired when its whole range lies on one side of the
    /// cutoff (a non-null partition value means no row's value is null).
    fn by_partition(
        &self,
        metadata: &TableMetadata,
        spec_id: i32,
        partition: &Struct,
    ) -> Option<Verdict> {
        let spec = metadata.partition_spec_by_id(spec_id)?;
        for (field, value) in spec.fields().iter().zip(partition.fields()) {
            if field.source_id != self.field_id {
                continue;
            }
            let Some(Literal::Primitive(value)) = value else {
                continue;
            };
            let Some((lo, hi)) = self.range(field.transform, value) else {
                continue;
            };
            if hi <= self.micros {
                return Some(Verdict::AllExpired);
            }
            if lo >= self.micros {
                return Some(Verdict::NoneExpired);
            }
        }
        None
    }

    /// The half-open range `[lo, hi)` of the values (as microseconds) that a partition value of `transform`
    /// holds.
    fn range(&self, transform: Transform, value: &PrimitiveLiteral) -> Option<(i64, i64)> {
        let PrimitiveLiteral::Int(n) = value else {
            // Identity partitions of a timestamp hold longs.
            return match transform {
                Transform::Identity => self.literal_micros(value).map(|v| (v, v.saturating_add(1))),
                _ => None,
            };
        };
        let n = i64::from(*n);
        // Days [first, end) as the column's values: a date is its midnight, so the last day's value is its own
        // midnight, not the end of the day.
        let days = |first: i64, end: i64| -> Option<(i64, i64)> {
            let lo = first.checked_mul(DAY_MICROS)?;
            let hi = match self.kind {
                ColumnKind::Timestamp => end.checked_mul(DAY_MICROS)?,
                ColumnKind::Date => (end - 1).checked_mul(DAY_MICROS)?.checked_add(1)?,
            };
            Some((lo, hi))
        };
        match transform {
            Transform::Identity => self.literal_micros(value).map(|v| (v, v.saturating_add(1))),
            Transform::Day => days(n, n + 1),
            Transform::Hour if self.kind == ColumnKind::Timestamp => Some((
                n.checked_mul(HOUR_MICROS)?,
                (n + 1).checked_mul(HOUR_MICROS)?,
            )),
            Transform::Month => days(month_start_day(n)?, month_start_day(n + 1)?),
            Transform::Year => days(month_start_day(n * 12)?, month_start_day((n + 1) * 12)?),
            _ => None,
        }
    }
}

/// Days since the epoch of the first day of month `months` (months since 1970-01).
fn month_start_day(months: i64) -> Option<i64> {
    let year = i32::try_from(1970 + months.div_euclid(12)).ok()?;
    let month = u32::try_from(months.rem_euclid(12) + 1).ok()?;
    let date = NaiveDate::from_ymd_opt(year, month, 1)?;
    Some(i64::from(date.num_days_from_ce()) - i64::from(epoch_days_from_ce()))
}

fn epoch_days_from_ce() -> i32 {
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .map(|d| d.num_days_from_ce())
        .unwrap_or(719_163)
}

/// What partition values and bounds prove about a file's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    AllExpired,
    NoneExpired,
    Unknown,
}

/// Removes the rows of the table's `main` branch whose expiration column is before `cutoff_micros`
/// (microseconds since the epoch), rewriting into files that roll at `target_file_size_bytes`.
pub async fn expire_records(
    catalog: &Catalog,
    table: &TableRef,
    cutoff_micros: i64,
    target_file_size_bytes: u64,
) -> Result<ExpirationReport, CompactionError> {
    let start = catalog.load_iceberg_table(table).await?;
    let files = catalog.table_files(start.table.id);
    files.check_metadata(&start.metadata.metadata)?;
    let metadata = &start.metadata.metadata;
    let cutoff = Cutoff::resolve(
        metadata.current_schema(),
        metadata.properties(),
        cutoff_micros,
    )?;
    let mut report = ExpirationReport {
        column: cutoff.name.clone(),
        ..ExpirationReport::default()
    };
    if metadata.format_version() == FormatVersion::V3 {
        return Err(CompactionError::Invalid(
            "record expiration does not handle format v3 tables (deletion vectors, row lineage)"
                .into(),
        ));
    }
    let Some(current) = metadata.snapshot_for_ref("main") else {
        return Ok(report);
    };
    let io = storage::file_io(&files);
    let snapshot = read_snapshot(&io, &files, metadata, current.snapshot_id()).await?;
    let deletes = DeleteIndex::new(metadata, &snapshot);
    let mut plan = Plan {
        start: start.clone(),
        snapshot_id: current.snapshot_id(),
        sequence_number: current.sequence_number(),
        groups: Vec::new(),
    };
    let mut dropped = Vec::new();
    let mut to_read = Vec::new();
    for data in snapshot
        .live()
        .filter(|f| f.content() == DataContentType::Data)
    {
        let applying = deletes.for_data(metadata, data);
        let group = |deletes| Group {
            spec_id: data.spec_id,
            partition: data.partition().clone(),
            inputs: vec![Input {
                data: data.clone(),
                deletes,
            }],
        };
        match cutoff.classify(metadata, data) {
            Verdict::NoneExpired => {}
            // Without deletes, the file's record count is its rows: drop it unread.
            Verdict::AllExpired if applying.is_empty() => dropped.push(Rewritten {
                removed_rows: data.entry.data_file().record_count(),
                group: group(Vec::new()),
                outputs: Vec::new(),
            }),
            _ if data.entry.file_format() != DataFileFormat::Parquet
                || applying
                    .iter()
                    .any(|d| d.entry.file_format() != DataFileFormat::Parquet) =>
            {
                tracing::warn!(table = %start.table.id, path = data.path(), "record expiration cannot read this file; it stays");
                report.files_skipped += 1;
            }
            _ => to_read.push(group(applying)),
        }
    }
    plan.groups = dropped
        .iter()
        .map(|r| r.group.clone())
        .chain(to_read.iter().cloned())
        .collect();
    let settings = CompactionSettings {
        target_file_size_bytes: target_file_size_bytes.max(1),
        strategy: Strategy::Binpack,
    };
    let mut groups = dropped;
    for group in to_read {
        match rewrite_kept(&io, &plan, &group, &settings, &cutoff).await {
            Ok((outputs, rows)) if rows.written == rows.read => {
                // Nothing expired here: the file stays as it is.
                discard_written(&io, &outputs).await;
                report.files_read_unchanged += 1;
            }
            Ok((outputs, rows)) => groups.push(Rewritten {
                group,
                outputs,
                removed_rows: rows.read - rows.written,
            }),
            Err(e) => {
                tracing::warn!(table = %start.table.id, error = %e, "record expiration gave up a file it could not rewrite");
                report.files_skipped += 1;
            }
        }
    }
    if groups.is_empty() {
        return Ok(report);
    }
    let operation = if groups.iter().all(|g| g.outputs.is_empty()) {
        Operation::Delete
    } else {
        Operation::Overwrite
    };
    let committed = commit::commit(catalog, &io, &start.table, &plan, groups, operation).await?;
    report.deleted_data_files = committed.files_in;
    report.removed_files_size = committed.bytes_in;
    report.deleted_records = committed.rows_removed;
    report.files_out = committed.files_out;
    report.bytes_out = committed.bytes_out;
    report.files_dropped = committed.groups_emptied;
    report.files_rewritten = committed.groups_committed - committed.groups_emptied;
    report.files_skipped += committed.groups_skipped;
    report.snapshot_id = committed.snapshot_id;
    Ok(report)
}

#[cfg(test)]
mod tests;
