//! The hook the commit path calls after a table's metadata pointer moved, so that a service above the catalog
//! (maintenance) can react to commits without the catalog knowing what it does. The observer must be cheap: it
//! runs on the committing request's task, after the commit is durable, and its outcome never reaches the writer.

use std::sync::{Arc, OnceLock};

use iceberg::spec::TableMetadata;

use crate::{Catalog, Table};

/// Told about every Iceberg commit that changed a table's metadata.
pub trait CommitObserver: Send + Sync + std::fmt::Debug {
    /// `table` now has `metadata` (already published).
    fn committed(&self, table: &Table, metadata: &TableMetadata);
}

/// The observer slot every clone of a catalog shares; set once at startup.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommitObservers(Arc<OnceLock<Arc<dyn CommitObserver>>>);

impl CommitObservers {
    pub(crate) fn notify(&self, table: &Table, metadata: &TableMetadata) {
        if let Some(observer) = self.0.get() {
            observer.committed(table, metadata);
        }
    }
}

impl Catalog {
    /// Installs the commit observer (once; later calls are ignored and return `false`).
    pub fn observe_commits(&self, observer: Arc<dyn CommitObserver>) -> bool {
        self.commit_observers.0.set(observer).is_ok()
    }
}
