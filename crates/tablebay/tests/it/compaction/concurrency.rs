//! Compaction beside writers: appends and position deletes committed while it runs are never lost.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_appending_during_compaction_never_fails_and_loses_nothing() {
    let f = Arc::new(fixture("compact-race").await);
    for i in 0..20 {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let writer = {
        let f = f.clone();
        tokio::spawn(async move {
            for i in 20..45 {
                f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
            }
        })
    };
    let mut committed = 0;
    while !writer.is_finished() {
        let settings = CompactionSettings {
            target_file_size_bytes: 1 << 20,
            strategy: Strategy::Binpack,
        };
        match compact_table(&f.catalog, &TableRef::Arn(f.arn.clone()), &settings).await {
            Ok(report) => committed += report.groups_committed,
            // Giving up when the table keeps moving is allowed; failing a writer is not.
            Err(tablebay_compaction::CompactionError::Conflict(e)) => {
                eprintln!("compaction gave up: {e}")
            }
            Err(e) => panic!("compaction failed: {e}"),
        }
    }
    writer.await.unwrap();
    f.compact(1 << 20, Strategy::Binpack).await;
    let rows = f.rows().await;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        ids,
        (0..45 * i64::from(PARTITIONS) * ROWS_PER_FILE).collect::<Vec<_>>(),
        "every row once"
    );
    eprintln!("compactions committed {committed} groups while the writer ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn position_deletes_committed_during_compaction_are_never_lost() {
    let f = Arc::new(fixture("compact-delete-race").await);
    for i in 0..20 {
        f.append(i * i64::from(PARTITIONS) * ROWS_PER_FILE).await;
    }
    let deleter = {
        let f = f.clone();
        tokio::spawn(async move {
            let mut deleted = std::collections::BTreeSet::new();
            for n in 0..8 {
                deleted.insert(f.delete_a_row(n * 3).await);
            }
            deleted
        })
    };
    let mut skipped = 0;
    while !deleter.is_finished() {
        let settings = CompactionSettings {
            target_file_size_bytes: 1 << 20,
            strategy: Strategy::Binpack,
        };
        match compact_table(&f.catalog, &TableRef::Arn(f.arn.clone()), &settings).await {
            Ok(report) => skipped += report.groups_skipped,
            Err(tablebay_compaction::CompactionError::Conflict(e)) => {
                eprintln!("compaction gave up: {e}")
            }
            Err(e) => panic!("compaction failed: {e}"),
        }
    }
    let deleted = deleter.await.unwrap();
    f.compact(1 << 20, Strategy::Binpack).await;
    let ids: Vec<i64> = f.rows().await.iter().map(|r| r.0).collect();
    let expected: Vec<i64> = (0..20 * i64::from(PARTITIONS) * ROWS_PER_FILE)
        .filter(|id| !deleted.contains(id))
        .collect();
    assert_eq!(
        ids, expected,
        "every deleted row stays deleted, every other row is there once"
    );
    let (_, deletes) = f.live_files().await;
    assert!(
        deletes.is_empty(),
        "the final compaction folded every delete file: {deletes:?}"
    );
    eprintln!(
        "{} rows deleted; {skipped} groups given up or skipped along the way",
        deleted.len()
    );
}
