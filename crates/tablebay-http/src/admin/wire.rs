//! Request and response bodies of the admin API (camelCase JSON).

use serde::{Deserialize, Serialize};

/// `POST /admin/accounts`.
#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateAccountRequest {
    pub account_name: Option<String>,
}

/// A new account with its root key pair.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateAccountResponse {
    pub account_id: String,
    pub access_key_id: String,
    pub secret_access_key: String,
}

/// `POST /admin/users`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateUserRequest {
    pub user_name: String,
}

/// A user.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UserResponse {
    pub account_id: String,
    pub user_name: String,
    pub user_arn: String,
    pub created_at: String,
}

/// `GET /admin/users`.
#[derive(Serialize, Debug)]
pub(crate) struct ListUsersResponse {
    pub users: Vec<UserResponse>,
}

/// `POST /admin/roles`. The trust policy may be given as a JSON object or as a string holding one.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateRoleRequest {
    pub role_name: String,
    pub trust_policy: serde_json::Value,
    pub max_session_duration: Option<i64>,
}

/// A role.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RoleResponse {
    pub account_id: String,
    pub role_name: String,
    pub role_arn: String,
    pub trust_policy: serde_json::Value,
    pub max_session_duration: i64,
    pub created_at: String,
}

/// `GET /admin/roles`.
#[derive(Serialize, Debug)]
pub(crate) struct ListRolesResponse {
    pub roles: Vec<RoleResponse>,
}

/// A new access key (the only answer that shows the secret).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateAccessKeyResponse {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub status: &'static str,
}

/// An access key without its secret.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AccessKeyResponse {
    pub access_key_id: String,
    pub status: String,
    pub created_at: String,
}

/// `GET /admin/users/{user}/access-keys`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListAccessKeysResponse {
    pub access_keys: Vec<AccessKeyResponse>,
}

/// `PUT /admin/users/{user}/access-keys/{key}`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateAccessKeyRequest {
    pub status: String,
}

/// `GET …/policies`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListPoliciesResponse {
    pub policy_names: Vec<String>,
}

/// `POST /admin/maintenance/run`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RunMaintenanceRequest {
    pub table_arn: String,
    #[serde(rename = "type")]
    pub job_type: String,
}

/// One maintenance run record.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunResponse {
    pub run_id: String,
    pub job_id: String,
    pub table_arn: String,
    #[serde(rename = "type")]
    pub job_type: &'static str,
    pub trigger: String,
    pub worker: String,
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub files_in: u64,
    pub bytes_in: u64,
    pub files_out: u64,
    pub bytes_out: u64,
    pub details: std::collections::BTreeMap<String, u64>,
    pub started_at: String,
    pub duration_ms: u64,
}

/// `GET /admin/maintenance/runs`.
#[derive(Serialize, Debug)]
pub(crate) struct ListRunsResponse {
    pub runs: Vec<RunResponse>,
}
