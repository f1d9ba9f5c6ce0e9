//! Resource ARNs of table buckets and tables, in both flavors (`reference/s3tables-api.md` §3.4 and §6):
//! `acs:osstables:<region>:<account>:bucket/<name>[/table/<table-id>]` (OSS Tables) and
//! `arn:aws:s3tables:<region>:<account>:bucket/<name>[/table/<table-id>]` (S3 Tables).
//! Both parse; an ARN renders in the flavor it carries, which the catalog sets to the configured one.

use std::fmt;


use uuid::Uuid;

use crate::{BucketName, CatalogError};

pub use tablebay_policy::ArnFlavor;

/// Parses the `--arn-flavor` setting (`oss` or `aws`).
pub fn parse_arn_flavor(s: &str) -> Result<ArnFlavor, CatalogError> {
    match s {
        "oss" => Ok(ArnFlavor::Oss),
        "aws" => Ok(ArnFlavor::Aws),
        other => Err(CatalogError::invalid(format!(
            "unknown ARN flavor '{other}' (expected 'oss' or 'aws')"
        ))),
    }
}

/// An account id: 12 digits (AWS) or 16 (Alibaba UIDs); any length from 12 to 16 is accepted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccountId(String);

impl AccountId {
    /// Validates an account id.
    pub fn parse(s: &str) -> Result<Self, CatalogError> {
        if (12..=16).contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit()) {
            Ok(Self(s.to_string()))
        } else {
            Err(CatalogError::invalid(format!(
                "Invalid account id '{s}': expected 12 to 16 digits"
            )))
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The ARN of a table bucket.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BucketArn {
    /// Spelling used when rendered.
    pub flavor: ArnFlavor,
    /// Region part.
    pub region: String,
    /// Owning account.
    pub account: AccountId,
    /// Bucket name.
    pub name: BucketName,
}

/// The ARN of a table: its bucket's ARN plus the table id (a UUID, so renames keep the ARN).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableArn {
    /// The bucket part.
    pub bucket: BucketArn,
    /// The table id.
    pub table_id: Uuid,
}

/// Either kind of ARN (tagging takes both).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResourceArn {
    /// A table bucket.
    Bucket(BucketArn),
    /// A table.
    Table(TableArn),
}

impl BucketArn {
    /// The same ARN spelled in `flavor`.
    pub fn with_flavor(mut self, flavor: ArnFlavor) -> Self {
        self.flavor = flavor;
        self
    }

    /// Parses a bucket ARN (either flavor); a table ARN is rejected.
    pub fn parse(s: &str) -> Result<Self, CatalogError> {
        match ResourceArn::parse(s)? {
            ResourceArn::Bucket(arn) => Ok(arn),
            ResourceArn::Table(_) => Err(CatalogError::invalid(format!(
                "Invalid table bucket ARN '{s}'"
            ))),
        }
    }
}

impl TableArn {
    /// Parses a table ARN (either flavor); a bucket ARN is rejected.
    pub fn parse(s: &str) -> Result<Self, CatalogError> {
        match ResourceArn::parse(s)? {
            ResourceArn::Table(arn) => Ok(arn),
            ResourceArn::Bucket(_) => {
                Err(CatalogError::invalid(format!("Invalid table ARN '{s}'")))
            }
        }
    }
}

impl ResourceArn {
    /// Parses a bucket or table ARN of either flavor.
    pub fn parse(s: &str) -> Result<Self, CatalogError> {
        let bad = || CatalogError::invalid(format!("Invalid ARN '{s}'"));
        if s.len() > 2048 {
            return Err(bad());
        }
        let (flavor, rest) = if let Some(rest) = s.strip_prefix(ArnFlavor::Oss.tables()) {
            (ArnFlavor::Oss, rest)
        } else if let Some(rest) = s.strip_prefix("arn:") {
            // `arn:<partition>:s3tables:` with any AWS partition (aws, aws-cn, aws-us-gov).
            let (partition, rest) = rest.split_once(':').ok_or_else(bad)?;
            let rest = rest.strip_prefix("s3tables:").ok_or_else(bad)?;
            let partition_ok = partition.starts_with("aws")
                && partition
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !partition_ok {
                return Err(bad());
            }
            (ArnFlavor::Aws, rest)
        } else {
            return Err(bad());
        };
        let mut parts = rest.splitn(3, ':');
        let (Some(region), Some(account), Some(resource)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if !region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(bad());
        }
        let account = AccountId::parse(account).map_err(|_| bad())?;
        let resource = resource.strip_prefix("bucket/").ok_or_else(bad)?;
        let (bucket, table) = match resource.split_once('/') {
            None => (resource, None),
            Some((bucket, rest)) => {
                let id = rest.strip_prefix("table/").ok_or_else(bad)?;
                (bucket, Some(Uuid::parse_str(id).map_err(|_| bad())?))
            }
        };
        let name = BucketName::parse(bucket).map_err(|_| bad())?;
        let bucket = BucketArn {
            flavor,
            region: region.to_string(),
            account,
            name,
        };
        Ok(match table {
            None => Self::Bucket(bucket),
            Some(table_id) => Self::Table(TableArn { bucket, table_id }),
        })
    }
}

impl fmt::Display for BucketArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}:{}:bucket/{}",
            self.flavor.tables(),
            self.region,
            self.account,
            self.name
        )
    }
}

impl fmt::Display for TableArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/table/{}", self.bucket, self.table_id)
    }
}

impl fmt::Display for ResourceArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bucket(arn) => arn.fmt(f),
            Self::Table(arn) => arn.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_both_flavors() {
        for s in [
            "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket",
            "acs:osstables:cn-hangzhou:1142323451804027:bucket/my-bucket",
            "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket/table/8ab7b6a8-1c2d-4e5f-9a0b-123456789abc",
            "acs:osstables:cn-hangzhou:1142323451804027:bucket/bk1/table/8ab7b6a8-1c2d-4e5f-9a0b-123456789abc",
        ] {
            assert_eq!(ResourceArn::parse(s).unwrap().to_string(), s);
        }
        let arn =
            BucketArn::parse("arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket").unwrap();
        assert_eq!(
            arn.with_flavor(ArnFlavor::Oss).to_string(),
            "acs:osstables:us-east-1:111122223333:bucket/mybucket"
        );
    }

    #[test]
    fn rejects_bad_arns() {
        for s in [
            "",
            "arn:aws:s3:us-east-1:111122223333:bucket/mybucket",
            "arn:aws:s3tables:us-east-1:1111:bucket/mybucket",
            "arn:aws:s3tables:us-east-1:111122223333:bucket/MyBucket",
            "arn:aws:s3tables:us-east-1:111122223333:table/mybucket",
            "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket/table/not-a-uuid",
            "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket/namespace/x",
            "arn:aws:s3tables:US-EAST-1:111122223333:bucket/mybucket",
            "acs:oss:cn-hangzhou:1142323451804027:bucket/b1",
        ] {
            assert!(ResourceArn::parse(s).is_err(), "{s}");
        }
        assert!(BucketArn::parse("arn:aws:s3tables:us-east-1:111122223333:bucket/b1/table/8ab7b6a8-1c2d-4e5f-9a0b-123456789abc").is_err());
        assert!(TableArn::parse("arn:aws:s3tables:us-east-1:111122223333:bucket/b1").is_err());
    }
}
