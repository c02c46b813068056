//! Decisions on jobs after submit: how long a lease may be, whether a finishing call
//! holds a valid lease, what status a complete gives, and what finishing a job does to
//! its hold (capture, release, partial capture) and the money pocket.

use super::{
    AccountSnapshot, BlockAmount, BlockEffect, JobStatus, MICROS_PER_SECOND, PocketAmount,
    Timestamp, actual_decrease,
};
use super::{MoneyAfter, MoneyMove, change_money};
use crate::money::Micros;
use crate::ratecard::{KindTimeouts, MONEY};
use crate::refusal::Refusal;

/// The largest per-account concurrency override a client may set.
pub const MAX_CONCURRENT_JOBS: i64 = 1_000_000;

/// A concurrency override, when given, is 1 to [`MAX_CONCURRENT_JOBS`].
pub fn check_concurrency_override(max_concurrent_jobs: Option<i64>) -> Result<(), Refusal> {
    match max_concurrent_jobs {
        Some(n) if !(1..=MAX_CONCURRENT_JOBS).contains(&n) => Err(Refusal::InvalidRequest(
            format!("max_concurrent_jobs: must be 1 to {MAX_CONCURRENT_JOBS}"),
        )),
        _ => Ok(()),
    }
}

/// A lease is 1 second to the card's `stale_after_seconds` (a job older than that is
/// swept whatever its lease says).
pub fn check_lease_seconds(lease_seconds: i64, stale_after_seconds: i64) -> Result<(), Refusal> {
    if (1..=stale_after_seconds).contains(&lease_seconds) {
        Ok(())
    } else {
        Err(Refusal::InvalidRequest(format!(
            "lease_seconds: must be 1 to {stale_after_seconds}"
        )))
    }
}

/// Who ended a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedBy {
    Complete,
    Fail,
    Cancel,
    Sweep,
}

impl FinishedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishedBy::Complete => "complete",
            FinishedBy::Fail => "fail",
            FinishedBy::Cancel => "cancel",
            FinishedBy::Sweep => "sweep",
        }
    }
}

/// A job's lease as its row holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseState<'a> {
    pub status: JobStatus,
    pub lease_token: Option<&'a str>,
    pub lease_expires_at: Option<Timestamp>,
    /// Who ended the job, once it ended.
    pub finished_by: Option<&'a str>,
}

/// What a finishing call (complete, fail) with a lease token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishCall {
    /// The lease is valid: finish the job.
    Proceed,
    /// The same call already finished the job with this token: answer it as it is.
    Repeat,
}

/// A lease is valid while the token matches, the job is in progress and the database
/// clock is before its expiry — never dependent on whether the sweeper has run. A repeat
/// of the call that finished the job is answered as such; another finishing call with
/// the same token is `already_finished`; any other token is `lease_lost`.
pub fn check_finish_call(
    job: &LeaseState<'_>,
    token: &str,
    call: FinishedBy,
    now: Timestamp,
) -> Result<FinishCall, Refusal> {
    let token_matches = job.lease_token == Some(token);
    if !job.status.is_open() {
        return match (token_matches, job.finished_by == Some(call.as_str())) {
            (true, true) => Ok(FinishCall::Repeat),
            (true, false) => Err(Refusal::AlreadyFinished),
            (false, _) => Err(Refusal::LeaseLost),
        };
    }
    if lease_is_live(job, token, now) {
        Ok(FinishCall::Proceed)
    } else {
        Err(Refusal::LeaseLost)
    }
}

/// A heartbeat extends a live lease only: its token, the job in progress, the database
/// clock before its expiry (as for a finishing call on an open job); anything else is
/// `lease_lost`.
pub fn check_heartbeat(job: &LeaseState<'_>, token: &str, now: Timestamp) -> Result<(), Refusal> {
    if lease_is_live(job, token, now) {
        Ok(())
    } else {
        Err(Refusal::LeaseLost)
    }
}

fn lease_is_live(job: &LeaseState<'_>, token: &str, now: Timestamp) -> bool {
    job.lease_token == Some(token)
        && job.status == JobStatus::InProgress
        && job.lease_expires_at.is_some_and(|t| now < t)
}

/// Why the sweeper expires a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// In progress, and its lease passed: the worker died.
    LeaseExpired,
    /// Open longer than its kind's stale deadline.
    Stale,
    /// Queued longer than its kind's `queued_expires_after_seconds`.
    WaitedTooLong,
}

impl Expiry {
    /// The job's `failure_reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Expiry::LeaseExpired => "lease expired",
            Expiry::Stale => "stale: open longer than stale_after_seconds",
            Expiry::WaitedTooLong => "queued longer than queued_expires_after_seconds",
        }
    }
}

/// What the sweeper knows of an open job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepFacts {
    pub status: JobStatus,
    pub created_at: Timestamp,
    /// When its wait in the queue (re)started: at submit, and again when its account's
    /// suspension cleared.
    pub queued_since: Timestamp,
    pub lease_expires_at: Option<Timestamp>,
    pub account_suspended: bool,
}

/// Whether the sweeper expires a job now, and why. A job in progress: when its lease
/// passed, or when it is older than its kind's stale deadline (a hard deadline even for
/// a job that heartbeats). A queued job: never while its account is suspended (the
/// queue waits, as the second seed says); otherwise when it waited, since its queue
/// clock last started, longer than the stale deadline or the kind's
/// `queued_expires_after_seconds`.
pub fn expiry(job: &SweepFacts, t: &KindTimeouts, now: Timestamp) -> Option<Expiry> {
    let older_than = |since: Timestamp, seconds: i64| {
        since <= now.saturating_sub(seconds.saturating_mul(MICROS_PER_SECOND))
    };
    match job.status {
        JobStatus::InProgress if job.lease_expires_at.is_some_and(|t| t <= now) => {
            Some(Expiry::LeaseExpired)
        }
        JobStatus::InProgress if older_than(job.created_at, t.stale_after_seconds) => {
            Some(Expiry::Stale)
        }
        JobStatus::Queued if job.account_suspended => None,
        JobStatus::Queued if older_than(job.queued_since, t.stale_after_seconds) => {
            Some(Expiry::Stale)
        }
        JobStatus::Queued
            if t.queued_expires_after_seconds
                .is_some_and(|q| older_than(job.queued_since, q)) =>
        {
            Some(Expiry::WaitedTooLong)
        }
        _ => None,
    }
}

/// A job of this engine as metered usage for it sees it (its `job_ref` named it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedJob {
    pub status: JobStatus,
    pub finished_by: Option<String>,
    pub finished_at: Option<Timestamp>,
}

/// May metered usage for `job` be debited now? A job the sweeper expired: no
/// (`lease_lost`: the runner should stop). A job that ended normally: for
/// `grace_seconds` after it ended (a last report), then no (`already_finished`). An open
/// job, or a `job_ref` that names no job of this engine (an outside reference): yes.
pub fn check_usage_of_job(
    job: Option<&UsedJob>,
    now: Timestamp,
    grace_seconds: i64,
) -> Result<(), Refusal> {
    let Some(job) = job else { return Ok(()) };
    if job.status.is_open() {
        return Ok(());
    }
    if job.status == JobStatus::Expired || job.finished_by.as_deref() == Some("sweep") {
        return Err(Refusal::UsageOfExpiredJob);
    }
    let ended = job.finished_at.unwrap_or(now);
    if now > ended.saturating_add(grace_seconds.saturating_mul(MICROS_PER_SECOND)) {
        return Err(Refusal::UsageAfterGrace);
    }
    Ok(())
}

/// A complete ends a job `succeeded`, or `canceled` (with its charge) when a cooperative
/// cancel was asked while it ran.
pub fn complete_status(cancel_requested: bool) -> JobStatus {
    if cancel_requested {
        JobStatus::Canceled
    } else {
        JobStatus::Succeeded
    }
}

/// The ledger entry a decision writes to one pocket: a capture (its delta the actual
/// decrease, negated: an allowance floors at 0), a job refund or a grant (positive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PocketEntry {
    pub pocket: String,
    pub delta: i64,
    pub amount_after: i64,
    pub available_after: i64,
    /// The money pocket's buffer when it was written; `None` for an allowance.
    pub buffer_micros: Option<i64>,
    /// The credit blocks a money capture took from (empty: none).
    pub blocks: Vec<BlockAmount>,
}

/// What finishing a job writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishPlan {
    /// The change of the money pocket's `held` (minus a money hold).
    pub money_held_delta_micros: i64,
    /// The money pocket after a money capture; `None` when no money is taken.
    pub money: Option<MoneyAfter>,
    /// The allowance pocket the hold was on, with the change of its `held` and `remaining`.
    pub pocket: Option<PocketChange>,
    /// The capture's ledger entry, when something was taken.
    pub entry: Option<PocketEntry>,
    /// What the job was charged (empty when nothing was asked to be captured).
    pub charged: Vec<PocketAmount>,
    /// The account after all of it.
    pub after: AccountSnapshot,
}

/// A change of one allowance pocket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PocketChange {
    pub pocket: String,
    pub held_delta: i64,
    pub remaining_delta: i64,
}

/// Finishing a job is refused, or its stored hold does not fit the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishError {
    Refused(Refusal),
    Inconsistent(String),
}

/// Finishing a job that holds `hold` (at most one line) and takes `capture` (≤ the
/// hold) from it: the hold is released whole, the capture taken from its pocket —
/// money as a spending that may suspend the account, an allowance floored at 0.
pub fn plan_finish(
    snap: &AccountSnapshot,
    hold: &[PocketAmount],
    capture: i64,
    buffer: Micros,
) -> Result<FinishPlan, FinishError> {
    let mut plan = FinishPlan {
        money_held_delta_micros: 0,
        money: None,
        pocket: None,
        entry: None,
        charged: Vec::new(),
        after: snap.clone(),
    };
    let line = match hold {
        [] => return Ok(plan),
        [line] => line,
        _ => {
            return Err(FinishError::Inconsistent(
                "a hold of more than one pocket".into(),
            ));
        }
    };
    if capture > line.amount || capture < 0 {
        return Err(FinishError::Inconsistent(format!(
            "a capture of {capture} from a hold of {}",
            line.amount
        )));
    }
    let taken = if line.pocket == MONEY {
        finish_money(&mut plan, line, capture, buffer)?
    } else {
        finish_pocket(&mut plan, line, capture)?
    };
    if capture > 0 {
        let blocks = plan
            .entry
            .as_ref()
            .map_or_else(Vec::new, |e| e.blocks.clone());
        plan.charged.push(PocketAmount {
            pocket: line.pocket.clone(),
            amount: taken,
            blocks,
        });
    }
    plan.entry = plan.entry.filter(|e| e.delta != 0);
    Ok(plan)
}

/// Releases a money hold and takes `capture` from the balance (from the credit blocks
/// the hold reserved, in their order); returns what was taken.
fn finish_money(
    plan: &mut FinishPlan,
    line: &PocketAmount,
    capture: i64,
    buffer: Micros,
) -> Result<i64, FinishError> {
    let held = line.amount;
    plan.money_held_delta_micros = -held;
    plan.after.held -= held;
    let inconsistent = FinishError::Inconsistent;
    (plan.after)
        .apply_block_lines(&line.blocks, BlockEffect::Release)
        .map_err(inconsistent)?;
    // A release alone (nothing captured) leaves the balance where it is.
    if capture == 0 {
        return Ok(0);
    }
    let money = change_money(&plan.after, MoneyMove::Capture(Micros(capture)))
        .map_err(FinishError::Refused)?;
    let blocks = AccountSnapshot::capture_lines(&line.blocks, capture);
    (plan.after)
        .apply_money_from(&money, &blocks)
        .map_err(inconsistent)?;
    plan.money = Some(money);
    plan.entry = Some(PocketEntry {
        pocket: MONEY.to_owned(),
        delta: -capture,
        amount_after: plan.after.balance,
        available_after: plan.after.balance - plan.after.held,
        buffer_micros: Some(buffer.0),
        blocks,
    });
    Ok(capture)
}

/// Releases an allowance hold and takes `capture` from the pocket, floored at 0;
/// returns the actual decrease.
fn finish_pocket(
    plan: &mut FinishPlan,
    line: &PocketAmount,
    capture: i64,
) -> Result<i64, FinishError> {
    let p = plan.after.allowances.get_mut(&line.pocket).ok_or_else(|| {
        FinishError::Inconsistent(format!("a hold on a missing pocket {:?}", line.pocket))
    })?;
    let decrease = actual_decrease(&line.pocket, p.remaining, capture);
    p.held -= line.amount;
    p.remaining -= decrease;
    plan.pocket = Some(PocketChange {
        pocket: line.pocket.clone(),
        held_delta: -line.amount,
        remaining_delta: -decrease,
    });
    plan.entry = Some(PocketEntry {
        pocket: line.pocket.clone(),
        delta: -decrease,
        amount_after: p.remaining,
        available_after: p.remaining - p.held,
        buffer_micros: None,
        blocks: Vec::new(),
    });
    Ok(decrease)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::tests_support::snapshot;
    use crate::decide::{AllowancePocket, Suspension};

    fn lease(status: JobStatus, finished_by: Option<&str>) -> LeaseState<'_> {
        LeaseState {
            status,
            lease_token: Some("t"),
            lease_expires_at: Some(100),
            finished_by,
        }
    }

    #[test]
    fn the_sweeper_expires_dead_leases_stale_jobs_and_long_waits_but_not_a_paused_queue() {
        const S: i64 = MICROS_PER_SECOND;
        let t = KindTimeouts {
            max_run_seconds: None,
            stale_after_seconds: 100,
            queued_expires_after_seconds: Some(10),
        };
        let running = SweepFacts {
            status: JobStatus::InProgress,
            created_at: 0,
            queued_since: 0,
            lease_expires_at: Some(50 * S),
            account_suspended: false,
        };
        assert_eq!(expiry(&running, &t, 49 * S), None);
        assert_eq!(expiry(&running, &t, 50 * S), Some(Expiry::LeaseExpired));
        let heartbeating = SweepFacts {
            lease_expires_at: Some(1000 * S),
            ..running
        };
        assert_eq!(expiry(&heartbeating, &t, 99 * S), None);
        assert_eq!(expiry(&heartbeating, &t, 100 * S), Some(Expiry::Stale));
        let queued = SweepFacts {
            status: JobStatus::Queued,
            lease_expires_at: None,
            queued_since: 5 * S,
            ..running
        };
        assert_eq!(expiry(&queued, &t, 14 * S), None);
        assert_eq!(expiry(&queued, &t, 15 * S), Some(Expiry::WaitedTooLong));
        assert_eq!(expiry(&queued, &t, 105 * S), Some(Expiry::Stale));
        let paused = SweepFacts {
            account_suspended: true,
            ..queued
        };
        assert_eq!(
            expiry(&paused, &t, 10_000 * S),
            None,
            "a suspended queue waits"
        );
        let no_wait_limit = KindTimeouts {
            queued_expires_after_seconds: None,
            ..t
        };
        assert_eq!(expiry(&queued, &no_wait_limit, 50 * S), None);
        for done in [
            JobStatus::Succeeded,
            JobStatus::Expired,
            JobStatus::Canceled,
        ] {
            let j = SweepFacts {
                status: done,
                ..running
            };
            assert_eq!(expiry(&j, &t, 10_000 * S), None);
        }
        assert_eq!(
            Expiry::WaitedTooLong.reason(),
            "queued longer than queued_expires_after_seconds"
        );
    }

    #[test]
    fn usage_for_a_swept_job_is_lease_lost_and_for_a_finished_one_only_within_grace() {
        const S: i64 = MICROS_PER_SECOND;
        let job = |status, by: Option<&str>, at| UsedJob {
            status,
            finished_by: by.map(str::to_owned),
            finished_at: at,
        };
        assert_eq!(
            check_usage_of_job(None, 0, 60),
            Ok(()),
            "an outside reference"
        );
        let running = job(JobStatus::InProgress, None, None);
        assert_eq!(check_usage_of_job(Some(&running), 10_000 * S, 60), Ok(()));
        let swept = job(JobStatus::Expired, Some("sweep"), Some(5 * S));
        assert_eq!(
            check_usage_of_job(Some(&swept), 5 * S, 60),
            Err(Refusal::UsageOfExpiredJob)
        );
        let done = job(JobStatus::Succeeded, Some("complete"), Some(100 * S));
        assert_eq!(
            check_usage_of_job(Some(&done), 160 * S, 60),
            Ok(()),
            "at the end of grace"
        );
        assert_eq!(
            check_usage_of_job(Some(&done), 160 * S + 1, 60),
            Err(Refusal::UsageAfterGrace)
        );
        let failed = job(JobStatus::Failed, Some("fail"), Some(0));
        assert_eq!(check_usage_of_job(Some(&failed), 30 * S, 60), Ok(()));
    }

    #[test]
    fn a_lease_is_valid_until_its_expiry_with_its_token() {
        let running = lease(JobStatus::InProgress, None);
        let call = FinishedBy::Complete;
        assert_eq!(
            check_finish_call(&running, "t", call, 99),
            Ok(FinishCall::Proceed)
        );
        assert_eq!(
            check_finish_call(&running, "t", call, 100),
            Err(Refusal::LeaseLost)
        );
        assert_eq!(
            check_finish_call(&running, "x", call, 0),
            Err(Refusal::LeaseLost)
        );
        let queued = lease(JobStatus::Queued, None);
        assert_eq!(
            check_finish_call(&queued, "t", call, 0),
            Err(Refusal::LeaseLost)
        );
        let no_expiry = LeaseState {
            lease_expires_at: None,
            ..running
        };
        assert_eq!(
            check_finish_call(&no_expiry, "t", call, 0),
            Err(Refusal::LeaseLost)
        );
    }

    #[test]
    fn a_heartbeat_extends_only_a_live_lease() {
        let running = lease(JobStatus::InProgress, None);
        assert_eq!(check_heartbeat(&running, "t", 99), Ok(()));
        assert_eq!(check_heartbeat(&running, "t", 100), Err(Refusal::LeaseLost));
        assert_eq!(check_heartbeat(&running, "x", 0), Err(Refusal::LeaseLost));
        for status in [JobStatus::Queued, JobStatus::Succeeded, JobStatus::Failed] {
            let other = LeaseState { status, ..running };
            assert_eq!(check_heartbeat(&other, "t", 0), Err(Refusal::LeaseLost));
        }
        let no_expiry = LeaseState {
            lease_expires_at: None,
            ..running
        };
        assert_eq!(check_heartbeat(&no_expiry, "t", 0), Err(Refusal::LeaseLost));
    }

    #[test]
    fn a_finished_job_answers_its_own_call_and_refuses_others() {
        let done = lease(JobStatus::Succeeded, Some("complete"));
        let complete = FinishedBy::Complete;
        assert_eq!(
            check_finish_call(&done, "t", complete, 1_000),
            Ok(FinishCall::Repeat)
        );
        assert_eq!(
            check_finish_call(&done, "t", FinishedBy::Fail, 0),
            Err(Refusal::AlreadyFinished)
        );
        assert_eq!(
            check_finish_call(&done, "x", complete, 0),
            Err(Refusal::LeaseLost)
        );
    }

    #[test]
    fn names_and_ranges() {
        assert_eq!(
            [
                FinishedBy::Complete,
                FinishedBy::Fail,
                FinishedBy::Cancel,
                FinishedBy::Sweep
            ]
            .map(FinishedBy::as_str),
            ["complete", "fail", "cancel", "sweep"]
        );
        assert_eq!(complete_status(false), JobStatus::Succeeded);
        assert_eq!(complete_status(true), JobStatus::Canceled);
        assert!(check_lease_seconds(1, 60).is_ok() && check_lease_seconds(60, 60).is_ok());
        assert!(check_lease_seconds(0, 60).is_err() && check_lease_seconds(61, 60).is_err());
        for ok in [None, Some(1), Some(MAX_CONCURRENT_JOBS)] {
            assert!(check_concurrency_override(ok).is_ok());
        }
        for bad in [Some(0), Some(-1), Some(MAX_CONCURRENT_JOBS + 1)] {
            assert!(check_concurrency_override(bad).is_err());
        }
    }

    fn money(amount: i64) -> Vec<PocketAmount> {
        vec![PocketAmount {
            pocket: MONEY.into(),
            amount,
            blocks: Vec::new(),
        }]
    }

    #[test]
    fn a_money_capture_takes_part_and_releases_the_rest() {
        let mut snap = snapshot(100);
        snap.held = 50;
        let plan = plan_finish(&snap, &money(50), 20, Micros(7)).unwrap();
        assert_eq!(plan.money_held_delta_micros, -50);
        assert_eq!(
            (plan.after.balance, plan.after.held, plan.after.total_spent),
            (80, 0, 20)
        );
        let entry = plan.entry.expect("a capture entry");
        assert_eq!(
            (entry.delta, entry.amount_after, entry.available_after),
            (-20, 80, 80)
        );
        assert_eq!(
            (entry.pocket.as_str(), entry.buffer_micros),
            (MONEY, Some(7))
        );
        assert_eq!(
            plan.charged,
            vec![PocketAmount {
                pocket: MONEY.into(),
                amount: 20,
                blocks: Vec::new(),
            }]
        );
        assert_eq!(
            plan.money.map(|m| m.suspension),
            Some(Suspension::Unchanged)
        );
    }

    #[test]
    fn the_entry_counts_other_jobs_holds_in_what_is_available() {
        // Another job still holds 30 after this one's hold of 50 is released.
        let mut snap = snapshot(100);
        snap.held = 80;
        let plan = plan_finish(&snap, &money(50), 20, Micros(0)).unwrap();
        assert_eq!((plan.after.balance, plan.after.held), (80, 30));
        let entry = plan.entry.expect("a capture entry");
        assert_eq!((entry.amount_after, entry.available_after), (80, 50));

        snap.allowances.insert(
            "daily_images".into(),
            AllowancePocket {
                remaining: 10,
                held: 5,
                cycle_started_at: 0,
            },
        );
        let hold = vec![PocketAmount {
            pocket: "daily_images".into(),
            amount: 2,
            blocks: Vec::new(),
        }];
        let plan = plan_finish(&snap, &hold, 1, Micros(0)).unwrap();
        let p = &plan.after.allowances["daily_images"];
        assert_eq!((p.remaining, p.held), (9, 3));
        let entry = plan.entry.expect("a capture entry");
        assert_eq!(
            (entry.delta, entry.amount_after, entry.available_after),
            (-1, 9, 6)
        );
    }

    #[test]
    fn a_release_takes_nothing_and_writes_no_entry() {
        let mut snap = snapshot(100);
        snap.held = 50;
        let plan = plan_finish(&snap, &money(50), 0, Micros(7)).unwrap();
        assert_eq!((plan.after.balance, plan.after.held), (100, 0));
        assert_eq!(
            (plan.entry, plan.money, plan.charged.len()),
            (None, None, 0)
        );
        let whole = plan_finish(&snap, &money(50), 50, Micros(7)).unwrap();
        assert_eq!(whole.after.balance, 50);
    }

    #[test]
    fn a_capture_below_zero_suspends() {
        let mut snap = snapshot(10);
        snap.held = 50;
        let plan = plan_finish(&snap, &money(50), 30, Micros(0)).unwrap();
        assert_eq!(plan.after.balance, -20);
        assert_eq!(plan.money.map(|m| m.suspension), Some(Suspension::Suspend));
        assert_eq!(plan.after.suspended_at, Some(snap.now));
    }

    #[test]
    fn an_allowance_capture_floors_at_zero() {
        let mut snap = snapshot(0);
        snap.allowances.insert(
            "daily_images".into(),
            AllowancePocket {
                remaining: 1,
                held: 2,
                cycle_started_at: 0,
            },
        );
        let hold = vec![PocketAmount {
            pocket: "daily_images".into(),
            amount: 2,
            blocks: Vec::new(),
        }];
        let plan = plan_finish(&snap, &hold, 2, Micros(0)).unwrap();
        let p = &plan.after.allowances["daily_images"];
        assert_eq!((p.remaining, p.held), (0, 0));
        let change = plan.pocket.expect("a pocket change");
        assert_eq!((change.held_delta, change.remaining_delta), (-2, -1));
        let entry = plan.entry.expect("a capture entry");
        assert_eq!(
            (entry.delta, entry.amount_after, entry.buffer_micros),
            (-1, 0, None)
        );
        assert_eq!(plan.charged[0].amount, 1);
        assert_eq!((plan.money_held_delta_micros, plan.after.balance), (0, 0));
    }

    #[test]
    fn an_allowance_capture_of_nothing_left_charges_zero_without_an_entry() {
        let mut snap = snapshot(0);
        snap.allowances.insert(
            "daily_images".into(),
            AllowancePocket {
                remaining: 0,
                held: 1,
                cycle_started_at: 0,
            },
        );
        let hold = vec![PocketAmount {
            pocket: "daily_images".into(),
            amount: 1,
            blocks: Vec::new(),
        }];
        let plan = plan_finish(&snap, &hold, 1, Micros(0)).unwrap();
        assert_eq!(plan.entry, None);
        assert_eq!(
            plan.charged,
            vec![PocketAmount {
                pocket: "daily_images".into(),
                amount: 0,
                blocks: Vec::new(),
            }]
        );
    }

    #[test]
    fn holds_that_do_not_fit_are_inconsistent() {
        let snap = snapshot(100);
        let two = [money(1), money(1)].concat();
        assert!(matches!(
            plan_finish(&snap, &two, 0, Micros(0)),
            Err(FinishError::Inconsistent(_))
        ));
        assert!(matches!(
            plan_finish(&snap, &money(5), 6, Micros(0)),
            Err(FinishError::Inconsistent(_))
        ));
        assert!(matches!(
            plan_finish(&snap, &money(5), -1, Micros(0)),
            Err(FinishError::Inconsistent(_))
        ));
        let missing = vec![PocketAmount {
            pocket: "nope".into(),
            amount: 1,
            blocks: Vec::new(),
        }];
        assert!(matches!(
            plan_finish(&snap, &missing, 0, Micros(0)),
            Err(FinishError::Inconsistent(_))
        ));
        let none = plan_finish(&snap, &[], 0, Micros(0)).unwrap();
        assert_eq!(
            (none.after, none.entry, none.money_held_delta_micros),
            (snap, None, 0)
        );
    }
}
