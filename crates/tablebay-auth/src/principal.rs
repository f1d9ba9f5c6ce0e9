//! Who is making a request, once its signature verified.
//!
//! The key store (in `tablebay-store`) resolves an access key id to its secret and to one of these;
//! policy evaluation (later, `policy/`) decides what the principal may do.

/// The authenticated identity behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The 12-digit account the principal belongs to.
    pub account_id: String,
    /// The principal's ARN, e.g. `arn:aws:iam::111122223333:root`.
    pub arn: String,
    /// The access key id the request was signed with.
    pub access_key_id: String,
    /// What kind of identity this is.
    pub kind: PrincipalKind,
}

/// The kinds of principals Tablebay knows so far (IAM users and roles come later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    /// The operator's key for the whole Tablebay instance: allowed everything, in every account.
    InstanceRoot,
    /// The root identity of one account: allowed everything within its account.
    AccountRoot,
}
