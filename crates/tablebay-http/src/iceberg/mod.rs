//! The Apache Iceberg REST catalog at `/iceberg/v1/…` on the tables listener (`reference/iceberg-rest.md`).
//! Routing in `router.rs`, wire shapes in `wire.rs`, errors in `error.rs`, the request context in `context.rs`,
//! one file per operation family; the domain logic (commits, metadata files, views) is the catalog's.

mod access;
mod commit;
mod config;
mod context;
mod dispatch;
mod error;
mod idempotency;
mod namespaces;
mod oauth;
pub(crate) mod router;
mod sign;
mod tables;
mod views;
mod wire;

pub use context::IcebergSettings;
pub(crate) use dispatch::handle;
