//! Tags on buckets and tables (TagResource, UntagResource, ListTagsForResource).

use tablebay_store::meta::AttributeKey;
use uuid::Uuid;

use crate::{Catalog, ResourceArn, ServiceError, TableRef, Tags};

impl Catalog {
    async fn resource_id(&self, arn: &ResourceArn) -> Result<Uuid, ServiceError> {
        Ok(match arn {
            ResourceArn::Bucket(bucket) => self.bucket(bucket).await?.id,
            ResourceArn::Table(table) => self.table(&TableRef::Arn(table.clone())).await?.id,
        })
    }

    /// The resource's tags.
    pub async fn tags(&self, arn: &ResourceArn) -> Result<Tags, ServiceError> {
        let id = self.resource_id(arn).await?;
        Ok(self
            .setting(id, AttributeKey::Tags)
            .await?
            .unwrap_or_default())
    }

    /// Adds or overwrites tags; the result must stay within the tag limit.
    pub async fn tag_resource(&self, arn: &ResourceArn, tags: Tags) -> Result<(), ServiceError> {
        let id = self.resource_id(arn).await?;
        let mut current: Tags = self
            .setting(id, AttributeKey::Tags)
            .await?
            .unwrap_or_default();
        current.0.extend(tags.0);
        let merged = Tags::new(current.0)?;
        self.set_setting(id, AttributeKey::Tags, &merged).await
    }

    /// Removes the named tags (missing keys are ignored).
    pub async fn untag_resource(
        &self,
        arn: &ResourceArn,
        keys: &[String],
    ) -> Result<(), ServiceError> {
        let id = self.resource_id(arn).await?;
        let mut current: Tags = self
            .setting(id, AttributeKey::Tags)
            .await?
            .unwrap_or_default();
        for key in keys {
            current.0.remove(key);
        }
        self.set_setting(id, AttributeKey::Tags, &current).await
    }
}
