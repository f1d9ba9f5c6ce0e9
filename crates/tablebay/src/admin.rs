//! `tablebay admin …`: a thin client of the admin API (`/admin/…` on the tables listener), signing each request
//! with SigV4 (`s3tables`) like any other client. It prints the JSON answers; a 4xx/5xx prints the error body on
//! stderr and exits non-zero.

use std::path::Path;

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::client::{ClientArgs, encode};

/// Where the server is and which credentials sign.
#[derive(Args, Debug)]
pub struct AdminArgs {
    /// The server and the credentials (of the instance root or of an account root).
    #[command(flatten)]
    client: ClientArgs,
    /// The account to act in (instance root only; default: the caller's own).
    #[arg(long)]
    account_id: Option<String>,
    #[command(subcommand)]
    command: AdminCommand,
}

/// One admin operation.
#[derive(Subcommand, Debug)]
enum AdminCommand {
    /// Create an account (instance root only); prints its id and root key pair.
    CreateAccount {
        #[arg(long)]
        name: Option<String>,
    },
    /// Delete an account that owns no table buckets (instance root only).
    DeleteAccount { account: String },
    /// Create a user.
    CreateUser { user: String },
    /// List the users.
    ListUsers,
    /// Show a user.
    GetUser { user: String },
    /// Delete a user with its keys and policies.
    DeleteUser { user: String },
    /// Issue an access key for a user (at most two; rotate by creating, switching, then deleting the old one).
    CreateAccessKey { user: String },
    /// List a user's access keys.
    ListAccessKeys { user: String },
    /// Activate or deactivate a user's access key.
    UpdateAccessKey {
        user: String,
        key: String,
        #[arg(long)]
        status: String,
    },
    /// Delete a user's access key.
    DeleteAccessKey { user: String, key: String },
    /// Create a role; the trust policy is JSON text or `file://path`.
    CreateRole {
        role: String,
        #[arg(long)]
        trust_policy: String,
        #[arg(long)]
        max_session_duration: Option<i64>,
    },
    /// List the roles.
    ListRoles,
    /// Show a role.
    GetRole { role: String },
    /// Delete a role with its policies and sessions.
    DeleteRole { role: String },
    /// Set an identity policy of a user (`--document` is JSON text or `file://path`).
    PutUserPolicy {
        user: String,
        policy: String,
        #[arg(long)]
        document: String,
    },
    /// Show an identity policy of a user.
    GetUserPolicy { user: String, policy: String },
    /// List a user's identity policies.
    ListUserPolicies { user: String },
    /// Remove an identity policy of a user.
    DeleteUserPolicy { user: String, policy: String },
    /// Set an identity policy of a role.
    PutRolePolicy {
        role: String,
        policy: String,
        #[arg(long)]
        document: String,
    },
    /// Show an identity policy of a role.
    GetRolePolicy { role: String, policy: String },
    /// List a role's identity policies.
    ListRolePolicies { role: String },
    /// Remove an identity policy of a role.
    DeleteRolePolicy { role: String, policy: String },
}

/// A document given inline or as `file://path`.
fn document(raw: &str) -> anyhow::Result<String> {
    match raw.strip_prefix("file://") {
        Some(path) => {
            std::fs::read_to_string(Path::new(path)).with_context(|| format!("reading {path}"))
        }
        None => Ok(raw.to_string()),
    }
}

fn seg(s: &str) -> String {
    encode(s)
}

/// Runs one admin command and prints its answer.
pub fn run(args: AdminArgs) -> anyhow::Result<()> {
    use AdminCommand as C;
    let (method, path, body): (http::Method, String, String) = match &args.command {
        C::CreateAccount { name } => {
            let body = match name {
                Some(name) => serde_json::json!({ "accountName": name }).to_string(),
                None => "{}".to_string(),
            };
            (http::Method::POST, "/admin/accounts".into(), body)
        }
        C::DeleteAccount { account } => (
            http::Method::DELETE,
            format!("/admin/accounts/{}", seg(account)),
            String::new(),
        ),
        C::CreateUser { user } => (
            http::Method::POST,
            "/admin/users".into(),
            serde_json::json!({ "userName": user }).to_string(),
        ),
        C::ListUsers => (http::Method::GET, "/admin/users".into(), String::new()),
        C::GetUser { user } => (
            http::Method::GET,
            format!("/admin/users/{}", seg(user)),
            String::new(),
        ),
        C::DeleteUser { user } => (
            http::Method::DELETE,
            format!("/admin/users/{}", seg(user)),
            String::new(),
        ),
        C::CreateAccessKey { user } => (
            http::Method::POST,
            format!("/admin/users/{}/access-keys", seg(user)),
            String::new(),
        ),
        C::ListAccessKeys { user } => (
            http::Method::GET,
            format!("/admin/users/{}/access-keys", seg(user)),
            String::new(),
        ),
        C::UpdateAccessKey { user, key, status } => (
            http::Method::PUT,
            format!("/admin/users/{}/access-keys/{}", seg(user), seg(key)),
            serde_json::json!({ "status": status }).to_string(),
        ),
        C::DeleteAccessKey { user, key } => (
            http::Method::DELETE,
            format!("/admin/users/{}/access-keys/{}", seg(user), seg(key)),
            String::new(),
        ),
        C::CreateRole {
            role,
            trust_policy,
            max_session_duration,
        } => {
            let trust: serde_json::Value = serde_json::from_str(&document(trust_policy)?)
                .context("the trust policy is not JSON")?;
            let mut body = serde_json::json!({ "roleName": role, "trustPolicy": trust });
            if let (Some(max), Some(object)) = (max_session_duration, body.as_object_mut()) {
                object.insert("maxSessionDuration".into(), serde_json::json!(max));
            }
            (http::Method::POST, "/admin/roles".into(), body.to_string())
        }
        C::ListRoles => (http::Method::GET, "/admin/roles".into(), String::new()),
        C::GetRole { role } => (
            http::Method::GET,
            format!("/admin/roles/{}", seg(role)),
            String::new(),
        ),
        C::DeleteRole { role } => (
            http::Method::DELETE,
            format!("/admin/roles/{}", seg(role)),
            String::new(),
        ),
        C::PutUserPolicy {
            user,
            policy,
            document: doc,
        } => (
            http::Method::PUT,
            format!("/admin/users/{}/policies/{}", seg(user), seg(policy)),
            document(doc)?,
        ),
        C::GetUserPolicy { user, policy } => (
            http::Method::GET,
            format!("/admin/users/{}/policies/{}", seg(user), seg(policy)),
            String::new(),
        ),
        C::ListUserPolicies { user } => (
            http::Method::GET,
            format!("/admin/users/{}/policies", seg(user)),
            String::new(),
        ),
        C::DeleteUserPolicy { user, policy } => (
            http::Method::DELETE,
            format!("/admin/users/{}/policies/{}", seg(user), seg(policy)),
            String::new(),
        ),
        C::PutRolePolicy {
            role,
            policy,
            document: doc,
        } => (
            http::Method::PUT,
            format!("/admin/roles/{}/policies/{}", seg(role), seg(policy)),
            document(doc)?,
        ),
        C::GetRolePolicy { role, policy } => (
            http::Method::GET,
            format!("/admin/roles/{}/policies/{}", seg(role), seg(policy)),
            String::new(),
        ),
        C::ListRolePolicies { role } => (
            http::Method::GET,
            format!("/admin/roles/{}/policies", seg(role)),
            String::new(),
        ),
        C::DeleteRolePolicy { role, policy } => (
            http::Method::DELETE,
            format!("/admin/roles/{}/policies/{}", seg(role), seg(policy)),
            String::new(),
        ),
    };
    let query = args
        .account_id
        .as_ref()
        .map(|a| format!("?accountId={}", seg(a)))
        .unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(
        args.client
            .send(method, &format!("{path}{query}"), body.into_bytes()),
    )
}
