//! The page shell every console page shares (head, header with navigation and sign-out, breadcrumbs, main) and
//! the small pieces pages are built from: forms that carry the CSRF token, one-button actions, numbers and
//! dates. Every value goes through maud, which escapes it; nothing here writes raw HTML from data.
//!
//! Answers carry a Content-Security-Policy that allows only this server's own stylesheet and script (no inline
//! script or style anywhere), forbids framing (`frame-ancestors 'none'`) and posting forms elsewhere; and
//! `Cache-Control: no-store`, so that no page outlives its session in a shared cache.

use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use http::{HeaderValue, StatusCode, header};
use maud::{DOCTYPE, Markup, html};

/// The console's Content-Security-Policy.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Who is looking at a page: what the header shows, and the token its forms carry.
#[derive(Clone, Debug)]
pub(super) struct Viewer {
    /// The principal's ARN.
    pub principal: String,
    /// The session's CSRF token.
    pub csrf: String,
    /// Whether the principal administers identities (the Identity link).
    pub manages_identities: bool,
}

/// A page: its `<title>`, who views it, and where it sits.
pub(super) struct Page<'a> {
    title: String,
    viewer: Option<&'a Viewer>,
    crumbs: Vec<(String, String)>,
}

impl<'a> Page<'a> {
    /// A page of a signed-in session.
    pub fn new(title: impl Into<String>, viewer: &'a Viewer) -> Self {
        Self {
            title: title.into(),
            viewer: Some(viewer),
            crumbs: Vec::new(),
        }
    }

    /// A page without a session (sign-in, errors before one).
    pub fn anonymous(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            viewer: None,
            crumbs: Vec::new(),
        }
    }

    /// Adds a breadcrumb (label, link).
    pub fn crumb(mut self, label: impl Into<String>, href: impl Into<String>) -> Self {
        self.crumbs.push((label.into(), href.into()));
        self
    }

    /// The whole document around `body`.
    pub fn render(&self, body: Markup) -> Markup {
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (self.title) }
                    // No favicon request (it would reach the control plane, unsigned).
                    link rel="icon" href="data:,";
                    link rel="stylesheet" href="/console/static/console.css";
                    script src="/console/static/console.js" defer {}
                }
                body {
                    a class="skip" href="#main" { "Skip to content" }
                    header class="top" {
                        a class="brand" href="/console/buckets" { "Tablebay" }
                        @if let Some(viewer) = self.viewer {
                            nav aria-label="Main" {
                                a href="/console/buckets" { "Table buckets" }
                                @if viewer.manages_identities {
                                    a href="/console/identity" { "Identity" }
                                }
                            }
                            div class="who" {
                                span class="principal" title="Signed in as" { (viewer.principal) }
                                form method="post" action="/console/logout" {
                                    (csrf_field(&viewer.csrf))
                                    button type="submit" class="link" { "Sign out" }
                                }
                            }
                        }
                    }
                    @if !self.crumbs.is_empty() {
                        nav class="crumbs" aria-label="Breadcrumb" {
                            ol {
                                @for (label, href) in &self.crumbs {
                                    li { a href=(href) { (label) } }
                                }
                            }
                        }
                    }
                    div id="main" tabindex="-1" { (body) }
                }
            }
        }
    }
}

/// The hidden field every state-changing form carries.
pub(super) fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(token); }
}

/// A form with one button that posts to `action` (deletions ask for confirmation, through console.js).
pub(super) fn action_button(action: &str, csrf: &str, label: &str, danger: bool) -> Markup {
    html! {
        form method="post" action=(action) class="inline" {
            (csrf_field(csrf))
            @if danger {
                button type="submit" class="danger" data-confirm=(format!("{label}?")) { (label) }
            } @else {
                button type="submit" { (label) }
            }
        }
    }
}

/// An HTML answer with the console's security headers.
pub(super) fn respond(status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, markup.into_string()).into_response();
    secure(&mut response, "text/html; charset=utf-8");
    response
}

/// Adds the console's headers to an answer of content type `content_type`.
pub(super) fn secure(response: &mut Response, content_type: &'static str) {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// 303 See Other to `location` (after a form: the browser GETs the page that shows the result).
pub(super) fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    secure(&mut response, "text/plain; charset=utf-8");
    response
}

/// What a path segment or query value keeps as it is: RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A path segment (or query value), percent-encoded for a link.
pub(super) fn seg(raw: &str) -> String {
    percent_encoding::utf8_percent_encode(raw, SEGMENT).to_string()
}

/// A byte count for people (`1.5 MiB`).
pub(super) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let name = UNITS.get(unit).copied().unwrap_or("B");
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {name}")
    }
}

/// A point in time for people (UTC, to the second).
pub(super) fn when(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A time from milliseconds since the epoch.
pub(super) fn when_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|t| when(&t))
        .unwrap_or_else(|| ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 * 1024 * 1024 * 1024), "5.0 GiB");
        assert_eq!(seg("a b/<c>"), "a%20b%2F%3Cc%3E");
        assert_eq!(seg("con-1.x_y~"), "con-1.x_y~");
    }

    #[test]
    fn values_are_escaped() {
        let viewer = Viewer {
            principal: "<script>alert(1)</script>".into(),
            csrf: "t\"x".into(),
            manages_identities: false,
        };
        let html = Page::new("<b>", &viewer)
            .render(html! { p { "x" } })
            .into_string();
        assert!(!html.contains("<script>alert"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("<title>&lt;b&gt;</title>"));
        assert!(html.contains("value=\"t&quot;x\""));
    }
}
