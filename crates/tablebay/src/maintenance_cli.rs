//! `tablebay maintenance run|runs`: the client side of the admin maintenance endpoints. Requests are SigV4-signed
//! with `tablebay-auth`'s signer (signing name `s3tables`), exactly as any S3 Tables client signs them.

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use http::{Method, Request};

/// Where the server is and who is asking.
#[derive(Args, Debug)]
pub struct ClientArgs {
    /// The tables listener's URL.
    #[arg(
        long,
        env = "TABLEBAY_ENDPOINT",
        default_value = "http://127.0.0.1:8181"
    )]
    endpoint: String,
    /// The region to sign for.
    #[arg(long, env = "AWS_REGION", default_value = "us-east-1")]
    region: String,
    /// Access key id of an account that owns the table.
    #[arg(long, env = "AWS_ACCESS_KEY_ID")]
    access_key_id: String,
    /// Its secret access key.
    #[arg(long, env = "AWS_SECRET_ACCESS_KEY", hide_env_values = true)]
    secret_access_key: String,
}

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
    let url = format!("{}{path}", client.endpoint.trim_end_matches('/'));
    let mut builder = Request::builder().method(method.clone()).uri(&url);
    if !body.is_empty() {
        builder = builder.header("content-type", "application/json");
    }
    let (mut parts, ()) = builder
        .body(())
        .with_context(|| format!("invalid endpoint {url}"))?
        .into_parts();
    tablebay_auth::signer::sign(
        &mut parts,
        &body,
        &client.access_key_id,
        &client.secret_access_key,
        &client.region,
        "s3tables",
        chrono::Utc::now(),
    )
    .map_err(|e| anyhow::anyhow!("signing the request: {e}"))?;
    let mut request = reqwest::Client::new().request(method, &url).body(body);
    for (name, value) in &parts.headers {
        if name != http::header::HOST {
            request = request.header(name, value);
        }
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("calling {url}"))?;
    let status = response.status();
    let text = response.text().await?;
    println!("{text}");
    if !status.is_success() {
        bail!("the server answered {status}");
    }
    Ok(())
}

/// Percent-encodes a query value (ARNs carry `:` and `/`).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
