//! Iceberg commits: check a commit's requirements against the table's current metadata, apply its updates with
//! iceberg-rust's `TableMetadataBuilder`, write the new metadata file, then compare-and-swap the table row's
//! pointer — the same swap `UpdateTableMetadataLocation` makes, so the control plane sees every commit.
//!
//! The model is Lakekeeper's commit path (`reference/iceberg-rest.md` §3): bytes first, then one transaction
//! that swaps every pointer of the commit. Conflicts are decided by requirements only (trap 15): when the swap
//! loses a race, the server reloads, re-checks the requirements and re-applies the updates on the new
//! metadata, and answers 409 only when a requirement fails (or the table keeps moving). A 5xx means the outcome
//! is unknown (trap 16), so it is used only when the swap itself failed in an unknown way; a failure before
//! anything was published is [`CommitError::Unavailable`].

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use iceberg::spec::{
    FormatVersion, SortOrder, TableMetadata, TableMetadataBuildResult, TableMetadataBuilder,
    UnboundPartitionSpec,
};
use iceberg::{TableRequirement, TableUpdate};
use std::sync::Arc;
use tablebay_store::StoreError;
use tablebay_store::meta::PointerSwap;
use uuid::Uuid;

use crate::catalog::new_version_token;
use crate::iceberg_tables::IcebergTable;
use crate::idempotency::RememberedCommit;
use crate::metadata::metadata_file_location;
use crate::metadata_cache::{LoadedMetadata, SnapshotRefInfo};
use crate::{AccountId, Catalog, Namespace, ServiceError, Table, TableFiles, TableName};
use tablebay_objects::TableLocation;

/// How many times a commit is rebased onto a table that moved before the server gives up with a 409.
const MAX_ATTEMPTS: u32 = 12;
/// How long a commit whose pointer swap ended without an outcome waits for the database to say what happened.
const SETTLE_FOR: Duration = Duration::from_secs(15);

/// The outcome of a pointer swap, as the tables' rows tell it afterwards ([`Catalog::settle`]).
enum Settled {
    Applied,
    NotApplied,
    Unknown,
}

/// Table property: delete metadata files trimmed from the metadata log (Java `TableProperties`).
const DELETE_AFTER_COMMIT: &str = "write.metadata.delete-after-commit.enabled";

/// The requirements and updates of one table in a commit.
#[derive(Clone, Debug, Default)]
pub struct TableChange {
    /// What must hold of the current metadata.
    pub requirements: Vec<TableRequirement>,
    /// What to change, in order.
    pub updates: Vec<TableUpdate>,
}

/// Why a commit did not apply.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The commit is malformed or an update does not apply (400); nothing changed.
    #[error("{0}")]
    Invalid(String),
    /// The table does not exist (404); nothing changed.
    #[error("{0}")]
    NotFound(String),
    /// `assert-create` of a table that exists (409 AlreadyExists); nothing changed.
    #[error("{0}")]
    AlreadyExists(String),
    /// A requirement does not hold, or the table kept changing: refresh and retry (409 CommitFailed).
    #[error("{0}")]
    Conflict(String),
    /// Nothing was published, but the work could not be done now (503: retry later).
    #[error("{0}")]
    Unavailable(String),
    /// The pointer swap failed in a way that leaves its outcome unknown (500: CommitStateUnknown).
    #[error("{0}")]
    StateUnknown(String),
    /// A concurrent request with the same `Idempotency-Key` committed first; nothing of this one was published
    /// (its answer is the other's, which is stored).
    #[error("{0}")]
    KeyTaken(String),
    /// The table is a read-only replica (403); nothing changed.
    #[error("{0}")]
    Forbidden(String),
}

impl From<ServiceError> for CommitError {
    /// A catalog error raised while preparing a commit (before anything was published).
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(m) | ServiceError::MalformedPolicy(m) => Self::Invalid(m),
            ServiceError::NotFound(m) => Self::NotFound(m),
            ServiceError::AlreadyExists(m) => Self::AlreadyExists(m),
            ServiceError::Conflict(m) | ServiceError::Denied(m) => Self::Conflict(m),
            ServiceError::Internal(m) => Self::Unavailable(m),
            ServiceError::Unavailable(e) | ServiceError::Store(e) => {
                Self::Unavailable(format!("{e}: {:?}", std::error::Error::source(&e)))
            }
        }
    }
}

/// Checks one requirement against the current metadata, failing with Java's message
/// (`UpdateRequirement.java`; the REST compatibility kit compares them).
pub(crate) fn check_requirement(
    requirement: &TableRequirement,
    metadata: &TableMetadata,
    refs: &std::collections::HashMap<String, SnapshotRefInfo>,
) -> Result<(), String> {
    use TableRequirement as R;
    let changed = |what: &str, expected: String, found: String| {
        Err(format!(
            "Requirement failed: {what} changed: expected id {expected} != {found}"
        ))
    };
    match requirement {
        R::NotExist => Err("Requirement failed: table already exists".to_string()),
        R::UuidMatch { uuid } => {
            if metadata.uuid() == *uuid {
                Ok(())
            } else {
                Err(format!(
                    "Requirement failed: UUID does not match: expected {} != {uuid}",
                    metadata.uuid()
                ))
            }
        }
        R::RefSnapshotIdMatch { r#ref, snapshot_id } => match (refs.get(r#ref), snapshot_id) {
            (Some(found), None) => Err(format!(
                "Requirement failed: {} {} was created concurrently",
                ref_kind(found),
                r#ref
            )),
            (Some(found), Some(expected)) if found.snapshot_id != *expected => Err(format!(
                "Requirement failed: {} {} has changed: expected id {expected} != {}",
                ref_kind(found),
                r#ref,
                found.snapshot_id
            )),
            (None, Some(expected)) => Err(format!(
                "Requirement failed: branch or tag {} is missing, expected {expected}",
                r#ref
            )),
            _ => Ok(()),
        },
        R::LastAssignedFieldIdMatch {
            last_assigned_field_id,
        } if metadata.last_column_id() != *last_assigned_field_id => changed(
            "last assigned field id",
            last_assigned_field_id.to_string(),
            metadata.last_column_id().to_string(),
        ),
        R::CurrentSchemaIdMatch { current_schema_id }
            if metadata.current_schema_id() != *current_schema_id =>
        {
            changed(
                "current schema",
                current_schema_id.to_string(),
                metadata.current_schema_id().to_string(),
            )
        }
        R::LastAssignedPartitionIdMatch {
            last_assigned_partition_id,
        } if metadata.last_partition_id() != *last_assigned_partition_id => changed(
            "last assigned partition id",
            last_assigned_partition_id.to_string(),
            metadata.last_partition_id().to_string(),
        ),
        R::DefaultSpecIdMatch { default_spec_id }
            if metadata.default_partition_spec_id() != *default_spec_id =>
        {
            changed(
                "default partition spec",
                default_spec_id.to_string(),
                metadata.default_partition_spec_id().to_string(),
            )
        }
        R::DefaultSortOrderIdMatch {
            default_sort_order_id,
        } if metadata.default_sort_order_id() != *default_sort_order_id => changed(
            "default sort order",
            default_sort_order_id.to_string(),
            metadata.default_sort_order_id().to_string(),
        ),
        R::LastAssignedFieldIdMatch { .. }
        | R::CurrentSchemaIdMatch { .. }
        | R::LastAssignedPartitionIdMatch { .. }
        | R::DefaultSpecIdMatch { .. }
        | R::DefaultSortOrderIdMatch { .. } => Ok(()),
    }
}

fn ref_kind(found: &SnapshotRefInfo) -> &'static str {
    if found.is_branch { "branch" } else { "tag" }
}

fn invalid(e: iceberg::Error) -> CommitError {
    CommitError::Invalid(e.message().to_string())
}

/// Applies updates to the current metadata of an existing table. The UUID and the location are fixed (a table
/// lives in its own storage for its whole life): another UUID or another location is refused, and so is a
/// result that names any file outside the table's storage (a manifest list, a statistics file, a path property).
pub(crate) fn apply_updates(
    files: &TableFiles,
    current: &TableMetadata,
    current_location: &str,
    updates: &[TableUpdate],
) -> Result<TableMetadataBuildResult, CommitError> {
    let mut builder = TableMetadataBuilder::new_from_metadata(
        current.clone(),
        Some(current_location.to_string()),
    );
    let mut properties = current.properties().clone();
    for update in updates {
        match update {
            TableUpdate::AssignUuid { uuid } if *uuid != current.uuid() => {
                return Err(CommitError::Invalid(format!(
                    "Cannot reassign uuid: the table's uuid is {}, not {uuid}",
                    current.uuid()
                )));
            }
            // The table's own storage is the only location it has (Java sends it back in replace transactions).
            TableUpdate::SetLocation { location } if files.is_location(location) => continue,
            // Anything else would move the table's files out of its storage, into another table's for one.
            TableUpdate::SetLocation { location } => {
                return Err(CommitError::Invalid(format!(
                    "Cannot set the table location to {location}: a table lives in its own storage {} for its \
                     whole life",
                    files.location()
                )));
            }
            _ => {}
        }
        // Setting a property to the value it has is no change: a retried commit then writes no new file.
        let update = match update {
            TableUpdate::SetProperties { updates } => {
                let changed: HashMap<String, String> = updates
                    .iter()
                    .filter(|(k, v)| properties.get(*k) != Some(*v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                properties.extend(changed.clone());
                TableUpdate::SetProperties { updates: changed }
            }
            TableUpdate::RemoveProperties { removals } => {
                for key in removals {
                    properties.remove(key);
                }
                update.clone()
            }
            other => other.clone(),
        };
        builder = update.apply(builder).map_err(invalid)?;
    }
    let result = builder.build().map_err(invalid)?;
    if !result.changes.is_empty() {
        files
            .check_metadata(&result.metadata)
            .map_err(|e| CommitError::Invalid(e.to_string()))?;
    }
    Ok(result)
}

/// Builds the first metadata of a staged table from the updates of its `assert-create` commit (Java's
/// `createChanges`: assign-uuid, upgrade-format-version, add-schema, set-current-schema, add-spec,
/// set-default-spec, add-sort-order, set-default-sort-order, set-location, set-properties, then any data
/// updates). The first schema, spec and sort order seed `TableMetadataBuilder::new` (clients send fresh ids,
/// which it keeps); everything else is applied on top in order.
pub(crate) fn metadata_from_updates(
    table_id: Uuid,
    location: &str,
    updates: &[TableUpdate],
) -> Result<TableMetadata, CommitError> {
    let mut schema = None;
    let mut spec = None;
    let mut order = None;
    let mut format_version = FormatVersion::V2;
    let mut properties = std::collections::HashMap::new();
    let mut rest = Vec::new();
    for update in updates {
        match update {
            TableUpdate::AddSchema { schema: s } if schema.is_none() => schema = Some(s.clone()),
            TableUpdate::SetCurrentSchema { schema_id: -1 }
                if schema.is_some() && rest.is_empty() => {}
            TableUpdate::AddSpec { spec: s } if spec.is_none() => spec = Some(s.clone()),
            TableUpdate::SetDefaultSpec { spec_id: -1 } if spec.is_some() && rest.is_empty() => {}
            TableUpdate::AddSortOrder { sort_order } if order.is_none() => {
                order = Some(sort_order.clone())
            }
            TableUpdate::SetDefaultSortOrder { sort_order_id: -1 }
                if order.is_some() && rest.is_empty() => {}
            TableUpdate::UpgradeFormatVersion { format_version: v } if rest.is_empty() => {
                format_version = *v
            }
            TableUpdate::SetProperties { updates } if rest.is_empty() => {
                properties.extend(updates.clone())
            }
            // The table's location and uuid are the server's: the id of its storage.
            TableUpdate::SetLocation { .. } | TableUpdate::AssignUuid { .. } => {}
            other => rest.push(other.clone()),
        }
    }
    let schema = schema
        .ok_or_else(|| CommitError::Invalid("A create commit needs an add-schema update".into()))?;
    for reserved in ["format-version", "uuid"] {
        properties.remove(reserved);
    }
    let builder = TableMetadataBuilder::new(
        schema,
        spec.unwrap_or_else(|| UnboundPartitionSpec::builder().build()),
        order.unwrap_or_else(SortOrder::unsorted_order),
        location.to_string(),
        format_version,
        properties,
    )
    .map_err(invalid)?
    .assign_uuid(table_id);
    let mut metadata = builder.build().map_err(invalid)?.metadata;
    if !rest.is_empty() {
        let mut builder = TableMetadataBuilder::new_from_metadata(metadata, None);
        for update in rest {
            builder = update.apply(builder).map_err(invalid)?;
        }
        metadata = builder.build().map_err(invalid)?.metadata;
    }
    Ok(metadata)
}

/// The version number of a metadata file named `…/NNNNN-<uuid>.metadata.json` (Java's naming).
fn metadata_version(location: &str) -> Option<u64> {
    let file = location.rsplit('/').next()?;
    let (version, _) = file.split_once('-')?;
    version.parse().ok()
}

/// The tables of a prepared commit as they will be once its pointers are swapped (what its answer describes).
fn preview(prepared: &[Prepared]) -> Vec<IcebergTable> {
    prepared
        .iter()
        .map(|p| {
            let mut table = p.table.clone();
            if let Some(swap) = &p.swap {
                table.version_token.clone_from(&swap.new_version_token);
                table.metadata_location = Some(swap.new_metadata_location.clone());
                table.modified_at = swap.modified_at;
                table.modified_by.clone_from(&swap.modified_by);
            }
            IcebergTable {
                table,
                metadata_location: p.new_location.clone(),
                metadata: p.loaded.clone(),
            }
        })
        .collect()
}

/// Whether a commit may change a read-only replica (only disassociation may).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplicaWrites {
    /// Refused with [`CommitError::Forbidden`].
    Refused,
    /// Allowed.
    Allowed,
}

/// One table's part of a commit, prepared: the metadata file written and the swap to make.
struct Prepared {
    table: Table,
    swap: Option<PointerSwap>,
    new_location: String,
    loaded: Arc<LoadedMetadata>,
    /// The metadata file written, when there is one to publish.
    file: Option<String>,
    expired: Vec<String>,
}

impl Catalog {
    /// Commits one table (`POST …/tables/{table}`): returns the table with its new (or, when the updates changed
    /// nothing, its current) metadata.
    pub async fn commit_table(
        &self,
        table: &Table,
        change: TableChange,
        by: &AccountId,
    ) -> Result<IcebergTable, CommitError> {
        if change
            .requirements
            .iter()
            .any(|r| matches!(r, TableRequirement::NotExist))
        {
            return Err(CommitError::AlreadyExists(
                "Requirement failed: table already exists".into(),
            ));
        }
        let mut committed = self
            .commit_tables(vec![(table.clone(), change)], by)
            .await?;
        committed
            .pop()
            .ok_or_else(|| CommitError::StateUnknown("the commit produced no table".into()))
    }

    /// Commits several tables atomically (`POST …/transactions/commit`): every table's requirements are
    /// checked, every new metadata file is written, then one transaction swaps every pointer — all or none.
    pub async fn commit_tables(
        &self,
        changes: Vec<(Table, TableChange)>,
        by: &AccountId,
    ) -> Result<Vec<IcebergTable>, CommitError> {
        self.commit_tables_remembering(changes, by, None).await
    }

    /// [`Catalog::commit_tables`] for a request that carries an `Idempotency-Key`: its answer, rendered from the
    /// committed tables, is stored in the transaction that swaps the pointers, so two identical requests can
    /// never both apply; the one that loses gets `KeyTaken` and nothing of it is published.
    pub async fn commit_tables_remembering(
        &self,
        changes: Vec<(Table, TableChange)>,
        by: &AccountId,
        remember: Option<&RememberedCommit<'_>>,
    ) -> Result<Vec<IcebergTable>, CommitError> {
        let ids: Vec<Uuid> = changes.iter().map(|(table, _)| table.id).collect();
        let result = self
            .try_commit_tables(changes, by, remember, ReplicaWrites::Refused)
            .await;
        if result.is_err() {
            for id in ids {
                self.table_counters.commit_failed(id);
            }
        }
        result
    }

    /// The body of [`Catalog::commit_tables_remembering`], without the failure count.
    pub(crate) async fn try_commit_tables(
        &self,
        changes: Vec<(Table, TableChange)>,
        by: &AccountId,
        remember: Option<&RememberedCommit<'_>>,
        replica: ReplicaWrites,
    ) -> Result<Vec<IcebergTable>, CommitError> {
        let mut seen = std::collections::HashSet::new();
        for (table, change) in &changes {
            if !seen.insert(table.id) {
                return Err(CommitError::Invalid(format!(
                    "Table {}.{} appears more than once in the transaction",
                    table.namespace, table.name
                )));
            }
            if change
                .requirements
                .iter()
                .any(|r| matches!(r, TableRequirement::NotExist))
            {
                return Err(CommitError::Invalid(
                    "assert-create is only valid when committing a staged table create".into(),
                ));
            }
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut prepared = Vec::with_capacity(changes.len());
            for (table, change) in &changes {
                match self.prepare(table, change, attempt > 1, by, replica).await {
                    Ok(p) => prepared.push(p),
                    Err(e) => {
                        self.discard(&prepared).await;
                        return Err(e);
                    }
                }
            }
            let swaps: Vec<PointerSwap> = prepared.iter().filter_map(|p| p.swap.clone()).collect();
            let record = match remember {
                Some(remember) => match remember.record(&preview(&prepared)) {
                    Ok(record) => Some(record),
                    Err(e) => {
                        self.discard(&prepared).await;
                        return Err(e.into());
                    }
                },
                None => None,
            };
            match self
                .meta
                .swap_table_pointers_remembering(&swaps, record.as_ref())
                .await
            {
                Ok(()) => {
                    let mut committed = Vec::with_capacity(prepared.len());
                    for p in prepared {
                        committed.push(self.finish(p).await);
                    }
                    return Ok(committed);
                }
                Err(StoreError::Conflict(_)) if attempt < MAX_ATTEMPTS => {
                    // Someone else moved a table: rebase on their change if the requirements still hold.
                    self.discard(&prepared).await;
                    let jitter = u64::from(rand::random::<u8>() % 8);
                    tokio::time::sleep(Duration::from_millis(u64::from(attempt) + jitter)).await;
                }
                Err(StoreError::Conflict(_)) => {
                    self.discard(&prepared).await;
                    return Err(CommitError::Conflict(format!(
                        "The table changed concurrently {MAX_ATTEMPTS} times while committing; retry"
                    )));
                }
                Err(StoreError::NotFound) => {
                    self.discard(&prepared).await;
                    return Err(CommitError::NotFound(
                        "The table was dropped while committing".into(),
                    ));
                }
                Err(StoreError::AlreadyExists(_)) if remember.is_some() => {
                    self.discard(&prepared).await;
                    return Err(CommitError::KeyTaken(
                        "A request with the same Idempotency-Key committed first".into(),
                    ));
                }
                Err(e) => {
                    // The transaction may or may not have committed: the rows say, once the database answers.
                    return match self.settle(&swaps).await {
                        Settled::Applied => {
                            let mut committed = Vec::with_capacity(prepared.len());
                            for p in prepared {
                                committed.push(self.finish(p).await);
                            }
                            Ok(committed)
                        }
                        Settled::NotApplied => {
                            self.discard(&prepared).await;
                            Err(CommitError::Unavailable(format!(
                                "the metadata pointer swap failed and changed nothing: {e}"
                            )))
                        }
                        // Leave the files, which might be live.
                        Settled::Unknown => Err(CommitError::StateUnknown(format!(
                            "the metadata pointer swap failed: {e}: {:?}",
                            std::error::Error::source(&e)
                        ))),
                    };
                }
            }
        }
    }

    /// What became of a pointer swap whose transaction failed without saying whether it committed (the
    /// connection to the database was lost, or the database went down, around `COMMIT`). The swaps commit all or
    /// none, so the first table's row decides: its token is the new one (applied) or still the expected one (not
    /// applied). The database is asked again for up to [`SETTLE_FOR`] while it is unavailable; anything else —
    /// the table gone, a third token, no answer in time — stays unknown.
    async fn settle(&self, swaps: &[PointerSwap]) -> Settled {
        let Some(swap) = swaps.first() else {
            return Settled::Unknown;
        };
        let deadline = tokio::time::Instant::now() + SETTLE_FOR;
        loop {
            match self.meta.settled_version_token(swap.table_id).await {
                Ok(Some(token)) if token == swap.new_version_token => return Settled::Applied,
                Ok(Some(token)) if token == swap.expected_version_token => {
                    return Settled::NotApplied;
                }
                Err(StoreError::Unavailable { .. }) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                _ => return Settled::Unknown,
            }
        }
    }

    /// Reads the table's current state (fresh from the store on a retry), checks the requirements, applies the
    /// updates and writes the new metadata file.
    async fn prepare(
        &self,
        table: &Table,
        change: &TableChange,
        reload: bool,
        by: &AccountId,
        replica: ReplicaWrites,
    ) -> Result<Prepared, CommitError> {
        let table = if reload {
            let record = self
                .meta
                .table_by_id(table.id)
                .await
                .map_err(ServiceError::from)?
                .ok_or_else(|| {
                    CommitError::NotFound("The table was dropped while committing".into())
                })?;
            Self::table_from_record(&table.bucket, record)?
        } else {
            table.clone()
        };
        // A table a migration still owns is written by that migration only (`migration_target.rs`).
        self.check_writable(table.id).await?;
        let current = self.with_metadata(table).await?;
        // A replica takes commits from its replication worker only (through UpdateTableMetadataLocation): every
        // client commit, and maintenance, which the replica mirrors from its source, is refused.
        if replica == ReplicaWrites::Refused
            && let Some(why) = crate::replica_refusal(current.metadata.metadata.properties())
        {
            return Err(CommitError::Forbidden(why));
        }
        for requirement in &change.requirements {
            check_requirement(
                requirement,
                &current.metadata.metadata,
                &current.metadata.refs,
            )
            .map_err(CommitError::Conflict)?;
        }
        let files = self.table_files(current.table.id);
        let result = apply_updates(
            &files,
            &current.metadata.metadata,
            &current.metadata_location,
            &change.updates,
        )?;
        if result.changes.is_empty() {
            return Ok(Prepared {
                table: current.table,
                swap: None,
                new_location: current.metadata_location,
                loaded: current.metadata,
                file: None,
                expired: Vec::new(),
            });
        }
        let version = metadata_version(&current.metadata_location)
            .unwrap_or(current.metadata.metadata.metadata_log().len() as u64)
            + 1;
        let new_location = metadata_file_location(&files.location(), version);
        let json = Bytes::from(
            crate::metadata::metadata_json(&result.metadata)
                .map_err(|e| CommitError::Invalid(format!("metadata: {e}")))?,
        );
        files.put(&new_location, json.clone()).await?;
        let delete_expired = result
            .metadata
            .properties()
            .get(DELETE_AFTER_COMMIT)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let expired = if delete_expired {
            result
                .expired_metadata_logs
                .iter()
                .map(|log| log.metadata_file.clone())
                .collect()
        } else {
            Vec::new()
        };
        let swap = PointerSwap {
            table_id: current.table.id,
            expected_version_token: current.table.version_token.clone(),
            new_version_token: new_version_token(),
            new_metadata_location: new_location.clone(),
            modified_at: Utc::now(),
            modified_by: by.to_string(),
        };
        Ok(Prepared {
            table: current.table,
            swap: Some(swap),
            file: Some(new_location.clone()),
            new_location,
            loaded: Arc::new(LoadedMetadata::new(result.metadata, json)),
            expired,
        })
    }

    /// Removes the files of a prepared commit that will not be published.
    async fn discard(&self, prepared: &[Prepared]) {
        for p in prepared {
            if let Some(file) = &p.file {
                self.table_files(p.table.id).discard(file).await;
            }
        }
    }

    /// After the swap: cache the new metadata, delete trimmed metadata files if the table asks for it.
    async fn finish(&self, p: Prepared) -> IcebergTable {
        let mut table = p.table;
        if let Some(swap) = p.swap {
            table.version_token = swap.new_version_token;
            table.metadata_location = Some(swap.new_metadata_location);
            table.modified_at = swap.modified_at;
            table.modified_by = swap.modified_by;
            self.metadata_cache
                .insert(p.new_location.clone(), p.loaded.clone())
                .await;
            self.commit_observers.notify(&table, &p.loaded.metadata);
            self.table_counters.committed(table.id);
        }
        let files = self.table_files(table.id);
        for old in p.expired {
            match files.resolve(&old) {
                Ok(_) => files.discard(&old).await,
                Err(e) => {
                    tracing::debug!(location = %old, error = %e, "trimmed metadata file not deleted")
                }
            }
            self.metadata_cache.remove(&old).await;
        }
        IcebergTable {
            table,
            metadata_location: p.new_location,
            metadata: p.loaded,
        }
    }

    /// Commits a staged create (`POST …/tables/{table}` with `assert-create`): builds the first metadata from
    /// the updates, writes it, and creates the table row. The table gets the id of the staged location when the
    /// client sends the one stage-create handed out, else a fresh one.
    pub async fn create_staged_table(
        &self,
        namespace: &Namespace,
        name: &TableName,
        change: TableChange,
        by: &AccountId,
    ) -> Result<IcebergTable, CommitError> {
        if change
            .requirements
            .iter()
            .any(|r| !matches!(r, TableRequirement::NotExist))
        {
            return Err(CommitError::Invalid(
                "Invalid create commit: assert-create cannot be combined with other requirements"
                    .into(),
            ));
        }
        if self
            .meta
            .table_by_name(namespace.id, name.as_str())
            .await
            .map_err(ServiceError::from)?
            .is_some()
        {
            return Err(CommitError::AlreadyExists(
                "Requirement failed: table already exists".into(),
            ));
        }
        self.check_no_view(namespace, name).await?;
        // The staged table's storage, named by the set-location Java's and PyIceberg's create changes carry: it
        // must be one this account staged (or dropped), which no table owns yet. Another location names no
        // storage (requested locations are overridden at create): the table gets a fresh one.
        let staged = change.updates.iter().find_map(|u| match u {
            TableUpdate::SetLocation { location } => {
                let bucket = ["s3://", "s3a://", "oss://"]
                    .iter()
                    .find_map(|scheme| location.strip_prefix(scheme))?
                    .trim_end_matches('/');
                TableLocation::table_of_bucket(bucket).map(|id| (id, location))
            }
            _ => None,
        });
        let table_id = match staged {
            Some((id, location)) => {
                self.check_adoptable(id, &namespace.bucket.arn, by, location)
                    .await
                    .map_err(|e| match e {
                        ServiceError::Denied(m)
                        | ServiceError::AlreadyExists(m)
                        | ServiceError::Invalid(m) => {
                            CommitError::Invalid(format!("Invalid set-location: {m}"))
                        }
                        other => other.into(),
                    })?;
                id
            }
            None => Uuid::now_v7(),
        };
        let files = self.table_files(table_id);
        let location = files.location();
        let metadata = metadata_from_updates(table_id, &location, &change.updates)?;
        files
            .check_metadata(&metadata)
            .map_err(|e| CommitError::Invalid(e.to_string()))?;
        let metadata_location = metadata_file_location(&location, 0);
        let json = Bytes::from(
            crate::metadata::metadata_json(&metadata)
                .map_err(|e| CommitError::Invalid(format!("metadata: {e}")))?,
        );
        files.put(&metadata_location, json.clone()).await?;
        let table = match self
            .insert_iceberg_table(namespace, table_id, name, &metadata_location, by)
            .await
        {
            Ok(table) => table,
            Err(e) => {
                files.discard(&metadata_location).await;
                return Err(match e {
                    ServiceError::AlreadyExists(_) => CommitError::AlreadyExists(
                        "Requirement failed: table already exists".into(),
                    ),
                    other => other.into(),
                });
            }
        };
        let loaded = Arc::new(LoadedMetadata::new(metadata, json));
        self.metadata_cache
            .insert(metadata_location.clone(), loaded.clone())
            .await;
        Ok(IcebergTable {
            table,
            metadata_location,
            metadata: loaded,
        })
    }
}

#[cfg(test)]
mod tests;
