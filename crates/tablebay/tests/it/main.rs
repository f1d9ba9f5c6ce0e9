//! Integration tests: each starts the real `tablebay` binary on ephemeral ports with a fresh data directory
//! and drives it over HTTP with SigV4-signed requests (the client-side signer of `tablebay-auth`).

mod control_plane;
mod iceberg_clients_rust;
mod iceberg_server;
mod server;
