//! The `tablebay` command: `tablebay serve` runs the server; `tablebay maintenance …` and `tablebay migration …` talk to a running one.
//! Configuration is in `config.rs`, the wiring of stores, services and listeners in `serve.rs`.

mod admin;
mod client;
mod compact;
mod config;
mod listener;
mod maintenance_cli;
mod migration_cli;
mod serve;

use clap::{Parser, Subcommand};

/// `tablebay --version`: the package version, the digest of the sources built (`build/source_id.rs`; the test
/// harnesses refuse a binary whose digest is not their tree's) and the tree they were in.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (source ",
    env!("TABLEBAY_SOURCE_ID"),
    ", tree ",
    env!("TABLEBAY_SOURCE_TREE"),
    ")"
);

/// Tablebay: a self-hostable table bucket service (S3 Tables / OSS Tables compatible).
#[derive(Parser, Debug)]
#[command(name = "tablebay", version = VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the server: the tables listener (control plane, Iceberg REST) and the S3 listener.
    Serve(Box<config::ServeArgs>),
    /// Manage accounts, users, access keys, roles and identity policies through the admin API.
    Admin(admin::AdminArgs),
    /// Compact one table now (against a server's stores, while it runs) and print the report as JSON.
    Compact(Box<compact::CompactArgs>),
    /// Table maintenance on a running server: run a job now, list recorded runs.
    #[command(subcommand)]
    Maintenance(maintenance_cli::MaintenanceCommand),
    /// Table migration on a running server: start, sync, update, complete, get, list (docs/migration.md).
    #[command(subcommand)]
    Migration(migration_cli::MigrationCommand),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Admin(args) => admin::run(args),
        Command::Serve(args) => {
            let config = config::Config::load(*args)?;
            serve::init_logging(&config)?;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve::run(config))
        }
        Command::Compact(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(compact::run(*args))
        }
        Command::Maintenance(command) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(maintenance_cli::run(command))
        }
        Command::Migration(command) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(migration_cli::run(command))
        }
    }
}
