//! Two accounts on one real server, for tests of who may do what: each account's root and one user in each
//! (`ana` in the owning account, `bob` in the other), made through the admin API. Requests are signed with the
//! helpers of `identity.rs` (re-exported here), which take a [`Who`] as they take [`Creds`].

use http::Method as M;
use serde_json::{Value, json};

use crate::identity::{Creds, Signer, Tables, new_user};
pub use crate::identity::{Surface, must, send};
use crate::server::TestServer;

/// Credentials of one principal.
#[derive(Clone, Debug)]
pub struct Who {
    pub key: String,
    pub secret: String,
    pub account: String,
    /// The user's ARN (empty for roots).
    pub arn: String,
}

impl Signer for Who {
    fn key(&self) -> &str {
        &self.key
    }
    fn secret(&self) -> &str {
        &self.secret
    }
    fn token(&self) -> Option<&str> {
        None
    }
}

impl Who {
    /// The instance's root (the server's configured credentials; account `crate::server::ACCOUNT`).
    pub fn instance() -> Who {
        Who {
            key: crate::server::ACCESS_KEY.into(),
            secret: crate::server::SECRET.into(),
            account: crate::server::ACCOUNT.into(),
            arn: String::new(),
        }
    }

    /// The root of a new account `name`, made by the instance's root `instance`.
    pub async fn account(server: &TestServer, instance: &Who, name: &str) -> Who {
        let body = json!({"accountName": name});
        let created = must(server, instance, M::POST, Tables, "/admin/accounts", body).await;
        Who {
            key: created["accessKeyId"].as_str().unwrap().into(),
            secret: created["secretAccessKey"].as_str().unwrap().into(),
            account: created["accountId"].as_str().unwrap().into(),
            arn: String::new(),
        }
    }

    /// A new user `name` of `root`'s account with one access key and, if given, identity policy `main`.
    pub async fn user(server: &TestServer, root: &Who, name: &str, policy: Option<Value>) -> Who {
        let (Creds { key, secret, .. }, arn) = new_user(server, root, name, policy).await;
        Who {
            key,
            secret,
            account: root.account.clone(),
            arn,
        }
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
        let instance = Who::instance();
        let owner = Who::account(&server, &instance, "owner").await;
        let other = Who::account(&server, &instance, "other").await;
        assert_ne!(owner.account, other.account);
        let ana = Who::user(&server, &owner, "ana", None).await;
        let bob = Who::user(&server, &other, "bob", None).await;
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
                    M::PUT,
                    Tables,
                    &path,
                    Value::String(document),
                )
                .await;
            }
            None => {
                let (status, text) = send(&self.server, root, M::DELETE, Tables, &path, b"").await;
                assert!(
                    status == 200 || status == 204 || status == 404,
                    "{status} {text}"
                );
            }
        }
    }
}
