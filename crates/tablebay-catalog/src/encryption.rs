//! Encryption settings: a bucket's default for new tables (AES256 unless set), and each table's setting,
//! fixed when the table is created (`reference/s3tables-api.md` §4); what the setting means for the table's
//! data (the object service's [`ObjectEncryption`], which master key seals new blobs), and the startup check of
//! the keys.

use tablebay_objects::ObjectEncryption;
use tablebay_store::meta::{AttributeKey, KeyCheck};
use uuid::Uuid;

use crate::{
    BucketArn, Catalog, CatalogError, Encryption, SseAlgorithm, Table, TableBucket, TableRef,
};

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

/// What an encryption setting means for a table's bytes: the master key that seals them.
pub(crate) fn object_encryption(encryption: &Encryption) -> ObjectEncryption {
    match (&encryption.algorithm, &encryption.kms_key_arn) {
        (SseAlgorithm::AwsKms, Some(arn)) => ObjectEncryption::Kms(arn.clone()),
        _ => ObjectEncryption::Managed,
    }
}

/// Most tables whose (immutable) encryption setting is kept in memory.
const ENCRYPTION_CACHE_ENTRIES: u64 = 100_000;

/// What each table's encryption means for its bytes, cached: the setting is fixed at table creation, so an entry
/// never goes stale.
pub(crate) type EncryptionCache = moka::future::Cache<Uuid, ObjectEncryption>;

pub(crate) fn new_encryption_cache() -> EncryptionCache {
    moka::future::Cache::new(ENCRYPTION_CACHE_ENTRIES)
}

impl Catalog {
    /// The encryption new data of the table gets: its setting (stored before a create or a staged create writes
    /// any file), or AES256 for storage that has none (a table registered from storage written before
    /// encryption at rest).
    pub(crate) async fn data_encryption(
        &self,
        table_id: Uuid,
    ) -> Result<ObjectEncryption, CatalogError> {
        if let Some(hit) = self.encryption_cache.get(&table_id).await {
            return Ok(hit);
        }
        match self
            .setting::<Encryption>(table_id, AttributeKey::Encryption)
            .await?
        {
            Some(encryption) => {
                let data = object_encryption(&encryption);
                self.encryption_cache.insert(table_id, data.clone()).await;
                Ok(data)
            }
            // Not cached: a registered table's setting may still be written.
            None => Ok(ObjectEncryption::Managed),
        }
    }

    /// Checks the configured master keys against the key-check values in the meta store, recording those of
    /// versions used for the first time. Fails when a version's key material differs from the one recorded (the
    /// server must not start: data written with it would not decrypt, and new data would be unreadable by the
    /// other instances); warns about recorded versions the keys lack (data they protect cannot be read).
    pub async fn verify_keys(&self) -> Result<(), CatalogError> {
        let mut held = std::collections::BTreeSet::new();
        for (version, check) in self.keys.key_checks() {
            match self
                .meta
                .check_key(version.id.as_str(), version.version, &check)
                .await?
            {
                KeyCheck::Recorded => {
                    tracing::info!(key = %version, "recorded the check value of a new encryption key")
                }
                KeyCheck::Matches => {}
                KeyCheck::Differs => {
                    return Err(CatalogError::Invalid(format!(
                        "the configured encryption key {version} is not the key this data was encrypted with \
                         (its check value differs from the one recorded); refusing to start"
                    )));
                }
            }
            held.insert((version.id.as_str().to_string(), version.version));
        }
        for (id, version) in self.meta.recorded_keys().await? {
            if !held.contains(&(id.clone(), version)) {
                tracing::warn!(key = %id, version, "an encryption key version used before is not configured: data it protects cannot be read");
            }
        }
        Ok(())
    }
}
