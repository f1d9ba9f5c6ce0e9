//! The admin API on the tables listener (`/admin/…`, SigV4 with the `osstables`/`s3tables` signing names, JSON in
//! and out): accounts, users, access keys, roles and identity policies (`iam.rs`); maintenance runs
//! (`maintenance.rs`). Routing in `router.rs`, what each operation needs in `dispatch.rs`, errors in `error.rs`.

mod dispatch;
mod error;
mod iam;
mod maintenance;
mod router;
mod wire;

pub(crate) use dispatch::handle;
