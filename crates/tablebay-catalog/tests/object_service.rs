//! The object service end to end over a temporary SQLite database and blob directory: what PutObject, GetObject,
//! listings and multipart uploads promise, through the catalog's public API.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use base64::Engine as _;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use tablebay_catalog::*;
use tablebay_store::{BlobStore, BlobUrl, MetaStore};

struct Env {
    catalog: Catalog,
    table: TableStorage,
    blobs_dir: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let meta = MetaStore::connect(&format!(
        "sqlite://{}",
        dir.path().join("meta.db").display()
    ))
    .await
    .unwrap();
    let blobs_dir = dir.path().join("blobs");
    let blobs = BlobStore::open(&BlobUrl::Local(blobs_dir.clone())).unwrap();
    let catalog = Catalog::new(
        meta,
        blobs,
        CatalogConfig {
            region: "us-east-1".into(),
            flavor: ArnFlavor::Aws,
        },
        std::sync::Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
    );
    let account = AccountId::parse("111122223333").unwrap();
    let bucket = catalog
        .create_bucket(
            &account,
            NewBucket {
                name: BucketName::parse("bucket").unwrap(),
                encryption: None,
                storage_class: None,
                tags: Tags::default(),
            },
        )
        .await
        .unwrap();
    let ns = NamespaceName::parse("ns").unwrap();
    catalog
        .create_namespace(&bucket.arn, ns.clone(), Default::default(), &account)
        .await
        .unwrap();
    let schema = serde_json::json!({"type": "struct", "fields": [{"id": 1, "name": "id", "type": "int", "required": true}]});
    let definition =
        TableDefinition::from_iceberg_json(schema, None, None, Default::default()).unwrap();
    let new = NewTable {
        name: TableName::parse("t").unwrap(),
        format: "ICEBERG".into(),
        definition: Some(definition),
        encryption: None,
        storage_class: None,
        tags: Tags::default(),
    };
    let table = catalog
        .create_table(&bucket.arn, &ns, new, &account)
        .await
        .unwrap();
    let bucket_name = table
        .warehouse_location
        .trim_start_matches("s3://")
        .to_string();
    let storage = catalog.table_storage(&bucket_name).await.unwrap();
    assert_eq!(storage.table_id, table.id);
    assert_eq!(storage.owner().as_str(), "111122223333");
    // The metadata file the server wrote is an object of the table.
    let location = TableLocation::parse(table.metadata_location.as_deref().unwrap()).unwrap();
    let (view, body) = catalog
        .get_object(
            &storage,
            &ObjectKey::parse(&location.key).unwrap(),
            &ReadRequest::default(),
        )
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&collect(body).await).unwrap();
    assert_eq!(json["table-uuid"], table.id.to_string());
    assert_eq!(
        view.info.attributes.content_type.as_deref(),
        Some("application/json")
    );
    Env {
        catalog,
        table: storage,
        blobs_dir,
        _dir: dir,
    }
}

async fn collect(stream: ObjectStream) -> Vec<u8> {
    stream
        .try_fold(Vec::new(), |mut acc, chunk| async move {
            acc.extend_from_slice(&chunk);
            Ok(acc)
        })
        .await
        .unwrap()
}

fn key(k: &str) -> ObjectKey {
    ObjectKey::parse(k).unwrap()
}

/// A body in chunks of `chunk` bytes, as a network would deliver it.
fn body(data: &[u8], chunk: usize) -> ObjectBody {
    let chunks: Vec<Result<Bytes, BodyError>> = data
        .chunks(chunk.max(1))
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    ObjectBody {
        stream: futures::stream::iter(chunks).boxed(),
        content_length: Some(data.len() as u64),
        content_md5: None,
        checksum: None,
    }
}

async fn put(env: &Env, k: &str, data: &[u8]) -> ObjectInfo {
    env.catalog
        .put_object(&env.table, &key(k), body(data, 1000), PutOptions::default())
        .await
        .unwrap()
}

fn b64(raw: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(raw)
}

/// Files under the blob directory (staging files included).
fn blob_files(env: &Env) -> usize {
    fn walk(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
    }
    walk(&env.blobs_dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_verifies_before_publishing() {
    let env = env().await;
    let before = blob_files(&env);
    let data = vec![7u8; 600_000];
    let md5 = md5_of(&data);
    // Wrong MD5, wrong CRC32 (in a header and in a trailer), short body: rejected, nothing visible, no blob left.
    type Expect = fn(&ObjectError) -> bool;
    let cases: Vec<(ObjectBody, Expect)> = vec![
        (
            ObjectBody {
                content_md5: Some(b64(&[0; 16])),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::BadDigest),
        ),
        (
            ObjectBody {
                content_md5: Some("zz".into()),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::InvalidDigest),
        ),
        (
            ObjectBody {
                checksum: Some((
                    ChecksumAlgorithm::Crc32,
                    ChecksumClaim::Header(b64(&[0; 4])),
                )),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::ChecksumMismatch(ChecksumAlgorithm::Crc32)),
        ),
        (
            ObjectBody {
                checksum: Some((
                    ChecksumAlgorithm::Sha256,
                    ChecksumClaim::Trailer(Box::new(|| Some(b64(&[1; 32])))),
                )),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::ChecksumMismatch(ChecksumAlgorithm::Sha256)),
        ),
        (
            ObjectBody {
                checksum: Some((
                    ChecksumAlgorithm::Crc32c,
                    ChecksumClaim::Trailer(Box::new(|| None)),
                )),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::Invalid(_)),
        ),
        (
            ObjectBody {
                content_length: Some(600_001),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::IncompleteBody),
        ),
    ];
    for (i, (b, want)) in cases.into_iter().enumerate() {
        let err = env
            .catalog
            .put_object(&env.table, &key("k"), b, PutOptions::default())
            .await
            .unwrap_err();
        assert!(want(&err), "case {i}: {err:?}");
    }
    assert!(matches!(
        env.catalog
            .head_object(&env.table, &key("k"), &ReadRequest::default())
            .await,
        Err(ObjectError::NoSuchKey)
    ));
    assert_eq!(
        blob_files(&env),
        before,
        "rejected bodies left blobs behind"
    );

    // The right claims pass; the stored checksum is the claimed algorithm's.
    let crc = ChecksumAlgorithm::Crc32c;
    let good = ObjectBody {
        content_md5: Some(b64(&md5)),
        checksum: Some((
            crc,
            ChecksumClaim::Trailer(Box::new(move || {
                Some(b64(&crc.digest(&vec![7u8; 600_000])))
            })),
        )),
        ..body(&data, 65536)
    };
    let info = env
        .catalog
        .put_object(&env.table, &key("k"), good, PutOptions::default())
        .await
        .unwrap();
    assert_eq!(info.etag, hex::encode(md5));
    assert_eq!(
        info.checksum.as_ref().map(|c| (c.algorithm, c.kind)),
        Some((crc, ChecksumType::FullObject))
    );
    // Without claims, CRC64NVME is computed, as S3 does.
    let info = put(&env, "plain", b"abc").await;
    assert_eq!(
        info.checksum.unwrap().algorithm,
        ChecksumAlgorithm::Crc64Nvme
    );
}

fn md5_of(data: &[u8]) -> [u8; 16] {
    use md5::Digest as _;
    md5::Md5::digest(data).into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_writes_and_reads() {
    let env = env().await;
    let first = put(&env, "c", b"one").await;
    let opts = |condition| PutOptions {
        condition,
        ..PutOptions::default()
    };
    let err = env
        .catalog
        .put_object(
            &env.table,
            &key("c"),
            body(b"two", 10),
            opts(PutCondition::IfAbsent),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PreconditionFailed));
    let err = env
        .catalog
        .put_object(
            &env.table,
            &key("c"),
            body(b"two", 10),
            opts(PutCondition::IfMatch("\"nope\"".into())),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PreconditionFailed));
    env.catalog
        .put_object(
            &env.table,
            &key("c"),
            body(b"two", 10),
            opts(PutCondition::IfMatch(format!("\"{}\"", first.etag))),
        )
        .await
        .unwrap();
    let read = |preconditions| ReadRequest {
        preconditions,
        ..ReadRequest::default()
    };
    let stale = Preconditions {
        if_match: Some(EtagCondition::Etag(first.etag.clone())),
        ..Default::default()
    };
    assert!(matches!(
        env.catalog
            .get_object(&env.table, &key("c"), &read(stale))
            .await,
        Err(ObjectError::PreconditionFailed)
    ));
    let (view, stream) = env
        .catalog
        .get_object(&env.table, &key("c"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, b"two");
    let current = Preconditions {
        if_none_match: Some(EtagCondition::Etag(view.info.etag.clone())),
        ..Default::default()
    };
    assert!(matches!(
        env.catalog
            .get_object(&env.table, &key("c"), &read(current))
            .await,
        Err(ObjectError::NotModified)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_roll_up_and_page() {
    let env = env().await;
    let keys = ["a/1", "a/2", "a/b/1", "b", "c/x/y", "c/z", "d"];
    for k in keys {
        put(&env, k, k.as_bytes()).await;
    }
    let list = |prefix: &str, delimiter: Option<&str>, after: Option<String>, max| ListRequest {
        prefix: prefix.into(),
        delimiter: delimiter.map(str::to_string),
        after,
        max_keys: max,
    };
    let page = env
        .catalog
        .list_objects(&env.table, &list("", Some("/"), None, 1000))
        .await
        .unwrap();
    let got: Vec<_> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(got, ["b", "d"]);
    assert_eq!(page.common_prefixes, ["a/", "c/", "metadata/"]);
    assert!(!page.truncated);
    let page = env
        .catalog
        .list_objects(&env.table, &list("a/", Some("/"), None, 1000))
        .await
        .unwrap();
    assert_eq!(
        page.objects
            .iter()
            .map(|o| o.key.as_str())
            .collect::<Vec<_>>(),
        ["a/1", "a/2"]
    );
    assert_eq!(page.common_prefixes, ["a/b/"]);
    // Paging one entry at a time visits every entry once, prefixes included.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = env
            .catalog
            .list_objects(&env.table, &list("", Some("/"), after.clone(), 1))
            .await
            .unwrap();
        seen.extend(page.objects.iter().map(|o| o.key.clone()));
        seen.extend(page.common_prefixes.iter().cloned());
        if !page.truncated {
            break;
        }
        after = page.next_after;
    }
    assert_eq!(seen, ["a/", "b", "c/", "d", "metadata/"]);
    let page = env
        .catalog
        .list_objects(&env.table, &list("", None, Some("c/x/y".into()), 2))
        .await
        .unwrap();
    assert_eq!(
        page.objects
            .iter()
            .map(|o| o.key.as_str())
            .collect::<Vec<_>>(),
        ["c/z", "d"]
    );
    assert!(page.truncated);
    assert_eq!(page.next_after.as_deref(), Some("d"));
    let empty = env
        .catalog
        .list_objects(&env.table, &list("", None, None, 0))
        .await
        .unwrap();
    assert!(empty.objects.is_empty() && !empty.truncated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_in_any_order_with_retries() {
    let env = env().await;
    let k = key("big");
    let crc = ChecksumAlgorithm::Crc32;
    let upload = env
        .catalog
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            Some((crc, None)),
            None,
            "me",
        )
        .await
        .unwrap();
    assert_eq!(upload.checksum, Some((crc, ChecksumType::Composite)));
    let parts: Vec<Vec<u8>> = vec![
        vec![1; MIN_PART_BYTES as usize],
        vec![2; MIN_PART_BYTES as usize + 3],
        vec![3; 10],
    ];
    let mut etags = Vec::new();
    for (n, data) in [
        (3u32, &parts[2]),
        (1, &vec![9u8; 100]),
        (2, &parts[1]),
        (1, &parts[0]),
    ] {
        let part = env
            .catalog
            .upload_part(&env.table, &k, &upload.upload_id, n, body(data, 1 << 16))
            .await
            .unwrap();
        assert_eq!(
            part.checksum.as_ref().map(|c| c.value.clone()),
            Some(b64(&crc.digest(data)))
        );
        etags.push((n, part.etag));
    }
    let etag = |n: u32| etags.iter().rev().find(|(m, _)| *m == n).unwrap().1.clone();
    let listing = env
        .catalog
        .list_parts(&env.table, &k, &upload.upload_id, 0, 2)
        .await
        .unwrap();
    assert_eq!(
        listing
            .parts
            .iter()
            .map(|p| p.part_number)
            .collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(listing.truncated);
    assert_eq!(listing.next_marker, Some(2));
    let uploads = env
        .catalog
        .list_uploads(
            &env.table,
            &UploadListRequest {
                max_uploads: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(uploads.uploads.len(), 1);

    let part = |n: u32, etag: String| CompletedPart {
        part_number: n,
        etag,
        checksum: None,
    };
    let complete = |parts: Vec<CompletedPart>| CompleteRequest {
        parts,
        ..CompleteRequest::default()
    };
    let id = upload.upload_id.as_str();
    let err = env
        .catalog
        .complete_upload(&env.table, &k, id, complete(vec![]))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::MalformedXml(_)));
    let err = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            id,
            complete(vec![part(2, etag(2)), part(1, etag(1))]),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::InvalidPartOrder));
    let err = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            id,
            complete(vec![part(1, "\"0000\"".into())]),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::InvalidPart(_)));
    let err = env
        .catalog
        .complete_upload(&env.table, &k, id, complete(vec![part(4, etag(1))]))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::InvalidPart(_)));
    let err = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            id,
            complete(vec![part(3, etag(3)), part(4, etag(3))]),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::InvalidPart(_)));
    // Errors changed nothing: the upload still completes; this one is abandoned, a second one completes.
    env.catalog.abort_upload(&env.table, &k, id).await.unwrap();
    let upload = env
        .catalog
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            Some((crc, None)),
            None,
            "me",
        )
        .await
        .unwrap();
    let id = upload.upload_id.as_str();
    let mut listed = Vec::new();
    for (n, data) in [(1u32, &parts[0]), (2, &parts[1]), (3, &parts[2])] {
        let p = env
            .catalog
            .upload_part(&env.table, &k, id, n, body(data, 1 << 20))
            .await
            .unwrap();
        let checksum = Some((crc, p.checksum.unwrap().value));
        listed.push(CompletedPart {
            part_number: n,
            etag: format!("\"{}\"", p.etag),
            checksum,
        });
    }
    // A listed checksum that is not the part's is an invalid part.
    let mut wrong = listed.clone();
    wrong[1].checksum = Some((crc, b64(&[0; 4])));
    let err = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            id,
            CompleteRequest {
                parts: wrong,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::InvalidPart(_)));
    // A whole-object claim that does not match is BadDigest-class.
    let claim = CompleteRequest {
        parts: listed.clone(),
        checksum: Some((crc, b64(&[0; 4]))),
        ..Default::default()
    };
    let err = env
        .catalog
        .complete_upload(&env.table, &k, id, claim)
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::ChecksumMismatch(_)));
    let whole: Vec<u8> = parts.concat();
    let info = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            id,
            CompleteRequest {
                parts: listed.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let md5s: Vec<u8> = parts.iter().flat_map(|p| md5_of(p)).collect();
    assert_eq!(info.etag, format!("{}-3", hex::encode(md5_of(&md5s))));
    let crcs: Vec<u8> = parts.iter().flat_map(|p| crc.digest(p)).collect();
    assert_eq!(
        info.checksum.as_ref().unwrap().value,
        format!("{}-3", b64(&crc.digest(&crcs)))
    );
    assert_eq!(info.parts_count, Some(3));
    // Reads cross part boundaries.
    let (_, stream) = env
        .catalog
        .get_object(&env.table, &k, &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, whole);
    let boundary = MIN_PART_BYTES;
    let ranged = ReadRequest {
        range: Some(ByteRange::From {
            first: boundary - 2,
            last: Some(boundary + 1),
        }),
        ..Default::default()
    };
    let (view, stream) = env
        .catalog
        .get_object(&env.table, &k, &ranged)
        .await
        .unwrap();
    assert_eq!(view.range, boundary - 2..boundary + 2);
    assert_eq!(collect(stream).await, vec![1, 1, 2, 2]);
    let part2 = ReadRequest {
        part_number: Some(2),
        ..Default::default()
    };
    let (view, stream) = env
        .catalog
        .get_object(&env.table, &k, &part2)
        .await
        .unwrap();
    assert_eq!(view.range, boundary..boundary * 2 + 3);
    assert_eq!(collect(stream).await, parts[1]);
    // The upload is gone.
    let err = env
        .catalog
        .upload_part(&env.table, &k, id, 4, body(b"x", 1))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::NoSuchUpload));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_limits_abort_and_expiry() {
    let env = env().await;
    let k = key("m");
    let upload = env
        .catalog
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            None,
            None,
            "me",
        )
        .await
        .unwrap();
    let id = upload.upload_id.clone();
    for n in [0, 10_001] {
        let err = env
            .catalog
            .upload_part(&env.table, &k, &id, n, body(b"x", 1))
            .await
            .unwrap_err();
        assert!(matches!(err, ObjectError::Invalid(_)), "{n}");
    }
    let a = env
        .catalog
        .upload_part(&env.table, &k, &id, 1, body(b"small", 2))
        .await
        .unwrap();
    let b = env
        .catalog
        .upload_part(&env.table, &k, &id, 2, body(b"tail", 2))
        .await
        .unwrap();
    let parts = vec![
        CompletedPart {
            part_number: 1,
            etag: a.etag,
            checksum: None,
        },
        CompletedPart {
            part_number: 2,
            etag: b.etag,
            checksum: None,
        },
    ];
    let err = env
        .catalog
        .complete_upload(
            &env.table,
            &k,
            &id,
            CompleteRequest {
                parts,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::EntityTooSmall));
    // Another key or table cannot use the upload.
    let err = env
        .catalog
        .abort_upload(&env.table, &key("other"), &id)
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::NoSuchUpload));
    env.catalog.abort_upload(&env.table, &k, &id).await.unwrap();
    assert!(matches!(
        env.catalog.abort_upload(&env.table, &k, &id).await,
        Err(ObjectError::NoSuchUpload)
    ));
    // FULL_OBJECT needs a CRC; COMPOSITE cannot be CRC64NVME.
    let full_sha = env
        .catalog
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            Some((ChecksumAlgorithm::Sha256, Some(ChecksumType::FullObject))),
            None,
            "me",
        )
        .await;
    assert!(matches!(full_sha, Err(ObjectError::Invalid(_))));
    // Expiry aborts old uploads only.
    env.catalog
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            None,
            None,
            "me",
        )
        .await
        .unwrap();
    assert_eq!(
        env.catalog
            .expire_uploads(std::time::Duration::from_secs(3600))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(
        env.catalog
            .expire_uploads(std::time::Duration::from_millis(1))
            .await
            .unwrap(),
        1
    );
    let uploads = env
        .catalog
        .list_uploads(
            &env.table,
            &UploadListRequest {
                max_uploads: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(uploads.uploads.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_stream_through_multipart_blobs() {
    let env = env().await;
    // Past the 8 MiB buffer the blob is written as a multipart upload of the store.
    let data: Vec<u8> = (0..20 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    let info = env
        .catalog
        .put_object(
            &env.table,
            &key("large"),
            body(&data, 1 << 16),
            PutOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(info.etag, hex::encode(md5_of(&data)));
    let (_, stream) = env
        .catalog
        .get_object(&env.table, &key("large"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, data);
    let suffix = ReadRequest {
        range: Some(ByteRange::Suffix(5)),
        ..Default::default()
    };
    let (_, stream) = env
        .catalog
        .get_object(&env.table, &key("large"), &suffix)
        .await
        .unwrap();
    assert_eq!(collect(stream).await, data[data.len() - 5..]);
    // Copy makes an independent object.
    let copy = env
        .catalog
        .copy_object(
            (&env.table, &key("large")),
            (&env.table, &key("copy")),
            &ReadRequest::default(),
            None,
            PutCondition::Always,
            None,
        )
        .await
        .unwrap();
    assert_eq!(copy.etag, info.etag);
    env.catalog
        .delete_object(&env.table, &key("large"))
        .await
        .unwrap();
    let (_, stream) = env
        .catalog
        .get_object(&env.table, &key("copy"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await.len(), data.len());
    let outcomes = env
        .catalog
        .delete_objects(
            &env.table,
            &["copy".into(), "a/../b".into(), "missing".into()],
        )
        .await;
    assert_eq!(outcomes.iter().filter(|(_, r)| r.is_ok()).count(), 2);
}
