//! The hook the commit path calls after a table's metadata pointer moved, so that a service above the catalog
//! (maintenance) can react to commits without the catalog knowing what it does. The observer must be cheap: it
//! runs on the committing request's task, after the commit is durable, and its outcome never reaches the writer.

use std::sync::{Arc, RwLock};

use iceberg::spec::TableMetadata;

use crate::{Catalog, Table};

/// Told about every Iceberg commit that changed a table's metadata.
pub trait CommitObserver: Send + Sync + std::fmt::Debug {
    /// `table` now has `metadata` (already published).
    fn committed(&self, table: &Table, metadata: &TableMetadata);
}

/// The observers every clone of a catalog shares (maintenance, replication); installed at startup.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommitObservers(Arc<RwLock<Vec<Arc<dyn CommitObserver>>>>);

impl CommitObservers {
    pub(crate) fn notify(&self, table: &Table, metadata: &TableMetadata) {
        // Observers are cheap and never block: the read lock is held for the calls only.
        if let Ok(observers) = self.0.read() {
            for observer in observers.iter() {
                observer.committed(table, metadata);
            }
        }
    }
}

impl Catalog {
    /// Adds a commit observer; every installed observer is told about every commit.
    pub fn observe_commits(&self, observer: Arc<dyn CommitObserver>) -> bool {
        match self.commit_observers.0.write() {
            Ok(mut observers) => {
                observers.push(observer);
                true
            }
            Err(_) => false,
        }
    }
}
