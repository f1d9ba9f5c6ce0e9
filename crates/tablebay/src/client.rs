//! The one signed-request client of the command line (`tablebay admin …`, `tablebay maintenance …`): where the
//! server is, which credentials sign (SigV4, signing name `s3tables`, as any S3 Tables client signs), and how a
//! request is sent and its answer printed.

use anyhow::{Context, bail};
use clap::Args;
use http::Method;
use tablebay_auth::signer::{SigningParams, sign_with};

/// Where the server is and who is asking: the same flags and variables for every client command.
#[derive(Args, Debug, Clone)]
pub struct ClientArgs {
    /// The tables listener's URL.
    #[arg(
        long,
        env = "TABLEBAY_ENDPOINT",
        default_value = "http://127.0.0.1:8181"
    )]
    pub endpoint: String,
    /// The region to sign for (the server's `--region`).
    #[arg(long, env = "TABLEBAY_REGION", default_value = "us-east-1")]
    pub region: String,
    /// The access key id that signs.
    #[arg(long, env = "AWS_ACCESS_KEY_ID")]
    pub access_key_id: String,
    /// Its secret access key.
    #[arg(long, env = "AWS_SECRET_ACCESS_KEY", hide_env_values = true)]
    pub secret_access_key: String,
    /// The session token of temporary credentials.
    #[arg(long, env = "AWS_SESSION_TOKEN", hide_env_values = true)]
    pub session_token: Option<String>,
}

/// Percent-encodes one path segment or query value (RFC 3986 unreserved characters stay).
pub fn encode(value: &str) -> String {
    const RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(value, RESERVED).to_string()
}

impl ClientArgs {
    /// Signs and sends `method path_and_query` with a JSON `body` (empty for none); prints the answer (on stdout,
    /// or stderr for an error) and fails on a non-2xx status.
    pub async fn send(&self, method: Method, path_and_query: &str, body: Vec<u8>) -> anyhow::Result<()> {
        let url = format!("{}{path_and_query}", self.endpoint.trim_end_matches('/'));
        let mut builder = http::Request::builder().method(method.clone()).uri(&url);
        if !body.is_empty() {
            builder = builder.header("content-type", "application/json");
        }
        let (mut parts, ()) = builder
            .body(())
            .with_context(|| format!("invalid endpoint {url}"))?
            .into_parts();
        let params = SigningParams {
            access_key_id: &self.access_key_id,
            secret_access_key: &self.secret_access_key,
            session_token: self.session_token.as_deref(),
            region: &self.region,
            service: "s3tables",
            time: chrono::Utc::now(),
        };
        sign_with(&mut parts, &body, &params).map_err(|e| anyhow::anyhow!("signing: {e}"))?;
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
        let text = response.text().await.context("reading the answer")?;
        if status.is_success() {
            println!("{text}");
            Ok(())
        } else {
            eprintln!("{text}");
            bail!("the server answered {status}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_arns_as_one_segment() {
        assert_eq!(
            encode("arn:aws:s3tables:us-east-1:111122223333:bucket/b/table/x-y_z.~"),
            "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fb%2Ftable%2Fx-y_z.~"
        );
        assert_eq!(encode("a b+c"), "a%20b%2Bc");
    }
}
