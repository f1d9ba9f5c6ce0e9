//! Identity rows: accounts, users and roles ("principals"), their identity policies, and credentials (long-term
//! access keys and temporary session credentials).
//!
//! Deleting an account, user or role removes what hangs off it in the same write transaction. The IAM service
//! above validates names and policy documents; this file only persists them.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::MetaStore;
use super::codec::{self, insert_error};
use crate::StoreError;
use crate::encryption::SEALED_SECRET_PREFIX;

/// An account as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRecord {
    /// The 12-digit account id.
    pub account_id: String,
    /// An optional display name.
    pub name: Option<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A user or role as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrincipalRecord {
    /// Owning account.
    pub account_id: String,
    /// `user` or `role`.
    pub kind: String,
    /// The user or role name, unique per account and kind.
    pub name: String,
    /// A role's trust policy document.
    pub trust_policy: Option<String>,
    /// A role's longest session, in seconds.
    pub max_session_secs: Option<i64>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A credential as stored: who it acts as, its secret, and for temporary credentials the session details.
#[derive(Clone, PartialEq, Eq)]
pub struct CredentialRecord {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret: String,
    /// The account of the principal.
    pub account_id: String,
    /// `root`, `user` or `role`.
    pub principal_kind: String,
    /// The user or role name (empty for an account root).
    pub principal_name: String,
    /// A role session's name.
    pub session_name: Option<String>,
    /// `Active` or `Inactive`.
    pub status: String,
    /// SHA-256 (hex) of the session token of temporary credentials.
    pub session_token_sha256: Option<String>,
    /// The session policy document of temporary credentials, if any.
    pub session_policy: Option<String>,
    /// When temporary credentials expire.
    pub expires_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

impl std::fmt::Debug for CredentialRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialRecord")
            .field("access_key_id", &self.access_key_id)
            .field("account_id", &self.account_id)
            .field("principal_kind", &self.principal_kind)
            .field("principal_name", &self.principal_name)
            .field("status", &self.status)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// `SELECT <every credential column> FROM iam_credentials <rest>`, as one literal (queries are `&'static str`).
macro_rules! select_credentials {
    ($rest:literal) => {
        concat!(
            "SELECT access_key_id, secret, account_id, principal_kind, principal_name, session_name, status, \
             session_token_sha256, session_policy, expires_at_ms, created_at_ms FROM iam_credentials ",
            $rest
        )
    };
}

impl MetaStore {
    /// Inserts an account; `AlreadyExists` when the id is taken.
    pub async fn insert_account(&self, account: &AccountRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO iam_accounts (account_id, name, created_at_ms) VALUES ($1, $2, $3)",
        )
        .bind(account.account_id.as_str())
        .bind(account.name.as_deref())
        .bind(codec::millis(account.created_at))
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("account {}", account.account_id)))?;
        Ok(())
    }

    /// The account, if it exists.
    pub async fn account(&self, account_id: &str) -> Result<Option<AccountRecord>, StoreError> {
        sqlx::query(
            "SELECT account_id, name, created_at_ms FROM iam_accounts WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(|row| {
            Ok(AccountRecord {
                account_id: codec::text(row, "account_id")?,
                name: row.try_get("name")?,
                created_at: codec::time(row, "created_at_ms")?,
            })
        })
        .transpose()
    }

    /// Deletes the account with its users, roles, policies and credentials. `NotFound` when it does not exist,
    /// `Conflict` when it still owns table buckets (their data would become unreachable).
    pub async fn delete_account(&self, account_id: &str) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        let bucket = sqlx::query("SELECT id FROM table_buckets WHERE account_id = $1 LIMIT 1")
            .bind(account_id)
            .fetch_optional(&mut *tx)
            .await?;
        if bucket.is_some() {
            return Err(StoreError::Conflict(format!(
                "account {account_id} still owns table buckets"
            )));
        }
        for statement in [
            "DELETE FROM iam_credentials WHERE account_id = $1",
            "DELETE FROM iam_policies WHERE account_id = $1",
            "DELETE FROM iam_principals WHERE account_id = $1",
        ] {
            sqlx::query(statement)
                .bind(account_id)
                .execute(&mut *tx)
                .await?;
        }
        let deleted = sqlx::query("DELETE FROM iam_accounts WHERE account_id = $1")
            .bind(account_id)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }

    /// Inserts a user or role; `AlreadyExists` when the name is taken, `NotFound` when the account is gone.
    pub async fn insert_principal(&self, principal: &PrincipalRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO iam_principals (account_id, kind, name, trust_policy, max_session_secs, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(principal.account_id.as_str())
        .bind(principal.kind.as_str())
        .bind(principal.name.as_str())
        .bind(principal.trust_policy.as_deref())
        .bind(principal.max_session_secs)
        .bind(codec::millis(principal.created_at))
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("{} {}", principal.kind, principal.name)))?;
        Ok(())
    }

    /// The user or role, if it exists.
    pub async fn principal(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Option<PrincipalRecord>, StoreError> {
        sqlx::query(
            "SELECT account_id, kind, name, trust_policy, max_session_secs, created_at_ms FROM iam_principals \
             WHERE account_id = $1 AND kind = $2 AND name = $3",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(principal_from_row)
        .transpose()
    }

    /// Every user (or role) of the account, by name.
    pub async fn list_principals(
        &self,
        account_id: &str,
        kind: &str,
    ) -> Result<Vec<PrincipalRecord>, StoreError> {
        sqlx::query(
            "SELECT account_id, kind, name, trust_policy, max_session_secs, created_at_ms FROM iam_principals \
             WHERE account_id = $1 AND kind = $2 ORDER BY name",
        )
        .bind(account_id)
        .bind(kind)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(principal_from_row)
        .collect()
    }

    /// Deletes a user or role with its policies and credentials (temporary ones included). `NotFound` when it
    /// does not exist. Returns the access key ids that were removed, so caches can forget them.
    pub async fn delete_principal(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.begin_write().await?;
        let keys: Vec<String> = sqlx::query(
            "SELECT access_key_id FROM iam_credentials WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| codec::text(row, "access_key_id"))
        .collect::<Result<_, _>>()?;
        for statement in [
            "DELETE FROM iam_credentials WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3",
            "DELETE FROM iam_policies WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3",
            "DELETE FROM iam_principals WHERE account_id = $1 AND kind = $2 AND name = $3",
        ] {
            let done = sqlx::query(statement)
                .bind(account_id)
                .bind(kind)
                .bind(name)
                .execute(&mut *tx)
                .await?;
            if statement.starts_with("DELETE FROM iam_principals") && done.rows_affected() == 0 {
                return Err(StoreError::NotFound);
            }
        }
        tx.commit().await?;
        Ok(keys)
    }

    /// Sets (inserts or replaces) an identity policy of a user or role; `NotFound` when the principal is gone.
    pub async fn put_principal_policy(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
        policy_name: &str,
        document: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO iam_policies (account_id, principal_kind, principal_name, policy_name, document) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (account_id, principal_kind, principal_name, policy_name) DO UPDATE SET document = excluded.document",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .bind(policy_name)
        .bind(document)
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("policy {policy_name}")))?;
        Ok(())
    }

    /// The identity policies of a user or role as (name, document), by name.
    pub async fn principal_policies(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        sqlx::query(
            "SELECT policy_name, document FROM iam_policies \
             WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3 ORDER BY policy_name",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| Ok((codec::text(row, "policy_name")?, codec::text(row, "document")?)))
        .collect()
    }

    /// Removes an identity policy; returns whether it existed.
    pub async fn delete_principal_policy(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
        policy_name: &str,
    ) -> Result<bool, StoreError> {
        let deleted = sqlx::query(
            "DELETE FROM iam_policies \
             WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3 AND policy_name = $4",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .bind(policy_name)
        .execute(&self.pool)
        .await?;
        Ok(deleted.rows_affected() > 0)
    }

    /// Inserts a credential; `AlreadyExists` when the access key id is taken.
    pub async fn insert_credential(&self, credential: &CredentialRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO iam_credentials (access_key_id, secret, account_id, principal_kind, principal_name, \
             session_name, status, session_token_sha256, session_policy, expires_at_ms, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(credential.access_key_id.as_str())
        .bind(credential.secret.as_str())
        .bind(credential.account_id.as_str())
        .bind(credential.principal_kind.as_str())
        .bind(credential.principal_name.as_str())
        .bind(credential.session_name.as_deref())
        .bind(credential.status.as_str())
        .bind(credential.session_token_sha256.as_deref())
        .bind(credential.session_policy.as_deref())
        .bind(credential.expires_at.map(codec::millis))
        .bind(codec::millis(credential.created_at))
        .execute(&self.pool)
        .await
        .map_err(|e| insert_error(e, || format!("access key {}", credential.access_key_id)))?;
        Ok(())
    }

    /// The credential of an access key id, if any.
    pub async fn credential(
        &self,
        access_key_id: &str,
    ) -> Result<Option<CredentialRecord>, StoreError> {
        sqlx::query(select_credentials!("WHERE access_key_id = $1"))
            .bind(access_key_id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(credential_from_row)
            .transpose()
    }

    /// Access key ids and secrets of the credentials whose secret is stored as given (before secrets were sealed).
    pub async fn unsealed_secrets(&self) -> Result<Vec<(String, String)>, StoreError> {
        sqlx::query("SELECT access_key_id, secret FROM iam_credentials WHERE secret NOT LIKE $1")
            .bind(format!("{SEALED_SECRET_PREFIX}%"))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| {
                Ok((
                    codec::text(row, "access_key_id")?,
                    codec::text(row, "secret")?,
                ))
            })
            .collect()
    }

    /// Replaces the stored secret `old` of a credential with `new`; `false` when the credential is gone or another
    /// writer changed it first.
    pub async fn replace_secret(
        &self,
        access_key_id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE iam_credentials SET secret = $1 WHERE access_key_id = $2 AND secret = $3",
        )
        .bind(new)
        .bind(access_key_id)
        .bind(old)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The long-term access keys of a principal (`root` with an empty name for the account root), oldest first.
    pub async fn list_access_keys(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Vec<CredentialRecord>, StoreError> {
        sqlx::query(select_credentials!(
            "WHERE account_id = $1 AND principal_kind = $2 AND principal_name = $3 \
             AND session_token_sha256 IS NULL ORDER BY created_at_ms, access_key_id"
        ))
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(credential_from_row)
        .collect()
    }

    /// Sets the status of a principal's long-term key; returns whether the key exists.
    pub async fn set_access_key_status(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
        access_key_id: &str,
        status: &str,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query(
            "UPDATE iam_credentials SET status = $5 WHERE access_key_id = $4 AND account_id = $1 \
             AND principal_kind = $2 AND principal_name = $3 AND session_token_sha256 IS NULL",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .bind(access_key_id)
        .bind(status)
        .execute(&self.pool)
        .await?;
        Ok(updated.rows_affected() > 0)
    }

    /// Deletes a principal's long-term key; returns whether it existed.
    pub async fn delete_access_key(
        &self,
        account_id: &str,
        kind: &str,
        name: &str,
        access_key_id: &str,
    ) -> Result<bool, StoreError> {
        let deleted = sqlx::query(
            "DELETE FROM iam_credentials WHERE access_key_id = $4 AND account_id = $1 \
             AND principal_kind = $2 AND principal_name = $3 AND session_token_sha256 IS NULL",
        )
        .bind(account_id)
        .bind(kind)
        .bind(name)
        .bind(access_key_id)
        .execute(&self.pool)
        .await?;
        Ok(deleted.rows_affected() > 0)
    }

    /// Removes temporary credentials that expired before `now`; returns how many.
    pub async fn delete_expired_credentials(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let deleted = sqlx::query(
            "DELETE FROM iam_credentials WHERE expires_at_ms IS NOT NULL AND expires_at_ms < $1",
        )
        .bind(codec::millis(now))
        .execute(&self.pool)
        .await?;
        Ok(deleted.rows_affected())
    }
}

fn principal_from_row(row: &AnyRow) -> Result<PrincipalRecord, StoreError> {
    Ok(PrincipalRecord {
        account_id: codec::text(row, "account_id")?,
        kind: codec::text(row, "kind")?,
        name: codec::text(row, "name")?,
        trust_policy: row.try_get("trust_policy")?,
        max_session_secs: row.try_get("max_session_secs")?,
        created_at: codec::time(row, "created_at_ms")?,
    })
}

fn credential_from_row(row: &AnyRow) -> Result<CredentialRecord, StoreError> {
    let expires_ms: Option<i64> = row.try_get("expires_at_ms")?;
    let expires_at = match expires_ms {
        None => None,
        Some(ms) => Some(
            DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| StoreError::Corrupt(format!("expires_at_ms {ms} out of range")))?,
        ),
    };
    Ok(CredentialRecord {
        access_key_id: codec::text(row, "access_key_id")?,
        secret: codec::text(row, "secret")?,
        account_id: codec::text(row, "account_id")?,
        principal_kind: codec::text(row, "principal_kind")?,
        principal_name: codec::text(row, "principal_name")?,
        session_name: row.try_get("session_name")?,
        status: codec::text(row, "status")?,
        session_token_sha256: row.try_get("session_token_sha256")?,
        session_policy: row.try_get("session_policy")?,
        expires_at,
        created_at: codec::time(row, "created_at_ms")?,
    })
}
