//! Who is making a request, once its signature verified.
//!
//! The IAM service (`tablebay-iam`) resolves an access key id to its secret and to one of these; its
//! authorizer decides what the principal may do.

/// The authenticated identity behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The 12-digit account the principal belongs to.
    pub account_id: String,
    /// The principal's ARN, e.g. `arn:aws:iam::111122223333:root` or `acs:ram::111122223333:user/alice`; for a
    /// role session the assumed-role ARN (`…:assumed-role/<role>/<session>`).
    pub arn: String,
    /// The access key id the request was signed with.
    pub access_key_id: String,
    /// What kind of identity this is.
    pub kind: PrincipalKind,
    /// The user or role name whose identity policies apply (empty for roots).
    pub name: String,
    /// Temporary credentials: the session details; `None` for long-term keys.
    pub session: Option<Session>,
}

/// What temporary (STS) credentials carry beyond the identity they act as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The session policy that narrows what the identity may do, as JSON text.
    pub policy: Option<String>,
    /// When the credentials stop working.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// The kinds of principals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    /// The operator's key for the whole Tablebay instance: administers accounts, and is the root of the default
    /// account (`--account-id`) for everything else.
    InstanceRoot,
    /// The root identity of one account: allowed everything within its account.
    AccountRoot,
    /// An IAM user of an account, allowed what its identity policies (and resource policies) allow.
    User,
    /// A session of an assumed role, allowed what the role's policies allow, narrowed by the session policy.
    Role,
}

impl PrincipalKind {
    /// Whether this is an instance or account root.
    pub fn is_root(self) -> bool {
        matches!(self, Self::InstanceRoot | Self::AccountRoot)
    }
}
