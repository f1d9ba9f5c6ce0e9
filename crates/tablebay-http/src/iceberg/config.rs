//! `GET /v1/config?warehouse=<bucket ARN>`: which bucket the client works with (`prefix`), where its data plane
//! is, and exactly which endpoints exist (`reference/iceberg-rest.md` §2, traps 7, 8 and 13).

use std::collections::BTreeMap;

use super::context::{Lookups, Reply, prefix_of};
use super::error::IcebergError;
use super::router::ADVERTISED_ENDPOINTS;
use super::wire::ConfigResponse;
use crate::pipeline::Context;

/// `GET /v1/config`. The warehouse is a table bucket ARN (either flavor), the `<account>.<bucket>` prefix, or a
/// bucket name of the caller's account; it is required, since every path carries a bucket.
pub(super) async fn get(ctx: &Context<'_>, warehouse: Option<&str>) -> Result<Reply, IcebergError> {
    let warehouse = warehouse.filter(|w| !w.is_empty()).ok_or_else(|| {
        IcebergError::bad_request(
            "The warehouse parameter is required: set warehouse to the table bucket ARN",
        )
    })?;
    let bucket = ctx.bucket(warehouse).await?;
    let region = &ctx.catalog().config().region;
    let mut overrides = ctx.app.iceberg.storage_config(region);
    overrides.insert("prefix".to_string(), prefix_of(&bucket.arn));
    Reply::json(&ConfigResponse {
        defaults: BTreeMap::new(),
        overrides,
        endpoints: ADVERTISED_ENDPOINTS.to_vec(),
        idempotency_key_lifetime: super::idempotency::LIFETIME_ISO,
    })
}
