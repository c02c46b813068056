//! `holdfast backup --output FILE`: a consistent copy of a SQLite database into a new
//! file, while `serve` runs (see [`holdfast::backup_sqlite`]). PostgreSQL is backed up
//! with its own tools (`pg_basebackup`); this command says so and does nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::Opts;
use super::fmt::emit;
use super::parse::{Coded, invalid};
use crate::config::redact_url;

#[derive(clap::Args, Debug)]
pub struct BackupArgs {
    /// The new file to write the copy to; an existing file is never overwritten.
    #[arg(long)]
    output: PathBuf,
    #[command(flatten)]
    opts: Opts,
}

/// What `holdfast backup` answers a PostgreSQL URL.
const POSTGRES_REFUSAL: &str = "holdfast backup copies SQLite databases; back up \
     PostgreSQL with pg_basebackup as docs/OPERATIONS.md (\"Backups\") shows";

pub async fn backup(args: BackupArgs) -> anyhow::Result<ExitCode> {
    let url = &args.opts.db.database;
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Err(invalid(POSTGRES_REFUSAL));
    }
    let busy_timeout = args.opts.db.pool_options().sqlite_busy_timeout;
    let copy = holdfast::backup_sqlite(url, &args.output, busy_timeout)
        .await
        .coded()?;
    let database = redact_url(url);
    let output = copy.output.display().to_string();
    emit(
        &args.opts,
        json!({
            "database": database, "output": output, "bytes": copy.bytes,
            "accounts": copy.accounts, "ledger_entries": copy.ledger_entries,
        }),
        || {
            format!(
                "backed up {database} to {output} ({} bytes; accounts {}, ledger entries {}; \
                 quick_check ok)",
                copy.bytes, copy.accounts, copy.ledger_entries
            )
        },
    )
}
