//! Authorization of a resolved endpoint: each [`Need`] a surface names is decided by the IAM service's one
//! authorization function (`tablebay_iam::Iam::authorize_all`) with the request's full context, in order; the
//! first denial ends the request.

use tablebay_catalog::{NamespaceName, TableName};
use tablebay_iam::{AdminScope, IamError, Resource};
use tablebay_policy::Action;

use super::Context;

/// What an operation needs of its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// Every one of `actions` on `resource`.
    Actions(Vec<Action>, Resource),
    /// Only the root of the resource's own account may (operations that have no IAM action of their own).
    Owner(Resource),
    /// The resource must belong to the caller's own account (whatever the policies say).
    OwnAccount(Resource),
    /// Administration (the admin API): of `scope`, acting on what `resource` names (for the audit trail).
    Admin {
        scope: AdminScope,
        resource: String,
    },
}

impl Need {
    /// One action on a resource.
    pub(crate) fn action(action: Action, resource: Resource) -> Self {
        Self::Actions(vec![action], resource)
    }
}

/// A resource of a bucket in the namespace `name` (for the `s3tables:namespace` condition key); a name that
/// could not exist names none (the operation answers its own 400 or 404).
pub(crate) fn in_namespace(resource: Resource, name: &str) -> Resource {
    match NamespaceName::parse(name) {
        Ok(namespace) => resource.in_namespace(namespace),
        Err(_) => resource,
    }
}

/// A resource of a bucket naming the table `namespace.name` that is to be created (condition keys
/// `s3tables:namespace` and `s3tables:tableName`).
pub(crate) fn naming_table(resource: Resource, namespace: &str, name: &str) -> Resource {
    match (NamespaceName::parse(namespace), TableName::parse(name)) {
        (Ok(namespace), Ok(name)) => resource.naming_table(namespace, name),
        (Ok(namespace), Err(_)) => resource.in_namespace(namespace),
        (Err(_), _) => resource,
    }
}

/// Decides every need in order.
pub(super) async fn authorize(
    cx: &Context<'_>,
    operation: &str,
    needs: &[Need],
) -> Result<(), IamError> {
    for need in needs {
        match need {
            Need::Actions(actions, resource) => {
                cx.app
                    .iam
                    .authorize_all(&cx.principal, actions, resource, &cx.access)
                    .await?;
            }
            Need::Owner(resource) => {
                cx.app
                    .iam
                    .authorize_owner(&cx.principal, operation, resource, &cx.access)?;
            }
            Need::OwnAccount(resource) => {
                cx.app.iam.authorize_own_account(
                    &cx.principal,
                    operation,
                    resource,
                    &cx.access,
                )?;
            }
            Need::Admin { scope, resource } => {
                cx.app.iam.authorize_admin(
                    &cx.principal,
                    &format!("admin:{operation}"),
                    scope,
                    resource,
                    &cx.access,
                )?;
            }
        }
    }
    Ok(())
}
