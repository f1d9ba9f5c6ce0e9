//! The state every surface shares: the catalog, object and IAM services, the SigV4 verifiers, metrics.

use std::sync::Arc;

use tablebay_auth::SigV4Verifier;
use tablebay_auth::oss4::Oss4Verifier;
use tablebay_catalog::Catalog;
use tablebay_iam::Iam;
use tablebay_maintenance::{AccessLog, JobRunner};
use tablebay_objects::Objects;

use crate::iceberg::IcebergSettings;
use crate::observe::Metrics;
use crate::pipeline::{BodyBudget, DEFAULT_BODY_BUDGET_BYTES};

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

/// Everything a request handler may reach. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The catalog service.
    pub catalog: Catalog,
    /// The object service (the data plane's objects; the catalog's own table files go through the same one).
    pub objects: Objects,
    /// The IAM service: who a key is, and what they may do.
    pub iam: Iam,
    /// SigV4 verifier of the tables listener (services `s3tables` and `osstables`).
    pub tables_verifier: Arc<SigV4Verifier>,
    /// SigV4 verifier of the STS endpoint (service `sts`).
    pub sts_verifier: Arc<SigV4Verifier>,
    /// OSS V4 verifier of the tables listener (product `osstables`: Alibaba's SDKs and ossutil).
    pub oss4_verifier: Arc<Oss4Verifier>,
    /// Request metrics.
    pub metrics: Arc<Metrics>,
    /// The Iceberg REST catalog's settings (data-plane URL, bearer tokens).
    pub iceberg: Arc<IcebergSettings>,
    /// Server access logging: the buckets whose requests are logged, and the records not delivered yet.
    pub access_log: Arc<AccessLog>,
    /// The maintenance service (run-now, run records, metrics); absent in servers built without it.
    pub maintenance: Option<Arc<JobRunner>>,
    /// The table migration service; absent in servers built without it.
    pub migrations: Option<tablebay_migration::Migrations>,
    /// Memory for request bodies that no verified signature covers yet.
    pub(crate) body_budget: BodyBudget,
    /// The web console's open sessions.
    pub(crate) console_sessions: Arc<crate::console::Sessions>,
    /// The console's snapshots already read (live files, first rows).
    pub(crate) console_inspections: Arc<crate::console::Inspections>,
}

impl AppState {
    /// Assembles the state for the configured region, with the catalog's object service.
    pub fn new(catalog: Catalog, iam: Iam) -> Self {
        let region = catalog.config().region.clone();
        let iceberg = IcebergSettings::new(
            &iam.config().root_secret,
            "http://127.0.0.1:9000".to_string(),
        );
        Self {
            objects: catalog.objects().clone(),
            catalog,
            iam,
            tables_verifier: Arc::new(SigV4Verifier::new(
                region.clone(),
                &["s3tables", "osstables"],
            )),
            sts_verifier: Arc::new(SigV4Verifier::new(region.clone(), &["sts"])),
            oss4_verifier: Arc::new(Oss4Verifier::new(region)),
            metrics: Arc::new(Metrics::default()),
            iceberg: Arc::new(iceberg),
            access_log: Arc::default(),
            maintenance: None,
            migrations: None,
            body_budget: BodyBudget::new(DEFAULT_BODY_BUDGET_BYTES),
            console_sessions: Arc::default(),
            console_inspections: Arc::default(),
        }
    }

    /// The same state with the maintenance service.
    #[must_use]
    pub fn with_maintenance(mut self, runner: Arc<JobRunner>) -> Self {
        self.maintenance = Some(runner);
        self
    }

    /// The same state with the table migration service.
    #[must_use]
    pub fn with_migrations(mut self, migrations: tablebay_migration::Migrations) -> Self {
        self.migrations = Some(migrations);
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
