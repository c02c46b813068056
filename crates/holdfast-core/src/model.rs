//! What the engine's operations answer: accounts, ledger entries, jobs, events, pages —
//! plain data, serialized as the API shows it. The store builds them; every crate above
//! it names them from here.

use std::collections::BTreeMap;

use crate::decide::{
    AccountSnapshot, AccountStatus, BlockAmount, CreditCategory, JobStatus, PocketAmount,
    StatusMarks, Timestamp,
};
use serde::Serialize;

/// One ledger entry: one change of one pocket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerEntry {
    pub entry_id: i64,
    pub account_id: String,
    pub pocket: String,
    pub delta: i64,
    pub kind: String,
    pub amount_after: i64,
    pub available_after: Option<i64>,
    pub reference: Option<String>,
    pub created_at: Timestamp,
    /// Who caused it (`None` for entries written before actors were recorded).
    pub actor: Option<String>,
    /// What a metered debit used: its meter and seconds (`None` for every other entry,
    /// and for metered debits written before migration 0013 recorded them).
    pub meter: Option<String>,
    pub seconds: Option<i64>,
    /// The credit blocks it moved (block 0: general money); empty on an account
    /// without blocks.
    pub blocks: Vec<BlockAmount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowanceView {
    pub remaining: i64,
    pub held: i64,
    pub quota: i64,
    pub cycle_started_at: Timestamp,
    pub refills_at: Option<Timestamp>,
}

/// An account with every pocket as it is effective now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountView {
    pub account_id: String,
    pub plan: String,
    pub plan_until: Option<Timestamp>,
    pub effective_plan: String,
    pub balance: i64,
    pub held: i64,
    pub available: i64,
    pub buffer: i64,
    pub total_credited: i64,
    pub total_spent: i64,
    pub suspended_at: Option<Timestamp>,
    pub blocked_at: Option<Timestamp>,
    pub banned_at: Option<Timestamp>,
    pub max_concurrent_jobs: i64,
    pub max_concurrent_jobs_override: Option<i64>,
    pub open_jobs: i64,
    /// The deployment's currency (ISO 4217), which every money amount is in.
    pub currency: String,
    pub created_at: Timestamp,
    pub last_active_at: Option<Timestamp>,
    /// The account's auto-recharge, if it has one.
    pub recharge: Option<crate::decide::Recharge>,
    /// Its spending in the current period, when a rule of spending applies to it.
    pub spend: Option<SpendView>,
    pub allowances: BTreeMap<String, AllowanceView>,
    /// Its credit blocks that hold money, in the order they are drawn.
    pub blocks: Vec<BlockView>,
}

/// A credit block as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockView {
    pub block_id: i64,
    pub category: CreditCategory,
    pub priority: i64,
    pub expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub granted: i64,
    pub remaining: i64,
    pub held: i64,
    /// Past its expiry, not yet written off: what is free of it is not available.
    pub expired: bool,
}

impl BlockView {
    /// The blocks of `snap`, in the order a draw takes them (expired ones last).
    pub fn of(snap: &AccountSnapshot) -> Vec<BlockView> {
        let order = snap.spending_order();
        let place = |id: i64| {
            order
                .iter()
                .position(|(b, _)| *b == id)
                .unwrap_or(usize::MAX)
        };
        let mut blocks: Vec<BlockView> = (snap.blocks.iter())
            .map(|b| BlockView {
                block_id: b.id,
                category: b.terms.category,
                priority: b.terms.priority,
                expires_at: b.terms.expires_at,
                created_at: b.created_at,
                granted: b.granted,
                remaining: b.remaining,
                held: b.held,
                expired: b.expired(snap.now),
            })
            .collect();
        blocks.sort_by_key(|b| (place(b.block_id), b.block_id));
        blocks
    }
}

/// An account's spending in the current period of the rule in force: the rule (its own,
/// or its plan's), the period's bounds, what it spent, and what is left under the limit
/// (spent and held count against it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpendView {
    pub policy: crate::decide::SpendPolicy,
    /// Whether the rule is the account's own (else its plan's).
    pub own: bool,
    pub period_start: Timestamp,
    pub period_end: Timestamp,
    pub spent: i64,
    /// `limit − spent − held`, when there is a limit (negative past it: a capture is
    /// never refused).
    pub left: Option<i64>,
}

impl SpendView {
    /// The spending of `snap` as its rule in force sees it (`None`: no rule).
    pub fn of(snap: &crate::decide::AccountSnapshot, card: &crate::RateCard) -> Option<SpendView> {
        let standing = snap.spend_standing(card)?;
        let left = (standing.policy.limit).map(|l| l.0 - standing.spent - snap.held);
        Some(SpendView {
            own: snap.spend.policy.is_some(),
            period_start: standing.period_start,
            period_end: standing.period_end,
            spent: standing.spent,
            left,
            policy: standing.policy,
        })
    }
}

impl AccountView {
    /// The marks its status is read from.
    pub fn status_marks(&self) -> StatusMarks {
        StatusMarks {
            suspended_at: self.suspended_at,
            blocked_at: self.blocked_at,
            banned_at: self.banned_at,
        }
    }

    /// Its status in one word ([`AccountStatus::of`]).
    pub fn status(&self) -> AccountStatus {
        AccountStatus::of(self.status_marks())
    }
}

/// The result of a top-up, bonus, debit or refund.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MoneyResult {
    pub entry: LedgerEntry,
    pub account: AccountView,
    /// True when this answered a repeat of an idempotency key.
    pub replay: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    pub job_id: String,
    pub account_id: String,
    pub kind: String,
    pub lane: String,
    pub status: JobStatus,
    pub payload: Option<serde_json::Value>,
    pub hold: Vec<PocketAmount>,
    pub charged: Vec<PocketAmount>,
    /// What has been refunded of the charge, per pocket (empty when nothing).
    pub refunded: Vec<PocketAmount>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub notice_at: Timestamp,
    pub cancel_requested: bool,
    pub failure_reason: Option<String>,
    pub lease_expires_at: Option<Timestamp>,
    pub worker_id: Option<String>,
    /// The currency its hold was priced in (the card's at submit; `None` for jobs
    /// submitted before it was recorded).
    pub currency: Option<String>,
    /// Who submitted, last leased and ended the job.
    pub actors: JobActors,
}

/// Who caused each transition of a job (`None`: not yet, or before actors were recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobActors {
    pub submitted: Option<String>,
    pub leased: Option<String>,
    pub finished: Option<String>,
}

/// A submit's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Submitted {
    pub job: Job,
    pub replay: bool,
}

/// A lease handed to a worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lease {
    pub job: Job,
    pub lease_token: String,
    pub lease_expires_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heartbeat {
    pub lease_expires_at: Timestamp,
    pub cancel_requested: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    pub event_id: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub account_id: String,
    pub job_id: Option<String>,
    pub data: serde_json::Value,
    pub created_at: Timestamp,
    /// The deployment's currency (ISO 4217), which every money amount is in.
    pub currency: String,
    /// Who caused it (`None` for events written before actors were recorded).
    pub actor: Option<String>,
}

/// A page of rows and the cursor to pass next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<i64>,
}

/// One broken invariant found by the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The DESIGN.md invariant number.
    pub invariant: u8,
    pub account_id: Option<String>,
    pub job_id: Option<String>,
    pub message: String,
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PassReport {
    pub processed: u64,
    /// Reconciliation: adjustment entries written.
    pub adjusted: u64,
    /// Reconciliation: differences in `held`, the counters or a credit block's remaining
    /// or held, reported, not adjusted.
    pub drifted: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    pub key_id: String,
    pub role: String,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

/// An account's money over `[from, to)`, read from its ledger: the balance before the
/// period, each kind of change in it, the balance after. `opening` plus every change's
/// `amount` is `closing`, entry for entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    pub account_id: String,
    pub from: Timestamp,
    pub to: Timestamp,
    /// The money balance before `from` (micros).
    pub opening: i64,
    /// The money balance before `to` (micros).
    pub closing: i64,
    /// The money entries of the period by ledger kind, signed (a debit negative).
    pub changes: Vec<StatementLine>,
    /// Debits and captures of the period by the kind of the job they bill (`None`: no job
    /// of this engine, or one pruned), as positive amounts.
    pub spending_by_job_kind: Vec<JobKindSpend>,
    /// Debits of the period by the meter they used (`None`: spending not metered — debits
    /// of an amount, captures), with the meter's seconds.
    pub spending_by_meter: Vec<MeterSpend>,
    /// Money held by the jobs open at `to` (micros), while those jobs are retained.
    pub held_at_end: i64,
}

/// An account's money and allowance pockets as they were at a time, read from its ledger
/// (every change of a pocket is an entry): exact to the entry, for any time, since the
/// ledger is never pruned. What its jobs held then comes from the jobs open at that time,
/// and is known only while those jobs are kept (`None` before the jobs' retention mark).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BalanceAt {
    pub account_id: String,
    /// The time asked: every entry written at or before it counts.
    pub at: Timestamp,
    /// The last entry of the account written at or before `at` (`None`: none yet): the
    /// point of its ledger the figures stand at.
    pub last_entry_id: Option<i64>,
    /// The money balance (micros).
    pub balance: i64,
    /// Money held by the jobs open at `at` (micros), if known.
    pub held: Option<i64>,
    /// Each allowance pocket that existed at `at` (had an entry by then).
    pub allowances: BTreeMap<String, PocketAt>,
    /// The credit blocks made by then that held money then, by id.
    pub blocks: Vec<BlockAt>,
}

/// A credit block as it was at a time: its terms, what remained of it, what the jobs open
/// then held of it (`None`: not known, as the account's `held`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockAt {
    pub block_id: i64,
    pub category: CreditCategory,
    pub priority: i64,
    pub expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub granted: i64,
    pub remaining: i64,
    pub held: Option<i64>,
}

impl BalanceAt {
    /// The money available at `at` (balance less held), if the holds are known.
    pub fn available(&self) -> Option<i64> {
        self.held.map(|held| self.balance - held)
    }
}

/// An allowance pocket at a time: what remained in it, and what open jobs held of it (if
/// known, as [`BalanceAt::held`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PocketAt {
    pub remaining: i64,
    pub held: Option<i64>,
}

/// One kind of ledger entry in a statement: how many, and their sum (micros).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementLine {
    pub kind: String,
    pub entries: i64,
    pub amount: i64,
}

/// What the jobs of one kind cost in a statement's period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobKindSpend {
    pub job_kind: Option<String>,
    pub entries: i64,
    pub amount: i64,
}

/// What a statement's period spent on one meter: its debits, their seconds and amount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeterSpend {
    pub meter: Option<String>,
    pub entries: i64,
    pub seconds: i64,
    pub amount: i64,
}

/// What one group (an account, a job kind or a meter) spent in a usage report's period
/// (micros): the debits and captures of money (`entries` of them), and what job refunds
/// gave back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UsageGroup {
    /// The account id, the job kind (`None`: no job of this engine, or one pruned) or the
    /// meter (`None`: not metered — debits of an amount, captures, job refunds).
    pub key: Option<String>,
    pub entries: i64,
    pub spent: i64,
    pub refunded: i64,
    /// The seconds of the group's metered debits.
    pub seconds: i64,
}

/// A usage report: its groups, and for account groups the cursor of the next page (the
/// last account id listed, when the page was full).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageReport {
    pub groups: Vec<UsageGroup>,
    pub next: Option<String>,
}
