//! Accounts: created and deleted by the instance root; each new account gets its root access key. The
//! configured default account (`--account-id`) exists from the first start and belongs to the instance root.

use chrono::Utc;
use tablebay_auth::{Principal, PrincipalKind};
use tablebay_store::StoreError;
use tablebay_store::meta::{AccountRecord, CredentialRecord};

use crate::credentials::{ACCOUNT_ROOT, ACTIVE};
use crate::names::{account_id, long_term_key_id, secret_key};
use crate::principals::IssuedKey;
use crate::{Iam, ServiceError};

/// A freshly created account with its root key.
#[derive(Clone)]
pub struct NewAccount {
    /// The new 12-digit account id.
    pub account_id: String,
    /// The account root's key.
    pub key: IssuedKey,
}

impl std::fmt::Debug for NewAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewAccount")
            .field("account_id", &self.account_id)
            .finish_non_exhaustive()
    }
}

/// Longest account display name.
const MAX_ACCOUNT_NAME: usize = 64;

impl Iam {
    /// Makes sure the default account exists (idempotent; several instances may start at once).
    pub async fn ensure_default_account(&self) -> Result<(), ServiceError> {
        let record = AccountRecord {
            account_id: self.config.default_account.to_string(),
            name: Some("default".to_string()),
            created_at: Utc::now(),
        };
        match self.meta.insert_account(&record).await {
            Ok(()) | Err(StoreError::AlreadyExists(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates an account with a root access key. Only the instance root may.
    pub async fn create_account(
        &self,
        caller: &Principal,
        name: Option<&str>,
    ) -> Result<NewAccount, ServiceError> {
        require_instance_root(caller)?;
        if let Some(name) = name
            && (name.is_empty()
                || name.len() > MAX_ACCOUNT_NAME
                || name.chars().any(char::is_control))
        {
            return Err(ServiceError::Invalid(format!(
                "Invalid accountName: it must be 1 to {MAX_ACCOUNT_NAME} printable characters"
            )));
        }
        let now = Utc::now();
        // A random 12-digit id; a collision (one in 10^11) is retried.
        let mut id = account_id();
        for _ in 0..3 {
            let record = AccountRecord {
                account_id: id.clone(),
                name: name.map(str::to_string),
                created_at: now,
            };
            match self.meta.insert_account(&record).await {
                Ok(()) => break,
                Err(StoreError::AlreadyExists(_)) => id = account_id(),
                Err(e) => return Err(e.into()),
            }
        }
        let key = IssuedKey {
            access_key_id: long_term_key_id(),
            secret_access_key: secret_key(),
        };
        self.meta
            .insert_credential(&CredentialRecord {
                access_key_id: key.access_key_id.clone(),
                secret: self.stored_secret(&key.secret_access_key).await?,
                account_id: id.clone(),
                principal_kind: ACCOUNT_ROOT.to_string(),
                principal_name: String::new(),
                session_name: None,
                status: ACTIVE.to_string(),
                session_token_sha256: None,
                session_policy: None,
                expires_at: None,
                created_at: now,
            })
            .await?;
        Ok(NewAccount {
            account_id: id,
            key,
        })
    }

    /// Deletes an account with its users, roles, policies and keys. Only the instance root may; the default
    /// account and accounts that still own table buckets cannot be deleted.
    pub async fn delete_account(
        &self,
        caller: &Principal,
        account_id: &str,
    ) -> Result<(), ServiceError> {
        require_instance_root(caller)?;
        tablebay_catalog::AccountId::parse(account_id).map_err(|_| {
            ServiceError::NotFound(format!("The account {account_id} does not exist"))
        })?;
        if account_id == self.config.default_account.as_str() {
            return Err(ServiceError::Invalid(
                "The default account cannot be deleted".to_string(),
            ));
        }
        self.meta
            .delete_account(account_id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => {
                    ServiceError::NotFound(format!("The account {account_id} does not exist"))
                }
                other => other.into(),
            })?;
        // The account's keys are gone from the store; drop every cached key rather than list them first.
        self.keys.invalidate_all();
        Ok(())
    }
}

pub(crate) fn require_instance_root(caller: &Principal) -> Result<(), ServiceError> {
    if caller.kind == PrincipalKind::InstanceRoot && caller.session.is_none() {
        Ok(())
    } else {
        Err(ServiceError::Denied(format!(
            "{} is not authorized to manage accounts: only the instance root is",
            caller.arn
        )))
    }
}
