//! Iceberg view rows and the compare-and-swap of their metadata pointer.
//!
//! A view is a name in a namespace pointing at its current view-metadata file; every change is conditional on
//! the version token in the `UPDATE`/`DELETE` itself, exactly like table rows (`tables.rs`).

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

use super::MetaStore;
use super::codec::{self, insert_error};
use crate::StoreError;

/// `SELECT` of every `ViewRecord` column from `iceberg_views v JOIN namespaces n`; append the `WHERE`.
macro_rules! select_views {
    () => {
        "SELECT v.id AS id, v.bucket_id AS bucket_id, v.namespace_id AS namespace_id, n.name AS namespace_name, \
                v.name AS name, v.version_token AS version_token, v.metadata_location AS metadata_location, \
                v.created_at_ms AS created_at_ms, v.created_by AS created_by, \
                v.modified_at_ms AS modified_at_ms, v.modified_by AS modified_by \
         FROM iceberg_views v JOIN namespaces n ON n.id = v.namespace_id "
    };
}

/// An Iceberg view as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewRecord {
    /// The view id (also its view UUID and the name of its storage).
    pub id: Uuid,
    /// The bucket it lives in.
    pub bucket_id: Uuid,
    /// The namespace it lives in.
    pub namespace_id: Uuid,
    /// The namespace's name (filled from a join on reads; ignored on insert).
    pub namespace_name: String,
    /// View name, unique within the namespace.
    pub name: String,
    /// Opaque token that changes on every pointer swap.
    pub version_token: String,
    /// Current view-metadata file.
    pub metadata_location: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Account that created it.
    pub created_by: String,
    /// Time of the last change to the row.
    pub modified_at: DateTime<Utc>,
    /// Account that made the last change.
    pub modified_by: String,
}

impl MetaStore {
    /// Inserts a view; `AlreadyExists` if the namespace has a view of that name, `NotFound` if the namespace is
    /// gone or not in `view.bucket_id`.
    pub async fn insert_view(&self, view: &ViewRecord) -> Result<(), StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO iceberg_views (id, bucket_id, namespace_id, name, version_token, metadata_location, \
                                        created_at_ms, created_by, modified_at_ms, modified_by) \
             SELECT $1, n.bucket_id, n.id, $4, $5, $6, $7, $8, $9, $10 \
             FROM namespaces n WHERE n.id = $3 AND n.bucket_id = $2",
        )
        .bind(view.id.to_string())
        .bind(view.bucket_id.to_string())
        .bind(view.namespace_id.to_string())
        .bind(view.name.as_str())
        .bind(view.version_token.as_str())
        .bind(view.metadata_location.as_str())
        .bind(codec::millis(view.created_at))
        .bind(view.created_by.as_str())
        .bind(codec::millis(view.modified_at))
        .bind(view.modified_by.as_str())
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("view {:?}", view.name)))?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// The view `name` in namespace `namespace_id`, if any.
    pub async fn view_by_name(
        &self,
        namespace_id: Uuid,
        name: &str,
    ) -> Result<Option<ViewRecord>, StoreError> {
        sqlx::query(concat!(
            select_views!(),
            "WHERE v.namespace_id = $1 AND v.name = $2"
        ))
        .bind(namespace_id.to_string())
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(view_from_row)
        .transpose()
    }

    /// Up to `limit` views of namespace `namespace_id` ordered by name, strictly after `after`.
    pub async fn list_views(
        &self,
        namespace_id: Uuid,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ViewRecord>, StoreError> {
        sqlx::query(concat!(
            select_views!(),
            "WHERE v.namespace_id = $1 AND ($2 IS NULL OR v.name > $2) ORDER BY v.name LIMIT $3"
        ))
        .bind(namespace_id.to_string())
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(view_from_row)
        .collect()
    }

    /// Points the view at a new metadata file if its token is still `expected_version_token`: `Conflict` if the
    /// token moved, `NotFound` if the view is gone.
    pub async fn swap_view_pointer(
        &self,
        id: Uuid,
        expected_version_token: &str,
        new_version_token: &str,
        new_metadata_location: &str,
        modified_at: DateTime<Utc>,
        modified_by: &str,
    ) -> Result<(), StoreError> {
        let id = id.to_string();
        let updated = sqlx::query(
            "UPDATE iceberg_views SET metadata_location = $1, version_token = $2, modified_at_ms = $3, \
                                      modified_by = $4 \
             WHERE id = $5 AND version_token = $6",
        )
        .bind(new_metadata_location)
        .bind(new_version_token)
        .bind(codec::millis(modified_at))
        .bind(modified_by)
        .bind(id.as_str())
        .bind(expected_version_token)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 1 {
            return Ok(());
        }
        let found = sqlx::query("SELECT id FROM iceberg_views WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        Err(match found {
            Some(_) => StoreError::Conflict(format!("view {id} has a newer version token")),
            None => StoreError::NotFound,
        })
    }

    /// Moves and/or renames a view within its bucket, keeping its id: `AlreadyExists` if the target name is taken,
    /// `NotFound` if the view or the target namespace (in the view's bucket) is gone.
    pub async fn rename_view(
        &self,
        id: Uuid,
        new_namespace_id: Uuid,
        new_name: &str,
        modified_at: DateTime<Utc>,
        modified_by: &str,
    ) -> Result<(), StoreError> {
        let updated = sqlx::query(
            "UPDATE iceberg_views SET namespace_id = $1, name = $2, modified_at_ms = $3, modified_by = $4 \
             WHERE id = $5 AND EXISTS (SELECT 1 FROM namespaces n WHERE n.id = $1 AND n.bucket_id = iceberg_views.bucket_id)",
        )
        .bind(new_namespace_id.to_string())
        .bind(new_name)
        .bind(codec::millis(modified_at))
        .bind(modified_by)
        .bind(id.to_string())
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("view {new_name:?}")))?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Deletes the view row, returning it; `NotFound` if it does not exist.
    pub async fn delete_view(&self, id: Uuid) -> Result<ViewRecord, StoreError> {
        let id = id.to_string();
        let deleted = sqlx::query(
            "DELETE FROM iceberg_views WHERE id = $1 \
             RETURNING id, bucket_id, namespace_id, \
                       (SELECT n.name FROM namespaces n WHERE n.id = iceberg_views.namespace_id) AS namespace_name, \
                       name, version_token, metadata_location, created_at_ms, created_by, modified_at_ms, modified_by",
        )
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await?;
        match deleted {
            Some(row) => view_from_row(&row),
            None => Err(StoreError::NotFound),
        }
    }
}

/// Decodes a row of [`select_views!`] (or the same columns from `RETURNING`).
fn view_from_row(row: &AnyRow) -> Result<ViewRecord, StoreError> {
    Ok(ViewRecord {
        id: codec::uuid(row, "id")?,
        bucket_id: codec::uuid(row, "bucket_id")?,
        namespace_id: codec::uuid(row, "namespace_id")?,
        namespace_name: codec::text(row, "namespace_name")?,
        name: codec::text(row, "name")?,
        version_token: codec::text(row, "version_token")?,
        metadata_location: row.try_get("metadata_location")?,
        created_at: codec::time(row, "created_at_ms")?,
        created_by: codec::text(row, "created_by")?,
        modified_at: codec::time(row, "modified_at_ms")?,
        modified_by: codec::text(row, "modified_by")?,
    })
}
