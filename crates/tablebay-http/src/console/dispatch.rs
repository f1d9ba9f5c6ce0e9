//! The console as a surface of the request pipeline (`crate::pipeline`): the session-cookie scheme (with the
//! CSRF check on forms), a 64 KiB form, the typed endpoint of `router.rs`, what each page or form needs (the IAM
//! action of the operation it shows or performs, on the resource it names), then the page family's handler;
//! errors as HTML pages.
//!
//! Sign-in and the embedded static files need no session and are served before the pipeline (`handle`), with
//! the same request id, log line and metrics.

use axum::extract::{Request, State};
use axum::response::Response;
use http::request::Parts;
use http::{HeaderName, Method};
use tablebay_catalog::{
    BucketArn, BucketName, NamespaceName, ServiceError, Table, TableName, TableRef,
};
use tablebay_iam::{AdminScope, IdentityKind, Resource};
use tablebay_policy::Action;

use super::error::ConsoleError;
use super::layout::{self, Viewer};
use super::router::{Endpoint, TablePath, route};
use super::{assets, buckets, connect, identity, maintenance, session, tables};
use crate::pipeline::{
    self, Context, Need, RequestBody, Schemes, Surface, in_namespace, naming_table,
};
use crate::state::AppState;

/// The console surface.
pub(crate) struct Console;

/// An endpoint with what it names resolved once: the bucket's ARN, the table (or why there is none), the
/// account an identity page acts in.
pub(crate) struct Resolved {
    pub endpoint: Endpoint,
    pub bucket: Option<BucketArn>,
    pub table: Option<Result<Table, ConsoleError>>,
    pub account: String,
}

impl Surface for Console {
    const NAME: &'static str = super::NAME;
    const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");
    /// Console forms are small; a policy document is at most 20 KiB (form-encoded, up to three times that).
    const MAX_BODY_BYTES: usize = 64 * 1024;

    type Endpoint = Endpoint;
    type Resolved = Resolved;
    type Error = ConsoleError;

    fn schemes(&self, app: &AppState) -> Schemes {
        Schemes::console_session(&app.tables_verifier)
    }

    fn parse(&self, parts: &Parts, body: RequestBody) -> Result<Endpoint, ConsoleError> {
        route(&parts.method, parts.uri.path(), parts.uri.query(), &body)
    }

    fn operation(endpoint: &Endpoint) -> &'static str {
        endpoint.operation()
    }

    async fn resolve(
        &self,
        cx: &Context<'_>,
        endpoint: Endpoint,
    ) -> Result<(Resolved, Vec<Need>), ConsoleError> {
        resolve(cx, endpoint).await
    }

    async fn handle(&self, cx: &Context<'_>, resolved: Resolved) -> Result<Response, ConsoleError> {
        dispatch(cx, resolved).await
    }
}

/// Handles one request under `/console`.
pub(crate) async fn handle(State(app): State<AppState>, request: Request) -> Response {
    let path = request.uri().path();
    let method = request.method().clone();
    match (method, path) {
        (Method::GET | Method::HEAD, "/console/login") => {
            session::login_get(State(app), request).await
        }
        (Method::POST, "/console/login") => session::login_post(State(app), request).await,
        (Method::GET | Method::HEAD, p) if p.starts_with("/console/static/") => {
            assets::serve(&app, request).await
        }
        _ => pipeline::serve(&app, &Console, request).await,
    }
}

/// The ARN of the caller's own bucket `name`.
pub(super) fn bucket_arn(cx: &Context<'_>, name: &str) -> Result<BucketArn, ConsoleError> {
    let name = BucketName::parse(name)
        .map_err(|_| ConsoleError::NotFound(format!("There is no table bucket named '{name}'")))?;
    let config = cx.catalog().config();
    Ok(BucketArn {
        flavor: config.flavor,
        region: config.region.clone(),
        account: cx.account.clone(),
        name,
    })
}

/// The account an identity page acts in: the one asked for (the instance root only), else the caller's own.
fn acting_account(cx: &Context<'_>, requested: Option<&String>) -> String {
    match requested {
        Some(account) => account.clone(),
        None => cx.account.to_string(),
    }
}

async fn resolve(
    cx: &Context<'_>,
    endpoint: Endpoint,
) -> Result<(Resolved, Vec<Need>), ConsoleError> {
    use Action as A;
    use Endpoint as E;
    let mut bucket = None;
    let mut table = None;
    let mut account = cx.account.to_string();
    let mut on_bucket = |name: &str, action: Action| -> Result<Vec<Need>, ConsoleError> {
        let arn = bucket_arn(cx, name)?;
        bucket = Some(arn.clone());
        Ok(vec![Need::action(action, Resource::Bucket(arn))])
    };
    let identities = |account: &str, resource: String| {
        vec![Need::Admin {
            scope: AdminScope::Identities {
                account: account.to_string(),
            },
            resource,
        }]
    };
    let iam = &cx.app.iam;
    let identity_arn = |account: &str, kind: IdentityKind, name: &str| match kind {
        IdentityKind::User => iam.user_arn(account, name),
        IdentityKind::Role => iam.role_arn(account, name),
    };
    let needs = match &endpoint {
        E::Home | E::SignOut => Vec::new(),
        E::Buckets { .. } => vec![Need::action(
            A::ListTableBuckets,
            Resource::Account(cx.account.clone()),
        )],
        E::CreateBucket { name } => {
            let resource = match bucket_arn(cx, name) {
                Ok(arn) => Resource::Bucket(arn),
                // The form's name is invalid: the operation answers its own 400.
                Err(_) => Resource::Account(cx.account.clone()),
            };
            vec![Need::action(A::CreateTableBucket, resource)]
        }
        E::Bucket { bucket: name, .. } => on_bucket(name, A::GetTableBucket)?,
        E::Connect { bucket: name } => on_bucket(name, A::GetTableBucket)?,
        E::DeleteBucket { bucket: name } => on_bucket(name, A::DeleteTableBucket)?,
        E::PutEncryption { bucket: name, .. } => on_bucket(name, A::PutTableBucketEncryption)?,
        E::PutBucketMaintenance { bucket: name, .. } => {
            on_bucket(name, A::PutTableBucketMaintenanceConfiguration)?
        }
        E::PutBucketPolicy { bucket: name, .. } => on_bucket(name, A::PutTableBucketPolicy)?,
        E::DeleteBucketPolicy { bucket: name } => on_bucket(name, A::DeleteTableBucketPolicy)?,
        E::CreateNamespace {
            bucket: name,
            name: namespace,
        } => {
            let arn = bucket_arn(cx, name)?;
            bucket = Some(arn.clone());
            vec![Need::action(
                A::CreateNamespace,
                in_namespace(Resource::Bucket(arn), namespace),
            )]
        }
        E::DeleteNamespace {
            bucket: name,
            namespace,
        } => {
            let arn = bucket_arn(cx, name)?;
            bucket = Some(arn.clone());
            vec![Need::action(
                A::DeleteNamespace,
                in_namespace(Resource::Bucket(arn), namespace),
            )]
        }
        E::CreateTable {
            bucket: name,
            namespace,
            name: table_name,
            ..
        } => {
            let arn = bucket_arn(cx, name)?;
            bucket = Some(arn.clone());
            vec![Need::action(
                A::CreateTable,
                naming_table(Resource::Bucket(arn), namespace, table_name),
            )]
        }
        E::Table { table: path } => {
            on_table(
                cx,
                path,
                &[A::GetTable, A::GetTableMetadataLocation],
                &mut bucket,
                &mut table,
            )
            .await?
        }
        E::DeleteTable { table: path } => {
            on_table(cx, path, &[A::DeleteTable], &mut bucket, &mut table).await?
        }
        E::TableMaintenance { table: path } => {
            on_table(
                cx,
                path,
                &[
                    A::GetTableMaintenanceConfiguration,
                    A::GetTableMaintenanceJobStatus,
                ],
                &mut bucket,
                &mut table,
            )
            .await?
        }
        E::PutTableMaintenance { table: path, .. } => {
            on_table(
                cx,
                path,
                &[A::PutTableMaintenanceConfiguration],
                &mut bucket,
                &mut table,
            )
            .await?
        }
        E::RunMaintenance { table: path, .. } => {
            // As the admin API's run-now: the caller's own account's table, and the right to configure it.
            on_table(
                cx,
                path,
                &[A::PutTableMaintenanceConfiguration],
                &mut bucket,
                &mut table,
            )
            .await?
        }
        E::Identity { account: requested } => {
            account = acting_account(cx, requested.as_ref());
            identities(&account, format!("account/{account}"))
        }
        E::CreateAccount { .. } => vec![Need::Admin {
            scope: AdminScope::Accounts,
            resource: "accounts".to_string(),
        }],
        E::CreateIdentity {
            account: requested,
            kind,
            name,
            ..
        }
        | E::DeleteIdentity {
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
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::User, user);
            identities(&account, arn)
        }
        E::DeleteAccessKey {
            account: requested,
            user,
            key,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, IdentityKind::User, user);
            identities(&account, format!("{arn}/{key}"))
        }
        E::PutIdentityPolicy {
            account: requested,
            kind,
            name,
            policy,
            ..
        }
        | E::DeleteIdentityPolicy {
            account: requested,
            kind,
            name,
            policy,
        } => {
            account = acting_account(cx, requested.as_ref());
            let arn = identity_arn(&account, *kind, name);
            identities(&account, format!("{arn}/policy/{policy}"))
        }
    };
    Ok((
        Resolved {
            endpoint,
            bucket,
            table,
            account,
        },
        needs,
    ))
}

/// A table named by path: looked up once; the needs are on its ARN (with its names for the condition keys)
/// when it exists, else on `<bucket>/table/*` and the handler answers the lookup's 404.
async fn on_table(
    cx: &Context<'_>,
    path: &TablePath,
    actions: &[Action],
    bucket: &mut Option<BucketArn>,
    table: &mut Option<Result<Table, ConsoleError>>,
) -> Result<Vec<Need>, ConsoleError> {
    let arn = bucket_arn(cx, &path.bucket)?;
    *bucket = Some(arn.clone());
    let named = match (
        NamespaceName::parse(&path.namespace),
        TableName::parse(&path.name),
    ) {
        (Ok(namespace), Ok(name)) => TableRef::Name {
            bucket: arn.clone(),
            namespace,
            name,
        },
        (Err(_), _) | (_, Err(_)) => {
            *table = Some(Err(ConsoleError::NotFound(format!(
                "There is no table {}.{} in {}",
                path.namespace, path.name, path.bucket
            ))));
            return Ok(vec![Need::Actions(
                actions.to_vec(),
                Resource::AnyTable(arn),
            )]);
        }
    };
    let resource = match cx.catalog().table(&named).await {
        Ok(found) => {
            let resource = Resource::table(&found);
            *table = Some(Ok(found));
            resource
        }
        Err(ServiceError::NotFound(message)) => {
            *table = Some(Err(ConsoleError::NotFound(message)));
            Resource::AnyTable(arn)
        }
        Err(e) => return Err(e.into()),
    };
    Ok(vec![Need::Actions(actions.to_vec(), resource)])
}

/// Who is looking: the principal, the session's CSRF token, whether the Identity page is theirs.
fn viewer(cx: &Context<'_>) -> Result<Viewer, ConsoleError> {
    let live = cx
        .app
        .console_sessions
        .of_request(cx.parts)
        .ok_or(ConsoleError::SignIn)?;
    Ok(Viewer {
        principal: cx.principal.arn.clone(),
        csrf: live.csrf,
        manages_identities: cx.principal.kind.is_root() && cx.principal.session.is_none(),
    })
}

async fn dispatch(cx: &Context<'_>, resolved: Resolved) -> Result<Response, ConsoleError> {
    use Endpoint as E;
    let Resolved {
        endpoint,
        bucket,
        table,
        account,
    } = resolved;
    let viewer = viewer(cx)?;
    let bucket = || {
        bucket.clone().ok_or_else(|| {
            ConsoleError::Internal("a bucket page was resolved without its bucket".into())
        })
    };
    let table = || {
        table.unwrap_or_else(|| {
            Err(ConsoleError::Internal(
                "a table page was resolved without its table".into(),
            ))
        })
    };
    match endpoint {
        E::Home => Ok(layout::see_other("/console/buckets")),
        E::SignOut => Ok(session::sign_out(cx.app, cx.parts)),
        E::Buckets { token } => buckets::list(cx, &viewer, token.as_deref()).await,
        E::CreateBucket { name } => buckets::create(cx, &name).await,
        E::Bucket {
            namespace_token,
            table_token,
            ..
        } => {
            buckets::page(
                cx,
                &viewer,
                &bucket()?,
                namespace_token.as_deref(),
                table_token.as_deref(),
                None,
            )
            .await
        }
        E::DeleteBucket { .. } => buckets::delete(cx, &bucket()?).await,
        E::CreateNamespace { name, .. } => buckets::create_namespace(cx, &bucket()?, &name).await,
        E::DeleteNamespace { namespace, .. } => {
            buckets::delete_namespace(cx, &bucket()?, &namespace).await
        }
        E::CreateTable {
            namespace,
            name,
            columns,
            ..
        } => tables::create(cx, &bucket()?, &namespace, &name, &columns).await,
        E::PutEncryption {
            algorithm,
            kms_key_arn,
            ..
        } => buckets::put_encryption(cx, &bucket()?, &algorithm, &kms_key_arn).await,
        E::PutBucketMaintenance {
            status,
            unreferenced_days,
            non_current_days,
            ..
        } => {
            buckets::put_maintenance(
                cx,
                &bucket()?,
                &status,
                &unreferenced_days,
                &non_current_days,
            )
            .await
        }
        E::PutBucketPolicy { policy, .. } => {
            buckets::put_policy(cx, &viewer, &bucket()?, policy).await
        }
        E::DeleteBucketPolicy { .. } => buckets::delete_policy(cx, &bucket()?).await,
        E::Connect { .. } => connect::page(cx, &viewer, &bucket()?).await,
        E::Table { .. } => tables::page(cx, &viewer, &table()?).await,
        E::DeleteTable { .. } => tables::delete(cx, &table()?).await,
        E::TableMaintenance { .. } => maintenance::page(cx, &viewer, &table()?).await,
        E::PutTableMaintenance { form, .. } => maintenance::put(cx, &table()?, &form).await,
        E::RunMaintenance { job_type, .. } => maintenance::run(cx, &table()?, &job_type).await,
        E::Identity { .. } => identity::page(cx, &viewer, &account, None).await,
        E::CreateAccount { name } => identity::create_account(cx, &viewer, &name).await,
        E::CreateIdentity {
            kind,
            name,
            trust_policy,
            ..
        } => identity::create_identity(cx, &account, kind, &name, &trust_policy).await,
        E::DeleteIdentity { kind, name, .. } => {
            identity::delete_identity(cx, &account, kind, &name).await
        }
        E::CreateAccessKey { user, .. } => {
            identity::create_access_key(cx, &viewer, &account, &user).await
        }
        E::DeleteAccessKey { user, key, .. } => {
            identity::delete_access_key(cx, &account, &user, &key).await
        }
        E::PutIdentityPolicy {
            kind,
            name,
            policy,
            document,
            ..
        } => identity::put_policy(cx, &viewer, &account, kind, &name, &policy, document).await,
        E::DeleteIdentityPolicy {
            kind, name, policy, ..
        } => identity::delete_policy(cx, &account, kind, &name, &policy).await,
    }
}
