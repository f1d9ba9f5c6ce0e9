//! What every Iceberg handler shares: the lookups of the prefix and namespaces a path names ([`Lookups`], on the
//! pipeline's request context) and [`Reply`], the status, body and headers a handler answers with
//! (kept as bytes so that an idempotent mutation's answer can be stored and replayed as sent).

use std::collections::BTreeMap;

use std::future::Future;

use bytes::Bytes;
use http::StatusCode;
use serde::Serialize;
use tablebay_auth::BearerTokens;
use tablebay_catalog::{AccountId, BucketArn, BucketName, Namespace, NamespaceName, TableBucket};

use super::error::IcebergError;
use crate::pipeline::Context;

/// Settings of the Iceberg surface: where the data plane is, and the bearer-token issuer.
#[derive(Clone, Debug)]
pub struct IcebergSettings {
    /// The S3 data plane's URL as clients reach it (`s3.endpoint` in config and table responses).
    pub s3_public_url: String,
    /// Issues and checks OAuth2 bearer tokens.
    pub tokens: BearerTokens,
    /// The sessions the remote signer signs with, per caller and table.
    pub(crate) signing: super::sign::SigningSessions,
}

impl IcebergSettings {
    /// Settings with tokens keyed from the root secret (see `tablebay_auth::BearerTokens`).
    pub fn new(root_secret: &str, s3_public_url: String) -> Self {
        Self {
            s3_public_url,
            tokens: BearerTokens::derive(root_secret, BearerTokens::DEFAULT_LIFETIME_SECS),
            signing: super::sign::SigningSessions::default(),
        }
    }

    /// The FileIO properties every client gets: where the data plane is and how to address it.
    pub(crate) fn storage_config(&self, region: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("s3.endpoint".to_string(), self.s3_public_url.clone()),
            ("s3.path-style-access".to_string(), "true".to_string()),
            ("client.region".to_string(), region.to_string()),
            ("s3.region".to_string(), region.to_string()),
        ])
    }
}

/// The `prefix` of a bucket: `<account>.<bucket name>`, only `[0-9a-z.-]` (trap 7).
pub(crate) fn prefix_of(bucket: &BucketArn) -> String {
    format!("{}.{}", bucket.account, bucket.name)
}

/// What a handler answers with.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub status: StatusCode,
    /// A JSON body, if any.
    pub body: Option<Bytes>,
    /// An `ETag` header value (quoted), if any.
    pub etag: Option<String>,
    /// The answer was stored under its `Idempotency-Key` with the mutation itself (commits).
    pub remembered: bool,
}

impl Reply {
    /// 200 with a JSON body.
    pub(crate) fn json<T: Serialize>(value: &T) -> Result<Self, IcebergError> {
        let body = serde_json::to_vec(value).map_err(|e| {
            IcebergError::from(tablebay_catalog::ServiceError::Internal(e.to_string()))
        })?;
        Ok(Self {
            status: StatusCode::OK,
            body: Some(Bytes::from(body)),
            etag: None,
            remembered: false,
        })
    }

    /// 200 with a JSON body already serialized.
    pub(crate) fn raw_json(body: Vec<u8>) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(Bytes::from(body)),
            etag: None,
            remembered: false,
        }
    }

    /// 204 without a body (drop, rename, HEAD, metrics, transactions: trap 1).
    pub(crate) fn no_content() -> Self {
        Self {
            status: StatusCode::NO_CONTENT,
            body: None,
            etag: None,
            remembered: false,
        }
    }
}

/// The Iceberg surface's lookups of what a path names, on the request context of the pipeline.
pub(crate) trait Lookups {
    /// The bucket a prefix or warehouse names: a bucket ARN (either flavor), the `<account>.<bucket>` prefix,
    /// or a bare bucket name of the caller's account. Not yet resolved.
    fn bucket_arn(&self, prefix: &str) -> Result<BucketArn, IcebergError>;

    /// The bucket of a prefix, resolved; a missing bucket is a missing warehouse.
    fn bucket(
        &self,
        prefix: &str,
    ) -> impl Future<Output = Result<TableBucket, IcebergError>> + Send;

    /// A namespace named in a path, resolved: NoSuchNamespace when it is missing or its name could not exist.
    fn namespace(
        &self,
        prefix: &str,
        namespace: &str,
    ) -> impl Future<Output = Result<Namespace, IcebergError>> + Send;
}

impl Lookups for Context<'_> {
    fn bucket_arn(&self, prefix: &str) -> Result<BucketArn, IcebergError> {
        let config = self.app.catalog.config();
        let arn = if prefix.contains(':') {
            BucketArn::parse(prefix).map_err(|_| {
                IcebergError::bad_request(format!("Invalid prefix or warehouse '{prefix}'"))
            })?
        } else {
            let (account, name) = match prefix.split_once('.') {
                Some((account, name)) => (AccountId::parse(account)?, name),
                None => (self.account.clone(), prefix),
            };
            let name = BucketName::parse(name)?;
            BucketArn {
                flavor: config.flavor,
                region: config.region.clone(),
                account,
                name,
            }
        };
        Ok(arn.with_flavor(config.flavor))
    }

    async fn bucket(&self, prefix: &str) -> Result<TableBucket, IcebergError> {
        let arn = self.bucket_arn(prefix)?;
        self.app.catalog.bucket(&arn).await.map_err(|e| match e {
            tablebay_catalog::ServiceError::NotFound(_) => IcebergError::no_such_warehouse(prefix),
            other => other.into(),
        })
    }

    async fn namespace(&self, prefix: &str, namespace: &str) -> Result<Namespace, IcebergError> {
        let bucket = self.bucket(prefix).await?;
        let name = NamespaceName::parse(namespace)
            .map_err(|_| IcebergError::no_such_namespace(namespace))?;
        self.app
            .catalog
            .namespace_in(&bucket, &name)
            .await
            .map_err(|e| IcebergError::for_namespace(e, namespace))
    }
}
