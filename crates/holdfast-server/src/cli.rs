//! The operator CLI: every command opens the engine (`--database`, `--rate-card`), does one
//! thing through it, and prints a human summary, or with `--json` one JSON document in
//! the shapes of API.md (money as a decimal string beside `_micros`, times RFC 3339 UTC).
//!
//! Errors are one line on stderr and a non-zero exit: a refusal or bad input starts with
//! its stable code (`holdfast: insufficient_funds: not enough money: …`). Must never:
//! write a balance itself — every change goes through the engine's operations.

mod backup;
mod export;
pub mod fmt;
mod ingest;
mod lists;
mod money;
mod parse;
mod passes;

use std::process::ExitCode;

use crate::config::DbArgs;

/// What every operator command takes: the database and the output format.
#[derive(clap::Args, Debug, Clone)]
pub struct Opts {
    #[command(flatten)]
    pub db: DbArgs,
    /// Print one JSON document on stdout instead of the human summary.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create or upgrade the database schema.
    Migrate {
        #[command(flatten)]
        opts: Opts,
    },
    /// API keys for `holdfast serve`: create (printed once), list, revoke.
    Key(crate::keys_cli::KeyArgs),
    /// Accounts: put, show, block, unblock, ban, unban.
    Account {
        #[command(subcommand)]
        command: money::AccountCommand,
        #[command(flatten)]
        opts: Opts,
    },
    /// Credit money bought (or, with --bonus, given) to an account.
    TopUp(money::TopUpArgs),
    /// Debit usage: an amount, or --meter M --seconds S priced from the rate card.
    Debit(money::DebitArgs),
    /// Refund (part of) a top-up: a forced debit, no buffer check.
    Refund(money::RefundArgs),
    /// Refund (part of) what a succeeded job was charged, to the pocket it came from.
    RefundJob(money::RefundJobArgs),
    /// Grant allowance items to an account's pocket, until its next refill.
    Grant(money::GrantArgs),
    /// Debits from a file, one JSON object per line, applied in batches; refused lines
    /// are written to a file to fix and ingest again. Safe to run again: applied lines
    /// replay.
    Ingest(ingest::IngestArgs),
    /// Accounts in id order, by --prefix, --plan and --status.
    Accounts(lists::AccountsArgs),
    /// The books of a time range across accounts, as CSV or JSON lines, to a file or stdout.
    Export(export::ExportArgs),
    /// An account's ledger, oldest first.
    Ledger(lists::LedgerArgs),
    /// An account's statement for a period: opening and closing balance, the changes
    /// between by kind, spending by job kind (--csv, --json).
    Statement(lists::StatementArgs),
    /// Jobs, newest first, by lane, status and account.
    Jobs(lists::JobsArgs),
    /// The events outbox, by cursor.
    Events(lists::EventsArgs),
    /// Copy the SQLite database, consistently, into a new file while `serve` runs
    /// (PostgreSQL: pg_basebackup, see docs/OPERATIONS.md).
    Backup(backup::BackupArgs),
    /// Check every invariant of DESIGN.md; exits non-zero when any is broken.
    Audit {
        #[command(flatten)]
        opts: Opts,
    },
    /// Run the sweeper now: expire dead leases and stale jobs, release their holds.
    Sweep(passes::PassArgs),
    /// Run the delayed-notice pass now: `job.waiting` for jobs still open.
    Notices(passes::PassArgs),
    /// Run reconciliation now: every pocket against its ledger; a difference is explained
    /// by one adjustment entry, drift in held, the counters or a credit block is reported.
    Reconcile(passes::AccountPassArgs),
    /// Run the expiry pass now: `credit.expiring` for credit blocks that expire within the
    /// card's notice, then what is free of expired blocks written off (`credit.expired`).
    Expire(passes::AccountPassArgs),
    /// Run reactivation now: refill idle accounts below quota whose window has passed.
    Reactivate(passes::AccountPassArgs),
    /// Delete what outlived the rate card's [retention] windows: idempotency records,
    /// finished jobs, ended webhook deliveries, old events. Never the ledger.
    Prune(passes::PruneArgs),
    /// Queue a dead webhook delivery again (list them with `holdfast events --dead`).
    Redeliver(passes::RedeliverArgs),
}

/// Runs an operator command, then closes the databases it opened (see
/// [`crate::config::close_opened`]).
pub async fn run(command: Command) -> anyhow::Result<ExitCode> {
    let result = run_command(command).await;
    crate::config::close_opened().await;
    result
}

async fn run_command(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Key(args) => crate::keys_cli::run(args).await,
        Command::Migrate { opts } => migrate(&opts).await,
        Command::Account { command, opts } => money::account(command, &opts).await,
        Command::TopUp(a) => money::top_up(a).await,
        Command::Ingest(a) => ingest::ingest(a).await,
        Command::Debit(a) => money::debit(a).await,
        Command::Refund(a) => money::refund(a).await,
        Command::RefundJob(a) => money::refund_job(a).await,
        Command::Grant(a) => money::grant(a).await,
        Command::Accounts(a) => lists::accounts(a).await,
        Command::Export(a) => export::export(a).await,
        Command::Ledger(a) => lists::ledger(a).await,
        Command::Statement(a) => lists::statement(a).await,
        Command::Jobs(a) => lists::jobs(a).await,
        Command::Events(a) => lists::events(a).await,
        Command::Backup(a) => backup::backup(a).await,
        Command::Audit { opts } => passes::audit(&opts).await,
        Command::Sweep(a) => passes::sweep(a).await,
        Command::Notices(a) => passes::notices(a).await,
        Command::Reconcile(a) => passes::reconcile(a).await,
        Command::Reactivate(a) => passes::reactivate(a).await,
        Command::Expire(a) => passes::expire(a).await,
        Command::Prune(a) => passes::prune(a).await,
        Command::Redeliver(a) => passes::redeliver(a).await,
    }
}

async fn migrate(opts: &Opts) -> anyhow::Result<ExitCode> {
    opts.db.migrated_engine(&opts.db.pool_options()).await?;
    let database = opts.db.database_name();
    fmt::emit(
        opts,
        serde_json::json!({ "migrated": true, "database": database }),
        || format!("migrated {database}"),
    )
}
