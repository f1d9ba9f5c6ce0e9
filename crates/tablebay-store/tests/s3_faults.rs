//! Issue 17: an S3 blob store that is down, answers 500 or hangs makes every blob call fail fast with
//! `StoreError::Unavailable` (which every surface answers 503), never hang on retries, and never report a write
//! done. The store here is a loopback socket that misbehaves on purpose: nothing listening, a server that answers
//! every request `500 InternalError`, and one that accepts connections and never answers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use tablebay_store::{BlobStore, BlobUrl, StoreError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn s3_at(endpoint: String) -> BlobStore {
    BlobStore::open(&BlobUrl::S3 {
        bucket: "faults".into(),
        prefix: "p".into(),
        endpoint: Some(endpoint),
        region: "us-east-1".into(),
        access_key_id: Some("AKIDFAULTS".into()),
        secret_access_key: Some("secret".into()),
        path_style: true,
    })
    .unwrap()
}

/// A port with nothing listening on it.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

/// A server that reads each request's head and answers `500 InternalError`, closing the connection.
async fn failing_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let body = "<Error><Code>InternalError</Code><Message>down</Message></Error>";
                let answer = format!(
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/xml\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    port
}

/// A server that accepts connections, reads what comes, and never answers.
async fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn assert_unavailable<T: std::fmt::Debug>(what: &str, result: Result<T, StoreError>) {
    match result {
        Err(StoreError::Unavailable { store, .. }) => assert_eq!(store, "blob store", "{what}"),
        other => panic!("{what}: expected Unavailable, got {other:?}"),
    }
}

/// Every call a request makes on the store, each bounded by `within`.
async fn every_call_fails_fast(store: &BlobStore, within: Duration) {
    let started = Instant::now();
    assert_unavailable("probe", store.probe().await);
    assert_unavailable("put", store.put("a/b", Bytes::from_static(b"x")).await);
    assert_unavailable("get", store.get("a/b").await);
    assert_unavailable("read", store.read("a/b", 0..1).await.map(|_| ()));
    let mut writer = store.writer("a/c");
    writer.write(Bytes::from(vec![7u8; 1024])).await.unwrap();
    assert_unavailable("writer", writer.finish().await);
    assert_unavailable("delete", store.delete("a/b").await);
    let took = started.elapsed();
    assert!(
        took < within,
        "six calls took {took:?}, more than {within:?}"
    );
}

#[tokio::test]
async fn a_store_that_is_down_fails_every_call_at_once() {
    let store = s3_at(format!("http://127.0.0.1:{}", closed_port().await));
    // Refused connections: each call gives up after its few quick retries (well under a second each).
    every_call_fails_fast(&store, Duration::from_secs(12)).await;
}

#[tokio::test]
async fn a_store_that_answers_500_fails_every_call_and_acknowledges_no_write() {
    let store = s3_at(format!("http://127.0.0.1:{}", failing_server().await));
    every_call_fails_fast(&store, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_store_that_hangs_is_given_up_on_within_the_request_timeout() {
    let store = s3_at(format!("http://127.0.0.1:{}", silent_server().await));
    let started = Instant::now();
    assert_unavailable("put", store.put("a/b", Bytes::from_static(b"x")).await);
    let took = started.elapsed();
    // One attempt times out (10 s) and the retry budget (5 s) is spent by then: no retry.
    assert!(
        took < Duration::from_secs(16),
        "a put to a silent store took {took:?}"
    );
}
