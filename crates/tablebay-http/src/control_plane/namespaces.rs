//! CreateNamespace, GetNamespace, ListNamespaces, DeleteNamespace.

use std::collections::BTreeMap;

use axum::response::Response;
use tablebay_catalog::{Catalog, Namespace, NamespaceName};

use super::error::ControlPlaneError;
use super::request::{RequestContext, json, no_content, page_request};
use super::router::ListQuery;
use super::wire::{
    CreateNamespaceRequest, CreateNamespaceResponse, ListNamespacesResponse, NamespaceSummary,
    timestamp,
};

fn summary(namespace: &Namespace) -> NamespaceSummary {
    NamespaceSummary {
        namespace: vec![namespace.name.to_string()],
        created_at: timestamp(&namespace.created_at),
        created_by: namespace.created_by.clone(),
        owner_account_id: namespace.bucket.arn.account.to_string(),
        namespace_id: namespace.id.to_string(),
        table_bucket_id: namespace.bucket.id.to_string(),
    }
}

/// `PUT /namespaces/{tableBucketARN}`.
pub(super) async fn create(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    req: CreateNamespaceRequest,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    // S3 Tables namespaces have exactly one level (§3.2: a list of exactly one NamespaceName).
    let [name] = req.namespace.as_slice() else {
        return Err(ControlPlaneError::BadRequest(
            "namespace must be a list of exactly one name".to_string(),
        ));
    };
    let name = NamespaceName::parse(name)?;
    let namespace = catalog
        .create_namespace(&bucket, name, BTreeMap::new(), &ctx.account)
        .await?;
    json(&CreateNamespaceResponse {
        table_bucket_arn: namespace.bucket.arn.to_string(),
        namespace: vec![namespace.name.to_string()],
    })
}

/// `GET /namespaces/{tableBucketARN}/{namespace}`.
pub(super) async fn get(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    namespace: &str,
) -> Result<Response, ControlPlaneError> {
    let namespace = catalog
        .namespace(&ctx.bucket_arn(bucket)?, &NamespaceName::parse(namespace)?)
        .await?;
    json(&summary(&namespace))
}

/// `GET /namespaces/{tableBucketARN}`.
pub(super) async fn list(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    query: &ListQuery,
) -> Result<Response, ControlPlaneError> {
    let bucket = ctx.bucket_arn(bucket)?;
    let page = catalog
        .list_namespaces(&bucket, &page_request(query, 255)?)
        .await?;
    json(&ListNamespacesResponse {
        namespaces: page.items.iter().map(summary).collect(),
        continuation_token: page.next.map(|t| t.as_str().to_string()),
    })
}

/// `DELETE /namespaces/{tableBucketARN}/{namespace}`.
pub(super) async fn delete(
    catalog: &Catalog,
    ctx: &RequestContext,
    bucket: &str,
    namespace: &str,
) -> Result<Response, ControlPlaneError> {
    catalog
        .delete_namespace(&ctx.bucket_arn(bucket)?, &NamespaceName::parse(namespace)?)
        .await?;
    no_content()
}
