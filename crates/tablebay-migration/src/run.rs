//! One migration run (start or sync): plan — read the source's metadata, manifest lists and manifests, count
//! what is there and check it can be migrated, write the compatibility reports — then migrate — write every
//! file the destination lacks (data and delete files in copy mode; manifests and manifest lists, rewritten, in
//! both modes), write the rewritten metadata file, and publish it: the table's row for a start, a pointer swap
//! for a sync. Files are written before the pointer names them, so a run that fails leaves nothing visible.

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use tablebay_catalog::{TableArn, TableFiles, TableRef};
use tablebay_objects::ChecksumAlgorithm;
use uuid::Uuid;

use crate::MigrationError;
use crate::reader::{self, SourceFiles, SourceTable};
use crate::rewrite::{self, PathMap};
use crate::service::{
    DataMode, FailureReason, MigrationKind, MigrationOutput, MigrationState, MigrationStats,
    Migrations, PlanningStats, ReportObject, Run, Update,
};

/// Files copied at once.
const COPY_CONCURRENCY: usize = 4;

/// What planning found.
struct Plan {
    source: SourceTable,
    files: SourceFiles,
    paths: PathMap,
    /// Source manifest lists and manifests, with their bytes.
    lists: Vec<(String, Bytes)>,
    manifests: Vec<(String, Bytes)>,
    /// Live data and delete files.
    data_files: BTreeSet<String>,
    /// Statistics files.
    statistics: Vec<String>,
    partitions: usize,
    position_deletes: usize,
}

impl Plan {
    fn scanned(&self) -> u64 {
        (self.lists.len() + self.manifests.len() + self.data_files.len() + self.statistics.len())
            as u64
    }
}

impl Migrations {
    /// Runs migration `id` from its current state to its next resting one (pendingReview, succeeded, failed).
    pub(crate) async fn execute(&self, id: Uuid) {
        if let Err(e) = self.try_execute(id).await {
            tracing::warn!(migration = %id, error = %e, "a migration run could not record its outcome");
        }
    }

    async fn try_execute(&self, id: Uuid) -> Result<(), MigrationError> {
        let run = self.load(id).await?;
        let from = run.state();
        if !matches!(from, MigrationState::Planning | MigrationState::Queued) {
            return Ok(());
        }
        let plan = match self.plan(&run).await {
            Ok(plan) => plan,
            Err(e) => return self.fail(&run, from, e).await,
        };
        let (planning, output, valid) = match self.plan_reports(&run, &plan).await {
            Ok(reported) => reported,
            Err(e) => return self.fail(&run, from, e).await,
        };
        let is_valid = valid.is_ok();
        let update = || Update {
            has_valid_plan: Some(is_valid),
            planning: Some(planning),
            output: Some(output.clone()),
            ..Update::default()
        };
        if let Err(e) = valid {
            self.advance(&run, from, from, update()).await?;
            return self.fail(&run, from, e).await;
        }
        if from == MigrationState::Planning && run.review() {
            self.advance(&run, from, MigrationState::PendingReview, update())
                .await?;
            return Ok(());
        }
        if !self
            .advance(&run, from, MigrationState::Migrating, update())
            .await?
        {
            return self.cancelled(&run).await;
        }
        match self.migrate(&run, &plan).await {
            Ok((stats, location)) => {
                let report = self
                    .write_report(
                        &run,
                        &output.object_migration_prefix,
                        "object-migration-report.json",
                        &serde_json::json!({
                            "migrationId": run.record.id.to_string(),
                            "sourceMetadataLocation": plan.source.metadata_location,
                            "destinationMetadataLocation": location,
                            "objectsMigrated": stats.objects_migrated,
                        }),
                        Default::default(),
                    )
                    .await?;
                let output = MigrationOutput {
                    object_migration_report: Some(report),
                    ..output
                };
                let done = Update {
                    stats: Some(stats),
                    output: Some(output),
                    source_metadata_location: Some(plan.source.metadata_location.clone()),
                    ..Update::default()
                };
                self.advance(
                    &run,
                    MigrationState::Migrating,
                    MigrationState::Succeeded,
                    done,
                )
                .await?;
                Ok(())
            }
            Err(e) => self.fail(&run, MigrationState::Migrating, e).await,
        }
    }

    /// Records a failure; a start's reserved storage is removed (no half-made table).
    async fn fail(
        &self,
        run: &Run,
        from: MigrationState,
        error: MigrationError,
    ) -> Result<(), MigrationError> {
        tracing::info!(migration = %run.record.id, error = %error, "a migration run failed");
        let detail: String = error.to_string().chars().take(1024).collect();
        let update = Update {
            failure: Some(FailureReason {
                code: error.failure_code().to_string(),
                detail,
            }),
            ..Update::default()
        };
        if !self
            .advance(run, from, MigrationState::Failed, update)
            .await?
        {
            return self.cancelled(run).await;
        }
        if run.record.kind == MigrationKind::Start.as_str() {
            self.discard(run.record.table_id).await;
        }
        Ok(())
    }

    /// The run was cancelled while it worked: a start's unpublished storage goes.
    async fn cancelled(&self, run: &Run) -> Result<(), MigrationError> {
        if run.record.kind == MigrationKind::Start.as_str()
            && self.meta.table_by_id(run.record.table_id).await?.is_none()
        {
            self.discard(run.record.table_id).await;
        }
        Ok(())
    }

    /// Reads the source's metadata, manifest lists and manifests.
    async fn plan(&self, run: &Run) -> Result<Plan, MigrationError> {
        let source = run.source()?;
        let (table, files) =
            reader::open(&source, self.local_root.as_deref().map(|p| p.as_path())).await?;
        let location = table
            .metadata
            .get("location")
            .and_then(|v| v.as_str())
            .ok_or_else(|| MigrationError::Source("the source metadata has no location".into()))?
            .to_string();
        let destination = self.catalog.table_files(run.record.table_id).location();
        let paths = PathMap::new(&location, &destination);
        let mut lists = Vec::new();
        let mut statistics = Vec::new();
        for path in rewrite::metadata_files(&table.metadata) {
            if is_manifest_list(&table.metadata, &path) {
                let bytes = files.read(&path).await?;
                lists.push((path, bytes));
            } else {
                statistics.push(path);
            }
        }
        let mut manifest_paths = BTreeSet::new();
        for (_, bytes) in &lists {
            manifest_paths.extend(rewrite::manifest_list_entries(bytes)?);
        }
        let mut manifests = Vec::new();
        let mut data_files = BTreeSet::new();
        let mut partitions = BTreeSet::new();
        let mut position_deletes = 0;
        for path in manifest_paths {
            let bytes = files.read(&path).await?;
            let entries = rewrite::manifest_entries(&bytes)?;
            position_deletes += entries.position_deletes;
            data_files.extend(entries.files);
            partitions.extend(entries.partitions);
            manifests.push((path, bytes));
        }
        Ok(Plan {
            source: table,
            files,
            paths,
            lists,
            manifests,
            data_files,
            statistics,
            partitions: partitions.len(),
            position_deletes,
        })
    }

    /// Planning statistics and the two compatibility reports; the `Err` is why the plan is not valid.
    async fn plan_reports(
        &self,
        run: &Run,
        plan: &Plan,
    ) -> Result<(PlanningStats, MigrationOutput, Result<(), MigrationError>), MigrationError> {
        let copy = run.data_mode() == DataMode::Copy;
        let destination = self.catalog.table_files(run.record.table_id);
        let mut planned = 0u64;
        let candidates = plan
            .lists
            .iter()
            .map(|(p, _)| p)
            .chain(plan.manifests.iter().map(|(p, _)| p))
            .chain(plan.statistics.iter())
            .chain(plan.data_files.iter().filter(|_| copy));
        for path in candidates {
            if destination.size(&plan.paths.map(path)).await?.is_none() {
                planned += 1;
            }
        }
        let planning = PlanningStats {
            objects_scanned: plan.scanned(),
            objects_planned: planned + 1,
            partition_count: plan.partitions as u64,
        };
        // Position deletes name data files by path inside their rows: copied data would no longer match them.
        let mut table_findings = std::collections::BTreeMap::new();
        let valid = if copy && plan.position_deletes > 0 {
            table_findings.insert(
                "positionDeleteFiles".to_string(),
                plan.position_deletes as u64,
            );
            Err(MigrationError::SourceNotSupported(format!(
                "the source has {} position delete files, which name data files by their paths: migrate it \
                 with dataMigration.dataMode register, or compact its deletes first",
                plan.position_deletes
            )))
        } else {
            Ok(())
        };
        let output = run.output().clone();
        let table_report = self
            .write_report(
                run,
                &output.table_compatibility_prefix,
                "table-compatibility-report.json",
                &serde_json::json!({
                    "migrationId": run.record.id.to_string(),
                    "sourceMetadataLocation": plan.source.metadata_location,
                    "formatVersion": plan.source.metadata.get("format-version"),
                    "snapshots": plan.source.metadata.get("snapshots").and_then(|s| s.as_array()).map(Vec::len),
                    "positionDeleteFiles": plan.position_deletes,
                    "compatible": valid.is_ok(),
                }),
                table_findings,
            )
            .await?;
        let object_report = self
            .write_report(
                run,
                &output.object_compatibility_prefix,
                "object-compatibility-report.json",
                &serde_json::json!({
                    "migrationId": run.record.id.to_string(),
                    "manifestLists": plan.lists.len(),
                    "manifests": plan.manifests.len(),
                    "dataAndDeleteFiles": plan.data_files.len(),
                    "statisticsFiles": plan.statistics.len(),
                    "dataMode": match run.data_mode() { DataMode::Copy => "copy", DataMode::Register => "register" },
                }),
                Default::default(),
            )
            .await?;
        let output = MigrationOutput {
            table_compatibility_report: Some(table_report),
            object_compatibility_report: Some(object_report),
            ..output
        };
        Ok((planning, output, valid))
    }

    /// Writes the files, the metadata file, and publishes it.
    async fn migrate(
        &self,
        run: &Run,
        plan: &Plan,
    ) -> Result<(MigrationStats, String), MigrationError> {
        let destination = self.catalog.table_files(run.record.table_id);
        let copy = run.data_mode() == DataMode::Copy;
        let mut migrated = 0u64;
        if copy {
            // Owned paths: a stream of futures borrowing `&String` items is not `Send` enough for `spawn`.
            let paths: Vec<String> = plan
                .data_files
                .iter()
                .chain(plan.statistics.iter())
                .cloned()
                .collect();
            let (files, map, destination) = (&plan.files, &plan.paths, &destination);
            migrated += futures::stream::iter(paths)
                .map(move |path| async move { copy_file(files, destination, map, &path).await })
                .buffer_unordered(COPY_CONCURRENCY)
                .try_fold(0u64, |n, copied| async move {
                    Ok::<u64, MigrationError>(n + u64::from(copied))
                })
                .await?;
        } else {
            for path in &plan.statistics {
                migrated +=
                    u64::from(copy_file(&plan.files, &destination, &plan.paths, path).await?);
            }
        }
        // Manifests, then the lists that name them (with the rewritten manifests' lengths).
        let mut lengths = HashMap::new();
        for (path, bytes) in &plan.manifests {
            let target = plan.paths.map(path);
            let size = match destination.size(&target).await? {
                Some(size) => size,
                None => {
                    let rewritten = rewrite::rewrite_manifest(bytes, copy.then_some(&plan.paths))?;
                    let size = rewritten.len() as u64;
                    write(&destination, &target, rewritten).await?;
                    migrated += 1;
                    size
                }
            };
            lengths.insert(target, size);
        }
        for (path, bytes) in &plan.lists {
            let target = plan.paths.map(path);
            if destination.size(&target).await?.is_none() {
                let rewritten = rewrite::rewrite_manifest_list(bytes, &plan.paths, &lengths)?;
                write(&destination, &target, rewritten).await?;
                migrated += 1;
            }
        }
        let metadata = rewrite::rewrite_metadata(&plan.source.metadata, &plan.paths)?;
        let location = format!(
            "{}/metadata/{:05}-{}.metadata.json",
            plan.paths.destination_root(),
            metadata_version(&plan.source.metadata_location),
            Uuid::now_v7()
        );
        let json =
            serde_json::to_vec(&metadata).map_err(|e| MigrationError::Internal(e.to_string()))?;
        write(&destination, &location, Bytes::from(json)).await?;
        migrated += 1;
        // A cancel that came while files were written wins: nothing is published.
        if self.load(run.record.id).await?.state() != MigrationState::Migrating {
            return Err(MigrationError::Conflict(
                "the migration was cancelled".into(),
            ));
        }
        let account = run.account()?;
        let bucket = run.bucket_arn()?;
        if run.record.kind == MigrationKind::Start.as_str() {
            let namespace = self
                .catalog
                .namespace(
                    &bucket,
                    &tablebay_catalog::NamespaceName::parse(&run.record.namespace)?,
                )
                .await?;
            let name = tablebay_catalog::TableName::parse(&run.record.name)?;
            self.catalog
                .publish_migrated_table(&namespace, run.record.table_id, &name, &location, &account)
                .await?;
        } else {
            let table = self
                .catalog
                .table(&TableRef::Arn(TableArn {
                    bucket,
                    table_id: run.record.table_id,
                }))
                .await?;
            self.catalog
                .swap_migrated_metadata(&table, &location, &account)
                .await?;
        }
        Ok((
            MigrationStats {
                objects_migrated: migrated,
                objects_failed_migration: 0,
                objects_pending_migration: 0,
            },
            location,
        ))
    }

    /// Writes a report into the destination's storage under `migration-reports/<prefix>/<migration id>/`.
    async fn write_report(
        &self,
        run: &Run,
        prefix: &str,
        name: &str,
        body: &serde_json::Value,
        invalid_findings: std::collections::BTreeMap<String, u64>,
    ) -> Result<ReportObject, MigrationError> {
        let destination = self.catalog.table_files(run.record.table_id);
        let prefix_part = prefix.trim_matches('/');
        let key = if prefix_part.is_empty() {
            format!("migration-reports/{}/{name}", run.record.id)
        } else {
            format!("migration-reports/{prefix_part}/{}/{name}", run.record.id)
        };
        let bytes =
            serde_json::to_vec_pretty(body).map_err(|e| MigrationError::Internal(e.to_string()))?;
        let checksum = ChecksumAlgorithm::Crc64Nvme.digest(&bytes);
        write(
            &destination,
            &format!("{}/{key}", destination.location()),
            Bytes::from(bytes),
        )
        .await?;
        use base64::Engine;
        Ok(ReportObject {
            prefix: prefix.to_string(),
            key,
            checksum_crc64nvme: base64::engine::general_purpose::STANDARD.encode(checksum),
            invalid_findings,
        })
    }
}

fn is_manifest_list(metadata: &serde_json::Value, path: &str) -> bool {
    metadata
        .get("snapshots")
        .and_then(|s| s.as_array())
        .is_some_and(|snapshots| {
            snapshots
                .iter()
                .any(|s| s.get("manifest-list").and_then(|v| v.as_str()) == Some(path))
        })
}

/// The version of a metadata file named `NNNNN-….metadata.json` (0 otherwise).
fn metadata_version(location: &str) -> u64 {
    location
        .rsplit('/')
        .next()
        .and_then(|name| name.split_once('-'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}

/// Copies one source file unless the destination has it already (an earlier run did); `true` when copied.
async fn copy_file(
    files: &SourceFiles,
    destination: &TableFiles,
    paths: &PathMap,
    path: &str,
) -> Result<bool, MigrationError> {
    let target = paths.map(path);
    if destination.size(&target).await?.is_some() {
        return Ok(false);
    }
    let bytes = files.read(path).await?;
    write(destination, &target, bytes).await?;
    Ok(true)
}

async fn write(
    destination: &TableFiles,
    location: &str,
    bytes: Bytes,
) -> Result<(), MigrationError> {
    let body = futures::stream::once(async move { Ok(bytes) }).boxed();
    destination.write(location, body).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_versions() {
        assert_eq!(
            metadata_version("s3://b/t/metadata/00003-abc.metadata.json"),
            3
        );
        assert_eq!(metadata_version("file:/x/metadata/v2.metadata.json"), 0);
    }
}
