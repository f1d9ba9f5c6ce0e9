//! Accounts, users, access keys, roles and identity policies: the fixed admin interface of issue 7 §1. Each
//! handler parses, makes one IAM service call, audits the mutation and answers JSON.

use axum::extract::{Path, Request, State};
use axum::response::Response;
use tablebay_iam::{IdentityInfo, IdentityKind, PolicyName, PrincipalName};

use super::error::AdminError;
use super::request::{AdminCall, json, json_bytes, ok, run};
use super::wire::{
    AccessKeyResponse, CreateAccessKeyResponse, CreateAccountRequest, CreateAccountResponse,
    CreateRoleRequest, CreateUserRequest, ListAccessKeysResponse, ListPoliciesResponse,
    ListRolesResponse, ListUsersResponse, RoleResponse, UpdateAccessKeyRequest, UserResponse,
};
use crate::state::AppState;

fn user_response(info: IdentityInfo) -> UserResponse {
    UserResponse {
        account_id: info.account_id,
        user_name: info.name,
        user_arn: info.arn,
        created_at: info
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    }
}

fn role_response(info: IdentityInfo) -> RoleResponse {
    let trust = info.trust_policy.as_deref().unwrap_or("{}");
    RoleResponse {
        account_id: info.account_id,
        role_name: info.name,
        role_arn: info.arn,
        trust_policy: serde_json::from_str(trust)
            .unwrap_or(serde_json::Value::String(trust.to_string())),
        max_session_duration: info.max_session_secs.unwrap_or(3600),
        created_at: info
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    }
}

/// `POST /admin/accounts` (instance root only).
pub(super) async fn create_account(State(app): State<AppState>, request: Request) -> Response {
    run(app, request, "CreateAccount", |call| async move {
        let req: CreateAccountRequest = call.json()?;
        let account = call
            .app
            .iam
            .create_account(&call.principal, req.account_name.as_deref())
            .await?;
        call.audit("admin:CreateAccount", &account.account_id);
        json(&CreateAccountResponse {
            account_id: account.account_id,
            access_key_id: account.key.access_key_id,
            secret_access_key: account.key.secret_access_key,
        })
    })
    .await
}

/// `DELETE /admin/accounts/{accountId}` (instance root only).
pub(super) async fn delete_account(
    State(app): State<AppState>,
    Path(account): Path<String>,
    request: Request,
) -> Response {
    run(app, request, "DeleteAccount", |call| async move {
        call.app
            .iam
            .delete_account(&call.principal, &account)
            .await?;
        call.audit("admin:DeleteAccount", &account);
        ok()
    })
    .await
}

/// `POST /admin/users` `{"userName"}`.
pub(super) async fn create_user(State(app): State<AppState>, request: Request) -> Response {
    run(app, request, "CreateUser", |call| async move {
        let account = call.account()?;
        let req: CreateUserRequest = call.json()?;
        let name = PrincipalName::parse(&req.user_name)?;
        let info = call.app.iam.create_user(&account, &name).await?;
        call.audit("admin:CreateUser", &info.arn);
        json(&user_response(info))
    })
    .await
}

/// `GET /admin/users`.
pub(super) async fn list_users(State(app): State<AppState>, request: Request) -> Response {
    run(app, request, "ListUsers", |call| async move {
        let account = call.account()?;
        let users = call
            .app
            .iam
            .identities(&account, IdentityKind::User)
            .await?;
        json(&ListUsersResponse {
            users: users.into_iter().map(user_response).collect(),
        })
    })
    .await
}

/// `GET /admin/users/{user}`.
pub(super) async fn get_user(
    State(app): State<AppState>,
    Path(user): Path<String>,
    request: Request,
) -> Response {
    run(app, request, "GetUser", |call| async move {
        let account = call.account()?;
        json(&user_response(
            call.app
                .iam
                .identity(&account, IdentityKind::User, &user)
                .await?,
        ))
    })
    .await
}

/// `DELETE /admin/users/{user}`: with its keys and policies.
pub(super) async fn delete_user(
    State(app): State<AppState>,
    Path(user): Path<String>,
    request: Request,
) -> Response {
    delete_identity(app, request, IdentityKind::User, user).await
}

/// `POST /admin/roles` `{"roleName", "trustPolicy", "maxSessionDuration"?}`.
pub(super) async fn create_role(State(app): State<AppState>, request: Request) -> Response {
    run(app, request, "CreateRole", |call| async move {
        let account = call.account()?;
        let req: CreateRoleRequest = call.json()?;
        let name = PrincipalName::parse(&req.role_name)?;
        let trust = match req.trust_policy {
            serde_json::Value::String(text) => text,
            object @ serde_json::Value::Object(_) => object.to_string(),
            _ => {
                return Err(AdminError::BadRequest(
                    "trustPolicy must be a policy document".to_string(),
                ));
            }
        };
        let info = call
            .app
            .iam
            .create_role(&account, &name, &trust, req.max_session_duration)
            .await?;
        call.audit("admin:CreateRole", &info.arn);
        json(&role_response(info))
    })
    .await
}

/// `GET /admin/roles`.
pub(super) async fn list_roles(State(app): State<AppState>, request: Request) -> Response {
    run(app, request, "ListRoles", |call| async move {
        let account = call.account()?;
        let roles = call
            .app
            .iam
            .identities(&account, IdentityKind::Role)
            .await?;
        json(&ListRolesResponse {
            roles: roles.into_iter().map(role_response).collect(),
        })
    })
    .await
}

/// `GET /admin/roles/{role}`.
pub(super) async fn get_role(
    State(app): State<AppState>,
    Path(role): Path<String>,
    request: Request,
) -> Response {
    run(app, request, "GetRole", |call| async move {
        let account = call.account()?;
        json(&role_response(
            call.app
                .iam
                .identity(&account, IdentityKind::Role, &role)
                .await?,
        ))
    })
    .await
}

/// `DELETE /admin/roles/{role}`: with its policies and live sessions.
pub(super) async fn delete_role(
    State(app): State<AppState>,
    Path(role): Path<String>,
    request: Request,
) -> Response {
    delete_identity(app, request, IdentityKind::Role, role).await
}

async fn delete_identity(
    app: AppState,
    request: Request,
    kind: IdentityKind,
    name: String,
) -> Response {
    let operation = match kind {
        IdentityKind::User => "DeleteUser",
        IdentityKind::Role => "DeleteRole",
    };
    run(app, request, operation, |call| async move {
        let account = call.account()?;
        let info = call.app.iam.identity(&account, kind, &name).await?;
        call.app.iam.delete_identity(&account, kind, &name).await?;
        call.audit(&format!("admin:{operation}"), &info.arn);
        ok()
    })
    .await
}

/// `POST /admin/users/{user}/access-keys`.
pub(super) async fn create_access_key(
    State(app): State<AppState>,
    Path(user): Path<String>,
    request: Request,
) -> Response {
    run(app, request, "CreateAccessKey", |call| async move {
        let account = call.account()?;
        let key = call.app.iam.create_access_key(&account, &user).await?;
        call.audit(
            "admin:CreateAccessKey",
            &format!(
                "{}/{}",
                call.app.iam.user_arn(&account, &user),
                key.access_key_id
            ),
        );
        json(&CreateAccessKeyResponse {
            access_key_id: key.access_key_id,
            secret_access_key: key.secret_access_key,
            status: "Active",
        })
    })
    .await
}

/// `GET /admin/users/{user}/access-keys`.
pub(super) async fn list_access_keys(
    State(app): State<AppState>,
    Path(user): Path<String>,
    request: Request,
) -> Response {
    run(app, request, "ListAccessKeys", |call| async move {
        let account = call.account()?;
        let keys = call.app.iam.access_keys(&account, &user).await?;
        json(&ListAccessKeysResponse {
            access_keys: keys
                .into_iter()
                .map(|k| AccessKeyResponse {
                    access_key_id: k.access_key_id,
                    status: k.status,
                    created_at: k
                        .created_at
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                })
                .collect(),
        })
    })
    .await
}

/// `PUT /admin/users/{user}/access-keys/{key}` `{"status": "Active" | "Inactive"}`.
pub(super) async fn update_access_key(
    State(app): State<AppState>,
    Path((user, key)): Path<(String, String)>,
    request: Request,
) -> Response {
    run(app, request, "UpdateAccessKey", |call| async move {
        let account = call.account()?;
        let req: UpdateAccessKeyRequest = call.json()?;
        call.app
            .iam
            .set_access_key_status(&account, &user, &key, &req.status)
            .await?;
        call.audit(
            "admin:UpdateAccessKey",
            &format!("{}/{key}", call.app.iam.user_arn(&account, &user)),
        );
        ok()
    })
    .await
}

/// `DELETE /admin/users/{user}/access-keys/{key}`.
pub(super) async fn delete_access_key(
    State(app): State<AppState>,
    Path((user, key)): Path<(String, String)>,
    request: Request,
) -> Response {
    run(app, request, "DeleteAccessKey", |call| async move {
        let account = call.account()?;
        call.app
            .iam
            .delete_access_key(&account, &user, &key)
            .await?;
        call.audit(
            "admin:DeleteAccessKey",
            &format!("{}/{key}", call.app.iam.user_arn(&account, &user)),
        );
        ok()
    })
    .await
}

/// `GET /admin/users/{user}/policies`.
pub(super) async fn list_user_policies(
    State(app): State<AppState>,
    Path(user): Path<String>,
    request: Request,
) -> Response {
    list_policies(app, request, IdentityKind::User, user).await
}

/// `GET /admin/roles/{role}/policies`.
pub(super) async fn list_role_policies(
    State(app): State<AppState>,
    Path(role): Path<String>,
    request: Request,
) -> Response {
    list_policies(app, request, IdentityKind::Role, role).await
}

/// `PUT /admin/users/{user}/policies/{policy}` (body: the policy document).
pub(super) async fn put_user_policy(
    State(app): State<AppState>,
    Path((user, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    put_policy(app, request, IdentityKind::User, user, policy).await
}

/// `PUT /admin/roles/{role}/policies/{policy}`.
pub(super) async fn put_role_policy(
    State(app): State<AppState>,
    Path((role, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    put_policy(app, request, IdentityKind::Role, role, policy).await
}

/// `GET /admin/users/{user}/policies/{policy}`: the document as stored.
pub(super) async fn get_user_policy(
    State(app): State<AppState>,
    Path((user, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    get_policy(app, request, IdentityKind::User, user, policy).await
}

/// `GET /admin/roles/{role}/policies/{policy}`.
pub(super) async fn get_role_policy(
    State(app): State<AppState>,
    Path((role, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    get_policy(app, request, IdentityKind::Role, role, policy).await
}

/// `DELETE /admin/users/{user}/policies/{policy}`.
pub(super) async fn delete_user_policy(
    State(app): State<AppState>,
    Path((user, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    delete_policy(app, request, IdentityKind::User, user, policy).await
}

/// `DELETE /admin/roles/{role}/policies/{policy}`.
pub(super) async fn delete_role_policy(
    State(app): State<AppState>,
    Path((role, policy)): Path<(String, String)>,
    request: Request,
) -> Response {
    delete_policy(app, request, IdentityKind::Role, role, policy).await
}

fn identity_arn(call: &AdminCall, account: &str, kind: IdentityKind, name: &str) -> String {
    match kind {
        IdentityKind::User => call.app.iam.user_arn(account, name),
        IdentityKind::Role => call.app.iam.role_arn(account, name),
    }
}

async fn list_policies(
    app: AppState,
    request: Request,
    kind: IdentityKind,
    name: String,
) -> Response {
    run(app, request, "ListPolicies", |call| async move {
        let account = call.account()?;
        let policies = call
            .app
            .iam
            .identity_policies(&account, kind, &name)
            .await?;
        json(&ListPoliciesResponse {
            policy_names: policies.into_iter().map(|(n, _)| n).collect(),
        })
    })
    .await
}

async fn put_policy(
    app: AppState,
    request: Request,
    kind: IdentityKind,
    name: String,
    policy: String,
) -> Response {
    run(app, request, "PutPolicy", |call| async move {
        let account = call.account()?;
        let policy_name = PolicyName::parse(&policy)?;
        let document = call.text()?;
        call.app
            .iam
            .put_identity_policy(&account, kind, &name, &policy_name, document)
            .await?;
        call.audit(
            "admin:PutPolicy",
            &format!(
                "{}/policy/{policy}",
                identity_arn(&call, &account, kind, &name)
            ),
        );
        ok()
    })
    .await
}

async fn get_policy(
    app: AppState,
    request: Request,
    kind: IdentityKind,
    name: String,
    policy: String,
) -> Response {
    run(app, request, "GetPolicy", |call| async move {
        let account = call.account()?;
        let document = call
            .app
            .iam
            .identity_policy(&account, kind, &name, &policy)
            .await?;
        Ok(json_bytes(document.into_bytes()))
    })
    .await
}

async fn delete_policy(
    app: AppState,
    request: Request,
    kind: IdentityKind,
    name: String,
    policy: String,
) -> Response {
    run(app, request, "DeletePolicy", |call| async move {
        let account = call.account()?;
        call.app
            .iam
            .delete_identity_policy(&account, kind, &name, &policy)
            .await?;
        call.audit(
            "admin:DeletePolicy",
            &format!(
                "{}/policy/{policy}",
                identity_arn(&call, &account, kind, &name)
            ),
        );
        ok()
    })
    .await
}
