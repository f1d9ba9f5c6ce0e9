//! The migration service: the state machine of S3 Tables' migrations and their records.
//!
//! A start run goes `planning` → (`pendingReview` → `queued` when `reviewMigrationPlan`) → `migrating` →
//! `succeeded` or `failed`; `cancelled` from any state before `succeeded` (UpdateTableMigration). The
//! destination table's row appears only when the start run succeeds, so a failed or cancelled start leaves no
//! table (its reserved storage is removed). Each SyncTableMigration is a new run of type `sync` on the
//! destination table, allowed once the latest run succeeded and until CompleteTableMigration, which lifts the
//! table's write lock. Runs execute on this instance's runtime (`run.rs`); one that was under way when its
//! instance stopped is failed by the next read of it after its lease lapses (`STALE_AFTER`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tablebay_catalog::{
    AccountId, BucketArn, Catalog, MigrationLock, NamespaceName, ServiceError, Table, TableArn,
    TableBucket, TableName, TableRef,
};
use tablebay_store::MetaStore;
use tablebay_store::encryption::{open_secret, seal_secret};
use tablebay_store::meta::TableMigrationRecord;
use uuid::Uuid;

use crate::MigrationError;
use crate::source::{Source, SourceConfiguration, SourceType};

/// A run whose state has not moved for this long while `planning`, `queued` or `migrating` is taken for dead
/// (its instance stopped) and reported `failed`.
const STALE_AFTER: Duration = Duration::from_secs(6 * 3600);

/// `MigrationState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationState {
    /// Accepted, not started.
    New,
    /// Reading the source and writing the compatibility reports.
    Planning,
    /// Waiting for UpdateTableMigration (`reviewMigrationPlan`).
    PendingReview,
    /// Approved, about to migrate.
    Queued,
    /// Copying and committing.
    Migrating,
    /// Done.
    Succeeded,
    /// Failed (see `failureReason`).
    Failed,
    /// Being cancelled.
    Cancelling,
    /// Cancelled.
    Cancelled,
}

impl MigrationState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Planning => "planning",
            Self::PendingReview => "pendingReview",
            Self::Queued => "queued",
            Self::Migrating => "migrating",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelling => "cancelling",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether the run is over.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }

    fn is_running(self) -> bool {
        matches!(
            self,
            Self::New | Self::Planning | Self::Queued | Self::Migrating | Self::Cancelling
        )
    }
}

impl FromStr for MigrationState {
    type Err = MigrationError;

    fn from_str(raw: &str) -> Result<Self, MigrationError> {
        [
            Self::New,
            Self::Planning,
            Self::PendingReview,
            Self::Queued,
            Self::Migrating,
            Self::Succeeded,
            Self::Failed,
            Self::Cancelling,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == raw)
        .ok_or_else(|| MigrationError::Invalid(format!("Invalid migration state {raw:?}")))
    }
}

/// `MigrationType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationKind {
    /// StartTableMigration.
    Start,
    /// SyncTableMigration.
    Sync,
}

impl MigrationKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Sync => "sync",
        }
    }
}

/// What happens to the source's data and delete files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Copy them into the table's storage (metadata rewritten to the new locations): the table is self-contained.
    #[default]
    Copy,
    /// Leave them where they are; only the metadata (metadata file, manifest lists, manifests) moves. Readers
    /// need access to the source's store.
    Register,
}

/// `planningStats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanningStats {
    /// Files the source's metadata names (manifest lists, manifests, data and delete files, statistics).
    pub objects_scanned: u64,
    /// Files this run writes into the table's storage.
    pub objects_planned: u64,
    /// Distinct partitions of the live files.
    pub partition_count: u64,
}

/// `migrationStats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationStats {
    /// Files written.
    pub objects_migrated: u64,
    /// Files that could not be written.
    pub objects_failed_migration: u64,
    /// Files still to write.
    pub objects_pending_migration: u64,
}

/// One report object (`ReportOverview`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportObject {
    /// The prefix asked for.
    pub prefix: String,
    /// Its key.
    pub key: String,
    /// Its CRC64NVME, base64.
    pub checksum_crc64nvme: String,
    /// Findings by category (only the invalid ones are counted).
    pub invalid_findings: BTreeMap<String, u64>,
}

/// `migrationOutput`: where reports go, and the ones written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationOutput {
    /// The report bucket ARN as given.
    pub bucket: String,
    /// Prefix of the table compatibility report.
    pub table_compatibility_prefix: String,
    /// Prefix of the object compatibility report.
    pub object_compatibility_prefix: String,
    /// Prefix of the object migration report.
    pub object_migration_prefix: String,
    /// The table compatibility report, once written.
    pub table_compatibility_report: Option<ReportObject>,
    /// The object compatibility report, once written.
    pub object_compatibility_report: Option<ReportObject>,
    /// The object migration report, once written.
    pub object_migration_report: Option<ReportObject>,
}

/// `failureReason`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureReason {
    /// `MigrationFailureCode`.
    pub code: String,
    /// What went wrong.
    pub detail: String,
}

/// What the service keeps of a run besides its columns (stored as JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    role_arn: String,
    bucket_arn: String,
    source_type: String,
    source: SourceConfiguration,
    data_mode: DataMode,
    data_migration: serde_json::Value,
    review: bool,
    output: MigrationOutput,
    account: String,
    #[serde(default)]
    has_valid_plan: Option<bool>,
    #[serde(default)]
    failure: Option<FailureReason>,
    #[serde(default)]
    planning: Option<PlanningStats>,
    #[serde(default)]
    stats: Option<MigrationStats>,
    #[serde(default)]
    description: Option<String>,
    /// The source metadata file this run brought over.
    #[serde(default)]
    source_metadata_location: Option<String>,
    /// Whether CompleteTableMigration was called after this run.
    #[serde(default)]
    completed: bool,
}

/// One migration run as GetTableMigration shows it.
#[derive(Clone, Debug)]
pub struct Migration {
    /// The id.
    pub id: Uuid,
    /// Start or sync.
    pub kind: MigrationKind,
    /// The state.
    pub state: MigrationState,
    /// Destination bucket ARN.
    pub bucket_arn: String,
    /// Destination namespace.
    pub namespace: String,
    /// Destination table name.
    pub name: String,
    /// Destination table ARN, once the table exists.
    pub table_arn: Option<String>,
    /// `roleARN` as given (recorded; Tablebay acts with its own access).
    pub role_arn: String,
    /// `reviewMigrationPlan`.
    pub review: bool,
    /// Whether planning produced a valid plan.
    pub has_valid_plan: Option<bool>,
    /// When the run started.
    pub created_at: DateTime<Utc>,
    /// When its state last changed.
    pub state_updated_at: DateTime<Utc>,
    /// Why it failed.
    pub failure: Option<FailureReason>,
    /// Planning statistics.
    pub planning: Option<PlanningStats>,
    /// Migration statistics.
    pub stats: Option<MigrationStats>,
    /// `sourceType`.
    pub source_type: String,
    /// `source`, secrets redacted.
    pub source: SourceConfiguration,
    /// `dataMigration` as given (with its defaults).
    pub data_migration: serde_json::Value,
    /// Reports.
    pub output: MigrationOutput,
}

/// A StartTableMigration request, parsed.
#[derive(Clone, Debug)]
pub struct StartRequest {
    /// `roleARN`.
    pub role_arn: String,
    /// `destinationTable.tableBucketARN`.
    pub bucket: BucketArn,
    /// `destinationTable.namespace`.
    pub namespace: NamespaceName,
    /// `destinationTable.name`.
    pub name: TableName,
    /// `sourceType`.
    pub source_type: SourceType,
    /// `source`.
    pub source: SourceConfiguration,
    /// `dataMigration.dataMode`.
    pub data_mode: DataMode,
    /// `dataMigration` as given.
    pub data_migration: serde_json::Value,
    /// `reviewMigrationPlan`.
    pub review: bool,
    /// `migrationOutput`.
    pub output: MigrationOutput,
}

/// The migration service. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Migrations {
    pub(crate) catalog: Catalog,
    pub(crate) meta: MetaStore,
    pub(crate) local_root: Option<Arc<PathBuf>>,
}

/// A run loaded with its parsed document.
pub(crate) struct Run {
    pub(crate) record: TableMigrationRecord,
    doc: Document,
}

impl Run {
    pub(crate) fn state(&self) -> MigrationState {
        MigrationState::from_str(&self.record.state).unwrap_or(MigrationState::Failed)
    }

    pub(crate) fn source(&self) -> Result<Source, MigrationError> {
        self.doc
            .source
            .resolve(SourceType::parse(&self.doc.source_type)?)
    }

    pub(crate) fn data_mode(&self) -> DataMode {
        self.doc.data_mode
    }

    pub(crate) fn account(&self) -> Result<AccountId, MigrationError> {
        Ok(AccountId::parse(&self.doc.account)?)
    }

    pub(crate) fn bucket_arn(&self) -> Result<BucketArn, MigrationError> {
        Ok(BucketArn::parse(&self.doc.bucket_arn)?)
    }

    pub(crate) fn output(&self) -> &MigrationOutput {
        &self.doc.output
    }

    pub(crate) fn review(&self) -> bool {
        self.doc.review
    }
}

/// A change a run step makes to its record.
#[derive(Default)]
pub(crate) struct Update {
    pub(crate) has_valid_plan: Option<bool>,
    pub(crate) failure: Option<FailureReason>,
    pub(crate) planning: Option<PlanningStats>,
    pub(crate) stats: Option<MigrationStats>,
    pub(crate) output: Option<MigrationOutput>,
    pub(crate) source_metadata_location: Option<String>,
}

impl Migrations {
    /// The service over the catalog and its meta store. `local_root`, when set, is the one directory whose
    /// `file:` paths sources may name (a warehouse on this machine); without it only S3 sources are read.
    pub fn new(catalog: Catalog, meta: MetaStore, local_root: Option<PathBuf>) -> Self {
        Self {
            catalog,
            meta,
            local_root: local_root.map(Arc::new),
        }
    }

    /// StartTableMigration: checks the destination, records the run, reserves the table's storage and starts
    /// planning in the background. `Conflict` when the destination table exists.
    pub async fn start(
        &self,
        by: &AccountId,
        request: StartRequest,
    ) -> Result<(Uuid, MigrationState), MigrationError> {
        // Parse and check the source before anything is recorded: a bad one is a 400 that changes nothing.
        request.source.resolve(request.source_type)?;
        let namespace = self
            .catalog
            .namespace(&request.bucket, &request.namespace)
            .await?;
        let named = TableRef::Name {
            bucket: request.bucket.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        match self.catalog.table(&named).await {
            Ok(_) => {
                return Err(MigrationError::Conflict(format!(
                    "The destination table {}.{} already exists",
                    request.namespace, request.name
                )));
            }
            Err(ServiceError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let id = Uuid::now_v7();
        let lock = MigrationLock {
            migration_id: id.to_string(),
        };
        let table_id = self
            .catalog
            .reserve_table_storage(&namespace, &lock)
            .await?;
        let now = Utc::now();
        let doc = Document {
            role_arn: request.role_arn,
            bucket_arn: namespace.bucket.arn.to_string(),
            source_type: request.source_type.as_str().to_string(),
            source: request.source,
            data_mode: request.data_mode,
            data_migration: request.data_migration,
            review: request.review,
            output: request.output,
            account: by.to_string(),
            has_valid_plan: None,
            failure: None,
            planning: None,
            stats: None,
            description: None,
            source_metadata_location: None,
            completed: false,
        };
        let record = TableMigrationRecord {
            id,
            bucket_id: namespace.bucket.id,
            namespace: request.namespace.to_string(),
            name: request.name.to_string(),
            table_id,
            kind: MigrationKind::Start.as_str().to_string(),
            state: MigrationState::Planning.as_str().to_string(),
            created_at: now,
            state_updated_at: now,
            document: self.document_text(&doc).await?,
        };
        if let Err(e) = self.meta.insert_table_migration(&record).await {
            self.discard(table_id).await;
            return Err(e.into());
        }
        self.spawn(id);
        Ok((id, MigrationState::Planning))
    }

    /// SyncTableMigration: a new run that brings over the source's commits since the last run; allowed once
    /// the latest run succeeded and until the migration is completed.
    pub async fn sync(
        &self,
        table: &Table,
        role_arn: String,
        review: bool,
        output: MigrationOutput,
    ) -> Result<(Uuid, MigrationState), MigrationError> {
        let latest = self.latest_run(table.id).await?;
        if latest.doc.completed || self.catalog.migration_lock(table.id).await?.is_none() {
            return Err(MigrationError::Conflict(
                "The table's migration is completed: it is an ordinary table now and cannot be synced".into(),
            ));
        }
        if latest.state() != MigrationState::Succeeded {
            return Err(MigrationError::Conflict(format!(
                "The latest migration run of the table is {}; a sync needs it to have succeeded",
                latest.state().as_str()
            )));
        }
        let id = Uuid::now_v7();
        let now = Utc::now();
        let doc = Document {
            role_arn,
            review,
            output,
            has_valid_plan: None,
            failure: None,
            planning: None,
            stats: None,
            description: None,
            completed: false,
            ..latest.doc.clone()
        };
        let record = TableMigrationRecord {
            id,
            kind: MigrationKind::Sync.as_str().to_string(),
            state: MigrationState::Planning.as_str().to_string(),
            created_at: now,
            state_updated_at: now,
            document: self.document_text(&doc).await?,
            ..latest.record.clone()
        };
        self.meta.insert_table_migration(&record).await?;
        self.spawn(id);
        Ok((id, MigrationState::Planning))
    }

    /// UpdateTableMigration: `queued` continues a run waiting in `pendingReview`; `cancelled` stops one that has
    /// not succeeded yet.
    pub async fn update(
        &self,
        account: &AccountId,
        id: Uuid,
        requested: MigrationState,
        description: Option<String>,
    ) -> Result<Migration, MigrationError> {
        let run = self.run(account, id).await?;
        let state = run.state();
        let next = match (requested, state) {
            (MigrationState::Queued, MigrationState::PendingReview) => MigrationState::Queued,
            (MigrationState::Cancelled, s) if !s.is_final() => MigrationState::Cancelled,
            (MigrationState::Queued | MigrationState::Cancelled, s) => {
                return Err(MigrationError::Conflict(format!(
                    "The migration is {}: it cannot become {}",
                    s.as_str(),
                    requested.as_str()
                )));
            }
            _ => {
                return Err(MigrationError::Invalid(
                    "requestedState must be queued or cancelled".into(),
                ));
            }
        };
        let mut doc = run.doc.clone();
        doc.description = description.or(doc.description);
        if !self
            .meta
            .update_table_migration(
                id,
                state.as_str(),
                next.as_str(),
                &self.document_text(&doc).await?,
                Utc::now(),
            )
            .await?
        {
            return Err(MigrationError::Conflict(
                "The migration changed state meanwhile; read it again".into(),
            ));
        }
        if next == MigrationState::Queued {
            self.spawn(id);
        }
        if next == MigrationState::Cancelled && run.record.kind == MigrationKind::Start.as_str() {
            // A start that had not published its table leaves none; the runner, if mid-way, stops at its next
            // step (its state swap fails) and discards what it wrote.
            if self.meta.table_by_id(run.record.table_id).await?.is_none()
                && state == MigrationState::PendingReview
            {
                self.discard(run.record.table_id).await;
            }
        }
        self.view(self.run(account, id).await?).await
    }

    /// CompleteTableMigration: the table becomes an ordinary table (writable; maintenance runs). `Conflict`
    /// unless its latest run succeeded.
    pub async fn complete(&self, table: &Table) -> Result<(), MigrationError> {
        let latest = self.latest_run(table.id).await?;
        if latest.doc.completed {
            return Ok(());
        }
        if latest.state() != MigrationState::Succeeded {
            return Err(MigrationError::Conflict(format!(
                "The latest migration run of the table is {}: it can be completed only after it succeeded",
                latest.state().as_str()
            )));
        }
        let mut doc = latest.doc.clone();
        doc.completed = true;
        let state = MigrationState::Succeeded.as_str();
        self.meta
            .update_table_migration(
                latest.record.id,
                state,
                state,
                &self.document_text(&doc).await?,
                Utc::now(),
            )
            .await?;
        self.catalog.release_migration_lock(table.id).await?;
        Ok(())
    }

    /// GetTableMigration by id (a migration of another account is not found).
    pub async fn get(&self, account: &AccountId, id: Uuid) -> Result<Migration, MigrationError> {
        let run = self.run(account, id).await?;
        self.view(run).await
    }

    /// GetTableMigration by table: its latest run.
    pub async fn get_for_table(&self, table: &Table) -> Result<Migration, MigrationError> {
        let run = self.latest_run(table.id).await?;
        self.view(run).await
    }

    /// ListTableMigrations of a bucket (optionally one table's, or by destination namespace and name), in
    /// start order; returns the page and the id to continue after.
    #[allow(clippy::too_many_arguments)]
    pub async fn list(
        &self,
        bucket: &TableBucket,
        table_id: Option<Uuid>,
        named: Option<(&str, &str)>,
        state: Option<MigrationState>,
        has_valid_plan: Option<bool>,
        after: Option<Uuid>,
        limit: u32,
    ) -> Result<(Vec<Migration>, Option<Uuid>), MigrationError> {
        let records = self
            .meta
            .table_migrations(bucket.id, table_id, after, limit)
            .await?;
        let next = (records.len() == limit as usize)
            .then(|| records.last().map(|r| r.id))
            .flatten();
        let mut out = Vec::new();
        for record in records {
            if let Some((namespace, name)) = named
                && (record.namespace != namespace || record.name != name)
            {
                continue;
            }
            let run = self.refresh(self.parse_run(record).await?).await?;
            let view = self.view(run).await?;
            if state.is_some_and(|s| s != view.state)
                || has_valid_plan.is_some_and(|v| view.has_valid_plan != Some(v))
            {
                continue;
            }
            out.push(view);
        }
        Ok((out, next))
    }

    // --- runs ---

    pub(crate) async fn run(&self, account: &AccountId, id: Uuid) -> Result<Run, MigrationError> {
        let not_found = || MigrationError::NotFound(format!("The migration {id} does not exist"));
        let record = self.meta.table_migration(id).await?.ok_or_else(not_found)?;
        let run = self.parse_run(record).await?;
        let bucket = run.bucket_arn()?;
        if bucket.account != *account {
            return Err(not_found());
        }
        self.refresh(run).await
    }

    pub(crate) async fn load(&self, id: Uuid) -> Result<Run, MigrationError> {
        let record = self.meta.table_migration(id).await?.ok_or_else(|| {
            MigrationError::NotFound(format!("The migration {id} does not exist"))
        })?;
        self.parse_run(record).await
    }

    async fn latest_run(&self, table_id: Uuid) -> Result<Run, MigrationError> {
        let record = self
            .meta
            .latest_table_migration(table_id)
            .await?
            .ok_or_else(|| {
                MigrationError::NotFound("The table is not the destination of a migration".into())
            })?;
        self.refresh(self.parse_run(record).await?).await
    }

    /// A run whose instance died mid-way is failed once it has not moved for [`STALE_AFTER`].
    async fn refresh(&self, run: Run) -> Result<Run, MigrationError> {
        let state = run.state();
        let idle = Utc::now() - run.record.state_updated_at;
        if !state.is_running() || idle.to_std().unwrap_or_default() < STALE_AFTER {
            return Ok(run);
        }
        let failure = FailureReason {
            code: "internalError".into(),
            detail: "the server running the migration stopped before it finished".into(),
        };
        self.advance(
            &run,
            state,
            MigrationState::Failed,
            Update {
                failure: Some(failure),
                ..Update::default()
            },
        )
        .await?;
        if run.record.kind == MigrationKind::Start.as_str() {
            self.discard(run.record.table_id).await;
        }
        self.load(run.record.id).await
    }

    /// Moves a run from `from` to `to` with `update`; `false` when its state was changed by someone else (a
    /// cancel), in which case nothing is written.
    pub(crate) async fn advance(
        &self,
        run: &Run,
        from: MigrationState,
        to: MigrationState,
        update: Update,
    ) -> Result<bool, MigrationError> {
        let current = self.load(run.record.id).await?;
        let mut doc = current.doc;
        doc.has_valid_plan = update.has_valid_plan.or(doc.has_valid_plan);
        doc.failure = update.failure.or(doc.failure);
        doc.planning = update.planning.or(doc.planning);
        doc.stats = update.stats.or(doc.stats);
        doc.output = update.output.unwrap_or(doc.output);
        doc.source_metadata_location = update
            .source_metadata_location
            .or(doc.source_metadata_location);
        Ok(self
            .meta
            .update_table_migration(
                run.record.id,
                from.as_str(),
                to.as_str(),
                &self.document_text(&doc).await?,
                Utc::now(),
            )
            .await?)
    }

    /// Removes a start run's reserved storage (best effort: unreferenced-file removal is the backstop).
    pub(crate) async fn discard(&self, table_id: Uuid) {
        if let Err(e) = self.catalog.discard_reserved_storage(table_id).await {
            tracing::warn!(%table_id, error = %e, "could not remove the storage of a failed migration");
        }
    }

    async fn view(&self, run: Run) -> Result<Migration, MigrationError> {
        let state = run.state();
        let table_arn = match self.meta.table_by_id(run.record.table_id).await? {
            Some(_) => Some(
                TableArn {
                    bucket: run.bucket_arn()?,
                    table_id: run.record.table_id,
                }
                .to_string(),
            ),
            None => None,
        };
        let kind = if run.record.kind == MigrationKind::Sync.as_str() {
            MigrationKind::Sync
        } else {
            MigrationKind::Start
        };
        Ok(Migration {
            id: run.record.id,
            kind,
            state,
            bucket_arn: run.doc.bucket_arn.clone(),
            namespace: run.record.namespace.clone(),
            name: run.record.name.clone(),
            table_arn,
            role_arn: run.doc.role_arn.clone(),
            review: run.doc.review,
            has_valid_plan: run.doc.has_valid_plan,
            created_at: run.record.created_at,
            state_updated_at: run.record.state_updated_at,
            failure: run.doc.failure.clone(),
            planning: run.doc.planning,
            stats: run.doc.stats,
            source_type: run.doc.source_type.clone(),
            source: run.doc.source.redacted(),
            data_migration: run.doc.data_migration.clone(),
            output: run.doc.output.clone(),
        })
    }

    fn spawn(&self, id: Uuid) {
        let service = self.clone();
        tokio::spawn(async move { service.execute(id).await });
    }
}

impl Migrations {
    /// A run's document as stored: the source configuration (which holds the source's credentials: a sync needs
    /// them again) sealed with the server-managed master key, like IAM secrets, so a copy of the database alone
    /// does not reveal them.
    async fn document_text(&self, doc: &Document) -> Result<String, MigrationError> {
        let mut value =
            serde_json::to_value(doc).map_err(|e| MigrationError::Internal(e.to_string()))?;
        let source = to_json(&doc.source)?;
        let sealed = seal_secret(self.catalog.key_provider(), &source)
            .await
            .map_err(|e| MigrationError::Internal(format!("sealing a migration's source: {e}")))?;
        value["source"] = serde_json::Value::String(sealed);
        to_json(&value)
    }

    /// A stored run, its source configuration opened.
    async fn parse_run(&self, record: TableMigrationRecord) -> Result<Run, MigrationError> {
        let unreadable = |e: String| {
            MigrationError::Internal(format!("stored migration {} is unreadable: {e}", record.id))
        };
        let mut value: serde_json::Value =
            serde_json::from_str(&record.document).map_err(|e| unreadable(e.to_string()))?;
        if let Some(sealed) = value.get("source").and_then(serde_json::Value::as_str) {
            let source = open_secret(self.catalog.key_provider(), sealed)
                .await
                .map_err(|e| unreadable(e.to_string()))?;
            value["source"] =
                serde_json::from_str(&source).map_err(|e| unreadable(e.to_string()))?;
        }
        let doc = serde_json::from_value(value).map_err(|e| unreadable(e.to_string()))?;
        Ok(Run { record, doc })
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<String, MigrationError> {
    serde_json::to_string(value).map_err(|e| MigrationError::Internal(e.to_string()))
}
