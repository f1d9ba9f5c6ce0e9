//! Virtual-hosted table-bucket addresses, as Alibaba's SDKs send them by default: `Host:
//! <bucket-name>-<account-id>.<endpoint host>`, with the bucket ARN still in the path (or GetTable's query). The
//! host only has to agree with the ARN, which stays what the request is about; path style needs nothing.
//!
//! A host is read as virtual-hosted when its first label ends in a hyphen and 12 to 16 digits (an account id) and
//! more labels follow: `orders-111122223333.tables.example.com`, `orders-111122223333.localhost:8080`. An endpoint
//! host of that shape itself would be misread, so name endpoints otherwise.

use http::request::Parts;

use super::error::ControlPlaneError;
use super::router::Endpoint;

/// 400 when the request's host addresses another table bucket than the ARN it names.
pub(crate) fn check(parts: &Parts, endpoint: &Endpoint) -> Result<(), ControlPlaneError> {
    let (Some((name, account)), Some(arn)) = (addressed_bucket(parts), endpoint.bucket_arn())
    else {
        return Ok(());
    };
    let named = arn
        .rsplit_once(":bucket/")
        .and_then(|(prefix, bucket)| Some((bucket, prefix.rsplit(':').next()?)));
    if named == Some((name, account)) {
        return Ok(());
    }
    Err(ControlPlaneError::BadRequest(format!(
        "The host addresses table bucket {name} of account {account}, but the request names {arn}"
    )))
}

/// `(bucket name, account id)` of a virtual-hosted `Host` (or URI authority).
fn addressed_bucket(parts: &Parts) -> Option<(&str, &str)> {
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| parts.uri.authority().map(http::uri::Authority::as_str))?;
    let (label, rest) = host.split_once('.')?;
    if rest.is_empty() {
        return None;
    }
    let (name, account) = label.rsplit_once('-')?;
    let is_account =
        (12..=16).contains(&account.len()) && account.bytes().all(|b| b.is_ascii_digit());
    (is_account && !name.is_empty()).then_some((name, account))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(host: &str) -> Parts {
        http::Request::builder()
            .header("host", host)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn reads_bucket_and_account_from_the_first_label() {
        assert_eq!(
            addressed_bucket(&parts("my-orders-111122223333.tables.example:8080")),
            Some(("my-orders", "111122223333"))
        );
        assert_eq!(
            addressed_bucket(&parts("orders-111122223333.localhost")),
            Some(("orders", "111122223333"))
        );
        for path_style in [
            "127.0.0.1:8080",
            "tables.example.com",
            "orders-1234.example",
            "localhost",
            "orders-111122223333",
        ] {
            assert_eq!(addressed_bucket(&parts(path_style)), None, "{path_style}");
        }
    }
}
