//! The admin API as a surface of the request pipeline (`crate::pipeline`): SigV4, a 64 KiB body, the typed
//! endpoint of `router.rs`, what each operation needs, then the operation's handler; errors as
//! `{"code", "message"}`.
//!
//! Identity operations act in one account (`?accountId=` for the instance root, else the caller's own) and are
//! allowed to that account's root and the instance root; account operations to the instance root; maintenance
//! runs need `PutTableMaintenanceConfiguration` (run now; `PutTableRecordExpirationConfiguration` for record
//! expiration) or `GetTableMaintenanceJobStatus` (run records) on a
//! table of the caller's own account.

use axum::extract::{Request, State};
use axum::response::Response;
use http::HeaderName;
use http::request::Parts;
use tablebay_auth::PrincipalKind;
use tablebay_catalog::{MaintenanceJobType, TableArn};
use tablebay_iam::{AdminScope, IdentityKind, Resource};
use tablebay_policy::Action;

use super::error::AdminError;
use super::router::{Endpoint, route};
use super::{iam, maintenance};
use crate::pipeline::{self, Context, Need, RequestBody, Schemes, Surface};
use crate::state::AppState;

/// The admin API surface.
pub(crate) struct Admin;

/// An endpoint with what it acts on resolved: the account an identity operation acts in, the table of a
/// maintenance operation.
pub(crate) struct Resolved {
    endpoint: Endpoint,
    account: String,
    table: Option<(TableArn, Option<MaintenanceJobType>)>,
}

impl Surface for Admin {
    const NAME: &'static str = "admin";
    const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");
    /// Admin bodies are small JSON documents; a policy is at most 20 KiB.
    const MAX_BODY_BYTES: usize = 64 * 1024;

    type Endpoint = Endpoint;
    type Resolved = Resolved;
    type Error = AdminError;

    fn schemes(&self, app: &AppState) -> Schemes {
        Schemes::signed(&app.tables_verifier)
    }

    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Endpoint, AdminError> {
        route(&parts.method, parts.uri.path(), parts.uri.query(), &body)
    }

    fn operation(endpoint: &Endpoint) -> &'static str {
        endpoint.operation()
    }

    async fn resolve(
        &self,
        cx: &Context<'_>,
        endpoint: Endpoint,
    ) -> Result<(Resolved, Vec<Need>), AdminError> {
        resolve(cx, endpoint)
    }

    async fn handle(&self, cx: &Context<'_>, resolved: Resolved) -> Result<Response, AdminError> {
        dispatch(cx, resolved).await
    }
}

/// Handles one request under `/admin`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    pipeline::serve(&app, &Admin, request).await
}

/// The account an identity operation acts in: the one it names, else the caller's own (the instance root's is
/// the default account).
fn acting_account(cx: &Context<'_>, requested: Option<&String>) -> String {
    match (requested, cx.principal.kind) {
        (Some(account), _) => account.clone(),
        (None, PrincipalKind::InstanceRoot) => cx.app.iam.config().default_account.to_string(),
        (None, _) => cx.principal.account_id.clone(),
    }
}

fn resolve(cx: &Context<'_>, endpoint: Endpoint) -> Result<(Resolved, Vec<Need>), AdminError> {
    use Endpoint as E;
    let iam = &cx.app.iam;
    let identity_arn = |account: &str, kind: IdentityKind, name: &str| match kind {
        IdentityKind::User => iam.user_arn(account, name),
        IdentityKind::Role => iam.role_arn(account, name),
    };
    let identities = |account: &str, resource: String| {
        vec![Need::Admin {
            scope: AdminScope::Identities {
                account: account.to_string(),
            },
            resource,
        }]
    };
    let mut account = String::new();
    let mut table = None;
    let needs = match &endpoint {
        E::CreateAccount { .. } => vec![Need::Admin {
            scope: AdminScope::Accounts,
            resource: "accounts".to_string(),
        }],
        E::DeleteAccount { account: target } => vec![Need::Admin {
            scope: AdminScope::Accounts,
            resource: target.clone(),
        }],
        E::CreateUser {
            account: requested,
            request,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::User, &request.user_name);
            identities(&account, arn)
        }
        E::CreateRole {
            account: requested,
            request,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::Role, &request.role_name);
            identities(&account, arn)
        }
        E::ListIdentities {
            account: requested, ..
        } => {
            account = acting_account(cx, requested.as_ref());
            identities(&account, format!("account/{account}"))
        }
        E::GetIdentity {
            account: requested,
            kind,
            name,
        }
        | E::DeleteIdentity {
            account: requested,
            kind,
            name,
        }
        | E::ListPolicies {
            account: requested,
            kind,
            name,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, *kind, name);
            identities(&account, arn)
        }
        E::CreateAccessKey {
            account: requested,
            user,
        }
        | E::ListAccessKeys {
            account: requested,
            user,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::User, user);
            identities(&account, arn)
        }
        E::UpdateAccessKey {
            account: requested,
            user,
            key,
            ..
        }
        | E::DeleteAccessKey {
            account: requested,
            user,
            key,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::User, user);
            identities(&account, format!("{arn}/{key}"))
        }
        E::PutPolicy {
            account: requested,
            kind,
            name,
            policy,
            ..
        }
        | E::GetPolicy {
            account: requested,
            kind,
            name,
            policy,
        }
        | E::DeletePolicy {
            account: requested,
            kind,
            name,
            policy,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, *kind, name);
            identities(&account, format!("{arn}/policy/{policy}"))
        }
        E::RunMaintenanceJob { request } => {
            let job_type = maintenance::job_type(&request.job_type)?;
            let arn = TableArn::parse(&request.table_arn)?;
            let resource = Resource::Table(arn.clone());
            table = Some((arn, Some(job_type)));
            // Running a job is configuring it: the action of the operation that configures the type.
            let action = match job_type {
                MaintenanceJobType::IcebergRecordExpiration => {
                    Action::PutTableRecordExpirationConfiguration
                }
                MaintenanceJobType::IcebergCompaction
                | MaintenanceJobType::IcebergSnapshotManagement
                | MaintenanceJobType::IcebergUnreferencedFileRemoval => {
                    Action::PutTableMaintenanceConfiguration
                }
            };
            vec![
                Need::OwnAccount(resource.clone()),
                Need::action(action, resource),
            ]
        }
        E::ListMaintenanceRuns { table_arn, .. } => match table_arn {
            Some(raw) => {
                let arn = TableArn::parse(raw)?;
                let resource = Resource::Table(arn.clone());
                table = Some((arn, None));
                vec![
                    Need::OwnAccount(resource.clone()),
                    Need::action(Action::GetTableMaintenanceJobStatus, resource),
                ]
            }
            // Every run is filtered by what the caller may read.
            None => Vec::new(),
        },
    };
    Ok((
        Resolved {
            endpoint,
            account,
            table,
        },
        needs,
    ))
}

async fn dispatch(cx: &Context<'_>, resolved: Resolved) -> Result<Response, AdminError> {
    use Endpoint as E;
    let Resolved {
        endpoint,
        account,
        table,
    } = resolved;
    let a = account.as_str();
    match endpoint {
        E::CreateAccount { request } => iam::create_account(cx, request).await,
        E::DeleteAccount { account } => iam::delete_account(cx, &account).await,
        E::CreateUser { request, .. } => iam::create_user(cx, a, request).await,
        E::CreateRole { request, .. } => iam::create_role(cx, a, request).await,
        E::ListIdentities { kind, .. } => iam::list_identities(cx, a, kind).await,
        E::GetIdentity { kind, name, .. } => iam::get_identity(cx, a, kind, &name).await,
        E::DeleteIdentity { kind, name, .. } => iam::delete_identity(cx, a, kind, &name).await,
        E::CreateAccessKey { user, .. } => iam::create_access_key(cx, a, &user).await,
        E::ListAccessKeys { user, .. } => iam::list_access_keys(cx, a, &user).await,
        E::UpdateAccessKey {
            user, key, request, ..
        } => iam::update_access_key(cx, a, &user, &key, request).await,
        E::DeleteAccessKey { user, key, .. } => iam::delete_access_key(cx, a, &user, &key).await,
        E::ListPolicies { kind, name, .. } => iam::list_policies(cx, a, kind, &name).await,
        E::PutPolicy {
            kind,
            name,
            policy,
            document,
            ..
        } => iam::put_policy(cx, a, kind, &name, &policy, &document).await,
        E::GetPolicy {
            kind, name, policy, ..
        } => iam::get_policy(cx, a, kind, &name, &policy).await,
        E::DeletePolicy {
            kind, name, policy, ..
        } => iam::delete_policy(cx, a, kind, &name, &policy).await,
        E::RunMaintenanceJob { .. } => match table {
            Some((arn, Some(job_type))) => maintenance::run(cx, &arn, job_type).await,
            _ => Err(AdminError::Internal(
                "a run-now request was resolved without its table".to_string(),
            )),
        },
        E::ListMaintenanceRuns { max_runs, .. } => {
            let limit = maintenance::max_runs(max_runs.as_deref())?;
            maintenance::list(cx, table.as_ref().map(|(arn, _)| arn), limit).await
        }
    }
}
