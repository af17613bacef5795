//! The one Flotilla binary. Only this crate parses flags and sets up logging.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "flotilla", version, about = "A Karmada-compatible multi-cluster control plane in one binary")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the version.
    Version,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Version => println!("flotilla {}", env!("CARGO_PKG_VERSION")),
    }
    Ok(())
}
