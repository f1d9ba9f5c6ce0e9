//! The migration sources, in the request shape the issue fixes (scripts outside the project send it): an
//! Iceberg table behind any Iceberg REST catalog (`icebergRestTable`), or an Iceberg metadata file on any
//! S3-compatible store (`icebergMetadata`). `glueTable` (botocore's only source type) needs AWS Glue and is
//! refused. These types are the spec of that JSON, as iceberg-rust's `spec/` types are Iceberg's.

use serde::{Deserialize, Serialize};

use crate::MigrationError;

/// The longest string member a source may carry (URIs, names, keys).
const MAX_MEMBER: usize = 2048;

/// `sourceType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceType {
    /// An Iceberg REST catalog's table.
    IcebergRestTable,
    /// A metadata file on an S3-compatible store.
    IcebergMetadata,
}

impl SourceType {
    /// Parses `sourceType`; `glueTable` and anything else is `Invalid`.
    pub fn parse(raw: &str) -> Result<Self, MigrationError> {
        match raw {
            "icebergRestTable" => Ok(Self::IcebergRestTable),
            "icebergMetadata" => Ok(Self::IcebergMetadata),
            "glueTable" => Err(MigrationError::Invalid(
                "sourceType glueTable needs AWS Glue, which this server does not have: migrate the table \
                 through its Iceberg REST catalog (icebergRestTable) or its metadata file (icebergMetadata)"
                    .into(),
            )),
            other => Err(MigrationError::Invalid(format!(
                "Unsupported sourceType {other:?}: expected icebergRestTable or icebergMetadata"
            ))),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IcebergRestTable => "icebergRestTable",
            Self::IcebergMetadata => "icebergMetadata",
        }
    }
}

/// `source`: a union, exactly one member set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceConfiguration {
    /// An Iceberg REST catalog's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg_rest_table: Option<RestTableSource>,
    /// A metadata file on an S3-compatible store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg_metadata: Option<MetadataSource>,
    /// botocore's Glue source (refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glue_table: Option<serde_json::Value>,
}

/// The source, checked against its `sourceType`.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// An Iceberg REST catalog's table.
    Rest(RestTableSource),
    /// A metadata file.
    Metadata(MetadataSource),
}

impl SourceConfiguration {
    /// The source the union names, which must be the one `source_type` says.
    pub fn resolve(&self, source_type: SourceType) -> Result<Source, MigrationError> {
        let set = [
            self.iceberg_rest_table.is_some(),
            self.iceberg_metadata.is_some(),
            self.glue_table.is_some(),
        ]
        .iter()
        .filter(|set| **set)
        .count();
        if set != 1 {
            return Err(MigrationError::Invalid(
                "source must set exactly one member (icebergRestTable or icebergMetadata)".into(),
            ));
        }
        let source = match (
            source_type,
            &self.iceberg_rest_table,
            &self.iceberg_metadata,
        ) {
            (SourceType::IcebergRestTable, Some(rest), _) => Source::Rest(rest.clone()),
            (SourceType::IcebergMetadata, _, Some(metadata)) => Source::Metadata(metadata.clone()),
            _ => {
                return Err(MigrationError::Invalid(format!(
                    "sourceType {} does not match the member set in source",
                    source_type.as_str()
                )));
            }
        };
        source.validate()?;
        Ok(source)
    }

    /// This configuration with every secret replaced by `****`: what GetTableMigration shows.
    pub fn redacted(&self) -> Self {
        let mut out = self.clone();
        if let Some(rest) = &mut out.iceberg_rest_table {
            rest.auth = rest.auth.redacted();
            rest.s3 = rest.s3.as_ref().map(S3Access::redacted);
        }
        if let Some(metadata) = &mut out.iceberg_metadata {
            metadata.s3 = metadata.s3.redacted();
        }
        out
    }
}

/// `icebergRestTable`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestTableSource {
    /// The catalog's base URI (what `uri` is to an Iceberg client: `…/v1/config` lies under it).
    pub uri: String,
    /// The warehouse to ask `/v1/config` for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    /// The namespace levels.
    pub namespace: Vec<String>,
    /// The table name.
    pub name: String,
    /// How to authenticate to the catalog.
    pub auth: Auth,
    /// The S3 store of the table's files, when the catalog vends no credentials for it (a Tablebay addition
    /// to the fixed shape; the catalog's `loadTable` config is used otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<S3Access>,
}

/// `auth` of a REST source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Auth {
    /// AWS Signature Version 4.
    #[serde(rename_all = "camelCase")]
    Sigv4 {
        /// Access key id.
        access_key_id: String,
        /// Secret access key.
        secret_access_key: String,
        /// Session token of temporary credentials.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_token: Option<String>,
        /// The signing name (`s3tables`, `glue`, `execute-api`, …); `execute-api` when absent, as Iceberg's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signing_name: Option<String>,
        /// The signing region; `us-east-1` when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<String>,
    },
    /// OAuth2 client credentials, exchanged at the catalog's `v1/oauth/tokens` (or `serverUri`).
    #[serde(rename_all = "camelCase")]
    Oauth2 {
        /// `client_id:client_secret`.
        credential: String,
        /// The scope asked for; `catalog` when absent, as Iceberg's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<String>,
        /// The token endpoint, when not the catalog's own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_uri: Option<String>,
    },
    /// A bearer token.
    Bearer {
        /// The token.
        token: String,
    },
    /// No authentication.
    None,
}

impl Auth {
    fn redacted(&self) -> Self {
        const HIDDEN: &str = "****";
        match self.clone() {
            Self::Sigv4 {
                access_key_id,
                session_token,
                signing_name,
                region,
                ..
            } => Self::Sigv4 {
                access_key_id,
                secret_access_key: HIDDEN.into(),
                session_token: session_token.map(|_| HIDDEN.into()),
                signing_name,
                region,
            },
            Self::Oauth2 {
                credential,
                scope,
                server_uri,
            } => Self::Oauth2 {
                credential: match credential.split_once(':') {
                    Some((id, _)) => format!("{id}:{HIDDEN}"),
                    None => HIDDEN.into(),
                },
                scope,
                server_uri,
            },
            Self::Bearer { .. } => Self::Bearer {
                token: HIDDEN.into(),
            },
            Self::None => Self::None,
        }
    }
}

/// `icebergMetadata`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataSource {
    /// `s3://bucket/…/metadata/….metadata.json`.
    pub metadata_location: String,
    /// The store it is on.
    pub s3: S3Access,
}

/// An S3-compatible store and its credentials.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct S3Access {
    /// `http(s)://host:port`; AWS when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Region; `us-east-1` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Access key id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
    /// Secret access key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_access_key: Option<String>,
    /// Session token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_token: Option<String>,
    /// Path-style addressing (`endpoint/bucket/key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_style: Option<bool>,
}

impl S3Access {
    fn redacted(&self) -> Self {
        Self {
            secret_access_key: self.secret_access_key.as_ref().map(|_| "****".into()),
            session_token: self.session_token.as_ref().map(|_| "****".into()),
            ..self.clone()
        }
    }
}

fn bounded(what: &str, value: &str) -> Result<(), MigrationError> {
    if value.is_empty() || value.len() > MAX_MEMBER {
        return Err(MigrationError::Invalid(format!(
            "{what} must be between 1 and {MAX_MEMBER} characters long"
        )));
    }
    Ok(())
}

impl Source {
    fn validate(&self) -> Result<(), MigrationError> {
        match self {
            Self::Rest(rest) => {
                bounded("source.icebergRestTable.uri", &rest.uri)?;
                if !(rest.uri.starts_with("http://") || rest.uri.starts_with("https://")) {
                    return Err(MigrationError::Invalid(
                        "source.icebergRestTable.uri must be an http:// or https:// URL".into(),
                    ));
                }
                bounded("source.icebergRestTable.name", &rest.name)?;
                if rest.namespace.is_empty() || rest.namespace.len() > 16 {
                    return Err(MigrationError::Invalid(
                        "source.icebergRestTable.namespace must have 1 to 16 levels".into(),
                    ));
                }
                for level in &rest.namespace {
                    bounded("a namespace level of source.icebergRestTable", level)?;
                }
                if let Auth::Oauth2 { credential, .. } = &rest.auth
                    && !credential.contains(':')
                {
                    return Err(MigrationError::Invalid(
                        "auth.credential of type oauth2 must be client_id:client_secret".into(),
                    ));
                }
                Ok(())
            }
            Self::Metadata(metadata) => {
                bounded(
                    "source.icebergMetadata.metadataLocation",
                    &metadata.metadata_location,
                )?;
                if !metadata.metadata_location.starts_with("s3://") {
                    return Err(MigrationError::Invalid(
                        "source.icebergMetadata.metadataLocation must be an s3:// URI".into(),
                    ));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_fixed_request_shape() {
        let json = r#"{"icebergRestTable": {"uri": "http://h:1/iceberg", "warehouse": "w",
            "namespace": ["ns"], "name": "t", "auth": {"type": "sigv4", "accessKeyId": "a",
            "secretAccessKey": "s", "signingName": "s3tables", "region": "r"}}}"#;
        let config: SourceConfiguration = serde_json::from_str(json).unwrap();
        let Source::Rest(rest) = config.resolve(SourceType::IcebergRestTable).unwrap() else {
            panic!("not a REST source")
        };
        assert_eq!(rest.namespace, vec!["ns"]);
        assert!(matches!(rest.auth, Auth::Sigv4 { .. }));
        let shown = serde_json::to_string(&config.redacted()).unwrap();
        assert!(!shown.contains("\"s\""), "{shown}");
        for auth in [
            r#"{"type": "oauth2", "credential": "id:secret", "scope": "x"}"#,
            r#"{"type": "bearer", "token": "t"}"#,
            r#"{"type": "none"}"#,
        ] {
            serde_json::from_str::<Auth>(auth).unwrap();
        }
        let json = r#"{"icebergMetadata": {"metadataLocation": "s3://b/m.json",
            "s3": {"endpoint": "http://h:2", "region": "r", "accessKeyId": "a",
                   "secretAccessKey": "s", "pathStyle": true}}}"#;
        let config: SourceConfiguration = serde_json::from_str(json).unwrap();
        assert!(matches!(
            config.resolve(SourceType::IcebergMetadata).unwrap(),
            Source::Metadata(_)
        ));
        assert!(config.resolve(SourceType::IcebergRestTable).is_err());
    }

    #[test]
    fn refuses_glue_and_bad_sources() {
        assert!(SourceType::parse("glueTable").is_err());
        assert!(SourceType::parse("hive").is_err());
        let bad = r#"{"icebergMetadata": {"metadataLocation": "file:///etc/passwd", "s3": {}}}"#;
        let config: SourceConfiguration = serde_json::from_str(bad).unwrap();
        assert!(config.resolve(SourceType::IcebergMetadata).is_err());
    }
}
