//! Namespaces: list (with `parent` and pagination), create with properties, load, HEAD, update properties,
//! drop. They are the control plane's namespaces: one level, S3 Tables naming rules.

use std::collections::BTreeMap;

use tablebay_catalog::{NamespaceName, Page, PageRequest};

use super::context::{Lookups, Reply};
use super::error::IcebergError;
use super::router::{PageParams, single_level};
use super::wire::{
    CreateNamespaceRequest, ListNamespacesResponse, NamespaceResponse,
    UpdateNamespacePropertiesRequest, UpdateNamespacePropertiesResponse,
};
use crate::pipeline::Context;

/// The page a list call asks for, or `None` for "everything" (trap 4: PyIceberg 0.10 sends no `pageToken` and
/// does not paginate; Java sends an empty one first).
pub(super) fn page_request(page: &PageParams) -> Result<Option<PageRequest>, IcebergError> {
    let Some(token) = &page.token else {
        return Ok(None);
    };
    let size = match &page.size {
        None => None,
        Some(raw) => Some(
            raw.parse::<i64>()
                .map_err(|_| IcebergError::bad_request(format!("Invalid pageSize '{raw}'")))?,
        ),
    };
    let token = Some(token.as_str()).filter(|t| !t.is_empty());
    Ok(Some(PageRequest::new(None, token, size, 255)?))
}

/// Runs a paged listing: one page when the client pages, else every page.
pub(super) async fn collect<T, F, Fut>(
    page: &PageParams,
    mut list: F,
) -> Result<(Vec<T>, Option<String>), IcebergError>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, IcebergError>>,
{
    if let Some(request) = page_request(page)? {
        let page = list(request).await?;
        return Ok((page.items, page.next.map(|t| t.as_str().to_string())));
    }
    let mut items = Vec::new();
    let mut token = None;
    loop {
        let request = PageRequest::new(None, token.as_deref(), None, 255)?;
        let page = list(request).await?;
        items.extend(page.items);
        match page.next {
            Some(next) => token = Some(next.as_str().to_string()),
            None => return Ok((items, None)),
        }
    }
}

/// `GET /v1/{prefix}/namespaces`. Namespaces have one level, so a `parent` that exists has no children.
pub(super) async fn list(
    ctx: &Context<'_>,
    prefix: &str,
    parent: Option<&str>,
    page: &PageParams,
) -> Result<Reply, IcebergError> {
    if let Some(parent) = parent {
        let parent = single_level(vec![parent.to_string()])?;
        ctx.namespace(prefix, &parent).await?;
        return Reply::json(&ListNamespacesResponse {
            namespaces: Vec::new(),
            next_page_token: None,
        });
    }
    let bucket = ctx.bucket(prefix).await?;
    let arn = bucket.arn.clone();
    let (namespaces, next) = collect(page, |request| {
        let arn = arn.clone();
        async move { Ok(ctx.catalog().list_namespaces(&arn, &request).await?) }
    })
    .await?;
    Reply::json(&ListNamespacesResponse {
        namespaces: namespaces
            .into_iter()
            .map(|n| vec![n.name.to_string()])
            .collect(),
        next_page_token: next,
    })
}

/// `POST /v1/{prefix}/namespaces`.
pub(super) async fn create(
    ctx: &Context<'_>,
    prefix: &str,
    req: CreateNamespaceRequest,
) -> Result<Reply, IcebergError> {
    let raw = single_level(req.namespace)?;
    let name = NamespaceName::parse(&raw)?;
    let bucket = ctx.bucket(prefix).await?;
    let namespace = ctx
        .catalog()
        .create_namespace(
            &bucket.arn,
            name,
            req.properties.unwrap_or_default(),
            &ctx.account,
        )
        .await
        .map_err(|e| IcebergError::for_namespace(e, &raw))?;
    Reply::json(&NamespaceResponse {
        namespace: vec![namespace.name.to_string()],
        properties: namespace.properties,
    })
}

/// `GET /v1/{prefix}/namespaces/{namespace}`.
pub(super) async fn load(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
) -> Result<Reply, IcebergError> {
    let namespace = ctx.namespace(prefix, namespace).await?;
    Reply::json(&NamespaceResponse {
        namespace: vec![namespace.name.to_string()],
        properties: namespace.properties,
    })
}

/// `HEAD /v1/{prefix}/namespaces/{namespace}`: 204 or 404 (trap 11).
pub(super) async fn exists(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
) -> Result<Reply, IcebergError> {
    ctx.namespace(prefix, namespace).await?;
    Ok(Reply::no_content())
}

/// `DELETE /v1/{prefix}/namespaces/{namespace}`: 409 NamespaceNotEmptyException while it holds tables or views.
pub(super) async fn drop(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
) -> Result<Reply, IcebergError> {
    let resolved = ctx.namespace(prefix, namespace).await?;
    ctx.catalog()
        .delete_namespace(&resolved.bucket.arn, &resolved.name)
        .await
        .map_err(|e| IcebergError::for_namespace(e, namespace))?;
    Ok(Reply::no_content())
}

/// `POST /v1/{prefix}/namespaces/{namespace}/properties`: 422 when a key is both removed and updated.
pub(super) async fn update_properties(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    req: UpdateNamespacePropertiesRequest,
) -> Result<Reply, IcebergError> {
    let removals = req.removals.unwrap_or_default();
    let updates: BTreeMap<String, String> = req.updates.unwrap_or_default();
    if let Some(key) = removals.iter().find(|k| updates.contains_key(*k)) {
        return Err(IcebergError::unprocessable(format!(
            "Cannot remove and update the same key: {key}"
        )));
    }
    let resolved = ctx.namespace(prefix, namespace).await?;
    let report = ctx
        .catalog()
        .update_namespace_properties(&resolved, &removals, &updates)
        .await
        .map_err(|e| IcebergError::for_namespace(e, namespace))?;
    Reply::json(&UpdateNamespacePropertiesResponse {
        updated: report.updated,
        removed: report.removed,
        missing: report.missing,
    })
}
