//! Views: list, create, register, load, HEAD, replace (commit), drop and rename, so engines need no view workarounds.
//! LoadViewResult is `{metadata-location, metadata, config}`.

use tablebay_catalog::spec::ViewUpdate;
use tablebay_catalog::{IcebergView, TableName, ViewChange, ViewDefinition, ViewRequirement};

use super::context::{Lookups, Reply};
use super::error::IcebergError;
use super::router::{Ident, PageParams};
use super::wire::{
    CommitViewRequest, CreateViewRequest, ListTablesResponse, RegisterViewRequest, TableIdentifier,
};
use crate::pipeline::{Context, WireError};

fn view_name(ident: &Ident) -> Result<TableName, IcebergError> {
    TableName::parse(&ident.name).map_err(|_| IcebergError::no_such_view(ident))
}

/// The namespace of a view named in a path: a missing namespace is a missing view.
async fn view_namespace(
    ctx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<tablebay_catalog::Namespace, IcebergError> {
    ctx.namespace(prefix, &ident.namespace).await.map_err(|e| {
        if e.status() == http::StatusCode::NOT_FOUND {
            IcebergError::no_such_view(ident)
        } else {
            e
        }
    })
}

fn load_result(view: &IcebergView) -> Vec<u8> {
    let location = serde_json::to_string(&view.metadata_location).unwrap_or_else(|_| "null".into());
    let mut body = Vec::with_capacity(view.json.len() + location.len() + 48);
    body.extend_from_slice(b"{\"metadata-location\":");
    body.extend_from_slice(location.as_bytes());
    body.extend_from_slice(b",\"metadata\":");
    body.extend_from_slice(&view.json);
    body.extend_from_slice(b",\"config\":{}}");
    body
}

/// `GET /v1/{prefix}/namespaces/{namespace}/views` (every view on one page).
pub(super) async fn list(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    _page: &PageParams,
) -> Result<Reply, IcebergError> {
    let resolved = ctx.namespace(prefix, namespace).await?;
    let names = ctx.catalog().list_views(&resolved).await?;
    Reply::json(&ListTablesResponse {
        identifiers: names
            .into_iter()
            .map(|name| TableIdentifier {
                namespace: vec![resolved.name.to_string()],
                name: name.to_string(),
            })
            .collect(),
        next_page_token: None,
    })
}

/// `POST /v1/{prefix}/namespaces/{namespace}/views`.
pub(super) async fn create(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    req: CreateViewRequest,
) -> Result<Reply, IcebergError> {
    let ident = Ident {
        namespace: namespace.to_string(),
        name: req.name.clone(),
    };
    let name = TableName::parse(&req.name)?;
    let resolved = ctx.namespace(prefix, namespace).await?;
    let definition = ViewDefinition {
        schema: req.schema,
        version: req.view_version,
        properties: req.properties.unwrap_or_default(),
    };
    let view = ctx
        .catalog()
        .create_view(&resolved, &name, definition, &ctx.account)
        .await
        .map_err(|e| IcebergError::for_view(e, &ident))?;
    Ok(Reply::raw_json(load_result(&view)))
}

/// `POST /v1/{prefix}/namespaces/{namespace}/register-view`: an existing view-metadata file becomes a view (see
/// `Catalog::register_view` for which files may be adopted).
pub(super) async fn register(
    ctx: &Context<'_>,
    prefix: &str,
    namespace: &str,
    req: RegisterViewRequest,
) -> Result<Reply, IcebergError> {
    let ident = Ident {
        namespace: namespace.to_string(),
        name: req.name.clone(),
    };
    let name = TableName::parse(&req.name)?;
    let resolved = ctx.namespace(prefix, namespace).await?;
    let view = ctx
        .catalog()
        .register_view(&resolved, &name, &req.metadata_location, &ctx.account)
        .await
        .map_err(|e| match e {
            tablebay_catalog::ServiceError::AlreadyExists(message) => {
                IcebergError::already_exists(message)
            }
            other => IcebergError::for_view(other, &ident),
        })?;
    Ok(Reply::raw_json(load_result(&view)))
}

/// `GET /v1/{prefix}/namespaces/{namespace}/views/{view}`.
pub(super) async fn load(
    ctx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let namespace = view_namespace(ctx, prefix, ident).await?;
    let view = ctx
        .catalog()
        .view(&namespace, &view_name(ident)?)
        .await
        .map_err(|e| IcebergError::for_view(e, ident))?;
    Ok(Reply::raw_json(load_result(&view)))
}

/// `HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}`: 204 or 404.
pub(super) async fn exists(
    ctx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let namespace = view_namespace(ctx, prefix, ident).await?;
    if ctx
        .catalog()
        .view_exists(&namespace, &view_name(ident)?)
        .await?
    {
        Ok(Reply::no_content())
    } else {
        Err(IcebergError::no_such_view(ident))
    }
}

/// `POST /v1/{prefix}/namespaces/{namespace}/views/{view}`: replace (requirements `assert-view-uuid`).
pub(super) async fn replace(
    ctx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
    req: CommitViewRequest,
) -> Result<Reply, IcebergError> {
    let requirements = req
        .requirements
        .into_iter()
        .map(|r| {
            serde_json::from_value::<ViewRequirement>(r)
                .map_err(|e| IcebergError::bad_request(format!("Invalid requirement: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let updates = req
        .updates
        .into_iter()
        .map(|u| {
            serde_json::from_value::<ViewUpdate>(u)
                .map_err(|e| IcebergError::bad_request(format!("Invalid update: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let namespace = view_namespace(ctx, prefix, ident).await?;
    let view = ctx
        .catalog()
        .replace_view(
            &namespace,
            &view_name(ident)?,
            ViewChange {
                requirements,
                updates,
            },
            &ctx.account,
        )
        .await
        .map_err(|e| IcebergError::for_view(e, ident))?;
    Ok(Reply::raw_json(load_result(&view)))
}

/// `DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}`.
pub(super) async fn drop(
    ctx: &Context<'_>,
    prefix: &str,
    ident: &Ident,
) -> Result<Reply, IcebergError> {
    let namespace = view_namespace(ctx, prefix, ident).await?;
    ctx.catalog()
        .drop_view(&namespace, &view_name(ident)?)
        .await
        .map_err(|e| IcebergError::for_view(e, ident))?;
    Ok(Reply::no_content())
}

/// `POST /v1/{prefix}/views/rename`.
pub(super) async fn rename(
    ctx: &Context<'_>,
    prefix: &str,
    source: &Ident,
    destination: &Ident,
) -> Result<Reply, IcebergError> {
    let namespace = view_namespace(ctx, prefix, source).await?;
    let name = view_name(source)?;
    if !ctx.catalog().view_exists(&namespace, &name).await? {
        return Err(IcebergError::no_such_view(source));
    }
    let target = ctx.namespace(prefix, &destination.namespace).await?;
    let new_name = TableName::parse(&destination.name)?;
    ctx.catalog()
        .rename_view(&namespace, &name, &target, &new_name, &ctx.account)
        .await
        .map_err(|e| IcebergError::for_view(e, source))?;
    Ok(Reply::no_content())
}
