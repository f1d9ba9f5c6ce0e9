//! The audit trail: every mutation and every denial as one structured event under the [`AUDIT_TARGET`]
//! tracing target (time, principal, action, resource, decision, request id). `tablebay serve --audit-log PATH`
//! copies exactly these events into a file of their own.

use tablebay_auth::Principal;

/// The tracing target of audit events.
pub const AUDIT_TARGET: &str = "tablebay::audit";

/// Records an allowed mutation made through an API that is not a table-service action (admin, STS).
pub fn audit_mutation(principal: &Principal, action: &str, resource: &str, request_id: &str) {
    tracing::info!(
        target: AUDIT_TARGET,
        principal = %principal.arn,
        access_key_id = %principal.access_key_id,
        action,
        resource,
        decision = "allow",
        request_id,
        "audit"
    );
}

/// Records a denial made outside the authorizer (admin and STS checks).
pub(crate) fn audit_denial(
    principal: &Principal,
    action: &str,
    resource: &str,
    request_id: &str,
    reason: &str,
) {
    tracing::info!(
        target: AUDIT_TARGET,
        principal = %principal.arn,
        access_key_id = %principal.access_key_id,
        action,
        resource,
        decision = "deny",
        reason,
        request_id,
        "audit"
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
