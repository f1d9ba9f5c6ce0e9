//! Users and roles of an account, their identity policies and the users' access keys: the operations behind the
//! admin API. The caller is an account root acting in its own account, or the instance root acting in the
//! default account or in the account it names; nobody else administers identities.

use chrono::{DateTime, Utc};

use tablebay_policy::{Policy, PolicyKind};
use tablebay_store::StoreError;
use tablebay_store::meta::{CredentialRecord, PrincipalRecord};

use crate::credentials::{ACTIVE, INACTIVE, ROLE, USER};
use crate::names::{long_term_key_id, secret_key};
use crate::{Iam, PolicyName, PrincipalName, ServiceError};

/// A user or a role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityKind {
    /// An IAM user (long-term access keys).
    User,
    /// A role (assumed through STS).
    Role,
}

impl IdentityKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => USER,
            Self::Role => ROLE,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Role => "role",
        }
    }
}

/// A user or role as the admin API shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentityInfo {
    /// The account.
    pub account_id: String,
    /// The name.
    pub name: String,
    /// The ARN.
    pub arn: String,
    /// A role's trust policy.
    pub trust_policy: Option<String>,
    /// A role's longest session in seconds.
    pub max_session_secs: Option<i64>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A key pair as issued, the only time the secret is shown.
#[derive(Clone)]
pub struct IssuedKey {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
}

/// A long-term access key as listed (no secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessKey {
    /// The access key id.
    pub access_key_id: String,
    /// `Active` or `Inactive`.
    pub status: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// At most two access keys per user (IAM's limit), enough to rotate without downtime.
pub const MAX_KEYS_PER_USER: usize = 2;

/// Default and bounds of a role's longest session (IAM: 1 to 12 hours).
pub(crate) const DEFAULT_ROLE_SESSION_SECS: i64 = 3600;
const MAX_ROLE_SESSION_SECS: i64 = 43_200;

impl Iam {
    async fn require_account(&self, account: &str) -> Result<(), ServiceError> {
        match self.meta.account(account).await? {
            Some(_) => Ok(()),
            None => Err(ServiceError::NotFound(format!(
                "The account {account} does not exist"
            ))),
        }
    }

    fn info(&self, record: PrincipalRecord) -> IdentityInfo {
        let arn = match record.kind.as_str() {
            ROLE => self.role_arn(&record.account_id, &record.name),
            _ => self.user_arn(&record.account_id, &record.name),
        };
        IdentityInfo {
            account_id: record.account_id,
            name: record.name,
            arn,
            trust_policy: record.trust_policy,
            max_session_secs: record.max_session_secs,
            created_at: record.created_at,
        }
    }

    /// Creates a user.
    pub async fn create_user(
        &self,
        account: &str,
        name: &PrincipalName,
    ) -> Result<IdentityInfo, ServiceError> {
        self.create_identity(account, IdentityKind::User, name, None, None)
            .await
    }

    /// Creates a role with its trust policy (who may assume it) and longest session (default one hour).
    pub async fn create_role(
        &self,
        account: &str,
        name: &PrincipalName,
        trust_policy: &str,
        max_session_secs: Option<i64>,
    ) -> Result<IdentityInfo, ServiceError> {
        validate_policy(trust_policy, PolicyKind::Trust)?;
        let max = max_session_secs.unwrap_or(DEFAULT_ROLE_SESSION_SECS);
        if !(DEFAULT_ROLE_SESSION_SECS..=MAX_ROLE_SESSION_SECS).contains(&max) {
            return Err(ServiceError::Invalid(format!(
                "maxSessionDuration must be between {DEFAULT_ROLE_SESSION_SECS} and {MAX_ROLE_SESSION_SECS} seconds"
            )));
        }
        self.create_identity(
            account,
            IdentityKind::Role,
            name,
            Some(trust_policy),
            Some(max),
        )
        .await
    }

    async fn create_identity(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &PrincipalName,
        trust_policy: Option<&str>,
        max_session_secs: Option<i64>,
    ) -> Result<IdentityInfo, ServiceError> {
        self.require_account(account).await?;
        let record = PrincipalRecord {
            account_id: account.to_string(),
            kind: kind.as_str().to_string(),
            name: name.as_str().to_string(),
            trust_policy: trust_policy.map(str::to_string),
            max_session_secs,
            created_at: Utc::now(),
        };
        self.meta
            .insert_principal(&record)
            .await
            .map_err(|e| ServiceError::from_store(e, || format!("The {} {name}", kind.noun())))?;
        Ok(self.info(record))
    }

    /// A user or role.
    pub async fn identity(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
    ) -> Result<IdentityInfo, ServiceError> {
        match self.meta.principal(account, kind.as_str(), name).await? {
            Some(record) => Ok(self.info(record)),
            None => Err(not_found(kind, name)),
        }
    }

    /// Every user (or role) of the account, by name.
    pub async fn identities(
        &self,
        account: &str,
        kind: IdentityKind,
    ) -> Result<Vec<IdentityInfo>, ServiceError> {
        self.require_account(account).await?;
        Ok(self
            .meta
            .list_principals(account, kind.as_str())
            .await?
            .into_iter()
            .map(|r| self.info(r))
            .collect())
    }

    /// Deletes a user or role with its policies and keys (sessions of a role included).
    pub async fn delete_identity(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
    ) -> Result<(), ServiceError> {
        let keys = self
            .meta
            .delete_principal(account, kind.as_str(), name)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => not_found(kind, name),
                other => other.into(),
            })?;
        self.forget_keys(keys).await;
        Ok(())
    }

    /// Sets an identity policy (validated: malformed, an unknown action or a bad ARN is `Invalid`, nothing stored).
    pub async fn put_identity_policy(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
        policy_name: &PolicyName,
        document: &str,
    ) -> Result<(), ServiceError> {
        validate_policy(document, PolicyKind::Identity)?;
        self.identity(account, kind, name).await?;
        self.meta
            .put_principal_policy(account, kind.as_str(), name, policy_name.as_str(), document)
            .await
            .map_err(|e| ServiceError::from_store(e, || format!("The {} {name}", kind.noun())))
    }

    /// The identity policies of a user or role as (name, document).
    pub async fn identity_policies(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
    ) -> Result<Vec<(String, String)>, ServiceError> {
        self.identity(account, kind, name).await?;
        Ok(self
            .meta
            .principal_policies(account, kind.as_str(), name)
            .await?)
    }

    /// One identity policy's document.
    pub async fn identity_policy(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
        policy_name: &str,
    ) -> Result<String, ServiceError> {
        self.identity_policies(account, kind, name)
            .await?
            .into_iter()
            .find(|(n, _)| n == policy_name)
            .map(|(_, document)| document)
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "The policy {policy_name} of {} {name} does not exist",
                    kind.noun()
                ))
            })
    }

    /// Removes an identity policy.
    pub async fn delete_identity_policy(
        &self,
        account: &str,
        kind: IdentityKind,
        name: &str,
        policy_name: &str,
    ) -> Result<(), ServiceError> {
        self.identity(account, kind, name).await?;
        if self
            .meta
            .delete_principal_policy(account, kind.as_str(), name, policy_name)
            .await?
        {
            Ok(())
        } else {
            Err(ServiceError::NotFound(format!(
                "The policy {policy_name} of {} {name} does not exist",
                kind.noun()
            )))
        }
    }

    /// Issues a new access key for a user (at most [`MAX_KEYS_PER_USER`]).
    pub async fn create_access_key(
        &self,
        account: &str,
        user: &str,
    ) -> Result<IssuedKey, ServiceError> {
        self.identity(account, IdentityKind::User, user).await?;
        if self.meta.list_access_keys(account, USER, user).await?.len() >= MAX_KEYS_PER_USER {
            return Err(ServiceError::Conflict(format!(
                "The user {user} already has {MAX_KEYS_PER_USER} access keys; delete one first"
            )));
        }
        let key = IssuedKey {
            access_key_id: long_term_key_id(),
            secret_access_key: secret_key(),
        };
        self.meta
            .insert_credential(&CredentialRecord {
                access_key_id: key.access_key_id.clone(),
                secret: self.stored_secret(&key.secret_access_key).await?,
                account_id: account.to_string(),
                principal_kind: USER.to_string(),
                principal_name: user.to_string(),
                session_name: None,
                status: ACTIVE.to_string(),
                session_token_sha256: None,
                session_policy: None,
                expires_at: None,
                created_at: Utc::now(),
            })
            .await?;
        Ok(key)
    }

    /// A user's access keys (without secrets).
    pub async fn access_keys(
        &self,
        account: &str,
        user: &str,
    ) -> Result<Vec<AccessKey>, ServiceError> {
        self.identity(account, IdentityKind::User, user).await?;
        Ok(self
            .meta
            .list_access_keys(account, USER, user)
            .await?
            .into_iter()
            .map(|r| AccessKey {
                access_key_id: r.access_key_id,
                status: r.status,
                created_at: r.created_at,
            })
            .collect())
    }

    /// Activates or deactivates a user's key (`Active` / `Inactive`).
    pub async fn set_access_key_status(
        &self,
        account: &str,
        user: &str,
        access_key_id: &str,
        status: &str,
    ) -> Result<(), ServiceError> {
        let status = match status {
            s if s.eq_ignore_ascii_case(ACTIVE) => ACTIVE,
            s if s.eq_ignore_ascii_case(INACTIVE) => INACTIVE,
            other => {
                return Err(ServiceError::Invalid(format!(
                    "Invalid status '{other}': use Active or Inactive"
                )));
            }
        };
        self.identity(account, IdentityKind::User, user).await?;
        if !self
            .meta
            .set_access_key_status(account, USER, user, access_key_id, status)
            .await?
        {
            return Err(key_not_found(user, access_key_id));
        }
        self.forget_keys([access_key_id.to_string()]).await;
        Ok(())
    }

    /// Deletes a user's key.
    pub async fn delete_access_key(
        &self,
        account: &str,
        user: &str,
        access_key_id: &str,
    ) -> Result<(), ServiceError> {
        self.identity(account, IdentityKind::User, user).await?;
        if !self
            .meta
            .delete_access_key(account, USER, user, access_key_id)
            .await?
        {
            return Err(key_not_found(user, access_key_id));
        }
        self.forget_keys([access_key_id.to_string()]).await;
        Ok(())
    }
}

fn not_found(kind: IdentityKind, name: &str) -> ServiceError {
    ServiceError::NotFound(format!("The {} {name} does not exist", kind.noun()))
}

fn key_not_found(user: &str, access_key_id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "The access key {access_key_id} of user {user} does not exist"
    ))
}

/// Parses a policy document of `kind`; its message is the 400's.
pub(crate) fn validate_policy(document: &str, kind: PolicyKind) -> Result<Policy, ServiceError> {
    Policy::parse(document, kind)
        .map_err(|e| ServiceError::MalformedPolicy(format!("Invalid policy document: {e}")))
}
