//! The Connect page of a table bucket: ready-to-paste configuration for the product guide's Kafka Connect
//! Iceberg sink, its Flink SQL catalog DDL, Spark, PyIceberg and DuckDB, filled in with this server's endpoints
//! (the address the browser reached, the S3 data plane's public URL), its region and the bucket's ARN — the same
//! settings `docs/clients/*.md` document and the client suites run. The viewer's access key id is filled in;
//! secrets never are.

use axum::response::Response;
use http::StatusCode;
use maud::html;
use tablebay_catalog::BucketArn;

use super::buckets;
use super::error::ConsoleError;
use super::layout::{self, Page, Viewer};
use crate::pipeline::Context;

/// What every snippet is filled in with.
pub(super) struct Endpoints {
    /// `http://host:port/iceberg` of the tables listener.
    pub iceberg: String,
    /// The S3 data plane URL.
    pub s3: String,
    /// The region.
    pub region: String,
    /// The bucket's ARN.
    pub warehouse: String,
    /// The viewer's access key id.
    pub access_key_id: String,
}

/// The snippets, by client: (id, title, language, text).
pub(super) fn snippets(e: &Endpoints) -> Vec<(&'static str, &'static str, String)> {
    let Endpoints {
        iceberg,
        s3,
        region,
        warehouse,
        access_key_id,
    } = e;
    let s3_host = s3
        .split_once("://")
        .map_or(s3.as_str(), |(_, rest)| rest)
        .trim_end_matches('/');
    vec![
        (
            "kafka-connect",
            "Kafka Connect (Iceberg sink)",
            format!(
                "connector.class=org.apache.iceberg.connect.IcebergSinkConnector
topics=events
iceberg.tables=my_namespace.events
iceberg.catalog.type=rest
iceberg.catalog.uri={iceberg}
iceberg.catalog.rest.sigv4-enabled=true
iceberg.catalog.rest.signing-name=osstables
iceberg.catalog.rest.signing-region={region}
iceberg.catalog.warehouse={warehouse}
iceberg.catalog.rest.access-key-id={access_key_id}
iceberg.catalog.rest.secret-access-key=<secret access key>
iceberg.catalog.io-impl=org.apache.iceberg.aws.s3.S3FileIO
iceberg.catalog.s3.endpoint={s3}
iceberg.catalog.s3.access-key-id={access_key_id}
iceberg.catalog.s3.secret-access-key=<secret access key>
iceberg.catalog.s3.path-style-access=true
iceberg.catalog.client.region={region}
"
            ),
        ),
        (
            "flink",
            "Flink SQL",
            format!(
                "CREATE CATALOG mycatalog WITH (
  'type'='iceberg', 'catalog-impl'='org.apache.iceberg.rest.RESTCatalog',
  'io-impl'='org.apache.iceberg.aws.s3.S3FileIO', 'uri'='{iceberg}',
  'warehouse'='{warehouse}', 'rest.sigv4-enabled'='true',
  'rest.signing-name'='osstables',
  'rest.signing-region'='{region}', 's3.endpoint'='{s3}', 's3.path-style-access'='true');
-- Credentials: AWS_ACCESS_KEY_ID={access_key_id}, AWS_SECRET_ACCESS_KEY, AWS_REGION={region} in the environment.
"
            ),
        ),
        (
            "spark",
            "Spark (spark-defaults.conf)",
            format!(
                "spark.sql.extensions                          org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
spark.sql.catalog.tablebay                    org.apache.iceberg.spark.SparkCatalog
spark.sql.catalog.tablebay.type               rest
spark.sql.catalog.tablebay.uri                {iceberg}
spark.sql.catalog.tablebay.warehouse          {warehouse}
spark.sql.catalog.tablebay.rest.sigv4-enabled true
spark.sql.catalog.tablebay.rest.signing-name  osstables
spark.sql.catalog.tablebay.rest.signing-region {region}
spark.sql.catalog.tablebay.io-impl            org.apache.iceberg.aws.s3.S3FileIO
spark.sql.catalog.tablebay.s3.endpoint        {s3}
spark.sql.catalog.tablebay.s3.path-style-access true
spark.sql.catalog.tablebay.client.region      {region}
"
            ),
        ),
        (
            "pyiceberg",
            "PyIceberg",
            format!(
                "from pyiceberg.catalog.rest import RestCatalog

catalog = RestCatalog(
    \"tablebay\",
    **{{
        \"uri\": \"{iceberg}\",
        \"warehouse\": \"{warehouse}\",
        \"rest.sigv4-enabled\": \"true\",
        \"rest.signing-name\": \"osstables\",
        \"rest.signing-region\": \"{region}\",
        \"client.access-key-id\": \"{access_key_id}\",
        \"client.secret-access-key\": \"<secret access key>\",
        \"client.region\": \"{region}\",
        \"s3.endpoint\": \"{s3}\",
        \"py-io-impl\": \"pyiceberg.io.pyarrow.PyArrowFileIO\",
    }},
)
"
            ),
        ),
        (
            "duckdb",
            "DuckDB",
            format!(
                "CREATE SECRET tablebay_s3 (
    TYPE s3,
    KEY_ID '{access_key_id}',
    SECRET '<secret access key>',
    REGION '{region}',
    ENDPOINT '{s3_host}',
    URL_STYLE 'path',
    USE_SSL false
);
ATTACH '{warehouse}' AS cat (
    TYPE iceberg,
    ENDPOINT '{iceberg}',
    AUTHORIZATION_TYPE 'sigv4',
    SIGV4_SERVICE 'osstables',
    SIGV4_REGION '{region}',
    SECRET tablebay_s3
);
"
            ),
        ),
    ]
}

/// `GET /console/buckets/{b}/connect`.
pub(super) async fn page(
    cx: &Context<'_>,
    viewer: &Viewer,
    arn: &BucketArn,
) -> Result<Response, ConsoleError> {
    // The bucket must exist (GetTableBucket was authorized on it).
    cx.catalog().bucket(arn).await?;
    let host = cx
        .parts
        .headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            h.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']'))
        })
        .unwrap_or("127.0.0.1:8181");
    let endpoints = Endpoints {
        iceberg: format!("http://{host}/iceberg"),
        s3: cx.app.iceberg.s3_public_url.clone(),
        region: cx.catalog().config().region.clone(),
        warehouse: arn.to_string(),
        access_key_id: cx.principal.access_key_id.clone(),
    };
    let name = arn.name.as_str();
    let body = html! {
        main {
            h1 { "Connect to " (name) }
            section class="card" {
                dl class="facts" {
                    dt { "Warehouse (bucket ARN)" } dd class="mono" id="warehouse" { (endpoints.warehouse) }
                    dt { "Iceberg REST endpoint" } dd class="mono" id="iceberg-endpoint" { (endpoints.iceberg) }
                    dt { "S3 endpoint" } dd class="mono" id="s3-endpoint" { (endpoints.s3) }
                    dt { "Region" } dd { (endpoints.region) }
                    dt { "Signing name" } dd class="mono" { "osstables (or s3tables)" }
                }
                p class="muted" { "Replace " code { "<secret access key>" } " with the secret of the access key shown; the console never shows a secret after it was created." }
            }
            @for (id, title, text) in snippets(&endpoints) {
                section class="card" id=(id) {
                    div class="actions" {
                        h2 { (title) }
                        button type="button" class="secondary" data-copy=(format!("{id}-text")) aria-label=(format!("Copy the {title} configuration")) { "Copy" }
                    }
                    pre id=(format!("{id}-text")) tabindex="0" { (text) }
                }
            }
        }
    };
    let page = Page::new(format!("Connect to {name} — Tablebay console"), viewer)
        .crumb("Table buckets", "/console/buckets")
        .crumb(name, buckets::href(arn))
        .crumb("Connect", format!("{}/connect", buckets::href(arn)));
    Ok(layout::respond(StatusCode::OK, page.render(body)))
}
