//! Routing of the console's session pages and forms: a pure function from method, raw path, query and form body
//! to an [`Endpoint`], with every input read once. (Sign-in and the static files are served before the
//! pipeline, in `dispatch.rs`.)
//!
//! ```text
//! GET  /console/ · /console                                   → 303 /console/buckets
//! POST /console/logout                                        SignOut
//! GET  /console/buckets[?token=]                              bucket list        POST /console/buckets  create
//! GET  /console/buckets/{b}[?nsToken=&tableToken=]            bucket page        POST …/{b}/delete
//! POST …/{b}/namespaces · …/{b}/namespaces/{ns}/delete · …/{b}/tables and …/{b}/namespaces/{ns}/tables (create)
//! POST …/{b}/encryption · …/{b}/maintenance · …/{b}/policy · …/{b}/policy/delete
//! GET  …/{b}/connect                                          Connect snippets
//! GET  …/{b}/namespaces/{ns}/tables/{t}                       table page         POST …/{t}/delete
//! GET  …/{t}/maintenance                                      maintenance page   POST …/{t}/maintenance, …/run
//! GET  /console/identity[?account=]                           identity page
//! POST /console/identity/accounts · /users · /roles · /users/{u}/delete · /roles/{r}/delete
//! POST /console/identity/users/{u}/access-keys · /users/{u}/access-keys/{k}/delete
//! POST /console/identity/{users|roles}/{n}/policies · …/policies/{p}/delete
//! ```

use http::Method;
use percent_encoding::percent_decode_str;
use tablebay_iam::IdentityKind;

use super::error::ConsoleError;
use crate::form::FormPairs;
use crate::pipeline::RequestBody;

/// A table named by the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TablePath {
    pub bucket: String,
    pub namespace: String,
    pub name: String,
}

/// A maintenance configuration form of a table (one job type).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaintenanceForm {
    pub job_type: String,
    pub status: String,
    pub target_file_size_mb: String,
    pub strategy: String,
    pub min_snapshots_to_keep: String,
    pub max_snapshot_age_hours: String,
}

/// Every console page and form, with its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Home,
    SignOut,
    Buckets {
        token: Option<String>,
    },
    CreateBucket {
        name: String,
    },
    Bucket {
        bucket: String,
        namespace_token: Option<String>,
        table_token: Option<String>,
    },
    DeleteBucket {
        bucket: String,
    },
    CreateNamespace {
        bucket: String,
        name: String,
    },
    DeleteNamespace {
        bucket: String,
        namespace: String,
    },
    CreateTable {
        bucket: String,
        namespace: String,
        name: String,
        columns: String,
    },
    PutEncryption {
        bucket: String,
        algorithm: String,
        kms_key_arn: String,
    },
    PutBucketMaintenance {
        bucket: String,
        status: String,
        unreferenced_days: String,
        non_current_days: String,
    },
    PutBucketPolicy {
        bucket: String,
        policy: String,
    },
    DeleteBucketPolicy {
        bucket: String,
    },
    Connect {
        bucket: String,
    },
    Table {
        table: TablePath,
    },
    DeleteTable {
        table: TablePath,
    },
    TableMaintenance {
        table: TablePath,
    },
    PutTableMaintenance {
        table: TablePath,
        form: MaintenanceForm,
    },
    RunMaintenance {
        table: TablePath,
        job_type: String,
    },
    Identity {
        account: Option<String>,
    },
    CreateAccount {
        name: String,
    },
    CreateIdentity {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        trust_policy: String,
    },
    DeleteIdentity {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
    },
    CreateAccessKey {
        account: Option<String>,
        user: String,
    },
    DeleteAccessKey {
        account: Option<String>,
        user: String,
        key: String,
    },
    PutIdentityPolicy {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        policy: String,
        document: String,
    },
    DeleteIdentityPolicy {
        account: Option<String>,
        kind: IdentityKind,
        name: String,
        policy: String,
    },
}

impl Endpoint {
    /// The operation name (logs, metrics, audit).
    pub(crate) fn operation(&self) -> &'static str {
        match self {
            Self::Home => "Home",
            Self::SignOut => "SignOut",
            Self::Buckets { .. } => "ListTableBuckets",
            Self::CreateBucket { .. } => "CreateTableBucket",
            Self::Bucket { .. } => "GetTableBucket",
            Self::DeleteBucket { .. } => "DeleteTableBucket",
            Self::CreateNamespace { .. } => "CreateNamespace",
            Self::DeleteNamespace { .. } => "DeleteNamespace",
            Self::CreateTable { .. } => "CreateTable",
            Self::PutEncryption { .. } => "PutTableBucketEncryption",
            Self::PutBucketMaintenance { .. } => "PutTableBucketMaintenanceConfiguration",
            Self::PutBucketPolicy { .. } => "PutTableBucketPolicy",
            Self::DeleteBucketPolicy { .. } => "DeleteTableBucketPolicy",
            Self::Connect { .. } => "Connect",
            Self::Table { .. } => "GetTable",
            Self::DeleteTable { .. } => "DeleteTable",
            Self::TableMaintenance { .. } => "GetTableMaintenanceJobStatus",
            Self::PutTableMaintenance { .. } => "PutTableMaintenanceConfiguration",
            Self::RunMaintenance { .. } => "RunMaintenanceJob",
            Self::Identity { .. } => "ListIdentities",
            Self::CreateAccount { .. } => "CreateAccount",
            Self::CreateIdentity {
                kind: IdentityKind::User,
                ..
            } => "CreateUser",
            Self::CreateIdentity {
                kind: IdentityKind::Role,
                ..
            } => "CreateRole",
            Self::DeleteIdentity {
                kind: IdentityKind::User,
                ..
            } => "DeleteUser",
            Self::DeleteIdentity {
                kind: IdentityKind::Role,
                ..
            } => "DeleteRole",
            Self::CreateAccessKey { .. } => "CreateAccessKey",
            Self::DeleteAccessKey { .. } => "DeleteAccessKey",
            Self::PutIdentityPolicy { .. } => "PutPolicy",
            Self::DeleteIdentityPolicy { .. } => "DeletePolicy",
        }
    }
}

/// Routes a session request under `/console`.
pub(crate) fn route(
    method: &Method,
    raw_path: &str,
    raw_query: Option<&str>,
    body: &RequestBody,
) -> Result<Endpoint, ConsoleError> {
    let not_found = || ConsoleError::NotFound(format!("There is no console page at {raw_path}"));
    let rest = raw_path
        .strip_prefix("/console")
        .ok_or_else(not_found)?
        .trim_start_matches('/');
    let segments = if rest.is_empty() {
        Vec::new()
    } else {
        rest.trim_end_matches('/')
            .split('/')
            .map(|raw| {
                percent_decode_str(raw)
                    .decode_utf8()
                    .map(|s| s.into_owned())
                    .map_err(|_| ConsoleError::BadRequest(format!("Invalid path segment '{raw}'")))
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let query = FormPairs::query(raw_query).map_err(|e| ConsoleError::BadRequest(e.to_string()))?;
    let form = if *method == Method::POST {
        let text = body
            .text()
            .map_err(|e| ConsoleError::BadRequest(format!("The form could not be read: {e}")))?;
        FormPairs::parse(text).map_err(|e| ConsoleError::BadRequest(e.to_string()))?
    } else {
        FormPairs::default()
    };
    let field = |name: &str| form.first(name).unwrap_or_default().to_string();
    let q = |name: &str| query.first(name).map(str::to_string);
    let account = form
        .first("account")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let table = |b: &str, ns: &str, t: &str| TablePath {
        bucket: b.to_string(),
        namespace: ns.to_string(),
        name: t.to_string(),
    };
    let kind_of = |collection: &str| match collection {
        "roles" => IdentityKind::Role,
        _ => IdentityKind::User,
    };
    use Endpoint as E;
    use Method as M;
    let endpoint = match (method.clone(), segments.as_slice()) {
        (M::GET | M::HEAD, []) => E::Home,
        (M::POST, ["logout"]) => E::SignOut,
        (M::GET | M::HEAD, ["buckets"]) => E::Buckets { token: q("token") },
        (M::POST, ["buckets"]) => E::CreateBucket {
            name: field("name").trim().to_string(),
        },
        (M::GET | M::HEAD, ["buckets", b]) => E::Bucket {
            bucket: (*b).to_string(),
            namespace_token: q("nsToken"),
            table_token: q("tableToken"),
        },
        (M::POST, ["buckets", b, "delete"]) => E::DeleteBucket {
            bucket: (*b).to_string(),
        },
        (M::POST, ["buckets", b, "namespaces"]) => E::CreateNamespace {
            bucket: (*b).to_string(),
            name: field("name").trim().to_string(),
        },
        (M::POST, ["buckets", b, "namespaces", ns, "delete"]) => E::DeleteNamespace {
            bucket: (*b).to_string(),
            namespace: (*ns).to_string(),
        },
        (M::POST, ["buckets", b, "namespaces", ns, "tables"]) => E::CreateTable {
            bucket: (*b).to_string(),
            namespace: (*ns).to_string(),
            name: field("name").trim().to_string(),
            columns: field("columns"),
        },
        (M::POST, ["buckets", b, "tables"]) => E::CreateTable {
            bucket: (*b).to_string(),
            namespace: field("namespace").trim().to_string(),
            name: field("name").trim().to_string(),
            columns: field("columns"),
        },
        (M::POST, ["buckets", b, "encryption"]) => E::PutEncryption {
            bucket: (*b).to_string(),
            algorithm: field("sse_algorithm"),
            kms_key_arn: field("kms_key_arn").trim().to_string(),
        },
        (M::POST, ["buckets", b, "maintenance"]) => E::PutBucketMaintenance {
            bucket: (*b).to_string(),
            status: field("status"),
            unreferenced_days: field("unreferenced_days"),
            non_current_days: field("non_current_days"),
        },
        (M::POST, ["buckets", b, "policy"]) => E::PutBucketPolicy {
            bucket: (*b).to_string(),
            policy: field("policy"),
        },
        (M::POST, ["buckets", b, "policy", "delete"]) => E::DeleteBucketPolicy {
            bucket: (*b).to_string(),
        },
        (M::GET | M::HEAD, ["buckets", b, "connect"]) => E::Connect {
            bucket: (*b).to_string(),
        },
        (M::GET | M::HEAD, ["buckets", b, "namespaces", ns, "tables", t]) => E::Table {
            table: table(b, ns, t),
        },
        (M::POST, ["buckets", b, "namespaces", ns, "tables", t, "delete"]) => E::DeleteTable {
            table: table(b, ns, t),
        },
        (M::GET | M::HEAD, ["buckets", b, "namespaces", ns, "tables", t, "maintenance"]) => {
            E::TableMaintenance {
                table: table(b, ns, t),
            }
        }
        (M::POST, ["buckets", b, "namespaces", ns, "tables", t, "maintenance"]) => {
            E::PutTableMaintenance {
                table: table(b, ns, t),
                form: MaintenanceForm {
                    job_type: field("job_type"),
                    status: field("status"),
                    target_file_size_mb: field("target_file_size_mb"),
                    strategy: field("strategy"),
                    min_snapshots_to_keep: field("min_snapshots_to_keep"),
                    max_snapshot_age_hours: field("max_snapshot_age_hours"),
                },
            }
        }
        (
            M::POST,
            [
                "buckets",
                b,
                "namespaces",
                ns,
                "tables",
                t,
                "maintenance",
                "run",
            ],
        ) => E::RunMaintenance {
            table: table(b, ns, t),
            job_type: field("job_type"),
        },
        (M::GET | M::HEAD, ["identity"]) => E::Identity {
            account: q("account").filter(|a| !a.is_empty()),
        },
        (M::POST, ["identity", "accounts"]) => E::CreateAccount {
            name: field("name").trim().to_string(),
        },
        (M::POST, ["identity", collection @ ("users" | "roles")]) => E::CreateIdentity {
            account,
            kind: kind_of(collection),
            name: field("name").trim().to_string(),
            trust_policy: field("trust_policy"),
        },
        (M::POST, ["identity", collection @ ("users" | "roles"), name, "delete"]) => {
            E::DeleteIdentity {
                account,
                kind: kind_of(collection),
                name: (*name).to_string(),
            }
        }
        (M::POST, ["identity", "users", user, "access-keys"]) => E::CreateAccessKey {
            account,
            user: (*user).to_string(),
        },
        (M::POST, ["identity", "users", user, "access-keys", key, "delete"]) => {
            E::DeleteAccessKey {
                account,
                user: (*user).to_string(),
                key: (*key).to_string(),
            }
        }
        (
            M::POST,
            [
                "identity",
                collection @ ("users" | "roles"),
                name,
                "policies",
            ],
        ) => E::PutIdentityPolicy {
            account,
            kind: kind_of(collection),
            name: (*name).to_string(),
            policy: field("policy_name").trim().to_string(),
            document: field("document"),
        },
        (
            M::POST,
            [
                "identity",
                collection @ ("users" | "roles"),
                name,
                "policies",
                policy,
                "delete",
            ],
        ) => E::DeleteIdentityPolicy {
            account,
            kind: kind_of(collection),
            name: (*name).to_string(),
            policy: (*policy).to_string(),
        },
        (
            _,
            []
            | ["logout"]
            | ["buckets"]
            | ["buckets", _]
            | ["buckets", _, "connect"]
            | [
                "buckets",
                _,
                "delete" | "namespaces" | "tables" | "encryption" | "maintenance" | "policy",
            ]
            | ["buckets", _, "namespaces", _, "tables", _]
            | ["buckets", _, "namespaces", _, "tables", _, "maintenance"]
            | ["identity"],
        ) => {
            return Err(ConsoleError::MethodNotAllowed(format!(
                "{method} is not allowed on {raw_path}"
            )));
        }
        _ => return Err(not_found()),
    };
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> RequestBody {
        RequestBody::new(bytes::Bytes::copy_from_slice(text.as_bytes()))
    }

    #[test]
    fn routes_and_refusals() {
        let cases = [
            (Method::GET, "/console/", "", "Home"),
            (Method::GET, "/console", "", "Home"),
            (Method::POST, "/console/logout", "csrf=x", "SignOut"),
            (Method::GET, "/console/buckets", "", "ListTableBuckets"),
            (
                Method::POST,
                "/console/buckets",
                "name=b&csrf=x",
                "CreateTableBucket",
            ),
            (Method::GET, "/console/buckets/b", "", "GetTableBucket"),
            (
                Method::POST,
                "/console/buckets/b/delete",
                "",
                "DeleteTableBucket",
            ),
            (
                Method::POST,
                "/console/buckets/b/namespaces",
                "name=n",
                "CreateNamespace",
            ),
            (
                Method::POST,
                "/console/buckets/b/namespaces/n/delete",
                "",
                "DeleteNamespace",
            ),
            (
                Method::POST,
                "/console/buckets/b/namespaces/n/tables",
                "name=t",
                "CreateTable",
            ),
            (
                Method::POST,
                "/console/buckets/b/policy",
                "policy=%7B%7D",
                "PutTableBucketPolicy",
            ),
            (Method::GET, "/console/buckets/b/connect", "", "Connect"),
            (
                Method::GET,
                "/console/buckets/b/namespaces/n/tables/t",
                "",
                "GetTable",
            ),
            (
                Method::POST,
                "/console/buckets/b/namespaces/n/tables/t/maintenance/run",
                "job_type=icebergCompaction",
                "RunMaintenanceJob",
            ),
            (Method::GET, "/console/identity", "", "ListIdentities"),
            (
                Method::POST,
                "/console/identity/users",
                "name=ana",
                "CreateUser",
            ),
            (
                Method::POST,
                "/console/identity/roles/r/policies",
                "policy_name=p",
                "PutPolicy",
            ),
            (
                Method::POST,
                "/console/identity/users/ana/access-keys/AK/delete",
                "",
                "DeleteAccessKey",
            ),
        ];
        for (method, path, text, operation) in cases {
            let endpoint = route(&method, path, None, &body(text)).unwrap();
            assert_eq!(endpoint.operation(), operation, "{method} {path}");
        }
        let table = route(
            &Method::GET,
            "/console/buckets/b/namespaces/n%20s/tables/%3Cx%3E",
            None,
            &body(""),
        )
        .unwrap();
        assert_eq!(
            table,
            Endpoint::Table {
                table: TablePath {
                    bucket: "b".into(),
                    namespace: "n s".into(),
                    name: "<x>".into()
                }
            }
        );
        let refused = [
            (Method::DELETE, "/console/buckets", ""),
            (Method::GET, "/console/nothing", ""),
            (Method::POST, "/console/buckets", "name=%FF"),
            (Method::GET, "/console/buckets/%FF", ""),
            (Method::PUT, "/console/identity", ""),
        ];
        for (method, path, text) in refused {
            assert!(
                route(&method, path, None, &body(text)).is_err(),
                "{method} {path} {text}"
            );
        }
    }
}
