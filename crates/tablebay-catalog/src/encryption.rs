//! Encryption settings: a bucket's default for new tables (AES256 unless set), and each table's setting,
//! fixed when the table is created (`reference/s3tables-api.md` §4).

use tablebay_store::meta::AttributeKey;

use crate::{BucketArn, Catalog, CatalogError, Encryption, Table, TableBucket, TableRef};

impl Catalog {
    /// The default encryption of a resolved bucket.
    pub(crate) async fn bucket_encryption(
        &self,
        bucket: &TableBucket,
    ) -> Result<Encryption, CatalogError> {
        Ok(self
            .setting(bucket.id, AttributeKey::Encryption)
            .await?
            .unwrap_or_else(Encryption::aes256))
    }

    /// The bucket's default encryption for new tables.
    pub async fn table_bucket_encryption(
        &self,
        bucket: &BucketArn,
    ) -> Result<Encryption, CatalogError> {
        let bucket = self.bucket(bucket).await?;
        self.bucket_encryption(&bucket).await
    }

    /// Sets the bucket's default encryption; existing tables keep theirs.
    pub async fn put_bucket_encryption(
        &self,
        bucket: &BucketArn,
        encryption: &Encryption,
    ) -> Result<(), CatalogError> {
        let bucket = self.bucket(bucket).await?;
        self.set_setting(bucket.id, AttributeKey::Encryption, encryption)
            .await
    }

    /// Resets the bucket's default encryption to AES256.
    pub async fn delete_bucket_encryption(&self, bucket: &BucketArn) -> Result<(), CatalogError> {
        let bucket = self.bucket(bucket).await?;
        self.meta
            .delete_attribute(bucket.id, AttributeKey::Encryption)
            .await?;
        Ok(())
    }

    /// The table's encryption, as fixed at creation.
    pub async fn table_encryption(
        &self,
        table: &TableRef,
    ) -> Result<(Table, Encryption), CatalogError> {
        let table = self.table(table).await?;
        let encryption = self
            .setting(table.id, AttributeKey::Encryption)
            .await?
            .unwrap_or_else(Encryption::aes256);
        Ok((table, encryption))
    }
}
