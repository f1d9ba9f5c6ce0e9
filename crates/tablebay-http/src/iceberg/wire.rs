//! Request and response bodies of the Iceberg REST catalog (`open-api/rest-catalog-open-api.yaml`), and the
//! body parsing every handler shares. Spec types (requirements, updates, metadata) are iceberg-rust's, through
//! `tablebay_catalog::spec`; these structs are only the envelopes.
//!
//! Always-present members follow trap 13: `defaults`/`overrides`, `properties: {}`, `missing: []`, and the
//! `namespaces`/`identifiers` arrays; a `next-page-token` is omitted on the last page, never `""` (trap 4).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use tablebay_catalog::spec::{Schema, TableRequirement, TableUpdate, ViewVersion};

use super::error::IcebergError;

/// `GET /v1/config`.
#[derive(Serialize, Debug)]
pub(crate) struct ConfigResponse {
    pub defaults: BTreeMap<String, String>,
    pub overrides: BTreeMap<String, String>,
    pub endpoints: Vec<&'static str>,
    /// How long an `Idempotency-Key` is honoured (ISO-8601 duration; newer spec, ignored by older clients).
    #[serde(rename = "idempotency-key-lifetime")]
    pub idempotency_key_lifetime: &'static str,
}

/// A namespace as levels.
pub(crate) type NamespaceLevels = Vec<String>;

/// `GET /v1/{prefix}/namespaces`.
#[derive(Serialize, Debug)]
pub(crate) struct ListNamespacesResponse {
    pub namespaces: Vec<NamespaceLevels>,
    #[serde(rename = "next-page-token", skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST /v1/{prefix}/namespaces`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct CreateNamespaceRequest {
    pub namespace: NamespaceLevels,
    #[serde(default)]
    pub properties: Option<BTreeMap<String, String>>,
}

/// A namespace and its properties (create and load).
#[derive(Serialize, Debug)]
pub(crate) struct NamespaceResponse {
    pub namespace: NamespaceLevels,
    pub properties: BTreeMap<String, String>,
}

/// `POST /v1/{prefix}/namespaces/{namespace}/properties`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct UpdateNamespacePropertiesRequest {
    #[serde(default)]
    pub removals: Option<Vec<String>>,
    #[serde(default)]
    pub updates: Option<BTreeMap<String, String>>,
}

/// Its answer; `missing` is always present (PyIceberg 0.10 requires it).
#[derive(Serialize, Debug)]
pub(crate) struct UpdateNamespacePropertiesResponse {
    pub updated: Vec<String>,
    pub removed: Vec<String>,
    pub missing: Vec<String>,
}

/// A table or view identifier in a body.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct TableIdentifier {
    pub namespace: NamespaceLevels,
    pub name: String,
}

/// `GET …/tables` and `GET …/views`.
#[derive(Serialize, Debug)]
pub(crate) struct ListTablesResponse {
    pub identifiers: Vec<TableIdentifier>,
    #[serde(rename = "next-page-token", skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST …/tables`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct CreateTableRequest {
    pub name: String,
    /// Ignored: every table lives in its own storage (run the RCK with `rck.overrides-requested-location=true`).
    #[serde(default)]
    #[allow(dead_code)]
    pub location: Option<String>,
    pub schema: serde_json::Value,
    #[serde(default)]
    pub partition_spec: Option<serde_json::Value>,
    #[serde(default)]
    pub write_order: Option<serde_json::Value>,
    #[serde(default)]
    pub stage_create: Option<bool>,
    #[serde(default)]
    pub properties: Option<BTreeMap<String, String>>,
}

/// `POST …/register`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct RegisterTableRequest {
    pub name: String,
    pub metadata_location: String,
    #[serde(default)]
    pub overwrite: Option<bool>,
}

/// `POST …/register-view` (`RegisterViewRequest`).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct RegisterViewRequest {
    pub name: String,
    pub metadata_location: String,
}

/// `POST …/tables/{table}/sign` and `POST /v1/aws/s3/sign` (`RemoteSignRequest`): an S3 request to sign.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct RemoteSignRequest {
    pub region: String,
    pub uri: String,
    pub method: String,
    /// `MultiValuedMap`: each header with its values.
    pub headers: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub properties: Option<BTreeMap<String, String>>,
    /// Only for requests whose body must be checked before signing (S3 DeleteObjects); not needed here, since
    /// every key of the table's storage is the table's.
    #[serde(default)]
    pub body: Option<String>,
    /// `s3` when absent.
    #[serde(default)]
    pub provider: Option<String>,
}

/// The answer to a sign request (`RemoteSignResult`): the URI to send to and the headers to add.
#[derive(Serialize, Debug)]
pub(crate) struct RemoteSignResponse {
    pub uri: String,
    pub headers: BTreeMap<String, Vec<String>>,
}

/// `POST …/tables/rename` and `POST …/views/rename`.
#[derive(Deserialize, Debug)]
pub(crate) struct RenameRequest {
    pub source: TableIdentifier,
    pub destination: TableIdentifier,
}

/// The raw form of a commit's requirements and updates, before legacy spellings are normalised.
#[derive(Deserialize, Debug)]
pub(crate) struct CommitTableRequestWire {
    #[serde(default)]
    pub identifier: Option<TableIdentifier>,
    #[serde(default)]
    pub requirements: Vec<serde_json::Value>,
    #[serde(default)]
    pub updates: Vec<serde_json::Value>,
}

/// `POST …/tables/{table}` (`identifier` is optional there; Java omits it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommitTableRequest {
    pub identifier: Option<TableIdentifier>,
    pub requirements: Vec<TableRequirement>,
    pub updates: Vec<TableUpdate>,
}

/// `POST …/transactions/commit`.
#[derive(Deserialize, Debug)]
pub(crate) struct CommitTransactionRequestWire {
    #[serde(rename = "table-changes")]
    pub table_changes: Vec<CommitTableRequestWire>,
}

impl CommitTableRequestWire {
    /// Parses requirements and updates into the spec types; an unknown `type`/`action` is a 400. Accepts the
    /// legacy member names `updated` (set-properties) and `removed` (remove-properties) that old clients send.
    pub(crate) fn into_request(self) -> Result<CommitTableRequest, IcebergError> {
        let requirements = self
            .requirements
            .into_iter()
            .map(|r| {
                serde_json::from_value(r)
                    .map_err(|e| IcebergError::bad_request(format!("Invalid requirement: {e}")))
            })
            .collect::<Result<Vec<TableRequirement>, _>>()?;
        let updates = self
            .updates
            .into_iter()
            .map(|mut u| {
                if let Some(object) = u.as_object_mut() {
                    for (legacy, current) in [("updated", "updates"), ("removed", "removals")] {
                        if !object.contains_key(current)
                            && let Some(value) = object.remove(legacy)
                        {
                            object.insert(current.to_string(), value);
                        }
                    }
                }
                serde_json::from_value(u)
                    .map_err(|e| IcebergError::bad_request(format!("Invalid update: {e}")))
            })
            .collect::<Result<Vec<TableUpdate>, _>>()?;
        Ok(CommitTableRequest {
            identifier: self.identifier,
            requirements,
            updates,
        })
    }
}

/// `POST …/tables/{table}/metrics`: only its type is read; reports are accepted and dropped.
#[derive(Deserialize, Debug)]
pub(crate) struct MetricsReport {
    #[serde(rename = "report-type", default)]
    report_type: Option<String>,
}

impl MetricsReport {
    /// A report is a scan report or a commit report.
    pub(crate) fn check(&self) -> Result<(), IcebergError> {
        match self.report_type.as_deref() {
            Some("scan-report" | "commit-report") => Ok(()),
            _ => Err(IcebergError::bad_request(
                "Invalid metrics report: report-type must be scan-report or commit-report",
            )),
        }
    }
}

/// `POST …/views`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct CreateViewRequest {
    pub name: String,
    pub schema: Schema,
    pub view_version: ViewVersion,
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
}

/// `POST …/views/{view}`: requirements and updates as JSON, parsed into the spec types by the handler.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct CommitViewRequest {
    #[serde(default)]
    pub requirements: Vec<serde_json::Value>,
    #[serde(default)]
    pub updates: Vec<serde_json::Value>,
}

/// `POST /v1/oauth/tokens` (form-encoded body).
#[derive(Deserialize, Debug, Default)]
pub(crate) struct TokenRequest {
    #[serde(default)]
    pub grant_type: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub scope: Option<String>,
    /// Token exchange (Java refreshes its token this way): the token to exchange.
    #[serde(default)]
    pub subject_token: Option<String>,
}

/// Its answer (RFC 6749 §5.1 plus Iceberg's `issued_token_type`).
#[derive(Serialize, Debug)]
pub(crate) struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub issued_token_type: &'static str,
}

/// OAuth2 error body (RFC 6749 §5.2).
#[derive(Serialize, Debug)]
pub(crate) struct OAuthErrorResponse {
    pub error: &'static str,
    pub error_description: String,
}

/// `GET …/credentials`.
#[derive(Serialize, Debug)]
pub(crate) struct LoadCredentialsResponse {
    #[serde(rename = "storage-credentials")]
    pub storage_credentials: Vec<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::WireError;

    fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> T {
        serde_json::from_slice(body).unwrap()
    }

    #[test]
    fn commit_requests_accept_legacy_names_and_reject_unknown_actions() {
        let req: CommitTableRequestWire = parse(br#"{"requirements":[{"type":"assert-table-uuid","uuid":"8ab7b6a8-1c2d-4e5f-9a0b-123456789abc"}],
            "updates":[{"action":"set-properties","updated":{"a":"1"}},{"action":"remove-properties","removed":["b"]}]}"#);
        let req = req.into_request().unwrap();
        assert_eq!(req.requirements.len(), 1);
        assert_eq!(req.updates.len(), 2);
        let bad: CommitTableRequestWire =
            parse(br#"{"requirements":[],"updates":[{"action":"explode"}]}"#);
        assert_eq!(bad.into_request().unwrap_err().status().as_u16(), 400);
        let bad: CommitTableRequestWire =
            parse(br#"{"requirements":[{"type":"assert-nothing"}],"updates":[]}"#);
        assert_eq!(bad.into_request().unwrap_err().status().as_u16(), 400);
    }
}
