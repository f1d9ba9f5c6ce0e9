//! Unreferenced-file removal (`icebergUnreferencedFileRemoval`, configured per bucket): an object in a table's
//! storage that nothing kept references (see `references.rs`) and that is older than `unreferencedDays` is
//! marked noncurrent; a noncurrent object is deleted `nonCurrentDays` after it was marked. Metadata files beyond
//! `write.metadata.previous-versions-max` are no longer in the metadata log, so they follow the same path, and
//! multipart uploads older than both periods together are aborted.
//!
//! Writers race with this job: an engine uploads data files first and commits later. Objects are judged only
//! if they were last written before the scan started (and, being older than `unreferencedDays`, long before),
//! deletion is conditional on the object being the version that was judged, and when the table moved on
//! between the scan and the deletion, the newer metadata's references are spared too.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use tablebay_catalog::{Catalog, IcebergTable, TableFiles};
use tablebay_store::MetaStore;
use tablebay_store::meta::{KeyRange, KeyStart};

use crate::MaintenanceError;
use crate::references::table_files;
use crate::run::JobOutcome;
use crate::settings::EffectiveUnreferencedRemoval;

/// Objects listed per page.
const PAGE: u32 = 1000;

/// Runs unreferenced-file removal on one table at time `now`.
pub(crate) async fn remove_unreferenced(
    catalog: &Catalog,
    meta: &MetaStore,
    loaded: IcebergTable,
    settings: &EffectiveUnreferencedRemoval,
    now: DateTime<Utc>,
) -> Result<JobOutcome, MaintenanceError> {
    let table_id = loaded.table.id;
    let files = catalog.table_files(table_id);
    let referenced =
        table_files(&files, &loaded.metadata.metadata, &loaded.metadata_location).await?;
    let referenced_keys = &referenced.keys;
    let unreferenced_before = before(now, settings.unreferenced_after);
    let delete_marked_before = before(now, settings.delete_after);
    let marks = meta.noncurrent_marks(table_id).await?;

    let mut seen = HashSet::new();
    let mut to_mark = Vec::new();
    let mut to_clear = Vec::new();
    let mut to_delete = Vec::new();
    let mut scanned = 0u64;
    let mut after: Option<String> = None;
    loop {
        let range = KeyRange {
            start: after.as_deref().map(KeyStart::After),
            end: None,
        };
        let page = meta.list_objects(table_id, range, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.key.clone());
        for object in &page {
            scanned += 1;
            seen.insert(object.key.clone());
            if referenced_keys.contains(&object.key) {
                if marks.contains_key(&object.key) {
                    to_clear.push(object.key.clone());
                }
                continue;
            }
            // Young objects (a writer's files not yet committed, anything written since the scan began) wait.
            if object.modified_at >= unreferenced_before || object.modified_at >= now {
                continue;
            }
            match marks.get(&object.key) {
                Some((version, since)) if *version == object.modified_at => {
                    if *since <= delete_marked_before {
                        to_delete.push((object.key.clone(), object.modified_at));
                    }
                }
                _ => to_mark.push((object.key.clone(), object.modified_at)),
            }
        }
        if page.len() < PAGE as usize {
            break;
        }
    }
    to_clear.extend(marks.keys().filter(|k| !seen.contains(*k)).cloned());

    // The table may have moved on while we listed: spare whatever its newer metadata references. A table
    // dropped meanwhile keeps its storage as it is (engines purge it themselves, or it is registered again).
    if !to_delete.is_empty() {
        let Some(now_table) = catalog.table_by_id(table_id).await? else {
            return Err(MaintenanceError::NotFound(
                "the table was deleted while the job ran; nothing was removed".into(),
            ));
        };
        if now_table.metadata_location.as_deref() != Some(loaded.metadata_location.as_str()) {
            let newer = catalog.reload_iceberg_table(&now_table).await?;
            let newer_keys =
                table_files(&files, &newer.metadata.metadata, &newer.metadata_location)
                    .await?
                    .keys;
            to_delete.retain(|(key, _)| !newer_keys.contains(key));
        }
    }

    let mut outcome = JobOutcome::default();
    let mut deleted_keys = Vec::new();
    for (key, modified) in &to_delete {
        if let Some(size) = files.remove_unreferenced(key, *modified).await? {
            outcome.files_in += 1;
            outcome.bytes_in += size;
        }
        deleted_keys.push(key.clone());
    }
    meta.mark_noncurrent(table_id, &to_mark, now).await?;
    to_clear.extend(deleted_keys);
    meta.clear_noncurrent(table_id, &to_clear).await?;
    let uploads_cutoff = before(unreferenced_before, settings.delete_after);
    let aborted = files.abort_stale_uploads(uploads_cutoff).await?;

    outcome.detail("objectsScanned", scanned);
    outcome.detail("referencedFiles", referenced.keys.len() as u64);
    outcome.detail("manifestsRead", referenced.manifests_read);
    outcome.detail("markedNoncurrent", to_mark.len() as u64);
    outcome.detail("filesDeleted", outcome.files_in);
    outcome.detail("uploadsAborted", aborted);
    outcome.message = Some(format!(
        "scanned {scanned} objects: {} newly noncurrent, {} deleted, {aborted} abandoned uploads aborted",
        to_mark.len(),
        outcome.files_in
    ));
    Ok(outcome)
}

/// Deletes the objects at `keys` of a table's storage that were last written before `not_after`; returns the
/// count and bytes deleted. Used by snapshot expiration for the files only expired snapshots referenced.
pub(crate) async fn delete_keys(
    files: &TableFiles,
    meta: &MetaStore,
    keys: Vec<String>,
    not_after: DateTime<Utc>,
) -> Result<(u64, u64), MaintenanceError> {
    let (mut count, mut bytes) = (0, 0);
    for key in keys {
        let Some(object) = meta.object(files.table_id(), &key).await? else {
            continue;
        };
        if object.modified_at >= not_after {
            continue;
        }
        if let Some(size) = files.remove_unreferenced(&key, object.modified_at).await? {
            count += 1;
            bytes += size;
        }
    }
    Ok((count, bytes))
}

/// `now - age`, saturating at the earliest representable time.
fn before(now: DateTime<Utc>, age: std::time::Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(age)
        .ok()
        .and_then(|age| now.checked_sub_signed(age))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}
