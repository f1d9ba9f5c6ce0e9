//! Every admin route. Families add their routes here, one block each.

use axum::Router;
use axum::routing::{any, get, post, put};

use super::{iam, maintenance};
use crate::state::AppState;

/// The admin routes, merged into the tables listener's router (full paths, so SigV4 sees the URI as sent).
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        // Accounts, users, keys, roles, identity policies (iam.rs).
        .route("/admin/accounts", post(iam::create_account))
        .route(
            "/admin/accounts/{account}",
            axum::routing::delete(iam::delete_account),
        )
        .route("/admin/users", post(iam::create_user).get(iam::list_users))
        .route(
            "/admin/users/{user}",
            get(iam::get_user).delete(iam::delete_user),
        )
        .route(
            "/admin/users/{user}/access-keys",
            post(iam::create_access_key).get(iam::list_access_keys),
        )
        .route(
            "/admin/users/{user}/access-keys/{key}",
            put(iam::update_access_key).delete(iam::delete_access_key),
        )
        .route("/admin/users/{user}/policies", get(iam::list_user_policies))
        .route(
            "/admin/users/{user}/policies/{policy}",
            put(iam::put_user_policy)
                .get(iam::get_user_policy)
                .delete(iam::delete_user_policy),
        )
        .route("/admin/roles", post(iam::create_role).get(iam::list_roles))
        .route(
            "/admin/roles/{role}",
            get(iam::get_role).delete(iam::delete_role),
        )
        .route("/admin/roles/{role}/policies", get(iam::list_role_policies))
        .route(
            "/admin/roles/{role}/policies/{policy}",
            put(iam::put_role_policy)
                .get(iam::get_role_policy)
                .delete(iam::delete_role_policy),
        )
        // Maintenance runs (maintenance.rs): its own dispatcher, answers in the control plane's error format.
        .route("/admin/maintenance/{*path}", any(maintenance::handle))
}
