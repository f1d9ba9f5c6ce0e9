//! Row order inside rewritten files: a sort by the table's default sort order, or a z-order over its columns
//! (rows ranked per column, ranks bit-interleaved into one key, so rows near each other in every column land
//! near each other in the file). Any strategy that cannot apply — no sort order, a transform other than
//! identity, a nested or unsupported column — falls back to bin-packing, never to an error.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, UInt32Array};
use arrow_ord::sort::{SortColumn, SortOptions, lexsort_to_indices};
use arrow_schema::SchemaRef as ArrowSchemaRef;
use iceberg::spec::{NullOrder, SchemaRef, SortDirection, TableMetadata, Transform, Type};

use crate::{CompactionError, Strategy};

/// How a buffer of rows is ordered.
#[derive(Clone, Debug)]
pub(crate) struct Ordering {
    z_order: bool,
    keys: Vec<Key>,
}

#[derive(Clone, Copy, Debug)]
struct Key {
    column: usize,
    options: SortOptions,
}

/// The ordering a strategy asks for on this table, or `None` for bin-packing.
pub(crate) fn ordering(
    metadata: &TableMetadata,
    schema: &SchemaRef,
    strategy: Strategy,
) -> Option<Ordering> {
    let z_order = match strategy {
        Strategy::Binpack => return None,
        Strategy::Auto | Strategy::Sort => false,
        Strategy::ZOrder => true,
    };
    let order = metadata.default_sort_order();
    if order.fields.is_empty() {
        return None;
    }
    let top_level = schema.as_struct().fields();
    let mut keys = Vec::with_capacity(order.fields.len());
    for field in &order.fields {
        let Some(column) = top_level.iter().position(|f| f.id == field.source_id) else {
            tracing::info!(
                source_id = field.source_id,
                "sort column is not top-level: bin-packing instead"
            );
            return None;
        };
        let primitive = top_level
            .get(column)
            .is_some_and(|f| matches!(*f.field_type, Type::Primitive(_)));
        if field.transform != Transform::Identity || !primitive {
            tracing::info!(
                source_id = field.source_id,
                "sort field is not an identity of a primitive: bin-packing instead"
            );
            return None;
        }
        let options = SortOptions {
            descending: field.direction == SortDirection::Descending,
            nulls_first: field.null_order == NullOrder::First,
        };
        keys.push(Key { column, options });
    }
    Some(Ordering { z_order, keys })
}

impl Ordering {
    /// Concatenates a buffer and returns its rows in order (or as they were, when ordering fails).
    pub(crate) fn apply(
        &self,
        schema: &ArrowSchemaRef,
        batches: &[RecordBatch],
    ) -> Result<RecordBatch, CompactionError> {
        let all = arrow_select::concat::concat_batches(schema, batches)
            .map_err(|e| CompactionError::Internal(format!("concatenating batches: {e}")))?;
        let indices = if self.z_order {
            self.z_indices(&all).or_else(|| self.sort_indices(&all))
        } else {
            self.sort_indices(&all)
        };
        let Some(indices) = indices else {
            return Ok(all);
        };
        arrow_select::take::take_record_batch(&all, &indices)
            .map_err(|e| CompactionError::Internal(format!("reordering rows: {e}")))
    }

    fn sort_indices(&self, batch: &RecordBatch) -> Option<UInt32Array> {
        let columns: Option<Vec<SortColumn>> = self
            .keys
            .iter()
            .map(|k| {
                let values = batch.columns().get(k.column)?.clone();
                Some(SortColumn {
                    values,
                    options: Some(k.options),
                })
            })
            .collect();
        match lexsort_to_indices(&columns?, None) {
            Ok(indices) => Some(indices),
            Err(e) => {
                tracing::info!(error = %e, "cannot sort these columns: bin-packing instead");
                None
            }
        }
    }

    /// Rows ordered by their z-value: each key column's rank scaled to an equal share of 64 bits, interleaved
    /// from the most significant bit down.
    fn z_indices(&self, batch: &RecordBatch) -> Option<UInt32Array> {
        let rows = batch.num_rows();
        let dims = self.keys.len().clamp(1, 64);
        let bits = (64 / dims) as u32;
        let mut ranks = Vec::with_capacity(dims);
        for key in self.keys.iter().take(dims) {
            let column: &Arc<dyn Array> = batch.columns().get(key.column)?;
            match arrow_ord::rank::rank(column.as_ref(), Some(key.options)) {
                Ok(r) => ranks.push(r),
                Err(e) => {
                    tracing::info!(error = %e, "cannot rank this column for z-order: sorting instead");
                    return None;
                }
            }
        }
        // `rank` counts the rows ≤ each value (1..=rows): scale rank - 1 to the dimension's share of bits, so
        // the top bit splits the rows in halves, the next in quarters, and so on.
        let rows_u128 = (rows as u128).max(1);
        let mut keyed: Vec<(u64, u32)> = (0..rows)
            .map(|row| {
                let mut z = 0u64;
                let scaled: Vec<u64> = ranks
                    .iter()
                    .map(|rank| {
                        let value =
                            u128::from(rank.get(row).copied().unwrap_or(1).saturating_sub(1));
                        u64::try_from((value << bits) / rows_u128).unwrap_or(u64::MAX)
                    })
                    .collect();
                for bit in (0..bits).rev() {
                    for value in &scaled {
                        z = (z << 1) | ((value >> bit) & 1);
                    }
                }
                (z, row as u32)
            })
            .collect();
        keyed.sort_unstable();
        Some(UInt32Array::from_iter_values(
            keyed.into_iter().map(|(_, row)| row),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    fn batch(xs: Vec<i64>, ys: Vec<i64>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Int64, false),
            Field::new("y", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(xs)),
                Arc::new(Int64Array::from(ys)),
            ],
        )
        .unwrap()
    }

    fn keys() -> Vec<Key> {
        let options = SortOptions {
            descending: false,
            nulls_first: true,
        };
        vec![Key { column: 0, options }, Key { column: 1, options }]
    }

    #[test]
    fn sort_orders_lexicographically() {
        let b = batch(vec![3, 1, 2, 1], vec![0, 9, 5, 2]);
        let out = Ordering {
            z_order: false,
            keys: keys(),
        }
        .apply(&b.schema(), &[b])
        .unwrap();
        let x = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let y = out.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(x.values(), &[1, 1, 2, 3]);
        assert_eq!(y.values(), &[2, 9, 5, 0]);
    }

    #[test]
    fn z_order_keeps_rows_and_clusters_quadrants() {
        // A 4x4 grid shuffled: the z-curve visits each 2x2 quadrant before moving on.
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for i in [5, 12, 0, 9, 3, 14, 7, 1, 10, 15, 6, 2, 13, 4, 11, 8] {
            xs.push(i % 4);
            ys.push(i / 4);
        }
        let b = batch(xs.clone(), ys.clone());
        let out = Ordering {
            z_order: true,
            keys: keys(),
        }
        .apply(&b.schema(), &[b])
        .unwrap();
        let x = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let y = out.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let mut pairs: Vec<(i64, i64)> = x
            .values()
            .iter()
            .copied()
            .zip(y.values().iter().copied())
            .collect();
        for quadrant in pairs.chunks(4) {
            let qx: Vec<i64> = quadrant.iter().map(|p| p.0 / 2).collect();
            let qy: Vec<i64> = quadrant.iter().map(|p| p.1 / 2).collect();
            assert!(
                qx.iter().all(|v| *v == qx[0]) && qy.iter().all(|v| *v == qy[0]),
                "{quadrant:?}"
            );
        }
        pairs.sort();
        let mut expected: Vec<(i64, i64)> = xs.into_iter().zip(ys).collect();
        expected.sort();
        assert_eq!(pairs, expected);
    }
}
