//! Issue 17, coherence across instances: several real servers on one PostgreSQL database and one blob directory,
//! as behind a load balancer. A commit through one is what the next load through another returns; an
//! `Idempotency-Key` retry that lands on another instance gets the stored answer; a deactivated key and a changed
//! policy reach every instance within the documented bound (docs/deployment.md), measured here; instances with
//! other master keys refuse to start. And a server started against an unreachable dependency fails fast, naming
//! it.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use http::Method as M;
use serde_json::{Value, json};
use tablebay_store::test_support::TestDatabase;

use crate::identity::{Surface, must, new_user, put_user_policy, send, send_with_headers};
use crate::server::{ACCESS_KEY, ACCOUNT, REGION, SECRET, TestServer, binary, seg};
use crate::world::Who;

/// How long a credential change made through one instance may take to reach another: the key cache's TTL
/// (1 s, `tablebay-iam`'s `KEY_CACHE_TTL`) plus the polling step and slack for a loaded 2-core machine.
const KEY_CHANGE_BOUND: Duration = Duration::from_millis(2500);

const KEY_A: &str = "default 1 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";
const KEY_B: &str = "default 1 HwAeHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgE=\n";

/// `n` servers on one fresh database and one blob directory, with the same master keys.
struct Cluster {
    servers: Vec<TestServer>,
    database: TestDatabase,
    blobs: tempfile::TempDir,
    keys: tempfile::TempDir,
}

impl Cluster {
    /// `None` when TABLEBAY_TEST_POSTGRES_URL is unset (the PostgreSQL variants are skipped with a note).
    async fn start(n: usize) -> Option<Cluster> {
        let database = TestDatabase::create().await?;
        let blobs = tempfile::tempdir().unwrap();
        let keys = tempfile::tempdir().unwrap();
        std::fs::write(keys.path().join("a.key"), KEY_A).unwrap();
        std::fs::write(keys.path().join("b.key"), KEY_B).unwrap();
        let mut cluster = Cluster {
            servers: Vec::new(),
            database,
            blobs,
            keys,
        };
        for _ in 0..n {
            let args = cluster.args("a.key");
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cluster.servers.push(TestServer::start_with(&args));
        }
        Some(cluster)
    }

    fn args(&self, key_file: &str) -> Vec<String> {
        vec![
            "--arn-flavor".into(),
            "aws".into(),
            "--meta-url".into(),
            self.database.url().into(),
            "--blob-url".into(),
            self.blobs.path().to_str().unwrap().into(),
            "--encryption-key-file".into(),
            self.keys.path().join(key_file).to_str().unwrap().into(),
        ]
    }

    async fn stop(self) {
        drop(self.servers);
        self.database.drop_database().await;
    }
}

/// A bucket, namespace `ns` and table `t` made through `server`; the Iceberg prefix.
async fn table(server: &TestServer, root: &Who, bucket: &str) -> String {
    let created = must(
        server,
        root,
        M::PUT,
        Surface::Tables,
        "/buckets",
        json!({"name": bucket}),
    )
    .await;
    let prefix = seg(created["arn"].as_str().unwrap());
    must(
        server,
        root,
        M::PUT,
        Surface::Tables,
        &format!("/namespaces/{prefix}"),
        json!({"namespace": ["ns"]}),
    )
    .await;
    must(
        server,
        root,
        M::POST,
        Surface::Iceberg,
        &format!("/iceberg/v1/{prefix}/namespaces/ns/tables"),
        json!({"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": true}]}}),
    )
    .await;
    prefix
}

fn set_round(round: usize) -> Value {
    json!({"requirements": [], "updates": [
        {"action": "set-properties", "updates": {"round": round.to_string()}}]})
}

async fn load(server: &TestServer, root: &Who, prefix: &str) -> Value {
    let path = format!("/iceberg/v1/{prefix}/namespaces/ns/tables/t");
    must(server, root, M::GET, Surface::Iceberg, &path, Value::Null).await
}

#[tokio::test]
async fn a_commit_through_one_instance_is_what_the_next_load_through_another_returns() {
    let Some(cluster) = Cluster::start(3).await else {
        return;
    };
    let root = Who::instance();
    let s = &cluster.servers;
    let prefix = table(&s[0], &root, "coherent").await;
    let path = format!("/iceberg/v1/{prefix}/namespaces/ns/tables/t");
    for round in 0..12 {
        let (writer, reader) = (&s[round % 3], &s[(round + 1) % 3]);
        // The reader has the current metadata parsed and cached before the commit it must not miss.
        load(reader, &root, &prefix).await;
        let committed = must(
            writer,
            &root,
            M::POST,
            Surface::Iceberg,
            &path,
            set_round(round),
        )
        .await;
        let loaded = load(reader, &root, &prefix).await;
        assert_eq!(
            loaded["metadata-location"], committed["metadata-location"],
            "round {round}"
        );
        assert_eq!(
            loaded["metadata"]["properties"]["round"],
            round.to_string(),
            "round {round}"
        );
        // The control plane of the third instance agrees too.
        let third = &s[(round + 2) % 3];
        let tables = seg(&format!(
            "arn:aws:s3tables:{REGION}:{ACCOUNT}:bucket/coherent"
        ));
        let location = must(
            third,
            &root,
            M::GET,
            Surface::Tables,
            &format!("/tables/{tables}/ns/t/metadata-location"),
            Value::Null,
        )
        .await;
        assert_eq!(location["metadataLocation"], committed["metadata-location"]);
    }
    cluster.stop().await;
}

#[tokio::test]
async fn an_idempotency_key_retried_on_another_instance_gets_the_stored_answer() {
    let Some(cluster) = Cluster::start(2).await else {
        return;
    };
    let root = Who::instance();
    let s = &cluster.servers;
    let prefix = table(&s[0], &root, "idempotent").await;
    let path = format!("/iceberg/v1/{prefix}/namespaces/ns/tables/t");
    let body = serde_json::to_vec(&set_round(1)).unwrap();
    let key = [("idempotency-key", "scale-out-retry-1")];
    let (status, first) =
        send_with_headers(&s[0], &root, M::POST, Surface::Iceberg, &path, &body, &key).await;
    assert_eq!(status, 200, "{first}");
    let log_after_first = load(&s[1], &root, &prefix).await["metadata"]["metadata-log"]
        .as_array()
        .map_or(0, Vec::len);
    // The client's retry (its first answer was lost) lands on the other instance.
    let (status, again) =
        send_with_headers(&s[1], &root, M::POST, Surface::Iceberg, &path, &body, &key).await;
    assert_eq!(status, 200, "{again}");
    let (first, again): (Value, Value) = (
        serde_json::from_str(&first).unwrap(),
        serde_json::from_str(&again).unwrap(),
    );
    assert_eq!(first["metadata-location"], again["metadata-location"]);
    let now = load(&s[0], &root, &prefix).await;
    assert_eq!(now["metadata-location"], first["metadata-location"]);
    assert_eq!(
        now["metadata"]["metadata-log"]
            .as_array()
            .map_or(0, Vec::len),
        log_after_first,
        "the retry did not commit again"
    );
    cluster.stop().await;
}

/// Polls `check` on `server` every 50 ms until it returns true; how long that took (panics past `bound`).
async fn until<F, Fut>(bound: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < bound,
            "{what}: not seen within {bound:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_deactivated_key_and_a_changed_policy_reach_every_instance_within_the_bound() {
    let Some(cluster) = Cluster::start(2).await else {
        return;
    };
    let root = Who::instance();
    let (a, b) = (&cluster.servers[0], &cluster.servers[1]);
    let allow = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]});
    let (user, _) = new_user(a, &root, "roamer", Some(allow)).await;
    // B looks the key up and caches it.
    let (status, body) = send(b, &user, M::GET, Surface::Tables, "/buckets", b"").await;
    assert_eq!(status, 200, "{body}");

    // Deactivated through A: B refuses the key within the bound.
    must(
        a,
        &root,
        M::PUT,
        Surface::Tables,
        &format!("/admin/users/roamer/access-keys/{}", user.key),
        json!({"status": "Inactive"}),
    )
    .await;
    let took = until(KEY_CHANGE_BOUND, "deactivation on B", || async {
        send(b, &user, M::GET, Surface::Tables, "/buckets", b"")
            .await
            .0
            == 403
    })
    .await;
    eprintln!(
        "scale_out: a key deactivated on instance A was refused by instance B after {took:?}"
    );
    must(
        a,
        &root,
        M::PUT,
        Surface::Tables,
        &format!("/admin/users/roamer/access-keys/{}", user.key),
        json!({"status": "Active"}),
    )
    .await;
    until(KEY_CHANGE_BOUND, "reactivation on B", || async {
        send(b, &user, M::GET, Surface::Tables, "/buckets", b"")
            .await
            .0
            == 200
    })
    .await;

    // A policy changed through A applies to B's very next request: policies are never cached.
    let deny = json!({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3tables:ListTableBuckets", "Resource": "*"}]});
    put_user_policy(a, &root, "roamer", "main", &deny).await;
    let (status, body) = send(b, &user, M::GET, Surface::Tables, "/buckets", b"").await;
    assert_eq!(status, 403, "{body}");
    cluster.stop().await;
}

/// Runs `tablebay serve` with `args` until it exits (or `within` passes); its exit success, its stderr and how long
/// it ran.
fn run_to_exit(
    args: &[String],
    envs: &[(&str, &str)],
    within: Duration,
) -> (bool, String, Duration) {
    let data = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = Command::new(binary())
        .args(["serve", "--data-dir"])
        .arg(data.path())
        .args(["--tables-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0"])
        .args(args)
        .env("TABLEBAY_ROOT_ACCESS_KEY_ID", ACCESS_KEY)
        .env("TABLEBAY_ROOT_SECRET_ACCESS_KEY", SECRET)
        .env("TABLEBAY_LOG", "warn")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tablebay serve {args:?} still runs after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.success(), stderr, took)
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn instances_whose_master_keys_differ_refuse_to_start() {
    let Some(cluster) = Cluster::start(1).await else {
        return;
    };
    let (ok, stderr, _) = run_to_exit(&cluster.args("b.key"), &[], Duration::from_secs(30));
    assert!(!ok, "an instance with other master keys started");
    assert!(
        stderr.contains("is not the key this data was encrypted with")
            && stderr.contains("refusing to start"),
        "{stderr}"
    );
    cluster.stop().await;
}

#[test]
fn an_instance_fails_fast_naming_the_dependency_it_could_not_reach() {
    let port = closed_port();
    let meta = format!("postgres://tablebay:hidden@127.0.0.1:{port}/postgres");
    let (ok, stderr, took) =
        run_to_exit(&["--meta-url".into(), meta], &[], Duration::from_secs(30));
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "metadata store at postgres://tablebay@127.0.0.1:{port}/postgres"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("hidden"),
        "the password is not shown: {stderr}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");

    let port = closed_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let (ok, stderr, took) = run_to_exit(
        &["--blob-url".into(), "s3://warehouse/tb".into()],
        &[
            ("TABLEBAY_BLOB_S3_ENDPOINT", &endpoint),
            ("TABLEBAY_BLOB_S3_ACCESS_KEY_ID", "AKIDDOWN"),
            ("TABLEBAY_BLOB_S3_SECRET_ACCESS_KEY", "secret"),
        ],
        Duration::from_secs(30),
    );
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "could not reach the blob store s3://warehouse/tb at {endpoint}"
        )),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}
