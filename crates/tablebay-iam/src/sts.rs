//! Temporary credentials: STS's GetSessionToken and AssumeRole, and the table-scoped credentials the Iceberg
//! REST catalog vends (`X-Iceberg-Access-Delegation: vended-credentials`).
//!
//! Every session is a row of `iam_credentials` with a random key id and secret, the SHA-256 of its session
//! token, an expiry, and optionally session policies that narrow what the identity behind it may do: one
//! document, or a JSON list of documents that must all allow. Vended credentials are sessions of the caller's own
//! identity whose session policy allows on one table only the data actions the caller itself may perform there
//! (`GetTableData`, `PutTableData`), together with the caller's own session policies, so the data plane enforces
//! exactly the intersection.

use chrono::{DateTime, Duration, Utc};
use tablebay_auth::{Principal, PrincipalKind};
use tablebay_catalog::{ArnFlavor, TableArn};
use tablebay_policy::{
    Action, Caller, Context, Decision, Policies, Policy, PolicyKind, Request, evaluate_assume_role,
};
use tablebay_store::meta::CredentialRecord;

use crate::audit::{audit_denial, audit_mutation};
use crate::authorize::stored_policy;
use crate::credentials::{ACCOUNT_ROOT, ACTIVE, INSTANCE_ROOT, ROLE, USER};
use crate::names::{secret_key, session_token, temporary_key_id, token_digest};
use crate::principals::{DEFAULT_ROLE_SESSION_SECS, validate_policy};
use crate::service::parse_role_arn;
use crate::{AccessContext, Iam, IamError, Resource, SessionName};

/// Shortest session STS issues (15 minutes).
pub const MIN_SESSION_SECS: i64 = 900;
/// Longest session STS issues (12 hours).
pub const MAX_SESSION_SECS: i64 = 43_200;
/// A role session assumed with role-session credentials (role chaining) lasts at most an hour, as in AWS.
const CHAINED_SESSION_SECS: i64 = 3600;
/// Session policies passed to AssumeRole are at most 2048 characters (STS's packed limit).
const MAX_SESSION_POLICY_BYTES: usize = 2048;
/// Vended credentials live an hour (or less, when the caller's own session ends sooner).
const VENDED_SESSION_SECS: i64 = 3600;

/// Freshly issued temporary credentials.
#[derive(Clone)]
pub struct IssuedSession {
    /// The temporary access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token to send as `x-amz-security-token`.
    pub session_token: String,
    /// When the credentials expire.
    pub expiration: DateTime<Utc>,
    /// For AssumeRole: the assumed-role ARN and its id (`<role>:<session>`).
    pub assumed_role: Option<(String, String)>,
}

impl std::fmt::Debug for IssuedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedSession")
            .field("access_key_id", &self.access_key_id)
            .field("expiration", &self.expiration)
            .finish_non_exhaustive()
    }
}

/// An AssumeRole call's parameters, as given.
#[derive(Clone, Debug, Default)]
pub struct AssumeRoleRequest {
    /// `RoleArn`.
    pub role_arn: String,
    /// `RoleSessionName`.
    pub session_name: String,
    /// `DurationSeconds`.
    pub duration_secs: Option<i64>,
    /// `Policy`: an inline session policy.
    pub policy: Option<String>,
}

/// What vended credentials may do with their table's data: what the caller itself may.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VendedAccess {
    /// `GetTableData` only.
    Read,
    /// `PutTableData` only (a writer whose policies do not let it read).
    Write,
    /// `GetTableData` and `PutTableData`.
    ReadWrite,
}

impl VendedAccess {
    fn of(read: bool, write: bool) -> Option<VendedAccess> {
        match (read, write) {
            (true, true) => Some(VendedAccess::ReadWrite),
            (true, false) => Some(VendedAccess::Read),
            (false, true) => Some(VendedAccess::Write),
            (false, false) => None,
        }
    }

    fn actions(self) -> &'static [&'static str] {
        match self {
            VendedAccess::Read => &["oss:GetTableData"],
            VendedAccess::Write => &["oss:PutTableData"],
            VendedAccess::ReadWrite => &["oss:GetTableData", "oss:PutTableData"],
        }
    }
}

struct NewSession<'a> {
    account: &'a str,
    kind: &'static str,
    name: &'a str,
    session_name: Option<&'a str>,
    policy: Option<String>,
    expiration: DateTime<Utc>,
}

impl Iam {
    /// GetSessionToken: temporary credentials acting as the caller itself, for `duration_secs` (900–43200,
    /// default 43200). Not callable with temporary credentials.
    pub async fn get_session_token(
        &self,
        caller: &Principal,
        duration_secs: Option<i64>,
        request_id: &str,
    ) -> Result<IssuedSession, IamError> {
        if caller.session.is_some() {
            audit_denial(
                caller,
                "sts:GetSessionToken",
                "*",
                request_id,
                "called with temporary credentials",
            );
            return Err(IamError::Denied(
                "Cannot call GetSessionToken with session credentials".to_string(),
            ));
        }
        let duration = check_duration(
            duration_secs.unwrap_or(MAX_SESSION_SECS),
            self.config.min_session_secs,
            MAX_SESSION_SECS,
        )?;
        let kind = stored_kind(caller.kind);
        let session = self
            .issue(NewSession {
                account: &caller.account_id,
                kind,
                name: &caller.name,
                session_name: None,
                policy: None,
                expiration: Utc::now() + Duration::seconds(duration),
            })
            .await?;
        audit_mutation(caller, "sts:GetSessionToken", &caller.arn, request_id);
        Ok(session)
    }

    /// AssumeRole: the role's trust policy must allow the caller and the caller's own policies must allow
    /// `sts:AssumeRole` on the role ([`evaluate_assume_role`]), then a session of the role is issued, narrowed by
    /// the optional session policy. An account root (no identity policies) may assume the roles whose trust
    /// policy names it or its account.
    pub async fn assume_role(
        &self,
        caller: &Principal,
        request: &AssumeRoleRequest,
        cx: &AccessContext,
    ) -> Result<IssuedSession, IamError> {
        let session_name = SessionName::parse(&request.session_name)?;
        let Some((account, role_name)) = parse_role_arn(&request.role_arn) else {
            return Err(IamError::Invalid(format!(
                "Invalid RoleArn '{}'",
                request.role_arn
            )));
        };
        let policy = match &request.policy {
            Some(document) if document.len() > MAX_SESSION_POLICY_BYTES => {
                return Err(IamError::Invalid(format!(
                    "The session policy is longer than {MAX_SESSION_POLICY_BYTES} characters"
                )));
            }
            Some(document) => {
                validate_policy(document, PolicyKind::Session)?;
                Some(document.clone())
            }
            None => None,
        };
        let role = self.meta.principal(&account, ROLE, &role_name).await?;
        let role_arn = self.role_arn(&account, &role_name);
        let not_authorized = || {
            IamError::Denied(format!(
                "User: {} is not authorized to perform: sts:AssumeRole on resource: {role_arn}",
                caller.arn
            ))
        };
        let Some(role) = role else {
            audit_denial(
                caller,
                "sts:AssumeRole",
                &role_arn,
                &cx.request_id,
                "no such role",
            );
            return Err(not_authorized());
        };
        let trust = stored_policy(
            role.trust_policy.as_deref().unwrap_or_default(),
            PolicyKind::Trust,
        )?;
        let identity = self.identity_policies_of(caller).await?;
        let caller_sessions = match caller.session.as_ref().and_then(|s| s.policy.as_deref()) {
            Some(stored) => session_policies(stored)?,
            None => Vec::new(),
        };
        let mut context = Context::new(Utc::now());
        context.source_ip = cx.source_ip;
        let decision = evaluate_assume_role(
            &Request {
                caller: Caller {
                    account_id: &caller.account_id,
                    arn: &caller.arn,
                    is_account_root: caller.kind.is_root(),
                },
                action: Action::AssumeRole,
                resource_arn: &role_arn,
                resource_account: &account,
                context: &context,
            },
            &trust,
            &Policies {
                identity: &identity,
                resource: &[],
                sessions: &caller_sessions,
            },
        );
        if decision != Decision::Allow {
            let reason = match decision {
                Decision::ExplicitDeny { .. } => "an explicit deny",
                Decision::Allow | Decision::ImplicitDeny => {
                    "the trust policy and the caller's own policies must both allow it"
                }
            };
            audit_denial(caller, "sts:AssumeRole", &role_arn, &cx.request_id, reason);
            return Err(not_authorized());
        }
        let role_max = if caller.kind == PrincipalKind::Role {
            CHAINED_SESSION_SECS
        } else {
            role.max_session_secs.unwrap_or(DEFAULT_ROLE_SESSION_SECS)
        };
        let duration = check_duration(
            request
                .duration_secs
                .unwrap_or(DEFAULT_ROLE_SESSION_SECS.min(role_max)),
            self.config.min_session_secs,
            role_max,
        )?;
        let mut session = self
            .issue(NewSession {
                account: &account,
                kind: ROLE,
                name: &role_name,
                session_name: Some(session_name.as_str()),
                policy,
                expiration: Utc::now() + Duration::seconds(duration),
            })
            .await?;
        let assumed_arn = self.assumed_role_arn(&account, &role_name, session_name.as_str());
        session.assumed_role = Some((
            assumed_arn,
            format!("{role_name}:{}", session_name.as_str()),
        ));
        audit_mutation(caller, "sts:AssumeRole", &role_arn, &cx.request_id);
        Ok(session)
    }

    /// Credentials for one table's data, acting as `caller` and narrowed to that table: they may read it if the
    /// caller may (`GetTableData`) and write it if the caller may (`PutTableData`), and they keep the caller's own
    /// session policies, so they never do more than the caller's session could. A caller that may do neither gets
    /// `Denied` (nothing is issued). They reach only the table's own storage, where every file it references
    /// lies. The credentials expire after an hour, or with the caller's own session if sooner.
    pub async fn vend_table_credentials(
        &self,
        caller: &Principal,
        table: &TableArn,
    ) -> Result<IssuedSession, IamError> {
        let resource = Resource::Table(table.clone());
        let read = self
            .is_allowed(caller, Action::GetTableData, &resource)
            .await?;
        let write = self
            .is_allowed(caller, Action::PutTableData, &resource)
            .await?;
        let Some(access) = VendedAccess::of(read, write) else {
            let arn = resource.arn(&self.config.region, self.config.flavor);
            audit_denial(
                caller,
                "oss:GetTableData",
                &arn,
                "-",
                "vended credentials: the caller may neither read nor write the table's data",
            );
            return Err(IamError::Denied(format!(
                "User: {} is not authorized to perform: oss:GetTableData or oss:PutTableData on resource: {arn}",
                caller.arn
            )));
        };
        let mut expiration = Utc::now() + Duration::seconds(VENDED_SESSION_SECS);
        if let Some(session) = &caller.session {
            expiration = expiration.min(session.expires_at);
        }
        let mut documents = match caller.session.as_ref().and_then(|s| s.policy.as_deref()) {
            Some(stored) => session_documents(stored)?,
            None => Vec::new(),
        };
        documents.push(table_session_policy(table, access));
        self.issue(NewSession {
            account: &caller.account_id,
            kind: stored_kind(caller.kind),
            name: &caller.name,
            session_name: caller
                .arn
                .rsplit('/')
                .next()
                .filter(|_| caller.kind == PrincipalKind::Role),
            policy: Some(store_session_documents(documents)?),
            expiration,
        })
        .await
    }

    async fn issue(&self, new: NewSession<'_>) -> Result<IssuedSession, IamError> {
        let now = Utc::now();
        // Sessions are short-lived rows; sweeping the expired ones here keeps the table small without a timer.
        if let Err(e) = self.meta.delete_expired_credentials(now).await {
            tracing::debug!(error = %e, "could not sweep expired sessions");
        }
        let token = session_token();
        let issued = IssuedSession {
            access_key_id: temporary_key_id(),
            secret_access_key: secret_key(),
            session_token: token.clone(),
            expiration: new.expiration,
            assumed_role: None,
        };
        self.meta
            .insert_credential(&CredentialRecord {
                access_key_id: issued.access_key_id.clone(),
                secret: self.stored_secret(&issued.secret_access_key).await?,
                account_id: new.account.to_string(),
                principal_kind: new.kind.to_string(),
                principal_name: new.name.to_string(),
                session_name: new.session_name.map(str::to_string),
                status: ACTIVE.to_string(),
                session_token_sha256: Some(token_digest(&token)),
                session_policy: new.policy,
                expires_at: Some(new.expiration),
                created_at: now,
            })
            .await?;
        Ok(issued)
    }
}

fn stored_kind(kind: PrincipalKind) -> &'static str {
    match kind {
        PrincipalKind::InstanceRoot => INSTANCE_ROOT,
        PrincipalKind::AccountRoot => ACCOUNT_ROOT,
        PrincipalKind::User => USER,
        PrincipalKind::Role => ROLE,
    }
}

fn check_duration(secs: i64, min: i64, max: i64) -> Result<i64, IamError> {
    if (min..=max).contains(&secs) {
        Ok(secs)
    } else {
        Err(IamError::Invalid(format!(
            "The requested DurationSeconds {secs} is outside the allowed range: {min} to {max} seconds"
        )))
    }
}

/// The session policies stored for a session: one document, or a JSON list of documents (vended credentials of
/// a session that had its own policy), parsed. Issued by the server, so one that does not parse denies.
pub(crate) fn session_policies(stored: &str) -> Result<Vec<Policy>, IamError> {
    session_documents(stored)?
        .iter()
        .map(|document| {
            Policy::parse(document, PolicyKind::Session).map_err(|e| {
                tracing::warn!(error = %e, "a stored session policy does not parse; denying");
                IamError::Denied(format!(
                    "A policy that applies to this request is invalid: {e}"
                ))
            })
        })
        .collect()
}

/// The documents of a stored session policy (see [`session_policies`]).
fn session_documents(stored: &str) -> Result<Vec<String>, IamError> {
    if stored.trim_start().starts_with('[') {
        serde_json::from_str(stored).map_err(|e| {
            tracing::warn!(error = %e, "a stored session policy list does not parse; denying");
            IamError::Denied("A policy that applies to this request is invalid".to_string())
        })
    } else {
        Ok(vec![stored.to_string()])
    }
}

/// How several session documents are stored: the one document as is, more as a JSON list.
fn store_session_documents(mut documents: Vec<String>) -> Result<String, IamError> {
    if documents.len() == 1
        && let Some(one) = documents.pop()
    {
        return Ok(one);
    }
    serde_json::to_string(&documents).map_err(|e| IamError::Internal(e.to_string()))
}

/// The session policy of vended credentials: the data actions on this one table, named in both ARN flavors so
/// it matches whatever spelling the data plane resolves the table to.
fn table_session_policy(table: &TableArn, access: VendedAccess) -> String {
    serde_json::json!({ "Version": "2012-10-17", "Statement": [
        { "Sid": "VendedTableData", "Effect": "Allow", "Action": access.actions(), "Resource": both_flavors(table) }
    ]})
    .to_string()
}

/// A table ARN in both spellings.
fn both_flavors(table: &TableArn) -> Vec<String> {
    [ArnFlavor::Oss, ArnFlavor::Aws]
        .into_iter()
        .map(|flavor| {
            let mut arn = table.clone();
            arn.bucket = arn.bucket.with_flavor(flavor);
            arn.to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vended_access_is_what_the_caller_may() {
        assert_eq!(VendedAccess::of(true, true), Some(VendedAccess::ReadWrite));
        assert_eq!(VendedAccess::of(true, false), Some(VendedAccess::Read));
        assert_eq!(VendedAccess::of(false, true), Some(VendedAccess::Write));
        assert_eq!(VendedAccess::of(false, false), None);
        assert_eq!(VendedAccess::Write.actions(), ["oss:PutTableData"]);
    }

    #[test]
    fn several_session_documents_round_trip() {
        let one = r#"{"Statement":{"Effect":"Allow","Action":"oss:GetTableData","Resource":"*"}}"#;
        let two = r#"{"Statement":{"Effect":"Allow","Action":"oss:PutTableData","Resource":"*"}}"#;
        // One document is stored as is (what AssumeRole has always stored).
        let stored = store_session_documents(vec![one.to_string()]).unwrap();
        assert_eq!(stored, one);
        assert_eq!(session_policies(&stored).unwrap().len(), 1);
        // More are a list, and a list inside a list flattens when vended again.
        let stored = store_session_documents(vec![one.to_string(), two.to_string()]).unwrap();
        let mut documents = session_documents(&stored).unwrap();
        assert_eq!(documents, [one, two]);
        documents.push(one.to_string());
        let again = store_session_documents(documents).unwrap();
        assert_eq!(session_policies(&again).unwrap().len(), 3);
        // What does not parse denies.
        for bad in ["[1]", "[\"nope\"]", "{", "[\"{\\\"Statement\\\":[]}\"]"] {
            assert!(
                matches!(session_policies(bad), Err(IamError::Denied(_))),
                "{bad}"
            );
        }
    }
}
