//! Two accounts on one real server, for tests of who may do what: each account's root and one user in each
//! (`ana` in the owning account, `bob` in the other), made through the admin API, and a signed request helper for
//! every surface.

use http::{Method, Request};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::server::{REGION, TestServer};

/// Credentials of one principal.
#[derive(Clone, Debug)]
pub struct Who {
    pub key: String,
    pub secret: String,
    pub account: String,
    /// The user's ARN (empty for roots).
    pub arn: String,
}

/// Which listener and signing name a request goes to.
#[derive(Clone, Copy, Debug)]
pub enum Surface {
    /// Control plane and admin (`s3tables`).
    Tables,
    /// Iceberg REST (`osstables`).
    Iceberg,
    /// The S3 data plane (`s3`).
    S3,
}

/// A signed request as `who`; returns the status and the body text.
pub async fn send(
    server: &TestServer,
    who: &Who,
    method: Method,
    surface: Surface,
    path: &str,
    body: &[u8],
) -> (u16, String) {
    let (base, service) = match surface {
        Surface::Tables => (&server.tables_url, "s3tables"),
        Surface::Iceberg => (&server.tables_url, "osstables"),
        Surface::S3 => (&server.s3_url, "s3"),
    };
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    match surface {
        Surface::S3 => {
            builder = builder.header("x-amz-content-sha256", hex::encode(Sha256::digest(body)))
        }
        _ if !body.is_empty() => builder = builder.header("content-type", "application/json"),
        _ => {}
    }
    let (mut parts, ()) = builder.body(()).unwrap().into_parts();
    tablebay_auth::signer::sign(
        &mut parts,
        body,
        &who.key,
        &who.secret,
        REGION,
        service,
        chrono::Utc::now(),
    )
    .unwrap();
    let response = server.send_parts(parts, body).await;
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// A JSON request that must succeed; returns the parsed answer (Null when empty).
pub async fn must(
    server: &TestServer,
    who: &Who,
    method: Method,
    surface: Surface,
    path: &str,
    body: Value,
) -> Value {
    let bytes = match &body {
        Value::Null => Vec::new(),
        Value::String(s) => s.clone().into_bytes(),
        other => serde_json::to_vec(other).unwrap(),
    };
    let (status, text) = send(server, who, method.clone(), surface, path, &bytes).await;
    assert!(
        (200..300).contains(&status),
        "{method} {path} as {}: {status} {text}",
        who.key
    );
    if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

/// The server, two accounts (their roots) and one user in each.
pub struct World {
    pub server: TestServer,
    pub owner: Who,
    pub other: Who,
    pub ana: Who,
    pub bob: Who,
}

impl World {
    pub async fn new() -> World {
        let server = TestServer::start();
        let instance = Who {
            key: crate::server::ACCESS_KEY.into(),
            secret: crate::server::SECRET.into(),
            account: crate::server::ACCOUNT.into(),
            arn: String::new(),
        };
        let mut roots = Vec::new();
        for name in ["owner", "other"] {
            let created = must(
                &server,
                &instance,
                Method::POST,
                Surface::Tables,
                "/admin/accounts",
                json!({"accountName": name}),
            )
            .await;
            roots.push(Who {
                key: created["accessKeyId"].as_str().unwrap().into(),
                secret: created["secretAccessKey"].as_str().unwrap().into(),
                account: created["accountId"].as_str().unwrap().into(),
                arn: String::new(),
            });
        }
        let (owner, other) = (roots[0].clone(), roots[1].clone());
        assert_ne!(owner.account, other.account);
        let mut users = Vec::new();
        for (root, name) in [(&owner, "ana"), (&other, "bob")] {
            let user = must(
                &server,
                root,
                Method::POST,
                Surface::Tables,
                "/admin/users",
                json!({"userName": name}),
            )
            .await;
            let key = must(
                &server,
                root,
                Method::POST,
                Surface::Tables,
                &format!("/admin/users/{name}/access-keys"),
                Value::Null,
            )
            .await;
            users.push(Who {
                key: key["accessKeyId"].as_str().unwrap().into(),
                secret: key["secretAccessKey"].as_str().unwrap().into(),
                account: root.account.clone(),
                arn: user["userArn"].as_str().unwrap().into(),
            });
        }
        let (ana, bob) = (users[0].clone(), users[1].clone());
        World {
            server,
            owner,
            other,
            ana,
            bob,
        }
    }

    /// Replaces the user's only identity policy (`None`: removes it).
    pub async fn set_identity(&self, user: &str, document: Option<String>) {
        let root = if user == "ana" {
            &self.owner
        } else {
            &self.other
        };
        let path = format!("/admin/users/{user}/policies/p");
        match document {
            Some(document) => {
                must(
                    &self.server,
                    root,
                    Method::PUT,
                    Surface::Tables,
                    &path,
                    Value::String(document),
                )
                .await;
            }
            None => {
                let (status, text) = send(
                    &self.server,
                    root,
                    Method::DELETE,
                    Surface::Tables,
                    &path,
                    b"",
                )
                .await;
                assert!(
                    status == 200 || status == 204 || status == 404,
                    "{status} {text}"
                );
            }
        }
    }
}
