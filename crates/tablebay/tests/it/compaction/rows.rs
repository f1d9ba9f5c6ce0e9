//! Compaction keeps every row: delete files applied, a second run idle; sort and z-order within files.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_applies_deletes_and_keeps_every_row() {
    let f = fixture("compact-deletes").await;
    for i in 0..30 {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let table = f.table().await;
    let (data, _) = f.live_files().await;
    assert_eq!(data.len(), 60);
    // Position deletes on two files of partition 0, one of partition 1; equality deletes in both partitions.
    let in_part = |part: i32| -> Vec<String> {
        let mut paths: Vec<String> = data
            .iter()
            .filter(|(d, _)| d.partition() == &Struct::from_iter([Some(Literal::int(part))]))
            .map(|(d, _)| d.file_path().to_string())
            .collect();
        paths.sort();
        paths
    };
    let deletes = vec![
        f.position_delete(&table, 0, &in_part(0)[0], &[0, 5, 10])
            .await,
        f.position_delete(&table, 0, &in_part(0)[3], &[1, 2, 49])
            .await,
        f.position_delete(&table, 1, &in_part(1)[7], &[7]).await,
        f.equality_delete(&table, 0, &[20, 21, 22, 1000, 2900])
            .await,
        f.equality_delete(&table, 1, &[60, 61, 2999]).await,
    ];
    f.commit_deletes(&table, deletes).await;
    let before = f.rows().await;
    assert_eq!(
        before.len(),
        3000 - 7 - 5 - 3,
        "the deletes apply before compaction"
    );
    let start = f
        .table()
        .await
        .metadata()
        .current_snapshot()
        .unwrap()
        .clone();

    let report = f.compact(64 * 1024, Strategy::Binpack).await;
    assert_eq!(report.files_in, 60, "{report:?}");
    assert_eq!(report.delete_files_removed, 5, "{report:?}");
    assert_eq!(report.groups_committed, 2, "{report:?}");
    assert_eq!(report.groups_skipped, 0, "{report:?}");
    assert!(report.files_out >= 2 && report.files_out <= 4, "{report:?}");

    assert_eq!(
        f.rows().await,
        before,
        "the same rows, no delete file needed"
    );
    let (data, deletes) = f.live_files().await;
    assert!(deletes.is_empty(), "no live delete files: {deletes:?}");
    assert_eq!(data.len() as u64, report.files_out);
    for (file, sequence) in &data {
        assert_eq!(
            *sequence,
            start.sequence_number(),
            "rewritten files keep the starting data sequence number"
        );
        assert!(
            file.file_path().contains("compacted-"),
            "{}",
            file.file_path()
        );
    }
    let table = f.table().await;
    let snapshot = table.metadata().current_snapshot().unwrap();
    assert_eq!(snapshot.snapshot_id(), report.snapshot_id.unwrap());
    assert_eq!(snapshot.parent_snapshot_id(), Some(start.snapshot_id()));
    let summary = snapshot.summary();
    assert_eq!(summary.operation, Operation::Replace);
    let prop = |k: &str| {
        summary
            .additional_properties
            .get(k)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(prop("deleted-data-files"), "60");
    assert_eq!(prop("added-data-files"), report.files_out.to_string());
    assert_eq!(prop("deleted-records"), "3000");
    assert_eq!(prop("added-records"), before.len().to_string());
    assert_eq!(prop("removed-delete-files"), "5");
    assert_eq!(prop("total-records"), before.len().to_string());
    assert_eq!(prop("total-delete-files"), "0");
    assert_eq!(prop("total-data-files"), report.files_out.to_string());

    // A second run finds nothing left to do.
    let again = f.compact(64 * 1024, Strategy::Binpack).await;
    assert_eq!(again.snapshot_id, None, "{again:?}");
    assert_eq!(f.rows().await, before);
    drop(f.server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_sorts_and_z_orders_within_files() {
    let f = fixture("compact-sort").await;
    // Descending ids in each append, so a sorted output differs from the input order.
    for i in (0..12).rev() {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let before = f.rows().await;
    // No sort order: `sort` falls back to bin-packing and still succeeds.
    let report = f.compact(1 << 20, Strategy::Sort).await;
    assert_eq!(report.files_in, 24, "{report:?}");
    assert_eq!(f.rows().await, before);

    // With a sort order on id, each output file is sorted.
    let table = f.table().await;
    let tx = Transaction::new(&table);
    let tx = tx
        .replace_sort_order()
        .asc("id", iceberg::spec::NullOrder::First)
        .apply(tx)
        .unwrap();
    tx.commit(&f.rest).await.unwrap();
    for i in 12..16 {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let before = f.rows().await;
    let report = f.compact(1 << 20, Strategy::Auto).await;
    assert!(report.files_in >= 4, "{report:?}");
    assert_eq!(f.rows().await, before);
    let (data, _) = f.live_files().await;
    for (file, _) in data
        .iter()
        .filter(|(d, _)| d.file_path().contains("compacted-"))
    {
        let bytes =
            f.io.new_input(file.file_path())
                .unwrap()
                .read()
                .await
                .unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let mut ids = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            ids.extend(
                batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .iter()
                    .copied(),
            );
        }
        assert!(
            ids.windows(2).all(|w| w[0] <= w[1]),
            "{} is sorted by id",
            file.file_path()
        );
    }

    // Z-order over the sort columns keeps every row too.
    for i in 16..20 {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let before = f.rows().await;
    let report = f.compact(1 << 20, Strategy::ZOrder).await;
    assert!(report.files_in >= 4, "{report:?}");
    assert_eq!(f.rows().await, before);
}
