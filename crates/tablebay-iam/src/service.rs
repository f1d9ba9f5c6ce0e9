//! The [`Iam`] service handle and its configuration, and the ARNs of identities.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use tablebay_catalog::{AccountId, ArnFlavor, Catalog};
use tablebay_store::MetaStore;
use tablebay_store::meta::CredentialRecord;

/// What the IAM service needs to know about the deployment.
#[derive(Clone)]
pub struct IamConfig {
    /// The region this instance serves (resource ARNs).
    pub region: String,
    /// The ARN spelling of responses (`acs:ram::…` or `arn:aws:iam::…`).
    pub flavor: ArnFlavor,
    /// The account the instance root acts in, created at startup (`--account-id`).
    pub default_account: AccountId,
    /// The instance root's access key id (`TABLEBAY_ROOT_ACCESS_KEY_ID`).
    pub root_access_key_id: String,
    /// The instance root's secret.
    pub root_secret: String,
    /// The shortest session STS issues ([`crate::MIN_SESSION_SECS`] unless configured lower, e.g. for tests of
    /// expiry).
    pub min_session_secs: i64,
}

impl std::fmt::Debug for IamConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IamConfig")
            .field("region", &self.region)
            .field("flavor", &self.flavor)
            .field("default_account", &self.default_account)
            .field("root_access_key_id", &self.root_access_key_id)
            .finish_non_exhaustive()
    }
}

/// How long a looked-up credential is reused without asking the store. Writes through this instance invalidate
/// at once; the TTL bounds how long another instance behind the same load balancer keeps accepting a key that
/// was deleted or deactivated here (measured in `tests/it/scale_out.rs`, documented in docs/deployment.md). One
/// second costs one key read per key and instance per second. Policies are never cached: a policy change
/// applies to the next request on every instance.
const KEY_CACHE_TTL: Duration = Duration::from_secs(1);
const KEY_CACHE_CAPACITY: u64 = 10_000;

/// The IAM service: accounts, users, roles, keys, sessions and authorization. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Iam {
    pub(crate) meta: MetaStore,
    pub(crate) catalog: Catalog,
    pub(crate) config: Arc<IamConfig>,
    pub(crate) keys: Cache<String, Arc<CredentialRecord>>,
}

impl Iam {
    /// The service over the metadata store; resource policies are read through `catalog`.
    pub fn new(meta: MetaStore, catalog: Catalog, config: IamConfig) -> Self {
        let keys = Cache::builder()
            .max_capacity(KEY_CACHE_CAPACITY)
            .time_to_live(KEY_CACHE_TTL)
            .build();
        Self {
            meta,
            catalog,
            config: Arc::new(config),
            keys,
        }
    }

    /// The deployment configuration.
    pub fn config(&self) -> &IamConfig {
        &self.config
    }

    /// The ARN of an account's root (`acs:ram::<account>:root`).
    pub fn root_arn(&self, account: &str) -> String {
        format!("{}{account}:root", self.iam_prefix())
    }

    /// The ARN of a user (`acs:ram::<account>:user/<name>`).
    pub fn user_arn(&self, account: &str, name: &str) -> String {
        format!("{}{account}:user/{name}", self.iam_prefix())
    }

    /// The ARN of a role (`acs:ram::<account>:role/<name>`).
    pub fn role_arn(&self, account: &str, name: &str) -> String {
        format!("{}{account}:role/{name}", self.iam_prefix())
    }

    /// The ARN of a role session (`acs:ram::<account>:assumed-role/<role>/<session>`, AWS: `arn:aws:sts::…`).
    pub fn assumed_role_arn(&self, account: &str, role: &str, session: &str) -> String {
        format!(
            "{}{account}:assumed-role/{role}/{session}",
            self.config.flavor.sessions()
        )
    }

    fn iam_prefix(&self) -> &'static str {
        self.config.flavor.identities()
    }
}

/// Parses a role ARN in either flavor (`acs:ram::<account>:role/<name>`, `arn:aws:iam::<account>:role/<name>`)
/// into (account, role name).
pub(crate) fn parse_role_arn(arn: &str) -> Option<(String, String)> {
    let (_, rest) = ArnFlavor::strip_identity(arn)?;
    let (account, resource) = rest.split_once(':')?;
    let name = resource.strip_prefix("role/")?;
    let name = name.rsplit('/').next()?;
    AccountId::parse(account).ok()?;
    Some((account.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::parse_role_arn;

    #[test]
    fn role_arns() {
        for (arn, want) in [
            (
                "acs:ram::111122223333:role/reader",
                Some(("111122223333", "reader")),
            ),
            (
                "arn:aws:iam::111122223333:role/reader",
                Some(("111122223333", "reader")),
            ),
            (
                "arn:aws:iam::111122223333:role/path/reader",
                Some(("111122223333", "reader")),
            ),
            ("arn:aws:iam::111122223333:user/reader", None),
            ("arn:aws:iam::12:role/reader", None),
            ("reader", None),
        ] {
            assert_eq!(
                parse_role_arn(arn),
                want.map(|(a, n)| (a.to_string(), n.to_string())),
                "{arn}"
            );
        }
    }
}
