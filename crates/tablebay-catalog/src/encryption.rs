//! Encryption settings: a bucket's default for new tables (AES256 unless set), and each table's setting,
//! fixed when the table is created (`reference/s3tables-api.md` §4); and what the setting means for the table's
//! data: which master key encrypts new blobs, what a write may ask for, and the startup check of the keys.

use tablebay_store::encryption::{BlobEncryption, KeyId};
use tablebay_store::meta::{AttributeKey, BlobSegment, KeyCheck};
use uuid::Uuid;

use crate::{
    BucketArn, Catalog, CatalogError, Encryption, ObjectError, SseAlgorithm, Table, TableBucket,
    TableRef,
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

/// The `x-amz-server-side-encryption` (and KMS key id) headers of a write: what the client asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestedEncryption {
    /// The algorithm asked for.
    pub algorithm: SseAlgorithm,
    /// The KMS key asked for (an ARN, or the key id that ends one), with `aws:kms` only.
    pub kms_key_id: Option<String>,
}

impl RequestedEncryption {
    /// Checks the request against the table's encryption: a table's data is encrypted only as its setting says,
    /// so asking for another algorithm or another KMS key is refused (`InvalidArgument`).
    pub(crate) fn check(&self, table: &Encryption) -> Result<(), ObjectError> {
        if self.kms_key_id.is_some() && self.algorithm != SseAlgorithm::AwsKms {
            return Err(ObjectError::Invalid(
                "Server Side Encryption with AWS KMS managed key requires HTTP header \
                 x-amz-server-side-encryption : aws:kms"
                    .to_string(),
            ));
        }
        if self.algorithm != table.algorithm {
            return Err(ObjectError::Invalid(format!(
                "The server-side encryption {} is not allowed: this table's data is encrypted with {}",
                self.algorithm, table.algorithm
            )));
        }
        if let (Some(asked), Some(arn)) = (&self.kms_key_id, &table.kms_key_arn)
            && asked != arn
            && !arn.ends_with(&format!("/{asked}"))
        {
            return Err(ObjectError::Invalid(format!(
                "The KMS key {asked} is not allowed: this table's data is encrypted with its own KMS key"
            )));
        }
        Ok(())
    }
}

/// The master key that protects data under an encryption setting.
pub(crate) fn key_of(encryption: &Encryption) -> KeyId {
    match (&encryption.algorithm, &encryption.kms_key_arn) {
        (SseAlgorithm::AwsKms, Some(arn)) => KeyId::Kms(arn.clone()),
        _ => KeyId::Managed,
    }
}

/// The encryption that stored blobs report (from the first encrypted segment; `None` when plaintext).
pub(crate) fn of_segments(segments: &[BlobSegment]) -> Option<Encryption> {
    segments
        .iter()
        .find_map(|s| s.encryption.as_ref())
        .map(of_blob)
}

/// The encryption one stored blob reports.
pub(crate) fn of_blob(encryption: &BlobEncryption) -> Encryption {
    match encryption.key_id() {
        KeyId::Managed => Encryption::aes256(),
        KeyId::Kms(arn) => Encryption {
            algorithm: SseAlgorithm::AwsKms,
            kms_key_arn: Some(arn.clone()),
        },
    }
}

/// Most tables whose (immutable) encryption setting is kept in memory.
const ENCRYPTION_CACHE_ENTRIES: u64 = 100_000;

/// Each table's encryption, cached: the setting is fixed at table creation, so an entry never goes stale.
pub(crate) type EncryptionCache = moka::future::Cache<Uuid, Encryption>;

pub(crate) fn new_encryption_cache() -> EncryptionCache {
    moka::future::Cache::new(ENCRYPTION_CACHE_ENTRIES)
}

impl Catalog {
    /// The encryption new data of the table gets: its setting (stored before a create or a staged create writes
    /// any file), or AES256 for storage that has none (a table registered from storage written before
    /// encryption at rest).
    pub(crate) async fn data_encryption(&self, table_id: Uuid) -> Result<Encryption, ObjectError> {
        if let Some(hit) = self.encryption_cache.get(&table_id).await {
            return Ok(hit);
        }
        match self
            .setting::<Encryption>(table_id, AttributeKey::Encryption)
            .await?
        {
            Some(encryption) => {
                self.encryption_cache
                    .insert(table_id, encryption.clone())
                    .await;
                Ok(encryption)
            }
            // Not cached: a registered table's setting may still be written.
            None => Ok(Encryption::aes256()),
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
