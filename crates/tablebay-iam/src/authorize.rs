//! THE authorization decision, shared by every surface: (principal, action, resource, request context) →
//! allow or deny, as AWS IAM evaluates it (`tablebay_policy::evaluate`), over
//! - the principal's identity policies (a user's or a role's; roots have none and are the account's owner),
//! - the resource policies of the bucket and, for a table, of the table (stored through the control plane),
//! - the session policies of temporary credentials, which only narrow.
//!
//! The condition keys that describe the resource are filled here, from the [`Resource`] itself, so that no
//! surface can forget them: `s3tables:namespace` and `s3tables:tableName` (given with the resource, or looked up
//! from a table's ARN), `aws:ResourceTag/<key>` and `s3tables:TableBucketTag/<key>` (the stored tags). Each is
//! fetched only when one of the policies that apply reads it.
//!
//! The instance root acts as the root of the default account. An account root may always manage its own
//! resources' policies (no lockout).
//! Nothing is cached: a policy change applies to the next request. Every denial and every allowed mutation is
//! an audit event (`audit.rs`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use chrono::Utc;
use tablebay_auth::{Principal, PrincipalKind};
use tablebay_catalog::{BucketArn, ResourceArn, ServiceError, TableRef};
use tablebay_policy::{
    Action, Caller, Context, Decision, Policies, Policy, PolicyKind, Request, ResourceFacts,
    evaluate,
};

use crate::audit::{Decided, is_mutation, record};
use crate::credentials::{ROLE, USER};
use crate::sts::session_policies;
use crate::{Iam, Resource};

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

/// Everything one decision about (principal, resource) reads, gathered once for all the actions asked about.
struct Subject<'a> {
    principal: &'a Principal,
    resource: &'a Resource,
    /// The resource's ARN as policies match it.
    arn: String,
    identity: Vec<Policy>,
    resource_policies: Vec<Policy>,
    sessions: Vec<Policy>,
    context: Context,
}

impl Iam {
    /// Allows or denies `action` on `resource` for `principal`; a denial is `ServiceError::Denied` with a message
    /// naming principal, action and resource. Audited.
    pub async fn authorize(
        &self,
        principal: &Principal,
        action: Action,
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), ServiceError> {
        if owner_manages_policy(principal, resource, action) {
            // Decided without reading any policy, so that not even a stored policy that no longer parses can
            // lock the owner out of replacing it.
            self.audit_allow(principal, resource, action, cx);
            return Ok(());
        }
        let subject = self.subject(principal, resource, cx).await?;
        self.authorize_with(&subject, action, cx)
    }

    /// [`Iam::authorize`] for several actions on one resource (an Iceberg operation's list): all must be allowed.
    pub async fn authorize_all(
        &self,
        principal: &Principal,
        actions: &[Action],
        resource: &Resource,
        cx: &AccessContext,
    ) -> Result<(), ServiceError> {
        if actions
            .iter()
            .all(|a| owner_manages_policy(principal, resource, *a))
        {
            for action in actions {
                self.audit_allow(principal, resource, *action, cx);
            }
            return Ok(());
        }
        let subject = self.subject(principal, resource, cx).await?;
        for action in actions {
            self.authorize_with(&subject, *action, cx)?;
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
    ) -> Result<(), ServiceError> {
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
        Err(ServiceError::Denied(format!(
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
    ) -> Result<(), ServiceError> {
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
        Err(ServiceError::Denied(format!(
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
    ) -> Result<(), ServiceError> {
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
            return Err(ServiceError::Denied(format!(
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
    ) -> Result<bool, ServiceError> {
        if owner_manages_policy(principal, resource, action) {
            return Ok(true);
        }
        let subject = self
            .subject(principal, resource, &AccessContext::default())
            .await?;
        Ok(decide(&subject, action) == Decision::Allow)
    }

    /// Which of `actions` `principal` may perform on `resource`, decided as [`Iam::authorize`] would over one
    /// reading of the policies, without audit events: what a page shows (the console hides a control its viewer
    /// may not use; the action itself is authorized, and audited, when it is performed).
    pub async fn allowed_actions(
        &self,
        principal: &Principal,
        actions: &[Action],
        resource: &Resource,
    ) -> Result<Vec<bool>, ServiceError> {
        let subject = self
            .subject(principal, resource, &AccessContext::default())
            .await?;
        Ok(actions
            .iter()
            .map(|action| decide(&subject, *action) == Decision::Allow)
            .collect())
    }

    /// Reads the policies that bear on (principal, resource) and the resource facts they test.
    async fn subject<'a>(
        &self,
        principal: &'a Principal,
        resource: &'a Resource,
        cx: &AccessContext,
    ) -> Result<Subject<'a>, ServiceError> {
        let resource_policies = self.resource_policies(resource).await?;
        let identity = self.identity_policies_of(principal).await?;
        let sessions = match principal.session.as_ref().and_then(|s| s.policy.as_deref()) {
            Some(stored) => session_policies(stored)?,
            None => Vec::new(),
        };
        let needs = identity
            .iter()
            .chain(&resource_policies)
            .chain(&sessions)
            .map(Policy::resource_facts)
            .fold(ResourceFacts::default(), |a, b| a | b);
        let mut context = Context::new(Utc::now());
        context.source_ip = cx.source_ip;
        // Both listeners speak plain HTTP; TLS, if any, ends at a proxy in front.
        context.secure_transport = false;
        if needs.names {
            (context.namespace, context.table_name) = self.resource_names(resource).await?;
        }
        if needs.tags {
            (context.resource_tags, context.bucket_tags) = self.resource_tags(resource).await?;
        }
        Ok(Subject {
            principal,
            resource,
            arn: resource.arn(&self.config.region, self.config.flavor),
            identity,
            resource_policies,
            sessions,
            context,
        })
    }

    fn authorize_with(
        &self,
        subject: &Subject<'_>,
        action: Action,
        cx: &AccessContext,
    ) -> Result<(), ServiceError> {
        let principal = subject.principal;
        let decision = decide(subject, action);
        let arn = &subject.arn;
        let action_name = action.qualified_name();
        match decision {
            Decision::Allow => {
                self.audit_allow(principal, subject.resource, action, cx);
                Ok(())
            }
            Decision::ExplicitDeny { sid } => {
                record(
                    principal,
                    &action_name,
                    arn,
                    &cx.request_id,
                    Decided::Deny {
                        reason: "explicit deny",
                        sid: sid.as_deref(),
                    },
                );
                Err(ServiceError::Denied(format!(
                    "User: {} is not authorized to perform: {action_name} on resource: {arn} with an explicit deny",
                    principal.arn
                )))
            }
            Decision::ImplicitDeny => {
                record(
                    principal,
                    &action_name,
                    arn,
                    &cx.request_id,
                    Decided::Deny {
                        reason: "no policy allows it",
                        sid: None,
                    },
                );
                Err(ServiceError::Denied(format!(
                    "User: {} is not authorized to perform: {action_name} on resource: {arn}",
                    principal.arn
                )))
            }
        }
    }

    /// The audit event of an allowed mutation (reads are not audited when allowed).
    fn audit_allow(
        &self,
        principal: &Principal,
        resource: &Resource,
        action: Action,
        cx: &AccessContext,
    ) {
        if is_mutation(action.name()) {
            record(
                principal,
                &action.qualified_name(),
                &resource.arn(&self.config.region, self.config.flavor),
                &cx.request_id,
                Decided::Allow,
            );
        }
    }

    /// `s3tables:namespace` and `s3tables:tableName` of the resource: the names it was given, or for a table
    /// named by ARN the ones it has now. A table that no longer exists (a dropped table's storage) has none.
    async fn resource_names(
        &self,
        resource: &Resource,
    ) -> Result<(Option<String>, Option<String>), ServiceError> {
        if let Some((namespace, table)) = resource.names() {
            return Ok((
                Some(namespace.as_str().to_string()),
                table.map(|t| t.as_str().to_string()),
            ));
        }
        let Resource::Table(arn) = resource.target() else {
            return Ok((None, None));
        };
        match self.catalog.table(&TableRef::Arn(arn.clone())).await {
            Ok(table) => Ok((
                Some(table.namespace.as_str().to_string()),
                Some(table.name.as_str().to_string()),
            )),
            Err(ServiceError::NotFound(_)) => Ok((None, None)),
            Err(e) => Err(e),
        }
    }

    /// `aws:ResourceTag/…` and `s3tables:TableBucketTag/…`: the tags of the resource (a table's own; for
    /// bucket-level actions the bucket's) and of its bucket. Missing resources have no tags.
    async fn resource_tags(
        &self,
        resource: &Resource,
    ) -> Result<(BTreeMap<String, String>, BTreeMap<String, String>), ServiceError> {
        let Some(bucket) = resource.bucket() else {
            return Ok((BTreeMap::new(), BTreeMap::new()));
        };
        let bucket_tags = self.tags_of(&ResourceArn::Bucket(bucket.clone())).await?;
        let resource_tags = match resource.target() {
            Resource::Table(arn) => self.tags_of(&ResourceArn::Table(arn.clone())).await?,
            _ => bucket_tags.clone(),
        };
        Ok((resource_tags, bucket_tags))
    }

    async fn tags_of(&self, arn: &ResourceArn) -> Result<BTreeMap<String, String>, ServiceError> {
        match self.catalog.tags(arn).await {
            Ok(tags) => Ok(tags.0),
            Err(ServiceError::NotFound(_)) => Ok(BTreeMap::new()),
            Err(e) => Err(e),
        }
    }

    /// The identity policies that apply to `principal`: its user's or role's; none for roots.
    pub(crate) async fn identity_policies_of(
        &self,
        principal: &Principal,
    ) -> Result<Vec<Policy>, ServiceError> {
        let kind = match principal.kind {
            PrincipalKind::User => USER,
            PrincipalKind::Role => ROLE,
            PrincipalKind::InstanceRoot | PrincipalKind::AccountRoot => return Ok(Vec::new()),
        };
        let documents = self
            .meta
            .principal_policies(&principal.account_id, kind, &principal.name)
            .await?;
        // Validated when stored. One that no longer passes (it names a condition key stored before keys were
        // checked) fails the request closed: skipping it could skip a Deny.
        documents
            .iter()
            .map(|(_, document)| stored_policy(document, PolicyKind::Identity))
            .collect()
    }

    /// The resource policies that govern `resource`: the bucket's, and for a table also the table's.
    async fn resource_policies(&self, resource: &Resource) -> Result<Vec<Policy>, ServiceError> {
        let mut documents: Vec<String> = Vec::new();
        match resource.target() {
            Resource::Account(_) | Resource::InNamespace { .. } => {}
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

    async fn bucket_policy_document(
        &self,
        bucket: &BucketArn,
    ) -> Result<Option<String>, ServiceError> {
        Ok(absent_is_none(self.catalog.bucket_policy(bucket).await)?
            .map(|p| p.as_str().to_string()))
    }
}

/// The decision for one action, from what [`Iam::subject`] gathered.
fn decide(subject: &Subject<'_>, action: Action) -> Decision {
    let principal = subject.principal;
    let resource = subject.resource;
    let is_root = principal.kind.is_root();
    if owner_manages_policy(principal, resource, action) {
        return Decision::Allow;
    }
    let resource_refs: Vec<&Policy> = subject.resource_policies.iter().collect();
    // The instance root acts as the root of the default account: it administers accounts, but owns no other
    // account's data.
    let request = Request {
        caller: Caller {
            account_id: &principal.account_id,
            arn: &principal.arn,
            is_account_root: is_root,
        },
        action,
        resource_arn: &subject.arn,
        resource_account: resource.account().as_str(),
        context: &subject.context,
    };
    evaluate(
        &request,
        &Policies {
            identity: &subject.identity,
            resource: &resource_refs,
            sessions: &subject.sessions,
        },
    )
}

/// As S3 for bucket policies: an account's root (with its own long-term key) can always read, replace or remove
/// the resource policies of its own resources, so that a policy that denies everyone cannot lock the owner out.
fn owner_manages_policy(principal: &Principal, resource: &Resource, action: Action) -> bool {
    principal.kind.is_root()
        && principal.session.is_none()
        && principal.account_id == resource.account().as_str()
        && manages_policy(action)
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
pub(crate) fn stored_policy(document: &str, kind: PolicyKind) -> Result<Policy, ServiceError> {
    Policy::parse(document, kind).map_err(|e| {
        tracing::warn!(error = %e, "a stored policy does not parse; denying");
        ServiceError::Denied(format!(
            "A policy that applies to this request is invalid: {e}"
        ))
    })
}

/// A missing bucket, table or policy contributes no resource policy (the operation then answers its own 404). A
/// stored one that no longer passes validation denies, as in [`stored_policy`].
fn absent_is_none(
    result: Result<tablebay_catalog::ResourcePolicy, ServiceError>,
) -> Result<Option<tablebay_catalog::ResourcePolicy>, ServiceError> {
    match result {
        Ok(policy) => Ok(Some(policy)),
        Err(ServiceError::NotFound(_)) => Ok(None),
        Err(ServiceError::MalformedPolicy(e)) => {
            tracing::warn!(error = %e, "a stored bucket policy does not parse; denying");
            Err(ServiceError::Denied(format!(
                "A policy that applies to this request is invalid: {e}"
            )))
        }
        Err(e) => Err(e),
    }
}
