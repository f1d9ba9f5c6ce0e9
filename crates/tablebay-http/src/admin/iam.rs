//! Accounts, users, access keys, roles and identity policies: the fixed admin interface of issue 7 §1. Each
//! handler makes one IAM service call with what the request was parsed and authorized into, and answers JSON.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use tablebay_iam::{IdentityInfo, IdentityKind, PolicyName, PrincipalName};

use super::error::AdminError;
use super::wire::{
    AccessKeyResponse, CreateAccessKeyResponse, CreateAccountRequest, CreateAccountResponse,
    CreateRoleRequest, CreateUserRequest, ListAccessKeysResponse, ListPoliciesResponse,
    ListRolesResponse, ListUsersResponse, RoleResponse, UpdateAccessKeyRequest, UserResponse,
};
use crate::pipeline::Context;

/// 200 with a JSON body.
pub(super) fn json<T: Serialize>(value: &T) -> Result<Response, AdminError> {
    let body = serde_json::to_vec(value).map_err(|e| AdminError::Internal(e.to_string()))?;
    Ok(json_bytes(body))
}

/// 200 with JSON bytes as they are.
fn json_bytes(body: Vec<u8>) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 200 with `{}`.
fn ok() -> Result<Response, AdminError> {
    Ok(json_bytes(b"{}".to_vec()))
}

fn timestamp(at: &chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn user_response(info: IdentityInfo) -> UserResponse {
    UserResponse {
        account_id: info.account_id,
        user_name: info.name,
        user_arn: info.arn,
        created_at: timestamp(&info.created_at),
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
        created_at: timestamp(&info.created_at),
    }
}

/// `POST /admin/accounts` (instance root only).
pub(super) async fn create_account(
    cx: &Context<'_>,
    req: CreateAccountRequest,
) -> Result<Response, AdminError> {
    let account = cx
        .app
        .iam
        .create_account(&cx.principal, req.account_name.as_deref())
        .await?;
    json(&CreateAccountResponse {
        account_id: account.account_id,
        access_key_id: account.key.access_key_id,
        secret_access_key: account.key.secret_access_key,
    })
}

/// `DELETE /admin/accounts/{accountId}` (instance root only).
pub(super) async fn delete_account(
    cx: &Context<'_>,
    account: &str,
) -> Result<Response, AdminError> {
    cx.app.iam.delete_account(&cx.principal, account).await?;
    ok()
}

/// `POST /admin/users` `{"userName"}`.
pub(super) async fn create_user(
    cx: &Context<'_>,
    account: &str,
    req: CreateUserRequest,
) -> Result<Response, AdminError> {
    let name = PrincipalName::parse(&req.user_name)?;
    json(&user_response(
        cx.app.iam.create_user(account, &name).await?,
    ))
}

/// `POST /admin/roles` `{"roleName", "trustPolicy", "maxSessionDuration"?}`.
pub(super) async fn create_role(
    cx: &Context<'_>,
    account: &str,
    req: CreateRoleRequest,
) -> Result<Response, AdminError> {
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
    let info = cx
        .app
        .iam
        .create_role(account, &name, &trust, req.max_session_duration)
        .await?;
    json(&role_response(info))
}

/// `GET /admin/users` and `GET /admin/roles`.
pub(super) async fn list_identities(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
) -> Result<Response, AdminError> {
    let identities = cx.app.iam.identities(account, kind).await?;
    match kind {
        IdentityKind::User => json(&ListUsersResponse {
            users: identities.into_iter().map(user_response).collect(),
        }),
        IdentityKind::Role => json(&ListRolesResponse {
            roles: identities.into_iter().map(role_response).collect(),
        }),
    }
}

/// `GET /admin/users/{user}` and `GET /admin/roles/{role}`.
pub(super) async fn get_identity(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
) -> Result<Response, AdminError> {
    let info = cx.app.iam.identity(account, kind, name).await?;
    match kind {
        IdentityKind::User => json(&user_response(info)),
        IdentityKind::Role => json(&role_response(info)),
    }
}

/// `DELETE /admin/users/{user}` (with its keys and policies) and `DELETE /admin/roles/{role}` (with its
/// policies and live sessions).
pub(super) async fn delete_identity(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
) -> Result<Response, AdminError> {
    cx.app.iam.delete_identity(account, kind, name).await?;
    ok()
}

/// `POST /admin/users/{user}/access-keys`: the secret is in this answer only.
pub(super) async fn create_access_key(
    cx: &Context<'_>,
    account: &str,
    user: &str,
) -> Result<Response, AdminError> {
    let key = cx.app.iam.create_access_key(account, user).await?;
    json(&CreateAccessKeyResponse {
        access_key_id: key.access_key_id,
        secret_access_key: key.secret_access_key,
        status: "Active",
    })
}

/// `GET /admin/users/{user}/access-keys`.
pub(super) async fn list_access_keys(
    cx: &Context<'_>,
    account: &str,
    user: &str,
) -> Result<Response, AdminError> {
    let keys = cx.app.iam.access_keys(account, user).await?;
    json(&ListAccessKeysResponse {
        access_keys: keys
            .into_iter()
            .map(|k| AccessKeyResponse {
                access_key_id: k.access_key_id,
                status: k.status,
                created_at: timestamp(&k.created_at),
            })
            .collect(),
    })
}

/// `PUT /admin/users/{user}/access-keys/{key}` `{"status": "Active" | "Inactive"}`.
pub(super) async fn update_access_key(
    cx: &Context<'_>,
    account: &str,
    user: &str,
    key: &str,
    req: UpdateAccessKeyRequest,
) -> Result<Response, AdminError> {
    cx.app
        .iam
        .set_access_key_status(account, user, key, &req.status)
        .await?;
    ok()
}

/// `DELETE /admin/users/{user}/access-keys/{key}`.
pub(super) async fn delete_access_key(
    cx: &Context<'_>,
    account: &str,
    user: &str,
    key: &str,
) -> Result<Response, AdminError> {
    cx.app.iam.delete_access_key(account, user, key).await?;
    ok()
}

/// `GET /admin/{users|roles}/{name}/policies`.
pub(super) async fn list_policies(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
) -> Result<Response, AdminError> {
    let policies = cx.app.iam.identity_policies(account, kind, name).await?;
    json(&ListPoliciesResponse {
        policy_names: policies.into_iter().map(|(n, _)| n).collect(),
    })
}

/// `PUT /admin/{users|roles}/{name}/policies/{policy}` (body: the policy document).
pub(super) async fn put_policy(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
    policy: &str,
    document: &str,
) -> Result<Response, AdminError> {
    let policy_name = PolicyName::parse(policy)?;
    cx.app
        .iam
        .put_identity_policy(account, kind, name, &policy_name, document)
        .await?;
    ok()
}

/// `GET /admin/{users|roles}/{name}/policies/{policy}`: the document as stored.
pub(super) async fn get_policy(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
    policy: &str,
) -> Result<Response, AdminError> {
    let document = cx
        .app
        .iam
        .identity_policy(account, kind, name, policy)
        .await?;
    Ok(json_bytes(document.into_bytes()))
}

/// `DELETE /admin/{users|roles}/{name}/policies/{policy}`.
pub(super) async fn delete_policy(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
    policy: &str,
) -> Result<Response, AdminError> {
    cx.app
        .iam
        .delete_identity_policy(account, kind, name, policy)
        .await?;
    ok()
}
