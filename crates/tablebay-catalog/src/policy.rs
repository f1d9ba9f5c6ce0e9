//! Bucket and table resource policies: stored exactly as given after validation; `NotFound` when unset.

use tablebay_store::meta::AttributeKey;
use uuid::Uuid;

use crate::{BucketArn, Catalog, ResourcePolicy, ServiceError, TableArn, TableRef};

impl Catalog {
    async fn policy_of(&self, id: Uuid, what: &str) -> Result<ResourcePolicy, ServiceError> {
        match self.meta.attribute(id, AttributeKey::Policy).await? {
            Some(text) => ResourcePolicy::parse(&text),
            None => Err(ServiceError::NotFound(format!(
                "The specified {what} policy does not exist."
            ))),
        }
    }

    async fn delete_policy_of(&self, id: Uuid, what: &str) -> Result<(), ServiceError> {
        if self.meta.delete_attribute(id, AttributeKey::Policy).await? {
            Ok(())
        } else {
            Err(ServiceError::NotFound(format!(
                "The specified {what} policy does not exist."
            )))
        }
    }

    /// The bucket's policy.
    pub async fn bucket_policy(&self, bucket: &BucketArn) -> Result<ResourcePolicy, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.policy_of(bucket.id, "bucket").await
    }

    /// Sets the bucket's policy.
    pub async fn put_bucket_policy(
        &self,
        bucket: &BucketArn,
        policy: &ResourcePolicy,
    ) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.meta
            .set_attribute(bucket.id, AttributeKey::Policy, policy.as_str())
            .await?;
        Ok(())
    }

    /// Removes the bucket's policy.
    pub async fn delete_bucket_policy(&self, bucket: &BucketArn) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.delete_policy_of(bucket.id, "bucket").await
    }

    /// The policy documents that govern a table — its bucket's and its own, each `None` when unset — read
    /// together for authorization (stored documents were validated when put); `None` when the table does not lie
    /// in that bucket.
    pub async fn table_policy_documents(
        &self,
        table: &TableArn,
    ) -> Result<Option<(Option<String>, Option<String>)>, ServiceError> {
        Ok(self
            .meta
            .table_policies(
                table.bucket.account.as_str(),
                table.bucket.name.as_str(),
                table.table_id,
            )
            .await?)
    }

    /// The table's policy.
    pub async fn table_policy(&self, table: &TableRef) -> Result<ResourcePolicy, ServiceError> {
        let table = self.table(table).await?;
        self.policy_of(table.id, "table").await
    }

    /// Sets the table's policy.
    pub async fn put_table_policy(
        &self,
        table: &TableRef,
        policy: &ResourcePolicy,
    ) -> Result<(), ServiceError> {
        let table = self.table(table).await?;
        self.meta
            .set_attribute(table.id, AttributeKey::Policy, policy.as_str())
            .await?;
        Ok(())
    }

    /// Removes the table's policy.
    pub async fn delete_table_policy(&self, table: &TableRef) -> Result<(), ServiceError> {
        let table = self.table(table).await?;
        self.delete_policy_of(table.id, "table").await
    }
}
