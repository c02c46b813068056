//! Listings: an account's ledger and the events outbox by cursor, jobs by lane and status,
//! accounts by id prefix, plan and status; an account's statement for a period.
//! Every listing takes a `--limit` of 1 to 1000 (default 100).

use std::io::Write;
use std::process::ExitCode;

use holdfast::{AccountFilter, AccountStatus, EventFilter, JobFilter, JobStatus};
use serde_json::{Value, json};

use super::Opts;
use super::fmt::{self, emit};
use super::parse::{self, Coded};
use crate::http::wire::StatementBody;

#[derive(clap::Args, Debug)]
pub struct LedgerArgs {
    /// The account whose ledger to show.
    id: String,
    /// Entries after this entry id (the `next` of the previous page).
    #[arg(long)]
    after: Option<i64>,
    /// At most this many entries (1 to 1000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i64).range(1..=1000))]
    limit: i64,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
pub struct JobsArgs {
    /// Only jobs of this lane.
    #[arg(long)]
    lane: Option<String>,
    /// Only jobs in this status.
    #[arg(long, value_parser = ["queued", "in_progress", "succeeded", "failed", "canceled", "expired"])]
    status: Option<String>,
    /// Only jobs of this account.
    #[arg(long)]
    account: Option<String>,
    /// At most this many jobs (1 to 1000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i64).range(1..=1000))]
    limit: i64,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
pub struct AccountsArgs {
    /// Only ids that start with this.
    #[arg(long)]
    prefix: Option<String>,
    /// Only accounts of this plan.
    #[arg(long)]
    plan: Option<String>,
    /// Only accounts in this status.
    #[arg(long, value_parser = ["active", "suspended", "blocked", "banned"])]
    status: Option<String>,
    /// Accounts after this id (the `next` of the previous page).
    #[arg(long)]
    after: Option<String>,
    /// At most this many accounts (1 to 1000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i64).range(1..=1000))]
    limit: i64,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
pub struct EventsArgs {
    /// Events after this event id (the `next` of the previous page).
    #[arg(long)]
    after: Option<i64>,
    /// At most this many events (1 to 1000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i64).range(1..=1000))]
    limit: i64,
    /// Only events of this account.
    #[arg(long)]
    account: Option<String>,
    /// Only events of this type, e.g. account.suspended.
    #[arg(long = "type")]
    event_type: Option<String>,
    /// Only events this actor caused, e.g. key:<key id>, cli:<user>, system:sweep.
    #[arg(long)]
    actor: Option<String>,
    /// List dead webhook deliveries (failed their last attempt) instead of events;
    /// `--after` is then a delivery id. Requeue one with `holdfast redeliver`.
    #[arg(long, conflicts_with_all = ["account", "event_type", "actor"])]
    dead: bool,
    /// With --dead: only deliveries to this endpoint URL.
    #[arg(long, requires = "dead")]
    endpoint: Option<String>,
    #[command(flatten)]
    opts: Opts,
}

pub async fn ledger(a: LedgerArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let engine = a.opts.db.engine().await?;
    let page = engine.ledger(&id, a.after, a.limit).await.coded()?;
    let more = more_after(&a.opts, page.items.len(), a.limit, || async {
        let probe = engine.ledger(&id, page.next, 1).await.coded()?;
        Ok(probe.items.len())
    })
    .await?;
    let entries: Vec<Value> = page.items.iter().map(fmt::entry_json).collect();
    let json = json!({ "entries": entries, "next": page.next });
    emit(&a.opts, json, || {
        let rows: Vec<Vec<String>> = page
            .items
            .iter()
            .map(|e| {
                vec![
                    e.entry_id.to_string(),
                    fmt::time(e.created_at),
                    e.pocket.clone(),
                    e.kind.clone(),
                    fmt::signed(&e.pocket, e.delta),
                    fmt::pocket_amount(&e.pocket, e.amount_after),
                    e.reference.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let header = ["ENTRY", "TIME", "POCKET", "KIND", "DELTA", "AFTER", "REF"];
        with_next(
            fmt::table(&header, &rows),
            page.items.len(),
            page.next,
            more,
        )
    })
}

/// A table followed by how to get the next page, when there is one (`more`).
fn with_next(
    table: String,
    shown: usize,
    next: Option<impl std::fmt::Display>,
    more: bool,
) -> String {
    match next {
        Some(n) if more => format!("{table}\n({shown} shown; next page: --after {n})"),
        _ => format!("{table}\n({shown} shown)"),
    }
}

/// Whether a page of `shown` items is followed by another, for the human summary: only
/// a full page can be, and it is when `probe` (one item after the page's cursor) finds
/// one. JSON output carries the cursor alone and probes nothing.
async fn more_after<F, Fut>(opts: &Opts, shown: usize, limit: i64, probe: F) -> anyhow::Result<bool>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    if opts.json || i64::try_from(shown)? < limit {
        return Ok(false);
    }
    Ok(probe().await? > 0)
}

pub async fn jobs(a: JobsArgs) -> anyhow::Result<ExitCode> {
    let filter = JobFilter {
        lane: a.lane,
        status: a.status.as_deref().and_then(JobStatus::parse),
        account_id: a
            .account
            .as_deref()
            .map(parse::account)
            .transpose()?
            .map(|id| id.to_string()),
        limit: a.limit,
    };
    let engine = a.opts.db.engine().await?;
    let jobs = engine.list_jobs(&filter).await.coded()?;
    let list: Vec<Value> = jobs.iter().map(fmt::job_json).collect();
    emit(&a.opts, json!({ "jobs": list }), || {
        let rows: Vec<Vec<String>> = jobs
            .iter()
            .map(|j| {
                vec![
                    j.job_id.clone(),
                    j.account_id.clone(),
                    j.kind.clone(),
                    j.lane.clone(),
                    j.status.as_str().to_owned(),
                    fmt::time(j.created_at),
                    fmt::lines_text(&j.hold),
                    fmt::lines_text(&j.charged),
                ]
            })
            .collect();
        let header = [
            "JOB", "ACCOUNT", "KIND", "LANE", "STATUS", "CREATED", "HOLD", "CHARGED",
        ];
        format!("{}\n({} shown)", fmt::table(&header, &rows), jobs.len())
    })
}

pub async fn accounts(a: AccountsArgs) -> anyhow::Result<ExitCode> {
    let filter = AccountFilter {
        plan: a.plan,
        status: a.status.as_deref().and_then(AccountStatus::parse),
        prefix: a.prefix,
        after: a.after.as_deref().map(parse::account).transpose()?,
        limit: a.limit,
    };
    let engine = a.opts.db.engine().await?;
    let page = engine.list_accounts(&filter).await.coded()?;
    let more = more_after(&a.opts, page.accounts.len(), a.limit, || async {
        let after = page.next.as_deref().map(parse::account).transpose()?;
        let probe = AccountFilter {
            after,
            limit: 1,
            ..filter.clone()
        };
        Ok(engine.list_accounts(&probe).await.coded()?.accounts.len())
    })
    .await?;
    let list: Vec<Value> = page.accounts.iter().map(fmt::account_json).collect();
    emit(
        &a.opts,
        json!({ "accounts": list, "next": page.next }),
        || {
            let rows: Vec<Vec<String>> = page
                .accounts
                .iter()
                .map(|acct| {
                    vec![
                        acct.account_id.clone(),
                        acct.effective_plan.clone(),
                        fmt::account_status(acct).to_owned(),
                        fmt::money(acct.balance),
                        fmt::money(acct.available),
                        acct.open_jobs.to_string(),
                    ]
                })
                .collect();
            let header = [
                "ACCOUNT",
                "PLAN",
                "STATUS",
                "BALANCE",
                "AVAILABLE",
                "OPEN JOBS",
            ];
            with_next(
                fmt::table(&header, &rows),
                rows.len(),
                page.next.as_ref(),
                more,
            )
        },
    )
}

pub async fn events(a: EventsArgs) -> anyhow::Result<ExitCode> {
    if a.dead {
        return dead_deliveries(a).await;
    }
    let filter = EventFilter {
        after: a.after,
        limit: a.limit,
        account_id: a
            .account
            .as_deref()
            .map(parse::account)
            .transpose()?
            .map(|id| id.to_string()),
        event_type: a.event_type,
        actor: a.actor,
    };
    let engine = a.opts.db.engine().await?;
    let page = engine.events(&filter).await.coded()?;
    let more = more_after(&a.opts, page.items.len(), a.limit, || async {
        let probe = EventFilter {
            after: page.next,
            limit: 1,
            ..filter.clone()
        };
        Ok(engine.events(&probe).await.coded()?.items.len())
    })
    .await?;
    let list: Vec<Value> = page.items.iter().map(fmt::event_json).collect();
    emit(
        &a.opts,
        json!({ "events": list, "next": page.next }),
        || {
            let rows: Vec<Vec<String>> = page
                .items
                .iter()
                .map(|e| {
                    vec![
                        e.event_id.to_string(),
                        fmt::time(e.created_at),
                        e.event_type.clone(),
                        e.account_id.clone(),
                        e.job_id.clone().unwrap_or_else(|| "-".into()),
                        e.data.to_string(),
                    ]
                })
                .collect();
            let header = ["EVENT", "TIME", "TYPE", "ACCOUNT", "JOB", "DATA"];
            with_next(
                fmt::table(&header, &rows),
                page.items.len(),
                page.next,
                more,
            )
        },
    )
}

async fn dead_deliveries(a: EventsArgs) -> anyhow::Result<ExitCode> {
    let engine = a.opts.db.engine().await?;
    let page = engine
        .dead_deliveries(a.endpoint.as_deref(), a.after, a.limit)
        .await
        .coded()?;
    let more = more_after(&a.opts, page.items.len(), a.limit, || async {
        let probe = engine.dead_deliveries(a.endpoint.as_deref(), page.next, 1);
        Ok(probe.await.coded()?.items.len())
    })
    .await?;
    let list: Vec<Value> = page
        .items
        .iter()
        .map(|d| {
            json!({
                "delivery_id": d.delivery_id.to_string(),
                "event_id": d.event_id.to_string(),
                "type": d.event_type,
                "account_id": d.account_id,
                "endpoint": d.endpoint,
                "attempts": d.attempts,
                "last_error": d.last_error,
                "created_at": fmt::time(d.created_at),
                "dead_at": d.dead_at.map(fmt::time),
            })
        })
        .collect();
    emit(
        &a.opts,
        json!({ "dead_deliveries": list, "next": page.next }),
        || {
            let rows: Vec<Vec<String>> = page
                .items
                .iter()
                .map(|d| {
                    vec![
                        d.delivery_id.to_string(),
                        d.event_id.to_string(),
                        d.dead_at.map_or_else(|| "-".into(), fmt::time),
                        d.event_type.clone(),
                        d.account_id.clone(),
                        d.endpoint.clone(),
                        d.attempts.to_string(),
                        d.last_error.clone().unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            let header = [
                "DELIVERY",
                "EVENT",
                "DEAD AT",
                "TYPE",
                "ACCOUNT",
                "ENDPOINT",
                "ATTEMPTS",
                "LAST ERROR",
            ];
            with_next(
                fmt::table(&header, &rows),
                page.items.len(),
                page.next,
                more,
            )
        },
    )
}

#[derive(clap::Args, Debug)]
pub struct StatementArgs {
    /// The account whose statement to show.
    id: String,
    /// RFC 3339: the period's start, inclusive (default: the beginning).
    #[arg(long)]
    from: Option<String>,
    /// RFC 3339: the period's end, exclusive (default: now).
    #[arg(long)]
    to: Option<String>,
    /// Print CSV (one row per figure, as `GET …/statement` with `Accept: text/csv`).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    #[command(flatten)]
    opts: Opts,
}

/// `holdfast statement`: the account's statement for a period, in the shapes of
/// `GET /v1/accounts/{id}/statement`.
pub async fn statement(a: StatementArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let from = a
        .from
        .as_deref()
        .map(|t| parse::time("--from", t))
        .transpose()?;
    let to =
        a.to.as_deref()
            .map(|t| parse::time("--to", t))
            .transpose()?;
    let engine = a.opts.db.engine().await?;
    let to = match to {
        Some(to) => to,
        None => engine.period_end_now().await.coded()?,
    };
    let statement = engine.statement(&id, from.unwrap_or(0), to).await.coded()?;
    let body = StatementBody::new(statement, &engine.card().currency);
    if a.csv {
        std::io::stdout().write_all(&crate::books::statement_csv(&body)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let json = serde_json::to_value(&body)?;
    emit(&a.opts, json, || statement_text(&body))
}

/// A statement as tables: the balance and its changes, spending by job kind, by meter.
fn statement_text(body: &StatementBody) -> String {
    let mut rows = vec![vec![
        "opening".into(),
        String::new(),
        body.opening_balance.clone(),
    ]];
    for l in &body.changes {
        rows.push(vec![
            l.kind.clone(),
            l.entries.to_string(),
            l.amount.clone(),
        ]);
    }
    rows.push(vec![
        "closing".into(),
        String::new(),
        body.closing_balance.clone(),
    ]);
    rows.push(vec![
        "held at end".into(),
        String::new(),
        body.held_at_end.clone(),
    ]);
    let mut text = format!(
        "{} from {} to {} ({})\n{}",
        body.account_id,
        body.from,
        body.to,
        body.currency,
        fmt::table(&["", "ENTRIES", "AMOUNT"], &rows)
    );
    if !body.spending_by_job_kind.is_empty() {
        let spent: Vec<Vec<String>> = (body.spending_by_job_kind.iter())
            .map(|l| {
                let kind = l.job_kind.clone().unwrap_or_else(|| "(no job)".into());
                vec![kind, l.entries.to_string(), l.amount.clone()]
            })
            .collect();
        text.push_str("\n\nspent by job kind\n");
        text.push_str(&fmt::table(&["KIND", "ENTRIES", "AMOUNT"], &spent));
    }
    if !body.spending_by_meter.is_empty() {
        let spent: Vec<Vec<String>> = (body.spending_by_meter.iter())
            .map(|l| {
                let meter = l.meter.clone().unwrap_or_else(|| "(not metered)".into());
                let seconds = l.seconds.to_string();
                vec![meter, l.entries.to_string(), seconds, l.amount.clone()]
            })
            .collect();
        text.push_str("\n\nspent by meter\n");
        let header = ["METER", "ENTRIES", "SECONDS", "AMOUNT"];
        text.push_str(&fmt::table(&header, &spent));
    }
    text
}
