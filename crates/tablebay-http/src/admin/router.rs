//! Routing of the admin API: a pure function from method, raw path, query and body to an [`Endpoint`], with
//! every input parsed once.
//!
//! ```text
//! POST   /admin/accounts                         CreateAccount      DELETE /admin/accounts/{id}      DeleteAccount
//! POST   /admin/users            CreateUser      GET /admin/users                ListUsers
//! GET    /admin/users/{user}     GetUser         DELETE /admin/users/{user}      DeleteUser
//! POST   /admin/users/{user}/access-keys         CreateAccessKey    GET …/access-keys               ListAccessKeys
//! PUT    /admin/users/{user}/access-keys/{key}   UpdateAccessKey    DELETE …/access-keys/{key}      DeleteAccessKey
//! POST   /admin/roles            CreateRole      GET /admin/roles                ListRoles
//! GET    /admin/roles/{role}     GetRole         DELETE /admin/roles/{role}      DeleteRole
//! GET    /admin/{users|roles}/{name}/policies                       ListPolicies
//! PUT|GET|DELETE /admin/{users|roles}/{name}/policies/{policy}      PutPolicy | GetPolicy | DeletePolicy
//! POST   /admin/maintenance/run  RunMaintenanceJob   GET /admin/maintenance/runs  ListMaintenanceRuns
//! ```
//!
//! Identity operations take `?accountId=` (the instance root acting in another account).

use http::Method;
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;
use tablebay_iam::IdentityKind;

use super::error::AdminError;
use super::wire::{
    CreateAccountRequest, CreateRoleRequest, CreateUserRequest, RunMaintenanceRequest,
    UpdateAccessKeyRequest,
};
use crate::form::FormPairs;
use crate::pipeline::RequestBody;

/// Every admin operation, with its inputs.
#[derive(Debug)]
pub(crate) enum Endpoint {
    CreateAccount {
        request: CreateAccountRequest,
    },
    DeleteAccount {
        account: String,
    },
    CreateUser {
        account: Option<String>,
        request: CreateUserRequest,
    },
    ListIdentities {
        account: Option<String>,
        kind: IdentityKind,
    },
    GetIdentity {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
    },
    DeleteIdentity {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
    },
    CreateAccessKey {
        account: Option<String>,
        user: String,
    },
    ListAccessKeys {
        account: Option<String>,
        user: String,
    },
    UpdateAccessKey {
        account: Option<String>,
        user: String,
        key: String,
        request: UpdateAccessKeyRequest,
    },
    DeleteAccessKey {
        account: Option<String>,
        user: String,
        key: String,
    },
    CreateRole {
        account: Option<String>,
        request: CreateRoleRequest,
    },
    ListPolicies {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
    },
    PutPolicy {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        policy: String,
        document: String,
    },
    GetPolicy {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        policy: String,
    },
    DeletePolicy {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        policy: String,
    },
    RunMaintenanceJob {
        request: RunMaintenanceRequest,
    },
    ListMaintenanceRuns {
        table_arn: Option<String>,
        max_runs: Option<String>,
    },
}

impl Endpoint {
    /// The operation name (logs, metrics, audit).
    pub(crate) fn operation(&self) -> &'static str {
        use IdentityKind::{Role, User};
        match self {
            Self::CreateAccount { .. } => "CreateAccount",
            Self::DeleteAccount { .. } => "DeleteAccount",
            Self::CreateUser { .. } => "CreateUser",
            Self::ListIdentities { kind: User, .. } => "ListUsers",
            Self::ListIdentities { kind: Role, .. } => "ListRoles",
            Self::GetIdentity { kind: User, .. } => "GetUser",
            Self::GetIdentity { kind: Role, .. } => "GetRole",
            Self::DeleteIdentity { kind: User, .. } => "DeleteUser",
            Self::DeleteIdentity { kind: Role, .. } => "DeleteRole",
            Self::CreateAccessKey { .. } => "CreateAccessKey",
            Self::ListAccessKeys { .. } => "ListAccessKeys",
            Self::UpdateAccessKey { .. } => "UpdateAccessKey",
            Self::DeleteAccessKey { .. } => "DeleteAccessKey",
            Self::CreateRole { .. } => "CreateRole",
            Self::ListPolicies { .. } => "ListPolicies",
            Self::PutPolicy { .. } => "PutPolicy",
            Self::GetPolicy { .. } => "GetPolicy",
            Self::DeletePolicy { .. } => "DeletePolicy",
            Self::RunMaintenanceJob { .. } => "RunMaintenanceJob",
            Self::ListMaintenanceRuns { .. } => "ListMaintenanceRuns",
        }
    }
}

/// A JSON body; a blank one reads as `{}`.
fn json<T: DeserializeOwned>(body: &RequestBody) -> Result<T, AdminError> {
    body.json(true)
        .map_err(|e| AdminError::BadRequest(format!("Invalid request body: {e}")))
}

/// Routes a request under `/admin`.
pub(crate) fn route(
    method: &Method,
    raw_path: &str,
    raw_query: Option<&str>,
    body: &RequestBody,
) -> Result<Endpoint, AdminError> {
    let not_found = || AdminError::NotFound(format!("No admin operation at {raw_path}"));
    let rest = raw_path.strip_prefix("/admin/").ok_or_else(not_found)?;
    let segments = rest
        .trim_end_matches('/')
        .split('/')
        .map(|raw| {
            percent_decode_str(raw)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| AdminError::BadRequest(format!("Invalid path segment '{raw}'")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let query = FormPairs::query(raw_query).map_err(|e| AdminError::BadRequest(e.to_string()))?;
    let account = query.first("accountId").map(str::to_string);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let kind_of = |collection: &str| match collection {
        "roles" => IdentityKind::Role,
        _ => IdentityKind::User,
    };
    use Endpoint as E;
    let endpoint = match (method.clone(), segments.as_slice()) {
        (Method::POST, ["accounts"]) => E::CreateAccount {
            request: json(body)?,
        },
        (Method::DELETE, ["accounts", id]) => E::DeleteAccount {
            account: (*id).to_string(),
        },
        (Method::POST, ["users"]) => E::CreateUser {
            account,
            request: json(body)?,
        },
        (Method::POST, ["roles"]) => E::CreateRole {
            account,
            request: json(body)?,
        },
        (Method::GET, [collection @ ("users" | "roles")]) => E::ListIdentities {
            account,
            kind: kind_of(collection),
        },
        (Method::GET, [collection @ ("users" | "roles"), name]) => E::GetIdentity {
            account,
            kind: kind_of(collection),
            name: (*name).to_string(),
        },
        (Method::DELETE, [collection @ ("users" | "roles"), name]) => E::DeleteIdentity {
            account,
            kind: kind_of(collection),
            name: (*name).to_string(),
        },
        (Method::POST, ["users", user, "access-keys"]) => E::CreateAccessKey {
            account,
            user: (*user).to_string(),
        },
        (Method::GET, ["users", user, "access-keys"]) => E::ListAccessKeys {
            account,
            user: (*user).to_string(),
        },
        (Method::PUT, ["users", user, "access-keys", key]) => E::UpdateAccessKey {
            account,
            user: (*user).to_string(),
            key: (*key).to_string(),
            request: json(body)?,
        },
        (Method::DELETE, ["users", user, "access-keys", key]) => E::DeleteAccessKey {
            account,
            user: (*user).to_string(),
            key: (*key).to_string(),
        },
        (Method::GET, [collection @ ("users" | "roles"), name, "policies"]) => E::ListPolicies {
            account,
            kind: kind_of(collection),
            name: (*name).to_string(),
        },
        (Method::PUT, [collection @ ("users" | "roles"), name, "policies", policy]) => {
            E::PutPolicy {
                account,
                kind: kind_of(collection),
                name: (*name).to_string(),
                policy: (*policy).to_string(),
                document: body
                    .text()
                    .map_err(|e| AdminError::BadRequest(format!("Invalid policy document: {e}")))?
                    .to_string(),
            }
        }
        (Method::GET, [collection @ ("users" | "roles"), name, "policies", policy]) => {
            E::GetPolicy {
                account,
                kind: kind_of(collection),
                name: (*name).to_string(),
                policy: (*policy).to_string(),
            }
        }
        (Method::DELETE, [collection @ ("users" | "roles"), name, "policies", policy]) => {
            E::DeletePolicy {
                account,
                kind: kind_of(collection),
                name: (*name).to_string(),
                policy: (*policy).to_string(),
            }
        }
        (Method::POST, ["maintenance", "run"]) => E::RunMaintenanceJob {
            request: json(body)?,
        },
        (Method::GET, ["maintenance", "runs"]) => {
            if let Some((key, _)) = query
                .iter()
                .find(|(key, _)| !matches!(*key, "tableArn" | "maxRuns"))
            {
                return Err(AdminError::BadRequest(format!(
                    "Invalid query: unknown parameter '{key}'"
                )));
            }
            E::ListMaintenanceRuns {
                table_arn: query.first("tableArn").map(str::to_string),
                max_runs: query.first("maxRuns").map(str::to_string),
            }
        }
        (
            _,
            ["accounts"]
            | ["accounts", _]
            | ["users" | "roles"]
            | ["users" | "roles", _]
            | ["users", _, "access-keys"]
            | ["users", _, "access-keys", _]
            | ["users" | "roles", _, "policies"]
            | ["users" | "roles", _, "policies", _]
            | ["maintenance", "run" | "runs"],
        ) => {
            return Err(AdminError::MethodNotAllowed(format!(
                "{method} is not allowed on {raw_path}"
            )));
        }
        _ => return Err(not_found()),
    };
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> RequestBody {
        RequestBody::new(bytes::Bytes::copy_from_slice(text.as_bytes()))
    }

    #[test]
    fn routes_and_refusals() {
        let cases = [
            (Method::POST, "/admin/accounts", "", "CreateAccount"),
            (
                Method::DELETE,
                "/admin/accounts/444455556666",
                "",
                "DeleteAccount",
            ),
            (
                Method::POST,
                "/admin/users",
                r#"{"userName":"ana"}"#,
                "CreateUser",
            ),
            (Method::GET, "/admin/users", "", "ListUsers"),
            (Method::GET, "/admin/roles", "", "ListRoles"),
            (Method::GET, "/admin/users/ana", "", "GetUser"),
            (Method::DELETE, "/admin/roles/r", "", "DeleteRole"),
            (
                Method::POST,
                "/admin/users/ana/access-keys",
                "",
                "CreateAccessKey",
            ),
            (
                Method::PUT,
                "/admin/users/ana/access-keys/AK",
                r#"{"status":"Inactive"}"#,
                "UpdateAccessKey",
            ),
            (Method::GET, "/admin/roles/r/policies", "", "ListPolicies"),
            (
                Method::PUT,
                "/admin/users/ana/policies/p",
                "{}",
                "PutPolicy",
            ),
            (
                Method::POST,
                "/admin/maintenance/run",
                r#"{"tableArn":"a","type":"icebergCompaction"}"#,
                "RunMaintenanceJob",
            ),
            (
                Method::GET,
                "/admin/maintenance/runs",
                "",
                "ListMaintenanceRuns",
            ),
        ];
        for (method, path, text, operation) in cases {
            let endpoint = route(&method, path, None, &body(text)).unwrap();
            assert_eq!(endpoint.operation(), operation, "{method} {path}");
        }
        let refused = [
            (Method::PATCH, "/admin/users", ""),
            (Method::GET, "/admin/nothing", ""),
            (Method::POST, "/admin/users", "{"),
            (
                Method::POST,
                "/admin/users",
                "{\"userName\":\"a\",\"x\":\"\u{0}\"}",
            ),
            (Method::PUT, "/admin/users/ana/access-keys/AK", "{}"),
        ];
        for (method, path, text) in refused {
            assert!(
                route(&method, path, None, &body(text)).is_err(),
                "{method} {path} {text}"
            );
        }
        assert!(
            route(
                &Method::GET,
                "/admin/maintenance/runs",
                Some("bogus=1"),
                &body("")
            )
            .is_err()
        );
        let not_utf8 = RequestBody::new(bytes::Bytes::from_static(
            b"{\"userName\":\"a\",\"x\":\"\xff\"}",
        ));
        assert!(route(&Method::POST, "/admin/users", None, &not_utf8).is_err());
    }
}
