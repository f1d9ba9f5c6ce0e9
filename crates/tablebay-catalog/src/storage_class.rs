//! Storage class of buckets (default for new tables) and tables, and the bucket metrics switch. Both are
//! recorded for compatibility; this server stores every class the same way.

use tablebay_store::meta::AttributeKey;

use crate::{
    BucketArn, Catalog, MetricsConfiguration, ServiceError, StorageClass, TableBucket, TableRef,
};

impl Catalog {
    /// The storage class of a resolved bucket.
    pub(crate) async fn bucket_storage_class(
        &self,
        bucket: &TableBucket,
    ) -> Result<StorageClass, ServiceError> {
        Ok(self
            .setting(bucket.id, AttributeKey::StorageClass)
            .await?
            .unwrap_or(StorageClass::Standard))
    }

    /// The bucket's storage class.
    pub async fn table_bucket_storage_class(
        &self,
        bucket: &BucketArn,
    ) -> Result<StorageClass, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.bucket_storage_class(&bucket).await
    }

    /// Sets the bucket's storage class (the default for tables created later).
    pub async fn put_bucket_storage_class(
        &self,
        bucket: &BucketArn,
        class: StorageClass,
    ) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.set_setting(bucket.id, AttributeKey::StorageClass, &class)
            .await
    }

    /// The table's storage class.
    pub async fn table_storage_class(
        &self,
        table: &TableRef,
    ) -> Result<StorageClass, ServiceError> {
        let table = self.table(table).await?;
        Ok(self
            .setting(table.id, AttributeKey::StorageClass)
            .await?
            .unwrap_or(StorageClass::Standard))
    }

    /// The bucket's metrics configuration; `NotFound` when metrics are off.
    pub async fn bucket_metrics(
        &self,
        bucket: &BucketArn,
    ) -> Result<MetricsConfiguration, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.setting(bucket.id, AttributeKey::Metrics)
            .await?
            .ok_or_else(|| {
                ServiceError::NotFound(
                    "The specified metrics configuration does not exist.".to_string(),
                )
            })
    }

    /// Turns the bucket's metrics on.
    pub async fn put_bucket_metrics(&self, bucket: &BucketArn) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        let config = MetricsConfiguration {
            id: bucket.id.to_string(),
        };
        self.set_setting(bucket.id, AttributeKey::Metrics, &config)
            .await
    }

    /// Turns the bucket's metrics off.
    pub async fn delete_bucket_metrics(&self, bucket: &BucketArn) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        if self
            .meta
            .delete_attribute(bucket.id, AttributeKey::Metrics)
            .await?
        {
            Ok(())
        } else {
            Err(ServiceError::NotFound(
                "The specified metrics configuration does not exist.".to_string(),
            ))
        }
    }
}
