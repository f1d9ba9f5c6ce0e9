//! Console sessions: sign-in, the session cookie, CSRF tokens and sign-out.
//!
//! `POST /console/login` checks an access key and its secret (with the session token of temporary credentials)
//! through the same credential lookup the pipeline uses, and opens a session: a random 256-bit id in an
//! `HttpOnly; SameSite=Strict` cookie scoped to `/console`, kept here with the access key id, the session token
//! and the session's CSRF token. The store keeps only the SHA-256 of each id. A session ends after
//! [`IDLE_TIMEOUT`] without a request, after [`MAX_LIFETIME`], at sign-out, or when its key stops working: every
//! request looks the key up again (`pipeline::authenticate`, scheme `session`), so a deleted or deactivated key,
//! or expired temporary credentials, end the session at once.
//!
//! Every state-changing form carries the session's token in a hidden `csrf` field; the pipeline refuses a POST
//! whose field does not match (403). The sign-in form carries a token of its own, bound to a short-lived
//! pre-session cookie (double submit); a sign-in without one is accepted only from a client that is not a
//! cross-site browser page (no cross-site `Sec-Fetch-Site`, no foreign `Origin`), so scripts can sign in while a
//! hostile page cannot sign a victim's browser into the attacker's account.
//!
//! Sessions live in this process's memory: several instances behind a load balancer need sticky sessions for
//! the console (the APIs are stateless).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::request::Parts;
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use maud::{Markup, html};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tablebay_auth::AuthError;

use super::layout::{self, Page};
use crate::form::FormPairs;
use crate::pipeline::{self, PipelineError, RequestBody, lookup};
use crate::state::{AppState, Secret};

/// The session cookie.
pub(super) const COOKIE: &str = "tablebay_console";
/// The pre-session cookie that the sign-in form's `csrf` field must match.
const LOGIN_COOKIE: &str = "tablebay_console_login";
/// A session ends after this long without a request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// A session ends this long after sign-in, however busy.
pub const MAX_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);
/// Sessions kept at most; the least recently used goes first when full.
const MAX_SESSIONS: usize = 10_000;
/// The largest sign-in form.
const MAX_LOGIN_BYTES: usize = 16 * 1024;

/// One open session.
struct Entry {
    access_key_id: String,
    session_token: Option<Secret>,
    csrf: String,
    created: Instant,
    last_seen: Instant,
}

/// What a live session authenticates a request with.
pub(crate) struct Live {
    /// The access key the session signed in with (looked up again on every request).
    pub access_key_id: String,
    /// The session token of temporary credentials.
    pub session_token: Option<Secret>,
    /// The token every state-changing form of the session must carry.
    pub csrf: String,
}

/// The open sessions of this process.
#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<[u8; 32], Entry>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sessions(***)")
    }
}

/// A random 256-bit token, base64url.
fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

fn digest(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

/// Whether two tokens are equal, in constant time.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

impl Sessions {
    /// Opens a session; returns its id (the cookie value).
    fn open(&self, access_key_id: String, session_token: Option<Secret>) -> String {
        let id = random_token();
        let now = Instant::now();
        let entry = Entry {
            access_key_id,
            session_token,
            csrf: random_token(),
            created: now,
            last_seen: now,
        };
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= MAX_SESSIONS {
            open.retain(|_, e| alive(e, now));
        }
        if open.len() >= MAX_SESSIONS
            && let Some(oldest) = open
                .iter()
                .min_by_key(|(_, e)| e.last_seen)
                .map(|(k, _)| *k)
        {
            open.remove(&oldest);
        }
        open.insert(digest(&id), entry);
        id
    }

    /// The live session `id` names, touched (its idle time starts again).
    fn find(&self, id: &str) -> Option<Live> {
        let now = Instant::now();
        let key = digest(id);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let entry = open.get_mut(&key)?;
        if !alive(entry, now) {
            open.remove(&key);
            return None;
        }
        entry.last_seen = now;
        Some(Live {
            access_key_id: entry.access_key_id.clone(),
            session_token: entry.session_token.clone(),
            csrf: entry.csrf.clone(),
        })
    }

    /// Ends the session `id`.
    fn close(&self, id: &str) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.remove(&digest(id));
    }

    /// The session a request's cookie names, if it is live.
    pub(crate) fn of_request(&self, parts: &Parts) -> Option<Live> {
        cookie(parts, COOKIE).and_then(|id| self.find(id))
    }
}

fn alive(entry: &Entry, now: Instant) -> bool {
    now.duration_since(entry.last_seen) < IDLE_TIMEOUT
        && now.duration_since(entry.created) < MAX_LIFETIME
}

/// The value of cookie `name`.
fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn set_cookie(name: &str, value: &str, max_age: Option<u64>) -> Option<HeaderValue> {
    let age = max_age
        .map(|s| format!("; Max-Age={s}"))
        .unwrap_or_default();
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/console; HttpOnly; SameSite=Strict{age}"
    ))
    .ok()
}

/// A header that removes the session cookie.
pub(super) fn clear_session_cookie() -> Option<HeaderValue> {
    set_cookie(COOKIE, "", Some(0))
}

/// The pipeline's `session` scheme, first step: the live session of the request's cookie. A request that
/// changes state (any method but GET and HEAD) without a live session is refused as forged (`Malformed`, 403 on
/// the console); a page request without one is `Missing` (the console sends it to sign in).
pub(crate) fn identify(app: &AppState, parts: &Parts) -> Result<Live, AuthError> {
    match app.console_sessions.of_request(parts) {
        Some(live) => Ok(live),
        None if is_safe(&parts.method) => Err(AuthError::Missing),
        None => Err(forged()),
    }
}

/// The pipeline's `session` scheme, last step: a state-changing request must carry the session's CSRF token in
/// its form's `csrf` field.
pub(crate) fn check_form(parts: &Parts, body: &[u8], csrf: &str) -> Result<(), AuthError> {
    if is_safe(&parts.method) {
        return Ok(());
    }
    let presented = std::str::from_utf8(body)
        .ok()
        .and_then(|text| FormPairs::parse(text).ok())
        .and_then(|form| form.first("csrf").map(str::to_string));
    match presented {
        Some(token) if same_token(&token, csrf) => Ok(()),
        _ => Err(forged()),
    }
}

/// Why a state-changing console request was refused by authentication.
pub(crate) fn forged() -> AuthError {
    AuthError::Malformed(
        "a console form needs a live session and its csrf token; reload the page and try again"
            .into(),
    )
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD)
}

// --- The pages of this family ---

fn login_form(csrf: &str, message: Option<&str>, access_key_id: &str) -> Markup {
    html! {
        main class="narrow" {
            h1 { "Sign in to Tablebay" }
            @if let Some(message) = message {
                p class="error" role="alert" { (message) }
            }
            form method="post" action="/console/login" class="stack" {
                input type="hidden" name="csrf" value=(csrf);
                label for="access_key_id" { "Access key ID" }
                input id="access_key_id" name="access_key_id" type="text" required autocomplete="username"
                    spellcheck="false" value=(access_key_id) autofocus;
                label for="secret_access_key" { "Secret access key" }
                input id="secret_access_key" name="secret_access_key" type="password" required
                    autocomplete="current-password";
                label for="session_token" { "Session token " span class="muted" { "(temporary credentials from /sts only)" } }
                textarea id="session_token" name="session_token" rows="2" spellcheck="false" {}
                button type="submit" { "Sign in" }
            }
        }
    }
}

/// The sign-in page with a fresh pre-session token.
fn login_page(status: StatusCode, message: Option<&str>, access_key_id: &str) -> Response {
    let token = random_token();
    let page = Page::anonymous("Sign in — Tablebay console");
    let mut response = layout::respond(
        status,
        page.render(login_form(&token, message, access_key_id)),
    );
    // Ten minutes to fill the form in.
    if let Some(value) = set_cookie(LOGIN_COOKIE, &token, Some(600)) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// `GET /console/login`.
pub(crate) async fn login_get(State(app): State<AppState>, request: Request) -> Response {
    pipeline::serve_anonymous(
        &app,
        super::NAME,
        HeaderName::from_static("x-request-id"),
        "SignInPage",
        0,
        request,
        |_, _| async { login_page(StatusCode::OK, None, "") },
    )
    .await
}

/// `POST /console/login`.
pub(crate) async fn login_post(State(app): State<AppState>, request: Request) -> Response {
    let app2 = app.clone();
    pipeline::serve_anonymous(
        &app,
        super::NAME,
        HeaderName::from_static("x-request-id"),
        "SignIn",
        MAX_LOGIN_BYTES,
        request,
        |parts, body| async move { sign_in(&app2, &parts, body).await },
    )
    .await
}

async fn sign_in(
    app: &AppState,
    parts: &Parts,
    body: Result<RequestBody, PipelineError>,
) -> Response {
    let form = match body.map(|b| b.text().map(|t| FormPairs::parse(t).ok())) {
        Ok(Ok(Some(form))) => form,
        Ok(_) => {
            return login_page(
                StatusCode::BAD_REQUEST,
                Some("The form could not be read."),
                "",
            );
        }
        Err(PipelineError::BodyTooLarge { .. }) => {
            return login_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                Some("The form is too large."),
                "",
            );
        }
        Err(_) => {
            return login_page(
                StatusCode::BAD_REQUEST,
                Some("The form could not be read."),
                "",
            );
        }
    };
    if !login_origin_ok(parts, form.first("csrf")) {
        return super::error::ConsoleError::Forbidden(
            "The sign-in form's csrf token is missing or does not match; reload the sign-in page"
                .into(),
        )
        .page();
    }
    let key_id = form.first("access_key_id").unwrap_or_default().trim();
    let secret = form.first("secret_access_key").unwrap_or_default();
    let token = form
        .first("session_token")
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let refused = |message: &str| login_page(StatusCode::UNAUTHORIZED, Some(message), key_id);
    if key_id.is_empty() || secret.is_empty() || key_id.len() > 128 || secret.len() > 256 {
        return refused("Enter an access key ID and its secret access key.");
    }
    let key = match lookup(&app.iam, key_id).await {
        Ok(key) => key,
        Err(AuthError::Unavailable) => {
            return login_page(
                StatusCode::SERVICE_UNAVAILABLE,
                Some("The credential store is unavailable; try again."),
                key_id,
            );
        }
        Err(_) => return refused("The access key ID or the secret access key is not valid."),
    };
    if !same_token(key.secret(), secret) {
        tracing::info!(
            access_key_id = key_id,
            "console sign-in refused: wrong secret"
        );
        return refused("The access key ID or the secret access key is not valid.");
    }
    if let Err(e) = key.check_session_token(token, chrono::Utc::now()) {
        let message = match e {
            AuthError::ExpiredSessionToken => "These temporary credentials have expired.",
            _ => {
                "The session token does not belong to this access key (temporary credentials need theirs; long-term keys none)."
            }
        };
        return refused(message);
    }
    let principal = key.principal().arn.clone();
    let id = app
        .console_sessions
        .open(key_id.to_string(), token.map(Secret::new));
    tracing::info!(principal, access_key_id = key_id, "console sign-in");
    let mut response = layout::see_other("/console/buckets");
    let headers = response.headers_mut();
    if let Some(value) = set_cookie(COOKIE, &id, None) {
        headers.append(header::SET_COOKIE, value);
    }
    if let Some(value) = set_cookie(LOGIN_COOKIE, "", Some(0)) {
        headers.append(header::SET_COOKIE, value);
    }
    response
}

/// Whether a sign-in may proceed: its `csrf` field matches the pre-session cookie, or it has none and does not
/// come from a cross-site page.
fn login_origin_ok(parts: &Parts, csrf: Option<&str>) -> bool {
    match csrf {
        Some(token) => cookie(parts, LOGIN_COOKIE).is_some_and(|c| same_token(c, token)),
        None => {
            let fetch_site = parts
                .headers
                .get("sec-fetch-site")
                .and_then(|v| v.to_str().ok());
            let cross_site = matches!(fetch_site, Some("cross-site" | "same-site"));
            let host = parts
                .headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok());
            let foreign_origin = parts
                .headers
                .get(header::ORIGIN)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|origin| {
                    let origin_host = origin.split_once("://").map_or(origin, |(_, h)| h);
                    Some(origin_host) != host
                });
            !cross_site && !foreign_origin
        }
    }
}

/// `POST /console/logout` (through the pipeline: a live session and its csrf token): ends the session.
pub(super) fn sign_out(app: &AppState, parts: &Parts) -> Response {
    if let Some(id) = cookie(parts, COOKIE) {
        app.console_sessions.close(id);
    }
    let mut response = layout::see_other("/console/login");
    if let Some(value) = clear_session_cookie() {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The redirect to the sign-in page, for a page request without a live session.
pub(super) fn to_sign_in() -> Response {
    let mut response = layout::see_other("/console/login");
    if let Some(value) = clear_session_cookie() {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder()
            .method(method)
            .uri("/console/login");
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn sessions_open_find_close() {
        let sessions = Sessions::default();
        let id = sessions.open("AKID".into(), None);
        let live = sessions.find(&id).unwrap();
        assert_eq!(live.access_key_id, "AKID");
        assert_eq!(live.csrf.len(), 43);
        assert!(sessions.find("other").is_none());
        sessions.close(&id);
        assert!(sessions.find(&id).is_none());
    }

    #[test]
    fn cookies_and_csrf() {
        let p = parts(
            Method::POST,
            &[("cookie", "a=1; tablebay_console=xyz; b=2")],
        );
        assert_eq!(cookie(&p, COOKIE), Some("xyz"));
        assert!(check_form(&p, b"name=a&csrf=tok", "tok").is_ok());
        assert!(check_form(&p, b"name=a&csrf=tok2", "tok").is_err());
        assert!(check_form(&p, b"name=a", "tok").is_err());
        assert!(check_form(&p, b"\xff", "tok").is_err());
        let get = parts(Method::GET, &[]);
        assert!(check_form(&get, b"", "tok").is_ok());
    }

    #[test]
    fn sign_in_origins() {
        let script = parts(Method::POST, &[("host", "127.0.0.1:8181")]);
        assert!(login_origin_ok(&script, None));
        let same = parts(
            Method::POST,
            &[
                ("host", "127.0.0.1:8181"),
                ("origin", "http://127.0.0.1:8181"),
                ("sec-fetch-site", "same-origin"),
            ],
        );
        assert!(login_origin_ok(&same, None));
        let hostile = parts(
            Method::POST,
            &[
                ("host", "127.0.0.1:8181"),
                ("origin", "http://evil.example"),
                ("sec-fetch-site", "cross-site"),
            ],
        );
        assert!(!login_origin_ok(&hostile, None));
        let with_cookie = parts(Method::POST, &[("cookie", "tablebay_console_login=abc")]);
        assert!(login_origin_ok(&with_cookie, Some("abc")));
        assert!(!login_origin_ok(&with_cookie, Some("abd")));
        assert!(!login_origin_ok(&script, Some("abc")));
    }
}
