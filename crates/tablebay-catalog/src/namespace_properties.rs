//! Iceberg namespace properties: the update-properties operation (set some keys, remove others) with the
//! report Iceberg REST answers with (`updated`, `removed`, `missing`).

use std::collections::BTreeMap;

use crate::{Catalog, CatalogError, Namespace};

/// What an update of namespace properties did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PropertiesUpdate {
    /// Keys that were set.
    pub updated: Vec<String>,
    /// Keys that were removed.
    pub removed: Vec<String>,
    /// Keys asked to be removed that were not there.
    pub missing: Vec<String>,
}

impl Catalog {
    /// Removes `removals` and sets `updates` on a resolved namespace. A key in both is `Invalid`.
    pub async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        removals: &[String],
        updates: &BTreeMap<String, String>,
    ) -> Result<PropertiesUpdate, CatalogError> {
        if let Some(key) = removals.iter().find(|key| updates.contains_key(*key)) {
            return Err(CatalogError::invalid(format!(
                "Cannot remove and update the same key: {key}"
            )));
        }
        let mut properties = namespace.properties.clone();
        let mut report = PropertiesUpdate::default();
        for key in removals {
            if properties.remove(key).is_some() {
                report.removed.push(key.clone());
            } else {
                report.missing.push(key.clone());
            }
        }
        for (key, value) in updates {
            properties.insert(key.clone(), value.clone());
            report.updated.push(key.clone());
        }
        if !report.updated.is_empty() || !report.removed.is_empty() {
            self.set_namespace_properties(namespace, &properties)
                .await?;
        }
        Ok(report)
    }
}
