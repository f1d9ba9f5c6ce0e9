//! The web console's fixed interface (issue 18) against the real binary, with a plain HTTP client that keeps
//! the session cookie: the sign-in redirects and refusals, the session cookie's attributes, CSRF on every form
//! (a forged post is 403 and changes nothing), sign-out, the stable page paths and titles, the security
//! headers, escaping, a new secret shown once, temporary credentials from `/sts`, and bad input answered with the
//! console's own error page while nothing changes. The browser scenario is clients/python/test_console.py.

use http::Method as M;
use serde_json::{Value, json};

use crate::identity::{Creds, Tables, must, new_user, send, session_of, sts};
use crate::server::{ACCESS_KEY, SECRET, TestServer};

const XSS: &str = "<script>alert(1)</script>";

/// A console client: no redirects followed, the session cookie kept.
struct Browser {
    http: reqwest::Client,
    base: String,
    cookie: Option<String>,
}

struct Page {
    status: u16,
    location: Option<String>,
    set_cookie: Vec<String>,
    csp: Option<String>,
    body: String,
}

impl Page {
    /// The first `csrf` token of the page's forms.
    fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a csrf field") + marker.len();
        let len = self.body[start..].find('"').unwrap();
        self.body[start..start + len].to_string()
    }

    fn title(&self) -> &str {
        let start = self.body.find("<title>").expect("a title") + "<title>".len();
        let end = self.body.find("</title>").unwrap();
        &self.body[start..end]
    }
}

impl Browser {
    fn new(server: &TestServer) -> Browser {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: server.tables_url.clone(),
            cookie: None,
        }
    }

    async fn send(&mut self, method: M, path: &str, form: &[(&str, &str)]) -> Page {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", format!("tablebay_console={cookie}"));
        }
        if method != M::GET {
            request = request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(
                    form.iter()
                        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
                        .collect::<Vec<_>>()
                        .join("&"),
                );
        }
        let response = request.send().await.unwrap();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
        };
        let set_cookie: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect();
        let page = Page {
            status: response.status().as_u16(),
            location: header("location"),
            csp: header("content-security-policy"),
            set_cookie,
            body: String::new(),
        };
        let body = response.text().await.unwrap();
        Page { body, ..page }
    }

    async fn get(&mut self, path: &str) -> Page {
        self.send(M::GET, path, &[]).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        self.send(M::POST, path, form).await
    }

    /// Signs in; panics unless the console accepts.
    async fn sign_in(&mut self, key: &str, secret: &str, token: Option<&str>) {
        let mut form = vec![("access_key_id", key), ("secret_access_key", secret)];
        if let Some(token) = token {
            form.push(("session_token", token));
        }
        let page = self.post("/console/login", &form).await;
        assert_eq!(page.status, 303, "{}", page.body);
        assert_eq!(page.location.as_deref(), Some("/console/buckets"));
        let cookie = page
            .set_cookie
            .iter()
            .find(|c| c.starts_with("tablebay_console="))
            .expect("a session cookie");
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
            "{cookie}"
        );
        assert!(cookie.contains("Path=/console"), "{cookie}");
        let value = cookie["tablebay_console=".len()..]
            .split(';')
            .next()
            .unwrap();
        assert!(value.len() >= 43, "a 256-bit session id: {value}");
        self.cookie = Some(value.to_string());
    }
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The names of the root's buckets, through the control plane.
async fn bucket_names(server: &TestServer) -> Vec<String> {
    let list = must(
        server,
        &Creds::root(),
        M::GET,
        Tables,
        "/buckets",
        Value::Null,
    )
    .await;
    list["tableBuckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn sign_in_session_csrf_and_sign_out() {
    let server = TestServer::start();
    let mut b = Browser::new(&server);

    // Without a session, pages send to sign in; forms are refused.
    for path in [
        "/console/",
        "/console",
        "/console/buckets",
        "/console/buckets/x",
    ] {
        let page = b.get(path).await;
        assert_eq!(page.status, 303, "{path}");
        assert_eq!(page.location.as_deref(), Some("/console/login"), "{path}");
    }
    let page = b.post("/console/buckets", &[("name", "nosession")]).await;
    assert_eq!(page.status, 403);

    // The sign-in form and its refusals: 401 with the form and a message; nothing secret echoed.
    let form = b.get("/console/login").await;
    assert_eq!(form.status, 200);
    assert!(form.title().starts_with("Sign in"));
    for field in [
        "access_key_id",
        "secret_access_key",
        "session_token",
        "csrf",
    ] {
        assert!(form.body.contains(&format!("name=\"{field}\"")), "{field}");
    }
    let csp = form.csp.clone().unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    for (key, secret) in [
        (ACCESS_KEY, "wrong-secret-wrong-secret"),
        ("AKIDUNKNOWN000000000", SECRET),
        ("", ""),
    ] {
        let page = b
            .post(
                "/console/login",
                &[("access_key_id", key), ("secret_access_key", secret)],
            )
            .await;
        assert_eq!(page.status, 401, "{key}");
        assert!(page.body.contains("name=\"access_key_id\""));
        assert!(page.body.contains("class=\"error\""));
        assert!(!page.body.contains("wrong-secret"));
        assert!(
            page.set_cookie
                .iter()
                .all(|c| !c.starts_with("tablebay_console="))
        );
    }
    // A sign-in form's csrf must match its pre-session cookie; a cross-site browser post without one is refused.
    let page = b
        .post(
            "/console/login",
            &[
                ("access_key_id", ACCESS_KEY),
                ("secret_access_key", SECRET),
                ("csrf", "forged"),
            ],
        )
        .await;
    assert_eq!(page.status, 403);
    let cross_site = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/console/login", server.tables_url))
        .header("origin", "http://evil.example")
        .header("sec-fetch-site", "cross-site")
        .form(&[("access_key_id", ACCESS_KEY), ("secret_access_key", SECRET)])
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), 403);

    // Signed in: the bucket list, with a csrf token in every form.
    b.sign_in(ACCESS_KEY, SECRET, None).await;
    let list = b.get("/console/buckets").await;
    assert_eq!(list.status, 200);
    assert!(
        list.title().starts_with("Table buckets"),
        "{}",
        list.title()
    );
    let csrf = list.csrf();
    assert_eq!(
        b.get("/console/").await.location.as_deref(),
        Some("/console/buckets")
    );

    // Forged posts: no token, a wrong one. 403, nothing created.
    for form in [
        vec![("name", "forged-one")],
        vec![("name", "forged-one"), ("csrf", "AAAA")],
    ] {
        let page = b.post("/console/buckets", &form).await;
        assert_eq!(page.status, 403);
    }
    assert!(
        !bucket_names(&server)
            .await
            .contains(&"forged-one".to_string())
    );

    // A real one, and the stable paths with titles that name what they show.
    let page = b
        .post("/console/buckets", &[("name", "sales"), ("csrf", &csrf)])
        .await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert_eq!(page.location.as_deref(), Some("/console/buckets/sales"));
    assert!(bucket_names(&server).await.contains(&"sales".to_string()));
    let bucket = b.get("/console/buckets/sales").await;
    assert_eq!(bucket.status, 200);
    assert!(bucket.title().contains("sales"), "{}", bucket.title());
    let page = b
        .post(
            "/console/buckets/sales/namespaces",
            &[("name", "web"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(page.status, 303);
    let page = b
        .post(
            "/console/buckets/sales/tables",
            &[
                ("namespace", "web"),
                ("name", "clicks"),
                ("columns", "id long required\nurl string"),
                ("csrf", &csrf),
            ],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.body);
    let table_path = "/console/buckets/sales/namespaces/web/tables/clicks";
    assert_eq!(page.location.as_deref(), Some(table_path));
    let table = b.get(table_path).await;
    assert_eq!(table.status, 200, "{}", table.body);
    assert!(table.title().starts_with("web.clicks"), "{}", table.title());
    for id_and_name in [">1</td>", ">id</td>", ">2</td>", ">url</td>"] {
        assert!(table.body.contains(id_and_name), "{id_and_name}");
    }
    assert!(table.body.contains("id=\"version-token\""));
    let connect = b.get("/console/buckets/sales/connect").await;
    assert_eq!(connect.status, 200);
    assert!(connect.body.contains(":bucket/sales"));
    assert!(!connect.body.contains(SECRET));
    let maintenance = b.get(&format!("{table_path}/maintenance")).await;
    assert_eq!(maintenance.status, 200);
    assert!(maintenance.title().starts_with("Maintenance of web.clicks"));

    // Sign-out needs the token too; then the session is gone.
    let cookie = b.cookie.clone();
    assert_eq!(b.post("/console/logout", &[]).await.status, 403);
    assert_eq!(b.get("/console/buckets").await.status, 200);
    let page = b.post("/console/logout", &[("csrf", &csrf)]).await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location.as_deref(), Some("/console/login"));
    b.cookie = cookie;
    let page = b.get("/console/buckets").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location.as_deref(), Some("/console/login"));
    let page = b
        .post(
            "/console/buckets",
            &[("name", "after-logout"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(page.status, 403);
    assert!(
        !bucket_names(&server)
            .await
            .contains(&"after-logout".to_string())
    );
}

#[tokio::test]
async fn bad_input_gets_the_console_error_and_changes_nothing() {
    let server = TestServer::start();
    let mut b = Browser::new(&server);
    b.sign_in(ACCESS_KEY, SECRET, None).await;
    let csrf = b.get("/console/buckets").await.csrf();
    assert_eq!(
        b.post("/console/buckets", &[("name", "keep"), ("csrf", &csrf)])
            .await
            .status,
        303
    );
    let before = bucket_names(&server).await;

    for (path, form, status) in [
        ("/console/buckets", vec![("name", "Not_A_Bucket")], 400),
        ("/console/buckets", vec![("name", "keep")], 409),
        (
            "/console/buckets/keep/namespaces",
            vec![("name", "bad name!")],
            400,
        ),
        (
            "/console/buckets/missing/namespaces",
            vec![("name", "ns")],
            404,
        ),
        (
            "/console/buckets/keep/tables",
            vec![("namespace", "nope"), ("name", "t"), ("columns", "id long")],
            404,
        ),
        (
            "/console/buckets/keep/encryption",
            vec![("sse_algorithm", "ROT13")],
            400,
        ),
        (
            "/console/buckets/keep/maintenance",
            vec![("status", "enabled"), ("unreferenced_days", "-3")],
            400,
        ),
        (
            "/console/buckets/keep/maintenance",
            vec![("status", "sometimes")],
            400,
        ),
        (
            "/console/buckets/keep/policy",
            vec![("policy", "{\"Version\": ")],
            400,
        ),
    ] {
        let mut form = form;
        form.push(("csrf", &csrf));
        let page = b.post(path, &form).await;
        assert_eq!(page.status, status, "{path} {form:?}: {}", page.body);
        assert!(page.body.contains("class=\"error\""), "{path}");
        assert!(page.csp.is_some());
    }
    assert_eq!(bucket_names(&server).await, before);
    // Creating a table: a column without a type, an unknown type.
    assert_eq!(
        b.post(
            "/console/buckets/keep/namespaces",
            &[("name", "ns"), ("csrf", &csrf)]
        )
        .await
        .status,
        303
    );
    for columns in ["id", "id blob", ""] {
        let page = b
            .post(
                "/console/buckets/keep/tables",
                &[
                    ("namespace", "ns"),
                    ("name", "t"),
                    ("columns", columns),
                    ("csrf", &csrf),
                ],
            )
            .await;
        assert_eq!(page.status, 400, "{columns}");
    }
    assert_eq!(
        b.get("/console/buckets/keep/namespaces/ns/tables/t")
            .await
            .status,
        404
    );

    // The policy editor: the error inline with line and column, the draft kept, nothing stored.
    let bad = "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{\"Effect\": \"Allow\",\n    \"Principal\": \"*\", \"Action\": \"s3tables:NoSuchAction\", \"Resource\": \"*\"}]\n}";
    let page = b
        .post(
            "/console/buckets/keep/policy",
            &[("policy", bad), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("Line 4, column 33"), "{}", page.body);
    assert!(page.body.contains("NoSuchAction"));
    assert!(page.body.contains("aria-invalid=\"true\""));
    let stored = send(
        &server,
        &Creds::root(),
        M::GET,
        Tables,
        &format!(
            "/buckets/{}/policy",
            crate::server::seg(&format!(
                "acs:osstables:us-east-1:{}:bucket/keep",
                crate::server::ACCOUNT
            ))
        ),
        b"",
    )
    .await;
    assert_eq!(stored.0, 404, "{}", stored.1);
    let syntax = b
        .post(
            "/console/buckets/keep/policy",
            &[
                ("policy", "{\n  \"Version\": \"2012-10-17\",\n  oops\n}"),
                ("csrf", &csrf),
            ],
        )
        .await;
    assert_eq!(syntax.status, 400);
    assert!(syntax.body.contains("Line 3, column"), "{}", syntax.body);

    // Pages that do not exist, methods that do not apply, forms too large or not UTF-8.
    assert_eq!(b.get("/console/buckets/missing").await.status, 404);
    assert_eq!(b.get("/console/nothing/here").await.status, 404);
    assert_eq!(
        b.get("/console/buckets/keep/namespaces/ns/tables/nope")
            .await
            .status,
        404
    );
    assert_eq!(b.send(M::PUT, "/console/buckets", &[]).await.status, 403);
    assert_eq!(
        b.send(M::PUT, "/console/buckets", &[("csrf", &csrf)])
            .await
            .status,
        405
    );
    let big = "x".repeat(70 * 1024);
    let page = b
        .post(
            "/console/buckets/keep/policy",
            &[("csrf", &csrf), ("policy", &big)],
        )
        .await;
    assert_eq!(page.status, 413);
    let page = b.get("/console/buckets?token=not-a-token").await;
    assert_eq!(page.status, 400);
    assert_eq!(bucket_names(&server).await, before);
}

#[tokio::test]
async fn values_are_escaped_and_secrets_shown_once() {
    let server = TestServer::start();
    let mut b = Browser::new(&server);
    b.sign_in(ACCESS_KEY, SECRET, None).await;
    let csrf = b.get("/console/buckets").await.csrf();
    b.post("/console/buckets", &[("name", "probe"), ("csrf", &csrf)])
        .await;
    b.post(
        "/console/buckets/probe/namespaces",
        &[("name", "ns"), ("csrf", &csrf)],
    )
    .await;
    let columns = format!("id long\n{XSS} string");
    let page = b
        .post(
            "/console/buckets/probe/tables",
            &[
                ("namespace", "ns"),
                ("name", "t"),
                ("columns", &columns),
                ("csrf", &csrf),
            ],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.body);
    let table = b.get("/console/buckets/probe/namespaces/ns/tables/t").await;
    assert!(!table.body.contains(XSS));
    assert!(table.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!table.body.contains("<script>") || table.body.matches("<script").count() == 1);
    // The one script element is the console's own file.
    assert!(
        table
            .body
            .contains("<script src=\"/console/static/console.js\" defer></script>")
    );
    let js = b.get("/console/static/console.js").await;
    assert_eq!(js.status, 200);
    assert!(js.body.contains("data-confirm"));

    // A new user's key: the secret in the answer to the form that created it, and never again.
    let identity = b.get("/console/identity").await;
    assert_eq!(identity.status, 200);
    assert!(identity.title().contains("Identity"));
    assert_eq!(
        b.post(
            "/console/identity/users",
            &[("name", "ana"), ("csrf", &csrf)]
        )
        .await
        .status,
        303
    );
    let created = b
        .post(
            "/console/identity/users/ana/access-keys",
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(created.status, 200);
    let marker = "id=\"new-secret-access-key\">";
    let start = created.body.find(marker).unwrap() + marker.len();
    let secret = &created.body[start..start + created.body[start..].find('<').unwrap()];
    assert!(secret.len() >= 20);
    let again = b.get("/console/identity").await;
    assert!(!again.body.contains(secret));
    assert!(again.body.contains("ana"));
    // An identity policy the language refuses: 400, inline, nothing stored.
    let page = b
        .post(
            "/console/identity/users/ana/policies",
            &[("policy_name", "p"), ("document", "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Maybe\",\"Action\":\"*\",\"Resource\":\"*\"}]}"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("Line 1, column"), "{}", page.body);
    assert!(
        !b.get("/console/identity")
            .await
            .body
            .contains("/policies/p/delete")
    );
}

#[tokio::test]
async fn temporary_credentials_and_users_without_rights() {
    let server = TestServer::start();
    let root = Creds::root();
    // Temporary credentials from /sts sign in with their session token, and only with it.
    let (status, xml) = sts(
        &server,
        &root,
        &[("Action", "GetSessionToken"), ("Version", "2011-06-15")],
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let session = session_of(&xml);
    let mut b = Browser::new(&server);
    let page = b
        .post(
            "/console/login",
            &[
                ("access_key_id", &session.key),
                ("secret_access_key", &session.secret),
            ],
        )
        .await;
    assert_eq!(page.status, 401);
    b.sign_in(&session.key, &session.secret, session.token.as_deref())
        .await;
    let list = b.get("/console/buckets").await;
    assert_eq!(list.status, 200);
    // Temporary credentials do not administer identities: no link, and the page is refused.
    assert!(!list.body.contains("href=\"/console/identity\""));
    assert_eq!(b.get("/console/identity").await.status, 403);

    // A user allowed to read only: sees the pages, no mutating control, and its posts are refused.
    let csrf = list.csrf();
    assert_eq!(
        b.post("/console/buckets", &[("name", "shared"), ("csrf", &csrf)])
            .await
            .status,
        303
    );
    let read_only = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3tables:Get*", "s3tables:List*"], "Resource": "*"}]});
    let (reader, _) = new_user(&server, &root, "reader", Some(read_only)).await;
    let mut r = Browser::new(&server);
    r.sign_in(&reader.key, &reader.secret, None).await;
    let bucket = r.get("/console/buckets/shared").await;
    assert_eq!(bucket.status, 200);
    let posts: Vec<&str> = bucket
        .body
        .match_indices("method=\"post\" action=\"")
        .map(|(i, m)| {
            let rest = &bucket.body[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        posts,
        ["/console/logout"],
        "a read-only user sees no mutating form"
    );
    let list = r.get("/console/buckets").await;
    assert!(!list.body.contains("Create bucket"));
    let reader_csrf = list.csrf();
    for (path, form) in [
        ("/console/buckets", vec![("name", "mine")]),
        ("/console/buckets/shared/delete", vec![]),
        ("/console/buckets/shared/namespaces", vec![("name", "ns")]),
    ] {
        let mut form = form;
        form.push(("csrf", &reader_csrf));
        let page = r.post(path, &form).await;
        assert_eq!(page.status, 403, "{path}: {}", page.body);
    }
    assert_eq!(bucket_names(&server).await, ["shared"]);
}
