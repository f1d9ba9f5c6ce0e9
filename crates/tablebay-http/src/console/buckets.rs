//! Table buckets: the list (paginated) with the create form; a bucket's page with its namespaces and tables
//! (each paginated, so a bucket of thousands of tables costs one page of rows and no table's metadata), its
//! encryption and maintenance settings, and the resource-policy editor, which shows a refused document's error
//! inline with its line and column. Forms answer 303 to the page that shows their effect.
//!
//! A control is shown only when its viewer may use it (`Iam::allowed_actions`, the same decision as the action's
//! authorization); sections the viewer may not read say so instead of showing data.

use std::str::FromStr;

use axum::response::Response;
use http::StatusCode;
use maud::{Markup, html};
use tablebay_catalog::{
    BucketArn, BucketName, Encryption, JobConfig, MaintenanceStatus, NamespaceName, NewBucket,
    PageRequest, ServiceError, SseAlgorithm, Tags, UnreferencedFileRemovalSettings,
};
use tablebay_iam::Resource;
use tablebay_policy::Action;

use super::error::ConsoleError;
use super::layout::{self, Page, Viewer, action_button, csrf_field, seg, when};
use super::policy_text::{PolicyProblem, locate};
use crate::pipeline::Context;

/// Buckets per page of the list.
const BUCKETS_PER_PAGE: i64 = 50;
/// Namespaces per page of a bucket.
const NAMESPACES_PER_PAGE: i64 = 50;
/// Tables per page of a bucket.
const TABLES_PER_PAGE: i64 = 50;

/// The bucket page's address.
pub(super) fn href(bucket: &BucketArn) -> String {
    format!("/console/buckets/{}", seg(bucket.name.as_str()))
}

/// `GET /console/buckets`.
pub(super) async fn list(
    cx: &Context<'_>,
    viewer: &Viewer,
    token: Option<&str>,
) -> Result<Response, ConsoleError> {
    let page = PageRequest::new(None, token, Some(BUCKETS_PER_PAGE), 63)?;
    let buckets = cx.catalog().list_buckets(&cx.account, &page).await?;
    let can = cx
        .app
        .iam
        .allowed_actions(
            &cx.principal,
            &[Action::CreateTableBucket],
            &Resource::Account(cx.account.clone()),
        )
        .await?;
    let can_create = can.first().copied().unwrap_or(false);
    let body = html! {
        main {
            h1 { "Table buckets" }
            @if can_create {
                section class="card" {
                    h2 { "Create a table bucket" }
                    form method="post" action="/console/buckets" class="row" {
                        (csrf_field(&viewer.csrf))
                        div {
                            label for="bucket-name" { "Name" }
                            input id="bucket-name" name="name" type="text" required minlength="3" maxlength="63"
                                pattern="[a-z0-9][a-z0-9-]*[a-z0-9]" spellcheck="false"
                                aria-describedby="bucket-name-help";
                        }
                        button type="submit" { "Create bucket" }
                    }
                    p id="bucket-name-help" class="muted" { "3–63 lowercase letters, digits and hyphens." }
                }
            }
            section class="card" {
                h2 { "Your table buckets" }
                @if buckets.items.is_empty() {
                    p class="muted" { "No table buckets yet." }
                } @else {
                    div class="scroll" {
                        table class="responsive" {
                            thead { tr { th { "Name" } th { "ARN" } th { "Created" } } }
                            tbody {
                                @for bucket in &buckets.items {
                                    tr {
                                        td data-label="Name" { a href=(href(&bucket.arn)) { (bucket.arn.name.as_str()) } }
                                        td data-label="ARN" class="mono wrap" { (bucket.arn.to_string()) }
                                        td data-label="Created" { (when(&bucket.created_at)) }
                                    }
                                }
                            }
                        }
                    }
                }
                div class="pager" {
                    @if token.is_some() { a href="/console/buckets" { "First page" } }
                    @if let Some(next) = &buckets.next {
                        a href=(format!("/console/buckets?token={}", seg(next.as_str()))) rel="next" { "Next page" }
                    }
                }
            }
        }
    };
    let page = Page::new("Table buckets — Tablebay console", viewer)
        .crumb("Table buckets", "/console/buckets");
    Ok(layout::respond(StatusCode::OK, page.render(body)))
}

/// `POST /console/buckets`: CreateTableBucket.
pub(super) async fn create(cx: &Context<'_>, name: &str) -> Result<Response, ConsoleError> {
    let new = NewBucket {
        name: BucketName::parse(name)?,
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let bucket = cx.catalog().create_bucket(&cx.account, new).await?;
    Ok(layout::see_other(&href(&bucket.arn)))
}

/// `POST /console/buckets/{b}/delete`: DeleteTableBucket (an empty one).
pub(super) async fn delete(cx: &Context<'_>, bucket: &BucketArn) -> Result<Response, ConsoleError> {
    cx.catalog().delete_bucket(bucket).await?;
    Ok(layout::see_other("/console/buckets"))
}

/// `POST /console/buckets/{b}/namespaces`: CreateNamespace.
pub(super) async fn create_namespace(
    cx: &Context<'_>,
    bucket: &BucketArn,
    name: &str,
) -> Result<Response, ConsoleError> {
    let name = NamespaceName::parse(name)?;
    cx.catalog()
        .create_namespace(bucket, name, Default::default(), &cx.account)
        .await?;
    Ok(layout::see_other(&href(bucket)))
}

/// `POST /console/buckets/{b}/namespaces/{ns}/delete`: DeleteNamespace (an empty one).
pub(super) async fn delete_namespace(
    cx: &Context<'_>,
    bucket: &BucketArn,
    namespace: &str,
) -> Result<Response, ConsoleError> {
    cx.catalog()
        .delete_namespace(bucket, &NamespaceName::parse(namespace)?)
        .await?;
    Ok(layout::see_other(&href(bucket)))
}

/// `POST /console/buckets/{b}/encryption`: PutTableBucketEncryption.
pub(super) async fn put_encryption(
    cx: &Context<'_>,
    bucket: &BucketArn,
    algorithm: &str,
    kms_key_arn: &str,
) -> Result<Response, ConsoleError> {
    let key = (!kms_key_arn.is_empty()).then(|| kms_key_arn.to_string());
    let encryption = Encryption::new(SseAlgorithm::from_str(algorithm)?, key)?;
    cx.catalog()
        .put_bucket_encryption(bucket, &encryption)
        .await?;
    Ok(layout::see_other(&href(bucket)))
}

/// A whole number of a form, or nothing when the field is blank.
pub(super) fn number(field: &str, raw: &str) -> Result<Option<i64>, ConsoleError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse().map(Some).map_err(|_| {
        ConsoleError::BadRequest(format!("{field} must be a whole number, got '{raw}'"))
    })
}

/// `POST /console/buckets/{b}/maintenance`: PutTableBucketMaintenanceConfiguration
/// (`icebergUnreferencedFileRemoval`).
pub(super) async fn put_maintenance(
    cx: &Context<'_>,
    bucket: &BucketArn,
    status: &str,
    unreferenced_days: &str,
    non_current_days: &str,
) -> Result<Response, ConsoleError> {
    let config = JobConfig {
        status: MaintenanceStatus::from_str(status)?,
        settings: UnreferencedFileRemovalSettings::new(
            number("unreferencedDays", unreferenced_days)?,
            number("nonCurrentDays", non_current_days)?,
        )?,
    };
    cx.catalog().put_bucket_maintenance(bucket, config).await?;
    Ok(layout::see_other(&href(bucket)))
}

/// `POST /console/buckets/{b}/policy`: PutTableBucketPolicy. A document the policy language refuses comes back
/// in the editor (400) with its error, line and column; nothing is stored.
pub(super) async fn put_policy(
    cx: &Context<'_>,
    viewer: &Viewer,
    bucket: &BucketArn,
    document: String,
) -> Result<Response, ConsoleError> {
    let policy = match tablebay_catalog::ResourcePolicy::parse(&document) {
        Ok(policy) => policy,
        Err(ServiceError::MalformedPolicy(message)) => {
            let problem = locate(&document, &message);
            return page(cx, viewer, bucket, None, None, Some((document, problem))).await;
        }
        Err(e) => return Err(e.into()),
    };
    cx.catalog().put_bucket_policy(bucket, &policy).await?;
    Ok(layout::see_other(&format!("{}#policy", href(bucket))))
}

/// `POST /console/buckets/{b}/policy/delete`: DeleteTableBucketPolicy.
pub(super) async fn delete_policy(
    cx: &Context<'_>,
    bucket: &BucketArn,
) -> Result<Response, ConsoleError> {
    cx.catalog().delete_bucket_policy(bucket).await?;
    Ok(layout::see_other(&format!("{}#policy", href(bucket))))
}

/// What the viewer may do on the bucket page.
struct Rights {
    delete_bucket: bool,
    create_namespace: bool,
    delete_namespace: bool,
    create_table: bool,
    get_encryption: bool,
    put_encryption: bool,
    get_maintenance: bool,
    put_maintenance: bool,
    get_policy: bool,
    put_policy: bool,
    delete_policy: bool,
    list_namespaces: bool,
    list_tables: bool,
}

async fn rights(cx: &Context<'_>, bucket: &BucketArn) -> Result<Rights, ConsoleError> {
    use Action as A;
    let actions = [
        A::DeleteTableBucket,
        A::CreateNamespace,
        A::DeleteNamespace,
        A::CreateTable,
        A::GetTableBucketEncryption,
        A::PutTableBucketEncryption,
        A::GetTableBucketMaintenanceConfiguration,
        A::PutTableBucketMaintenanceConfiguration,
        A::GetTableBucketPolicy,
        A::PutTableBucketPolicy,
        A::DeleteTableBucketPolicy,
        A::ListNamespaces,
        A::ListTables,
    ];
    let allowed = cx
        .app
        .iam
        .allowed_actions(&cx.principal, &actions, &Resource::Bucket(bucket.clone()))
        .await?;
    let at = |i: usize| allowed.get(i).copied().unwrap_or(false);
    Ok(Rights {
        delete_bucket: at(0),
        create_namespace: at(1),
        delete_namespace: at(2),
        create_table: at(3),
        get_encryption: at(4),
        put_encryption: at(5),
        get_maintenance: at(6),
        put_maintenance: at(7),
        get_policy: at(8),
        put_policy: at(9),
        delete_policy: at(10),
        list_namespaces: at(11),
        list_tables: at(12),
    })
}

/// A section the viewer may not read.
fn not_permitted(action: &str) -> Markup {
    html! { p class="muted" { "You are not allowed " code { (action) } " on this bucket." } }
}

/// `GET /console/buckets/{b}` (and the policy editor's answer to a refused document, with `draft`).
pub(super) async fn page(
    cx: &Context<'_>,
    viewer: &Viewer,
    arn: &BucketArn,
    namespace_token: Option<&str>,
    table_token: Option<&str>,
    draft: Option<(String, PolicyProblem)>,
) -> Result<Response, ConsoleError> {
    let catalog = cx.catalog();
    let bucket = catalog.bucket(arn).await?;
    let can = rights(cx, arn).await?;
    let namespaces = match can.list_namespaces {
        true => Some(
            catalog
                .list_namespaces(
                    arn,
                    &PageRequest::new(None, namespace_token, Some(NAMESPACES_PER_PAGE), 255)?,
                )
                .await?,
        ),
        false => None,
    };
    let tables = match can.list_tables {
        true => Some(
            catalog
                .list_tables(
                    arn,
                    None,
                    &PageRequest::new(None, table_token, Some(TABLES_PER_PAGE), 255)?,
                )
                .await?,
        ),
        false => None,
    };
    let encryption = match can.get_encryption {
        true => Some(catalog.table_bucket_encryption(arn).await?),
        false => None,
    };
    let maintenance = match can.get_maintenance {
        true => Some(catalog.bucket_maintenance(arn).await?),
        false => None,
    };
    let policy = match can.get_policy {
        true => match catalog.bucket_policy(arn).await {
            Ok(policy) => Some(Some(policy.as_str().to_string())),
            Err(ServiceError::NotFound(_)) => Some(None),
            Err(e) => return Err(e.into()),
        },
        false => None,
    };
    let base = href(arn);
    let name = arn.name.as_str();
    let csrf = viewer.csrf.as_str();
    let status = if draft.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let body = html! {
        main {
            h1 { "Table bucket " (name) }
            section class="card" {
                dl class="facts" {
                    dt { "ARN" } dd class="mono" { (arn.to_string()) }
                    dt { "Owner account" } dd { (arn.account.as_str()) }
                    dt { "Created" } dd { (when(&bucket.created_at)) }
                    dt { "Bucket id" } dd class="mono" { (bucket.id.to_string()) }
                }
                div class="actions" {
                    a href=(format!("{base}/connect")) { "Connect a client" }
                    @if can.delete_bucket {
                        (action_button(&format!("{base}/delete"), csrf, "Delete bucket", true))
                    }
                }
            }
            div class="grid" {
                section class="card" id="namespaces" {
                    h2 { "Namespaces" }
                    @match &namespaces {
                        None => (not_permitted("s3tables:ListNamespaces")),
                        Some(page) if page.items.is_empty() => p class="muted" { "No namespaces yet." },
                        Some(page) => {
                            ul {
                                @for namespace in &page.items {
                                    li {
                                        span class="mono" { (namespace.name.as_str()) }
                                        " "
                                        @if can.delete_namespace {
                                            (action_button(&format!("{base}/namespaces/{}/delete", seg(namespace.name.as_str())), csrf, "Delete", true))
                                        }
                                    }
                                }
                            }
                            @if let Some(next) = &page.next {
                                div class="pager" { a href=(format!("{base}?nsToken={}", seg(next.as_str()))) { "More namespaces" } }
                            }
                        }
                    }
                    @if can.create_namespace {
                        form method="post" action=(format!("{base}/namespaces")) class="row" {
                            (csrf_field(csrf))
                            div {
                                label for="namespace-name" { "New namespace" }
                                input id="namespace-name" name="name" type="text" required maxlength="255" spellcheck="false";
                            }
                            button type="submit" { "Create namespace" }
                        }
                    }
                }
                section class="card" id="encryption" {
                    h2 { "Encryption" }
                    @match &encryption {
                        None => (not_permitted("s3tables:GetTableBucketEncryption")),
                        Some(encryption) => {
                            dl class="facts" {
                                dt { "Algorithm" } dd { (encryption.algorithm.as_str()) }
                                @if let Some(key) = &encryption.kms_key_arn { dt { "KMS key" } dd class="mono" { (key) } }
                            }
                            @if can.put_encryption {
                                form method="post" action=(format!("{base}/encryption")) class="row" {
                                    (csrf_field(csrf))
                                    div {
                                        label for="sse-algorithm" { "Algorithm" }
                                        select id="sse-algorithm" name="sse_algorithm" {
                                            @for option in ["AES256", "aws:kms"] {
                                                option value=(option) selected[encryption.algorithm.as_str() == option] { (option) }
                                            }
                                        }
                                    }
                                    div {
                                        label for="kms-key" { "KMS key ARN (aws:kms)" }
                                        input id="kms-key" name="kms_key_arn" type="text" spellcheck="false"
                                            value=(encryption.kms_key_arn.clone().unwrap_or_default());
                                    }
                                    button type="submit" { "Save encryption" }
                                }
                            }
                        }
                    }
                }
                section class="card" id="maintenance" {
                    h2 { "Maintenance" }
                    @match &maintenance {
                        None => (not_permitted("s3tables:GetTableBucketMaintenanceConfiguration")),
                        Some(maintenance) => {
                            @let job = &maintenance.unreferenced_file_removal;
                            dl class="facts" {
                                dt { "Unreferenced file removal" } dd class=(format!("status-{}", job.status.as_str())) { (job.status.as_str()) }
                                dt { "Unreferenced after" } dd { (job.settings.unreferenced_days) " days" }
                                dt { "Deleted after" } dd { (job.settings.non_current_days) " more days" }
                            }
                            @if can.put_maintenance {
                                form method="post" action=(format!("{base}/maintenance")) class="row" {
                                    (csrf_field(csrf))
                                    div {
                                        label for="ufr-status" { "Status" }
                                        select id="ufr-status" name="status" {
                                            @for option in ["enabled", "disabled"] {
                                                option value=(option) selected[job.status.as_str() == option] { (option) }
                                            }
                                        }
                                    }
                                    div {
                                        label for="ufr-unreferenced" { "Unreferenced days" }
                                        input id="ufr-unreferenced" name="unreferenced_days" type="number" min="1" value=(job.settings.unreferenced_days);
                                    }
                                    div {
                                        label for="ufr-noncurrent" { "Noncurrent days" }
                                        input id="ufr-noncurrent" name="non_current_days" type="number" min="1" value=(job.settings.non_current_days);
                                    }
                                    button type="submit" { "Save maintenance" }
                                }
                            }
                        }
                    }
                }
            }
            section class="card" id="tables" {
                h2 { "Tables" }
                @match &tables {
                    None => (not_permitted("s3tables:ListTables")),
                    Some(page) if page.items.is_empty() => p class="muted" { "No tables yet." },
                    Some(page) => {
                        div class="scroll" {
                            table class="responsive" {
                                thead { tr { th { "Namespace" } th { "Table" } th { "Created" } th { "Modified" } } }
                                tbody {
                                    @for table in &page.items {
                                        tr {
                                            td data-label="Namespace" class="mono" { (table.namespace.as_str()) }
                                            td data-label="Table" {
                                                a href=(format!("{base}/namespaces/{}/tables/{}", seg(table.namespace.as_str()), seg(table.name.as_str()))) {
                                                    (table.name.as_str())
                                                }
                                            }
                                            td data-label="Created" { (when(&table.created_at)) }
                                            td data-label="Modified" { (when(&table.modified_at)) }
                                        }
                                    }
                                }
                            }
                        }
                        div class="pager" {
                            @if table_token.is_some() { a href=(base.clone()) { "First page" } }
                            @if let Some(next) = &page.next {
                                a href=(format!("{base}?tableToken={}", seg(next.as_str()))) rel="next" { "Next tables" }
                            }
                        }
                    }
                }
                @if can.create_table {
                    details {
                        summary { "Create a table" }
                        form method="post" class="stack" id="create-table" action=(format!("{base}/tables")) {
                            (csrf_field(csrf))
                            p class="muted" { "The table is created in the namespace you name below (it must exist)." }
                            label for="table-namespace" { "Namespace" }
                            input id="table-namespace" name="namespace" type="text" required spellcheck="false";
                            label for="table-name" { "Table name" }
                            input id="table-name" name="name" type="text" required maxlength="255" spellcheck="false";
                            label for="table-columns" { "Columns" }
                            textarea id="table-columns" name="columns" rows="4" spellcheck="false" aria-describedby="columns-help" { "id long\nname string" }
                            p id="columns-help" class="muted" {
                                "One column per line: name, type (boolean, int, long, float, double, date, timestamp, timestamptz, string, uuid, binary, decimal(P,S)), and optionally "
                                code { "required" } "."
                            }
                            button type="submit" { "Create table" }
                        }
                    }
                }
            }
            section class="card" id="policy" {
                h2 { "Bucket policy" }
                @match (&policy, &draft) {
                    (None, _) => (not_permitted("s3tables:GetTableBucketPolicy")),
                    (Some(current), draft) => {
                        @let text = draft.as_ref().map(|(d, _)| d.clone()).or_else(|| current.clone()).unwrap_or_default();
                        @if let Some((_, problem)) = draft {
                            p class="error" role="alert" id="policy-error" {
                                "Line " (problem.line) ", column " (problem.column) ": " (problem.message)
                            }
                        }
                        @if current.is_none() && draft.is_none() { p class="muted" { "This bucket has no policy." } }
                        @if can.put_policy {
                            form method="post" action=(format!("{base}/policy")) class="stack" {
                                (csrf_field(csrf))
                                label for="policy-document" { "Policy document (JSON)" }
                                textarea id="policy-document" name="policy" rows="12" spellcheck="false"
                                    aria-invalid=[draft.as_ref().map(|_| "true")]
                                    aria-describedby=[draft.as_ref().map(|_| "policy-error")] { (text) }
                                div class="actions" { button type="submit" { "Save policy" } }
                            }
                        } @else {
                            pre { (text) }
                        }
                        @if can.delete_policy && current.is_some() {
                            (action_button(&format!("{base}/policy/delete"), csrf, "Delete policy", true))
                        }
                    }
                }
            }
        }
    };
    let page = Page::new(format!("{name} — Table bucket — Tablebay console"), viewer)
        .crumb("Table buckets", "/console/buckets")
        .crumb(name, base.clone());
    Ok(layout::respond(status, page.render(body)))
}
