//! What the server does to a table's storage on its own behalf, over a temporary SQLite database and blob
//! directory: plain reads of its files, the removal of an unreferenced file only while it is unchanged, a purge,
//! the abort of abandoned uploads, the drain of unlinked blobs, and the rule that a write's requested encryption
//! is the table's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use tablebay_objects::*;

fn location(env: &Env, key: &str) -> TableLocation {
    TableLocation {
        table_id: env.id(),
        key: key.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_reads_clamp_to_the_file() {
    let env = env().await;
    put(&env, "data/f", b"0123456789").await;
    let found = env
        .objects
        .find(&location(&env, "data/f"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.size, 10);
    assert_eq!(collect(env.objects.read(&found, 2..5)).await, b"234");
    assert_eq!(collect(env.objects.read(&found, 8..100)).await, b"89");
    assert!(collect(env.objects.read(&found, 20..30)).await.is_empty());
    // A location that names no object is none, whatever its key.
    for missing in ["data/g", "a\u{0}b"] {
        assert!(
            env.objects
                .find(&location(&env, missing))
                .await
                .unwrap()
                .is_none()
        );
    }
    // The metadata file the fixture wrote is an object like any other.
    let metadata = env
        .objects
        .find(&location(&env, METADATA_KEY))
        .await
        .unwrap()
        .unwrap();
    assert!(
        collect(env.objects.read(&metadata, 0..metadata.size))
            .await
            .starts_with(b"{")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreferenced_files_are_removed_only_while_unchanged() {
    let env = env().await;
    let first = put(&env, "data/old", b"old").await;
    // Modification times are stored in milliseconds: let the rewrite land in a later one.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let rewritten = put(&env, "data/old", b"new!").await;
    // Judged unreferenced at the first version: the rewrite is kept.
    assert_eq!(
        env.objects
            .delete_if_unmodified(env.id(), &key("data/old"), first.last_modified)
            .await
            .unwrap(),
        None
    );
    assert!(
        env.objects
            .find(&location(&env, "data/old"))
            .await
            .unwrap()
            .is_some()
    );
    let before = blob_files(&env);
    assert_eq!(
        env.objects
            .delete_if_unmodified(env.id(), &key("data/old"), rewritten.last_modified)
            .await
            .unwrap(),
        Some(4)
    );
    assert!(
        env.objects
            .find(&location(&env, "data/old"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(blob_files(&env), before - 1, "the blob goes at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_and_stale_uploads() {
    let env = env().await;
    put(&env, "data/a", b"a").await;
    let upload = env
        .objects
        .create_upload(
            &env.table,
            &key("data/m"),
            ObjectAttributes::default(),
            None,
            None,
            "me",
        )
        .await
        .unwrap();
    assert_eq!(upload.encryption, Some(ObjectEncryption::Managed));
    env.objects
        .upload_part(
            &env.table,
            &key("data/m"),
            &upload.upload_id,
            1,
            body(b"p", 1),
        )
        .await
        .unwrap();
    let long_ago = chrono::Utc::now() - chrono::Duration::hours(1);
    assert_eq!(
        env.objects
            .abort_stale_uploads(env.id(), long_ago)
            .await
            .unwrap(),
        0
    );
    let now = chrono::Utc::now() + chrono::Duration::seconds(1);
    assert_eq!(
        env.objects
            .abort_stale_uploads(env.id(), now)
            .await
            .unwrap(),
        1
    );
    assert!(matches!(
        env.objects
            .list_parts(env.id(), &key("data/m"), &upload.upload_id, 0, 10)
            .await,
        Err(ObjectError::UploadNotFound)
    ));
    // The metadata file and `data/a`.
    assert_eq!(env.objects.purge_table(env.id()).await.unwrap(), 2);
    let listing = env
        .objects
        .list_objects(
            env.id(),
            &ListRequest {
                max_keys: 10,
                ..ListRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(listing.objects.is_empty());
    assert_eq!(blob_files(&env), 0, "nothing of the table is left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwritten_blobs_are_drained_after_their_grace_period() {
    let env = env().await;
    put(&env, "k", b"one").await;
    put(&env, "k", b"two").await;
    // The replaced blob waits out its grace period: nothing is due yet.
    assert_eq!(env.objects.delete_unlinked_blobs().await.unwrap(), 0);
    let (_, stream) = env
        .objects
        .get_object(env.id(), &key("k"), &ReadRequest::default())
        .await
        .unwrap();
    assert_eq!(collect(stream).await, b"two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_may_ask_only_for_the_tables_encryption() {
    let env = env().await;
    let before = blob_files(&env);
    for requested in [
        RequestedEncryption::Kms { key_id: None },
        RequestedEncryption::Kms {
            key_id: Some("arn:aws:kms:us-east-1:111122223333:key/k".into()),
        },
    ] {
        let options = PutOptions {
            encryption: Some(requested.clone()),
            ..PutOptions::default()
        };
        let err = env
            .objects
            .put_object(&env.table, &key("e"), body(b"x", 1), options)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ObjectError::EncryptionMismatch { requested: r, table: ObjectEncryption::Managed } if *r == requested),
            "{err:?}"
        );
    }
    assert_eq!(blob_files(&env), before, "a refused write leaves nothing");
    let options = PutOptions {
        encryption: Some(RequestedEncryption::Managed),
        ..PutOptions::default()
    };
    let info = env
        .objects
        .put_object(&env.table, &key("e"), body(b"x", 1), options)
        .await
        .unwrap();
    assert_eq!(info.encryption, Some(ObjectEncryption::Managed));
}
