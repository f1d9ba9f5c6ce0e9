//! A table's storage as the object service addresses it: the data plane's bucket `<table-id>--table-s3` resolved
//! to the table's ARN (what authorization checks) and to the object service's [`Storage`] (the table and the
//! encryption its setting gives new bytes). The object service itself knows neither buckets nor settings.

use tablebay_objects::{Storage, TableLocation};
use uuid::Uuid;

use crate::{AccountId, BucketArn, BucketName, Catalog, CatalogError, TableArn};

/// A table's storage, resolved once per request by the data plane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStorage {
    /// The table's ARN (owning account, bucket name, table id).
    pub arn: TableArn,
    /// The storage as the object service writes to it.
    pub storage: Storage,
}

impl TableStorage {
    /// The table.
    pub fn table_id(&self) -> Uuid {
        self.storage.table_id
    }

    /// The account owning the table.
    pub fn owner(&self) -> &AccountId {
        &self.arn.bucket.account
    }
}

impl Catalog {
    /// Resolves a data-plane bucket name to its table's storage; `None` unless it is `<table-id>--table-s3` of an
    /// existing table.
    pub async fn table_storage(&self, bucket: &str) -> Result<Option<TableStorage>, CatalogError> {
        let Some(table_id) = TableLocation::table_of_bucket(bucket) else {
            return Ok(None);
        };
        let Some((account, bucket_name)) = self.meta.table_owner(table_id).await? else {
            return Ok(None);
        };
        let arn = TableArn {
            bucket: BucketArn {
                flavor: self.config.flavor,
                region: self.config.region.clone(),
                account: AccountId::parse(&account)?,
                name: BucketName::parse(&bucket_name)?,
            },
            table_id,
        };
        Ok(Some(TableStorage {
            arn,
            storage: self.storage(table_id).await?,
        }))
    }

    /// The storage of the table (or view) `table_id`, with the encryption its new bytes get.
    pub(crate) async fn storage(&self, table_id: Uuid) -> Result<Storage, CatalogError> {
        Ok(Storage {
            table_id,
            encryption: self.data_encryption(table_id).await?,
        })
    }
}
