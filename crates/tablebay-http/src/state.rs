//! The state every surface shares: the catalog service, the known identities, the SigV4 verifier, metrics.

use std::sync::Arc;

use tablebay_auth::{Principal, PrincipalKind, SigV4Verifier};
use tablebay_catalog::{AccountId, ArnFlavor, Catalog};
use tablebay_maintenance::JobRunner;

use crate::iceberg::IcebergSettings;
use crate::observe::Metrics;

/// A secret access key; its `Debug` never shows it.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself, for signing and verification only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The access keys this server accepts and who they belong to. Until accounts, users and roles are managed
/// (the access-control issue), the instance root's key acts as the root of the configured account.
#[derive(Clone, Debug)]
pub struct Identities {
    root_access_key_id: String,
    root_secret: Secret,
    account: AccountId,
    flavor: ArnFlavor,
}

impl Identities {
    /// The instance root credentials, acting for `account`.
    pub fn new(
        root_access_key_id: String,
        root_secret: Secret,
        account: AccountId,
        flavor: ArnFlavor,
    ) -> Self {
        Self {
            root_access_key_id,
            root_secret,
            account,
            flavor,
        }
    }

    /// The secret and principal of an access key, if the key is known.
    pub fn lookup(&self, access_key_id: &str) -> Option<(Secret, Principal)> {
        if access_key_id != self.root_access_key_id {
            return None;
        }
        let arn = match self.flavor {
            ArnFlavor::Oss => format!("acs:ram::{}:root", self.account),
            ArnFlavor::Aws => format!("arn:aws:iam::{}:root", self.account),
        };
        let principal = Principal {
            account_id: self.account.to_string(),
            arn,
            access_key_id: access_key_id.to_string(),
            kind: PrincipalKind::AccountRoot,
        };
        Some((self.root_secret.clone(), principal))
    }
}

/// Everything a request handler may reach. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The catalog service.
    pub catalog: Catalog,
    /// Known credentials.
    pub identities: Arc<Identities>,
    /// SigV4 verifier of the tables listener (services `s3tables` and `osstables`).
    pub tables_verifier: Arc<SigV4Verifier>,
    /// Request metrics.
    pub metrics: Arc<Metrics>,
    /// The Iceberg REST catalog's settings (data-plane URL, bearer tokens).
    pub iceberg: Arc<IcebergSettings>,
    /// The maintenance service (run-now, run records, metrics); absent in servers built without it.
    pub maintenance: Option<Arc<JobRunner>>,
}

impl AppState {
    /// Assembles the state for the configured region.
    pub fn new(catalog: Catalog, identities: Identities) -> Self {
        let region = catalog.config().region.clone();
        let iceberg = IcebergSettings::new(
            identities.root_secret.expose(),
            "http://127.0.0.1:9000".to_string(),
        );
        Self {
            catalog,
            identities: Arc::new(identities),
            tables_verifier: Arc::new(SigV4Verifier::new(region, &["s3tables", "osstables"])),
            metrics: Arc::new(Metrics::default()),
            iceberg: Arc::new(iceberg),
            maintenance: None,
        }
    }

    /// The same state with the maintenance service.
    #[must_use]
    pub fn with_maintenance(mut self, runner: Arc<JobRunner>) -> Self {
        self.maintenance = Some(runner);
        self
    }

    /// The same state with the S3 data plane's public URL (`s3.endpoint` handed to Iceberg clients).
    #[must_use]
    pub fn with_s3_public_url(mut self, url: impl Into<String>) -> Self {
        let mut iceberg = (*self.iceberg).clone();
        iceberg.s3_public_url = url.into();
        self.iceberg = Arc::new(iceberg);
        self
    }
}
