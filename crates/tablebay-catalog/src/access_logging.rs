//! Server access logging of a table bucket (`PutTableBucketLogging`, `GetTableBucketLogging`): the configuration,
//! and where the records of a bucket land.
//!
//! S3 Tables delivers log files to a *general purpose* bucket. Tablebay has none, so the target is a **table
//! bucket of the same account**, and the records are rows of an Iceberg table in it, queryable with any Iceberg
//! engine (AWS's own CloudWatch integration delivers access logs as Iceberg tables too):
//!
//! - the namespace is the target prefix without its trailing `/`, or [`ACCESS_LOG_NAMESPACE`] when the prefix is
//!   empty;
//! - the table is named after the source bucket, `-` spelled `_` (so buckets sharing a target never mix);
//! - it is partitioned by day of the event time or of the delivery time (`partitionDateSource`), as the log
//!   object keys of `partitionedPrefix` are.

use tablebay_store::meta::AttributeKey;

use crate::{
    AccessLogging, BucketArn, BucketName, Catalog, NamespaceName, PartitionDateSource,
    ServiceError, TableBucket, TableName,
};

/// The namespace of the log tables when the target prefix is empty.
pub const ACCESS_LOG_NAMESPACE: &str = "access_logs";

/// Most buckets with logging on that one instance delivers for.
const MAX_LOGGING_BUCKETS: u32 = 10_000;

/// A bucket whose logging is on, and the table its records go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggingTarget {
    /// The bucket whose requests are logged.
    pub source: TableBucket,
    /// Its configuration.
    pub config: AccessLogging,
    /// The table bucket receiving the records.
    pub bucket: BucketArn,
    /// The log table's namespace.
    pub namespace: NamespaceName,
    /// The log table's name.
    pub table: TableName,
}

impl AccessLogging {
    /// Validates a configuration: the target bucket's name, and a prefix that names a namespace.
    pub fn new(
        target_bucket: &str,
        target_prefix: &str,
        partition_date_source: PartitionDateSource,
    ) -> Result<Self, ServiceError> {
        BucketName::parse(target_bucket)
            .map_err(|e| ServiceError::invalid(format!("Invalid targetBucket: {e}")))?;
        let config = Self {
            target_bucket: target_bucket.to_string(),
            target_prefix: target_prefix.to_string(),
            partition_date_source,
        };
        config.namespace().map_err(|e| {
            ServiceError::invalid(format!(
                "Invalid targetPrefix '{target_prefix}': the prefix names the namespace of the log table in the \
                 target table bucket, so it must be empty or a namespace name with an optional trailing '/' ({})",
                e
            ))
        })?;
        Ok(config)
    }

    /// The namespace of the log table.
    pub fn namespace(&self) -> Result<NamespaceName, ServiceError> {
        match self
            .target_prefix
            .strip_suffix('/')
            .unwrap_or(&self.target_prefix)
        {
            "" => NamespaceName::parse(ACCESS_LOG_NAMESPACE),
            name => NamespaceName::parse(name),
        }
    }

    /// The log table of bucket `source`.
    pub fn table_of(source: &BucketName) -> Result<TableName, ServiceError> {
        TableName::parse(&source.as_str().replace('-', "_"))
    }
}

impl Catalog {
    /// The bucket's logging configuration; `None` when logging is off.
    pub async fn bucket_logging(
        &self,
        bucket: &BucketArn,
    ) -> Result<Option<AccessLogging>, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.setting(bucket.id, AttributeKey::Logging).await
    }

    /// Turns the bucket's logging on (to a table bucket of the same account, which must exist) or, with `None`,
    /// off.
    pub async fn put_bucket_logging(
        &self,
        bucket: &BucketArn,
        config: Option<AccessLogging>,
    ) -> Result<(), ServiceError> {
        let source = self.bucket(bucket).await?;
        let Some(config) = config else {
            self.meta
                .delete_attribute(source.id, AttributeKey::Logging)
                .await?;
            return Ok(());
        };
        let target = BucketArn {
            name: BucketName::parse(&config.target_bucket)?,
            ..bucket.clone()
        };
        if let Err(e) = self.bucket(&target).await {
            return Err(match e {
                ServiceError::NotFound(_) => ServiceError::invalid(format!(
                    "The target bucket for logging does not exist: '{}' (it must be a table bucket of the same \
                     account)",
                    config.target_bucket
                )),
                other => other,
            });
        }
        self.set_setting(source.id, AttributeKey::Logging, &config)
            .await
    }

    /// Every bucket whose logging is on, with the table its records go to.
    pub async fn logging_targets(&self) -> Result<Vec<LoggingTarget>, ServiceError> {
        let mut targets = Vec::new();
        for id in self
            .meta
            .resources_with_attribute(AttributeKey::Logging, MAX_LOGGING_BUCKETS)
            .await?
        {
            let (Some(record), Some(config)) = (
                self.meta.bucket_by_id(id).await?,
                self.setting::<AccessLogging>(id, AttributeKey::Logging)
                    .await?,
            ) else {
                continue;
            };
            let source = self.bucket_from_record(record)?;
            let bucket = BucketArn {
                name: BucketName::parse(&config.target_bucket)?,
                ..source.arn.clone()
            };
            targets.push(LoggingTarget {
                namespace: config.namespace()?,
                table: AccessLogging::table_of(&source.arn.name)?,
                source,
                config,
                bucket,
            });
        }
        Ok(targets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_names_the_namespace() {
        let config =
            |prefix: &str| AccessLogging::new("logs", prefix, PartitionDateSource::EventTime);
        assert_eq!(
            config("").unwrap().namespace().unwrap().as_str(),
            "access_logs"
        );
        assert_eq!(config("web/").unwrap().namespace().unwrap().as_str(), "web");
        assert_eq!(config("web").unwrap().namespace().unwrap().as_str(), "web");
        for bad in ["a/b/", "Web/", "aws_logs/", "x-y", "//"] {
            assert!(config(bad).is_err(), "{bad}");
        }
        assert!(AccessLogging::new("No", "", PartitionDateSource::EventTime).is_err());
        let name = BucketName::parse("my-bucket-1").unwrap();
        assert_eq!(
            AccessLogging::table_of(&name).unwrap().as_str(),
            "my_bucket_1"
        );
    }
}
