//! The fixture of the object-service tests: a fresh SQLite meta store and blob directory, and a table's storage
//! in it (its metadata file written, as the catalog writes one when it creates a table); helpers to make bodies,
//! collect streams and count blob files.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    dead_code
)]

use base64::Engine as _;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use tablebay_objects::*;
use tablebay_store::{BlobStore, BlobUrl, MetaStore};
use uuid::Uuid;

/// The key of the metadata file every table's storage starts with.
pub const METADATA_KEY: &str = "metadata/00000-0190f0a0-0000-7000-8000-000000000000.metadata.json";

pub struct Env {
    pub objects: Objects,
    pub table: Storage,
    pub meta: MetaStore,
    pub blobs_dir: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Env {
    /// The table's id.
    pub fn id(&self) -> Uuid {
        self.table.table_id
    }
}

pub async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let meta = MetaStore::connect(&format!(
        "sqlite://{}",
        dir.path().join("meta.db").display()
    ))
    .await
    .unwrap();
    let blobs_dir = dir.path().join("blobs");
    let blobs = BlobStore::open(&BlobUrl::Local(blobs_dir.clone())).unwrap();
    let objects = Objects::new(
        meta.clone(),
        blobs,
        std::sync::Arc::new(tablebay_store::encryption::LocalKeys::ephemeral()),
    );
    // Object rows need no table row: the storage is addressed by the table's id alone.
    let table = Storage {
        table_id: Uuid::now_v7(),
        encryption: ObjectEncryption::Managed,
    };
    let metadata = PutOptions {
        attributes: ObjectAttributes {
            content_type: Some("application/json".into()),
            ..ObjectAttributes::default()
        },
        ..PutOptions::default()
    };
    let body = ObjectBody::from_bytes(Bytes::from_static(b"{\"format-version\": 2}"));
    objects
        .put_object(&table, &key(METADATA_KEY), body, metadata)
        .await
        .unwrap();
    Env {
        objects,
        table,
        meta,
        blobs_dir,
        _dir: dir,
    }
}

pub async fn collect(stream: ObjectStream) -> Vec<u8> {
    stream
        .try_fold(Vec::new(), |mut acc, chunk| async move {
            acc.extend_from_slice(&chunk);
            Ok(acc)
        })
        .await
        .unwrap()
}

pub fn key(k: &str) -> ObjectKey {
    ObjectKey::parse(k).unwrap()
}

/// A body in chunks of `chunk` bytes, as a network would deliver it.
pub fn body(data: &[u8], chunk: usize) -> ObjectBody {
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

pub async fn put(env: &Env, k: &str, data: &[u8]) -> ObjectInfo {
    env.objects
        .put_object(&env.table, &key(k), body(data, 1000), PutOptions::default())
        .await
        .unwrap()
}

pub fn b64(raw: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(raw)
}

pub fn md5_of(data: &[u8]) -> [u8; 16] {
    use md5::Digest as _;
    md5::Md5::digest(data).into()
}

/// Files under the blob directory (staging files included).
pub fn blob_files(env: &Env) -> usize {
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
