//! The web console at `/console` on the tables listener: server-rendered HTML (maud) for people, one more
//! surface of the request pipeline. A page or form is an endpoint (`router.rs`) that needs the IAM action of
//! what it shows or does, on the resource it names (`dispatch.rs`), decided by the same authorization as every
//! API and audited the same way; mutations go through the catalog, IAM and maintenance services.
//!
//! Families: sign-in, session and CSRF (`session.rs`); table buckets with their namespaces, tables, settings and
//! policy editor (`buckets.rs`); a table's schema, snapshots, files and rows (`tables.rs`, charts in
//! `charts.rs`); maintenance (`maintenance.rs`); client configuration (`connect.rs`); accounts, users, keys,
//! roles and policies (`identity.rs`). The shell and the security headers are in `layout.rs`, the embedded CSS
//! and JS in `assets.rs`.

mod assets;
mod buckets;
mod charts;
mod connect;
mod dispatch;
mod error;
mod identity;
mod inspections;
mod layout;
mod maintenance;
mod policy_text;
mod router;
pub(crate) mod session;
mod tables;

pub(crate) use dispatch::handle;
pub use inspections::Inspections;
pub use session::Sessions;

/// The surface name in logs and metrics.
const NAME: &str = "console";
