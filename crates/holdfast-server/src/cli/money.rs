//! Accounts (put, show, block, unblock), the money pocket (top-up, bonus, debit,
//! refund), refunds of jobs and grants of allowance. Each parses its arguments before it opens the database, so bad input changes
//! nothing and needs no connection.

use std::process::ExitCode;

use holdfast::decide::{BlockTerms, CreditCategory, DEFAULT_PRIORITY, Recharge, SpendPolicy};
use holdfast::{
    AccountView, CreditKind, Grant, JobRefund, Micros, MoneyResult, PutAccount, SpendView, Usage,
};
use serde_json::json;

use super::Opts;
use super::fmt::{self, emit, money};
use super::parse::{self, Coded};
use crate::http::wire::BalanceAtBody;

/// The account's own rule of spending (`account put`): any of the first three sets it
/// whole, in place of its plan's; `--no-spend` removes it; none leaves it as it is.
#[derive(clap::Args, Debug)]
pub struct SpendFlags {
    /// A hard limit of the period's spending: a debit or a submit's money hold that would
    /// take spending and what is held past it is refused (spend_limit_reached).
    #[arg(long)]
    spend_limit: Option<String>,
    /// The period: day or month (UTC; default month).
    #[arg(long)]
    spend_period: Option<String>,
    /// A threshold told once a period (event account.spend_threshold): an amount or a
    /// percentage of the limit ("80%"). Repeat for more.
    #[arg(long = "spend-alert")]
    spend_alerts: Vec<String>,
    /// The IANA time zone whose days and months the rule counts (default UTC).
    #[arg(long)]
    spend_timezone: Option<String>,
    /// Remove the account's own rule: its plan's applies again.
    #[arg(long, conflicts_with_all = ["spend_limit", "spend_period", "spend_alerts", "spend_timezone"])]
    no_spend: bool,
}

impl SpendFlags {
    /// What the PUT does to the account's own rule (see [`PutAccount::spend`]).
    fn policy(self) -> anyhow::Result<Option<Option<SpendPolicy>>> {
        if self.no_spend {
            return Ok(Some(None));
        }
        if self.spend_limit.is_none()
            && self.spend_period.is_none()
            && self.spend_alerts.is_empty()
            && self.spend_timezone.is_none()
        {
            return Ok(None);
        }
        let policy = SpendPolicy::from_text(
            self.spend_limit.as_deref(),
            self.spend_period.as_deref(),
            &self.spend_alerts,
            self.spend_timezone.as_deref(),
        );
        let policy = policy.map_err(|e| parse::invalid(format!("spend {e}")))?;
        Ok(Some(Some(policy)))
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum AccountCommand {
    /// Create or update an account.
    Put {
        /// The account's id (1 to 128 characters of A-Z a-z 0-9 . _ : -).
        id: String,
        /// A plan of the rate card.
        #[arg(long)]
        plan: String,
        /// After this RFC 3339 time the rate card's default plan applies.
        #[arg(long)]
        plan_until: Option<String>,
        /// Override the plan's concurrency limit (1 to 1000000).
        #[arg(long)]
        max_concurrent_jobs: Option<i64>,
        /// Auto-recharge: ask for a top-up (event account.recharge_requested) when
        /// available money falls below this (with --recharge-amount).
        #[arg(long, requires = "recharge_amount")]
        recharge_below: Option<String>,
        /// Auto-recharge: the top-up to ask for (with --recharge-below).
        #[arg(long, requires = "recharge_below")]
        recharge_amount: Option<String>,
        /// Remove the account's auto-recharge (without this or --recharge-*, it stays).
        #[arg(long, conflicts_with_all = ["recharge_below", "recharge_amount"])]
        no_recharge: bool,
        #[command(flatten)]
        spend: SpendFlags,
    },
    /// Show an account with its pockets as they are effective now, or with --at as they
    /// were at a time (from its ledger, as `GET /v1/accounts/{id}/balance?at=`).
    Show {
        /// The account's id.
        id: String,
        /// RFC 3339: show the pockets as they were at this time (every entry written at
        /// or before it).
        #[arg(long)]
        at: Option<String>,
    },
    /// Block: new jobs are refused and queued ones not leased; money still applies.
    Block {
        /// The account's id.
        id: String,
        /// Why (1 to 500 characters), recorded on the operator.blocked event.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Lift a block.
    Unblock {
        /// The account's id.
        id: String,
        /// Why (1 to 500 characters), recorded on the operator.unblocked event.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Ban: cancel the queued jobs (holds released), refuse new jobs and debits; running
    /// jobs may end.
    Ban {
        /// The account's id.
        id: String,
        /// Why (1 to 500 characters), recorded on the account.banned event.
        #[arg(long)]
        reason: String,
    },
    /// Lift a ban.
    Unban {
        /// The account's id.
        id: String,
    },
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)] // so "-5" is refused as an amount, not a flag
pub struct TopUpArgs {
    /// The account to credit.
    id: String,
    /// A decimal amount such as 10.00 (at most 6 places).
    amount: String,
    /// Idempotency key: a repeat with the same key and amount changes nothing.
    #[arg(long)]
    key: String,
    /// A bonus (given, not bought; not refundable) instead of a top-up.
    #[arg(long)]
    bonus: bool,
    /// Makes the credit a block that expires at this RFC 3339 time.
    #[arg(long)]
    expires_at: Option<String>,
    /// Makes the credit a block of this priority, 0 to 100 (lower is drawn first; 50
    /// is general money's).
    #[arg(long)]
    priority: Option<i64>,
    /// Makes the credit a block of this category: paid or promotional.
    #[arg(long)]
    category: Option<String>,
    #[command(flatten)]
    opts: Opts,
}

impl TopUpArgs {
    /// The terms the flags give the credit (general money without any).
    fn terms(&self) -> anyhow::Result<BlockTerms> {
        let category = match self.category.as_deref() {
            None => CreditCategory::Paid,
            Some(c) => CreditCategory::parse(c).ok_or_else(|| {
                parse::invalid(format!("--category {c:?}: must be paid or promotional"))
            })?,
        };
        let expires_at = (self.expires_at.as_deref())
            .map(|t| parse::time("--expires-at", t))
            .transpose()?;
        Ok(BlockTerms {
            category,
            priority: self.priority.unwrap_or(DEFAULT_PRIORITY),
            expires_at,
        })
    }
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)] // so "-5" is refused as an amount, not a flag
pub struct DebitArgs {
    /// The account to debit.
    id: String,
    /// A decimal amount such as 0.25; or give --meter and --seconds.
    #[arg(required_unless_present = "meter", conflicts_with = "meter")]
    amount: Option<String>,
    /// A meter of the rate card, priced per second.
    #[arg(long, requires = "seconds")]
    meter: Option<String>,
    /// Seconds of the meter (a positive whole number).
    #[arg(long, requires = "meter")]
    seconds: Option<String>,
    /// Idempotency key: a repeat with the same key and debit changes nothing; the same
    /// key with another debit is refused (idempotency_mismatch).
    #[arg(long)]
    key: String,
    /// The job this usage belongs to, for the ledger entry's reference.
    #[arg(long)]
    job_ref: Option<String>,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)] // so "-5" is refused as an amount, not a flag
pub struct RefundArgs {
    /// The account the top-up was made to.
    id: String,
    /// The idempotency key of the top-up to refund.
    #[arg(long)]
    top_up_key: String,
    /// How much of it to give back: a decimal amount such as 5.00.
    amount: String,
    /// This refund's own idempotency key.
    #[arg(long)]
    key: String,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)] // so "-5" is refused as an amount, not a flag
pub struct RefundJobArgs {
    /// The succeeded job's id, as `holdfast jobs` shows it.
    job: String,
    /// What to give back (default: all that is left of the charge): money as a decimal,
    /// a job charged from an allowance in whole items.
    amount: Option<String>,
    /// Why (1 to 500 characters), recorded on the job.refunded event.
    #[arg(long)]
    reason: String,
    /// This refund's idempotency key (on the job's account).
    #[arg(long)]
    key: String,
    #[command(flatten)]
    opts: Opts,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)] // so "-5" is refused as an amount, not a flag
pub struct GrantArgs {
    /// The account to grant to.
    id: String,
    /// An allowance pocket of the account, e.g. daily_images.
    pocket: String,
    /// Whole items.
    amount: String,
    /// Why (1 to 500 characters), recorded on the allowance.granted event.
    #[arg(long)]
    reason: String,
    /// This grant's idempotency key: a repeat with the same key changes nothing.
    #[arg(long)]
    key: String,
    #[command(flatten)]
    opts: Opts,
}

pub async fn account(command: AccountCommand, opts: &Opts) -> anyhow::Result<ExitCode> {
    match command {
        AccountCommand::Put {
            id,
            plan,
            plan_until,
            max_concurrent_jobs,
            recharge_below,
            recharge_amount,
            no_recharge,
            spend,
        } => {
            let id = parse::account(&id)?;
            let plan_until = plan_until
                .map(|t| parse::time("--plan-until", &t))
                .transpose()?;
            let recharge = match (recharge_below, recharge_amount) {
                (Some(below), Some(amount)) => Some(Some(Recharge {
                    below: Micros::parse_non_negative(&below)
                        .map_err(|e| parse::invalid(format!("--recharge-below {below:?}: {e}")))?,
                    amount: parse::amount(&amount)?,
                })),
                _ => no_recharge.then_some(None),
            };
            let req = PutAccount {
                plan,
                plan_until,
                max_concurrent_jobs,
                recharge,
                spend: spend.policy()?,
            };
            let engine = opts.db.engine().await?;
            let (view, created) = engine.put_account(&id, &req).await.coded()?;
            let verb = if created { "created" } else { "updated" };
            let json = json!({ "created": created, "account": fmt::account_json(&view) });
            emit(opts, json, || {
                format!("{verb} account\n{}", account_text(&view))
            })
        }
        AccountCommand::Show { id, at: None } => {
            let id = parse::account(&id)?;
            let view = opts.db.engine().await?.get_account(&id).await.coded()?;
            emit(opts, fmt::account_json(&view), || account_text(&view))
        }
        AccountCommand::Show { id, at: Some(at) } => show_at(&id, &at, opts).await,
        AccountCommand::Block { id, reason } => set_blocked(&id, true, reason, opts).await,
        AccountCommand::Unblock { id, reason } => set_blocked(&id, false, reason, opts).await,
        AccountCommand::Ban { id, reason } => {
            let id = parse::account(&id)?;
            let banned = opts.db.engine().await?.ban(&id, &reason).await.coded()?;
            let jobs: Vec<&str> = banned.canceled.iter().map(|j| j.job_id.as_str()).collect();
            let json = json!({ "account": fmt::account_json(&banned.account), "canceled": jobs });
            emit(opts, json, || {
                format!(
                    "banned; {} queued job(s) canceled\n{}",
                    jobs.len(),
                    account_text(&banned.account)
                )
            })
        }
        AccountCommand::Unban { id } => {
            let id = parse::account(&id)?;
            let view = opts.db.engine().await?.unban(&id).await.coded()?;
            emit(opts, fmt::account_json(&view), || account_text(&view))
        }
    }
}

async fn set_blocked(
    id: &str,
    blocked: bool,
    reason: Option<String>,
    opts: &Opts,
) -> anyhow::Result<ExitCode> {
    let id = parse::account(id)?;
    let engine = opts.db.engine().await?;
    let view = engine
        .set_blocked_because(&id, blocked, reason.as_deref())
        .await
        .coded()?;
    emit(opts, fmt::account_json(&view), || account_text(&view))
}

pub async fn top_up(a: TopUpArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let amount = parse::amount(&a.amount)?;
    let key = parse::key("--key", &a.key)?;
    let kind = if a.bonus {
        CreditKind::Bonus
    } else {
        CreditKind::TopUp
    };
    let terms = a.terms()?;
    let engine = a.opts.db.engine().await?;
    let r = (engine.credit_on_terms(&id, amount, kind, terms, &key))
        .await
        .coded()?;
    emit(&a.opts, fmt::money_result_json(&r), || result_text(&r))
}

pub async fn debit(a: DebitArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let usage = match (&a.amount, &a.meter, &a.seconds) {
        (Some(amount), None, None) => Usage::Amount(parse::amount(amount)?),
        (None, Some(meter), Some(seconds)) => Usage::Metered {
            meter: meter.clone(),
            seconds: parse::seconds(seconds)?,
        },
        _ => return Err(parse::invalid("give AMOUNT, or --meter and --seconds")),
    };
    let key = parse::key("--key", &a.key)?;
    let engine = a.opts.db.engine().await?;
    let r = engine
        .debit(&id, &usage, &key, a.job_ref.as_deref())
        .await
        .coded()?;
    emit(&a.opts, fmt::money_result_json(&r), || result_text(&r))
}

pub async fn refund(a: RefundArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let top_up_key = parse::key("--top-up-key", &a.top_up_key)?;
    let amount = parse::amount(&a.amount)?;
    let key = parse::key("--key", &a.key)?;
    let engine = a.opts.db.engine().await?;
    let r = engine
        .refund(&id, &top_up_key, amount, &key)
        .await
        .coded()?;
    emit(&a.opts, fmt::money_result_json(&r), || result_text(&r))
}

pub async fn refund_job(a: RefundJobArgs) -> anyhow::Result<ExitCode> {
    let job = holdfast::JobId::parse(&a.job).map_err(parse::invalid)?;
    let amount = a.amount.as_deref().map(parse::amount).transpose()?;
    let req = JobRefund {
        amount,
        reason: a.reason,
        key: parse::key("--key", &a.key)?,
    };
    let engine = a.opts.db.engine().await?;
    let r = engine.refund_job(&job, &req).await.coded()?;
    let json = json!({
        "entries": r.entries.iter().map(fmt::entry_json).collect::<Vec<_>>(),
        "job": fmt::job_json(&r.job), "account": fmt::account_json(&r.account), "replay": r.replay,
    });
    emit(&a.opts, json, || {
        let replay = if r.replay {
            " (a replay: nothing changed)"
        } else {
            ""
        };
        format!(
            "refunded job {}{replay}: {} back in all of {} charged\n{}",
            r.job.job_id,
            fmt::lines_text(&r.job.refunded),
            fmt::lines_text(&r.job.charged),
            account_text(&r.account)
        )
    })
}

pub async fn grant(a: GrantArgs) -> anyhow::Result<ExitCode> {
    let id = parse::account(&a.id)?;
    let amount = a
        .amount
        .parse::<i64>()
        .map_err(|_| parse::invalid("amount: must be a whole number of items"))?;
    let req = Grant {
        pocket: a.pocket,
        amount,
        reason: a.reason,
        key: parse::key("--key", &a.key)?,
    };
    let engine = a.opts.db.engine().await?;
    let g = engine.grant(&id, &req).await.coded()?;
    let r = MoneyResult {
        entry: g.entry,
        account: g.account,
        replay: g.replay,
    };
    emit(&a.opts, fmt::money_result_json(&r), || result_text(&r))
}

/// `debit #4 -2.50 on user-1`, then the money pocket after it.
fn result_text(r: &MoneyResult) -> String {
    let (e, a) = (&r.entry, &r.account);
    let replay = if r.replay {
        " (a replay: already applied, nothing changed)"
    } else {
        ""
    };
    format!(
        "{} #{} {} on {}{replay}\n  balance {}, available {} (held {}, buffer {}), {}",
        e.kind,
        e.entry_id,
        fmt::signed(&e.pocket, e.delta),
        e.account_id,
        money(a.balance),
        money(a.available),
        money(a.held),
        money(a.buffer),
        status_text(a),
    )
}

/// The account as an aligned block of `label  value` lines.
pub fn account_text(a: &AccountView) -> String {
    let mut rows: Vec<(String, String)> = vec![
        ("account".into(), a.account_id.clone()),
        ("plan".into(), plan_text(a)),
        ("balance".into(), money(a.balance)),
        ("held".into(), money(a.held)),
        ("available".into(), money(a.available)),
        ("buffer".into(), money(a.buffer)),
        ("credited".into(), money(a.total_credited)),
        ("spent".into(), money(a.total_spent)),
        ("status".into(), status_text(a)),
        (
            "jobs".into(),
            format!("{} open, limit {}", a.open_jobs, a.max_concurrent_jobs),
        ),
        ("created".into(), fmt::time(a.created_at)),
        (
            "active".into(),
            a.last_active_at.map_or_else(|| "never".into(), fmt::time),
        ),
    ];
    if let Some(r) = a.recharge {
        let text = format!("{} below {}", money(r.amount.0), money(r.below.0));
        rows.push(("recharge".into(), text));
    }
    if let Some(s) = &a.spend {
        rows.push(("spending".into(), spend_text(s)));
    }
    for b in &a.blocks {
        rows.push((format!("block {}", b.block_id), block_text(b)));
    }
    for (name, p) in &a.allowances {
        let refills = p.refills_at.map_or_else(|| "-".into(), fmt::time);
        rows.push((
            name.clone(),
            format!(
                "{} of {} left, {} held, refills {refills}",
                p.remaining, p.quota, p.held
            ),
        ));
    }
    labelled(&rows)
}

/// A credit block in a line: `0.70 of 1.00 left, 0.50 held; promotional, priority 10,
/// expires 2026-12-31T00:00:00Z`.
fn block_text(b: &holdfast::BlockView) -> String {
    let expiry = match (b.expires_at, b.expired) {
        (None, _) => "no expiry".to_owned(),
        (Some(at), false) => format!("expires {}", fmt::time(at)),
        (Some(at), true) => format!("expired {}", fmt::time(at)),
    };
    format!(
        "{} of {} left, {} held; {}, priority {}, {expiry}",
        money(b.remaining),
        money(b.granted),
        money(b.held),
        b.category.as_str(),
        b.priority
    )
}

/// A period's spending in a line: `2.50 this month of limit 10.00 (7.50 left); alerts
/// 80%, 100%; plan's`.
fn spend_text(s: &SpendView) -> String {
    let period = s.policy.period_words();
    let mut text = format!("{} this {period}", money(s.spent));
    if let (Some(limit), Some(left)) = (s.policy.limit, s.left) {
        text += &format!(" of limit {} ({} left)", money(limit.0), money(left));
    }
    if !s.policy.alerts.is_empty() {
        let alerts: Vec<String> = s.policy.alerts.iter().map(|t| t.format()).collect();
        text += &format!("; alerts {}", alerts.join(", "));
    }
    text + if s.own { "; its own" } else { "; its plan's" }
}

/// `account show ID --at TIME`: the account's pockets as they were at a time.
async fn show_at(id: &str, at: &str, opts: &Opts) -> anyhow::Result<ExitCode> {
    let id = parse::account(id)?;
    let at = parse::time("--at", at)?;
    let engine = opts.db.engine().await?;
    let balance = engine.balance_at(&id, at).await.coded()?;
    let body = BalanceAtBody::new(balance, &engine.card().currency);
    emit(opts, serde_json::to_value(&body)?, || {
        balance_at_text(&body)
    })
}

/// An account's pockets at a time, as `account show --at` prints them.
fn balance_at_text(b: &BalanceAtBody) -> String {
    let unknown = || "unknown (before the jobs' retention)".to_owned();
    let mut rows: Vec<(String, String)> = vec![
        ("account".into(), b.account_id.clone()),
        ("at".into(), b.at.clone()),
        ("balance".into(), b.balance.clone()),
        ("held".into(), b.held.clone().unwrap_or_else(unknown)),
        (
            "available".into(),
            b.available.clone().unwrap_or_else(unknown),
        ),
        (
            "last entry".into(),
            b.last_entry_id
                .map_or_else(|| "none".into(), |e| e.to_string()),
        ),
    ];
    for (name, p) in &b.allowances {
        let held = p.held.map_or_else(unknown, |h| h.to_string());
        rows.push((name.clone(), format!("{} left, {held} held", p.remaining)));
    }
    for block in &b.blocks {
        let held = block.held.clone().unwrap_or_else(unknown);
        let text = format!(
            "{} of {} left, {held} held; {}, priority {}",
            block.remaining, block.granted, block.category, block.priority
        );
        rows.push((format!("block {}", block.block_id), text));
    }
    labelled(&rows)
}

/// Rows of `label  value`, the values aligned.
fn labelled(rows: &[(String, String)]) -> String {
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let lines: Vec<String> = rows
        .iter()
        .map(|(l, v)| format!("  {l:<width$}  {v}"))
        .collect();
    lines.join("\n")
}

fn plan_text(a: &AccountView) -> String {
    let mut text = a.plan.clone();
    if let Some(until) = a.plan_until {
        text.push_str(&format!(" until {}", fmt::time(until)));
    }
    if a.effective_plan != a.plan {
        text.push_str(&format!(" (now {})", a.effective_plan));
    }
    text
}

fn status_text(a: &AccountView) -> String {
    let mut parts = Vec::new();
    if let Some(t) = a.banned_at {
        parts.push(format!("banned since {}", fmt::time(t)));
    }
    if let Some(t) = a.blocked_at {
        parts.push(format!("blocked since {}", fmt::time(t)));
    }
    if let Some(t) = a.suspended_at {
        parts.push(format!("suspended since {}", fmt::time(t)));
    }
    if parts.is_empty() {
        "active".into()
    } else {
        parts.join(", ")
    }
}
