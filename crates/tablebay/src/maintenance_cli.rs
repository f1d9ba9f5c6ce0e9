//! `tablebay maintenance run|runs`: the client side of the admin maintenance endpoints, sent through the one
//! signed-request client (`client.rs`).

use clap::Subcommand;
use http::Method;

use crate::client::{ClientArgs, encode};

/// `tablebay maintenance …`.
#[derive(Subcommand, Debug)]
pub enum MaintenanceCommand {
    /// Run one maintenance job on a table now and print its run record (JSON).
    Run {
        /// The table's ARN.
        #[arg(long)]
        table_arn: String,
        /// `icebergCompaction`, `icebergSnapshotManagement` or `icebergUnreferencedFileRemoval`.
        #[arg(long = "type")]
        job_type: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Print recorded maintenance runs, newest first (JSON).
    Runs {
        /// Only this table's runs.
        #[arg(long)]
        table_arn: Option<String>,
        /// At most this many (default 100).
        #[arg(long)]
        max_runs: Option<u32>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

/// Sends the command's request and prints the answer; a non-2xx answer is an error (exit status 1).
pub async fn run(command: MaintenanceCommand) -> anyhow::Result<()> {
    let (method, path, body, client) = match command {
        MaintenanceCommand::Run {
            table_arn,
            job_type,
            client,
        } => {
            let body =
                serde_json::to_vec(&serde_json::json!({"tableArn": table_arn, "type": job_type}))?;
            (
                Method::POST,
                "/admin/maintenance/run".to_string(),
                body,
                client,
            )
        }
        MaintenanceCommand::Runs {
            table_arn,
            max_runs,
            client,
        } => {
            let mut query = Vec::new();
            if let Some(arn) = table_arn {
                query.push(format!("tableArn={}", encode(&arn)));
            }
            if let Some(n) = max_runs {
                query.push(format!("maxRuns={n}"));
            }
            let path = if query.is_empty() {
                "/admin/maintenance/runs".to_string()
            } else {
                format!("/admin/maintenance/runs?{}", query.join("&"))
            };
            (Method::GET, path, Vec::new(), client)
        }
    };
    client.send(method, &path, body).await
}
