//! What goes over the wire: response shapes built from the engine's results. Money leaves
//! as a decimal string with an integer `<field>_micros` beside it; allowance amounts as
//! integers; times as RFC 3339 UTC; row ids as opaque strings.

use std::collections::BTreeMap;

use holdfast::decide::{BlockAmount, GENERAL};
use holdfast::{
    AccountView, AllowanceView, BlockView, Event, Heartbeat, Job, Lease, LedgerEntry, MONEY,
    Micros, MoneyResult, PassReport, PocketAmount, Violation,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use utoipa::ToSchema;

use super::error::ApiError;

/// Microseconds since the epoch as RFC 3339 UTC (`2025-01-31T12:00:00.123456Z`).
pub fn rfc3339(micros: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| micros.to_string())
}

fn opt_time(micros: Option<i64>) -> Option<String> {
    micros.map(rfc3339)
}

/// Parses an RFC 3339 time from a request into microseconds since the epoch.
pub fn parse_time(field: &str, text: &str) -> Result<i64, ApiError> {
    let t = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| {
        ApiError::invalid(format!(
            "{field}: must be an RFC 3339 time such as 2030-01-31T00:00:00Z"
        ))
    })?;
    i64::try_from(t.unix_timestamp_nanos() / 1000)
        .map_err(|_| ApiError::invalid(format!("{field}: out of range")))
}

/// A report's period as a request asks for it: `from` and `to`, RFC 3339, each optional.
pub struct AskedPeriod {
    from: Option<i64>,
    to: Option<i64>,
}

impl AskedPeriod {
    pub fn parse(from: Option<&str>, to: Option<&str>) -> Result<AskedPeriod, ApiError> {
        Ok(AskedPeriod {
            from: from.map(|t| parse_time("from", t)).transpose()?,
            to: to.map(|t| parse_time("to", t)).transpose()?,
        })
    }

    /// `[from, to)` with the defaults: the beginning, and now by the database's clock
    /// (every entry written before the request: [`holdfast::Engine::period_end_now`]).
    pub async fn resolve(self, engine: &holdfast::Engine) -> Result<(i64, i64), ApiError> {
        let to = match self.to {
            Some(to) => to,
            None => engine.period_end_now().await?,
        };
        Ok((self.from.unwrap_or(0), to))
    }
}

/// An amount: a decimal string for money, an integer count for an allowance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Amount {
    /// Money, e.g. `"0.04"`.
    Money(String),
    /// Allowance items.
    Count(i64),
}

impl Amount {
    fn of(pocket: &str, value: i64) -> (Amount, Option<i64>) {
        if pocket == MONEY {
            (Amount::Money(Micros(value).format()), Some(value))
        } else {
            (Amount::Count(value), None)
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AllowanceBody {
    pub remaining: i64,
    pub held: i64,
    pub quota: i64,
    pub cycle_started_at: String,
    pub refills_at: Option<String>,
}

/// An account with every pocket as it is effective now.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountBody {
    pub account_id: String,
    pub plan: String,
    pub plan_until: Option<String>,
    pub effective_plan: String,
    pub balance: String,
    pub balance_micros: i64,
    pub held: String,
    pub held_micros: i64,
    pub available: String,
    pub available_micros: i64,
    pub buffer: String,
    pub buffer_micros: i64,
    pub total_credited: String,
    pub total_credited_micros: i64,
    pub total_spent: String,
    pub total_spent_micros: i64,
    pub suspended_at: Option<String>,
    pub blocked_at: Option<String>,
    /// When an operator banned it (no new jobs, no debits), or null.
    pub banned_at: Option<String>,
    /// The limit in force (the override, or the plan's).
    pub max_concurrent_jobs: i64,
    /// The account's own limit, null when the plan's applies.
    pub max_concurrent_jobs_override: Option<i64>,
    pub open_jobs: i64,
    /// The currency (ISO 4217) of every money amount: the rate card's.
    pub currency: String,
    pub created_at: String,
    pub last_active_at: Option<String>,
    /// The auto-recharge (`null`: none): when available money falls below `below`, event
    /// `account.recharge_requested` asks for a top-up of `amount`.
    pub recharge: Option<RechargeBody>,
    /// Its spending in the current period of the rule of spending in force (`null`: no
    /// rule applies, neither its own nor its plan's).
    pub spend: Option<SpendBody>,
    pub allowances: BTreeMap<String, AllowanceBody>,
    /// Its credit blocks that hold money, in the order they are drawn (those past their
    /// expiry last). Empty for an account whose money is all general.
    pub blocks: Vec<BlockBody>,
}

/// A credit block: money credited with terms of its own, part of the balance.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockBody {
    /// The id of the credit's ledger entry that made it.
    pub block_id: String,
    #[schema(value_type = super::money::CreditCategoryName)]
    pub category: String,
    /// 0 to 100: lower is drawn first.
    pub priority: i64,
    pub expires_at: Option<String>,
    pub created_at: String,
    /// What the credit put in it (after paying the account's debt).
    pub granted: String,
    pub granted_micros: i64,
    pub remaining: String,
    pub remaining_micros: i64,
    /// What open jobs' holds reserved of `remaining`.
    pub held: String,
    pub held_micros: i64,
    /// Past its expiry and not yet written off: what is free of it is not available.
    pub expired: bool,
}

impl From<BlockView> for BlockBody {
    fn from(b: BlockView) -> BlockBody {
        BlockBody {
            block_id: b.block_id.to_string(),
            category: b.category.as_str().to_owned(),
            priority: b.priority,
            expires_at: opt_time(b.expires_at),
            created_at: rfc3339(b.created_at),
            granted: money(b.granted),
            granted_micros: b.granted,
            remaining: money(b.remaining),
            remaining_micros: b.remaining,
            held: money(b.held),
            held_micros: b.held,
            expired: b.expired,
        }
    }
}

/// What a ledger entry moved of one credit block.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockLineBody {
    /// The block (`null`: general money, outside blocks).
    pub block_id: Option<String>,
    pub amount: String,
    pub amount_micros: i64,
}

impl From<BlockAmount> for BlockLineBody {
    fn from(l: BlockAmount) -> BlockLineBody {
        BlockLineBody {
            block_id: (l.block != GENERAL).then(|| l.block.to_string()),
            amount: money(l.amount),
            amount_micros: l.amount,
        }
    }
}

/// An account's spending in the current day or month of its rule's time zone, under the
/// rule in force.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpendBody {
    /// The hard limit of the period's spending (`null`: none, thresholds only).
    pub limit: Option<String>,
    pub limit_micros: Option<i64>,
    #[schema(value_type = SpendPeriodName)]
    pub period: String,
    /// The thresholds whose first crossing in a period is told as
    /// `account.spend_threshold`: amounts or percentages of the limit, as set.
    pub alerts: Vec<String>,
    /// The IANA time zone whose days and months the rule counts (`UTC` by default).
    #[schema(example = "UTC")]
    pub timezone: String,
    /// Whether the rule is the account's own (else its plan's).
    pub own: bool,
    pub period_start: String,
    pub period_end: String,
    /// Money debits and captures less money job refunds in the period.
    pub spent: String,
    pub spent_micros: i64,
    /// `limit − spent − held` (`null` without a limit); what a debit or a submit's money
    /// hold may still take. Below zero when captures went past it.
    pub left: Option<String>,
    pub left_micros: Option<i64>,
}

impl From<holdfast::SpendView> for SpendBody {
    fn from(s: holdfast::SpendView) -> SpendBody {
        let limit = s.policy.limit;
        SpendBody {
            limit: limit.map(Micros::format),
            limit_micros: limit.map(|l| l.0),
            period: s.policy.period.as_str().to_owned(),
            alerts: s.policy.alerts.iter().map(|t| t.format()).collect(),
            timezone: s.policy.timezone.name().to_owned(),
            own: s.own,
            period_start: rfc3339(s.period_start),
            period_end: rfc3339(s.period_end),
            spent: money(s.spent),
            spent_micros: s.spent,
            left: s.left.map(money),
            left_micros: s.left,
        }
    }
}

/// The length of a spending period: a calendar day or month of the rule's time zone.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SpendPeriodName {
    Day,
    Month,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RechargeBody {
    pub below: String,
    pub below_micros: i64,
    pub amount: String,
    pub amount_micros: i64,
}

impl From<holdfast::decide::Recharge> for RechargeBody {
    fn from(r: holdfast::decide::Recharge) -> RechargeBody {
        RechargeBody {
            below: r.below.format(),
            below_micros: r.below.0,
            amount: r.amount.format(),
            amount_micros: r.amount.0,
        }
    }
}

/// Micros as a decimal amount of money (`12.50`).
pub fn money(m: i64) -> String {
    Micros(m).format()
}

impl From<AllowanceView> for AllowanceBody {
    fn from(a: AllowanceView) -> AllowanceBody {
        AllowanceBody {
            remaining: a.remaining,
            held: a.held,
            quota: a.quota,
            cycle_started_at: rfc3339(a.cycle_started_at),
            refills_at: opt_time(a.refills_at),
        }
    }
}

impl From<AccountView> for AccountBody {
    fn from(a: AccountView) -> AccountBody {
        AccountBody {
            account_id: a.account_id,
            plan: a.plan,
            plan_until: opt_time(a.plan_until),
            effective_plan: a.effective_plan,
            balance: money(a.balance),
            balance_micros: a.balance,
            held: money(a.held),
            held_micros: a.held,
            available: money(a.available),
            available_micros: a.available,
            buffer: money(a.buffer),
            buffer_micros: a.buffer,
            total_credited: money(a.total_credited),
            total_credited_micros: a.total_credited,
            total_spent: money(a.total_spent),
            total_spent_micros: a.total_spent,
            suspended_at: opt_time(a.suspended_at),
            blocked_at: opt_time(a.blocked_at),
            banned_at: opt_time(a.banned_at),
            max_concurrent_jobs: a.max_concurrent_jobs,
            max_concurrent_jobs_override: a.max_concurrent_jobs_override,
            open_jobs: a.open_jobs,
            currency: a.currency,
            created_at: rfc3339(a.created_at),
            last_active_at: opt_time(a.last_active_at),
            recharge: a.recharge.map(RechargeBody::from),
            spend: a.spend.map(SpendBody::from),
            allowances: a
                .allowances
                .into_iter()
                .map(|(k, v)| (k, v.into()))
                .collect(),
            blocks: a.blocks.into_iter().map(BlockBody::from).collect(),
        }
    }
}

/// One ledger entry: one change of one pocket.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerEntryBody {
    pub entry_id: String,
    pub account_id: String,
    pub pocket: String,
    /// Signed change: a money string, or an allowance count.
    pub delta: Amount,
    /// Money only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_micros: Option<i64>,
    /// `top_up`, `bonus`, `debit`, `capture`, `refund`, `job_refund`, `grant`, `refill`,
    /// `adjustment` or `expiry` (what was left of a credit block past its expiry).
    pub kind: String,
    pub amount_after: Amount,
    /// Money only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_after_micros: Option<i64>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub created_at: String,
    /// Who caused it: `key:<key id>`, `cli:<user>`, `system:<pass>`, `serve:first-admin-key`
    /// or `library` (null
    /// for entries written before actors were recorded).
    pub actor: Option<String>,
    /// A metered debit's meter (absent on every other entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter: Option<String>,
    /// A metered debit's seconds (absent on every other entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<i64>,
    /// What it moved of each credit block, in the order drawn (absent on an account
    /// without blocks that hold money).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockLineBody>,
}

impl From<LedgerEntry> for LedgerEntryBody {
    fn from(e: LedgerEntry) -> LedgerEntryBody {
        let (delta, delta_micros) = Amount::of(&e.pocket, e.delta);
        let (amount_after, amount_after_micros) = Amount::of(&e.pocket, e.amount_after);
        LedgerEntryBody {
            entry_id: e.entry_id.to_string(),
            account_id: e.account_id,
            pocket: e.pocket,
            delta,
            delta_micros,
            kind: e.kind,
            amount_after,
            amount_after_micros,
            reference: e.reference,
            created_at: rfc3339(e.created_at),
            actor: e.actor,
            meter: e.meter,
            seconds: e.seconds,
            blocks: e.blocks.into_iter().map(BlockLineBody::from).collect(),
        }
    }
}

/// The answer to a top-up, bonus, debit or refund.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoneyResultBody {
    pub entry: LedgerEntryBody,
    pub account: AccountBody,
}

impl From<MoneyResult> for MoneyResultBody {
    fn from(r: MoneyResult) -> MoneyResultBody {
        MoneyResultBody {
            entry: r.entry.into(),
            account: r.account.into(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerPage {
    pub entries: Vec<LedgerEntryBody>,
    /// The currency (ISO 4217) of the money entries.
    pub currency: String,
    /// The last id returned, or the given `after` when the page is empty.
    pub next: Option<String>,
}

/// One line of a hold or a charge.
#[derive(Debug, Serialize, ToSchema)]
pub struct PocketLine {
    pub pocket: String,
    pub amount: Amount,
    /// Money only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_micros: Option<i64>,
    /// A money line on an account with credit blocks: what it reserved (a hold) or took
    /// (a charge) of each block, in the order drawn (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockLineBody>,
}

fn lines(lines: Vec<PocketAmount>) -> Vec<PocketLine> {
    lines
        .into_iter()
        .map(|l| {
            let (amount, amount_micros) = Amount::of(&l.pocket, l.amount);
            PocketLine {
                pocket: l.pocket,
                amount,
                amount_micros,
                blocks: l.blocks.into_iter().map(BlockLineBody::from).collect(),
            }
        })
        .collect()
}

#[derive(Debug, Serialize, ToSchema)]
pub struct JobBody {
    pub job_id: String,
    pub account_id: String,
    pub kind: String,
    pub lane: String,
    /// `queued`, `in_progress`, `succeeded`, `failed`, `canceled` or `expired`.
    pub status: String,
    #[schema(value_type = Option<Value>)]
    pub payload: Option<serde_json::Value>,
    pub hold: Vec<PocketLine>,
    pub charged: Vec<PocketLine>,
    /// What has been refunded of the charge, per pocket (empty when nothing).
    pub refunded: Vec<PocketLine>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub cancel_requested: bool,
    pub failure_reason: Option<String>,
    pub lease_expires_at: Option<String>,
    pub worker_id: Option<String>,
    /// The currency (ISO 4217) `hold` and `charged` are in: the card's at submit.
    pub currency: Option<String>,
    /// Who submitted it, last leased it and ended it (as a ledger entry's `actor`).
    pub actors: JobActorsBody,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct JobActorsBody {
    pub submitted: Option<String>,
    pub leased: Option<String>,
    pub finished: Option<String>,
}

impl From<Job> for JobBody {
    fn from(j: Job) -> JobBody {
        JobBody {
            job_id: j.job_id,
            account_id: j.account_id,
            kind: j.kind,
            lane: j.lane,
            status: j.status.as_str().to_owned(),
            payload: j.payload,
            hold: lines(j.hold),
            charged: lines(j.charged),
            refunded: lines(j.refunded),
            created_at: rfc3339(j.created_at),
            started_at: opt_time(j.started_at),
            finished_at: opt_time(j.finished_at),
            cancel_requested: j.cancel_requested,
            failure_reason: j.failure_reason,
            lease_expires_at: opt_time(j.lease_expires_at),
            worker_id: j.worker_id,
            currency: j.currency,
            actors: JobActorsBody {
                submitted: j.actors.submitted,
                leased: j.actors.leased,
                finished: j.actors.finished,
            },
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaseBody {
    pub job: JobBody,
    pub lease_token: String,
    pub lease_expires_at: String,
}

impl From<Lease> for LeaseBody {
    fn from(l: Lease) -> LeaseBody {
        LeaseBody {
            job: l.job.into(),
            lease_token: l.lease_token,
            lease_expires_at: rfc3339(l.lease_expires_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeartbeatBody {
    pub lease_expires_at: String,
    pub cancel_requested: bool,
}

impl From<Heartbeat> for HeartbeatBody {
    fn from(h: Heartbeat) -> HeartbeatBody {
        HeartbeatBody {
            lease_expires_at: rfc3339(h.lease_expires_at),
            cancel_requested: h.cancel_requested,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventBody {
    pub event_id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub account_id: String,
    pub job_id: Option<String>,
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    pub created_at: String,
    /// The currency (ISO 4217) of every money amount in `data`.
    pub currency: String,
    /// Who caused it (as a ledger entry's `actor`).
    pub actor: Option<String>,
}

impl From<Event> for EventBody {
    fn from(e: Event) -> EventBody {
        EventBody {
            event_id: e.event_id.to_string(),
            event_type: e.event_type,
            account_id: e.account_id,
            job_id: e.job_id,
            data: e.data,
            created_at: rfc3339(e.created_at),
            currency: e.currency,
            actor: e.actor,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    pub events: Vec<EventBody>,
    /// The last id returned, or the given `after` when the page is empty.
    pub next: Option<String>,
}

/// What a pass did.
#[derive(Debug, Serialize, ToSchema)]
pub struct PassBody {
    /// Jobs (sweep) or accounts (reconcile, reactivate) the run handled.
    pub processed: u64,
    /// Reconciliation: adjustment entries written.
    pub adjusted: u64,
    /// Reconciliation: differences in `held` or the counters, reported, not adjusted.
    pub drifted: u64,
}

impl From<PassReport> for PassBody {
    fn from(r: PassReport) -> PassBody {
        PassBody {
            processed: r.processed,
            adjusted: r.adjusted,
            drifted: r.drifted,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ViolationBody {
    /// The DESIGN.md invariant number.
    pub invariant: u8,
    pub account_id: Option<String>,
    pub job_id: Option<String>,
    pub message: String,
}

impl From<Violation> for ViolationBody {
    fn from(v: Violation) -> ViolationBody {
        ViolationBody {
            invariant: v.invariant,
            account_id: v.account_id,
            job_id: v.job_id,
            message: v.message,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditBody {
    pub ok: bool,
    /// When the audit that gave this answer started (RFC 3339): a call made while
    /// another ran shares that run's answer.
    pub checked_at: String,
    pub violations: Vec<ViolationBody>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthBody {
    /// `ok` or `unavailable`.
    pub status: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_in_rfc3339_utc() {
        let t = 1_735_689_600_123_456;
        let text = rfc3339(t);
        assert_eq!(text, "2025-01-01T00:00:00.123456Z");
        assert_eq!(parse_time("t", &text).unwrap(), t);
        assert_eq!(
            parse_time("t", "2025-01-01T01:00:00+01:00").unwrap(),
            1_735_689_600_000_000
        );
        assert!(parse_time("t", "tomorrow").is_err());
    }

    #[test]
    fn amounts_are_strings_for_money_and_integers_otherwise() {
        assert_eq!(
            Amount::of(MONEY, -40_000),
            (Amount::Money("-0.04".into()), Some(-40_000))
        );
        assert_eq!(Amount::of("daily_images", 1), (Amount::Count(1), None));
    }
}

/// An account's pockets as they were at a time (API.md "Balance at a time"): money as a
/// decimal string beside its micros, what was held `null` where the jobs of that time
/// may have been pruned.
#[derive(Debug, Serialize, ToSchema)]
pub struct BalanceAtBody {
    pub account_id: String,
    pub currency: String,
    /// The time asked: every ledger entry written at or before it counts.
    pub at: String,
    /// The account's last ledger entry written at or before `at` (`null`: none yet).
    pub last_entry_id: Option<i64>,
    pub balance: String,
    pub balance_micros: i64,
    /// Money held by the jobs open at `at` (`null`: not known, `at` is before the jobs'
    /// retention).
    pub held: Option<String>,
    pub held_micros: Option<i64>,
    /// `balance` less `held` (`null` where `held` is).
    pub available: Option<String>,
    pub available_micros: Option<i64>,
    /// Each allowance pocket that existed at `at`.
    pub allowances: BTreeMap<String, PocketAtBody>,
    /// The credit blocks made by `at` that held money then, by id.
    pub blocks: Vec<BlockAtBody>,
}

/// A credit block at a time: its terms, what remained of it, what the jobs open then held
/// of it (`null`: not known, as the account's `held`).
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockAtBody {
    pub block_id: String,
    #[schema(value_type = super::money::CreditCategoryName)]
    pub category: String,
    pub priority: i64,
    pub expires_at: Option<String>,
    pub created_at: String,
    pub granted: String,
    pub granted_micros: i64,
    pub remaining: String,
    pub remaining_micros: i64,
    pub held: Option<String>,
    pub held_micros: Option<i64>,
}

impl From<holdfast::BlockAt> for BlockAtBody {
    fn from(b: holdfast::BlockAt) -> BlockAtBody {
        BlockAtBody {
            block_id: b.block_id.to_string(),
            category: b.category.as_str().to_owned(),
            priority: b.priority,
            expires_at: opt_time(b.expires_at),
            created_at: rfc3339(b.created_at),
            granted: money(b.granted),
            granted_micros: b.granted,
            remaining: money(b.remaining),
            remaining_micros: b.remaining,
            held: b.held.map(money),
            held_micros: b.held,
        }
    }
}

/// An allowance pocket at a time: what remained, what open jobs held of it (`null`: not
/// known, as the account's `held`).
#[derive(Debug, Serialize, ToSchema)]
pub struct PocketAtBody {
    pub remaining: i64,
    pub held: Option<i64>,
}

impl BalanceAtBody {
    pub fn new(b: holdfast::BalanceAt, currency: &str) -> BalanceAtBody {
        let available = b.available();
        BalanceAtBody {
            currency: currency.to_owned(),
            at: rfc3339(b.at),
            last_entry_id: b.last_entry_id,
            balance: money(b.balance),
            balance_micros: b.balance,
            held: b.held.map(money),
            held_micros: b.held,
            available: available.map(money),
            available_micros: available,
            allowances: (b.allowances.into_iter())
                .map(|(pocket, p)| {
                    let body = PocketAtBody {
                        remaining: p.remaining,
                        held: p.held,
                    };
                    (pocket, body)
                })
                .collect(),
            blocks: b.blocks.into_iter().map(BlockAtBody::from).collect(),
            account_id: b.account_id,
        }
    }
}

/// An account's statement (API.md "Statements"): money as a decimal string beside its
/// micros, times RFC 3339 UTC.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatementBody {
    pub account_id: String,
    pub currency: String,
    /// The period's start (inclusive).
    pub from: String,
    /// The period's end (exclusive).
    pub to: String,
    /// The money balance before `from`.
    pub opening_balance: String,
    pub opening_balance_micros: i64,
    /// The money balance before `to`: `opening_balance` plus every change.
    pub closing_balance: String,
    pub closing_balance_micros: i64,
    /// The period's money entries by ledger kind (`top_up`, `bonus`, `debit`, `capture`,
    /// `refund`, `job_refund`, `adjustment`), signed.
    pub changes: Vec<StatementLineBody>,
    /// Debits and captures by the kind of the job they bill (`null`: no job of this
    /// engine), as positive amounts.
    pub spending_by_job_kind: Vec<JobKindSpendBody>,
    /// Debits by the meter they used, with its seconds (`null`: spending not metered —
    /// debits of an amount, captures).
    pub spending_by_meter: Vec<MeterSpendBody>,
    /// Money held by the jobs open at `to`.
    pub held_at_end: String,
    pub held_at_end_micros: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatementLineBody {
    pub kind: String,
    pub entries: i64,
    pub amount: String,
    pub amount_micros: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct JobKindSpendBody {
    pub job_kind: Option<String>,
    pub entries: i64,
    pub amount: String,
    pub amount_micros: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MeterSpendBody {
    pub meter: Option<String>,
    pub entries: i64,
    pub seconds: i64,
    pub amount: String,
    pub amount_micros: i64,
}

impl StatementBody {
    pub fn new(s: holdfast::Statement, currency: &str) -> StatementBody {
        StatementBody {
            currency: currency.to_owned(),
            from: rfc3339(s.from),
            to: rfc3339(s.to),
            opening_balance: money(s.opening),
            opening_balance_micros: s.opening,
            closing_balance: money(s.closing),
            closing_balance_micros: s.closing,
            changes: (s.changes.into_iter())
                .map(|l| StatementLineBody {
                    amount: money(l.amount),
                    amount_micros: l.amount,
                    kind: l.kind,
                    entries: l.entries,
                })
                .collect(),
            spending_by_job_kind: (s.spending_by_job_kind.into_iter())
                .map(|l| JobKindSpendBody {
                    amount: money(l.amount),
                    amount_micros: l.amount,
                    job_kind: l.job_kind,
                    entries: l.entries,
                })
                .collect(),
            spending_by_meter: (s.spending_by_meter.into_iter())
                .map(|l| MeterSpendBody {
                    amount: money(l.amount),
                    amount_micros: l.amount,
                    meter: l.meter,
                    entries: l.entries,
                    seconds: l.seconds,
                })
                .collect(),
            held_at_end: money(s.held_at_end),
            held_at_end_micros: s.held_at_end,
            account_id: s.account_id,
        }
    }
}
