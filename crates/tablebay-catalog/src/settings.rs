//! The settings a bucket or table carries besides its identity: encryption, storage class, maintenance
//! configuration and job status, tags, metrics configuration and resource policies.
//!
//! Defaults and ranges are S3 Tables' (`reference/s3tables-api.md` §3–§4). Values are stored as the JSON of these
//! types (an internal format; the wire spelling lives with each surface).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ServiceError;

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name { $($(#[$vmeta])* #[serde(rename = $text)] $variant),+ }

        impl $name {
            /// The canonical spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = ServiceError;
            fn from_str(s: &str) -> Result<Self, ServiceError> {
                match s {
                    $($text => Ok(Self::$variant),)+
                    other => Err(ServiceError::invalid(format!(
                        concat!("Invalid ", $what, " '{}': expected one of {}"), other, [$($text),+].join(", ")))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

wire_enum!(
    /// Server-side encryption algorithm.
    SseAlgorithm, "sseAlgorithm" { /// SSE with server-managed keys.
        Aes256 = "AES256", /// SSE with a KMS key.
        AwsKms = "aws:kms" }
);
wire_enum!(
    /// Storage class of a bucket or table.
    StorageClass, "storageClass" { /// The default class.
        Standard = "STANDARD", /// Tiered by access.
        IntelligentTiering = "INTELLIGENT_TIERING" }
);
wire_enum!(
    /// Whether a maintenance job is enabled.
    MaintenanceStatus, "maintenance status" { /// Runs.
        Enabled = "enabled", /// Does not run.
        Disabled = "disabled" }
);
wire_enum!(
    /// How compaction lays out rewritten files.
    CompactionStrategy, "compaction strategy" { /// `sort` if the table has a sort order, else `binpack`.
        Auto = "auto", /// Bin-pack small files.
        Binpack = "binpack", /// Sort by the table's sort order.
        Sort = "sort", /// Z-order over the sort columns.
        ZOrder = "z-order" }
);
wire_enum!(
    /// The maintenance job types (keys of the job status map and of the maintenance configurations).
    MaintenanceJobType, "maintenance type" { /// Table-level compaction.
        IcebergCompaction = "icebergCompaction", /// Table-level snapshot expiration.
        IcebergSnapshotManagement = "icebergSnapshotManagement", /// Bucket-level unreferenced file removal.
        IcebergUnreferencedFileRemoval = "icebergUnreferencedFileRemoval", /// Table-level record expiration
        /// (configured through PutTableRecordExpirationConfiguration, not the maintenance configuration).
        IcebergRecordExpiration = "icebergRecordExpiration" }
);
wire_enum!(
    /// Outcome of the last run of a maintenance job, as `GetTableMaintenanceJobStatus` reports it.
    JobState, "job status" { /// Enabled, never run.
        NotYetRun = "Not_Yet_Run", /// Last run succeeded.
        Successful = "Successful", /// Last run failed.
        Failed = "Failed", /// Disabled by configuration.
        Disabled = "Disabled" }
);

/// An encryption configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Encryption {
    /// The algorithm.
    pub algorithm: SseAlgorithm,
    /// The KMS key, for `aws:kms` only.
    pub kms_key_arn: Option<String>,
}

impl Encryption {
    /// S3 Tables' default: SSE with server-managed keys.
    pub fn aes256() -> Self {
        Self {
            algorithm: SseAlgorithm::Aes256,
            kms_key_arn: None,
        }
    }

    /// Validates an algorithm and key pair: `aws:kms` needs a KMS key ARN, `AES256` must not have one.
    pub fn new(algorithm: SseAlgorithm, kms_key_arn: Option<String>) -> Result<Self, ServiceError> {
        match (algorithm, kms_key_arn) {
            (SseAlgorithm::Aes256, None) => Ok(Self::aes256()),
            (SseAlgorithm::Aes256, Some(_)) => Err(ServiceError::invalid(
                "kmsKeyArn must not be set when sseAlgorithm is AES256",
            )),
            (SseAlgorithm::AwsKms, None) => Err(ServiceError::invalid(
                "kmsKeyArn is required when sseAlgorithm is aws:kms",
            )),
            (SseAlgorithm::AwsKms, Some(key)) => {
                if is_kms_key_arn(&key) {
                    Ok(Self {
                        algorithm: SseAlgorithm::AwsKms,
                        kms_key_arn: Some(key),
                    })
                } else {
                    Err(ServiceError::invalid(format!("Invalid kmsKeyArn '{key}'")))
                }
            }
        }
    }
}

/// `arn:aws[-a-z0-9]*:kms:<region>:<12 digits>:key/<id>` (the model's pattern) or the `acs:kms:` spelling.
fn is_kms_key_arn(s: &str) -> bool {
    if s.len() > 2048 {
        return false;
    }
    let rest = if let Some(rest) = s.strip_prefix("acs:kms:") {
        rest
    } else if let Some(rest) = s.strip_prefix("arn:") {
        match rest.split_once(':') {
            Some((partition, rest)) if partition.starts_with("aws") => {
                match rest.strip_prefix("kms:") {
                    Some(rest) => rest,
                    None => return false,
                }
            }
            _ => return false,
        }
    } else {
        return false;
    };
    let mut parts = rest.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(region), Some(account), Some(key)) => {
            region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !account.is_empty()
                && account.chars().all(|c| c.is_ascii_digit())
                && key.strip_prefix("key/").is_some_and(|id| !id.is_empty())
        }
        _ => false,
    }
}

/// A positive 32-bit setting (the model's `PositiveInteger`).
fn positive(name: &str, value: i64) -> Result<u32, ServiceError> {
    u32::try_from(value)
        .ok()
        .filter(|v| (1..=i32::MAX as u32).contains(v))
        .ok_or_else(|| {
            ServiceError::invalid(format!(
                "{name} must be between 1 and 2147483647, got {value}"
            ))
        })
}

/// Compaction settings, resolved (defaults filled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionSettings {
    /// Target output file size; 64–512, default 512.
    pub target_file_size_mb: u32,
    /// Strategy; default `auto`.
    pub strategy: CompactionStrategy,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            target_file_size_mb: 512,
            strategy: CompactionStrategy::Auto,
        }
    }
}

impl CompactionSettings {
    /// Validates the given leaves and fills the rest with defaults.
    pub fn new(
        target_file_size_mb: Option<i64>,
        strategy: Option<CompactionStrategy>,
    ) -> Result<Self, ServiceError> {
        let default = Self::default();
        let target_file_size_mb = match target_file_size_mb {
            None => default.target_file_size_mb,
            Some(v) if (64..=512).contains(&v) => v as u32,
            Some(v) => {
                return Err(ServiceError::invalid(format!(
                    "targetFileSizeMB must be between 64 and 512, got {v}"
                )));
            }
        };
        Ok(Self {
            target_file_size_mb,
            strategy: strategy.unwrap_or(default.strategy),
        })
    }
}

/// Snapshot management settings, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotManagementSettings {
    /// Default 1.
    pub min_snapshots_to_keep: u32,
    /// Default 120 (five days).
    pub max_snapshot_age_hours: u32,
}

impl Default for SnapshotManagementSettings {
    fn default() -> Self {
        Self {
            min_snapshots_to_keep: 1,
            max_snapshot_age_hours: 120,
        }
    }
}

impl SnapshotManagementSettings {
    /// Validates the given leaves and fills the rest with defaults.
    pub fn new(
        min_snapshots_to_keep: Option<i64>,
        max_snapshot_age_hours: Option<i64>,
    ) -> Result<Self, ServiceError> {
        let default = Self::default();
        Ok(Self {
            min_snapshots_to_keep: min_snapshots_to_keep
                .map(|v| positive("minSnapshotsToKeep", v))
                .transpose()?
                .unwrap_or(default.min_snapshots_to_keep),
            max_snapshot_age_hours: max_snapshot_age_hours
                .map(|v| positive("maxSnapshotAgeHours", v))
                .transpose()?
                .unwrap_or(default.max_snapshot_age_hours),
        })
    }
}

/// Unreferenced file removal settings, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreferencedFileRemovalSettings {
    /// Days before an unreferenced file becomes noncurrent; default 3.
    pub unreferenced_days: u32,
    /// Days before a noncurrent file is deleted; default 10.
    pub non_current_days: u32,
}

impl Default for UnreferencedFileRemovalSettings {
    fn default() -> Self {
        Self {
            unreferenced_days: 3,
            non_current_days: 10,
        }
    }
}

impl UnreferencedFileRemovalSettings {
    /// Validates the given leaves and fills the rest with defaults.
    pub fn new(
        unreferenced_days: Option<i64>,
        non_current_days: Option<i64>,
    ) -> Result<Self, ServiceError> {
        let default = Self::default();
        Ok(Self {
            unreferenced_days: unreferenced_days
                .map(|v| positive("unreferencedDays", v))
                .transpose()?
                .unwrap_or(default.unreferenced_days),
            non_current_days: non_current_days
                .map(|v| positive("nonCurrentDays", v))
                .transpose()?
                .unwrap_or(default.non_current_days),
        })
    }
}

/// One job's configuration: whether it runs and with which settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobConfig<S> {
    /// Enabled or disabled; default enabled.
    pub status: MaintenanceStatus,
    /// The resolved settings.
    pub settings: S,
}

impl<S: Default> Default for JobConfig<S> {
    fn default() -> Self {
        Self {
            status: MaintenanceStatus::Enabled,
            settings: S::default(),
        }
    }
}

/// A table's record expiration configuration (PutTableRecordExpirationConfiguration): off until configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordExpiration {
    /// Enabled or disabled; default disabled.
    pub status: MaintenanceStatus,
    /// Records older than this many days are removed; required when enabled.
    pub days: Option<u32>,
}

impl Default for RecordExpiration {
    fn default() -> Self {
        Self {
            status: MaintenanceStatus::Disabled,
            days: None,
        }
    }
}

impl RecordExpiration {
    /// Validates a configuration: `days` is a positive 32-bit number, and an enabled configuration names it.
    pub fn new(status: MaintenanceStatus, days: Option<i64>) -> Result<Self, ServiceError> {
        let days = days.map(|v| positive("days", v)).transpose()?;
        if status == MaintenanceStatus::Enabled && days.is_none() {
            return Err(ServiceError::invalid(
                "settings.days is required when record expiration is enabled",
            ));
        }
        Ok(Self { status, days })
    }
}

/// A table's maintenance configuration (the table-level job types), resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMaintenance {
    /// `icebergCompaction`.
    #[serde(default)]
    pub compaction: JobConfig<CompactionSettings>,
    /// `icebergSnapshotManagement`.
    #[serde(default)]
    pub snapshot_management: JobConfig<SnapshotManagementSettings>,
    /// `icebergRecordExpiration`.
    #[serde(default)]
    pub record_expiration: RecordExpiration,
}

/// A bucket's maintenance configuration, resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketMaintenance {
    /// `icebergUnreferencedFileRemoval`.
    #[serde(default)]
    pub unreferenced_file_removal: JobConfig<UnreferencedFileRemovalSettings>,
}

/// The last known outcome of one maintenance job type on one table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatus {
    /// The state.
    pub state: JobState,
    /// When it last ran.
    pub last_run: Option<DateTime<Utc>>,
    /// Why the last run failed.
    pub failure_message: Option<String>,
}

/// Resource tags (at most 50; keys 1–128 characters, values 0–256).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tags(pub BTreeMap<String, String>);

impl Tags {
    /// The most tags a resource may carry.
    pub const MAX: usize = 50;

    /// Validates each key and value.
    pub fn new(tags: BTreeMap<String, String>) -> Result<Self, ServiceError> {
        for (key, value) in &tags {
            Self::check_key(key)?;
            if value.chars().count() > 256 {
                return Err(ServiceError::invalid(format!(
                    "Tag value for '{key}' is longer than 256 characters"
                )));
            }
        }
        if tags.len() > Self::MAX {
            return Err(ServiceError::invalid(format!(
                "A resource can have at most {} tags",
                Self::MAX
            )));
        }
        Ok(Self(tags))
    }

    /// Validates a tag key.
    pub fn check_key(key: &str) -> Result<(), ServiceError> {
        if (1..=128).contains(&key.chars().count()) && !key.starts_with("aws:") {
            Ok(())
        } else {
            Err(ServiceError::invalid(format!("Invalid tag key '{key}'")))
        }
    }
}

/// A bucket's metrics configuration (S3 Tables' CloudWatch metrics switch); its presence means enabled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricsConfiguration {
    /// The configuration id.
    pub id: String,
}

wire_enum!(
    /// Which time partitions access log records (`partitionedPrefix.partitionDateSource`).
    PartitionDateSource, "partitionDateSource" { /// The time of the request.
        EventTime = "EventTime", /// The time the record was delivered.
        DeliveryTime = "DeliveryTime" }
);

/// A bucket's server access logging configuration (`PutTableBucketLogging`); its presence means enabled. The
/// target is a table bucket of the same account: see `access_logging.rs` for where records land.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessLogging {
    /// The table bucket that receives the records.
    pub target_bucket: String,
    /// The prefix as given: empty, or a namespace name with an optional trailing `/`.
    pub target_prefix: String,
    /// The time the records are partitioned by.
    pub partition_date_source: PartitionDateSource,
}

/// A resource policy: IAM-style JSON text, checked for shape and size when stored. Enforcement belongs to the
/// authorizer; the catalog only keeps the document exactly as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePolicy(String);

impl ResourcePolicy {
    /// The largest policy S3 Tables accepts, in bytes.
    pub const MAX_BYTES: usize = 20 * 1024;

    /// Validates the document with the policy language (`tablebay_policy`, kind `Resource`): JSON of at most
    /// 20 KiB, a known `Version`, statements with `Effect`, `Principal`, known actions (`oss:`/`s3tables:`),
    /// well-formed resource ARNs and conditions. Anything else is `MalformedPolicy` (a 400), and nothing is stored.
    pub fn parse(text: &str) -> Result<Self, ServiceError> {
        if text.is_empty() || text.len() > Self::MAX_BYTES {
            return Err(ServiceError::MalformedPolicy(
                "Invalid resource policy: the document must be between 1 and 20480 bytes".into(),
            ));
        }
        tablebay_policy::Policy::parse(text, tablebay_policy::PolicyKind::Resource)
            .map_err(|e| ServiceError::MalformedPolicy(format!("Invalid resource policy: {e}")))?;
        Ok(Self(text.to_string()))
    }

    /// The document as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_parse_their_wire_spelling() {
        assert_eq!(
            "aws:kms".parse::<SseAlgorithm>().unwrap(),
            SseAlgorithm::AwsKms
        );
        assert_eq!(
            "z-order".parse::<CompactionStrategy>().unwrap(),
            CompactionStrategy::ZOrder
        );
        assert_eq!(JobState::NotYetRun.as_str(), "Not_Yet_Run");
        assert!("ENABLED".parse::<MaintenanceStatus>().is_err());
        assert!("aes256".parse::<SseAlgorithm>().is_err());
    }

    #[test]
    fn encryption_rules() {
        assert!(Encryption::new(SseAlgorithm::Aes256, None).is_ok());
        assert!(
            Encryption::new(
                SseAlgorithm::Aes256,
                Some("arn:aws:kms:us-east-1:111122223333:key/a".into())
            )
            .is_err()
        );
        assert!(Encryption::new(SseAlgorithm::AwsKms, None).is_err());
        assert!(
            Encryption::new(
                SseAlgorithm::AwsKms,
                Some("arn:aws:kms:us-east-1:111122223333:key/abc".into())
            )
            .is_ok()
        );
        assert!(
            Encryption::new(
                SseAlgorithm::AwsKms,
                Some("arn:aws:kms:us-east-1:111122223333:alias/x".into())
            )
            .is_err()
        );
        assert!(Encryption::new(SseAlgorithm::AwsKms, Some("not-an-arn".into())).is_err());
    }

    #[test]
    fn maintenance_ranges_and_defaults() {
        assert_eq!(
            CompactionSettings::new(None, None).unwrap(),
            CompactionSettings::default()
        );
        assert!(CompactionSettings::new(Some(63), None).is_err());
        assert!(CompactionSettings::new(Some(513), None).is_err());
        assert_eq!(
            CompactionSettings::new(Some(64), None)
                .unwrap()
                .target_file_size_mb,
            64
        );
        assert!(SnapshotManagementSettings::new(Some(0), None).is_err());
        assert!(SnapshotManagementSettings::new(None, Some(1 << 40)).is_err());
        assert_eq!(
            SnapshotManagementSettings::new(Some(3), None)
                .unwrap()
                .max_snapshot_age_hours,
            120
        );
        assert!(UnreferencedFileRemovalSettings::new(Some(-1), None).is_err());
    }

    #[test]
    fn policies() {
        let ok = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable","Resource":"*"}]}"#;
        assert!(ResourcePolicy::parse(ok).is_ok());
        let single = r#"{"Version":"1","Statement":{"Effect":"Deny","Principal":"*","Action":["oss:*"],"Resource":["*"]}}"#;
        assert!(ResourcePolicy::parse(single).is_ok());
        for bad in [
            "",
            "not json",
            "[]",
            r#"{"Statement":[]}"#,
            r#"{"Version":"2020-01-01","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Maybe","Action":"*","Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Action":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Action":[],"Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"oss:NoSuchAction","Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"oss:GetTable","Resource":"not-an-arn"}]}"#,
        ] {
            assert!(ResourcePolicy::parse(bad).is_err(), "{bad}");
        }
        assert!(
            ResourcePolicy::parse(&format!("{{\"x\":\"{}\"}}", "a".repeat(20 * 1024))).is_err()
        );
    }

    #[test]
    fn tags() {
        let many: BTreeMap<_, _> = (0..51)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(Tags::new(many).is_err());
        assert!(Tags::new([("".to_string(), "v".to_string())].into()).is_err());
        assert!(Tags::new([("k".to_string(), "".to_string())].into()).is_ok());
    }
}
