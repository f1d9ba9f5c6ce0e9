//! The console's stylesheet and script, embedded in the binary (`include_str!`) and served without a session
//! from `/console/static/`, with the same security headers as the pages and a day of caching (the URLs are
//! fixed, so a new binary's files are fetched again at most a day later).

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, StatusCode, header};

use super::layout;
use crate::pipeline;
use crate::state::AppState;

const CSS: &str = include_str!("static/console.css");
const JS: &str = include_str!("static/console.js");

/// `GET /console/static/{console.css|console.js}`.
pub(super) async fn serve(app: &AppState, request: Request) -> Response {
    let path = request.uri().path().to_string();
    pipeline::serve_anonymous(
        app,
        super::NAME,
        HeaderName::from_static("x-request-id"),
        "StaticFile",
        0,
        request,
        |_, _| async move {
            let (body, content_type) = match path.as_str() {
                "/console/static/console.css" => (CSS, "text/css; charset=utf-8"),
                "/console/static/console.js" => (JS, "text/javascript; charset=utf-8"),
                _ => return (StatusCode::NOT_FOUND, "not found").into_response(),
            };
            let mut response = (StatusCode::OK, body).into_response();
            layout::secure(&mut response, content_type);
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            );
            response
        },
    )
    .await
}
