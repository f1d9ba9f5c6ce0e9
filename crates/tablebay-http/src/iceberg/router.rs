//! Routing of the Iceberg REST catalog: a pure function from method, raw path and raw query to an [`Endpoint`].
//!
//! The path is split on `/` *before* percent-decoding (`reference/iceberg-rest.md` traps 6 and 7): a `%2F` inside
//! an ARN prefix or a name never splits a segment, and a namespace segment is split on `%1F` (either case) before
//! its levels are decoded. Levels are percent-decoded with `+` kept literal (trap 5): Tablebay names are
//! `[a-z0-9_]` (S3 Tables rules), so a name with `+`, a space or `/` is rejected whichever way a client encodes it,
//! and the `+`-means-space ambiguity cannot change which table a request reaches.
//!
//! The prefix is the one `GET /v1/config` hands out (`<account>.<bucket>`, only `[0-9a-z.-]`), or a table bucket
//! ARN: URL-encoded as one segment (S3 Tables style), or decoded by a proxy into two segments
//! (`arn:aws:s3tables:<region>:<account>:bucket` + `<name>`).

use http::{HeaderMap, Method};
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;

use super::error::IcebergError;
use super::wire::{
    CommitTableRequest, CommitTableRequestWire, CommitTransactionRequestWire, CommitViewRequest,
    CreateNamespaceRequest, CreateTableRequest, CreateViewRequest, MetricsReport,
    RegisterTableRequest, RegisterViewRequest, RemoteSignRequest, RenameRequest, TableIdentifier,
    UpdateNamespacePropertiesRequest,
};
use crate::form::FormPairs;
use crate::pipeline::RequestBody;

/// A table or view named in the path: one namespace level and a name (both decoded, not yet validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ident {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for Ident {
    /// Java's `TableIdentifier.toString()`: levels and name joined by `.`, as in every reference message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.namespace, self.name)
    }
}

/// `pageToken` and `pageSize` as given (trap 4: an empty `pageToken` is a first page, an absent one "all").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PageParams {
    pub token: Option<String>,
    pub size: Option<String>,
}

/// Every Iceberg REST operation this server answers, with every input it takes (path, query, the headers that
/// matter, and the body) parsed once: authorization and the handler read the same values.
// Made once per request and moved once into its handler: boxing the large requests would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Endpoint {
    Config {
        warehouse: Option<String>,
    },
    ListNamespaces {
        prefix: String,
        parent: Option<String>,
        page: PageParams,
    },
    CreateNamespace {
        prefix: String,
        request: CreateNamespaceRequest,
    },
    LoadNamespace {
        prefix: String,
        namespace: String,
    },
    NamespaceExists {
        prefix: String,
        namespace: String,
    },
    DropNamespace {
        prefix: String,
        namespace: String,
    },
    UpdateNamespaceProperties {
        prefix: String,
        namespace: String,
        request: UpdateNamespacePropertiesRequest,
    },
    ListTables {
        prefix: String,
        namespace: String,
        page: PageParams,
    },
    CreateTable {
        prefix: String,
        namespace: String,
        request: CreateTableRequest,
        delegation: Delegation,
    },
    RegisterTable {
        prefix: String,
        namespace: String,
        request: RegisterTableRequest,
    },
    LoadTable {
        prefix: String,
        table: Ident,
        snapshots: Snapshots,
        if_none_match: Option<String>,
        delegation: Delegation,
    },
    TableExists {
        prefix: String,
        table: Ident,
    },
    CommitTable {
        prefix: String,
        table: Ident,
        request: CommitTableRequest,
    },
    DropTable {
        prefix: String,
        table: Ident,
        purge: bool,
    },
    ReportMetrics {
        prefix: String,
        table: Ident,
    },
    LoadCredentials {
        prefix: String,
        table: Ident,
    },
    RenameTable {
        prefix: String,
        source: Ident,
        destination: Ident,
    },
    CommitTransaction {
        prefix: String,
        /// Each table change with the table its identifier names.
        changes: Vec<(Ident, CommitTableRequest)>,
    },
    ListViews {
        prefix: String,
        namespace: String,
        page: PageParams,
    },
    CreateView {
        prefix: String,
        namespace: String,
        request: CreateViewRequest,
    },
    LoadView {
        prefix: String,
        view: Ident,
    },
    ViewExists {
        prefix: String,
        view: Ident,
    },
    ReplaceView {
        prefix: String,
        view: Ident,
        request: CommitViewRequest,
    },
    DropView {
        prefix: String,
        view: Ident,
    },
    RenameView {
        prefix: String,
        source: Ident,
        destination: Ident,
    },
    UnregisterTable {
        prefix: String,
        table: Ident,
    },
    RegisterView {
        prefix: String,
        namespace: String,
        request: RegisterViewRequest,
    },
    /// A remote-signing request: for the table named in the path (`…/tables/{t}/sign`, the spec's endpoint), or
    /// for whichever table's storage the URI is in (`/v1/aws/s3/sign`, where released clients post by default).
    SignRequest {
        table: Option<(String, Ident)>,
        request: RemoteSignRequest,
    },
}

/// How the client asked to reach the table's data (`X-Iceberg-Access-Delegation`, a comma-separated list):
/// vended credentials win when both are listed, as they cost the client no round trip per request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Delegation {
    #[default]
    None,
    VendedCredentials,
    RemoteSigning,
}

impl Delegation {
    fn of(headers: &HeaderMap) -> Self {
        let modes: Vec<String> = headers
            .get_all("x-iceberg-access-delegation")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|mode| mode.trim().to_ascii_lowercase())
            .collect();
        if modes.iter().any(|m| m == "vended-credentials") {
            Self::VendedCredentials
        } else if modes.iter().any(|m| m == "remote-signing") {
            Self::RemoteSigning
        } else {
            Self::None
        }
    }
}

/// Which snapshots a load returns (`snapshots=all|refs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Snapshots {
    #[default]
    All,
    Refs,
}

impl Snapshots {
    fn parse(raw: Option<&str>) -> Result<Self, IcebergError> {
        match raw {
            None => Ok(Self::All),
            Some(s) if s.eq_ignore_ascii_case("all") => Ok(Self::All),
            Some(s) if s.eq_ignore_ascii_case("refs") => Ok(Self::Refs),
            Some(other) => Err(IcebergError::bad_request(format!(
                "Invalid snapshots mode '{other}': expected all or refs"
            ))),
        }
    }
}

/// The `endpoints` list of `GET /v1/config`: exactly the routes below, in Java's `Endpoint` spelling (trap 8).
pub(crate) const ADVERTISED_ENDPOINTS: &[&str] = &[
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign",
];

impl Endpoint {
    /// The operation name (logs, metrics), after the Iceberg OpenAPI `operationId`.
    pub(crate) fn operation(&self) -> &'static str {
        match self {
            Self::Config { .. } => "getConfig",
            Self::ListNamespaces { .. } => "listNamespaces",
            Self::CreateNamespace { .. } => "createNamespace",
            Self::LoadNamespace { .. } => "loadNamespaceMetadata",
            Self::NamespaceExists { .. } => "namespaceExists",
            Self::DropNamespace { .. } => "dropNamespace",
            Self::UpdateNamespaceProperties { .. } => "updateProperties",
            Self::ListTables { .. } => "listTables",
            Self::CreateTable { .. } => "createTable",
            Self::RegisterTable { .. } => "registerTable",
            Self::LoadTable { .. } => "loadTable",
            Self::TableExists { .. } => "tableExists",
            Self::CommitTable { .. } => "updateTable",
            Self::DropTable { .. } => "dropTable",
            Self::ReportMetrics { .. } => "reportMetrics",
            Self::LoadCredentials { .. } => "loadCredentials",
            Self::RenameTable { .. } => "renameTable",
            Self::CommitTransaction { .. } => "commitTransaction",
            Self::ListViews { .. } => "listViews",
            Self::CreateView { .. } => "createView",
            Self::LoadView { .. } => "loadView",
            Self::ViewExists { .. } => "viewExists",
            Self::ReplaceView { .. } => "replaceView",
            Self::DropView { .. } => "dropView",
            Self::RenameView { .. } => "renameView",
            Self::UnregisterTable { .. } => "unregisterTable",
            Self::RegisterView { .. } => "registerView",
            Self::SignRequest { .. } => "signRequest",
        }
    }

    /// Whether the operation changes state (an `Idempotency-Key` applies to it).
    pub(crate) fn is_mutation(&self) -> bool {
        matches!(
            self,
            Self::CreateNamespace { .. }
                | Self::DropNamespace { .. }
                | Self::UpdateNamespaceProperties { .. }
                | Self::CreateTable { .. }
                | Self::RegisterTable { .. }
                | Self::CommitTable { .. }
                | Self::DropTable { .. }
                | Self::RenameTable { .. }
                | Self::CommitTransaction { .. }
                | Self::CreateView { .. }
                | Self::ReplaceView { .. }
                | Self::DropView { .. }
                | Self::RenameView { .. }
                | Self::UnregisterTable { .. }
                | Self::RegisterView { .. }
        )
    }
}

/// Percent-decodes one path segment or query component; `+` stays `+` in paths.
fn decode(raw: &str) -> Result<String, IcebergError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| IcebergError::bad_request(format!("Invalid percent-encoding in '{raw}'")))
}

/// Splits a namespace segment on the 0x1F separator (raw `%1F`/`%1f`, trap 6) and decodes its one level; more
/// than one level is a clear 400, since namespaces have one level as in S3 Tables.
fn namespace(raw: &str) -> Result<String, IcebergError> {
    let levels: Vec<&str> = raw
        .split("%1F")
        .flat_map(|part| part.split("%1f"))
        .collect();
    let levels = levels
        .into_iter()
        .map(decode)
        .collect::<Result<Vec<_>, _>>()?;
    single_level(levels)
}

/// The namespace of a table or view path: a multi-level one is kept, joined by `.`, so that the table is simply
/// not found (404 NoSuchTableException, trap 3) — Java probes metadata tables as `GET …/namespaces/db%1Ftbl/
/// tables/snapshots` and falls back on a 404.
fn table_namespace(raw: &str) -> Result<String, IcebergError> {
    let levels: Vec<&str> = raw
        .split("%1F")
        .flat_map(|part| part.split("%1f"))
        .collect();
    let levels = levels
        .into_iter()
        .map(decode)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(levels.join("."))
}

/// The one level of a namespace given as levels.
pub(crate) fn single_level(mut levels: Vec<String>) -> Result<String, IcebergError> {
    match levels.len() {
        1 => Ok(levels.pop().unwrap_or_default()),
        0 => Err(IcebergError::bad_request("A namespace must have one level")),
        _ => Err(IcebergError::bad_request(format!(
            "Multi-level namespaces are not supported: {} (namespaces have one level, as in S3 Tables)",
            levels.join(".")
        ))),
    }
}

/// Parses a boolean query value case-insensitively (PyIceberg 0.10 sends `False`: trap 12).
fn boolean(name: &str, value: &str) -> Result<bool, IcebergError> {
    if value.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("false") || value.is_empty() {
        Ok(false)
    } else {
        Err(IcebergError::bad_request(format!(
            "Invalid boolean for {name}: '{value}'"
        )))
    }
}

/// Parses a JSON request body into its request type; a body that does not parse is a 400.
fn json<T: DeserializeOwned>(body: &RequestBody) -> Result<T, IcebergError> {
    body.json(false)
        .map_err(|e| IcebergError::bad_request(format!("Invalid request body: {e}")))
}

/// A table or view identifier of a body (one namespace level, as in paths).
fn body_ident(identifier: TableIdentifier) -> Result<Ident, IcebergError> {
    Ok(Ident {
        namespace: single_level(identifier.namespace)?,
        name: identifier.name,
    })
}

/// A transaction's table changes, each with the table its identifier names (which every change must carry).
fn transaction_changes(
    request: CommitTransactionRequestWire,
) -> Result<Vec<(Ident, CommitTableRequest)>, IcebergError> {
    if request.table_changes.is_empty() {
        return Err(IcebergError::bad_request(
            "A transaction needs at least one table change",
        ));
    }
    request
        .table_changes
        .into_iter()
        .map(|change| {
            let change = change.into_request()?;
            let identifier = change.identifier.clone().ok_or_else(|| {
                IcebergError::bad_request(
                    "Every table change of a transaction needs its identifier",
                )
            })?;
            Ok((body_ident(identifier)?, change))
        })
        .collect()
}

/// Routes a request under `/iceberg` by method, raw path and raw query, with the headers and the (verified) body
/// it carries, into its typed endpoint.
pub(crate) fn route(
    method: &Method,
    raw_path: &str,
    raw_query: Option<&str>,
    headers: &HeaderMap,
    body: &RequestBody,
) -> Result<Endpoint, IcebergError> {
    let no_route =
        || IcebergError::bad_request(format!("No route for request: {method} {raw_path}"));
    let rest = raw_path.strip_prefix("/iceberg/v1/").ok_or_else(no_route)?;
    let segments: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    let query =
        FormPairs::query(raw_query).map_err(|e| IcebergError::bad_request(e.to_string()))?;
    let param = |name: &str| query.first(name).map(str::to_string);
    let page = || PageParams {
        token: param("pageToken"),
        size: param("pageSize"),
    };

    match segments.as_slice() {
        ["config"] if method == Method::GET => {
            return Ok(Endpoint::Config {
                warehouse: param("warehouse"),
            });
        }
        ["config"] => return Err(IcebergError::method_not_allowed(method, raw_path)),
        // The signer endpoint that PyIceberg and Iceberg Java before 1.12 post to by default
        // (`s3.signer.endpoint`, default `v1/aws/s3/sign`, relative to the catalog URI).
        ["aws", "s3", "sign"] if method == Method::POST => {
            return Ok(Endpoint::SignRequest {
                table: None,
                request: json(body)?,
            });
        }
        ["aws", "s3", "sign"] => return Err(IcebergError::method_not_allowed(method, raw_path)),
        _ => {}
    }

    // The prefix: one segment, or an ARN a proxy decoded into `…:bucket` + `<name>`.
    let (prefix, rest) = match segments.as_slice() {
        [first, second, rest @ ..]
            if (first.starts_with("arn:") || first.starts_with("acs:"))
                && first.ends_with(":bucket") =>
        {
            (format!("{}/{}", decode(first)?, decode(second)?), rest)
        }
        [first, rest @ ..] if !first.is_empty() => (decode(first)?, rest),
        _ => return Err(no_route()),
    };

    let ident = |ns: &str, name: &str| -> Result<Ident, IcebergError> {
        Ok(Ident {
            namespace: table_namespace(ns)?,
            name: decode(name)?,
        })
    };
    let m = method.clone();
    let endpoint = match (rest, m) {
        (["namespaces"], Method::GET) => {
            let parent = param("parent").filter(|p| !p.is_empty());
            if let Some(parent) = &parent {
                single_level(parent.split('\u{1f}').map(str::to_string).collect())?;
            }
            Endpoint::ListNamespaces {
                prefix,
                parent,
                page: page(),
            }
        }
        (["namespaces"], Method::POST) => Endpoint::CreateNamespace {
            prefix,
            request: json(body)?,
        },
        (["namespaces", ns], Method::GET) => Endpoint::LoadNamespace {
            prefix,
            namespace: namespace(ns)?,
        },
        (["namespaces", ns], Method::HEAD) => Endpoint::NamespaceExists {
            prefix,
            namespace: namespace(ns)?,
        },
        (["namespaces", ns], Method::DELETE) => Endpoint::DropNamespace {
            prefix,
            namespace: namespace(ns)?,
        },
        (["namespaces", ns, "properties"], Method::POST) => Endpoint::UpdateNamespaceProperties {
            prefix,
            namespace: namespace(ns)?,
            request: json(body)?,
        },
        (["namespaces", ns, "tables"], Method::GET) => Endpoint::ListTables {
            prefix,
            namespace: namespace(ns)?,
            page: page(),
        },
        (["namespaces", ns, "tables"], Method::POST) => Endpoint::CreateTable {
            prefix,
            namespace: namespace(ns)?,
            request: json(body)?,
            delegation: Delegation::of(headers),
        },
        (["namespaces", ns, "register"], Method::POST) => Endpoint::RegisterTable {
            prefix,
            namespace: namespace(ns)?,
            request: json(body)?,
        },
        (["namespaces", ns, "tables", t], Method::GET) => Endpoint::LoadTable {
            prefix,
            table: ident(ns, t)?,
            snapshots: Snapshots::parse(param("snapshots").as_deref())?,
            if_none_match: headers
                .get(http::header::IF_NONE_MATCH)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            delegation: Delegation::of(headers),
        },
        (["namespaces", ns, "tables", t], Method::HEAD) => Endpoint::TableExists {
            prefix,
            table: ident(ns, t)?,
        },
        (["namespaces", ns, "tables", t], Method::POST) => Endpoint::CommitTable {
            prefix,
            table: ident(ns, t)?,
            request: json::<CommitTableRequestWire>(body)?.into_request()?,
        },
        (["namespaces", ns, "tables", t], Method::DELETE) => {
            let purge = match param("purgeRequested") {
                Some(value) => boolean("purgeRequested", &value)?,
                None => false,
            };
            Endpoint::DropTable {
                prefix,
                table: ident(ns, t)?,
                purge,
            }
        }
        (["namespaces", ns, "tables", t, "metrics"], Method::POST) => {
            let report: MetricsReport = json(body)?;
            report.check()?;
            Endpoint::ReportMetrics {
                prefix,
                table: ident(ns, t)?,
            }
        }
        (["namespaces", ns, "tables", t, "unregister"], Method::POST) => {
            Endpoint::UnregisterTable {
                prefix,
                table: ident(ns, t)?,
            }
        }
        (["namespaces", ns, "tables", t, "sign"], Method::POST) => Endpoint::SignRequest {
            request: json(body)?,
            table: Some((prefix, ident(ns, t)?)),
        },
        (["namespaces", ns, "register-view"], Method::POST) => Endpoint::RegisterView {
            prefix,
            namespace: namespace(ns)?,
            request: json(body)?,
        },
        (["namespaces", ns, "tables", t, "credentials"], Method::GET) => {
            Endpoint::LoadCredentials {
                prefix,
                table: ident(ns, t)?,
            }
        }
        (["tables", "rename"], Method::POST) => {
            let request: RenameRequest = json(body)?;
            Endpoint::RenameTable {
                prefix,
                source: body_ident(request.source)?,
                destination: body_ident(request.destination)?,
            }
        }
        (["transactions", "commit"], Method::POST) => Endpoint::CommitTransaction {
            prefix,
            changes: transaction_changes(json(body)?)?,
        },
        (["namespaces", ns, "views"], Method::GET) => Endpoint::ListViews {
            prefix,
            namespace: namespace(ns)?,
            page: page(),
        },
        (["namespaces", ns, "views"], Method::POST) => Endpoint::CreateView {
            prefix,
            namespace: namespace(ns)?,
            request: json(body)?,
        },
        (["namespaces", ns, "views", v], Method::GET) => Endpoint::LoadView {
            prefix,
            view: ident(ns, v)?,
        },
        (["namespaces", ns, "views", v], Method::HEAD) => Endpoint::ViewExists {
            prefix,
            view: ident(ns, v)?,
        },
        (["namespaces", ns, "views", v], Method::POST) => Endpoint::ReplaceView {
            prefix,
            view: ident(ns, v)?,
            request: json(body)?,
        },
        (["namespaces", ns, "views", v], Method::DELETE) => Endpoint::DropView {
            prefix,
            view: ident(ns, v)?,
        },
        (["views", "rename"], Method::POST) => {
            let request: RenameRequest = json(body)?;
            Endpoint::RenameView {
                prefix,
                source: body_ident(request.source)?,
                destination: body_ident(request.destination)?,
            }
        }
        (
            ["namespaces"]
            | ["namespaces", _]
            | [
                "namespaces",
                _,
                "properties" | "tables" | "register" | "views" | "register-view",
            ]
            | ["namespaces", _, "tables" | "views", _]
            | [
                "namespaces",
                _,
                "tables",
                _,
                "metrics" | "credentials" | "unregister" | "sign",
            ]
            | ["tables" | "views", "rename"]
            | ["transactions", "commit"],
            _,
        ) => return Err(IcebergError::method_not_allowed(method, raw_path)),
        _ => return Err(no_route()),
    };
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::WireError;

    const NAMESPACE_BODY: &str = r#"{"namespace":["sales"]}"#;
    const PROPERTIES_BODY: &str = r#"{"updates":{"a":"1"}}"#;
    const CREATE_TABLE_BODY: &str =
        r#"{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[]}}"#;
    const REGISTER_BODY: &str = r#"{"name":"t","metadata-location":"s3://x/m.json"}"#;
    const COMMIT_BODY: &str = r#"{"requirements":[],"updates":[]}"#;
    const TRANSACTION_CHANGE: &str =
        r#"{"identifier":{"namespace":["sales"],"name":"orders"},"requirements":[],"updates":[]}"#;
    const RENAME_BODY: &str = r#"{"source":{"namespace":["sales"],"name":"orders"},"destination":{"namespace":["sales"],"name":"orders2"}}"#;
    const METRICS_BODY: &str = r#"{"report-type":"scan-report"}"#;
    const SIGN_BODY: &str =
        r#"{"region":"us-east-1","uri":"http://127.0.0.1:9000/b/k","method":"GET","headers":{}}"#;
    const CREATE_VIEW_BODY: &str = r#"{"name":"v","schema":{"type":"struct","schema-id":0,"fields":[]},"view-version":{"version-id":1,"timestamp-ms":0,"schema-id":0,"summary":{},"representations":[],"default-namespace":["sales"]}}"#;

    fn parsed<T: DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    fn commit(json: &str) -> CommitTableRequest {
        parsed::<CommitTableRequestWire>(json)
            .into_request()
            .unwrap()
    }

    /// A valid body for a request line (by what its path names), empty for reads.
    fn body_for(method: &Method, path: &str) -> RequestBody {
        let body = match (method.as_str(), path.rsplit('/').next().unwrap_or("")) {
            ("POST", "namespaces") => NAMESPACE_BODY,
            ("POST", "properties") => PROPERTIES_BODY,
            ("POST", "tables") => CREATE_TABLE_BODY,
            ("POST", "register") => REGISTER_BODY,
            ("POST", "metrics") => METRICS_BODY,
            ("POST", "rename") => RENAME_BODY,
            ("POST", "commit") => {
                return RequestBody::new(bytes::Bytes::from(format!(
                    "{{\"table-changes\":[{TRANSACTION_CHANGE}]}}"
                )));
            }
            ("POST", "views") => CREATE_VIEW_BODY,
            ("POST", "register-view") => REGISTER_BODY,
            ("POST", "sign") => SIGN_BODY,
            ("POST", "unregister") => "",
            ("POST", _) => COMMIT_BODY,
            _ => "",
        };
        RequestBody::new(bytes::Bytes::from(body))
    }

    fn ident(ns: &str, name: &str) -> Ident {
        Ident {
            namespace: ns.into(),
            name: name.into(),
        }
    }

    /// Method + raw path + query → operation, for what each client really sends (`reference/iceberg-rest.md` §1).
    #[test]
    fn routes() {
        let p = || "111122223333.analytics".to_string();
        let arn = || "arn:aws:s3tables:us-east-1:111122223333:bucket/analytics".to_string();
        let cases: Vec<(Method, &str, Endpoint)> = vec![
            (
                Method::GET,
                "/iceberg/v1/config?warehouse=arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fanalytics",
                Endpoint::Config {
                    warehouse: Some(arn()),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/config",
                Endpoint::Config { warehouse: None },
            ),
            // Java sends an empty pageToken on every first list call (trap 4).
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces?pageToken=",
                Endpoint::ListNamespaces {
                    prefix: p(),
                    parent: None,
                    page: PageParams {
                        token: Some(String::new()),
                        size: None,
                    },
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces?parent=sales&pageToken=abc&pageSize=10",
                Endpoint::ListNamespaces {
                    prefix: p(),
                    parent: Some("sales".into()),
                    page: PageParams {
                        token: Some("abc".into()),
                        size: Some("10".into()),
                    },
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces",
                Endpoint::CreateNamespace {
                    prefix: p(),
                    request: parsed(NAMESPACE_BODY),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales",
                Endpoint::LoadNamespace {
                    prefix: p(),
                    namespace: "sales".into(),
                },
            ),
            (
                Method::HEAD,
                "/iceberg/v1/111122223333.analytics/namespaces/sales",
                Endpoint::NamespaceExists {
                    prefix: p(),
                    namespace: "sales".into(),
                },
            ),
            (
                Method::DELETE,
                "/iceberg/v1/111122223333.analytics/namespaces/sales",
                Endpoint::DropNamespace {
                    prefix: p(),
                    namespace: "sales".into(),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/properties",
                Endpoint::UpdateNamespaceProperties {
                    prefix: p(),
                    namespace: "sales".into(),
                    request: parsed(PROPERTIES_BODY),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables",
                Endpoint::ListTables {
                    prefix: p(),
                    namespace: "sales".into(),
                    page: PageParams::default(),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables",
                Endpoint::CreateTable {
                    prefix: p(),
                    namespace: "sales".into(),
                    request: parsed(CREATE_TABLE_BODY),
                    delegation: Delegation::None,
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/register",
                Endpoint::RegisterTable {
                    prefix: p(),
                    namespace: "sales".into(),
                    request: parsed(REGISTER_BODY),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders?snapshots=all",
                Endpoint::LoadTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                    snapshots: Snapshots::All,
                    if_none_match: None,
                    delegation: Delegation::None,
                },
            ),
            (
                Method::HEAD,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders",
                Endpoint::TableExists {
                    prefix: p(),
                    table: ident("sales", "orders"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders",
                Endpoint::CommitTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                    request: commit(COMMIT_BODY),
                },
            ),
            // PyIceberg 0.10 spells booleans the Python way (trap 12).
            (
                Method::DELETE,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders?purgeRequested=False",
                Endpoint::DropTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                    purge: false,
                },
            ),
            (
                Method::DELETE,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders?purgeRequested=TRUE",
                Endpoint::DropTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                    purge: true,
                },
            ),
            (
                Method::DELETE,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders",
                Endpoint::DropTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                    purge: false,
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders/metrics",
                Endpoint::ReportMetrics {
                    prefix: p(),
                    table: ident("sales", "orders"),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders/credentials",
                Endpoint::LoadCredentials {
                    prefix: p(),
                    table: ident("sales", "orders"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/tables/rename",
                Endpoint::RenameTable {
                    prefix: p(),
                    source: ident("sales", "orders"),
                    destination: ident("sales", "orders2"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/transactions/commit",
                Endpoint::CommitTransaction {
                    prefix: p(),
                    changes: vec![(ident("sales", "orders"), commit(TRANSACTION_CHANGE))],
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views",
                Endpoint::ListViews {
                    prefix: p(),
                    namespace: "sales".into(),
                    page: PageParams::default(),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views",
                Endpoint::CreateView {
                    prefix: p(),
                    namespace: "sales".into(),
                    request: parsed(CREATE_VIEW_BODY),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views/v1",
                Endpoint::LoadView {
                    prefix: p(),
                    view: ident("sales", "v1"),
                },
            ),
            (
                Method::HEAD,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views/v1",
                Endpoint::ViewExists {
                    prefix: p(),
                    view: ident("sales", "v1"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views/v1",
                Endpoint::ReplaceView {
                    prefix: p(),
                    view: ident("sales", "v1"),
                    request: parsed(COMMIT_BODY),
                },
            ),
            (
                Method::DELETE,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/views/v1",
                Endpoint::DropView {
                    prefix: p(),
                    view: ident("sales", "v1"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/views/rename",
                Endpoint::RenameView {
                    prefix: p(),
                    source: ident("sales", "orders"),
                    destination: ident("sales", "orders2"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders/unregister",
                Endpoint::UnregisterTable {
                    prefix: p(),
                    table: ident("sales", "orders"),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/register-view",
                Endpoint::RegisterView {
                    prefix: p(),
                    namespace: "sales".into(),
                    request: parsed(REGISTER_BODY),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/111122223333.analytics/namespaces/sales/tables/orders/sign",
                Endpoint::SignRequest {
                    table: Some((p(), ident("sales", "orders"))),
                    request: parsed(SIGN_BODY),
                },
            ),
            (
                Method::POST,
                "/iceberg/v1/aws/s3/sign",
                Endpoint::SignRequest {
                    table: None,
                    request: parsed(SIGN_BODY),
                },
            ),
            // The URL-encoded ARN as prefix (S3 Tables style, trap 7), and the same ARN decoded by a proxy.
            (
                Method::GET,
                "/iceberg/v1/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fanalytics/namespaces/sales",
                Endpoint::LoadNamespace {
                    prefix: arn(),
                    namespace: "sales".into(),
                },
            ),
            (
                Method::GET,
                "/iceberg/v1/arn:aws:s3tables:us-east-1:111122223333:bucket/analytics/namespaces/sales",
                Endpoint::LoadNamespace {
                    prefix: arn(),
                    namespace: "sales".into(),
                },
            ),
            // Java's metadata-table probe: a two-level namespace in a table path is a table that does not exist.
            (
                Method::GET,
                "/iceberg/v1/p/namespaces/db%1Ftbl/tables/snapshots",
                Endpoint::LoadTable {
                    prefix: "p".into(),
                    table: ident("db.tbl", "snapshots"),
                    snapshots: Snapshots::All,
                    if_none_match: None,
                    delegation: Delegation::None,
                },
            ),
            // Percent-encoded names decode after routing; `+` stays literal in paths (trap 5).
            (
                Method::GET,
                "/iceberg/v1/p/namespaces/a%2Fb/tables/c+d",
                Endpoint::LoadTable {
                    prefix: "p".into(),
                    table: ident("a/b", "c+d"),
                    snapshots: Snapshots::All,
                    if_none_match: None,
                    delegation: Delegation::None,
                },
            ),
        ];
        for (method, uri, want) in cases {
            let (path, query) = uri
                .split_once('?')
                .map_or((uri, None), |(p, q)| (p, Some(q)));
            let body = body_for(&method, path);
            assert_eq!(
                route(&method, path, query, &HeaderMap::new(), &body).unwrap(),
                want,
                "{method} {uri}"
            );
        }
    }

    #[test]
    fn rejects() {
        for (method, uri, status) in [
            // Multi-level namespaces (trap 6) in the path and in `parent`.
            (Method::GET, "/iceberg/v1/p/namespaces/a%1Fb", 400),
            (Method::GET, "/iceberg/v1/p/namespaces?parent=a%1Fb", 400),
            (
                Method::DELETE,
                "/iceberg/v1/p/namespaces/ns/tables/t?purgeRequested=maybe",
                400,
            ),
            (Method::GET, "/iceberg/v1/p/unknown", 400),
            (Method::GET, "/iceberg/v2/config", 400),
            (Method::PUT, "/iceberg/v1/p/namespaces/ns", 405),
            (Method::GET, "/iceberg/v1/p/transactions/commit", 405),
            (Method::POST, "/iceberg/v1/config", 405),
            (Method::GET, "/iceberg/v1/aws/s3/sign", 405),
            (
                Method::GET,
                "/iceberg/v1/p/namespaces/ns/tables/t/unregister",
                405,
            ),
            (
                Method::GET,
                "/iceberg/v1/p/namespaces/ns/tables/t?snapshots=some",
                400,
            ),
        ] {
            let (path, query) = uri
                .split_once('?')
                .map_or((uri, None), |(p, q)| (p, Some(q)));
            let err = route(
                &method,
                path,
                query,
                &HeaderMap::new(),
                &body_for(&method, path),
            )
            .unwrap_err();
            assert_eq!(err.status().as_u16(), status, "{method} {uri}");
        }
    }

    #[test]
    fn advertised_endpoints_are_routed() {
        for endpoint in ADVERTISED_ENDPOINTS {
            let (method, template) = endpoint.split_once(' ').unwrap();
            let path = template
                .replace("/v1/", "/iceberg/v1/")
                .replace("{prefix}", "p")
                .replace("{namespace}", "ns")
                .replace("{table}", "t")
                .replace("{view}", "v");
            let method: Method = method.parse().unwrap();
            assert!(
                route(
                    &method,
                    &path,
                    None,
                    &HeaderMap::new(),
                    &body_for(&method, &path)
                )
                .is_ok(),
                "{endpoint}"
            );
        }
    }
}

#[cfg(test)]
mod body_tests {
    use super::*;
    use crate::pipeline::WireError;

    fn commit_route(path: &str, body: &[u8]) -> Result<Endpoint, IcebergError> {
        route(
            &Method::POST,
            path,
            None,
            &HeaderMap::new(),
            &RequestBody::new(bytes::Bytes::copy_from_slice(body)),
        )
    }

    /// The attack of issue 14 finding 1: a transaction whose body is not UTF-8 used to authorize nothing and then
    /// be applied from a Latin-1 reading. Now the body is parsed once, strictly: it is a 400.
    #[test]
    fn bodies_that_are_not_utf8_or_not_json_are_400() {
        let path = "/iceberg/v1/222233334444.victim/transactions/commit";
        let attack = b"{\"table-changes\":[{\"identifier\":{\"namespace\":[\"ns\"],\"name\":\"t\"},\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"main\"}]}],\"x\":\"\xff\"}";
        assert_eq!(
            commit_route(path, attack).unwrap_err().status().as_u16(),
            400
        );
        for body in [
            &b"{"[..],
            b"",
            b"[]",
            b"{\"table-changes\":[]}",
            b"{\"table-changes\":[{\"requirements\":[],\"updates\":[]}]}",
        ] {
            assert_eq!(
                commit_route(path, body).unwrap_err().status().as_u16(),
                400,
                "{body:?}"
            );
        }
        let rename = "/iceberg/v1/222233334444.victim/tables/rename";
        let attack = b"{\"source\":{\"namespace\":[\"ns\"],\"name\":\"t\"},\"destination\":{\"namespace\":[\"ns\"],\"name\":\"u\"},\"x\":\"\xff\"}";
        assert_eq!(
            commit_route(rename, attack).unwrap_err().status().as_u16(),
            400
        );
    }
}
