//! Integration tests: each starts the real `tablebay` binary on ephemeral ports with a fresh data directory
//! and drives it over HTTP with SigV4-signed requests (the client-side signer of `tablebay-auth`).
// Test helpers outside #[test] functions are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod control_plane;
mod s3;
mod iceberg_clients_rust;
mod server;
