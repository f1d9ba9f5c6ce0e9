//! The `tablebay` command: `tablebay serve` runs the server. Configuration is in `config.rs`, the wiring of
//! stores, services and listeners in `serve.rs`.

mod compact;
mod config;
mod serve;

use clap::{Parser, Subcommand};

/// Tablebay: a self-hostable table bucket service (S3 Tables / OSS Tables compatible).
#[derive(Parser, Debug)]
#[command(name = "tablebay", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the server: the tables listener (control plane, Iceberg REST) and the S3 listener.
    Serve(config::ServeArgs),
    /// Compact one table now (against a server's stores, while it runs) and print the report as JSON.
    Compact(compact::CompactArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            let config = config::Config::load(args)?;
            serve::init_logging(&config);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve::run(config))
        }
        Command::Compact(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(compact::run(args))
        }
    }
}
