//! Transport defences of both listeners against the real binary (issue 14: findings 7, the listener half, and
//! 14): idle connections cannot stop `/health`, slowloris and idle kept-alive connections are closed after the
//! header read timeout, a stalled upload times out without storing anything and a client that stops reading is
//! disconnected (the idle timeout), S3's Range rules, the namespace property limits, and who may read `/metrics`.
//! SigV2 and aws-chunked without its final chunk are covered by `clients/python/test_s3_security.py` (botocore
//! signs SigV2; the suite's raw signer writes aws-chunked).

use std::time::{Duration, Instant};

use http::{Method, Method as M, Request, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::identity::{Creds, send, user};
use crate::identity::{Iceberg, Tables};
use crate::s3::{error_code, new_table, s3, s3_signed};
use crate::server::{ACCESS_KEY, SECRET, TestServer, seg};

/// `host:port` of a listener URL.
fn addr(url: &str) -> &str {
    url.trim_start_matches("http://")
}

/// Reads until the server closes the connection (end of stream or reset), or until the text read contains
/// `until`; what was read and when that happened, or `None` when `deadline` passed first.
async fn read_until(
    stream: &mut (impl AsyncRead + Unpin),
    until: Option<&str>,
    deadline: Duration,
) -> Option<(Duration, String)> {
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => {
                return Some((started.elapsed(), String::from_utf8_lossy(&seen).into()));
            }
            Ok(Ok(n)) => {
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen);
                if until.is_some_and(|until| text.contains(until)) {
                    return Some((started.elapsed(), text.into()));
                }
            }
        }
    }
}

// Finding 7: the open-file limit of many systems (1,024) let 1,050 idle connections stop `/health`.
#[tokio::test]
async fn eleven_hundred_idle_connections_do_not_stop_health() {
    let server = TestServer::start_under(
        tempfile::tempdir().unwrap(),
        &["sh", "-c", "ulimit -n 1024 && exec \"$0\" \"$@\""],
        &["--arn-flavor", "aws"],
    );
    let mut idle = Vec::new();
    for _ in 0..1100 {
        idle.push(TcpStream::connect(addr(&server.tables_url)).await.unwrap());
    }
    let health = tokio::time::timeout(
        Duration::from_secs(5),
        server
            .http
            .get(format!("{}/health", server.tables_url))
            .send(),
    )
    .await
    .expect("/health did not answer within 5 s while 1,100 idle connections were open")
    .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    // Room was made by closing the connections idle longest, the first ones.
    assert!(
        read_until(&mut idle[0], None, Duration::from_secs(5))
            .await
            .is_some(),
        "the longest-idle connection is still open"
    );
    // The S3 listener answers too.
    let s3 = tokio::time::timeout(
        Duration::from_secs(5),
        server.http.get(format!("{}/", server.s3_url)).send(),
    )
    .await
    .expect("the S3 listener did not answer")
    .unwrap();
    assert_eq!(s3.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn slowloris_and_idle_connections_close_after_the_header_timeout() {
    let server =
        TestServer::start_with(&["--arn-flavor", "aws", "--header-read-timeout-seconds", "1"]);
    for url in [&server.tables_url, &server.s3_url] {
        // Slowloris: a header line every 200 ms, never the blank line that ends the head.
        let slow = TcpStream::connect(addr(url)).await.unwrap();
        let (mut reader, mut writer) = slow.into_split();
        writer
            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let dribble = tokio::spawn(async move {
            for i in 0..100 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let line = format!("x-pad-{i}: y\r\n");
                if writer.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let (after, _) = read_until(&mut reader, None, Duration::from_secs(6))
            .await
            .unwrap_or_else(|| panic!("{url}: a slowloris connection stayed open"));
        assert!(
            after >= Duration::from_millis(800),
            "{url}: closed after {after:?}"
        );
        dribble.abort();

        // A connection that never sends anything.
        let mut silent = TcpStream::connect(addr(url)).await.unwrap();
        let (after, _) = read_until(&mut silent, None, Duration::from_secs(6))
            .await
            .unwrap_or_else(|| panic!("{url}: a silent connection stayed open"));
        assert!(
            after >= Duration::from_millis(800),
            "{url}: closed after {after:?}"
        );

        // A kept-alive connection after a complete request: answered, then closed while idle.
        let mut kept = TcpStream::connect(addr(url)).await.unwrap();
        kept.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let (_, text) = read_until(&mut kept, None, Duration::from_secs(6))
            .await
            .unwrap_or_else(|| panic!("{url}: an idle kept-alive connection stayed open"));
        assert!(text.starts_with("HTTP/1.1 "), "{url}: {text}");
    }
    // Requests sent promptly are served as before.
    let health = server
        .get_unsigned(&format!("{}/health", server.tables_url))
        .await;
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test]
async fn stalled_uploads_and_downloads_time_out() {
    let server = TestServer::start_with(&["--arn-flavor", "aws", "--idle-timeout-seconds", "1"]);
    let bucket = new_table(&server, "stall").await;
    let path = format!("/{bucket}/stalled");
    let body = vec![b'x'; 100];
    let (mut parts, ()) = Request::builder()
        .method(M::PUT)
        .uri(format!("{}{path}", server.s3_url))
        .header("x-amz-content-sha256", hex::encode(Sha256::digest(&body)))
        .header("content-length", "100")
        .body(())
        .unwrap()
        .into_parts();
    crate::server::sign(&mut parts, &body, ACCESS_KEY, SECRET, "s3");
    let mut head = format!("PUT {path} HTTP/1.1\r\n");
    for (name, value) in &parts.headers {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(addr(&server.s3_url)).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    // A tenth of the body, then nothing.
    stream.write_all(&body[..10]).await.unwrap();
    let (after, text) = read_until(&mut stream, Some("</Error>"), Duration::from_secs(6))
        .await
        .expect("a stalled upload got no answer");
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert_eq!(error_code(&text), Some("RequestTimeout"), "{text}");
    assert!(
        after >= Duration::from_millis(800),
        "answered after {after:?}"
    );
    let head = s3_signed(&server, M::HEAD, &path, b"").await;
    assert_eq!(head.status(), StatusCode::NOT_FOUND);

    // A client that stops reading a large answer: its connection is closed after the idle timeout, long before
    // the object is sent (the socket buffers hold a few MiB at most).
    let big = vec![7u8; 24 << 20];
    let path = format!("/{bucket}/big");
    let put = s3_signed(&server, M::PUT, &path, &big).await;
    assert_eq!(put.status(), StatusCode::OK);
    let (mut parts, ()) = Request::builder()
        .method(M::GET)
        .uri(format!("{}{path}", server.s3_url))
        .header("x-amz-content-sha256", hex::encode(Sha256::digest(b"")))
        .body(())
        .unwrap()
        .into_parts();
    crate::server::sign(&mut parts, b"", ACCESS_KEY, SECRET, "s3");
    let mut head = format!("GET {path} HTTP/1.1\r\n");
    for (name, value) in &parts.headers {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    head.push_str("\r\n");
    let mut reader = TcpStream::connect(addr(&server.s3_url)).await.unwrap();
    reader.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut received = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received += n,
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the connection of a client that stopped reading stayed open"
    );
    assert!(
        received < big.len(),
        "the whole object was sent ({received} bytes)"
    );
}

// Finding 14: ranges as S3 serves them.
#[tokio::test]
async fn unusable_ranges_get_the_whole_object_and_past_the_end_is_416() {
    let server = TestServer::start();
    let bucket = new_table(&server, "ranges").await;
    let path = format!("/{bucket}/ten");
    let put = s3_signed(&server, M::PUT, &path, b"0123456789").await;
    assert_eq!(put.status(), StatusCode::OK);
    for range in ["bytes=9-5", "bytes=0-1,3-4", "bytes=abc", "items=0-1"] {
        let get = s3(
            &server,
            M::GET,
            &path,
            b"",
            &[("range", range)],
            SECRET,
            false,
        )
        .await;
        assert_eq!(get.status(), StatusCode::OK, "{range}");
        assert!(!get.headers().contains_key("content-range"), "{range}");
        assert_eq!(
            get.bytes().await.unwrap().as_ref(),
            b"0123456789",
            "{range}"
        );
        let head = s3(
            &server,
            M::HEAD,
            &path,
            b"",
            &[("range", range)],
            SECRET,
            false,
        )
        .await;
        assert_eq!(head.status(), StatusCode::OK, "{range}");
        assert_eq!(head.headers()["content-length"], "10", "{range}");
    }
    let past = s3(
        &server,
        M::GET,
        &path,
        b"",
        &[("range", "bytes=1000-")],
        SECRET,
        false,
    )
    .await;
    assert_eq!(past.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(
        error_code(&past.text().await.unwrap()),
        Some("InvalidRange")
    );
    let part = s3(
        &server,
        M::GET,
        &path,
        b"",
        &[("range", "bytes=2-4")],
        SECRET,
        false,
    )
    .await;
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()["content-range"], "bytes 2-4/10");
    assert_eq!(part.bytes().await.unwrap().as_ref(), b"234");
}

// Finding 14: namespace properties have limits, on create and on update.
#[tokio::test]
async fn oversized_namespace_properties_are_refused_and_change_nothing() {
    let server = TestServer::start();
    let root = Creds::root();
    let created = server
        .call(M::PUT, "/buckets", json!({"name": "props"}))
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let arn = created.json::<Value>().await.unwrap()["arn"]
        .as_str()
        .unwrap()
        .to_string();
    let iceberg = |method: Method, path: String, body: Value| {
        let root = &root;
        let server = &server;
        async move {
            let bytes = if body.is_null() {
                Vec::new()
            } else {
                serde_json::to_vec(&body).unwrap()
            };
            let (status, text) = send(
                server,
                root,
                method,
                Iceberg,
                &format!("/iceberg/v1{path}"),
                &bytes,
            )
            .await;
            (
                status,
                serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
            )
        }
    };
    let (status, config) = iceberg(
        M::GET,
        format!("/config?warehouse={}", seg(&arn)),
        Value::Null,
    )
    .await;
    assert_eq!(status, 200, "{config}");
    let p = config["overrides"]["prefix"].as_str().unwrap().to_string();
    let many: serde_json::Map<String, Value> =
        (0..101).map(|i| (format!("k{i}"), json!("v"))).collect();
    let oversized = [
        json!({ "k".repeat(256): "v" }),
        json!({ "k": "v".repeat(51_201) }),
        Value::Object(many),
        json!({ "": "v" }),
    ];
    for properties in &oversized {
        let body = json!({"namespace": ["big"], "properties": properties});
        let (status, error) = iceberg(M::POST, format!("/{p}/namespaces"), body).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(error["error"]["type"], "BadRequestException", "{error}");
        let (status, _) = iceberg(M::GET, format!("/{p}/namespaces/big"), Value::Null).await;
        assert_eq!(status, 404);
    }
    let (status, _) = iceberg(
        M::POST,
        format!("/{p}/namespaces"),
        json!({"namespace": ["ns"], "properties": {"owner": "me"}}),
    )
    .await;
    assert_eq!(status, 200);
    for properties in &oversized {
        let body = json!({"updates": properties, "removals": ["owner"]});
        let (status, error) =
            iceberg(M::POST, format!("/{p}/namespaces/ns/properties"), body).await;
        assert_eq!(status, 400, "{error}");
        assert_eq!(error["error"]["type"], "BadRequestException", "{error}");
    }
    let (status, loaded) = iceberg(M::GET, format!("/{p}/namespaces/ns"), Value::Null).await;
    assert_eq!(status, 200);
    assert_eq!(loaded["properties"], json!({"owner": "me"}), "{loaded}");
    // The control plane sees the namespace as it was, and no `big`.
    let b = seg(&arn);
    let (status, _) = send(
        &server,
        &root,
        M::GET,
        Tables,
        &format!("/namespaces/{b}/ns"),
        b"",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        &server,
        &root,
        M::GET,
        Tables,
        &format!("/namespaces/{b}/big"),
        b"",
    )
    .await;
    assert_eq!(status, 404);
    // Properties within the limits still work, up to the limits.
    let (status, report) = iceberg(
        M::POST,
        format!("/{p}/namespaces/ns/properties"),
        json!({"updates": {"k".repeat(255): "v".repeat(51_200)}}),
    )
    .await;
    assert_eq!(status, 200, "{report}");
}

// Finding 14: `/metrics` can require authentication.
#[tokio::test]
async fn metrics_can_require_the_instance_root_or_a_token() {
    let server = TestServer::start_with(&["--arn-flavor", "aws", "--metrics-auth", "sigv4"]);
    let url = format!("{}/metrics", server.tables_url);
    let anonymous = server.http.get(&url).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::FORBIDDEN);
    assert!(!anonymous.text().await.unwrap().contains("tablebay_"));
    let root = Creds::root();
    let (status, text) = send(&server, &root, M::GET, Tables, "/metrics", b"").await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("tablebay_"), "{text}");
    let wrong = Creds {
        secret: "not the secret".into(),
        ..Creds::root()
    };
    let (status, _) = send(&server, &wrong, M::GET, Tables, "/metrics", b"").await;
    assert_eq!(status, 403);
    // Users, even ones allowed everything, are not the operator.
    let admin = user(
        &server,
        &root,
        "ops",
        Some(json!({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]})),
    )
    .await;
    let (status, _) = send(&server, &admin, M::GET, Tables, "/metrics", b"").await;
    assert_eq!(status, 403);
    drop(server);

    let server = TestServer::start_with(&[
        "--arn-flavor",
        "aws",
        "--metrics-auth",
        "token",
        "--metrics-token",
        "scrape-me",
    ]);
    let url = format!("{}/metrics", server.tables_url);
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Bearer "),
        Some("scrape-me"),
    ] {
        let mut request = server.http.get(&url);
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    let ok = server
        .http
        .get(&url)
        .header("authorization", "Bearer scrape-me")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert!(ok.text().await.unwrap().contains("tablebay_"));
}
