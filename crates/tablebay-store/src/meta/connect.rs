//! Opening the metadata database: URL forms, per-connection settings and the embedded migrations.
//!
//! SQLite is set up for concurrent writers (reference/rust-stack.md, trap T13): WAL journal mode (readers never
//! block the writer) with synchronous=FULL (every commit syncs the WAL before it returns; NORMAL when durability
//! is relaxed), a busy timeout so a writer waits for the lock instead of failing, and foreign keys on.
//! Write transactions then start with `BEGIN IMMEDIATE` (see `codec::begin_write`).

use std::borrow::Cow;

use sqlx::AnyConnection;
use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{Connection, Row, SqlSafeStr};

use super::{Backend, MetaStore};
use crate::StoreError;
use crate::durability::{Durability, SyncGroup};

/// How long (10 s) a SQLite connection waits for another writer's lock before failing with `SQLITE_BUSY`. A
/// literal statement because sqlx 0.9 queries are `&'static str` (trap T14).
const SQLITE_BUSY_TIMEOUT_PRAGMA: &str = "PRAGMA busy_timeout = 10000";

/// Pool size. SQLite serialises writers anyway; the extra connections serve concurrent readers.
const MAX_CONNECTIONS: u32 = 10;

/// The migrations of each backend, in order: (version, description, SQL). The files are embedded at compile
/// time; versions and descriptions follow sqlx's `<version>_<description>.sql` naming, so the recorded
/// checksums are the ones `sqlx::migrate!` would compute. A new migration is a new file plus a line here.
const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "objects",
        include_str!("../../migrations/sqlite/0002_objects.sql"),
    ),
    (
        3,
        "iceberg",
        include_str!("../../migrations/sqlite/0003_iceberg.sql"),
    ),
    (
        4,
        "detached storage",
        include_str!("../../migrations/sqlite/0004_detached_storage.sql"),
    ),
    (
        5,
        "iam",
        include_str!("../../migrations/sqlite/0005_iam.sql"),
    ),
    (
        6,
        "maintenance",
        include_str!("../../migrations/sqlite/0006_maintenance.sql"),
    ),
    (
        7,
        "encryption",
        include_str!("../../migrations/sqlite/0007_encryption.sql"),
    ),
    (
        8,
        "blob deletions",
        include_str!("../../migrations/sqlite/0008_blob_deletions.sql"),
    ),
    (
        9,
        "table migrations",
        include_str!("../../migrations/sqlite/0009_table_migrations.sql"),
    ),
];
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "init",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "objects",
        include_str!("../../migrations/postgres/0002_objects.sql"),
    ),
    (
        3,
        "iceberg",
        include_str!("../../migrations/postgres/0003_iceberg.sql"),
    ),
    (
        4,
        "detached storage",
        include_str!("../../migrations/postgres/0004_detached_storage.sql"),
    ),
    (
        5,
        "iam",
        include_str!("../../migrations/postgres/0005_iam.sql"),
    ),
    (
        6,
        "maintenance",
        include_str!("../../migrations/postgres/0006_maintenance.sql"),
    ),
    (
        7,
        "encryption",
        include_str!("../../migrations/postgres/0007_encryption.sql"),
    ),
    (
        8,
        "blob deletions",
        include_str!("../../migrations/postgres/0008_blob_deletions.sql"),
    ),
    (
        9,
        "table migrations",
        include_str!("../../migrations/postgres/0009_table_migrations.sql"),
    ),
];

/// How long a PostgreSQL query waits for a pooled connection (while the server is down: for a new one).
const POSTGRES_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens the store at `url`, see [`MetaStore::connect`].
pub(super) async fn open(url: &str, durability: Durability) -> Result<MetaStore, StoreError> {
    sqlx::any::install_default_drivers();
    let (backend, url) = normalize(url)?;
    let (pool, writes, wal) = match backend {
        Backend::Sqlite => {
            let file = prepare_sqlite_file(&url).await?;
            // Transactions commit on their own pool at synchronous=NORMAL and then share WAL syncs (see
            // `WalSync`); everything else (single statements, migrations) commits at FULL on the main pool. Only
            // for a file whose WAL can be named: otherwise every commit syncs itself.
            let grouped = durability.syncs().then_some(file).flatten();
            let main = match durability {
                Durability::Full => Synchronous::Full,
                Durability::Relaxed => Synchronous::Normal,
            };
            let pool = sqlite_pool(&url, main, MAX_CONNECTIONS).await?;
            match grouped {
                Some(file) => {
                    let writes = sqlite_pool(&url, Synchronous::Normal, WRITE_CONNECTIONS).await?;
                    (pool, writes, Some(std::sync::Arc::new(WalSync::of(&file))))
                }
                None => (pool.clone(), pool, None),
            }
        }
        // A request waits this long for a connection before it is answered 503: long enough to ride out a
        // burst, short enough that clients retry a database outage rather than hang (sqlx's default is 30 s).
        Backend::Postgres => {
            let pool = AnyPoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
                .connect(&url)
                .await?;
            (pool.clone(), pool, None)
        }
    };
    migrator(backend)
        .run(&pool)
        .await
        .map_err(StoreError::Migrate)?;
    tracing::info!(?backend, "metadata store ready");
    Ok(MetaStore {
        pool,
        writes,
        wal,
        backend,
        writer: Default::default(),
    })
}

/// Connections of the pool that write transactions use: one writes at a time (the writer slot), and the next
/// can begin while the previous one's connection is handed back.
const WRITE_CONNECTIONS: u32 = 2;

/// SQLite's `synchronous` setting of a pool's connections.
#[derive(Clone, Copy)]
enum Synchronous {
    /// Every commit syncs the WAL before it returns.
    Full,
    /// Commits are ordered and atomic and survive a killed process; the WAL is synced at checkpoints.
    Normal,
}

/// A pool of connections to the SQLite file at `url`, each set up the same way but for `synchronous`.
async fn sqlite_pool(
    url: &str,
    synchronous: Synchronous,
    connections: u32,
) -> Result<sqlx::AnyPool, StoreError> {
    let pool = AnyPoolOptions::new()
        .max_connections(connections)
        // A ping before every checkout is a round trip to the connection's thread per query; a SQLite file does
        // not drop connections the way a network server does.
        .test_before_acquire(false)
        .after_connect(move |conn, _meta| {
            Box::pin(async move {
                // sqlx already sets a 5 s timeout and foreign_keys=ON on every SQLite connection; stating both
                // here keeps the guarantee independent of the driver's defaults.
                sqlx::query(SQLITE_BUSY_TIMEOUT_PRAGMA)
                    .execute(&mut *conn)
                    .await?;
                let synchronous = match synchronous {
                    Synchronous::Full => "PRAGMA synchronous = FULL",
                    Synchronous::Normal => "PRAGMA synchronous = NORMAL",
                };
                sqlx::query(synchronous).execute(&mut *conn).await?;
                sqlx::query("PRAGMA foreign_keys = ON")
                    .execute(&mut *conn)
                    .await?;
                // Every commit empties the other connections' page caches, so with writes going on each read
                // re-reads its pages; mapped, they are memory reads instead of a pread each.
                sqlx::query("PRAGMA mmap_size = 268435456")
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            })
        })
        .connect(url)
        .await?;
    Ok(pool)
}

/// Group commit of SQLite write transactions. A transaction commits at synchronous=NORMAL, which writes its
/// frames to the WAL without syncing, then waits here for a sync of the WAL file that began after its commit;
/// concurrent committers share one sync ([`SyncGroup`]). The WAL is append-only and ordered, so that sync makes
/// this commit and every earlier one durable. A WAL file that is gone was checkpointed into the database file
/// (and synced) when the last connection closed, so there is nothing left to sync.
#[derive(Debug)]
pub(crate) struct WalSync {
    wal: std::path::PathBuf,
    group: SyncGroup,
}

impl WalSync {
    fn of(database: &std::path::Path) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        Self {
            wal: wal.into(),
            group: SyncGroup::default(),
        }
    }

    /// Returns once every transaction committed before this call is on stable storage.
    pub(crate) async fn sync(self: std::sync::Arc<Self>) -> Result<(), StoreError> {
        tokio::task::spawn_blocking(move || {
            self.group.sync(|| match std::fs::File::open(&self.wal) {
                Ok(file) => file.sync_data(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            })
        })
        .await
        .map_err(|e| StoreError::Config(format!("WAL sync task failed: {e}")))?
        .map_err(|e| StoreError::Unavailable {
            store: "metadata store",
            source: Box::new(e),
        })
    }
}

/// The backend of `url` and the URL sqlx should open. SQLite accepts `sqlite://<path>[?params]` and
/// `sqlite:<path>`; without a `mode` parameter the file is created if missing (`mode=rwc`).
fn normalize(url: &str) -> Result<(Backend, String), StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok((Backend::Postgres, url.to_owned()));
    }
    let Some(rest) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    else {
        return Err(StoreError::Config(format!(
            "metadata URL must start with sqlite:// or postgres://, got {url:?}"
        )));
    };
    let (path, params) = match rest.split_once('?') {
        Some((path, params)) => (path, Some(params)),
        None => (rest, None),
    };
    if path.is_empty() {
        return Err(StoreError::Config(format!(
            "SQLite URL {url:?} names no file"
        )));
    }
    let has_mode = params.is_some_and(|p| p.split('&').any(|kv| kv.starts_with("mode=")));
    let params = match (params, has_mode) {
        (Some(p), true) => p.to_owned(),
        (Some(p), false) if !p.is_empty() => format!("{p}&mode=rwc"),
        _ => "mode=rwc".to_owned(),
    };
    Ok((Backend::Sqlite, format!("sqlite://{path}?{params}")))
}

/// Creates the database file's directory and switches the file to WAL mode. WAL is a property of the file, so
/// one connection sets it for all; doing it before the pool opens avoids the exclusive lock the switch needs
/// racing the pool's connections.
async fn prepare_sqlite_file(url: &str) -> Result<Option<std::path::PathBuf>, StoreError> {
    let path = url
        .trim_start_matches("sqlite://")
        .split('?')
        .next()
        .unwrap_or_default();
    let in_memory = path == ":memory:" || url.contains("mode=memory");
    if in_memory {
        return Ok(None);
    }
    // A percent-encoded path is decoded by sqlx; leave its directory to the operator rather than guess.
    if !path.contains('%')
        && let Some(dir) = std::path::Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
    {
        let dir = dir.to_path_buf();
        tokio::task::spawn_blocking(move || {
            crate::durability::create_dir_all_durably(&dir)
                .map_err(|e| StoreError::Config(format!("{}: {e}", dir.display())))
        })
        .await
        .map_err(|e| StoreError::Config(format!("creating the database directory: {e}")))??;
    }
    let mut conn = AnyConnection::connect(url).await?;
    let mode: String = sqlx::query("PRAGMA journal_mode = WAL")
        .fetch_one(&mut conn)
        .await?
        .try_get(0)?;
    conn.close().await?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Config(format!(
            "SQLite refused WAL journal mode (got {mode:?}) for {path}"
        )));
    }
    // A percent-encoded path is decoded by sqlx: its file is not named here.
    if path.contains('%') {
        return Ok(None);
    }
    // The file's entry in its directory: SQLite syncs the directory of the WAL it creates, not of the database.
    crate::durability::sync_parent_dir(std::path::Path::new(path))
        .map_err(|e| StoreError::Config(format!("syncing the directory of {path}: {e}")))?;
    Ok(Some(std::path::PathBuf::from(path)))
}

/// The embedded migrations of `backend`.
fn migrator(backend: Backend) -> Migrator {
    let files = match backend {
        Backend::Sqlite => SQLITE_MIGRATIONS,
        Backend::Postgres => POSTGRES_MIGRATIONS,
    };
    let migrations = files
        .iter()
        .map(|&(version, description, sql)| {
            Migration::new(
                version,
                Cow::Borrowed(description),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for (url, want) in [
            (
                "sqlite:///tmp/a.db",
                Some((Backend::Sqlite, "sqlite:///tmp/a.db?mode=rwc")),
            ),
            (
                "sqlite:///tmp/a.db?mode=rwc",
                Some((Backend::Sqlite, "sqlite:///tmp/a.db?mode=rwc")),
            ),
            (
                "sqlite://data/a.db?mode=ro",
                Some((Backend::Sqlite, "sqlite://data/a.db?mode=ro")),
            ),
            (
                "sqlite://a.db?cache=shared",
                Some((Backend::Sqlite, "sqlite://a.db?cache=shared&mode=rwc")),
            ),
            (
                "sqlite:a.db",
                Some((Backend::Sqlite, "sqlite://a.db?mode=rwc")),
            ),
            (
                "sqlite://a.db?",
                Some((Backend::Sqlite, "sqlite://a.db?mode=rwc")),
            ),
            (
                "postgres://u@h:1/db",
                Some((Backend::Postgres, "postgres://u@h:1/db")),
            ),
            (
                "postgresql://u@h/db",
                Some((Backend::Postgres, "postgresql://u@h/db")),
            ),
            ("sqlite://", None),
            ("mysql://h/db", None),
            ("/tmp/a.db", None),
        ] {
            let got = normalize(url).ok();
            assert_eq!(got, want.map(|(b, u)| (b, u.to_owned())), "{url}");
        }
    }

    /// What sqlx makes of the normalised URL (it reparses it as a `url::Url` first): the intended file.
    #[test]
    fn sqlite_paths_survive_sqlx_parsing() {
        use sqlx::ConnectOptions;
        use sqlx::sqlite::SqliteConnectOptions;
        for (url, file) in [
            (
                "sqlite:///var/lib/tablebay/meta.db",
                "/var/lib/tablebay/meta.db",
            ),
            (
                "sqlite://./tablebay-data/meta.db?mode=rwc",
                "./tablebay-data/meta.db",
            ),
            ("sqlite://tablebay-data/meta.db", "tablebay-data/meta.db"),
            ("sqlite:meta.db", "meta.db"),
            (
                "sqlite:///tmp/with space/Meta.DB",
                "/tmp/with space/Meta.DB",
            ),
        ] {
            let (_, normalized) = normalize(url).unwrap();
            let any: sqlx::any::AnyConnectOptions = normalized.parse().unwrap();
            let sqlite = SqliteConnectOptions::from_url(&any.database_url).unwrap();
            assert_eq!(sqlite.get_filename(), std::path::Path::new(file), "{url}");
        }
    }

    /// A plain path gets its directories and file created, WAL mode, a busy timeout of at least 5 s, foreign
    /// keys on and the durability's `synchronous`, on every pooled connection.
    #[tokio::test]
    async fn sqlite_file_setup() {
        for (durability, want_synchronous) in [(Durability::Full, 2), (Durability::Relaxed, 1)] {
            sqlite_file_setup_with(durability, want_synchronous).await;
        }
    }

    async fn sqlite_file_setup_with(durability: Durability, want_synchronous: i64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/deeper/meta.db");
        let store = open(&format!("sqlite://{}", path.display()), durability)
            .await
            .unwrap();
        assert!(path.exists());
        let mut conns = Vec::new();
        for _ in 0..3 {
            let mut conn = store.pool.acquire().await.unwrap();
            let mode: String = sqlx::query("PRAGMA journal_mode")
                .fetch_one(&mut *conn)
                .await
                .unwrap()
                .get(0);
            assert_eq!(mode, "wal");
            let timeout: i64 = sqlx::query("PRAGMA busy_timeout")
                .fetch_one(&mut *conn)
                .await
                .unwrap()
                .get(0);
            assert!(timeout >= 5000, "{timeout}");
            let fk: i64 = sqlx::query("PRAGMA foreign_keys")
                .fetch_one(&mut *conn)
                .await
                .unwrap()
                .get(0);
            assert_eq!(fk, 1);
            let synchronous: i64 = sqlx::query("PRAGMA synchronous")
                .fetch_one(&mut *conn)
                .await
                .unwrap()
                .get(0);
            assert_eq!(synchronous, want_synchronous, "{durability:?}");
            conns.push(conn);
        }
        drop(conns);
        store.close().await;
        // Reopening runs no migration twice.
        let again = open(&format!("sqlite:{}", path.display()), durability)
            .await
            .unwrap();
        assert_eq!(again.backend(), Backend::Sqlite);
        again.close().await;
    }
}
