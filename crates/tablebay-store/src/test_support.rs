//! Test support (feature `test-support`, for test targets only): a fresh PostgreSQL database per test on the server
//! named by [`POSTGRES_URL_VAR`].
//!
//! The rule for every PostgreSQL variant of a test: with the variable unset, the variant is skipped, and a note says
//! so on the test binary's stderr (once, past libtest's output capture, so a passing run shows it); with it set,
//! the server must be reachable and the database made, or the test fails. `scripts/test.sh` always sets it (its
//! `postgres` stage starts a server), so CI never passes a PostgreSQL variant that did not run.
// Test support: a PostgreSQL the suite was told about but cannot use is a test failure, said with a panic.
#![allow(clippy::panic)]

use std::io::Write as _;
use std::sync::Once;

use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// The environment variable that names the test PostgreSQL server (`postgres://user@host:port/db`).
pub const POSTGRES_URL_VAR: &str = "TABLEBAY_TEST_POSTGRES_URL";

/// A database of its own on the test server, made by [`TestDatabase::create`].
pub struct TestDatabase {
    admin: PgConnection,
    name: String,
    url: String,
}

impl TestDatabase {
    /// A fresh, empty database (`tb_<random hex>`) on the server named by [`POSTGRES_URL_VAR`], or `None` (after a
    /// note) when the variable is unset. Panics, naming the server, when it is set but unusable.
    pub async fn create() -> Option<TestDatabase> {
        let Some(server) = std::env::var(POSTGRES_URL_VAR)
            .ok()
            .filter(|url| !url.is_empty())
        else {
            note_skipped();
            return None;
        };
        let mut admin = PgConnection::connect(&server).await.unwrap_or_else(|e| {
            panic!(
                "{POSTGRES_URL_VAR}={server} is set, but connecting failed: {e} (scripts/postgres.sh start runs \
                 one; unset the variable to skip the PostgreSQL variants)"
            )
        });
        let name = format!("tb_{}", uuid::Uuid::new_v4().simple());
        // `name` is ours (hex digits), so formatting it into the statement is safe.
        if let Err(e) = sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
        {
            panic!("CREATE DATABASE {name} on {server} failed: {e}");
        }
        let url = database_url(&server, &name);
        Some(TestDatabase { admin, name, url })
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Drops the database. Best effort: a failure leaves a stray database (and a note), not a failed test.
    pub async fn drop_database(mut self) {
        let statement = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = sqlx::query(AssertSqlSafe(statement))
            .execute(&mut self.admin)
            .await
        {
            eprintln!("note: could not drop test database {}: {e}", self.name);
        }
        let _ = self.admin.close().await;
    }
}

/// Says once per test binary, where `cargo test` shows it, that the PostgreSQL variants did not run.
fn note_skipped() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // std::io::stderr() directly: libtest captures only the print macros of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "note: {POSTGRES_URL_VAR} is unset: the PostgreSQL variants of this test binary are skipped \
             (scripts/postgres.sh start prints a URL; scripts/test.sh always sets it)"
        );
    });
}

/// `server` (a `postgres://…/<db>[?…]` URL) pointed at database `name`.
pub fn database_url(server: &str, name: &str) -> String {
    let (base, query) = match server.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (server, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let rest = base.get(authority_start..).unwrap_or_default();
    let root = match rest.find('/') {
        Some(slash) => base.get(..authority_start + slash).unwrap_or(base),
        None => base,
    };
    format!("{root}/{name}{query}")
}

#[cfg(test)]
mod tests {
    use super::database_url;

    #[test]
    fn database_urls() {
        assert_eq!(
            database_url("postgres://u@h:1/postgres", "x"),
            "postgres://u@h:1/x"
        );
        assert_eq!(database_url("postgres://u@h:1", "x"), "postgres://u@h:1/x");
        assert_eq!(
            database_url("postgres://u@h/db?sslmode=disable", "x"),
            "postgres://u@h/x?sslmode=disable"
        );
    }
}
