//! Table replication as S3 Tables defines it: the replication configuration of a bucket (every table in it) or of
//! one table (which overrides its bucket's), each with a version token; the per-destination status a source table
//! reports; and what makes a table a read-only replica.
//!
//! A replica is recognised by its own committed metadata: the replication worker commits metadata carrying
//! [`REPLICA_SOURCE_PROPERTY`] (the source table's ARN), [`REPLICA_SOURCE_METADATA_PROPERTY`] (the source metadata
//! file it corresponds to) and [`REPLICA_ROLE_PROPERTY`] (the role that replicates into it). That keeps a remote
//! replica's identity and progress in the destination itself, reachable through public APIs only. The worker
//! lives in `tablebay-replication`; wire shapes live with the control plane.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tablebay_store::meta::AttributeKey;
use uuid::Uuid;

use iceberg::TableUpdate;

use crate::catalog::new_version_token;
use crate::commit::ReplicaWrites;
use crate::{
    AccountId, BucketArn, Catalog, CommitError, ServiceError, Table, TableChange, TableRef,
};

/// Replica metadata property: the source table's ARN. Its presence makes the table a read-only replica.
pub const REPLICA_SOURCE_PROPERTY: &str = "tablebay.replication.source-table-arn";
/// Replica metadata property: the source metadata file this replica version corresponds to (the progress).
pub const REPLICA_SOURCE_METADATA_PROPERTY: &str = "tablebay.replication.source-metadata-location";
/// Replica metadata property: the role ARN whose sessions replicate into this table (its only writer).
pub const REPLICA_ROLE_PROPERTY: &str = "tablebay.replication.role";
/// Metadata property of a disassociated replica: the source it was a replica of (kept for the record; the table
/// is writable and never replicated into again).
pub const DISASSOCIATED_PROPERTY: &str = "tablebay.replication.disassociated-from";

/// The most destinations one rule names (botocore: `ReplicationDestinations` max 5).
pub const MAX_DESTINATIONS: usize = 5;

/// A validated replication configuration: the role that replicates and the destination buckets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicationConfig {
    /// The IAM role ARN the worker assumes on the destination's server.
    pub role: String,
    /// Destination table bucket ARNs, as given (validated; at most [`MAX_DESTINATIONS`], no duplicates).
    pub destinations: Vec<String>,
}

impl ReplicationConfig {
    /// Validates a configuration: the role's shape, exactly one rule, one to five distinct destinations that
    /// parse as table bucket ARNs. `rules` holds each rule's destinations.
    pub fn new(role: String, rules: Vec<Vec<String>>) -> Result<Self, ServiceError> {
        if !(20..=2048).contains(&role.len()) || !role_arn_shape(&role) {
            return Err(ServiceError::invalid(format!(
                "Invalid role '{role}': expected an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)"
            )));
        }
        let [destinations] = <[Vec<String>; 1]>::try_from(rules).map_err(|rules| {
            ServiceError::invalid(format!(
                "A replication configuration has exactly one rule, not {}",
                rules.len()
            ))
        })?;
        if destinations.is_empty() || destinations.len() > MAX_DESTINATIONS {
            return Err(ServiceError::invalid(format!(
                "A replication rule names 1 to {MAX_DESTINATIONS} destinations, not {}",
                destinations.len()
            )));
        }
        let mut seen = Vec::new();
        for destination in &destinations {
            let arn = BucketArn::parse(destination)?;
            let key = (
                arn.region.clone(),
                arn.account.to_string(),
                arn.name.to_string(),
            );
            if seen.contains(&key) {
                return Err(ServiceError::invalid(format!(
                    "The destination {destination} is named more than once"
                )));
            }
            seen.push(key);
        }
        Ok(Self { role, destinations })
    }

    /// Fails when a destination is the source bucket itself (replication to itself).
    pub fn check_source(&self, source: &BucketArn) -> Result<(), ServiceError> {
        for destination in &self.destinations {
            if same_bucket(&BucketArn::parse(destination)?, source) {
                return Err(ServiceError::invalid(format!(
                    "A table bucket cannot replicate to itself: {destination}"
                )));
            }
        }
        Ok(())
    }
}

/// Whether two bucket ARNs name the same bucket, whatever their spelling.
pub fn same_bucket(a: &BucketArn, b: &BucketArn) -> bool {
    a.region == b.region && a.account == b.account && a.name == b.name
}

/// `arn:<partition>:iam::<12 digits>:role/<name>` (botocore's `IAMRole` pattern), also in `acs:ram::` form.
fn role_arn_shape(role: &str) -> bool {
    let parts: Vec<&str> = role.splitn(6, ':').collect();
    match parts.as_slice() {
        [scheme, partition, service, "", account, resource] => {
            matches!(*scheme, "arn" | "acs")
                && !partition.is_empty()
                && matches!(*service, "iam" | "ram")
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit())
                && resource
                    .strip_prefix("role/")
                    .is_some_and(|n| !n.is_empty())
        }
        _ => false,
    }
}

/// The account and name of a role ARN (validated by [`ReplicationConfig::new`]).
pub fn role_parts(role: &str) -> Option<(&str, &str)> {
    let mut parts = role.splitn(6, ':');
    let account = parts.nth(4)?;
    let name = parts.next()?.strip_prefix("role/")?;
    Some((account, name))
}

/// A stored configuration with its version token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredReplication {
    /// The configuration.
    pub config: ReplicationConfig,
    /// Changes on every put.
    pub version_token: String,
}

/// Where a table's effective replication configuration comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicationScope {
    /// The table's own configuration.
    Table,
    /// Its bucket's.
    Bucket,
}

/// The replication state of one destination (botocore `ReplicationStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplicationState {
    /// Updates wait to be replicated.
    #[serde(rename = "pending")]
    Pending,
    /// The replica holds the source's current metadata.
    #[serde(rename = "completed")]
    Completed,
    /// The last attempt failed (`failure_message` says why).
    #[serde(rename = "failed")]
    Failed,
}

impl ReplicationState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

/// What the worker last recorded of one destination.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DestinationStatus {
    /// The destination table bucket ARN, as configured.
    pub destination: String,
    /// The state.
    pub state: ReplicationState,
    /// The replica's ARN, once it exists.
    pub destination_table_arn: Option<String>,
    /// The source metadata file last replicated, and when.
    pub last_replicated: Option<(String, DateTime<Utc>)>,
    /// Why the last attempt failed.
    pub failure_message: Option<String>,
}

impl Catalog {
    /// The bucket's replication configuration; `NotFound` when it has none.
    pub async fn bucket_replication(
        &self,
        bucket: &BucketArn,
    ) -> Result<StoredReplication, ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.setting(bucket.id, AttributeKey::Replication)
            .await?
            .ok_or_else(no_configuration)
    }

    /// Creates or replaces the bucket's replication configuration; returns its new version token. A given
    /// `expected` token must be the current one (`Conflict` otherwise).
    pub async fn put_bucket_replication(
        &self,
        bucket: &BucketArn,
        expected: Option<&str>,
        config: ReplicationConfig,
    ) -> Result<String, ServiceError> {
        let resolved = self.bucket(bucket).await?;
        config.check_source(&resolved.arn)?;
        self.put_replication(resolved.id, expected, config).await
    }

    /// Deletes the bucket's replication configuration (replicas stay as they are).
    pub async fn delete_bucket_replication(
        &self,
        bucket: &BucketArn,
        expected: Option<&str>,
    ) -> Result<(), ServiceError> {
        let bucket = self.bucket(bucket).await?;
        self.delete_replication(bucket.id, expected).await
    }

    /// The table's own replication configuration; `NotFound` when it has none.
    pub async fn table_replication(
        &self,
        table: &TableRef,
    ) -> Result<StoredReplication, ServiceError> {
        let table = self.table(table).await?;
        self.setting(table.id, AttributeKey::Replication)
            .await?
            .ok_or_else(no_configuration)
    }

    /// Creates or replaces the table's replication configuration; returns its new version token.
    pub async fn put_table_replication(
        &self,
        table: &TableRef,
        expected: Option<&str>,
        config: ReplicationConfig,
    ) -> Result<String, ServiceError> {
        let table = self.table(table).await?;
        config.check_source(&table.bucket.arn)?;
        self.put_replication(table.id, expected, config).await
    }

    /// Deletes the table's own replication configuration.
    pub async fn delete_table_replication(
        &self,
        table: &TableRef,
        expected: Option<&str>,
    ) -> Result<(), ServiceError> {
        let table = self.table(table).await?;
        self.delete_replication(table.id, expected).await
    }

    /// The configuration that applies to a table (its own, else its bucket's), if any.
    pub async fn effective_replication(
        &self,
        table: &Table,
    ) -> Result<Option<(ReplicationScope, ReplicationConfig)>, ServiceError> {
        if let Some(own) = self
            .setting::<StoredReplication>(table.id, AttributeKey::Replication)
            .await?
        {
            return Ok(Some((ReplicationScope::Table, own.config)));
        }
        Ok(self
            .setting::<StoredReplication>(table.bucket.id, AttributeKey::Replication)
            .await?
            .map(|stored| (ReplicationScope::Bucket, stored.config)))
    }

    /// The replication status of a source table, one entry per configured destination (`pending` until the
    /// worker first records it). `NotFound` when no configuration applies to the table.
    pub async fn replication_status(
        &self,
        table: &TableRef,
    ) -> Result<(Table, Vec<DestinationStatus>), ServiceError> {
        let table = self.table(table).await?;
        let Some((_, config)) = self.effective_replication(&table).await? else {
            return Err(no_configuration());
        };
        let recorded: Vec<DestinationStatus> = self
            .setting(table.id, AttributeKey::ReplicationStatus)
            .await?
            .unwrap_or_default();
        let statuses = config
            .destinations
            .iter()
            .map(|destination| {
                recorded
                    .iter()
                    .find(|s| &s.destination == destination)
                    .cloned()
                    .map(|mut status| {
                        // Completed means the replica holds the source's current version; commits since the
                        // worker last looked are pending.
                        let current = table.metadata_location.as_deref();
                        if status.state == ReplicationState::Completed
                            && status.last_replicated.as_ref().map(|(l, _)| l.as_str()) != current
                        {
                            status.state = ReplicationState::Pending;
                        }
                        status
                    })
                    .unwrap_or_else(|| DestinationStatus {
                        destination: destination.clone(),
                        state: ReplicationState::Pending,
                        destination_table_arn: None,
                        last_replicated: None,
                        failure_message: None,
                    })
            })
            .collect();
        Ok((table, statuses))
    }

    /// Records the worker's view of a source table's destinations.
    pub async fn set_replication_status(
        &self,
        table_id: Uuid,
        statuses: &[DestinationStatus],
    ) -> Result<(), ServiceError> {
        self.set_setting(table_id, AttributeKey::ReplicationStatus, &statuses)
            .await
    }

    /// The ids of every table some replication configuration applies to (the worker's to-do list).
    pub async fn replicated_table_ids(&self) -> Result<Vec<Uuid>, ServiceError> {
        const LIMIT: u32 = 100_000;
        let mut ids = Vec::new();
        for resource in self
            .meta
            .resources_with_attribute(AttributeKey::Replication, LIMIT)
            .await?
        {
            if self.meta.table_by_id(resource).await?.is_some() {
                ids.push(resource);
                continue;
            }
            let mut after: Option<(String, String)> = None;
            loop {
                let page = self
                    .meta
                    .list_tables(
                        resource,
                        None,
                        None,
                        after.as_ref().map(|(n, t)| (n.as_str(), t.as_str())),
                        1000,
                    )
                    .await?;
                let Some(last) = page.last() else { break };
                after = Some((last.namespace_name.clone(), last.name.clone()));
                ids.extend(page.iter().map(|t| t.id));
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// DisassociateTableReplication: a replica becomes a standalone, writable table, permanently. Its metadata
    /// loses the replica properties (and records the source in [`DISASSOCIATED_PROPERTY`]) in an ordinary commit;
    /// the worker's next commit then fails on its stale version token, and it finds the table detached. A table
    /// that is not a replica (or no longer one) is `Invalid`.
    pub async fn disassociate_replica(
        &self,
        table: &TableRef,
        by: &AccountId,
    ) -> Result<(), ServiceError> {
        let table = self.table(table).await?;
        let not_replica = || ServiceError::invalid("The table is not a replica table");
        // No metadata, or a pointer to a file that is not readable metadata: not a replica's.
        let current = match self.with_metadata(table.clone()).await {
            Ok(current) => current,
            Err(e @ (ServiceError::Unavailable(_) | ServiceError::Store(_))) => return Err(e),
            Err(_) => return Err(not_replica()),
        };
        let Some(source) = current
            .metadata
            .metadata
            .properties()
            .get(REPLICA_SOURCE_PROPERTY)
            .cloned()
        else {
            return Err(not_replica());
        };
        let change = TableChange {
            requirements: Vec::new(),
            updates: vec![
                TableUpdate::RemoveProperties {
                    removals: vec![REPLICA_SOURCE_PROPERTY.into(), REPLICA_ROLE_PROPERTY.into()],
                },
                TableUpdate::SetProperties {
                    updates: [(DISASSOCIATED_PROPERTY.to_string(), source)].into(),
                },
            ],
        };
        self.try_commit_tables(vec![(table, change)], by, None, ReplicaWrites::Allowed)
            .await
            .map(drop)
            .map_err(|e| match e {
                CommitError::Invalid(m) => ServiceError::Invalid(m),
                CommitError::NotFound(m) => ServiceError::NotFound(m),
                CommitError::AlreadyExists(m)
                | CommitError::Conflict(m)
                | CommitError::KeyTaken(m) => ServiceError::Conflict(m),
                CommitError::Forbidden(m) => ServiceError::Denied(m),
                CommitError::Unavailable(m) | CommitError::StateUnknown(m) => {
                    ServiceError::Internal(m)
                }
            })
    }

    async fn put_replication(
        &self,
        resource: Uuid,
        expected: Option<&str>,
        config: ReplicationConfig,
    ) -> Result<String, ServiceError> {
        let current: Option<StoredReplication> =
            self.setting(resource, AttributeKey::Replication).await?;
        check_token(current.as_ref(), expected, false)?;
        let stored = StoredReplication {
            config,
            version_token: new_version_token(),
        };
        self.set_setting(resource, AttributeKey::Replication, &stored)
            .await?;
        Ok(stored.version_token)
    }

    async fn delete_replication(
        &self,
        resource: Uuid,
        expected: Option<&str>,
    ) -> Result<(), ServiceError> {
        let current: Option<StoredReplication> =
            self.setting(resource, AttributeKey::Replication).await?;
        check_token(current.as_ref(), expected, true)?;
        self.meta
            .delete_attribute(resource, AttributeKey::Replication)
            .await?;
        self.meta
            .delete_attribute(resource, AttributeKey::ReplicationStatus)
            .await?;
        Ok(())
    }
}

/// A given version token must be the stored one; deleting needs a configuration to delete.
fn check_token(
    current: Option<&StoredReplication>,
    expected: Option<&str>,
    deleting: bool,
) -> Result<(), ServiceError> {
    match (current, expected) {
        (None, _) if deleting => Err(no_configuration()),
        (Some(current), Some(token)) if current.version_token != token => {
            Err(ServiceError::Conflict(
                "The version token does not match the current configuration".into(),
            ))
        }
        (None, Some(_)) => Err(ServiceError::Conflict(
            "The version token does not match: there is no replication configuration".into(),
        )),
        _ => Ok(()),
    }
}

fn no_configuration() -> ServiceError {
    ServiceError::NotFound("The replication configuration does not exist.".into())
}

/// Why a table refuses a write when its metadata makes it a replica; `None` when it is writable.
pub fn replica_refusal(properties: &std::collections::HashMap<String, String>) -> Option<String> {
    properties.get(REPLICA_SOURCE_PROPERTY).map(|source| {
        format!(
            "Access denied: the table is a read-only replica of {source}; disassociate it from replication to write to it"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLE: &str = "arn:aws:iam::111122223333:role/replicator";
    const DEST: &str = "arn:aws:s3tables:us-east-1:111122223333:bucket/dest";

    #[test]
    fn configurations() {
        let ok = |role: &str, rules: Vec<Vec<&str>>| {
            ReplicationConfig::new(
                role.into(),
                rules
                    .into_iter()
                    .map(|r| r.into_iter().map(String::from).collect())
                    .collect(),
            )
            .is_ok()
        };
        assert!(ok(ROLE, vec![vec![DEST]]));
        assert!(!ok(ROLE, vec![]), "no rules");
        assert!(!ok(ROLE, vec![vec![DEST], vec![DEST]]), "two rules");
        assert!(!ok(ROLE, vec![vec![]]), "no destinations");
        assert!(!ok(ROLE, vec![vec![DEST, DEST]]), "duplicate");
        assert!(!ok(ROLE, vec![vec!["not-an-arn"]]));
        assert!(!ok(ROLE, vec![vec![DEST; 6]]));
        assert!(!ok("arn:aws:iam::111122223333:user/u", vec![vec![DEST]]));
        assert!(!ok("role", vec![vec![DEST]]));
        assert!(!ok(
            "arn:aws:iam::1111:role/r-too-short-acct",
            vec![vec![DEST]]
        ));
        assert_eq!(role_parts(ROLE), Some(("111122223333", "replicator")));
    }

    #[test]
    fn tokens() {
        let stored = StoredReplication {
            config: ReplicationConfig {
                role: ROLE.into(),
                destinations: vec![DEST.into()],
            },
            version_token: "t1".into(),
        };
        assert!(check_token(Some(&stored), Some("t1"), false).is_ok());
        assert!(check_token(Some(&stored), None, false).is_ok());
        assert!(check_token(Some(&stored), Some("t2"), false).is_err());
        assert!(check_token(None, None, false).is_ok());
        assert!(check_token(None, None, true).is_err());
        assert!(check_token(None, Some("t"), false).is_err());
    }
}
