//! `tablebay compact`: runs one compaction of a table now, against the same stores a server uses (its data
//! directory, or its `--meta-url` / `--blob-url`), while that server keeps serving; prints the report as JSON.
//! Operators and tests use it; scheduled compaction is the maintenance runner's.

use clap::{Args, ValueEnum};
use tablebay_catalog::{TableArn, TableRef};
use tablebay_compaction::{CompactionSettings, Strategy, compact_table};

use crate::config::{Config, ServeArgs};

/// Flags of `tablebay compact`.
#[derive(Args, Debug)]
pub struct CompactArgs {
    /// The table, by ARN (either flavor).
    #[arg(long)]
    table_arn: String,
    /// Rewritten files roll over at this size (S3 Tables' `targetFileSizeMB`).
    #[arg(long, default_value_t = 512)]
    target_file_size_mb: u64,
    /// A target size in bytes instead (below 1 MB, for tests and benchmarks).
    #[arg(long, conflicts_with = "target_file_size_mb")]
    target_file_size_bytes: Option<u64>,
    /// Row order in the rewritten files.
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// Where the stores are: the same flags as `tablebay serve`.
    #[command(flatten)]
    stores: ServeArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StrategyArg {
    Auto,
    Binpack,
    Sort,
    #[value(name = "z-order")]
    ZOrder,
}

pub async fn run(args: CompactArgs) -> anyhow::Result<()> {
    let config = Config::load(args.stores)?;
    crate::serve::init_logging(&config)?;
    // The server's stores and master keys: compaction reads encrypted files and writes encrypted output.
    let (_, catalog) = crate::serve::open_catalog(&config).await?;
    let arn = TableArn::parse(&args.table_arn).map_err(|e| anyhow::anyhow!("{e}"))?;
    let settings = CompactionSettings {
        target_file_size_bytes: args
            .target_file_size_bytes
            .unwrap_or(args.target_file_size_mb.saturating_mul(1024 * 1024)),
        strategy: match args.strategy {
            StrategyArg::Auto => Strategy::Auto,
            StrategyArg::Binpack => Strategy::Binpack,
            StrategyArg::Sort => Strategy::Sort,
            StrategyArg::ZOrder => Strategy::ZOrder,
        },
    };
    let started = std::time::Instant::now();
    let report = compact_table(&catalog, &TableRef::Arn(arn), &settings).await?;
    let seconds = started.elapsed().as_secs_f64();
    let json = serde_json::json!({
        "filesIn": report.files_in,
        "bytesIn": report.bytes_in,
        "filesOut": report.files_out,
        "bytesOut": report.bytes_out,
        "deleteFilesRemoved": report.delete_files_removed,
        "groupsCommitted": report.groups_committed,
        "groupsSkipped": report.groups_skipped,
        "snapshotId": report.snapshot_id,
        "seconds": seconds,
    });
    println!("{json}");
    Ok(())
}
