//! The admin API on the tables listener (`/admin/…`, SigV4 with the `osstables`/`s3tables` signing names, JSON in
//! and out): accounts, users, access keys, roles and identity policies (`iam.rs`); maintenance runs
//! (`maintenance.rs`). Each file adds its routes to [`router`] in `router.rs`; the request plumbing
//! (authentication, bodies, answers) is `request.rs`.

mod error;
mod iam;
mod maintenance;
mod request;
mod router;
mod wire;

pub(crate) use router::router;
