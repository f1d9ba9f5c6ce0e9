//! A metadata database that goes away: the real binary on PostgreSQL through a TCP proxy that the test cuts
//! (every connection dropped, new ones closed at once, as when the database host dies). Every surface answers
//! 503 in its own error format with its request id, nothing a refused request asked for happens, and once the
//! proxy is restored the same server serves again with everything acknowledged before the outage intact.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http::Method as M;
use serde_json::{Value, json};
use tablebay_store::test_support::TestDatabase;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::identity::{Surface, respond};
use crate::s3::new_table;
use crate::server::{TestServer, seg};
use crate::world::Who;

/// A TCP proxy to the test PostgreSQL server that can be cut and restored.
struct CuttableProxy {
    addr: SocketAddr,
    down: watch::Sender<bool>,
}

impl CuttableProxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (down, watching) = watch::channel(false);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if *watching.borrow() {
                    continue; // dropped: the client sees its connection closed
                }
                let mut watching = watching.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = watching.wait_for(|down| *down) => {}
                    }
                });
            }
        });
        CuttableProxy { addr, down }
    }

    fn cut(&self) {
        self.down.send_replace(true);
    }

    fn restore(&self) {
        self.down.send_replace(false);
    }
}

/// `database_url` with its `host:port` replaced by the proxy's; the original `host:port`.
fn through_proxy(database_url: &str, proxy: SocketAddr) -> String {
    let (scheme_user, rest) = database_url.split_once('@').unwrap();
    let (_, path) = rest.split_once('/').unwrap();
    format!("{scheme_user}@{proxy}/{path}")
}

fn database_addr(database_url: &str) -> SocketAddr {
    let (_, rest) = database_url.split_once('@').unwrap();
    let (host_port, _) = rest.split_once('/').unwrap();
    let host_port = host_port.replace("localhost", "127.0.0.1");
    host_port.parse().unwrap()
}

/// The answer's status, the named header and the body.
async fn answer(
    server: &TestServer,
    method: M,
    surface: Surface,
    path: &str,
    body: &[u8],
    header: &str,
) -> (u16, String, String) {
    let response = respond(server, &Who::instance(), method, surface, path, body, &[]).await;
    let status = response.status().as_u16();
    let value = response
        .headers()
        .get(header)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, value, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_database_is_503_on_every_surface_and_the_server_recovers() {
    // Unset TABLEBAY_TEST_POSTGRES_URL: skipped with a note; set but unusable: a failure.
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let proxy = CuttableProxy::start(database_addr(database.url())).await;
    let meta_url = through_proxy(database.url(), proxy.addr);
    let server = TestServer::start_with(&["--arn-flavor", "aws", "--meta-url", &meta_url]);
    let storage = new_table(&server, "outage").await;
    let buckets: Value = server
        .call(M::GET, "/buckets", Value::Null)
        .await
        .json()
        .await
        .unwrap();
    let prefix = seg(buckets["tableBuckets"][0]["arn"].as_str().unwrap());
    let object = format!("/{storage}/data/kept.parquet");
    let (status, _, _) = answer(
        &server,
        M::PUT,
        Surface::S3,
        &object,
        b"kept",
        "x-amz-request-id",
    )
    .await;
    assert_eq!(status, 200);

    proxy.cut();

    // Control plane: ServiceUnavailableException in x-amzn-ErrorType, {"message"}.
    let (status, kind, body) = answer(
        &server,
        M::GET,
        Surface::Tables,
        "/buckets",
        b"",
        "x-amzn-errortype",
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(kind.starts_with("ServiceUnavailableException"), "{kind}");
    assert!(body.contains("retry"), "{body}");
    let namespace = json!({"namespace": ["during"]}).to_string();
    let path = format!("/namespaces/{prefix}");
    let (status, request_id, body) = answer(
        &server,
        M::PUT,
        Surface::Tables,
        &path,
        namespace.as_bytes(),
        "x-amzn-requestid",
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(!request_id.is_empty());

    // Iceberg REST: the ErrorModel with type ServiceUnavailableException and code 503.
    let path = format!("/iceberg/v1/{prefix}/namespaces");
    let (status, request_id, body) = answer(
        &server,
        M::GET,
        Surface::Iceberg,
        &path,
        b"",
        "x-request-id",
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(!request_id.is_empty());
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        error["error"]["type"], "ServiceUnavailableException",
        "{body}"
    );
    assert_eq!(error["error"]["code"], 503);

    // Admin: {"code": "ServiceUnavailable"}.
    let (status, kind, body) = answer(
        &server,
        M::GET,
        Surface::Tables,
        "/admin/users",
        b"",
        "x-amzn-errortype",
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(kind, "ServiceUnavailable");

    // S3: the XML error ServiceUnavailable, which S3 clients retry.
    for method in [M::GET, M::PUT] {
        let body: &[u8] = if method == M::PUT { b"lost" } else { b"" };
        let (status, request_id, text) = answer(
            &server,
            method,
            Surface::S3,
            &object,
            body,
            "x-amz-request-id",
        )
        .await;
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("<Code>ServiceUnavailable</Code>"), "{text}");
        assert!(!request_id.is_empty());
    }

    proxy.restore();

    // The same server serves again once the database is back (its pool reconnects on demand).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = server.call(M::GET, "/buckets", Value::Null).await.status();
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still {status} after the database came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // What was acknowledged before is there; what was refused did not happen.
    let (status, _, body) = answer(&server, M::GET, Surface::S3, &object, b"", "etag").await;
    assert_eq!((status, body.as_str()), (200, "kept"));
    let path = format!("/namespaces/{prefix}/during");
    assert_eq!(server.call(M::GET, &path, Value::Null).await.status(), 404);
    let path = format!("/iceberg/v1/{prefix}/namespaces");
    let (status, _, body) = answer(
        &server,
        M::GET,
        Surface::Iceberg,
        &path,
        b"",
        "x-request-id",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    drop(server);
    database.drop_database().await;
}
