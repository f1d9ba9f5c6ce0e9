//! Replicating one source table to one destination bucket: find (or create) the replica, read from its own
//! committed metadata which source metadata file it last received, then apply every later source version in the
//! source's order — copy the files its new snapshots reference, write the relocated metadata at the same key,
//! and commit it with the replica's version token.
//!
//! Exactly once: the progress is the replica's committed metadata itself, and each version is applied by an
//! optimistic compare-and-swap. A worker killed at any point leaves either the old version (its copies are
//! overwritten identically on the next attempt) or the new one (whose property says so); it never skips a version
//! and never commits one twice.

use std::collections::HashSet;

use bytes::Bytes;
use chrono::Utc;
use serde_json::Value;
use tablebay_catalog::{
    DISASSOCIATED_PROPERTY, DestinationStatus, REPLICA_ROLE_PROPERTY,
    REPLICA_SOURCE_METADATA_PROPERTY, REPLICA_SOURCE_PROPERTY, ReplicationState, Table, TableFiles,
};

use crate::ReplicationError;
use crate::client::{Client, RemoteTable};
use crate::rewrite::{AvroFile, Relocation};

/// The failure S3 Tables reports for a destination whose replica was disassociated.
pub(crate) const DETACHED: &str = "The destination table has been detached from replication.";

/// The status of `DELETED` manifest entries (their files are not part of the snapshot).
const DELETED: i32 = 2;

/// The source side of one pass: the table, its files and its current metadata.
pub(crate) struct Source<'a> {
    pub table: &'a Table,
    pub files: TableFiles,
    pub location: String,
    pub metadata: Value,
}

impl Source<'_> {
    async fn read(&self, location: &str) -> Result<Bytes, ReplicationError> {
        self.files
            .read(location)
            .await
            .map_err(|e| ReplicationError::Failed(format!("reading {location}: {e}")))?
            .ok_or_else(|| {
                ReplicationError::Failed(format!("the source file {location} no longer exists"))
            })
    }

    async fn metadata_at(&self, location: &str) -> Result<Value, ReplicationError> {
        if location == self.location {
            return Ok(self.metadata.clone());
        }
        let bytes = self.read(location).await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ReplicationError::Failed(format!("{location} is not valid JSON: {e}")))
    }

    /// The source versions after `last`, oldest first: every later metadata file the source's metadata log
    /// still lists, then the current one. A new replica starts from the current version (S3 Tables' backfill);
    /// a `last` the log no longer lists (trimmed by `write.metadata.previous-versions-max`) also resumes there.
    fn versions_after(&self, last: Option<&str>) -> Vec<String> {
        let mut chain: Vec<String> = self
            .metadata
            .get("metadata-log")
            .and_then(Value::as_array)
            .map(|log| {
                log.iter()
                    .filter_map(|e| e.get("metadata-file").and_then(Value::as_str))
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        chain.push(self.location.clone());
        match last {
            None => vec![self.location.clone()],
            Some(last) if last == self.location => Vec::new(),
            Some(last) => match chain.iter().position(|l| l == last) {
                Some(at) => chain.split_off(at + 1),
                None => {
                    tracing::warn!(source = %self.table.arn, last, "the source's metadata log no longer lists the replica's version; resuming at the current one");
                    vec![self.location.clone()]
                }
            },
        }
    }
}

/// One replica as the destination shows it.
struct Replica {
    table: RemoteTable,
    bucket: String,
    metadata: Option<Value>,
}

impl Replica {
    fn property(&self, name: &str) -> Option<&str> {
        self.metadata
            .as_ref()?
            .get("properties")?
            .get(name)?
            .as_str()
    }

    fn snapshot_ids(&self) -> HashSet<i64> {
        self.metadata.as_ref().map(snapshot_ids).unwrap_or_default()
    }
}

fn snapshot_ids(metadata: &Value) -> HashSet<i64> {
    metadata
        .get("snapshots")
        .and_then(Value::as_array)
        .map(|s| {
            s.iter()
                .filter_map(|s| s.get("snapshot-id").and_then(Value::as_i64))
                .collect()
        })
        .unwrap_or_default()
}

/// Replicates `source` into the destination bucket `destination` through `client` (a session of `role` on the
/// destination's server). `copied` remembers the source files already copied to this replica (an optimisation
/// only: a repeated copy overwrites the same key with the same bytes). Returns the status to record.
pub(crate) async fn replicate(
    source: &Source<'_>,
    destination: &str,
    role: &str,
    client: &Client,
    copied: &mut HashSet<String>,
    previous: Option<&DestinationStatus>,
) -> DestinationStatus {
    let mut status = DestinationStatus {
        destination: destination.to_string(),
        state: ReplicationState::Pending,
        destination_table_arn: previous.and_then(|p| p.destination_table_arn.clone()),
        last_replicated: previous.and_then(|p| p.last_replicated.clone()),
        failure_message: None,
    };
    match run(source, destination, role, client, copied, &mut status).await {
        Ok(()) => status.state = ReplicationState::Completed,
        Err(e) => {
            tracing::warn!(source = %source.table.arn, destination, error = %e, "replication failed");
            status.state = ReplicationState::Failed;
            status.failure_message = Some(e.to_string());
        }
    }
    status
}

async fn run(
    source: &Source<'_>,
    destination: &str,
    role: &str,
    client: &Client,
    copied: &mut HashSet<String>,
    status: &mut DestinationStatus,
) -> Result<(), ReplicationError> {
    let source_arn = source.table.arn.to_string();
    let (namespace, name) = (
        source.table.namespace.to_string(),
        source.table.name.to_string(),
    );
    let mut replica = open_replica(client, destination, &namespace, &name).await?;
    status.destination_table_arn = Some(replica.table.table_arn.clone());
    let last = match &replica.metadata {
        None => None,
        Some(_) => match replica.property(REPLICA_SOURCE_PROPERTY) {
            Some(of) if of == source_arn => replica
                .property(REPLICA_SOURCE_METADATA_PROPERTY)
                .map(String::from),
            Some(other) => {
                return Err(ReplicationError::Failed(format!(
                    "The destination table is a replica of another table ({other})."
                )));
            }
            None if replica.property(DISASSOCIATED_PROPERTY).is_some() => {
                return Err(ReplicationError::Failed(DETACHED.into()));
            }
            None => {
                return Err(ReplicationError::Failed(
                    "The destination table exists and is not a replica of this table.".into(),
                ));
            }
        },
    };
    let relocation = Relocation {
        from: source
            .table
            .warehouse_location
            .trim_end_matches('/')
            .to_string(),
        to: replica
            .table
            .warehouse_location
            .trim_end_matches('/')
            .to_string(),
    };
    for version in source.versions_after(last.as_deref()) {
        let metadata = source.metadata_at(&version).await?;
        copy_files(source, &metadata, &replica, &relocation, client, copied).await?;
        let mut relocated = metadata.clone();
        relocation.json(&mut relocated);
        let properties = relocated
            .as_object_mut()
            .ok_or_else(|| ReplicationError::Failed(format!("{version} is not a JSON object")))?
            .entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(properties) = properties {
            properties.insert(REPLICA_SOURCE_PROPERTY.into(), source_arn.clone().into());
            properties.insert(
                REPLICA_SOURCE_METADATA_PROPERTY.into(),
                version.clone().into(),
            );
            properties.insert(REPLICA_ROLE_PROPERTY.into(), role.into());
        }
        let key = relocation.source_key(&version).ok_or_else(|| {
            ReplicationError::Failed(format!("{version} is outside the source table's storage"))
        })?;
        let body = serde_json::to_vec(&relocated)
            .map_err(|e| ReplicationError::Failed(format!("encoding metadata: {e}")))?;
        client
            .put_object(&replica.bucket, key, Bytes::from(body))
            .await?;
        let location = relocation.location(&version);
        let token = client
            .update_metadata_location(
                destination,
                &namespace,
                &name,
                &replica.table.version_token,
                &location,
            )
            .await?;
        replica.table.version_token = token;
        replica.table.metadata_location = Some(location);
        replica.metadata = Some(relocated);
        status.last_replicated = Some((version, Utc::now()));
    }
    Ok(())
}

/// The replica (created, with its namespace, when missing) and its current metadata.
async fn open_replica(
    client: &Client,
    destination: &str,
    namespace: &str,
    name: &str,
) -> Result<Replica, ReplicationError> {
    let table = match client.get_table(destination, namespace, name).await? {
        Some(table) => table,
        None => {
            client.ensure_namespace(destination, namespace).await?;
            client.ensure_table(destination, namespace, name).await?;
            client
                .get_table(destination, namespace, name)
                .await?
                .ok_or_else(|| {
                    ReplicationError::Failed("the replica vanished after it was created".into())
                })?
        }
    };
    let bucket = table
        .warehouse_location
        .trim_start_matches("s3://")
        .trim_end_matches('/')
        .to_string();
    let metadata = match &table.metadata_location {
        None => None,
        Some(location) => {
            let key = location
                .strip_prefix(&format!(
                    "{}/",
                    table.warehouse_location.trim_end_matches('/')
                ))
                .ok_or_else(|| {
                    ReplicationError::Failed(format!(
                        "the replica's metadata {location} is outside its storage"
                    ))
                })?;
            let bytes = client.get_object(&bucket, key).await?.ok_or_else(|| {
                ReplicationError::Failed(format!("the replica's metadata {location} is missing"))
            })?;
            Some(serde_json::from_slice(&bytes).map_err(|e| {
                ReplicationError::Failed(format!("the replica's metadata is not JSON: {e}"))
            })?)
        }
    };
    Ok(Replica {
        table,
        bucket,
        metadata,
    })
}

/// Copies what `metadata` references that the replica does not have yet: for every snapshot new to the replica,
/// its manifest list, the manifests it lists and the live files they name; and the statistics files.
async fn copy_files(
    source: &Source<'_>,
    metadata: &Value,
    replica: &Replica,
    relocation: &Relocation,
    client: &Client,
    copied: &mut HashSet<String>,
) -> Result<(), ReplicationError> {
    let known = replica.snapshot_ids();
    let snapshots = metadata
        .get("snapshots")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for snapshot in snapshots {
        let id = snapshot.get("snapshot-id").and_then(Value::as_i64);
        if id.is_some_and(|id| known.contains(&id)) {
            continue;
        }
        if let Some(list) = snapshot.get("manifest-list").and_then(Value::as_str) {
            if copied.contains(list) {
                continue;
            }
            let bytes = source.read(list).await?;
            let file = AvroFile::read(&bytes, list)?;
            for (manifest, _) in file.strings(None, "manifest_path") {
                if !copied.contains(&manifest) {
                    copy_manifest(source, &manifest, replica, relocation, client, copied).await?;
                }
            }
            put(
                client,
                replica,
                relocation,
                list,
                file.relocated(relocation)?,
            )
            .await?;
            copied.insert(list.to_string());
        }
    }
    for kind in ["statistics", "partition-statistics"] {
        for entry in metadata
            .get(kind)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(path) = entry.get("statistics-path").and_then(Value::as_str)
                && !copied.contains(path)
            {
                let bytes = source.read(path).await?;
                put(client, replica, relocation, path, bytes).await?;
                copied.insert(path.to_string());
            }
        }
    }
    Ok(())
}

async fn copy_manifest(
    source: &Source<'_>,
    manifest: &str,
    replica: &Replica,
    relocation: &Relocation,
    client: &Client,
    copied: &mut HashSet<String>,
) -> Result<(), ReplicationError> {
    let bytes = source.read(manifest).await?;
    let file = AvroFile::read(&bytes, manifest)?;
    // A position delete file names data files by their source paths; copied unchanged, it would delete nothing
    // on the replica, which would then read rows its source does not. Refused (the status says why) until the
    // delete files themselves are rewritten.
    if file.has_position_deletes(DELETED) {
        return Err(ReplicationError::Failed(format!(
            "{manifest} lists position delete files (merge-on-read deletes); replicating them is not supported \
             yet: use copy-on-write deletes (write.delete.mode=copy-on-write) on replicated tables"
        )));
    }
    for (path, entry_status) in file.strings(Some("data_file"), "file_path") {
        if entry_status == Some(DELETED) || copied.contains(&path) {
            continue;
        }
        copy_data_file(source, &path, replica, relocation, client).await?;
        copied.insert(path);
    }
    put(
        client,
        replica,
        relocation,
        manifest,
        file.relocated(relocation)?,
    )
    .await?;
    copied.insert(manifest.to_string());
    Ok(())
}

/// Data and delete files up to this size are copied in one PutObject; larger ones (compaction writes files of
/// up to 512 MB) as a multipart upload of parts of this size, so a copy holds one part in memory at a time.
const COPY_PART_BYTES: u64 = 32 * 1024 * 1024;

/// Copies a data or delete file, unchanged, to the same key in the replica's storage.
async fn copy_data_file(
    source: &Source<'_>,
    path: &str,
    replica: &Replica,
    relocation: &Relocation,
    client: &Client,
) -> Result<(), ReplicationError> {
    let size = source
        .files
        .size(path)
        .await
        .map_err(|e| ReplicationError::Failed(format!("reading {path}: {e}")))?
        .ok_or_else(|| {
            ReplicationError::Failed(format!("the source file {path} no longer exists"))
        })?;
    if size <= COPY_PART_BYTES {
        return put(client, replica, relocation, path, source.read(path).await?).await;
    }
    let key = relocation.source_key(path).ok_or_else(|| {
        ReplicationError::Failed(format!("{path} is outside the source table's storage"))
    })?;
    let upload = client.create_multipart_upload(&replica.bucket, key).await?;
    let mut etags = Vec::new();
    for start in (0..size).step_by(COPY_PART_BYTES as usize) {
        let end = (start + COPY_PART_BYTES).min(size);
        let part = match source.files.read_range(path, start..end).await {
            Ok(bytes) => {
                client
                    .upload_part(&replica.bucket, key, &upload, etags.len() + 1, bytes)
                    .await
            }
            Err(e) => Err(ReplicationError::Failed(format!("reading {path}: {e}"))),
        };
        match part {
            Ok(etag) => etags.push(etag),
            Err(e) => {
                client
                    .abort_multipart_upload(&replica.bucket, key, &upload)
                    .await;
                return Err(e);
            }
        }
    }
    if let Err(e) = client
        .complete_multipart_upload(&replica.bucket, key, &upload, &etags)
        .await
    {
        client
            .abort_multipart_upload(&replica.bucket, key, &upload)
            .await;
        return Err(e);
    }
    Ok(())
}

/// Writes the copy of the source file at `location` to the same key in the replica's storage.
async fn put(
    client: &Client,
    replica: &Replica,
    relocation: &Relocation,
    location: &str,
    body: Bytes,
) -> Result<(), ReplicationError> {
    let key = relocation.source_key(location).ok_or_else(|| {
        ReplicationError::Failed(format!("{location} is outside the source table's storage"))
    })?;
    client.put_object(&replica.bucket, key, body).await
}
