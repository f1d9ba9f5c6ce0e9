//! Encryption at rest against the real binary (issue 8): what the data plane writes is not readable on disk and
//! reads back exact (whole, ranged across chunk and part boundaries); altered bytes fail with an integrity error;
//! the server refuses to start with a wrong master key and refuses to read data whose key it lacks; rotation
//! keeps old data readable; SSE headers are answered and requests for another mode are refused.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use http::{Method as M, StatusCode};
use serde_json::{Value, json};

use crate::s3::{error_code, new_table, s3, s3_signed, try_s3};
use crate::server::{ACCESS_KEY, SECRET, TestServer, seg};

const KEY_A: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
const KEY_B: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
const KEY_C: &str = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=";
const KMS_ARN: &str = "arn:aws:kms:us-east-1:111122223333:key/0b7a1c2d-0000-4000-8000-00000000abcd";
const CHUNK: usize = 64 * 1024;

/// Every file under `dir`, recursively.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `len` bytes of a repeating marker text.
fn marked(len: usize) -> Vec<u8> {
    let marker = b"TABLEBAY-PLAINTEXT-MARKER-0123456789;";
    (0..len).map(|i| marker[i % marker.len()]).collect()
}

async fn put(
    server: &TestServer,
    bucket: &str,
    key: &str,
    body: &[u8],
    extra: &[(&str, &str)],
) -> reqwest::Response {
    s3(
        server,
        M::PUT,
        &format!("/{bucket}/{key}"),
        body,
        extra,
        SECRET,
        false,
    )
    .await
}

async fn get(
    server: &TestServer,
    bucket: &str,
    key: &str,
    range: Option<&str>,
) -> reqwest::Response {
    let header = range.map(|r| ("range", r));
    s3(
        server,
        M::GET,
        &format!("/{bucket}/{key}"),
        b"",
        header.as_slice(),
        SECRET,
        false,
    )
    .await
}

async fn text_of(resp: reqwest::Response) -> (StatusCode, String) {
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

fn sse(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get("x-amz-server-side-encryption")
        .map(|v| v.to_str().unwrap().to_string())
}

fn write_keys(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn data_is_encrypted_on_disk_and_reads_back_exact() {
    let server = TestServer::start();
    let bucket = new_table(&server, "enc-disk").await;
    let data = marked(3 * CHUNK + 1234);
    let small = marked(100);

    let put_big = put(&server, &bucket, "data/big.parquet", &data, &[]).await;
    assert_eq!(put_big.status(), StatusCode::OK);
    assert_eq!(sse(&put_big).as_deref(), Some("AES256"));
    assert_eq!(
        put(&server, &bucket, "data/small.bin", &small, &[])
            .await
            .status(),
        StatusCode::OK
    );
    // An empty object is a valid encrypted blob too.
    assert_eq!(
        put(&server, &bucket, "data/empty", b"", &[]).await.status(),
        StatusCode::OK
    );

    // Multipart: a 5 MiB part and a short one, read back across the part boundary.
    let key = "data/multi.parquet";
    let created = s3_signed(&server, M::POST, &format!("/{bucket}/{key}?uploads"), b"").await;
    assert_eq!(created.status(), StatusCode::OK);
    assert_eq!(sse(&created).as_deref(), Some("AES256"));
    let xml = created.text().await.unwrap();
    let upload_id = xml
        .split("<UploadId>")
        .nth(1)
        .unwrap()
        .split("</UploadId>")
        .next()
        .unwrap()
        .to_string();
    let part1 = marked(5 * 1024 * 1024);
    let part2 = marked(CHUNK + 7);
    let mut etags = Vec::new();
    for (n, part) in [(1, &part1), (2, &part2)] {
        let path = format!("/{bucket}/{key}?partNumber={n}&uploadId={upload_id}");
        let resp = s3_signed(&server, M::PUT, &path, part).await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(sse(&resp).as_deref(), Some("AES256"), "UploadPart answer");
        etags.push(resp.headers()["etag"].to_str().unwrap().to_string());
    }
    let complete = format!(
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{}</ETag></Part>\
         <Part><PartNumber>2</PartNumber><ETag>{}</ETag></Part></CompleteMultipartUpload>",
        etags[0], etags[1]
    );
    let path = format!("/{bucket}/{key}?uploadId={upload_id}");
    let done = s3_signed(&server, M::POST, &path, complete.as_bytes()).await;
    assert_eq!(done.status(), StatusCode::OK);
    assert_eq!(sse(&done).as_deref(), Some("AES256"));
    let whole: Vec<u8> = [part1.as_slice(), part2.as_slice()].concat();

    // Nothing under the blob directory holds the marker (nor the metadata JSON's keys).
    let blob_files = files(&server.data_dir().join("blobs"));
    assert!(blob_files.len() >= 5, "{blob_files:?}");
    for file in &blob_files {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            !contains(&bytes, b"PLAINTEXT-MARKER"),
            "{} holds plaintext",
            file.display()
        );
    }

    // Reads are identical, whole and ranged (across 64 KiB chunks and the part boundary).
    for (key, want) in [
        ("data/big.parquet", &data),
        ("data/small.bin", &small),
        ("data/multi.parquet", &whole),
    ] {
        let resp = get(&server, &bucket, key, None).await;
        assert_eq!(resp.status(), StatusCode::OK, "{key}");
        assert_eq!(sse(&resp).as_deref(), Some("AES256"));
        assert!(
            resp.bytes().await.unwrap().as_ref() == want.as_slice(),
            "{key}"
        );
    }
    let n = data.len();
    let p = part1.len();
    for (key, want, first, last) in [
        ("data/big.parquet", &data, 0, 0),
        ("data/big.parquet", &data, CHUNK - 5, CHUNK + 5),
        ("data/big.parquet", &data, CHUNK, 2 * CHUNK - 1),
        ("data/big.parquet", &data, CHUNK - 1, 3 * CHUNK + 3),
        ("data/big.parquet", &data, n - 1, n - 1),
        ("data/small.bin", &small, 10, 20),
        ("data/multi.parquet", &whole, p - 10, p + 10),
        (
            "data/multi.parquet",
            &whole,
            p - 2 * CHUNK - 3,
            p + CHUNK + 2,
        ),
        (
            "data/multi.parquet",
            &whole,
            whole.len() - 3,
            whole.len() - 1,
        ),
    ] {
        let resp = get(
            &server,
            &bucket,
            key,
            Some(&format!("bytes={first}-{last}")),
        )
        .await;
        assert_eq!(
            resp.status(),
            StatusCode::PARTIAL_CONTENT,
            "{key} {first}-{last}"
        );
        assert!(
            resp.bytes().await.unwrap().as_ref() == &want[first..=last],
            "{key} {first}-{last}"
        );
    }
    let suffix = get(&server, &bucket, "data/big.parquet", Some("bytes=-70000")).await;
    assert!(suffix.bytes().await.unwrap().as_ref() == &data[n - 70000..]);
    let empty = get(&server, &bucket, "data/empty", None).await;
    assert_eq!(empty.status(), StatusCode::OK);
    assert!(empty.bytes().await.unwrap().is_empty());

    let head = s3_signed(
        &server,
        M::HEAD,
        &format!("/{bucket}/data/big.parquet"),
        b"",
    )
    .await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(sse(&head).as_deref(), Some("AES256"));
    assert_eq!(head.headers()["content-length"], n.to_string().as_str());
    // The ETag stays the MD5 of the plaintext.
    let etag = head.headers()["etag"]
        .to_str()
        .unwrap()
        .trim_matches('"')
        .to_string();
    assert_eq!(etag, hex::encode(md5_of(&data)));
}

/// MD5 through the `md5sum` tool: the test crate has no MD5 dependency of its own.
fn md5_of(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("md5sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    hex::decode(
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn sse_requests_must_match_the_table() {
    let server = TestServer::start();
    let bucket = new_table(&server, "enc-headers").await;
    for (headers, code) in [
        (
            vec![("x-amz-server-side-encryption", "aws:kms")],
            "InvalidArgument",
        ),
        (
            vec![
                ("x-amz-server-side-encryption", "aws:kms"),
                ("x-amz-server-side-encryption-aws-kms-key-id", KMS_ARN),
            ],
            "InvalidArgument",
        ),
        (
            vec![("x-amz-server-side-encryption", "DES")],
            "InvalidArgument",
        ),
        (
            vec![("x-amz-server-side-encryption-aws-kms-key-id", KMS_ARN)],
            "InvalidArgument",
        ),
        (
            vec![
                ("x-amz-server-side-encryption-customer-algorithm", "AES256"),
                (
                    "x-amz-server-side-encryption-customer-key",
                    "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
                ),
                (
                    "x-amz-server-side-encryption-customer-key-md5",
                    "1B2M2Y8AsgTpgAmY7PhCfg==",
                ),
            ],
            "InvalidArgument",
        ),
    ] {
        let (status, text) = text_of(put(&server, &bucket, "x", b"hello", &headers).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}: {text}");
        assert_eq!(error_code(&text), Some(code), "{headers:?}: {text}");
        let path = format!("/{bucket}/x?uploads");
        let (status, text) =
            text_of(s3(&server, M::POST, &path, b"", &headers, SECRET, false).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}: {text}");
    }
    // Nothing was written.
    assert_eq!(
        get(&server, &bucket, "x", None).await.status(),
        StatusCode::NOT_FOUND
    );
    let ok = put(
        &server,
        &bucket,
        "x",
        b"hello",
        &[("x-amz-server-side-encryption", "AES256")],
    )
    .await;
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(sse(&ok).as_deref(), Some("AES256"));
}

#[tokio::test]
async fn altered_bytes_fail_with_an_integrity_error() {
    let server = TestServer::start();
    let bucket = new_table(&server, "enc-tamper").await;
    let blobs = server.data_dir().join("blobs");
    let before = files(&blobs);
    let data = marked(3 * CHUNK);
    assert_eq!(
        put(&server, &bucket, "f", &data, &[]).await.status(),
        StatusCode::OK
    );
    let new: Vec<PathBuf> = files(&blobs)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    let mut stored = std::fs::read(&new[0]).unwrap();
    assert_eq!(
        stored.len(),
        data.len() + 3 * 16,
        "three chunks, a 16-byte tag each"
    );

    // Flip one byte in the third chunk: ranges in the first chunks still read exact, the third fails.
    stored[2 * (CHUNK + 16) + 100] ^= 0x01;
    std::fs::write(&new[0], &stored).unwrap();
    let early = get(&server, &bucket, "f", Some("bytes=0-99")).await;
    assert_eq!(early.status(), StatusCode::PARTIAL_CONTENT);
    assert!(early.bytes().await.unwrap().as_ref() == &data[..100]);
    let (status, text) = text_of(
        get(
            &server,
            &bucket,
            "f",
            Some(&format!("bytes={}-{}", 2 * CHUNK, 2 * CHUNK + 10)),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{text}");
    assert_eq!(error_code(&text), Some("InternalError"));
    assert!(text.contains("integrity"), "{text}");
    // A whole read never delivers the altered bytes: the body stops with an error before the bad chunk.
    let whole = try_s3(
        &server,
        M::GET,
        &format!("/{bucket}/f"),
        b"",
        &[],
        SECRET,
        false,
    )
    .await;
    if let Ok(whole) = whole {
        let body = whole.bytes().await;
        assert!(
            body.is_err() || body.unwrap().len() < data.len(),
            "a damaged object was served whole"
        );
    }

    // Flip a byte of the first chunk: the answer is an error, not a 200.
    stored[2 * (CHUNK + 16) + 100] ^= 0x01;
    stored[5] ^= 0x80;
    std::fs::write(&new[0], &stored).unwrap();
    let (status, text) = text_of(get(&server, &bucket, "f", None).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{text}");
    assert!(text.contains("integrity"), "{text}");
}

/// Runs `tablebay serve` on `data` expecting it to exit at startup; returns its stderr.
fn start_fails(data: &Path, extra: &[&str]) -> String {
    let mut child = Command::new(crate::server::binary())
        .args(["serve", "--data-dir"])
        .arg(data)
        .args(["--tables-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0"])
        .args(extra)
        .env("TABLEBAY_ROOT_ACCESS_KEY_ID", ACCESS_KEY)
        .env("TABLEBAY_ROOT_SECRET_ACCESS_KEY", SECRET)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success());
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return err;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started (or hung) instead of refusing to start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn wrong_keys_refuse_and_rotation_keeps_old_data_readable() {
    let keys = tempfile::tempdir().unwrap();
    let v1 = write_keys(keys.path(), "v1", &format!("default 1 {KEY_A}\n"));
    let wrong = write_keys(keys.path(), "wrong", &format!("default 1 {KEY_B}\n"));
    let rotated = write_keys(
        keys.path(),
        "rotated",
        &format!("# rotation\ndefault 1 {KEY_A}\ndefault 2 {KEY_C}\n"),
    );
    let only_v2 = write_keys(keys.path(), "only-v2", &format!("default 2 {KEY_C}\n"));
    let no_default = write_keys(keys.path(), "kms-only", &format!("{KMS_ARN} 1 {KEY_C}\n"));
    let malformed = write_keys(keys.path(), "bad", &format!("default one {KEY_A}\n"));

    let server = TestServer::start_with(&["--arn-flavor", "aws", "--encryption-key-file", &v1]);
    let bucket = new_table(&server, "enc-rotate").await;
    let old = marked(CHUNK + 5);
    assert_eq!(
        put(&server, &bucket, "old", &old, &[]).await.status(),
        StatusCode::OK
    );
    let data = server.stop();

    // Other key material for version 1: refuse to start, naming the key version but never a key.
    let err = start_fails(data.path(), &["--encryption-key-file", &wrong]);
    assert!(
        err.contains("default version 1") && err.contains("refusing to start"),
        "{err}"
    );
    assert!(!err.contains(KEY_A) && !err.contains(KEY_B), "{err}");
    let err = start_fails(data.path(), &["--encryption-key-file", &malformed]);
    assert!(err.contains("line 1") && !err.contains(KEY_A), "{err}");
    let err = start_fails(data.path(), &["--encryption-key-file", &no_default]);
    assert!(err.contains("no 'default' key"), "{err}");
    let err = start_fails(
        data.path(),
        &["--encryption-key-env", "TABLEBAY_TEST_UNSET_KEY_VARIABLE"],
    );
    assert!(err.contains("TABLEBAY_TEST_UNSET_KEY_VARIABLE"), "{err}");

    // Rotation: a new version for new data; the old version still opens old data.
    let server = TestServer::start_in(
        data,
        &["--arn-flavor", "aws", "--encryption-key-file", &rotated],
    );
    let new = marked(2 * CHUNK + 9);
    assert_eq!(
        put(&server, &bucket, "new", &new, &[]).await.status(),
        StatusCode::OK
    );
    assert!(
        get(&server, &bucket, "old", None)
            .await
            .bytes()
            .await
            .unwrap()
            .as_ref()
            == old.as_slice()
    );
    assert!(
        get(&server, &bucket, "new", None)
            .await
            .bytes()
            .await
            .unwrap()
            .as_ref()
            == new.as_slice()
    );
    let data = server.stop();

    // Without version 1 the server starts (version 2 matches), new data reads, old data fails clearly.
    let server = TestServer::start_in(
        data,
        &["--arn-flavor", "aws", "--encryption-key-file", &only_v2],
    );
    assert!(
        get(&server, &bucket, "new", None)
            .await
            .bytes()
            .await
            .unwrap()
            .as_ref()
            == new.as_slice()
    );
    let (status, text) = text_of(get(&server, &bucket, "old", None).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{text}");
    assert!(
        text.contains("default version 1 is not configured"),
        "{text}"
    );
    let head = s3_signed(&server, M::HEAD, &format!("/{bucket}/old"), b"").await;
    assert_eq!(
        head.status(),
        StatusCode::OK,
        "metadata stays readable without the key"
    );
}

#[tokio::test]
async fn kms_tables_use_their_key() {
    let keys = tempfile::tempdir().unwrap();
    let file = write_keys(
        keys.path(),
        "keys",
        &format!("default 1 {KEY_A}\n{KMS_ARN} 1 {KEY_B}\n"),
    );
    let server = TestServer::start_with(&["--arn-flavor", "aws", "--encryption-key-file", &file]);
    let created: Value = server
        .call(M::PUT, "/buckets", json!({"name": "enc-kms"}))
        .await
        .json()
        .await
        .unwrap();
    let arn = seg(created["arn"].as_str().unwrap());
    assert_eq!(
        server
            .call(
                M::PUT,
                &format!("/namespaces/{arn}"),
                json!({"namespace": ["ns"]})
            )
            .await
            .status(),
        StatusCode::OK
    );
    let unknown = "arn:aws:kms:us-east-1:111122223333:key/11111111-2222-4333-8444-555555555555";
    let mut buckets = Vec::new();
    for (name, key) in [("kms", KMS_ARN), ("unknown", unknown)] {
        let body = json!({"name": name, "format": "ICEBERG",
                          "encryptionConfiguration": {"sseAlgorithm": "aws:kms", "kmsKeyArn": key}});
        assert_eq!(
            server
                .call(M::PUT, &format!("/tables/{arn}/ns"), body)
                .await
                .status(),
            StatusCode::OK
        );
        let location: Value = server
            .call(
                M::GET,
                &format!("/tables/{arn}/ns/{name}/metadata-location"),
                Value::Null,
            )
            .await
            .json()
            .await
            .unwrap();
        buckets.push(
            location["warehouseLocation"]
                .as_str()
                .unwrap()
                .trim_start_matches("s3://")
                .to_string(),
        );
    }
    let kms_header = ("x-amz-server-side-encryption", "aws:kms");
    let put_kms = put(&server, &buckets[0], "a", b"kms data", &[kms_header]).await;
    assert_eq!(put_kms.status(), StatusCode::OK);
    assert_eq!(sse(&put_kms).as_deref(), Some("aws:kms"));
    assert_eq!(
        put_kms.headers()["x-amz-server-side-encryption-aws-kms-key-id"],
        KMS_ARN
    );
    // The key id alone (the ARN's last part) names the same key.
    let by_id = put(
        &server,
        &buckets[0],
        "b",
        b"x",
        &[
            kms_header,
            (
                "x-amz-server-side-encryption-aws-kms-key-id",
                "0b7a1c2d-0000-4000-8000-00000000abcd",
            ),
        ],
    )
    .await;
    assert_eq!(by_id.status(), StatusCode::OK);
    let got = get(&server, &buckets[0], "a", None).await;
    assert_eq!(sse(&got).as_deref(), Some("aws:kms"));
    assert_eq!(got.bytes().await.unwrap().as_ref(), b"kms data");
    let (status, text) = text_of(
        put(
            &server,
            &buckets[0],
            "c",
            b"x",
            &[("x-amz-server-side-encryption", "AES256")],
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, error_code(&text)),
        (StatusCode::BAD_REQUEST, Some("InvalidArgument")),
        "{text}"
    );
    // A table whose KMS key this server does not hold cannot take data, and says why, as S3 answers a write
    // whose KMS key does not exist; nothing is stored.
    let (status, text) = text_of(put(&server, &buckets[1], "a", b"x", &[]).await).await;
    assert_eq!(
        (status, error_code(&text)),
        (StatusCode::BAD_REQUEST, Some("KMS.NotFoundException")),
        "{text}"
    );
    assert!(
        text.contains(unknown) && text.contains("not configured"),
        "{text}"
    );
    assert_eq!(
        get(&server, &buckets[1], "a", None).await.status(),
        StatusCode::NOT_FOUND
    );
}
