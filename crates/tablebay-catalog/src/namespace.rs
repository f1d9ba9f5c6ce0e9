//! Namespaces: one level inside a table bucket, as in S3 Tables.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tablebay_store::StoreError;
use tablebay_store::meta::NamespaceRecord;
use uuid::Uuid;

use crate::{
    AccountId, BucketArn, Catalog, NamespaceName, Page, PageRequest, ServiceError, TableBucket,
};

/// A namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// Opaque id.
    pub id: Uuid,
    /// The bucket it lives in.
    pub bucket: TableBucket,
    /// Its name.
    pub name: NamespaceName,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// The account that created it.
    pub created_by: String,
    /// Iceberg namespace properties.
    pub properties: BTreeMap<String, String>,
}

fn not_found() -> ServiceError {
    ServiceError::NotFound("The specified namespace does not exist.".to_string())
}

impl Catalog {
    fn namespace_from_record(
        bucket: &TableBucket,
        record: NamespaceRecord,
    ) -> Result<Namespace, ServiceError> {
        Ok(Namespace {
            id: record.id,
            bucket: bucket.clone(),
            name: NamespaceName::parse(&record.name)?,
            created_at: record.created_at,
            created_by: record.created_by,
            properties: record.properties,
        })
    }

    /// Creates a namespace in the bucket; properties beyond the limits (`namespace_properties.rs`) are `Invalid`.
    pub async fn create_namespace(
        &self,
        bucket: &BucketArn,
        name: NamespaceName,
        properties: BTreeMap<String, String>,
        created_by: &AccountId,
    ) -> Result<Namespace, ServiceError> {
        crate::namespace_properties::check_properties(&properties)?;
        let bucket = self.bucket(bucket).await?;
        let record = NamespaceRecord {
            id: Uuid::now_v7(),
            bucket_id: bucket.id,
            name: name.to_string(),
            created_at: Utc::now(),
            created_by: created_by.to_string(),
            properties,
        };
        self.meta
            .insert_namespace(&record)
            .await
            .map_err(|e| match e {
                StoreError::AlreadyExists(_) => ServiceError::AlreadyExists(
                    "A namespace with an identical name already exists in the bucket.".to_string(),
                ),
                StoreError::NotFound => {
                    ServiceError::NotFound("The specified bucket does not exist.".to_string())
                }
                other => other.into(),
            })?;
        Self::namespace_from_record(&bucket, record)
    }

    /// Resolves a namespace of a bucket.
    pub async fn namespace(
        &self,
        bucket: &BucketArn,
        name: &NamespaceName,
    ) -> Result<Namespace, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.namespace_in(&bucket, name).await
    }

    /// Resolves a namespace of an already resolved bucket.
    pub async fn namespace_in(
        &self,
        bucket: &TableBucket,
        name: &NamespaceName,
    ) -> Result<Namespace, ServiceError> {
        let record = self
            .meta
            .namespace_by_name(bucket.id, name.as_str())
            .await?
            .ok_or_else(not_found)?;
        Self::namespace_from_record(bucket, record)
    }

    /// Lists the namespaces of a bucket, by name.
    pub async fn list_namespaces(
        &self,
        bucket: &BucketArn,
        page: &PageRequest,
    ) -> Result<Page<Namespace>, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        let after = page.token.as_ref().map(|t| t.key());
        let records = self
            .meta
            .list_namespaces(
                bucket.id,
                page.prefix.as_deref(),
                after.as_deref(),
                page.limit + 1,
            )
            .await?;
        let namespaces = records
            .into_iter()
            .map(|r| Self::namespace_from_record(&bucket, r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_overfetch(namespaces, page.limit, |n| {
            n.name.to_string()
        }))
    }

    /// Replaces a namespace's properties.
    pub async fn set_namespace_properties(
        &self,
        namespace: &Namespace,
        properties: &BTreeMap<String, String>,
    ) -> Result<(), ServiceError> {
        self.meta
            .set_namespace_properties(namespace.id, properties)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => not_found(),
                other => other.into(),
            })
    }

    /// Deletes an empty namespace; `Conflict` while it still holds tables.
    pub async fn delete_namespace(
        &self,
        bucket: &BucketArn,
        name: &NamespaceName,
    ) -> Result<(), ServiceError> {
        let namespace = self.namespace(bucket, name).await?;
        self.meta
            .delete_namespace(namespace.id)
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => ServiceError::Conflict(
                    "The namespace that you tried to delete is not empty.".to_string(),
                ),
                StoreError::NotFound => not_found(),
                other => other.into(),
            })
    }
}
