//! Every billing decision as a pure function of a locked snapshot, a request and the rate
//! card. The store takes the account lock, reads an [`AccountSnapshot`], asks these
//! functions, and applies what they return in the same transaction.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::money::Micros;
use crate::ratecard::{CancelInProgress, Kind, MONEY, Plan, RateCard};
use crate::refusal::Refusal;

pub mod account;
pub mod blocks;
pub mod jobs;
pub mod money;
pub mod reconcile;
pub mod refund;
pub mod spend;

pub use account::*;
pub use blocks::*;
pub use jobs::*;
pub use money::*;
pub use reconcile::*;
pub use refund::*;
pub use spend::*;

/// Microseconds since the Unix epoch, read from the database clock.
pub type Timestamp = i64;

pub const MICROS_PER_SECOND: i64 = 1_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowancePocket {
    pub remaining: i64,
    pub held: i64,
    pub cycle_started_at: Timestamp,
}

/// An account as read under its row lock, with the database clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountSnapshot {
    pub plan: String,
    pub plan_until: Option<Timestamp>,
    pub max_concurrent_jobs: Option<i64>,
    pub balance: i64,
    pub held: i64,
    pub total_credited: i64,
    pub total_spent: i64,
    pub suspended_at: Option<Timestamp>,
    pub blocked_at: Option<Timestamp>,
    /// An operator's ban: no new work, no debits (unlike a block, which pauses work only).
    pub banned_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub last_active_at: Option<Timestamp>,
    /// The account's auto-recharge, if it has one.
    pub recharge: Option<Recharge>,
    pub allowances: BTreeMap<String, AllowancePocket>,
    /// Its own rule of spending and its spending marks.
    pub spend: Spend,
    /// Its credit blocks that hold money (none for an account that never had one).
    pub blocks: Vec<CreditBlock>,
    pub now: Timestamp,
}

/// One line of a hold or a charge: which pocket, how much (micros for money).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PocketAmount {
    pub pocket: String,
    pub amount: i64,
    /// A money hold's sources on an account with credit blocks, in the order they are
    /// drawn (block 0: general money); a charge's, what its capture took. Empty
    /// elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockAmount>,
}

/// A due refill of one allowance pocket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refill {
    pub pocket: String,
    pub quota: i64,
    /// `quota − remaining`: the ledger delta (negative after a downgrade, may be 0).
    pub delta: i64,
}

/// What a money write does to suspension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspension {
    Unchanged,
    Suspend,
    Unsuspend,
}

impl AccountSnapshot {
    /// The plan in force now: the account's, or the card's default after `plan_until`.
    pub fn effective_plan<'c>(&self, card: &'c RateCard) -> (&'c str, &'c Plan) {
        let expired = self.plan_until.is_some_and(|until| self.now >= until);
        let name = if expired {
            &card.default_plan
        } else {
            &self.plan
        };
        match card.plans.get_key_value(name) {
            Some((n, p)) => (n.as_str(), p),
            None => {
                let (n, p) = card
                    .plans
                    .get_key_value(&card.default_plan)
                    .expect("validated: default_plan exists");
                (n.as_str(), p)
            }
        }
    }

    pub fn buffer(&self, card: &RateCard) -> Micros {
        self.effective_plan(card).1.buffer
    }

    pub fn concurrency_limit(&self, card: &RateCard) -> i64 {
        self.max_concurrent_jobs
            .unwrap_or(self.effective_plan(card).1.max_concurrent_jobs)
    }

    /// What a debit or a hold may use: the balance less what holds reserved and what
    /// blocks past their expiry keep until the expiry pass writes it off.
    pub fn available_money(&self) -> i64 {
        self.balance - self.held - self.expired_money()
    }

    /// Allowance pockets whose window has passed, refilled to the effective plan's quota.
    /// A pocket the plan no longer has keeps its remaining and is never refilled. One
    /// meaning for the cycle start: the moment the current window opened.
    pub fn due_refills(&self, card: &RateCard) -> Vec<Refill> {
        let (_, plan) = self.effective_plan(card);
        self.allowances
            .iter()
            .filter_map(|(pocket, p)| {
                let every = *card.allowances.get(pocket)?;
                let quota = *plan.allowances.get(pocket)?;
                let due = self.now - p.cycle_started_at >= every * MICROS_PER_SECOND;
                due.then(|| Refill {
                    pocket: pocket.clone(),
                    quota,
                    delta: quota - p.remaining,
                })
            })
            .collect()
    }

    /// Applies refills to this snapshot (what the account looks like after them).
    pub fn apply_refills(&mut self, refills: &[Refill]) {
        for r in refills {
            if let Some(p) = self.allowances.get_mut(&r.pocket) {
                p.remaining = r.quota;
                p.cycle_started_at = self.now;
            }
        }
    }

    /// Applies a submit's hold to this snapshot (what the account looks like with the new
    /// job queued): each line is held on its pocket, money on the account's `held` and
    /// on the credit blocks the line reserved. A line naming a block the account does
    /// not hold is refused.
    pub fn apply_hold(&mut self, hold: &[PocketAmount]) -> Result<(), String> {
        for line in hold {
            if line.pocket == MONEY {
                self.held += line.amount;
                self.apply_block_lines(&line.blocks, BlockEffect::Hold)?;
            } else if let Some(p) = self.allowances.get_mut(&line.pocket) {
                p.held += line.amount;
            }
        }
        Ok(())
    }

    /// When the pocket's window passes next.
    pub fn refills_at(&self, card: &RateCard, pocket: &str) -> Option<Timestamp> {
        let p = self.allowances.get(pocket)?;
        let every = card.allowances.get(pocket)?;
        Some(p.cycle_started_at + every * MICROS_PER_SECOND)
    }
}

/// May a metered debit of `amount` pass? Not on a banned account; else
/// `balance − held − amount ≥ −buffer`.
pub fn check_debit(snap: &AccountSnapshot, amount: Micros, buffer: Micros) -> Result<(), Refusal> {
    if snap.banned_at.is_some() {
        return Err(Refusal::AccountBanned);
    }
    let after = snap
        .available_money()
        .checked_sub(amount.0)
        .ok_or(Refusal::InsufficientFunds)?;
    if after >= -buffer.0 {
        Ok(())
    } else {
        Err(Refusal::InsufficientFunds)
    }
}

/// What a money write that leaves the balance at `balance_after` does to suspension.
/// `credit` is true for top-ups, bonuses and job refunds: only those clear a suspension.
pub fn suspension_after(
    suspended_at: Option<Timestamp>,
    balance_after: i64,
    credit: bool,
) -> Suspension {
    match (suspended_at, balance_after < 0) {
        (None, true) => Suspension::Suspend,
        (Some(_), false) if credit => Suspension::Unsuspend,
        _ => Suspension::Unchanged,
    }
}

/// A submit's decision: the lane and the hold lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitDecision {
    pub lane: String,
    pub hold: Vec<PocketAmount>,
}

/// Decides a submit under the account lock, after due refills are applied to `snap`.
/// Order of refusals follows API.md: banned, blocked, suspended, busy, then funds (a
/// money hold the spend limit refuses: `spend_limit_reached`).
pub fn decide_submit(
    snap: &AccountSnapshot,
    open_jobs: i64,
    kind: &Kind,
    card: &RateCard,
) -> Result<SubmitDecision, Refusal> {
    if snap.banned_at.is_some() {
        return Err(Refusal::AccountBanned);
    }
    if snap.blocked_at.is_some() {
        return Err(Refusal::AccountBlocked);
    }
    if snap.suspended_at.is_some() {
        return Err(Refusal::AccountSuspended);
    }
    if open_jobs >= snap.concurrency_limit(card) {
        return Err(Refusal::Busy);
    }
    let (plan_name, plan) = snap.effective_plan(card);
    let lane = card.lane_for(kind, plan);
    if kind.take.is_empty() || kind.free_for.iter().any(|p| p == plan_name) {
        return Ok(SubmitDecision { lane, hold: vec![] });
    }
    // A money line the period's spend limit refuses is passed over as one without the
    // money; if no line can hold, that is the refusal.
    let mut limited = false;
    for line in &kind.take {
        let available = if line.pocket == MONEY {
            snap.available_money()
        } else {
            snap.allowances
                .get(&line.pocket)
                .map_or(0, |p| p.remaining - p.held)
        };
        if available < line.amount {
            continue;
        }
        if line.pocket == MONEY && snap.check_spend(card, line.amount).is_err() {
            limited = true;
            continue;
        }
        let blocks = if line.pocket == MONEY {
            snap.draw(line.amount)
        } else {
            Vec::new()
        };
        return Ok(SubmitDecision {
            lane,
            hold: vec![PocketAmount {
                pocket: line.pocket.clone(),
                amount: line.amount,
                blocks,
            }],
        });
    }
    if limited {
        return Err(Refusal::SpendLimitReached);
    }
    let last_is_money = kind.take.last().is_some_and(|l| l.pocket == MONEY);
    Err(if last_is_money {
        Refusal::InsufficientFunds
    } else {
        Refusal::InsufficientAllowance
    })
}

/// A capture line resolved against the hold: what to take from the pocket and what
/// to release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureLine {
    pub pocket: String,
    pub held: i64,
    pub capture: i64,
}

/// Resolves a worker's requested capture against the hold. `None` captures the whole
/// hold; otherwise each listed pocket is captured up to its hold and the others released.
pub fn resolve_capture(
    hold: &[PocketAmount],
    requested: Option<&[PocketAmount]>,
) -> Result<Vec<CaptureLine>, Refusal> {
    let Some(requested) = requested else {
        return Ok(hold
            .iter()
            .map(|h| CaptureLine {
                pocket: h.pocket.clone(),
                held: h.amount,
                capture: h.amount,
            })
            .collect());
    };
    for (i, r) in requested.iter().enumerate() {
        if requested[..i].iter().any(|o| o.pocket == r.pocket) {
            return Err(Refusal::InvalidCapture(format!(
                "capture: pocket {:?} listed twice",
                r.pocket
            )));
        }
        match hold.iter().find(|h| h.pocket == r.pocket) {
            None => {
                return Err(Refusal::InvalidCapture(format!(
                    "capture: pocket {:?} is not held by this job",
                    r.pocket
                )));
            }
            Some(h) if r.amount > h.amount || r.amount < 0 => {
                return Err(Refusal::InvalidCapture(format!(
                    "capture: {:?} amount is above the hold",
                    r.pocket
                )));
            }
            Some(_) => {}
        }
    }
    Ok(hold
        .iter()
        .map(|h| CaptureLine {
            pocket: h.pocket.clone(),
            held: h.amount,
            capture: requested
                .iter()
                .find(|r| r.pocket == h.pocket)
                .map_or(0, |r| r.amount),
        })
        .collect())
}

/// The actual decrease of a pocket holding `amount` when `capture` is taken from it:
/// money goes down by the capture; an allowance floors at 0.
pub fn actual_decrease(pocket: &str, amount: i64, capture: i64) -> i64 {
    if pocket == MONEY {
        capture
    } else {
        amount - (amount - capture).max(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    InProgress,
    Succeeded,
    Failed,
    Canceled,
    Expired,
}

impl JobStatus {
    /// Every status, in the order a job may pass through them.
    pub const ALL: [JobStatus; 6] = [
        JobStatus::Queued,
        JobStatus::InProgress,
        JobStatus::Succeeded,
        JobStatus::Failed,
        JobStatus::Canceled,
        JobStatus::Expired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::InProgress => "in_progress",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Failed => "failed",
            JobStatus::Canceled => "canceled",
            JobStatus::Expired => "expired",
        }
    }

    pub fn parse(text: &str) -> Option<JobStatus> {
        Some(match text {
            "queued" => JobStatus::Queued,
            "in_progress" => JobStatus::InProgress,
            "succeeded" => JobStatus::Succeeded,
            "failed" => JobStatus::Failed,
            "canceled" => JobStatus::Canceled,
            "expired" => JobStatus::Expired,
            _ => return None,
        })
    }

    pub fn is_open(self) -> bool {
        matches!(self, JobStatus::Queued | JobStatus::InProgress)
    }
}

/// What a cancel request does to a job in `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelDecision {
    /// Queued: cancel now and release the hold.
    CancelNow,
    /// Running, cooperative kind: mark it; the worker finishes it.
    RequestCancel,
    /// Already canceled: return it as it is.
    Repeat,
}

pub fn decide_cancel(
    status: JobStatus,
    policy: CancelInProgress,
) -> Result<CancelDecision, Refusal> {
    match status {
        JobStatus::Queued => Ok(CancelDecision::CancelNow),
        JobStatus::InProgress => match policy {
            CancelInProgress::Refuse => Err(Refusal::AlreadyStarted),
            CancelInProgress::Cooperative => Ok(CancelDecision::RequestCancel),
        },
        JobStatus::Canceled => Ok(CancelDecision::Repeat),
        _ => Err(Refusal::AlreadyFinished),
    }
}

/// Snapshots for the decision tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// An account on the free plan with `balance` micros, 3 images and 10 messages.
    pub fn snapshot(balance: i64) -> AccountSnapshot {
        snapshot_with(balance, 3)
    }

    pub fn snapshot_with(balance: i64, images: i64) -> AccountSnapshot {
        let mut allowances = BTreeMap::new();
        allowances.insert(
            "daily_images".to_string(),
            AllowancePocket {
                remaining: images,
                held: 0,
                cycle_started_at: 0,
            },
        );
        allowances.insert(
            "daily_messages".to_string(),
            AllowancePocket {
                remaining: 10,
                held: 0,
                cycle_started_at: 0,
            },
        );
        AccountSnapshot {
            plan: "free".into(),
            plan_until: None,
            max_concurrent_jobs: None,
            balance,
            held: 0,
            total_credited: balance,
            total_spent: 0,
            suspended_at: None,
            blocked_at: None,
            banned_at: None,
            created_at: 0,
            last_active_at: None,
            recharge: None,
            allowances,
            spend: Spend::default(),
            blocks: Vec::new(),
            now: 1_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::snapshot_with as snap;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_hold_is_held_on_its_pockets_and_a_second_submit_sees_it() {
        let card = RateCard::builtin();
        let mut s = snap(600_000, 1);
        s.max_concurrent_jobs = Some(2);
        let image = &card.kinds["image"];
        let first = decide_submit(&s, 0, image, &card).unwrap();
        assert_eq!(first.hold[0].pocket, "daily_images");
        s.apply_hold(&first.hold).unwrap();
        assert_eq!(s.allowances["daily_images"].held, 1);
        // The pocket is spoken for: the next image holds money.
        let second = decide_submit(&s, 1, image, &card).unwrap();
        assert_eq!(second.hold[0].pocket, MONEY);
        s.apply_hold(&second.hold).unwrap();
        assert_eq!((s.held, s.available_money()), (40_000, 560_000));
    }

    #[test]
    fn the_expiring_pocket_pays_first_then_money() {
        let card = RateCard::builtin();
        let image = &card.kinds["image"];
        let d = decide_submit(&snap(1_000_000, 1), 0, image, &card).unwrap();
        assert_eq!(
            d.hold,
            vec![PocketAmount {
                pocket: "daily_images".into(),
                amount: 1,
                blocks: Vec::new(),
            }]
        );
        assert_eq!(d.lane, "image");
        let d = decide_submit(&snap(1_000_000, 0), 0, image, &card).unwrap();
        assert_eq!(
            d.hold,
            vec![PocketAmount {
                pocket: MONEY.into(),
                amount: 40_000,
                blocks: Vec::new(),
            }]
        );
        assert_eq!(
            decide_submit(&snap(39_999, 0), 0, image, &card),
            Err(Refusal::InsufficientFunds)
        );
        assert_eq!(
            decide_submit(&snap(0, 0), 0, &card.kinds["text"], &{
                let mut c = card.clone();
                c.plans.get_mut("free").unwrap().allowances.clear();
                c
            }),
            Ok(SubmitDecision {
                lane: "text".into(),
                hold: vec![PocketAmount {
                    pocket: "daily_messages".into(),
                    amount: 1,
                    blocks: Vec::new(),
                }]
            })
        );
    }

    #[test]
    fn premium_text_is_free_and_priority_laned() {
        let card = RateCard::builtin();
        let mut s = snap(0, 0);
        s.plan = "premium".into();
        let d = decide_submit(&s, 0, &card.kinds["text"], &card).unwrap();
        assert!(d.hold.is_empty());
        assert_eq!(d.lane, "text_priority");
        assert_eq!(
            decide_submit(&s, 1, &card.kinds["text"], &card),
            Err(Refusal::Busy)
        );
    }

    #[test]
    fn a_pocket_the_plan_lacks_is_never_refilled() {
        let card = RateCard::builtin();
        let mut s = snap(0, 0);
        s.plan = "premium".into(); // premium has daily_images only
        s.now = 10 * 86_400 * MICROS_PER_SECOND;
        let refills = s.due_refills(&card);
        assert_eq!(refills.len(), 1);
        assert_eq!(refills[0].pocket, "daily_images");
        assert_eq!(refills[0].quota, 10);
    }

    #[test]
    fn plan_until_falls_back_to_the_default_plan() {
        let card = RateCard::builtin();
        let mut s = snap(0, 0);
        s.plan = "premium".into();
        s.plan_until = Some(500);
        assert_eq!(s.effective_plan(&card).0, "free");
    }

    #[test]
    fn refusal_order_is_blocked_suspended_busy_funds() {
        let card = RateCard::builtin();
        let mut s = snap(0, 0);
        s.blocked_at = Some(1);
        s.suspended_at = Some(1);
        let k = &card.kinds["video"];
        assert_eq!(decide_submit(&s, 5, k, &card), Err(Refusal::AccountBlocked));
        s.blocked_at = None;
        assert_eq!(
            decide_submit(&s, 5, k, &card),
            Err(Refusal::AccountSuspended)
        );
        s.suspended_at = None;
        assert_eq!(decide_submit(&s, 5, k, &card), Err(Refusal::Busy));
        assert_eq!(
            decide_submit(&s, 0, k, &card),
            Err(Refusal::InsufficientFunds)
        );
    }

    #[test]
    fn capture_is_bounded_by_the_hold() {
        let hold = vec![PocketAmount {
            pocket: MONEY.into(),
            amount: 500_000,
            blocks: Vec::new(),
        }];
        let all = resolve_capture(&hold, None).unwrap();
        assert_eq!(all[0].capture, 500_000);
        let part = [PocketAmount {
            pocket: MONEY.into(),
            amount: 100,
            blocks: Vec::new(),
        }];
        assert_eq!(resolve_capture(&hold, Some(&part)).unwrap()[0].capture, 100);
        let over = [PocketAmount {
            pocket: MONEY.into(),
            amount: 500_001,
            blocks: Vec::new(),
        }];
        assert!(resolve_capture(&hold, Some(&over)).is_err());
        let other = [PocketAmount {
            pocket: "daily_images".into(),
            amount: 1,
            blocks: Vec::new(),
        }];
        assert!(resolve_capture(&hold, Some(&other)).is_err());
        assert_eq!(resolve_capture(&hold, Some(&[])).unwrap()[0].capture, 0);
    }

    #[test]
    fn cancel_follows_the_contract() {
        use CancelInProgress::*;
        assert_eq!(
            decide_cancel(JobStatus::Queued, Refuse),
            Ok(CancelDecision::CancelNow)
        );
        assert_eq!(
            decide_cancel(JobStatus::InProgress, Refuse),
            Err(Refusal::AlreadyStarted)
        );
        assert_eq!(
            decide_cancel(JobStatus::InProgress, Cooperative),
            Ok(CancelDecision::RequestCancel)
        );
        assert_eq!(
            decide_cancel(JobStatus::Canceled, Refuse),
            Ok(CancelDecision::Repeat)
        );
        assert_eq!(
            decide_cancel(JobStatus::Succeeded, Refuse),
            Err(Refusal::AlreadyFinished)
        );
        assert_eq!(
            decide_cancel(JobStatus::Expired, Cooperative),
            Err(Refusal::AlreadyFinished)
        );
    }

    proptest! {
        #[test]
        fn a_debit_passes_exactly_when_it_stays_within_the_buffer(
            balance in -2_000_000i64..2_000_000, held in 0i64..1_000_000,
            amount in 1i64..3_000_000, buffer in 0i64..2_000_000,
        ) {
            let mut s = snap(balance, 0);
            s.held = held;
            let ok = check_debit(&s, Micros(amount), Micros(buffer)).is_ok();
            prop_assert_eq!(ok, balance - held - amount >= -buffer);
        }

        #[test]
        fn allowance_capture_never_goes_below_zero(amount in 0i64..100, capture in 0i64..100) {
            let dec = actual_decrease("daily_images", amount, capture);
            prop_assert!(amount - dec >= 0);
            prop_assert!(dec <= capture);
        }

        #[test]
        fn suspension_is_set_once_and_cleared_only_by_a_credit(
            suspended in proptest::option::of(0i64..10), after in -10i64..10, credit: bool,
        ) {
            let s = suspension_after(suspended, after, credit);
            match s {
                Suspension::Suspend => prop_assert!(suspended.is_none() && after < 0),
                Suspension::Unsuspend => prop_assert!(suspended.is_some() && after >= 0 && credit),
                Suspension::Unchanged => prop_assert!(
                    (suspended.is_some() && (after < 0 || !credit)) || (suspended.is_none() && after >= 0)
                ),
            }
        }
    }
}
