//! Issue 14, finding 10: unlinked blobs are deleted even when the server is killed right after unlinking them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use http::Method;

use crate::encryption::files;
use crate::identity::{Creds, Surface, send};
use crate::server::TestServer;

use super::common::*;

// --- Finding 10 -------------------------------------------------------------------------------------------------

/// The blob files of one table (`blobs/tables/<table-id>/objects/…` under the data directory).
fn table_blobs(data_dir: &Path, data_bucket: &str) -> Vec<PathBuf> {
    let table_id = data_bucket.trim_end_matches("--table-s3");
    files(
        &data_dir
            .join("blobs")
            .join("tables")
            .join(table_id)
            .join("objects"),
    )
}

#[tokio::test]
async fn unlinked_blobs_are_deleted_after_a_kill() {
    let server = TestServer::start();
    let root = Creds::root();
    bucket(&server, &root, "crash").await;
    let data = iceberg_table(&server, &root, "crash", "ns", "t").await;
    let dir = server.data_dir().to_path_buf();
    let kept = table_blobs(&dir, &data);

    // An overwritten object, a deleted one, and a large multipart upload that is then aborted.
    for body in [b"one".as_slice(), b"two".as_slice()] {
        let (status, _) = send(
            &server,
            &root,
            Method::PUT,
            Surface::S3,
            &format!("/{data}/data/over"),
            body,
        )
        .await;
        assert_eq!(status, 200);
    }
    let (status, _) = send(
        &server,
        &root,
        Method::PUT,
        Surface::S3,
        &format!("/{data}/data/gone"),
        b"bye",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = send(
        &server,
        &root,
        Method::DELETE,
        Surface::S3,
        &format!("/{data}/data/gone"),
        b"",
    )
    .await;
    assert_eq!(status, 204);
    let (status, xml) = send(
        &server,
        &root,
        Method::POST,
        Surface::S3,
        &format!("/{data}/data/big?uploads"),
        b"",
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let upload_id = xml_field(&xml, "UploadId");
    let parts = 300;
    for n in 1..=parts {
        let (status, text) = send(
            &server,
            &root,
            Method::PUT,
            Surface::S3,
            &format!("/{data}/data/big?partNumber={n}&uploadId={upload_id}"),
            format!("part {n}").as_bytes(),
        )
        .await;
        assert_eq!(status, 200, "part {n}: {text}");
    }
    let before = table_blobs(&dir, &data);
    assert!(
        before.len() >= kept.len() + parts + 3,
        "{} blobs",
        before.len()
    );
    let (status, text) = send(
        &server,
        &root,
        Method::DELETE,
        Surface::S3,
        &format!("/{data}/data/big?uploadId={upload_id}"),
        b"",
    )
    .await;
    assert_eq!(status, 204, "{text}");

    // kill -9 at once: the grace period has not passed, so every unlinked blob is still on disk.
    let data_dir = server.stop();
    let orphans = table_blobs(data_dir.path(), &data).len();
    assert_eq!(orphans, before.len(), "the grace period was not honoured");

    // After a restart the queue is drained: only the live objects' blobs (and the table's metadata) remain.
    let server = TestServer::start_in(data_dir, &["--arn-flavor", "aws"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    let live = kept.len() + 1;
    loop {
        let now = table_blobs(server.data_dir(), &data);
        if now.len() == live {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} blob files left after the restart; {live} are live",
            now.len()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Nothing live was lost.
    let (status, body) = send(
        &server,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/over"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "two"));
    let (status, body) = send(
        &server,
        &root,
        Method::GET,
        Surface::S3,
        &format!("/{data}/data/x"),
        b"",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "hello"));
    for file in &kept {
        assert!(file.exists(), "{} was deleted", file.display());
    }
}
