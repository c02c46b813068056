//! The `holdfast` binary: `holdfast serve` (the HTTP API) and the operator CLI.

use clap::Parser;
use clap::error::ErrorKind;
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
    /// Print the OpenAPI document without a rate card (docs/openapi.json is this,
    /// committed; clients are generated from it). `serve` answers /openapi.json with this
    /// plus its card's names as enums and its longest lease as a maximum.
    Openapi,
    #[command(flatten)]
    Ops(cli::Command),
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = match Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(&e),
    };
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

/// A command line clap refuses, in one line on stderr as every error of the binary is:
/// clap's message and tips, then the usage of the command meant (clap's own text spans
/// several lines). `--help` and `--version` print as clap prints them.
fn usage_error(e: &clap::Error) -> std::process::ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    eprintln!("holdfast: {}", one_line(&e.to_string()));
    std::process::ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// clap's error text in one line: `message; tip: …; usage: holdfast …`.
fn one_line(text: &str) -> String {
    let mut parts: Vec<String> = vec![];
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"));
    for line in lines {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            parts.push(format!("usage: {usage}"));
            break;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match parts.last_mut() {
            // A message that ends in ':' goes on with its list (the missing arguments).
            Some(last) if last.ends_with(':') => last.push_str(&format!(" {line}")),
            _ => parts.push(line.to_owned()),
        }
    }
    parts.join("; ")
}

/// The actor of an operator command: `cli:` and the OS account the process runs as (the
/// name of its effective uid in the user database), so that the name the books record
/// does not depend on the environment; where the uid has no name (an arbitrary uid in a
/// container), `$USER` or `$LOGNAME`, else `unknown`.
fn cli_actor() -> String {
    let user = whoami::username()
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        })
        .unwrap_or_else(|| "unknown".to_owned());
    format!("cli:{user}")
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of `cmd` and its subcommands without a description in `--help`,
    /// as `holdfast <subcommand…> <argument>`.
    fn undescribed(cmd: &clap::Command, path: &str, found: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let help = arg.get_help().or(arg.get_long_help());
            if help.is_none_or(|h| h.to_string().trim().is_empty()) {
                found.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            let described = sub.get_about().or(sub.get_long_about());
            if described.is_none_or(|h| h.to_string().trim().is_empty()) {
                found.push(format!("{path} {} (the subcommand)", sub.get_name()));
            }
            undescribed(sub, &format!("{path} {}", sub.get_name()), found);
        }
    }

    /// `holdfast … --help` describes every subcommand and every argument.
    #[test]
    fn every_argument_and_subcommand_has_help_text() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut found = vec![];
        undescribed(&cmd, "holdfast", &mut found);
        assert!(found.is_empty(), "no help text: {found:#?}");
    }

    #[test]
    fn the_command_tree_is_well_formed() {
        Cli::command().debug_assert();
    }
}
