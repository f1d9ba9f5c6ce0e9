//! The `s3s::S3` implementation: one line per operation, delegating to `objects.rs`, `list.rs` and
//! `multipart.rs`. Operations not listed here answer s3s's `NotImplemented`.

use http::Extensions;
use s3s::dto::*;
use s3s::{S3, S3Error, S3ErrorCode, S3Request, S3Response, S3Result};
use tablebay_auth::Principal;
use tablebay_catalog::{Catalog, TableStorage};
use tablebay_objects::{ObjectError, ObjectKey, Objects, Storage};
use uuid::Uuid;

use super::auth::S3Context;
use super::error::{catalog_error, no_such_bucket, s3_error};
use super::router::RequestContext;
use super::{list, multipart, objects};

/// The data plane: the object service behind the S3 API, and the catalog for what it knows of buckets (the
/// region, a copy source's table).
pub(crate) struct DataPlane {
    pub catalog: Catalog,
    pub objects: Objects,
}

/// What an operation knows about its request: who, which table, which request id.
pub(crate) struct Ctx {
    pub principal: Principal,
    table: Option<TableStorage>,
    request: Option<RequestContext>,
    iam: tablebay_iam::Iam,
    access: tablebay_iam::AccessContext,
}

impl Ctx {
    /// The context the access check left in the request's extensions.
    pub(crate) fn of(extensions: &Extensions) -> S3Result<Self> {
        let request = extensions.get::<RequestContext>().cloned();
        let Some(context) = extensions.get::<S3Context>().cloned() else {
            // Only reachable if the service were built without its access check.
            return Err(S3Error::with_message(
                S3ErrorCode::AccessDenied,
                "The request was not authorized",
            ));
        };
        Ok(Self {
            principal: context.principal,
            table: context.table,
            request,
            iam: context.iam,
            access: context.access,
        })
    }

    /// Authorizes `action` on another table than the bucket's (CopyObject's source).
    pub(crate) async fn authorize(
        &self,
        action: super::auth::DataAction,
        table: &TableStorage,
    ) -> S3Result<()> {
        super::auth::authorize(&self.iam, &self.principal, action, table, &self.access).await
    }

    /// The bucket's table.
    pub(crate) fn table(&self) -> S3Result<&TableStorage> {
        self.table
            .as_ref()
            .ok_or_else(|| no_such_bucket(self.request.as_ref()))
    }

    /// The bucket's table, for reads, deletes and listings.
    pub(crate) fn table_id(&self) -> S3Result<Uuid> {
        self.table().map(TableStorage::table_id)
    }

    /// The bucket's storage, for writes.
    pub(crate) fn storage(&self) -> S3Result<&Storage> {
        self.table().map(|table| &table.storage)
    }

    /// The table whose storage bucket is `bucket` (CopyObject's source); `NoSuchBucket` if none.
    pub(crate) async fn resolve(&self, catalog: &Catalog, bucket: &str) -> S3Result<TableStorage> {
        catalog
            .table_storage(bucket)
            .await
            .map_err(|e| catalog_error(e, self.request.as_ref()))?
            .ok_or_else(|| no_such_bucket(self.request.as_ref()))
    }

    /// A validated object key.
    pub(crate) fn key(&self, key: &str) -> S3Result<ObjectKey> {
        ObjectKey::parse(key).map_err(|e| self.error(e))
    }

    /// `MalformedXML` with this request's id.
    pub(crate) fn malformed_xml(&self, message: impl Into<String>) -> S3Error {
        super::error::malformed_xml(message, self.request.as_ref())
    }

    /// An object-service error as S3's, with this request's id.
    pub(crate) fn error(&self, err: ObjectError) -> S3Error {
        s3_error(err, self.request.as_ref())
    }
}

#[async_trait::async_trait]
impl S3 for DataPlane {
    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        objects::put_object(&self.objects, self.catalog.table_counters(), req).await
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        objects::get_object(&self.objects, self.catalog.table_counters(), req).await
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        objects::head_object(&self.objects, req).await
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        objects::delete_object(&self.objects, req).await
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        objects::delete_objects(&self.objects, req).await
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        objects::copy_object(&self.catalog, &self.objects, req).await
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        objects::head_bucket(&self.catalog, req).await
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        objects::get_bucket_location(&self.catalog, req).await
    }

    async fn list_buckets(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        objects::list_buckets(req).await
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        list::list_objects_v2(&self.objects, req).await
    }

    async fn list_objects(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        list::list_objects(&self.objects, req).await
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        multipart::create(&self.objects, req).await
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        multipart::upload_part(&self.objects, self.catalog.table_counters(), req).await
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        multipart::complete(&self.objects, req).await
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        multipart::abort(&self.objects, req).await
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        multipart::list_parts(&self.objects, req).await
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        multipart::list_uploads(&self.objects, req).await
    }
}
