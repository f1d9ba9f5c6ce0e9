//! THE authorization decision, shared by every surface: (principal, action, resource, request context) →
//! allow or deny, as AWS IAM evaluates it (`tablebay_policy::evaluate`), over
//! - the principal's identity policies (a user's or a role's; roots have none and are the account's owner),
//! - the resource policies of the bucket and, for a table, of the table (stored through the control plane),
//! - the session policy of temporary credentials, which only narrows.
//!
//! The instance root acts as the root of the default account. An account root may always manage its own
//! resources' policies (no lockout).
//! Nothing is cached: a policy change applies to the next request. Every denial and every allowed mutation is
//! an audit event (`audit.rs`).

use std::net::IpAddr;

use chrono::Utc;
use tablebay_auth::{Principal, PrincipalKind};
use tablebay_catalog::{AccountId, ArnFlavor, BucketArn, CatalogError, TableArn};
use tablebay_policy::{
    Action, Caller, Context, Decision, Policies, Policy, PolicyKind, Request, evaluate,
};

use crate::audit::{AUDIT_TARGET, is_mutation};
use crate::credentials::{ROLE, USER};
use crate::{Iam, IamError};

/// What an action is performed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Account-level actions (CreateTableBucket, ListTableBuckets): `…:<account>:bucket/*`.
    Account(AccountId),
    /// A table bucket.
    Bucket(BucketArn),
    /// A table.
    Table(TableArn),
    /// A table of a bucket that is not resolved (yet): `<bucket ARN>/table/*`.
    AnyTable(BucketArn),
}

impl Resource {
    /// The resource's ARN as policies match it.
    pub fn arn(&self, region: &str, flavor: ArnFlavor) -> String {
        match self {
            Self::Account(account) => match flavor {
                ArnFlavor::Oss => format!("acs:osstables:{region}:{account}:bucket/*"),
                ArnFlavor::Aws => format!("arn:aws:s3tables:{region}:{account}:bucket/*"),
            },
            Self::Bucket(bucket) => bucket.clone().with_flavor(flavor).to_string(),
            Self::Table(table) => {
                let mut table = table.clone();
                table.bucket = table.bucket.with_flavor(flavor);
                table.to_string()
            }
            Self::AnyTable(bucket) => format!("{}/table/*", bucket.clone().with_flavor(flavor)),
        }
    }

    /// The account that owns the resource.
    pub fn account(&self) -> &AccountId {
        match self {
            Self::Account(account) => account,
            Self::Bucket(bucket) | Self::AnyTable(bucket) => &bucket.account,
            Self::Table(table) => &table.bucket.account,
        }
    }
}

/// What an administration operation acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdminScope {
    /// The accounts of the instance.
    Accounts,
    /// The users, roles, keys and identity policies of one account.
    Identities {
        /// The account's id.
        account: String,
    },
}

/// Facts about the request that conditions may test, and the id that ties audit events to request logs.
#[derive(Clone, Debug, Default)]
pub struct AccessContext {
    /// The client's address (`aws:SourceIp`), when the listener knows it.
    pub source_ip: Option<IpAddr>,
    /// The request id of the surface's log line.
    pub request_id: String,
}

impl Iam {
    /// Allows or denies `action` on `resource` for `principal`; a denial is `IamError::Denied` with a message
    /// naming principal, action and resource. Audited.
    pub async fn authorize(
        &self,
        principal: &Principal,
        action: Action,
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        let resource_policies = self.resource_policies(resource).await?;
        self.authorize_with(principal, action, resource, &resource_policies, cx)
            .await
    }

    /// [`Iam::authorize`] for several actions on one resource (an Iceberg operation's list): all must be allowed.
    pub async fn authorize_all(
        &self,
        principal: &Principal,
        actions: &[Action],
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        let resource_policies = self.resource_policies(resource).await?;
        for action in actions {
            self.authorize_with(principal, *action, resource, &resource_policies, cx)
                .await?;
        }
        Ok(())
    }

    /// Allows an operation that has no IAM action of its own (tagging, storage class and metrics settings) only
    /// for the root of the resource's own account, with long-term credentials. A denial is audited.
    pub fn authorize_owner(
        &self,
        principal: &Principal,
        operation: &str,
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        // The instance root is the root of the default account here.
        if principal.kind.is_root()
            && principal.session.is_none()
            && principal.account_id == resource.account().as_str()
        {
            return Ok(());
        }
        let arn = resource.arn(&self.config.region, self.config.flavor);
        crate::audit::audit_denial(
            principal,
            operation,
            &arn,
            &cx.request_id,
            "only the owning account's root may",
        );
        Err(IamError::Denied(format!(
            "User: {} is not authorized to perform: {operation} on resource: {arn}",
            principal.arn
        )))
    }

    /// Allows an operation only on a resource of the caller's own account, whatever the policies say (the run-now
    /// and run-record operations of the admin API). A denial is audited.
    pub fn authorize_own_account(
        &self,
        principal: &Principal,
        operation: &str,
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        if principal.account_id == resource.account().as_str() {
            return Ok(());
        }
        let arn = resource.arn(&self.config.region, self.config.flavor);
        crate::audit::audit_denial(
            principal,
            operation,
            &arn,
            &cx.request_id,
            "only the resource's own account may",
        );
        Err(IamError::Denied(format!(
            "Account {} is not authorized to perform: {operation} on resource: {arn}",
            principal.account_id
        )))
    }

    /// Allows an administration operation (the admin API: accounts and identities) on `scope`: accounts only for
    /// the instance root; an account's users, roles, keys and policies for that account's root, or the instance
    /// root; never with temporary credentials. `resource` names what is administered in the audit event: a
    /// denial, or an allowed change, is audited.
    pub fn authorize_admin(
        &self,
        principal: &Principal,
        operation: &str,
        scope: &AdminScope,
        resource: &str,
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        let allowed = principal.session.is_none()
            && match scope {
                AdminScope::Accounts => principal.kind == PrincipalKind::InstanceRoot,
                AdminScope::Identities { account } => match principal.kind {
                    PrincipalKind::InstanceRoot => true,
                    PrincipalKind::AccountRoot => &principal.account_id == account,
                    PrincipalKind::User | PrincipalKind::Role => false,
                },
            };
        if !allowed {
            crate::audit::audit_denial(
                principal,
                operation,
                resource,
                &cx.request_id,
                "only an account's root administers its identities, and only the instance root accounts",
            );
            return Err(IamError::Denied(format!(
                "{} is not authorized to perform: {operation} on {resource}",
                principal.arn
            )));
        }
        if is_mutation(operation.trim_start_matches("admin:")) {
            crate::audit::audit_mutation(principal, operation, resource, &cx.request_id);
        }
        Ok(())
    }

    /// Whether `principal` may perform `action` on `resource`, without an audit event (a probe, e.g. whether
    /// vended credentials may write).
    pub async fn is_allowed(
        &self,
        principal: &Principal,
        action: Action,
        resource: &Resource,
    ) -> Result<bool, IamError> {
        let resource_policies = self.resource_policies(resource).await?;
        let decision = self
            .decide(
                principal,
                action,
                resource,
                &resource_policies,
                &AccessContext::default(),
            )
            .await?;
        Ok(decision == Decision::Allow)
    }

    async fn authorize_with(
        &self,
        principal: &Principal,
        action: Action,
        resource: &Resource,
        resource_policies: &[Policy],
        cx: &AccessContext,
    ) -> Result<(), IamError> {
        let decision = self
            .decide(principal, action, resource, resource_policies, cx)
            .await?;
        let arn = resource.arn(&self.config.region, self.config.flavor);
        let action_name = action.qualified_name();
        match decision {
            Decision::Allow => {
                if is_mutation(action.name()) {
                    tracing::info!(
                        target: AUDIT_TARGET,
                        principal = %principal.arn,
                        access_key_id = %principal.access_key_id,
                        action = %action_name,
                        resource = %arn,
                        decision = "allow",
                        request_id = %cx.request_id,
                        "audit"
                    );
                }
                Ok(())
            }
            Decision::ExplicitDeny { sid } => {
                tracing::info!(
                    target: AUDIT_TARGET,
                    principal = %principal.arn,
                    access_key_id = %principal.access_key_id,
                    action = %action_name,
                    resource = %arn,
                    decision = "deny",
                    reason = "explicit deny",
                    sid = sid.as_deref().unwrap_or("-"),
                    request_id = %cx.request_id,
                    "audit"
                );
                Err(IamError::Denied(format!(
                    "User: {} is not authorized to perform: {action_name} on resource: {arn} with an explicit deny",
                    principal.arn
                )))
            }
            Decision::ImplicitDeny => {
                tracing::info!(
                    target: AUDIT_TARGET,
                    principal = %principal.arn,
                    access_key_id = %principal.access_key_id,
                    action = %action_name,
                    resource = %arn,
                    decision = "deny",
                    reason = "no policy allows it",
                    request_id = %cx.request_id,
                    "audit"
                );
                Err(IamError::Denied(format!(
                    "User: {} is not authorized to perform: {action_name} on resource: {arn}",
                    principal.arn
                )))
            }
        }
    }

    async fn decide(
        &self,
        principal: &Principal,
        action: Action,
        resource: &Resource,
        resource_policies: &[Policy],
        cx: &AccessContext,
    ) -> Result<Decision, IamError> {
        let mut context = Context::new(Utc::now());
        context.source_ip = cx.source_ip;
        // Both listeners speak plain HTTP; TLS, if any, ends at a proxy in front.
        context.secure_transport = false;
        let arn = resource.arn(&self.config.region, self.config.flavor);
        let session = match principal.session.as_ref().and_then(|s| s.policy.as_deref()) {
            Some(document) => Some(stored_policy(document, PolicyKind::Session)?),
            None => None,
        };
        let is_root = principal.kind.is_root();
        if is_root
            && principal.session.is_none()
            && principal.account_id == resource.account().as_str()
            && manages_policy(action)
        {
            // As S3 for bucket policies: an account's root can always read, replace or remove the resource
            // policies of its own resources, so that a policy that denies everyone cannot lock the owner out.
            return Ok(Decision::Allow);
        }
        let identity = self.identity_policies_of(principal).await?;
        let resource_refs: Vec<&Policy> = resource_policies.iter().collect();
        // The instance root acts as the root of the default account: it administers accounts, but owns no other
        // account's data.
        let caller = Caller {
            account_id: &principal.account_id,
            arn: &principal.arn,
            is_account_root: is_root,
        };
        let request = Request {
            caller,
            action,
            resource_arn: &arn,
            resource_account: resource.account().as_str(),
            context: &context,
        };
        let policies = Policies {
            identity: &identity,
            resource: &resource_refs,
            session: session.as_ref(),
        };
        Ok(evaluate(&request, &policies))
    }

    /// The identity policies that apply to `principal`: its user's or role's; none for roots.
    pub(crate) async fn identity_policies_of(
        &self,
        principal: &Principal,
    ) -> Result<Vec<Policy>, IamError> {
        let kind = match principal.kind {
            PrincipalKind::User => USER,
            PrincipalKind::Role => ROLE,
            PrincipalKind::InstanceRoot | PrincipalKind::AccountRoot => return Ok(Vec::new()),
        };
        let documents = self
            .meta
            .principal_policies(&principal.account_id, kind, &principal.name)
            .await?;
        let mut policies = Vec::with_capacity(documents.len());
        for (name, document) in documents {
            match Policy::parse(&document, PolicyKind::Identity) {
                Ok(policy) => policies.push(policy),
                // Validated when stored; skipping an unreadable one can only withhold an allow.
                Err(e) => {
                    tracing::warn!(policy = %name, principal = %principal.arn, error = %e, "unreadable identity policy ignored")
                }
            }
        }
        Ok(policies)
    }

    /// The resource policies that govern `resource`: the bucket's, and for a table also the table's.
    async fn resource_policies(&self, resource: &Resource) -> Result<Vec<Policy>, IamError> {
        let mut documents: Vec<String> = Vec::new();
        match resource {
            Resource::Account(_) => {}
            Resource::Bucket(bucket) | Resource::AnyTable(bucket) => {
                documents.extend(self.bucket_policy_document(bucket).await?);
            }
            Resource::Table(table) => match self.catalog.table_policy_documents(table).await? {
                Some((bucket, table)) => documents.extend(bucket.into_iter().chain(table)),
                // Not a live table of the bucket (a dropped table's storage): the bucket's policy alone.
                None => documents.extend(self.bucket_policy_document(&table.bucket).await?),
            },
        }
        documents
            .iter()
            .map(|d| stored_policy(d, PolicyKind::Resource))
            .collect()
    }

    async fn bucket_policy_document(&self, bucket: &BucketArn) -> Result<Option<String>, IamError> {
        Ok(absent_is_none(self.catalog.bucket_policy(bucket).await)?
            .map(|p| p.as_str().to_string()))
    }
}

/// The actions that read or change resource policies.
fn manages_policy(action: Action) -> bool {
    matches!(
        action,
        Action::PutTableBucketPolicy
            | Action::GetTableBucketPolicy
            | Action::DeleteTableBucketPolicy
            | Action::PutTablePolicy
            | Action::GetTablePolicy
            | Action::DeleteTablePolicy
    )
}

/// A policy the server stored or issued itself. One that no longer parses (stored before validation existed)
/// fails the request closed rather than be ignored, since it may hold a deny.
fn stored_policy(document: &str, kind: PolicyKind) -> Result<Policy, IamError> {
    Policy::parse(document, kind).map_err(|e| {
        tracing::warn!(error = %e, "a stored policy does not parse; denying");
        IamError::Denied(format!(
            "A policy that applies to this request is invalid: {e}"
        ))
    })
}

/// A missing bucket, table or policy contributes no resource policy (the operation then answers its own 404).
fn absent_is_none(
    result: Result<tablebay_catalog::ResourcePolicy, CatalogError>,
) -> Result<Option<tablebay_catalog::ResourcePolicy>, IamError> {
    match result {
        Ok(policy) => Ok(Some(policy)),
        Err(CatalogError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
