//! Multipart uploads end to end over a temporary SQLite database and blob directory: parts in any order and
//! re-uploaded, completion checks and derived ETags and checksums, reads across part boundaries, limits, abort
//! and expiry.
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
async fn multipart_in_any_order_with_retries() {
    let env = env().await;
    let k = key("big");
    let crc = ChecksumAlgorithm::Crc32;
    let upload = env
        .objects
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
            .objects
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
        .objects
        .list_parts(env.id(), &k, &upload.upload_id, 0, 2)
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
        .objects
        .list_uploads(
            env.id(),
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
        .objects
        .complete_upload(env.id(), &k, id, complete(vec![]))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::NoParts));
    let err = env
        .objects
        .complete_upload(
            env.id(),
            &k,
            id,
            complete(vec![part(2, etag(2)), part(1, etag(1))]),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartsOutOfOrder));
    let err = env
        .objects
        .complete_upload(env.id(), &k, id, complete(vec![part(1, "\"0000\"".into())]))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartMismatch(_)));
    let err = env
        .objects
        .complete_upload(env.id(), &k, id, complete(vec![part(4, etag(1))]))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartMismatch(_)));
    let err = env
        .objects
        .complete_upload(
            env.id(),
            &k,
            id,
            complete(vec![part(3, etag(3)), part(4, etag(3))]),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartMismatch(_)));
    // Errors changed nothing: the upload still completes; this one is abandoned, a second one completes.
    env.objects.abort_upload(env.id(), &k, id).await.unwrap();
    let upload = env
        .objects
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
            .objects
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
        .objects
        .complete_upload(
            env.id(),
            &k,
            id,
            CompleteRequest {
                parts: wrong,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartMismatch(_)));
    // A whole-object claim that does not match is BadDigest-class.
    let claim = CompleteRequest {
        parts: listed.clone(),
        checksum: Some((crc, b64(&[0; 4]))),
        ..Default::default()
    };
    let err = env
        .objects
        .complete_upload(env.id(), &k, id, claim)
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::ChecksumMismatch(_)));
    let whole: Vec<u8> = parts.concat();
    let info = env
        .objects
        .complete_upload(
            env.id(),
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
        .objects
        .get_object(env.id(), &k, &ReadRequest::default())
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
    let (view, stream) = env.objects.get_object(env.id(), &k, &ranged).await.unwrap();
    assert_eq!(view.range, boundary - 2..boundary + 2);
    assert_eq!(collect(stream).await, vec![1, 1, 2, 2]);
    let part2 = ReadRequest {
        part_number: Some(2),
        ..Default::default()
    };
    let (view, stream) = env.objects.get_object(env.id(), &k, &part2).await.unwrap();
    assert_eq!(view.range, boundary..boundary * 2 + 3);
    assert_eq!(collect(stream).await, parts[1]);
    // The upload is gone.
    let err = env
        .objects
        .upload_part(&env.table, &k, id, 4, body(b"x", 1))
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::UploadNotFound));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_limits_abort_and_expiry() {
    let env = env().await;
    let k = key("m");
    let upload = env
        .objects
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
            .objects
            .upload_part(&env.table, &k, &id, n, body(b"x", 1))
            .await
            .unwrap_err();
        assert!(matches!(err, ObjectError::Invalid(_)), "{n}");
    }
    let a = env
        .objects
        .upload_part(&env.table, &k, &id, 1, body(b"small", 2))
        .await
        .unwrap();
    let b = env
        .objects
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
        .objects
        .complete_upload(
            env.id(),
            &k,
            &id,
            CompleteRequest {
                parts,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::PartTooSmall));
    // Another key or table cannot use the upload.
    let err = env
        .objects
        .abort_upload(env.id(), &key("other"), &id)
        .await
        .unwrap_err();
    assert!(matches!(err, ObjectError::UploadNotFound));
    env.objects.abort_upload(env.id(), &k, &id).await.unwrap();
    assert!(matches!(
        env.objects.abort_upload(env.id(), &k, &id).await,
        Err(ObjectError::UploadNotFound)
    ));
    // FULL_OBJECT needs a CRC; COMPOSITE cannot be CRC64NVME.
    let full_sha = env
        .objects
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            Some((ChecksumAlgorithm::Sha256, Some(ChecksumType::FullObject))),
            None,
            "me",
        )
        .await;
    assert!(matches!(
        full_sha,
        Err(ObjectError::UnsupportedChecksumType { .. })
    ));
    let composite_crc64 = env
        .objects
        .create_upload(
            &env.table,
            &k,
            ObjectAttributes::default(),
            Some((ChecksumAlgorithm::Crc64Nvme, Some(ChecksumType::Composite))),
            None,
            "me",
        )
        .await;
    assert!(matches!(
        composite_crc64,
        Err(ObjectError::UnsupportedChecksumType { .. })
    ));
    // Expiry aborts old uploads only.
    env.objects
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
        env.objects
            .expire_uploads(std::time::Duration::from_secs(3600))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(
        env.objects
            .expire_uploads(std::time::Duration::from_millis(1))
            .await
            .unwrap(),
        1
    );
    let uploads = env
        .objects
        .list_uploads(
            env.id(),
            &UploadListRequest {
                max_uploads: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(uploads.uploads.is_empty());
}
