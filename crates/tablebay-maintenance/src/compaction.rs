//! The `icebergCompaction` job type: the one place that calls the compaction engine (the
//! `tablebay-compaction` crate, built separately). Until that engine is part of the build, the job reports
//! itself unavailable and no trigger queues it.

use tablebay_catalog::{Catalog, IcebergTable};

use crate::MaintenanceError;
use crate::run::JobOutcome;
use crate::settings::EffectiveCompaction;

/// Whether this build has a compaction engine (commit triggers and the sweep queue compaction only then).
pub(crate) const AVAILABLE: bool = false;

/// Compacts one table with its effective settings.
pub(crate) async fn compact(
    _catalog: &Catalog,
    loaded: IcebergTable,
    settings: &EffectiveCompaction,
) -> Result<JobOutcome, MaintenanceError> {
    Err(MaintenanceError::Unavailable(format!(
        "compaction (target {} bytes, strategy {}) of table {} is not available in this build",
        settings.target_file_size_bytes, settings.strategy, loaded.table.arn
    )))
}
