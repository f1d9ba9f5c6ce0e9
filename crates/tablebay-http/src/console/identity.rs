//! The Identity page, for the principals allowed to administer an account's identities (its root, and the
//! instance root in any account, as on the admin API): users with their access keys and policies, roles with
//! their trust and identity policies, and for the instance root a new account. A new access key's secret (and a
//! new account's root secret) is shown once, in the answer to the form that created it, and never again.
//! Policy editors show a refused document's error inline with its line and column.

use axum::response::Response;
use http::StatusCode;
use maud::{Markup, html};
use tablebay_auth::PrincipalKind;
use tablebay_iam::{IdentityKind, PolicyName, PrincipalName, ServiceError};

use super::error::ConsoleError;
use super::layout::{self, Page, Viewer, action_button, csrf_field, seg, when};
use super::policy_text::{PolicyProblem, locate};
use crate::pipeline::Context;

/// What the page shows besides the identities: a secret just created, or a refused policy draft.
pub(super) enum Shown {
    /// A new key: (what it belongs to, access key id, secret).
    Secret(String, String, String),
    /// A refused policy: (kind, identity, policy name, document, problem).
    Draft(IdentityKind, String, String, String, PolicyProblem),
}

fn collection(kind: IdentityKind) -> &'static str {
    match kind {
        IdentityKind::User => "users",
        IdentityKind::Role => "roles",
    }
}

fn page_href(cx: &Context<'_>, account: &str) -> String {
    if account == cx.account.as_str() {
        "/console/identity".to_string()
    } else {
        format!("/console/identity?account={}", seg(account))
    }
}

/// The hidden field that keeps a form in the page's account.
fn account_field(account: &str) -> Markup {
    html! { input type="hidden" name="account" value=(account); }
}

/// `GET /console/identity` (and the answers that show a secret or a refused policy).
pub(super) async fn page(
    cx: &Context<'_>,
    viewer: &Viewer,
    account: &str,
    shown: Option<Shown>,
) -> Result<Response, ConsoleError> {
    let iam = &cx.app.iam;
    let users = iam.identities(account, IdentityKind::User).await?;
    let roles = iam.identities(account, IdentityKind::Role).await?;
    let mut user_rows = Vec::with_capacity(users.len());
    for user in users {
        let keys = iam.access_keys(account, &user.name).await?;
        let policies = iam
            .identity_policies(account, IdentityKind::User, &user.name)
            .await?;
        user_rows.push((user, keys, policies));
    }
    let mut role_rows = Vec::with_capacity(roles.len());
    for role in roles {
        let policies = iam
            .identity_policies(account, IdentityKind::Role, &role.name)
            .await?;
        role_rows.push((role, policies));
    }
    let csrf = viewer.csrf.as_str();
    let instance_root = cx.principal.kind == PrincipalKind::InstanceRoot;
    let status = match &shown {
        Some(Shown::Draft(..)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let draft_for = |kind: IdentityKind, name: &str| match &shown {
        Some(Shown::Draft(k, n, policy, document, problem)) if *k == kind && n == name => {
            Some((policy.clone(), document.clone(), problem.clone()))
        }
        _ => None,
    };
    let policy_editor = |kind: IdentityKind, name: &str| {
        let draft = draft_for(kind, name);
        let id = format!("{}-{}-policy", collection(kind), seg(name));
        html! {
            details open[draft.is_some()] {
                summary { "Put a policy" }
                form method="post" action=(format!("/console/identity/{}/{}/policies", collection(kind), seg(name))) class="stack" {
                    (csrf_field(csrf))
                    (account_field(account))
                    @if let Some((_, _, problem)) = &draft {
                        p class="error" role="alert" id=(format!("{id}-error")) { "Line " (problem.line) ", column " (problem.column) ": " (problem.message) }
                    }
                    label for=(format!("{id}-name")) { "Policy name" }
                    input id=(format!("{id}-name")) name="policy_name" type="text" required
                        value=(draft.as_ref().map(|d| d.0.clone()).unwrap_or_default());
                    label for=(format!("{id}-document")) { "Policy document (JSON)" }
                    textarea id=(format!("{id}-document")) name="document" rows="8" spellcheck="false"
                        aria-invalid=[draft.as_ref().map(|_| "true")] {
                        (draft.as_ref().map(|d| d.1.clone()).unwrap_or_default())
                    }
                    div class="actions" { button type="submit" { "Save policy" } }
                }
            }
        }
    };
    let policies_list = |kind: IdentityKind, name: &str, policies: &[(String, String)]| {
        html! {
            @if policies.is_empty() {
                p class="muted" { "No policies." }
            } @else {
                @for (policy, document) in policies {
                    details {
                        summary class="mono" { (policy) }
                        pre { (document) }
                        (action_button(&format!("/console/identity/{}/{}/policies/{}/delete", collection(kind), seg(name), seg(policy)), csrf, "Delete policy", true))
                    }
                }
            }
        }
    };
    let body = html! {
        main {
            h1 { "Identity of account " (account) }
            @if let Some(Shown::Secret(owner, key, secret)) = &shown {
                section class="card secret" role="status" id="new-secret" {
                    h2 { "New access key for " (owner) }
                    p { "This is the only time the secret is shown. Copy it now." }
                    dl class="facts" {
                        dt { "Access key ID" } dd class="mono" id="new-access-key-id" { (key) }
                        dt { "Secret access key" } dd class="mono" id="new-secret-access-key" { (secret) }
                    }
                }
            }
            @if instance_root {
                section class="card" {
                    h2 { "Accounts" }
                    form method="get" action="/console/identity" class="row" {
                        div {
                            label for="account-id" { "Administer account" }
                            input id="account-id" name="account" type="text" inputmode="numeric" pattern="[0-9]{12}" value=(account);
                        }
                        button type="submit" class="secondary" { "Open" }
                    }
                    form method="post" action="/console/identity/accounts" class="row" {
                        (csrf_field(csrf))
                        div {
                            label for="account-name" { "New account name (optional)" }
                            input id="account-name" name="name" type="text" maxlength="64";
                        }
                        button type="submit" { "Create account" }
                    }
                }
            }
            section class="card" id="users" {
                h2 { "Users" }
                form method="post" action="/console/identity/users" class="row" {
                    (csrf_field(csrf))
                    (account_field(account))
                    div {
                        label for="user-name" { "New user" }
                        input id="user-name" name="name" type="text" required maxlength="64" spellcheck="false";
                    }
                    button type="submit" { "Create user" }
                }
                @if user_rows.is_empty() { p class="muted" { "No users." } }
                @for (user, keys, policies) in &user_rows {
                    section class="card" data-user=(user.name) {
                        h3 { (user.name) " " span class="muted mono" { (user.arn) } }
                        p class="muted" { "Created " (when(&user.created_at)) }
                        h3 { "Access keys" }
                        @if keys.is_empty() { p class="muted" { "No access keys." } }
                        ul {
                            @for key in keys {
                                li {
                                    span class="mono" { (key.access_key_id) } " · " (key.status) " · created " (when(&key.created_at)) " "
                                    (action_button(&format!("/console/identity/users/{}/access-keys/{}/delete", seg(&user.name), seg(&key.access_key_id)), csrf, "Delete key", true))
                                }
                            }
                        }
                        form method="post" action=(format!("/console/identity/users/{}/access-keys", seg(&user.name))) class="inline" {
                            (csrf_field(csrf))
                            (account_field(account))
                            button type="submit" class="secondary" { "Create access key" }
                        }
                        h3 { "Policies" }
                        (policies_list(IdentityKind::User, &user.name, policies))
                        (policy_editor(IdentityKind::User, &user.name))
                        div class="actions" {
                            (action_button(&format!("/console/identity/users/{}/delete", seg(&user.name)), csrf, "Delete user", true))
                        }
                    }
                }
            }
            section class="card" id="roles" {
                h2 { "Roles" }
                details {
                    summary { "Create a role" }
                    form method="post" action="/console/identity/roles" class="stack" {
                        (csrf_field(csrf))
                        (account_field(account))
                        label for="role-name" { "Role name" }
                        input id="role-name" name="name" type="text" required maxlength="64" spellcheck="false";
                        label for="role-trust" { "Trust policy (who may assume it)" }
                        textarea id="role-trust" name="trust_policy" rows="8" spellcheck="false" {
                            (format!("{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{{\"Effect\": \"Allow\", \"Principal\": {{\"AWS\": \"arn:aws:iam::{account}:root\"}}, \"Action\": \"sts:AssumeRole\"}}]\n}}"))
                        }
                        div class="actions" { button type="submit" { "Create role" } }
                    }
                }
                @if role_rows.is_empty() { p class="muted" { "No roles." } }
                @for (role, policies) in &role_rows {
                    section class="card" data-role=(role.name) {
                        h3 { (role.name) " " span class="muted mono" { (role.arn) } }
                        p class="muted" { "Created " (when(&role.created_at)) "; sessions up to " (role.max_session_secs.unwrap_or(3600)) " s" }
                        details { summary { "Trust policy" } pre { (role.trust_policy.clone().unwrap_or_default()) } }
                        h3 { "Policies" }
                        (policies_list(IdentityKind::Role, &role.name, policies))
                        (policy_editor(IdentityKind::Role, &role.name))
                        div class="actions" {
                            (action_button(&format!("/console/identity/roles/{}/delete", seg(&role.name)), csrf, "Delete role", true))
                        }
                    }
                }
            }
        }
    };
    let page = Page::new(
        format!("Identity of account {account} — Tablebay console"),
        viewer,
    )
    .crumb("Identity", page_href(cx, account));
    Ok(layout::respond(status, page.render(body)))
}

/// `POST /console/identity/accounts` (instance root): the new account's root key is shown once.
pub(super) async fn create_account(
    cx: &Context<'_>,
    viewer: &Viewer,
    name: &str,
) -> Result<Response, ConsoleError> {
    let name = (!name.is_empty()).then_some(name);
    let account = cx.app.iam.create_account(&cx.principal, name).await?;
    let owner = format!("the root of the new account {}", account.account_id);
    page(
        cx,
        viewer,
        &account.account_id,
        Some(Shown::Secret(
            owner,
            account.key.access_key_id,
            account.key.secret_access_key,
        )),
    )
    .await
}

/// `POST /console/identity/{users|roles}`.
pub(super) async fn create_identity(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
    trust_policy: &str,
) -> Result<Response, ConsoleError> {
    let name = PrincipalName::parse(name)?;
    match kind {
        IdentityKind::User => {
            cx.app.iam.create_user(account, &name).await?;
        }
        IdentityKind::Role => {
            if let Err(e) = cx
                .app
                .iam
                .create_role(account, &name, trust_policy, None)
                .await
            {
                return match e {
                    ServiceError::MalformedPolicy(message) => {
                        let problem = locate(trust_policy, &message);
                        Err(ConsoleError::BadRequest(format!(
                            "The trust policy was refused at line {}, column {}: {}",
                            problem.line, problem.column, problem.message
                        )))
                    }
                    other => Err(other.into()),
                };
            }
        }
    }
    Ok(layout::see_other(&format!(
        "{}#{}",
        page_href(cx, account),
        collection(kind)
    )))
}

/// `POST /console/identity/{users|roles}/{name}/delete`.
pub(super) async fn delete_identity(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
) -> Result<Response, ConsoleError> {
    cx.app.iam.delete_identity(account, kind, name).await?;
    Ok(layout::see_other(&page_href(cx, account)))
}

/// `POST /console/identity/users/{user}/access-keys`: the secret is in this answer only.
pub(super) async fn create_access_key(
    cx: &Context<'_>,
    viewer: &Viewer,
    account: &str,
    user: &str,
) -> Result<Response, ConsoleError> {
    let key = cx.app.iam.create_access_key(account, user).await?;
    page(
        cx,
        viewer,
        account,
        Some(Shown::Secret(
            format!("user {user}"),
            key.access_key_id,
            key.secret_access_key,
        )),
    )
    .await
}

/// `POST /console/identity/users/{user}/access-keys/{key}/delete`.
pub(super) async fn delete_access_key(
    cx: &Context<'_>,
    account: &str,
    user: &str,
    key: &str,
) -> Result<Response, ConsoleError> {
    cx.app.iam.delete_access_key(account, user, key).await?;
    Ok(layout::see_other(&page_href(cx, account)))
}

/// `POST /console/identity/{users|roles}/{name}/policies`: a refused document comes back in its editor (400).
pub(super) async fn put_policy(
    cx: &Context<'_>,
    viewer: &Viewer,
    account: &str,
    kind: IdentityKind,
    name: &str,
    policy: &str,
    document: String,
) -> Result<Response, ConsoleError> {
    let policy_name = PolicyName::parse(policy)?;
    match cx
        .app
        .iam
        .put_identity_policy(account, kind, name, &policy_name, &document)
        .await
    {
        Ok(()) => Ok(layout::see_other(&page_href(cx, account))),
        Err(ServiceError::MalformedPolicy(message)) => {
            let problem = locate(&document, &message);
            page(
                cx,
                viewer,
                account,
                Some(Shown::Draft(
                    kind,
                    name.to_string(),
                    policy.to_string(),
                    document,
                    problem,
                )),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /console/identity/{users|roles}/{name}/policies/{policy}/delete`.
pub(super) async fn delete_policy(
    cx: &Context<'_>,
    account: &str,
    kind: IdentityKind,
    name: &str,
    policy: &str,
) -> Result<Response, ConsoleError> {
    cx.app
        .iam
        .delete_identity_policy(account, kind, name, policy)
        .await?;
    Ok(layout::see_other(&page_href(cx, account)))
}
