//! The `holdfast` binary: `holdfast serve` (the HTTP API) and the operator CLI.

use clap::Parser;
use holdfast_server::{cli, http};

/// mimalloc, not the system allocator: an engine call allocates and frees many small
/// values (rows, decisions, answers) across threads, and glibc's malloc and free were a
/// fifth of the engine process's CPU samples under load (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "holdfast",
    version,
    about = "Charge exactly once for asynchronous paid work"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Run the HTTP API (and the scheduled passes) on the embedded default or PostgreSQL.
    Serve(http::ServeArgs),
    /// Print the OpenAPI document `serve` answers at /openapi.json (docs/openapi.json is
    /// this, committed; clients are generated from it).
    Openapi,
    #[command(flatten)]
    Ops(cli::Command),
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Cli::parse();
    let result = match args.command {
        Command::Serve(a) => http::serve(a).await,
        Command::Openapi => {
            let doc = http::document();
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).expect("the document serializes")
            );
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Ops(c) => holdfast::actor::acting_as(&cli_actor(), cli::run(c)).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("holdfast: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The actor of an operator command: `cli:` and the OS user who ran it.
fn cli_actor() -> String {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    format!("cli:{user}")
}
