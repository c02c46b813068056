//! Passes run on demand: sweep, notices, reconcile, reactivate, prune, audit; and redelivery of a
//! dead webhook. A pass runs in chunks so an operator sees
//! it move: a spinner with a count on a terminal, a plain line per chunk on stderr
//! otherwise; the result goes to stdout.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use holdfast::{PASS_CHUNK, PRUNE_CHUNK, PassReport, PruneReport, StoreError};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::Opts;
use super::fmt::{self, emit};
use super::parse::Coded;

#[derive(clap::Args, Debug)]
pub struct PassArgs {
    /// Stop after this many jobs (the pass runs until nothing is left or this is reached).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    max: u64,
    #[command(flatten)]
    opts: Opts,
}

/// Progress on stderr: a spinner on a terminal, plain lines elsewhere.
enum Progress {
    Bar(ProgressBar),
    Plain(&'static str),
}

impl Progress {
    fn start(name: &'static str, what: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            eprintln!("{name}: {what}");
            return Progress::Plain(name);
        }
        let mut bar = ProgressBar::new_spinner()
            .with_prefix(name)
            .with_message(what.to_owned());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix}: {msg} [{elapsed}]") {
            bar = bar.with_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress::Bar(bar)
    }

    fn processed(&self, total: u64) {
        match self {
            Progress::Bar(bar) => bar.set_message(format!("{total} processed")),
            Progress::Plain(name) => eprintln!("{name}: {total} processed"),
        }
    }

    fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// Runs `pass` in chunks of [`PASS_CHUNK`] until a chunk finds less than a full load or
/// `max` jobs are done.
async fn in_chunks<'s, F, Fut>(name: &'static str, max: u64, pass: F) -> anyhow::Result<u64>
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = Result<PassReport, StoreError>> + 's,
{
    let progress = Progress::start(name, "running");
    let mut total = 0;
    while total < max {
        let chunk = (max - total).min(PASS_CHUNK as u64);
        let done = match pass(chunk).await.coded() {
            Ok(r) => r.processed,
            Err(e) => {
                progress.finish();
                return Err(e);
            }
        };
        total += done;
        if done > 0 {
            progress.processed(total);
        }
        if done < chunk {
            break;
        }
    }
    progress.finish();
    Ok(total)
}

pub async fn sweep(a: PassArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let n = in_chunks("sweep", a.max, |chunk| engine.sweep(chunk)).await?;
    emit(&a.opts, json!({ "processed": n }), || {
        format!("sweep: {n} job(s) expired, their holds released")
    })
}

pub async fn notices(a: PassArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let n = in_chunks("notices", a.max, |chunk| engine.notices(chunk)).await?;
    emit(&a.opts, json!({ "processed": n }), || {
        format!("notices: {n} job.waiting event(s) emitted")
    })
}

#[derive(clap::Args, Debug)]
pub struct AccountPassArgs {
    /// Stop after this many accounts (a later run goes on where this one stopped).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    max: u64,
    #[command(flatten)]
    opts: Opts,
}

/// Reconciliation: each pocket against its ledger; a difference is explained by one
/// `adjustment` entry, drift in `held` or the counters is reported.
pub async fn reconcile(a: AccountPassArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let progress = Progress::start("reconcile", "checking pockets against the ledger");
    let r = engine.reconcile(a.max).await.coded();
    progress.finish();
    let r = r?;
    let json = json!({ "processed": r.processed, "adjusted": r.adjusted, "drifted": r.drifted });
    emit(&a.opts, json, || {
        format!(
            "reconcile: {} account(s) checked, {} adjustment(s) written, {} drift(s) in held, counters or credit blocks reported",
            r.processed, r.adjusted, r.drifted
        )
    })
}

/// Reactivation: idle accounts below quota whose window passed get their allowances back.
pub async fn reactivate(a: AccountPassArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let progress = Progress::start("reactivate", "refilling idle accounts");
    let r = engine.reactivate(a.max).await.coded();
    progress.finish();
    let n = r?.processed;
    emit(&a.opts, json!({ "processed": n }), || {
        format!("reactivate: {n} account(s) refilled, allowance.refilled emitted")
    })
}

/// Expiry of credit blocks: `credit.expiring` told for blocks that expire soon, then what
/// is free of expired blocks written off (`credit.expired`).
pub async fn expire(a: AccountPassArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let progress = Progress::start("expire", "telling and writing off expiring credit");
    let r = engine.expire_blocks(a.max).await.coded();
    progress.finish();
    let n = r?.processed;
    emit(&a.opts, json!({ "processed": n }), || {
        format!("expire: {n} credit block(s) told credit.expiring or written off")
    })
}

#[derive(clap::Args, Debug)]
pub struct PruneArgs {
    /// Stop after deleting this many rows (a later run goes on where this one stopped).
    #[arg(long, default_value_t = 1_000_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    max: u64,
    #[command(flatten)]
    opts: Opts,
}

/// Retention: deletes what outlived the card's `[retention]` windows, oldest first, a chunk
/// per short transaction, until nothing is left or `--max` rows are gone. Never the ledger.
pub async fn prune(a: PruneArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let progress = Progress::start("prune", "deleting rows past their retention window");
    let mut r = PruneReport::default();
    while r.total() < a.max {
        let chunk = (a.max - r.total()).min(PRUNE_CHUNK);
        let done = match engine.prune(chunk).await.coded() {
            Ok(done) => done,
            Err(e) => {
                progress.finish();
                return Err(e);
            }
        };
        r = r.plus(done);
        progress.processed(r.total());
        if done.total() < chunk {
            break;
        }
    }
    progress.finish();
    let json = serde_json::to_value(r)?;
    emit(&a.opts, json, || {
        format!(
            "prune: {} idempotency record(s), {} finished job(s), {} webhook delivery(ies), {} event(s) deleted; the ledger is kept whole",
            r.idempotency, r.jobs, r.webhook_deliveries, r.events
        )
    })
}

#[derive(clap::Args, Debug)]
pub struct RedeliverArgs {
    /// The event whose delivery died.
    event_id: i64,
    /// The endpoint URL, as in the rate card (see `holdfast events --dead`).
    #[arg(long)]
    endpoint: String,
    #[command(flatten)]
    opts: Opts,
}

/// Queues a dead (or delivered) webhook delivery again with fresh attempts.
pub async fn redeliver(a: RedeliverArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let queued = engine.redeliver(a.event_id, &a.endpoint).await.coded()?;
    if !queued {
        anyhow::bail!(
            "delivery_not_found: no dead or delivered delivery of event {} to {}",
            a.event_id,
            a.endpoint
        );
    }
    emit(
        &a.opts,
        json!({ "redelivered": true, "event_id": a.event_id.to_string(), "endpoint": a.endpoint }),
        || {
            format!(
                "redeliver: event {} queued again for {}",
                a.event_id, a.endpoint
            )
        },
    )
}

/// Prints every violation; a broken invariant is an error (non-zero exit).
pub async fn audit(opts: &Opts) -> anyhow::Result<ExitCode> {
    let engine = opts.db.engine().await?;
    let progress = Progress::start("audit", "checking invariants 1-8");
    let violations = engine.audit().await.coded();
    progress.finish();
    let violations = violations?;
    let json = json!({ "ok": violations.is_empty(), "violations": violations });
    emit(opts, json, || {
        if violations.is_empty() {
            return "audit: clean, every invariant holds".to_owned();
        }
        let rows: Vec<Vec<String>> = violations
            .iter()
            .map(|v| {
                vec![
                    v.invariant.to_string(),
                    v.account_id.clone().unwrap_or_else(|| "-".into()),
                    v.job_id.clone().unwrap_or_else(|| "-".into()),
                    v.message.clone(),
                ]
            })
            .collect();
        fmt::table(&["INVARIANT", "ACCOUNT", "JOB", "VIOLATION"], &rows)
    })?;
    match violations.len() {
        0 => Ok(ExitCode::SUCCESS),
        n => anyhow::bail!("audit: {n} violation(s) of the invariants"),
    }
}
