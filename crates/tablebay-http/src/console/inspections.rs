//! The snapshots the table page has read, kept for the next view: a snapshot never changes, so its live files
//! and first rows (`tablebay_compaction::inspect`, which reads every manifest of the snapshot) are read once per
//! snapshot rather than on every view. Keyed by table, snapshot and whether rows were read; at most
//! [`MAX_ENTRIES`], the oldest out first. Rows are served from here only to viewers who were just authorized for
//! `GetTableData`, as on a first read.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tablebay_compaction::Inspection;
use uuid::Uuid;

/// Snapshots kept.
const MAX_ENTRIES: usize = 32;

type Key = (Uuid, i64);

/// Snapshots already inspected.
#[derive(Default)]
pub struct Inspections {
    entries: Mutex<VecDeque<(Key, Arc<Inspection>)>>,
}

impl std::fmt::Debug for Inspections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inspections")
    }
}

impl Inspections {
    /// The inspection of `snapshot` of `table`, if it was read (with rows when `rows`).
    pub(super) fn get(&self, table: Uuid, snapshot: i64, rows: bool) -> Option<Arc<Inspection>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .find(|(key, found)| *key == (table, snapshot) && (!rows || found.preview.is_some()))
            .map(|(_, found)| Arc::clone(found))
    }

    /// Keeps an inspection of `table` (of the snapshot it read).
    pub(super) fn put(&self, table: Uuid, inspection: Arc<Inspection>) {
        let Some(snapshot) = inspection.files.snapshot_id else {
            return;
        };
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|(key, _)| *key != (table, snapshot));
        if entries.len() >= MAX_ENTRIES {
            entries.pop_front();
        }
        entries.push_back(((table, snapshot), inspection));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tablebay_compaction::{LiveFiles, Preview};

    #[test]
    fn kept_by_snapshot_and_rows() {
        let cache = Inspections::default();
        let table = Uuid::new_v4();
        let files = LiveFiles {
            snapshot_id: Some(7),
            ..LiveFiles::default()
        };
        cache.put(
            table,
            Arc::new(Inspection {
                files: files.clone(),
                preview: None,
            }),
        );
        assert!(cache.get(table, 7, false).is_some());
        assert!(cache.get(table, 7, true).is_none());
        assert!(cache.get(table, 8, false).is_none());
        cache.put(
            table,
            Arc::new(Inspection {
                files,
                preview: Some(Preview::default()),
            }),
        );
        assert!(cache.get(table, 7, true).is_some());
        for snapshot in 0..(MAX_ENTRIES as i64 + 1) {
            let files = LiveFiles {
                snapshot_id: Some(100 + snapshot),
                ..LiveFiles::default()
            };
            cache.put(
                table,
                Arc::new(Inspection {
                    files,
                    preview: None,
                }),
            );
        }
        assert!(cache.get(table, 7, false).is_none());
        assert!(cache.get(table, 100 + MAX_ENTRIES as i64, false).is_some());
    }
}
