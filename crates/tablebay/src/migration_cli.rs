//! `tablebay migration start|sync|update|complete|get|list`: the client side of the six table-migration
//! operations, sent through the one signed-request client (`client.rs`). botocore refuses the Iceberg source
//! members its model lacks, so this is the way to send them (docs/migration.md).

use anyhow::Context;
use clap::Subcommand;
use http::Method;

use crate::client::{ClientArgs, encode};

/// `tablebay migration …`.
#[derive(Subcommand, Debug)]
pub enum MigrationCommand {
    /// StartTableMigration: send a request body (JSON, as docs/migration.md shows) and print the migration id.
    Start {
        /// The request: JSON text, `@FILE`, or `-` for standard input.
        #[arg(long)]
        request: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// SyncTableMigration: bring over the source's commits since the last start or sync.
    Sync {
        /// The destination table's ARN.
        #[arg(long)]
        table_arn: String,
        /// The role ARN recorded with the run.
        #[arg(long)]
        role_arn: String,
        /// The report bucket ARN (`migrationOutput.bucket`).
        #[arg(long)]
        output_bucket: String,
        /// Wait in pendingReview for `update --state queued`.
        #[arg(long)]
        review: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// UpdateTableMigration: continue a reviewed run (`queued`) or cancel one (`cancelled`).
    Update {
        /// The migration id.
        #[arg(long)]
        migration_id: String,
        /// `queued` or `cancelled`.
        #[arg(long)]
        state: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// CompleteTableMigration: make the table an ordinary, writable table.
    Complete {
        /// The destination table's ARN.
        #[arg(long)]
        table_arn: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GetTableMigration by migration id or by table (its latest run).
    Get {
        /// The migration id.
        #[arg(long, required_unless_present = "table_arn")]
        migration_id: Option<String>,
        /// The destination table's ARN.
        #[arg(long)]
        table_arn: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// ListTableMigrations of a bucket or a table.
    List {
        /// The bucket's ARN.
        #[arg(long, required_unless_present = "table_arn")]
        table_bucket_arn: Option<String>,
        /// Only this destination table's runs.
        #[arg(long)]
        table_arn: Option<String>,
        /// Only runs in this state.
        #[arg(long)]
        state: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

fn query(pairs: &[(&str, Option<&str>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={}", encode(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// The request body `--request` names.
fn request_body(request: &str) -> anyhow::Result<Vec<u8>> {
    let text = if request == "-" {
        std::io::read_to_string(std::io::stdin())
            .context("reading the request from standard input")?
    } else if let Some(path) = request.strip_prefix('@') {
        std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?
    } else {
        request.to_string()
    };
    // Checked here so that a typo is reported before anything is sent.
    let value: serde_json::Value =
        serde_json::from_str(&text).context("the request is not valid JSON")?;
    Ok(serde_json::to_vec(&value)?)
}

/// Sends the command's request and prints the answer; a non-2xx answer is an error (exit status 1).
pub async fn run(command: MigrationCommand) -> anyhow::Result<()> {
    let (method, path, body, client) = match command {
        MigrationCommand::Start { request, client } => (
            Method::POST,
            "/start-table-migration".to_string(),
            request_body(&request)?,
            client,
        ),
        MigrationCommand::Sync {
            table_arn,
            role_arn,
            output_bucket,
            review,
            client,
        } => {
            let body = serde_json::json!({
                "tableARN": table_arn,
                "roleARN": role_arn,
                "reviewMigrationPlan": review,
                "migrationOutput": {"bucket": output_bucket},
            });
            (
                Method::POST,
                "/sync-table-migration".to_string(),
                serde_json::to_vec(&body)?,
                client,
            )
        }
        MigrationCommand::Update {
            migration_id,
            state,
            client,
        } => (
            Method::POST,
            format!(
                "/update-table-migration{}",
                query(&[("migrationId", Some(&migration_id))])
            ),
            serde_json::to_vec(&serde_json::json!({"requestedState": state}))?,
            client,
        ),
        MigrationCommand::Complete { table_arn, client } => (
            Method::POST,
            format!(
                "/complete-table-migration{}",
                query(&[("tableARN", Some(&table_arn))])
            ),
            Vec::new(),
            client,
        ),
        MigrationCommand::Get {
            migration_id,
            table_arn,
            client,
        } => (
            Method::GET,
            format!(
                "/get-table-migration{}",
                query(&[
                    ("migrationId", migration_id.as_deref()),
                    ("tableARN", table_arn.as_deref()),
                ])
            ),
            Vec::new(),
            client,
        ),
        MigrationCommand::List {
            table_bucket_arn,
            table_arn,
            state,
            client,
        } => (
            Method::GET,
            format!(
                "/list-table-migrations{}",
                query(&[
                    ("tableBucketARN", table_bucket_arn.as_deref()),
                    ("tableARN", table_arn.as_deref()),
                    ("state", state.as_deref()),
                ])
            ),
            Vec::new(),
            client,
        ),
    };
    client.send(method, &path, body).await
}
