//! The S3 listener's interim answer: a well-formed S3 XML error for every request.

use axum::Router;
use axum::response::IntoResponse;
use http::{HeaderValue, StatusCode, header};

use crate::state::AppState;

pub(crate) fn router(state: AppState) -> Router {
    Router::new().fallback(not_implemented).with_state(state)
}

async fn not_implemented() -> impl IntoResponse {
    let request_id = uuid::Uuid::new_v4();
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NotImplemented</Code><Message>The S3 data plane \
         is not available in this build.</Message><RequestId>{request_id}</RequestId></Error>"
    );
    (StatusCode::NOT_IMPLEMENTED, [(header::CONTENT_TYPE, HeaderValue::from_static("application/xml"))], body)
}
