//! Table buckets: create, resolve, list, delete.

use chrono::{DateTime, Utc};
use tablebay_store::StoreError;
use tablebay_store::meta::{AttributeKey, BucketRecord};
use uuid::Uuid;

use crate::{
    AccountId, BucketArn, BucketName, Catalog, Encryption, Page, PageRequest, ServiceError,
    StorageClass, Tags,
};

/// A table bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableBucket {
    /// Opaque id.
    pub id: Uuid,
    /// Its ARN (in the configured flavor); carries the account and the name.
    pub arn: BucketArn,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// What CreateTableBucket asks for.
#[derive(Clone, Debug)]
pub struct NewBucket {
    /// The name.
    pub name: BucketName,
    /// Default encryption of its tables; S3 Tables' default (AES256) when absent.
    pub encryption: Option<Encryption>,
    /// Default storage class of its tables.
    pub storage_class: Option<StorageClass>,
    /// Tags.
    pub tags: Tags,
}

impl Catalog {
    pub(crate) fn bucket_from_record(
        &self,
        record: BucketRecord,
    ) -> Result<TableBucket, ServiceError> {
        let account = AccountId::parse(&record.account_id)?;
        let name = BucketName::parse(&record.name)?;
        let arn = BucketArn {
            flavor: self.config.flavor,
            region: self.config.region.clone(),
            account,
            name,
        };
        Ok(TableBucket {
            id: record.id,
            arn,
            created_at: record.created_at,
        })
    }

    /// Creates a table bucket owned by `account`.
    pub async fn create_bucket(
        &self,
        account: &AccountId,
        new: NewBucket,
    ) -> Result<TableBucket, ServiceError> {
        let record = BucketRecord {
            id: Uuid::now_v7(),
            account_id: account.to_string(),
            name: new.name.to_string(),
            created_at: Utc::now(),
        };
        self.meta
            .insert_bucket(&record)
            .await
            .map_err(|e| match e {
                StoreError::AlreadyExists(_) => ServiceError::AlreadyExists(
                    "The bucket that you tried to create already exists, and you own it."
                        .to_string(),
                ),
                other => other.into(),
            })?;
        let id = record.id;
        if let Some(encryption) = &new.encryption {
            self.set_setting(id, AttributeKey::Encryption, encryption)
                .await?;
        }
        if let Some(class) = &new.storage_class {
            self.set_setting(id, AttributeKey::StorageClass, class)
                .await?;
        }
        if !new.tags.0.is_empty() {
            self.set_setting(id, AttributeKey::Tags, &new.tags).await?;
        }
        self.bucket_from_record(record)
    }

    /// Resolves a bucket ARN; `NotFound` when there is no such bucket in this region.
    pub async fn bucket(&self, arn: &BucketArn) -> Result<TableBucket, ServiceError> {
        let not_found =
            || ServiceError::NotFound("The specified bucket does not exist.".to_string());
        if arn.region != self.config.region {
            return Err(not_found());
        }
        let record = self
            .meta
            .bucket_by_name(arn.account.as_str(), arn.name.as_str())
            .await?
            .ok_or_else(not_found)?;
        self.bucket_from_record(record)
    }

    /// Lists the buckets of `account`, by name.
    pub async fn list_buckets(
        &self,
        account: &AccountId,
        page: &PageRequest,
    ) -> Result<Page<TableBucket>, ServiceError> {
        let after = page.token.as_ref().map(|t| t.key());
        let records = self
            .meta
            .list_buckets(
                account.as_str(),
                page.prefix.as_deref(),
                after.as_deref(),
                page.limit + 1,
            )
            .await?;
        let buckets = records
            .into_iter()
            .map(|r| self.bucket_from_record(r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_overfetch(buckets, page.limit, |b| {
            b.arn.name.to_string()
        }))
    }

    /// Deletes an empty bucket; `Conflict` while it still has namespaces.
    pub async fn delete_bucket(&self, arn: &BucketArn) -> Result<(), ServiceError> {
        let bucket = self.bucket(arn).await?;
        self.meta
            .delete_bucket(bucket.id)
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => ServiceError::Conflict(
                    "The bucket that you tried to delete is not empty.".to_string(),
                ),
                StoreError::NotFound => {
                    ServiceError::NotFound("The specified bucket does not exist.".to_string())
                }
                other => other.into(),
            })
    }
}
