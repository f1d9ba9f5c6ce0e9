//! Iceberg namespace properties: their size limits, and the update-properties operation (set some keys, remove
//! others) with the report Iceberg REST answers with (`updated`, `removed`, `missing`).
//!
//! The limits follow the AWS Glue/Athena database parameters (keys of 1 to 255 bytes, values of at most
//! 51,200 bytes), with at most 100 properties and 256 KiB in all per namespace, so one namespace row stays small
//! whatever a client sends.

use std::collections::BTreeMap;

use crate::{Catalog, Namespace, ServiceError};

/// Most properties one namespace carries.
pub const MAX_NAMESPACE_PROPERTIES: usize = 100;
/// Longest property key, in bytes.
pub const MAX_NAMESPACE_PROPERTY_KEY_BYTES: usize = 255;
/// Longest property value, in bytes.
pub const MAX_NAMESPACE_PROPERTY_VALUE_BYTES: usize = 51_200;
/// Most bytes of keys and values together.
pub const MAX_NAMESPACE_PROPERTIES_BYTES: usize = 256 * 1024;

/// Checks a namespace's properties against the limits; `Invalid` names the first one exceeded.
pub(crate) fn check_properties(properties: &BTreeMap<String, String>) -> Result<(), ServiceError> {
    if properties.len() > MAX_NAMESPACE_PROPERTIES {
        return Err(ServiceError::invalid(format!(
            "A namespace may have at most {MAX_NAMESPACE_PROPERTIES} properties ({} given)",
            properties.len()
        )));
    }
    let mut total = 0usize;
    for (key, value) in properties {
        if key.is_empty() || key.len() > MAX_NAMESPACE_PROPERTY_KEY_BYTES {
            return Err(ServiceError::invalid(format!(
                "A namespace property key must be 1 to {MAX_NAMESPACE_PROPERTY_KEY_BYTES} bytes long ({} given)",
                key.len()
            )));
        }
        if value.len() > MAX_NAMESPACE_PROPERTY_VALUE_BYTES {
            return Err(ServiceError::invalid(format!(
                "The value of namespace property '{key}' is longer than {MAX_NAMESPACE_PROPERTY_VALUE_BYTES} bytes"
            )));
        }
        total = total.saturating_add(key.len() + value.len());
    }
    if total > MAX_NAMESPACE_PROPERTIES_BYTES {
        return Err(ServiceError::invalid(format!(
            "A namespace's properties may hold at most {MAX_NAMESPACE_PROPERTIES_BYTES} bytes of keys and values ({total} given)"
        )));
    }
    Ok(())
}

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
    /// Removes `removals` and sets `updates` on a resolved namespace. A key in both is `Invalid`, and so is an
    /// update after which the properties exceed the limits ([`MAX_NAMESPACE_PROPERTIES`] and the others; an
    /// update that only removes keys is always allowed).
    pub async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        removals: &[String],
        updates: &BTreeMap<String, String>,
    ) -> Result<PropertiesUpdate, ServiceError> {
        if let Some(key) = removals.iter().find(|key| updates.contains_key(*key)) {
            return Err(ServiceError::invalid(format!(
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
        if !updates.is_empty() {
            check_properties(&properties)?;
        }
        if !report.updated.is_empty() || !report.removed.is_empty() {
            self.set_namespace_properties(namespace, &properties)
                .await?;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn limits() {
        assert!(check_properties(&props(&[("owner", "alice"), ("comment", "")])).is_ok());
        let key = "k".repeat(MAX_NAMESPACE_PROPERTY_KEY_BYTES);
        let value = "v".repeat(MAX_NAMESPACE_PROPERTY_VALUE_BYTES);
        assert!(check_properties(&props(&[(&key, &value)])).is_ok());
        let long_key = "k".repeat(MAX_NAMESPACE_PROPERTY_KEY_BYTES + 1);
        let long_value = "v".repeat(MAX_NAMESPACE_PROPERTY_VALUE_BYTES + 1);
        for bad in [
            props(&[("", "x")]),
            props(&[(&long_key, "x")]),
            props(&[("k", &long_value)]),
        ] {
            assert!(matches!(
                check_properties(&bad),
                Err(ServiceError::Invalid(_))
            ));
        }
        let many: BTreeMap<String, String> = (0..=MAX_NAMESPACE_PROPERTIES)
            .map(|i| (format!("k{i}"), String::new()))
            .collect();
        assert!(matches!(
            check_properties(&many),
            Err(ServiceError::Invalid(_))
        ));
        let big: BTreeMap<String, String> =
            (0..6).map(|i| (format!("k{i}"), value.clone())).collect();
        assert!(matches!(
            check_properties(&big),
            Err(ServiceError::Invalid(_))
        ));
    }
}
