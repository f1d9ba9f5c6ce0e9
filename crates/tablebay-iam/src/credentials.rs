//! Resolving an access key id to its secret and principal, and checking the session token that temporary
//! credentials must be presented with.
//!
//! The instance root's key comes from the configuration, every other key from the store (through a small
//! cache, see `service.rs`). A temporary key is only accepted with its exact session token and before it
//! expires; a long-term key with a session token is refused too, as AWS does.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use subtle::ConstantTimeEq;
use tablebay_auth::{AuthError, Principal, PrincipalKind, Session};
use tablebay_store::encryption::{open_secret, seal_secret};
use tablebay_store::meta::CredentialRecord;

use crate::names::token_digest;
use crate::{Iam, ServiceError};

/// The stored `principal_kind` of credentials that act as the instance root (its temporary sessions).
pub(crate) const INSTANCE_ROOT: &str = "instance-root";
/// Credentials of an account root.
pub(crate) const ACCOUNT_ROOT: &str = "root";
/// Credentials of a user.
pub(crate) const USER: &str = "user";
/// Credentials of a role session.
pub(crate) const ROLE: &str = "role";
/// Key status values.
pub(crate) const ACTIVE: &str = "Active";
pub(crate) const INACTIVE: &str = "Inactive";

/// A known access key: its secret (for SigV4) and the principal it acts as.
#[derive(Clone)]
pub struct KnownKey {
    secret: String,
    principal: Principal,
    token_sha256: Option<String>,
}

impl std::fmt::Debug for KnownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownKey")
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl KnownKey {
    /// The secret access key, for signature verification only.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The principal the key acts as.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Consumes the key into its principal.
    pub fn into_principal(self) -> Principal {
        self.principal
    }

    /// Checks the session token a request carried (`x-amz-security-token`) at `now`: temporary credentials need
    /// their own token and must not have expired; long-term keys must come without one.
    pub fn check_session_token(
        &self,
        presented: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), AuthError> {
        match (&self.token_sha256, presented) {
            (None, None) => Ok(()),
            (None, Some(_)) | (Some(_), None) => Err(AuthError::InvalidSessionToken),
            (Some(expected), Some(token)) => {
                let digest = token_digest(token);
                if !bool::from(digest.as_bytes().ct_eq(expected.as_bytes())) {
                    return Err(AuthError::InvalidSessionToken);
                }
                match &self.principal.session {
                    Some(session) if session.expires_at > now => Ok(()),
                    _ => Err(AuthError::ExpiredSessionToken),
                }
            }
        }
    }
}

impl Iam {
    /// `secret` as the meta store keeps it: sealed under the server-managed master key, so that a copy of the
    /// meta store does not hand out working credentials.
    pub(crate) async fn stored_secret(&self, secret: &str) -> Result<String, ServiceError> {
        Ok(seal_secret(self.catalog.key_provider(), secret).await?)
    }

    /// Seals the secrets stored before secrets were sealed (at startup); returns how many it sealed. A row that
    /// another instance seals or deletes meanwhile is left to it.
    pub async fn seal_stored_secrets(&self) -> Result<usize, ServiceError> {
        let mut sealed = 0;
        for (access_key_id, secret) in self.meta.unsealed_secrets().await? {
            let new = self.stored_secret(&secret).await?;
            if self
                .meta
                .replace_secret(&access_key_id, &secret, &new)
                .await?
            {
                sealed += 1;
            }
        }
        Ok(sealed)
    }

    /// The key `access_key_id`, if it exists and is active.
    pub async fn lookup(&self, access_key_id: &str) -> Result<Option<KnownKey>, ServiceError> {
        if bool::from(
            access_key_id
                .as_bytes()
                .ct_eq(self.config.root_access_key_id.as_bytes()),
        ) {
            let account = self.config.default_account.to_string();
            let principal = Principal {
                arn: self.root_arn(&account),
                account_id: account,
                access_key_id: access_key_id.to_string(),
                kind: PrincipalKind::InstanceRoot,
                name: String::new(),
                session: None,
            };
            return Ok(Some(KnownKey {
                secret: self.config.root_secret.clone(),
                principal,
                token_sha256: None,
            }));
        }
        let record = match self.keys.get(access_key_id).await {
            Some(record) => record,
            None => match self.meta.credential(access_key_id).await? {
                Some(mut record) => {
                    record.secret =
                        open_secret(self.catalog.key_provider(), &record.secret).await?;
                    let record = Arc::new(record);
                    self.keys
                        .insert(access_key_id.to_string(), Arc::clone(&record))
                        .await;
                    record
                }
                None => return Ok(None),
            },
        };
        if record.status != ACTIVE {
            return Ok(None);
        }
        Ok(self.known_key(&record))
    }

    /// Forgets cached keys after a write that removed or deactivated them.
    pub(crate) async fn forget_keys(&self, ids: impl IntoIterator<Item = String>) {
        for id in ids {
            self.keys.invalidate(&id).await;
        }
    }

    fn known_key(&self, record: &CredentialRecord) -> Option<KnownKey> {
        let account = record.account_id.clone();
        let (kind, arn) = match record.principal_kind.as_str() {
            INSTANCE_ROOT => (PrincipalKind::InstanceRoot, self.root_arn(&account)),
            ACCOUNT_ROOT => (PrincipalKind::AccountRoot, self.root_arn(&account)),
            USER => (
                PrincipalKind::User,
                self.user_arn(&account, &record.principal_name),
            ),
            ROLE => {
                let session = record.session_name.as_deref().unwrap_or("session");
                (
                    PrincipalKind::Role,
                    self.assumed_role_arn(&account, &record.principal_name, session),
                )
            }
            other => {
                tracing::warn!(kind = other, key = %record.access_key_id, "credential of an unknown principal kind");
                return None;
            }
        };
        let session = match (&record.session_token_sha256, record.expires_at) {
            (Some(_), Some(expires_at)) => Some(Session {
                policy: record.session_policy.clone(),
                expires_at,
            }),
            (None, _) => None,
            // A temporary credential without an expiry is corrupt: refuse it rather than let it live forever.
            (Some(_), None) => return None,
        };
        let principal = Principal {
            account_id: account,
            arn,
            access_key_id: record.access_key_id.clone(),
            kind,
            name: record.principal_name.clone(),
            session,
        };
        Some(KnownKey {
            secret: record.secret.clone(),
            principal,
            token_sha256: record.session_token_sha256.clone(),
        })
    }
}
