//! The S3 Tables / OSS Tables control plane (REST-JSON; `aws s3tables`, boto3, `ossutil tables-api`).
//! Routing in `router.rs`, wire shapes in `wire.rs`, errors in `error.rs`, one file per operation family.

mod access;
mod buckets;
mod dispatch;
mod encryption;
mod error;
mod logging;
mod maintenance;
mod migration_wire;
mod migrations;
mod namespaces;
mod policies;
mod record_expiration;
mod replication;
mod request;
pub(crate) mod router;
mod storage;
mod tables;
mod tagging;
mod virtual_host;
mod wire;

pub(crate) use dispatch::handle;
pub(crate) use wire::timestamp;
