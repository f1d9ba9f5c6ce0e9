use std::sync::Arc;

use arrow_array::{Date32Array, Int64Array, TimestampMicrosecondArray};
use iceberg::spec::NestedField;

use super::*;

fn schema(fields: &[(i32, &str, PrimitiveType)]) -> Schema {
    Schema::builder()
        .with_fields(fields.iter().map(|(id, name, t)| {
            NestedField::optional(*id, *name, Type::Primitive(t.clone())).into()
        }))
        .build()
        .unwrap()
}

fn props(column: Option<&str>) -> HashMap<String, String> {
    column
        .map(|c| HashMap::from([(EXPIRATION_COLUMN_PROPERTY.to_string(), c.to_string())]))
        .unwrap_or_default()
}

#[test]
fn the_column_rule() {
    use PrimitiveType as P;
    let one = schema(&[(1, "id", P::Long), (2, "at", P::Timestamptz)]);
    let two = schema(&[
        (1, "id", P::Long),
        (2, "at", P::Timestamp),
        (3, "day", P::Date),
    ]);
    let none = schema(&[(1, "id", P::Long), (2, "note", P::String)]);
    let name = |s: &Schema, column| Cutoff::resolve(s, &props(column), 0).map(|c| c.name);
    let why = |s: &Schema, column| match Cutoff::resolve(s, &props(column), 0) {
        Err(CompactionError::Invalid(m)) => m,
        other => panic!("{other:?}"),
    };
    // The only such column, or the one the property names.
    assert_eq!(name(&one, None).unwrap(), "at");
    assert_eq!(name(&two, Some("day")).unwrap(), "day");
    assert_eq!(name(&two, Some("at")).unwrap(), "at");
    // Otherwise the run fails, saying why.
    assert!(why(&none, None).contains("no timestamp, timestamptz or date column"));
    assert!(why(&two, None).contains("2 timestamp, timestamptz or date columns (at, day)"));
    assert!(why(&one, Some("id")).contains("'id'") && why(&one, Some("id")).contains("type long"));
    assert!(why(&one, Some("nope")).contains("is not a top-level column"));
}

#[test]
fn partition_ranges_bound_the_values_they_hold() {
    use PrimitiveType as P;
    let ts = Cutoff::resolve(&schema(&[(1, "at", P::Timestamp)]), &props(None), 0).unwrap();
    let date = Cutoff::resolve(&schema(&[(1, "d", P::Date)]), &props(None), 0).unwrap();
    let int = PrimitiveLiteral::Int;
    // Day 1 is [1970-01-02, 1970-01-03); as a date column, its one value is its midnight.
    assert_eq!(
        ts.range(Transform::Day, &int(1)),
        Some((DAY_MICROS, 2 * DAY_MICROS))
    );
    assert_eq!(
        date.range(Transform::Day, &int(1)),
        Some((DAY_MICROS, DAY_MICROS + 1))
    );
    assert_eq!(
        ts.range(Transform::Hour, &int(2)),
        Some((2 * HOUR_MICROS, 3 * HOUR_MICROS))
    );
    assert_eq!(date.range(Transform::Hour, &int(2)), None);
    // Month 1 is February 1970 (31 days in); year 2 is 1972 (730 days in, a leap year of 366).
    assert_eq!(
        ts.range(Transform::Month, &int(1)),
        Some((31 * DAY_MICROS, 59 * DAY_MICROS))
    );
    assert_eq!(
        ts.range(Transform::Year, &int(2)),
        Some((730 * DAY_MICROS, 1096 * DAY_MICROS))
    );
    assert_eq!(
        ts.range(Transform::Month, &int(-1)),
        Some((-31 * DAY_MICROS, 0))
    );
    // Identity holds one value; bucket and truncate prove nothing.
    assert_eq!(
        ts.range(Transform::Identity, &PrimitiveLiteral::Long(5)),
        Some((5, 6))
    );
    assert_eq!(
        date.range(Transform::Identity, &int(3)),
        Some((3 * DAY_MICROS, 3 * DAY_MICROS + 1))
    );
    assert_eq!(ts.range(Transform::Bucket(4), &int(1)), None);
    assert_eq!(month_start_day(0), Some(0));
    assert_eq!(month_start_day(12 * 30), Some(10_957)); // 2000-01-01
}

#[test]
fn kept_rows_are_those_at_or_after_the_cutoff_and_nulls() {
    use PrimitiveType as P;
    let cutoff = 10 * DAY_MICROS;
    let ts = Cutoff::resolve(
        &schema(&[(1, "id", P::Long), (2, "at", P::Timestamptz)]),
        &props(None),
        cutoff,
    )
    .unwrap();
    let at = TimestampMicrosecondArray::from(vec![
        Some(cutoff - 1),
        Some(cutoff),
        None,
        Some(cutoff + 1),
        Some(0),
    ])
    .with_timezone("+00:00");
    let batch = RecordBatch::try_from_iter(vec![
        (
            "id",
            Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5])) as arrow_array::ArrayRef,
        ),
        ("at", Arc::new(at) as arrow_array::ArrayRef),
    ])
    .unwrap();
    let kept = ts.keep(&batch).unwrap();
    let ids: Vec<i64> = kept
        .column(0)
        .as_primitive::<arrow_array::types::Int64Type>()
        .values()
        .to_vec();
    assert_eq!(ids, vec![2, 3, 4]);

    let date = Cutoff::resolve(&schema(&[(1, "d", P::Date)]), &props(None), cutoff).unwrap();
    let days = Date32Array::from(vec![Some(9), Some(10), None, Some(11)]);
    let batch =
        RecordBatch::try_from_iter(vec![("d", Arc::new(days) as arrow_array::ArrayRef)]).unwrap();
    assert_eq!(date.keep(&batch).unwrap().num_rows(), 3);

    // A column read as something else is an internal error, not a panic.
    let batch = RecordBatch::try_from_iter(vec![(
        "d",
        Arc::new(Int64Array::from(vec![1])) as arrow_array::ArrayRef,
    )])
    .unwrap();
    assert!(matches!(
        date.keep(&batch),
        Err(CompactionError::Internal(_))
    ));
}
