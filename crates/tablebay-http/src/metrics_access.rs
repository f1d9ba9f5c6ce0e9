//! Who may read `GET /metrics` (`--metrics-auth`): anyone (the default, as Prometheus scrapes without
//! credentials), the holder of a bearer token (Prometheus' `authorization` scrape setting), or the instance root
//! with a SigV4-signed request. The metrics count every account's requests, so with SigV4 only the operator's key
//! (`PrincipalKind::InstanceRoot`, the one that administers accounts) may read them; an account root or user is
//! refused like on the admin account routes.

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};
use tablebay_auth::{AuthError, PrincipalKind};

use crate::pipeline::{self, PipelineError, Schemes};
use crate::state::{AppState, Secret};

/// Who may read `/metrics`.
#[derive(Clone, Debug, Default)]
pub enum MetricsAccess {
    /// Anyone who reaches the tables listener.
    #[default]
    Open,
    /// `Authorization: Bearer <token>` with this token.
    Token(Secret),
    /// A SigV4 request (service `s3tables` or `osstables`) signed by the instance root.
    InstanceRoot,
}

impl MetricsAccess {
    /// `Ok` when the request may read the metrics; else the refusal (401 without or with a wrong bearer token,
    /// 403 when SigV4 does not verify or the signer is not the instance root).
    pub(crate) async fn check(&self, state: &AppState, request: Request) -> Result<(), Response> {
        match self {
            MetricsAccess::Open => Ok(()),
            MetricsAccess::Token(expected) => {
                let given = request
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .unwrap_or_default();
                // Equal digests, so the comparison's time says nothing about the token.
                if !given.is_empty()
                    && Sha256::digest(given.as_bytes()) == Sha256::digest(expected.expose())
                {
                    Ok(())
                } else {
                    Err(refusal(
                        StatusCode::UNAUTHORIZED,
                        "metrics require a bearer token",
                    ))
                }
            }
            MetricsAccess::InstanceRoot => {
                let (parts, _) = request.into_parts();
                let schemes = Schemes::signed(&state.tables_verifier);
                match pipeline::authenticate_bodiless(state, schemes, &parts).await {
                    Ok(principal) if principal.kind == PrincipalKind::InstanceRoot => Ok(()),
                    Ok(principal) => {
                        tracing::info!(principal = %principal.arn, "metrics refused: not the instance root");
                        Err(refusal(
                            StatusCode::FORBIDDEN,
                            "metrics are readable by the instance root only",
                        ))
                    }
                    Err(PipelineError::Auth(AuthError::Unavailable)) => Err(refusal(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the credential store is unavailable",
                    )),
                    Err(e) => {
                        tracing::debug!(error = %e, "metrics refused");
                        Err(refusal(
                            StatusCode::FORBIDDEN,
                            "metrics require a SigV4 request signed by the instance root",
                        ))
                    }
                }
            }
        }
    }
}

fn refusal(status: StatusCode, message: &'static str) -> Response {
    let mut response = (status, message).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}
