//! Request bodies: read with a size limit and a deadline, under a shared memory budget while they are not yet
//! covered by a verified signature, and then handed to the surface as one [`RequestBody`] — the only text it
//! parses.
//!
//! The budget is what keeps clients that are not authenticated yet from holding memory: a body whose signature
//! cannot be checked until it has arrived (SigV4 without a claimed payload hash) draws its bytes from
//! [`BodyBudget`] first, all at once (its `Content-Length`, or the surface's limit when it sends none), so no two
//! requests can each hold half of what both need. A request that cannot get its share in time is answered 503.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::PipelineError;

/// How long a body may take to arrive: JSON documents are small, and a slow drip holds a connection.
const BODY_DEADLINE: Duration = Duration::from_secs(60);
/// How long a request waits for its share of the budget before it is told to retry.
const BUDGET_WAIT: Duration = Duration::from_secs(10);
/// The budget's unit.
const BUDGET_UNIT: usize = 1024;

/// Memory for bodies that no verified signature covers yet, shared by every surface of a listener.
#[derive(Clone, Debug)]
pub(crate) struct BodyBudget {
    units: Arc<Semaphore>,
    total_units: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (at least one unit).
    pub(crate) fn new(bytes: usize) -> Self {
        let total_units = bytes.div_ceil(BUDGET_UNIT).max(1);
        Self {
            units: Arc::new(Semaphore::new(total_units)),
            total_units,
        }
    }

    async fn reserve(&self, bytes: usize) -> Result<OwnedSemaphorePermit, PipelineError> {
        let units = bytes.div_ceil(BUDGET_UNIT).clamp(1, self.total_units);
        let units = u32::try_from(units).map_err(|_| PipelineError::Busy)?;
        match tokio::time::timeout(BUDGET_WAIT, self.units.clone().acquire_many_owned(units)).await
        {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) | Err(_) => Err(PipelineError::Busy),
        }
    }
}

/// 64 MiB: two of the largest Iceberg bodies at once, or thousands of typical ones.
pub(crate) const DEFAULT_BODY_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// Reads a whole body of at most `limit` bytes. With a `budget`, its share is reserved before the first byte
/// and released when the returned bytes are handed on (the caller verifies them at once).
pub(super) async fn read(
    body: axum::body::Body,
    limit: usize,
    budget: Option<&BodyBudget>,
) -> Result<Bytes, PipelineError> {
    let declared = declared_length(&body);
    if declared.is_some_and(|length| length > limit) {
        drain(body).await;
        return Err(PipelineError::BodyTooLarge { limit });
    }
    let _reserved = match budget {
        Some(budget) => Some(budget.reserve(declared.unwrap_or(limit)).await?),
        None => None,
    };
    tokio::time::timeout(BODY_DEADLINE, collect(body, limit))
        .await
        .map_err(|_| {
            PipelineError::BodyUnreadable(format!(
                "it did not arrive within {} s",
                BODY_DEADLINE.as_secs()
            ))
        })?
}

fn declared_length(body: &axum::body::Body) -> Option<usize> {
    use axum::body::HttpBody as _;
    body.size_hint()
        .exact()
        .and_then(|length| usize::try_from(length).ok())
}

async fn collect(mut body: axum::body::Body, limit: usize) -> Result<Bytes, PipelineError> {
    let mut out = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| PipelineError::BodyUnreadable(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if out.len().saturating_add(data.len()) > limit {
                drain(body).await;
                return Err(PipelineError::BodyTooLarge { limit });
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out.freeze())
}

/// How much of a refused body is read and dropped, so that a client still writing it (most send no
/// `Expect: 100-continue`) reads the answer instead of a reset connection; more is cut off.
const DRAIN_LIMIT: usize = 1024 * 1024;
const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// Reads and drops the rest of a refused body, up to [`DRAIN_LIMIT`] bytes and [`DRAIN_DEADLINE`].
async fn drain(mut body: axum::body::Body) {
    let discard = async {
        let mut seen = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                seen = seen.saturating_add(data.len());
                if seen > DRAIN_LIMIT {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_DEADLINE, discard).await;
}

/// A request body whose reading is settled: the bytes a verified signature covers (for Java's Latin-1 bodies,
/// the UTF-8 text it signed: `reference/iceberg-rest.md` trap 19), or the bytes as sent when the credentials
/// do not cover the body (a bearer token). Parsers read it as strict UTF-8.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestBody(Bytes);

impl RequestBody {
    pub(crate) fn new(bytes: Bytes) -> Self {
        Self(bytes)
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// Whether the body is empty or only whitespace (botocore omits bodies without members).
    pub(crate) fn is_blank(&self) -> bool {
        self.0.iter().all(u8::is_ascii_whitespace)
    }

    /// The body as UTF-8 text.
    pub(crate) fn text(&self) -> Result<&str, String> {
        std::str::from_utf8(&self.0).map_err(|e| format!("the body is not UTF-8: {e}"))
    }

    /// The body as JSON of type `T`; a blank body reads as `{}` when `blank_is_empty_object`. The whole body
    /// must be UTF-8: `serde_json::from_slice` does not check the strings of members it skips.
    pub(crate) fn json<T: DeserializeOwned>(
        &self,
        blank_is_empty_object: bool,
    ) -> Result<T, String> {
        if blank_is_empty_object && self.is_blank() {
            return serde_json::from_str("{}").map_err(|e| e.to_string());
        }
        serde_json::from_str(self.text()?).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn limits_and_budget() {
        let body = || axum::body::Body::from(vec![b'x'; 10_000]);
        assert_eq!(read(body(), 10_000, None).await.unwrap().len(), 10_000);
        assert!(matches!(
            read(body(), 9_999, None).await,
            Err(PipelineError::BodyTooLarge { limit: 9_999 })
        ));
        // A budget smaller than one body still admits it (the reservation is capped at the whole budget),
        // and gives its share back once the body is read.
        let budget = BodyBudget::new(4_096);
        for _ in 0..3 {
            assert_eq!(
                read(body(), 10_000, Some(&budget)).await.unwrap().len(),
                10_000
            );
        }
        assert_eq!(budget.units.available_permits(), budget.total_units);
    }

    #[tokio::test(start_paused = true)]
    async fn an_exhausted_budget_is_busy() {
        let budget = BodyBudget::new(4_096);
        let held = budget.reserve(4_096).await.unwrap();
        let err = read(axum::body::Body::from("{}"), 100, Some(&budget)).await;
        assert!(matches!(err, Err(PipelineError::Busy)));
        drop(held);
        assert!(
            read(axum::body::Body::from("{}"), 100, Some(&budget))
                .await
                .is_ok()
        );
    }

    #[test]
    fn strict_utf8_json() {
        let body = RequestBody::new(Bytes::from_static(b"{\"a\":\"caf\xe9\"}"));
        assert!(body.json::<serde_json::Value>(false).is_err());
        // Not even in a member the target type skips.
        #[derive(serde::Deserialize)]
        struct Only {
            #[allow(dead_code)]
            a: u8,
        }
        let body = RequestBody::new(Bytes::from_static(b"{\"a\":1,\"x\":\"\xff\"}"));
        assert!(serde_json::from_slice::<Only>(body.bytes()).is_ok());
        assert!(body.json::<Only>(false).is_err());
        assert!(body.text().is_err());
        let blank = RequestBody::new(Bytes::from_static(b"  "));
        assert_eq!(
            blank.json::<serde_json::Value>(true).unwrap(),
            serde_json::json!({})
        );
        assert!(blank.json::<serde_json::Value>(false).is_err());
    }
}
