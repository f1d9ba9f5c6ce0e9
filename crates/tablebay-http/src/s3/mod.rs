//! The S3-compatible data plane for table files: bucket `<table-id>--table-s3` is a table's storage. Built on
//! s3s (`reference/rust-stack.md` §2.3): `router.rs` mounts the service, `auth.rs` authenticates and authorizes,
//! `service.rs` delegates each operation to `objects.rs`, `list.rs` or `multipart.rs`, which call the object
//! service (`tablebay-objects`) on the table the access check resolved through the catalog; `wire.rs` converts
//! types, `chunked.rs` checks that an aws-chunked body ends with its final chunk, `range.rs` handles the `Range`
//! headers S3 ignores, and `error.rs` maps errors.

mod auth;
mod chunked;
mod error;
mod list;
mod multipart;
mod objects;
mod range;
mod router;
mod service;
mod wire;

pub(crate) use router::router;
