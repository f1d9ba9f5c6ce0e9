//! Integration tests: each starts the real `tablebay` binary on ephemeral ports with a fresh data directory
//! and drives it over HTTP with SigV4-signed requests (the client-side signer of `tablebay-auth`).
// The whole target is test code, but clippy's `allow-*-in-tests` only covers `#[test]` functions, not the
// helpers the test modules share.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod access_control;
mod compaction;
mod console;
mod control_plane;
mod encryption;
mod iam;
mod iceberg_clients_rust;
mod iceberg_server;
mod idempotency;
mod identity;
mod maintenance;
mod outages;
mod s3;
mod scale_out;
mod security_confinement;
mod security_iam;
mod security_requests;
mod security_transport;
mod server;
mod sts;
mod world;
