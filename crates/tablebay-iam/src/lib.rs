//! Tablebay's identity and access management service.
//!
//! It owns accounts, their users and roles, identity policies, long-term access keys and temporary (STS)
//! session credentials, and it makes THE authorization decision every surface asks for
//! ([`Iam::authorize`]: principal, action, resource ARN, request context → allow or deny, with an audit event).
//! It validates and decides; `tablebay-store` persists; the policy language itself is `tablebay-policy`.
//! Wire formats (the admin JSON API, STS's XML) live with the HTTP surfaces.
#![warn(missing_docs)]

mod accounts;
mod audit;
mod authorize;
mod credentials;
mod error;
mod names;
mod principals;
mod resource;
mod service;
mod sts;

pub use accounts::NewAccount;
pub use audit::AUDIT_TARGET;
pub use authorize::{AccessContext, AdminScope};
pub use credentials::KnownKey;
pub use error::IamError;
pub use names::{PolicyName, PrincipalName, SessionName};
pub use principals::{AccessKey, IdentityInfo, IdentityKind, IssuedKey};
pub use resource::Resource;
pub use service::{Iam, IamConfig};
pub use sts::{AssumeRoleRequest, IssuedSession, MAX_SESSION_SECS, MIN_SESSION_SECS, VendedAccess};
