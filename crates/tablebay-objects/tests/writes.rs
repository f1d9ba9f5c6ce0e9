//! Single-request writes and reads end to end over a temporary SQLite database and blob directory: a body is
//! verified before it becomes visible, conditional writes and reads, and large bodies, ranges and copies.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use tablebay_objects::*;

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
            |e| matches!(e, ObjectError::Md5Mismatch),
        ),
        (
            ObjectBody {
                content_md5: Some("zz".into()),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::MalformedMd5),
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
            |e| {
                matches!(
                    e,
                    ObjectError::MissingChecksumTrailer(ChecksumAlgorithm::Crc32c)
                )
            },
        ),
        (
            ObjectBody {
                content_length: Some(600_001),
                ..body(&data, 65536)
            },
            |e| matches!(e, ObjectError::LengthMismatch),
        ),
    ];
    for (i, (b, want)) in cases.into_iter().enumerate() {
        let err = env
            .objects
            .put_object(&env.table, &key("k"), b, PutOptions::default())
            .await
            .unwrap_err();
        assert!(want(&err), "case {i}: {err:?}");
    }
    assert!(matches!(
        env.objects
            .head_object(env.id(), &key("k"), &ReadRequest::default())
            .await,
        Err(ObjectError::ObjectNotFound)
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
        .objects
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_writes_and_reads() {
    let env = env().await;
    let first = put(&env, "c", b"one").await;
    let opts = |condition| PutOptions {
        condition,
        ..PutOptions::default()
    };
    let err = env
        .objects
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
        .objects
        .put_object(
            &env.table,
            &key("c"),
            body(b"two", 10),
            opts(PutCondition::IfMatch("\"nope\"".into())),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PreconditionFailed));
    env.objects
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
        env.objects
            .get_object(env.id(), &key("c"), &read(stale))
            .await,
        Err(ObjectError::PreconditionFailed)
    ));
    let (view, stream) = env
        .objects
        .get_object(env.id(), &key("c"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, b"two");
    let current = Preconditions {
        if_none_match: Some(EtagCondition::Etag(view.info.etag.clone())),
        ..Default::default()
    };
    assert!(matches!(
        env.objects
            .get_object(env.id(), &key("c"), &read(current))
            .await,
        Err(ObjectError::NotModified)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_stream_through_multipart_blobs() {
    let env = env().await;
    // Past the 8 MiB buffer the blob is written as a multipart upload of the store.
    let data: Vec<u8> = (0..20 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    let info = env
        .objects
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
        .objects
        .get_object(env.id(), &key("large"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, data);
    let suffix = ReadRequest {
        range: Some(ByteRange::Suffix(5)),
        ..Default::default()
    };
    let (_, stream) = env
        .objects
        .get_object(env.id(), &key("large"), &suffix)
        .await
        .unwrap();
    assert_eq!(collect(stream).await, data[data.len() - 5..]);
    // Copy makes an independent object.
    let copy = env
        .objects
        .copy_object(
            (env.id(), &key("large")),
            (&env.table, &key("copy")),
            &ReadRequest::default(),
            None,
            PutCondition::Always,
            None,
        )
        .await
        .unwrap();
    assert_eq!(copy.etag, info.etag);
    env.objects
        .delete_object(env.id(), &key("large"))
        .await
        .unwrap();
    let (_, stream) = env
        .objects
        .get_object(env.id(), &key("copy"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await.len(), data.len());
    let outcomes = env
        .objects
        .delete_objects(
            env.id(),
            &["copy".into(), "a/../b".into(), "missing".into()],
        )
        .await;
    assert_eq!(outcomes.iter().filter(|(_, r)| r.is_ok()).count(), 2);
}
