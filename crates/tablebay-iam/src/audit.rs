//! The audit trail: every mutation and every denial as one structured event under the [`AUDIT_TARGET`]
//! tracing target (time, principal, action, resource, decision, request id). `tablebay serve --audit-log PATH`
//! copies exactly these events into a file of their own.

use tablebay_auth::Principal;

/// The tracing target of audit events.
pub const AUDIT_TARGET: &str = "tablebay::audit";

/// What was decided about a request.
pub(crate) enum Decided<'a> {
    /// Allowed (recorded only for changes).
    Allow,
    /// Denied, and why (the statement id of an explicit deny, if it has one).
    Deny {
        reason: &'a str,
        sid: Option<&'a str>,
    },
}

/// Writes one audit event: the only place in Tablebay that does. Every authorization decision of every surface
/// (`authorize.rs`) and of STS (`sts.rs`) comes here.
pub(crate) fn record(
    principal: &Principal,
    action: &str,
    resource: &str,
    request_id: &str,
    decided: Decided<'_>,
) {
    match decided {
        Decided::Allow => tracing::info!(
            target: AUDIT_TARGET,
            principal = %principal.arn,
            access_key_id = %principal.access_key_id,
            action,
            resource,
            decision = "allow",
            request_id,
            "audit"
        ),
        Decided::Deny { reason, sid } => tracing::info!(
            target: AUDIT_TARGET,
            principal = %principal.arn,
            access_key_id = %principal.access_key_id,
            action,
            resource,
            decision = "deny",
            reason,
            sid = sid.unwrap_or("-"),
            request_id,
            "audit"
        ),
    }
}

/// Records a change that was allowed.
pub(crate) fn audit_mutation(principal: &Principal, action: &str, resource: &str, request_id: &str) {
    record(principal, action, resource, request_id, Decided::Allow);
}

/// Records a denial.
pub(crate) fn audit_denial(
    principal: &Principal,
    action: &str,
    resource: &str,
    request_id: &str,
    reason: &str,
) {
    record(
        principal,
        action,
        resource,
        request_id,
        Decided::Deny { reason, sid: None },
    );
}

/// Whether an action changes something (and so is audited when allowed, not only when denied).
pub(crate) fn is_mutation(action: &str) -> bool {
    [
        "Create",
        "Delete",
        "Put",
        "Update",
        "Rename",
        "AssumeRole",
        "GetSessionToken",
    ]
    .iter()
    .any(|verb| action.starts_with(verb))
}
