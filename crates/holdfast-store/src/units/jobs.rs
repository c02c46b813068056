//! Jobs and two-phase holds: submit (hold), lease, heartbeat, complete (capture), fail and
//! cancel (release). Each operation is one unit of work: lock, read, let
//! `holdfast_core::decide` decide, apply, commit.

use holdfast_core::decide::{
    self, CancelDecision, FinishCall, FinishError, FinishedBy, JobStatus, LeaseState, PocketAmount,
    SubmitDecision,
};
use holdfast_core::{IdempotencyKey, JobId, MONEY, Micros, RateCard, Refusal, WorkerId};
use serde_json::json;

use crate::driver::db::{Row, Tx};
use crate::driver::statement::{BindByName, Items, Params, Stmt};
use crate::error::StoreError;
use crate::model::{Heartbeat, Job, JobActors, Lease, Submitted};
use crate::store::Store;
use crate::units::account_state::{AccountState, lock_account_with_extras, lock_job_with_account};
use crate::units::writes::{apply_refills, emit_crossing, emit_suspension, request_hash};
use crate::{bind_by_name, columns, in_read_tx, in_write_tx, params, statement};

static READ_JOB: Stmt = statement!(shared "read_job");
static FINISH_JOB: Stmt = statement!("finish_job");
static SUBMIT_JOB: Stmt = statement!("submit_job");
static LEASE_JOB: Stmt = statement!("lease_job");
static LOCK_JOB_LEASE: Stmt = statement!("lock_job_lease");
static EXTEND_LEASE: Stmt = statement!(shared "extend_lease");
static REQUEST_CANCEL: Stmt = statement!(shared "request_cancel");
static JOBS_NAMED_BY_REFS: Stmt = statement!("jobs_named_by_refs");

/// A job row with what only the store sees (its lease token, who finished it).
pub(crate) struct JobRow {
    pub job: Job,
    pub lease_token: Option<String>,
    pub finished_by: Option<String>,
}

impl JobRow {
    /// The job's lease as core checks it.
    pub(crate) fn lease(&self) -> LeaseState<'_> {
        LeaseState {
            status: self.job.status,
            lease_token: self.lease_token.as_deref(),
            lease_expires_at: self.job.lease_expires_at,
            finished_by: self.finished_by.as_deref(),
        }
    }
}

pub(crate) fn job_from(row: &Row) -> Result<JobRow, StoreError> {
    let status = row.text("status")?;
    let parse_lines = |text: Option<String>| -> Result<Vec<PocketAmount>, StoreError> {
        match text {
            None => Ok(vec![]),
            Some(t) => {
                serde_json::from_str(&t).map_err(|e| StoreError::Corrupt(format!("job lines: {e}")))
            }
        }
    };
    let payload = row
        .opt_text("payload")?
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("job payload: {e}")))?;
    Ok(JobRow {
        job: Job {
            job_id: row.text("job_id")?,
            account_id: row.text("account_id")?,
            kind: row.text("kind")?,
            lane: row.text("lane")?,
            status: JobStatus::parse(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("job status {status:?}")))?,
            payload,
            hold: parse_lines(Some(row.text("hold")?))?,
            charged: parse_lines(row.opt_text("charged")?)?,
            refunded: parse_lines(row.opt_text("refunded")?)?,
            created_at: row.int("created_at")?,
            started_at: row.opt_int("started_at")?,
            finished_at: row.opt_int("finished_at")?,
            notice_at: row.int("notice_at")?,
            cancel_requested: row.flag("cancel_requested")?,
            failure_reason: row.opt_text("failure_reason")?,
            lease_expires_at: row.opt_int("lease_expires_at")?,
            worker_id: row.opt_text("worker_id")?,
            currency: row.opt_text("currency")?,
            actors: JobActors {
                submitted: row.opt_text("submitted_by_actor")?,
                leased: row.opt_text("leased_by_actor")?,
                finished: row.opt_text("finished_by_actor")?,
            },
        },
        lease_token: row.opt_text("lease_token")?,
        finished_by: row.opt_text("finished_by")?,
    })
}

pub(crate) async fn read_job(tx: &mut Tx, job: &str) -> Result<JobRow, StoreError> {
    let row = tx
        .maybe_row(&READ_JOB, params! { job_id: job })
        .await?
        .ok_or(Refusal::JobNotFound)?;
    job_from(&row)
}

/// The jobs of this engine that metered usage names, by (account, job_ref): read after
/// the accounts are locked (a job ends only under its account's lock, so what is read
/// holds for the whole transaction). Pairs without a job are absent.
pub(crate) async fn used_jobs<'a>(
    tx: &mut Tx,
    refs: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<UsedJobs, StoreError> {
    // The engine names every job it makes with a UUID (submit takes no id): a job_ref
    // that is not one names no job of this engine, and is not looked up.
    let pairs: Vec<[&str; 2]> = refs
        .filter(|(_, r)| uuid::Uuid::try_parse(r).is_ok())
        .map(|(a, r)| [a, r])
        .collect();
    if pairs.is_empty() {
        return Ok(UsedJobs::new());
    }
    let refs = json!(pairs).to_string();
    let mut out = UsedJobs::new();
    for row in tx.rows(&JOBS_NAMED_BY_REFS, params! { refs: refs }).await? {
        let status = row.text("status")?;
        let job = decide::UsedJob {
            status: JobStatus::parse(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("job status {status:?}")))?,
            finished_by: row.opt_text("finished_by")?,
            finished_at: row.opt_int("finished_at")?,
        };
        out.insert((row.text("account_id")?, row.text("job_id")?), job);
    }
    Ok(out)
}

/// Jobs named by metered usage, by (account, job id).
pub(crate) type UsedJobs = std::collections::HashMap<(String, String), decide::UsedJob>;

/// Locks a job's account, then the job (the lock order everywhere), reading the
/// account's pockets only when the job holds one.
async fn lock_job(tx: &mut Tx, job: &JobId) -> Result<(AccountState, JobRow), StoreError> {
    lock_job_with_account(tx, job.as_str(), |row| {
        let j = job_from(row)?;
        let holds_a_pocket = j.job.hold.iter().any(|l| l.pocket != MONEY);
        Ok((j, holds_a_pocket))
    })
    .await
}

/// Hold or charge lines as docs/API.md writes them: money as a decimal string with
/// `amount_micros` beside it, allowances as counts.
pub fn lines_json(lines: &[PocketAmount]) -> serde_json::Value {
    lines
        .iter()
        .map(|l| {
            if l.pocket == MONEY {
                json!({ "pocket": l.pocket, "amount": Micros(l.amount).format(), "amount_micros": l.amount })
            } else {
                json!({ "pocket": l.pocket, "amount": l.amount })
            }
        })
        .collect()
}

/// How a job ends.
pub(crate) struct Finish<'a> {
    pub status: JobStatus,
    /// What is taken from the hold (at most the hold); the rest of it is released.
    pub capture: i64,
    pub finished_by: FinishedBy,
    pub reason: Option<&'a str>,
}

/// The parameters of `finish_job.sql`, and one item of `finish_jobs.sql` (by the same
/// names).
#[derive(serde::Serialize)]
pub(crate) struct FinishWrite {
    account_id: String,
    balance_delta_micros: i64,
    money_held_delta_micros: i64,
    spent_micros: i64,
    suspended_at: Option<i64>,
    pocket: Option<String>,
    pocket_held_delta: i64,
    pocket_remaining_delta: i64,
    entry_pocket: Option<String>,
    pub(crate) entry_delta: i64,
    entry_amount_after: i64,
    entry_available_after: Option<i64>,
    entry_buffer_micros: Option<i64>,
    pub(crate) job_id: String,
    now: i64,
    status: &'static str,
    charged: String,
    finished_by: &'static str,
    failure_reason: Option<String>,
    event_type: String,
    event_data: String,
    actor: String,
}

impl Items for FinishWrite {
    /// Finishes as `finish_jobs` takes them on PostgreSQL: one array per field.
    fn columns(writes: &[FinishWrite]) -> Params {
        columns!(writes;
            account_ids: account_id, balance_deltas: balance_delta_micros,
            money_held_deltas: money_held_delta_micros, spent: spent_micros,
            suspended_ats: suspended_at, pockets: pocket, pocket_held_deltas: pocket_held_delta,
            pocket_remaining_deltas: pocket_remaining_delta, entry_pockets: entry_pocket,
            entry_deltas: entry_delta, entry_amounts_after: entry_amount_after,
            entry_availables_after: entry_available_after, entry_buffers: entry_buffer_micros,
            job_ids: job_id, nows: now, statuses: status, charged: charged,
            finished_by: finished_by, failure_reasons: failure_reason,
            event_types: event_type, event_data: event_data, actors: actor)
    }
}

bind_by_name!(FinishWrite {
    account_id,
    balance_delta_micros,
    money_held_delta_micros,
    spent_micros,
    suspended_at,
    pocket,
    pocket_held_delta,
    pocket_remaining_delta,
    entry_pocket,
    entry_delta,
    entry_amount_after,
    entry_available_after,
    entry_buffer_micros,
    job_id,
    now,
    status,
    charged,
    finished_by,
    failure_reason,
    event_type,
    event_data,
    actor,
});

impl FinishWrite {
    fn new(
        job: &Job,
        plan: &decide::FinishPlan,
        f: &Finish<'_>,
    ) -> Result<FinishWrite, StoreError> {
        let captured_money = plan
            .entry
            .as_ref()
            .filter(|e| e.pocket == MONEY)
            .map_or(0, |e| -e.delta);
        let pocket = plan.pocket.as_ref();
        let entry = plan.entry.as_ref();
        let data = json!({
            "kind": job.kind, "lane": job.lane, "status": f.status.as_str(),
            "charged": lines_json(&plan.charged),
        });
        Ok(FinishWrite {
            account_id: job.account_id.clone(),
            balance_delta_micros: -captured_money,
            money_held_delta_micros: plan.money_held_delta_micros,
            spent_micros: captured_money,
            suspended_at: plan.after.suspended_at,
            pocket: pocket.map(|p| p.pocket.clone()),
            pocket_held_delta: pocket.map_or(0, |p| p.held_delta),
            pocket_remaining_delta: pocket.map_or(0, |p| p.remaining_delta),
            entry_pocket: entry.map(|e| e.pocket.clone()),
            entry_delta: entry.map_or(0, |e| e.delta),
            entry_amount_after: entry.map_or(0, |e| e.amount_after),
            entry_available_after: entry.map(|e| e.available_after),
            entry_buffer_micros: entry.and_then(|e| e.buffer_micros),
            job_id: job.job_id.clone(),
            now: plan.after.now,
            status: f.status.as_str(),
            charged: serde_json::to_string(&plan.charged)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            finished_by: f.finished_by.as_str(),
            failure_reason: f.reason.map(str::to_owned),
            event_type: format!("job.{}", f.status.as_str()),
            event_data: data.to_string(),
            actor: crate::actor::current(),
        })
    }
}

/// What finishing `job` writes, as `core::decide::plan_finish` decides it on the
/// account's state: releases its hold, takes the capture.
pub(crate) fn plan_finish_write(
    card: &RateCard,
    state: &AccountState,
    job: &Job,
    f: &Finish<'_>,
) -> Result<(decide::FinishPlan, FinishWrite), StoreError> {
    let buffer = state.snap.buffer(card);
    let plan =
        decide::plan_finish(&state.snap, &job.hold, f.capture, buffer).map_err(|e| match e {
            FinishError::Refused(r) => StoreError::Refused(r),
            FinishError::Inconsistent(what) => {
                StoreError::Corrupt(format!("job {}: {what}", job.job_id))
            }
        })?;
    let write = FinishWrite::new(job, &plan, f)?;
    Ok((plan, write))
}

/// Finishes a job under its account's lock, as [`plan_finish_write`] decides: writes
/// status, charge, who finished it and the event in one statement, then the suspension
/// and low-balance events it causes. Returns the job as written.
pub(crate) async fn finish_job(
    tx: &mut Tx,
    card: &RateCard,
    state: &mut AccountState,
    job: &Job,
    f: Finish<'_>,
) -> Result<Job, StoreError> {
    let (plan, write) = plan_finish_write(card, state, job, &f)?;
    let rows = tx.rows(&FINISH_JOB, write.params()).await?;
    let [row] = rows.as_slice() else {
        return Err(StoreError::Corrupt(format!(
            "finishing job {} wrote {} job rows",
            job.job_id,
            rows.len()
        )));
    };
    let before = state.snap.available_money();
    state.snap = plan.after;
    if let Some(money) = plan.money {
        let entry_id = row.int("entry_id")?;
        emit_suspension(tx, &job.account_id, money.suspension, &state.snap, entry_id).await?;
    }
    let after = state.snap.available_money();
    emit_crossing(tx, card, &job.account_id, &state.snap, before, after).await?;
    if let Some(open) = state.open_jobs.as_mut()
        && job.status.is_open()
        && !f.status.is_open()
    {
        *open -= 1;
    }
    Ok(job_from(row)?.job)
}

/// Submit request.
#[derive(Debug, Clone)]
pub struct Submit {
    pub account: holdfast_core::AccountId,
    pub kind: String,
    pub payload: Option<serde_json::Value>,
    pub key: IdempotencyKey,
}

/// How a cancel was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// The job is canceled (now or already).
    Canceled,
    /// A running cooperative job was asked to stop.
    Requested,
}

/// One try of a submit under the account lock.
#[allow(clippy::large_enum_variant)] // returned once per try, never stored
enum Attempt {
    /// The answer: the job (new or a replay), or a refusal.
    Done(Result<Submitted, Refusal>),
    /// What the decision stood on was read before the lock and may be stale (a refill or
    /// a refusal would stand on it, or the write found it changed): read it again after
    /// the lock and decide again. Nothing was written.
    ReadAgain,
}

/// The parameters of `submit_job.sql`, and one item of `submit_jobs.sql` (by the same
/// names).
#[derive(serde::Serialize)]
pub(crate) struct SubmitWrite {
    account_id: String,
    key: String,
    request_hash: String,
    pub(crate) job_id: String,
    kind: String,
    lane: String,
    payload: Option<String>,
    hold: String,
    pub(crate) money_hold_micros: i64,
    pocket: Option<String>,
    pocket_hold: i64,
    now: i64,
    notice_at: i64,
    limit_at_submit: i64,
    open_at_submit: i64,
    seen_open_jobs: Option<i64>,
    seen_pockets: Option<String>,
    pub(crate) actor: String,
    currency: String,
}

impl Items for SubmitWrite {
    /// Submits as `submit_jobs` takes them on PostgreSQL: one array per field.
    fn columns(writes: &[SubmitWrite]) -> Params {
        columns!(writes;
            account_ids: account_id, keys: key, request_hashes: request_hash, job_ids: job_id,
            kinds: kind, lanes: lane, payloads: payload, holds: hold,
            money_hold_micros: money_hold_micros, pockets: pocket, pocket_holds: pocket_hold,
            nows: now, notice_ats: notice_at, limits_at_submit: limit_at_submit,
            open_at_submit: open_at_submit, actors: actor, currencies: currency)
    }
}

bind_by_name!(SubmitWrite {
    account_id,
    key,
    request_hash,
    job_id,
    kind,
    lane,
    payload,
    hold,
    money_hold_micros,
    pocket,
    pocket_hold,
    now,
    notice_at,
    limit_at_submit,
    open_at_submit,
    seen_open_jobs,
    seen_pockets,
    actor,
    currency,
});

impl SubmitWrite {
    pub(crate) fn new(
        card: &RateCard,
        state: &AccountState,
        req: &Submit,
        hash: &str,
        decision: SubmitDecision,
    ) -> Result<SubmitWrite, StoreError> {
        let (money_hold, pocket_hold) = match decision.hold.as_slice() {
            [] => (0, None),
            [h] if h.pocket == MONEY => (h.amount, None),
            [h] => (0, Some(h)),
            _ => return Err(StoreError::Corrupt("a hold of more than one pocket".into())),
        };
        let snap = &state.snap;
        let open = state.open_jobs()?;
        let unconfirmed = state.unconfirmed.as_ref();
        Ok(SubmitWrite {
            account_id: req.account.to_string(),
            key: req.key.as_str().to_owned(),
            request_hash: hash.to_owned(),
            job_id: uuid::Uuid::now_v7().to_string(),
            kind: req.kind.clone(),
            lane: decision.lane.clone(),
            payload: req.payload.as_ref().map(|p| p.to_string()),
            hold: serde_json::to_string(&decision.hold)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            money_hold_micros: money_hold,
            pocket: pocket_hold.map(|h| h.pocket.clone()),
            pocket_hold: pocket_hold.map_or(0, |h| h.amount),
            now: snap.now,
            notice_at: snap.now + card.timeouts.notice_delay_seconds * decide::MICROS_PER_SECOND,
            limit_at_submit: snap.concurrency_limit(card),
            open_at_submit: open + 1,
            seen_open_jobs: unconfirmed.map(|s| s.open_jobs),
            seen_pockets: unconfirmed.map(|s| s.pockets_json.clone()),
            actor: crate::actor::current(),
            currency: card.currency.clone(),
        })
    }
}

impl Store {
    /// Submits a job: hold its price and queue it, in one transaction. Idempotent by key.
    /// A refusal still commits the due refill and the activity: time passing is not the
    /// request's change.
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let kind = self.card().kind(&req.kind)?;
        let hash = submit_hash(req);
        let answer: Result<Submitted, Refusal> = in_write_tx!(self, |tx| async {
            let mut state = lock_account_with_extras(tx, &req.account).await?;
            loop {
                match self.try_submit(tx, &mut state, req, kind, &hash).await? {
                    Attempt::Done(answer) => return Ok(answer),
                    Attempt::ReadAgain => state.confirm(tx).await?,
                }
            }
        })?;
        Ok(answer?)
    }

    /// A submit under the account lock: a replay is answered as such; otherwise due
    /// refills are written, the core decides, and the hold and the job are written.
    async fn try_submit(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        req: &Submit,
        kind: &holdfast_core::ratecard::Kind,
        hash: &str,
    ) -> Result<Attempt, StoreError> {
        let key = req.key.as_str();
        let refills = state.snap.due_refills(self.card());
        if !refills.is_empty() {
            if state.unconfirmed.is_some() {
                return Ok(Attempt::ReadAgain);
            }
            // A replay changes nothing: its key is looked up before a refill is written.
            state.check_key(tx, key).await?;
        }
        if let Some(replay) = submit_replay(tx, state, key, hash).await? {
            return Ok(Attempt::Done(Ok(replay)));
        }
        let open = state.open_jobs()?;
        apply_refills(tx, &req.account, &mut state.snap, &refills).await?;
        match decide::decide_submit(&state.snap, open, kind, self.card()) {
            Ok(decision) => self.write_submit(tx, state, req, hash, decision).await,
            Err(_) if state.unconfirmed.is_some() => Ok(Attempt::ReadAgain),
            Err(refusal) => self.refuse_submit(tx, state, req, hash, refusal).await,
        }
    }

    /// A refused submit: still a replay when its key names an earlier submit (a new
    /// key's first use needs no look-up: the write claims it); else the activity is
    /// stamped and the refusal answered.
    async fn refuse_submit(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        req: &Submit,
        hash: &str,
        refusal: Refusal,
    ) -> Result<Attempt, StoreError> {
        state.check_key(tx, req.key.as_str()).await?;
        if let Some(replay) = submit_replay(tx, state, req.key.as_str(), hash).await? {
            return Ok(Attempt::Done(Ok(replay)));
        }
        self.stamp_activity(tx, &req.account, &mut state.snap)
            .await?;
        Ok(Attempt::Done(Err(refusal)))
    }

    /// Writes the hold and the job as decided, under the client's key.
    async fn write_submit(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        req: &Submit,
        hash: &str,
        decision: SubmitDecision,
    ) -> Result<Attempt, StoreError> {
        let write = SubmitWrite::new(self.card(), state, req, hash, decision)?;
        let rows = tx.rows(&SUBMIT_JOB, write.params()).await?;
        match rows.as_slice() {
            [row] if row.int("fresh")? == 0 => Ok(Attempt::ReadAgain),
            [row] if row.opt_text("job_id")?.is_some() => {
                let job = job_from(row)?.job;
                let before = state.snap.available_money();
                let after = before - write.money_hold_micros;
                let account = req.account.as_str();
                emit_crossing(tx, self.card(), account, &state.snap, before, after).await?;
                Ok(Attempt::Done(Ok(Submitted { job, replay: false })))
            }
            // Nothing written: the key is taken, by the earlier submit or another operation.
            [] | [_] => {
                let key = req.key.as_str();
                state.look_up(tx, &[key]).await?;
                match submit_replay(tx, state, key, hash).await? {
                    Some(replay) => Ok(Attempt::Done(Ok(replay))),
                    None => Err(StoreError::Corrupt("a taken key without its record".into())),
                }
            }
            _ => Err(StoreError::Corrupt(
                "a submit wrote more than one job".into(),
            )),
        }
    }

    pub async fn get_job(&self, job: &JobId) -> Result<Job, StoreError> {
        in_read_tx!(self, |tx| async {
            Ok(read_job(tx, job.as_str()).await?.job)
        })
    }

    /// Hands the oldest leasable job of `lane` to a worker, or `None`. Jobs of suspended
    /// or blocked accounts are skipped. Many workers never get the same job.
    pub async fn lease(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
    ) -> Result<Option<Lease>, StoreError> {
        self.check_lease_ask(lane, lease_seconds)?;
        let token = new_lease_token();
        in_write_tx!(self, |tx| async {
            let params = params! {
                lane: lane, lease_token: token.as_str(), lease_seconds: lease_seconds,
                worker_id: worker.as_str(), actor: crate::actor::current(),
            };
            match tx.maybe_row(&LEASE_JOB, params).await? {
                Some(row) => Ok(Some(lease_from(&row)?)),
                None => Ok(None),
            }
        })
    }

    /// A lease's lane and length, as the rate card allows them.
    pub(crate) fn check_lease_ask(&self, lane: &str, lease_seconds: i64) -> Result<(), StoreError> {
        self.card().check_lane(lane)?;
        decide::check_lease_seconds(lease_seconds, self.card().timeouts.stale_after_seconds)?;
        Ok(())
    }

    /// Extends a live lease by its length (core decides: `decide::check_heartbeat`);
    /// tells the worker whether a cancel was asked.
    pub async fn heartbeat(&self, job: &JobId, token: &str) -> Result<Heartbeat, StoreError> {
        crate::driver::db::refuse_nul_in(token)?;
        in_write_tx!(self, |tx| async {
            let row = tx
                .maybe_row(&LOCK_JOB_LEASE, params! { job_id: job.as_str() })
                .await?
                .ok_or(Refusal::JobNotFound)?;
            let now = row.int("now")?;
            decide::check_heartbeat(&job_from(&row)?.lease(), token, now)?;
            let row = tx
                .row(&EXTEND_LEASE, params! { job_id: job.as_str(), now: now })
                .await?;
            Ok(Heartbeat {
                lease_expires_at: row.int("lease_expires_at")?,
                cancel_requested: row.flag("cancel_requested")?,
            })
        })
    }

    /// Completes a job with its lease: captures the hold (or a partial capture ≤ held per
    /// pocket, the rest released). A repeat with the same token charges nothing more.
    pub async fn complete(
        &self,
        job: &JobId,
        token: &str,
        capture: Option<&[PocketAmount]>,
    ) -> Result<Job, StoreError> {
        in_write_tx!(self, |tx| async {
            self.complete_in(tx, job, token, capture).await
        })
    }

    /// [`Store::complete`] in a transaction of the caller's. A refusal is decided before
    /// anything is written, so it leaves the transaction usable.
    pub(crate) async fn complete_in(
        &self,
        tx: &mut Tx,
        job: &JobId,
        token: &str,
        capture: Option<&[PocketAmount]>,
    ) -> Result<Job, StoreError> {
        let (mut state, row) = lock_job(tx, job).await?;
        match complete_step(&row, &state, token, capture)? {
            None => Ok(row.job),
            Some(finish) => finish_job(tx, self.card(), &mut state, &row.job, finish).await,
        }
    }

    /// Fails a job with its lease: the hold is released, nothing is charged.
    pub async fn fail(
        &self,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        in_write_tx!(self, |tx| async {
            self.fail_in(tx, job, token, reason).await
        })
    }

    /// [`Store::fail`] in a transaction of the caller's; a refusal writes nothing.
    pub(crate) async fn fail_in(
        &self,
        tx: &mut Tx,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        let (mut state, row) = lock_job(tx, job).await?;
        match fail_step(&row, &state, token, reason)? {
            None => Ok(row.job),
            Some(finish) => finish_job(tx, self.card(), &mut state, &row.job, finish).await,
        }
    }

    /// Cancels a job: queued → canceled with the hold released, in one atomic step;
    /// running → `already_started`, or a cooperative cancel request.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut state, row) = lock_job(tx, job).await?;
            let policy = self
                .card()
                .kinds
                .get(&row.job.kind)
                .map(|k| k.cancel_in_progress)
                .unwrap_or_default();
            match decide::decide_cancel(row.job.status, policy)? {
                CancelDecision::Repeat => Ok((row.job, CancelOutcome::Canceled)),
                CancelDecision::RequestCancel => {
                    tx.exec(&REQUEST_CANCEL, params! { job_id: job.as_str() })
                        .await?;
                    let job = read_job(tx, job.as_str()).await?.job;
                    Ok((job, CancelOutcome::Requested))
                }
                CancelDecision::CancelNow => {
                    let finish = Finish {
                        status: JobStatus::Canceled,
                        capture: 0,
                        finished_by: FinishedBy::Cancel,
                        reason: None,
                    };
                    let job = finish_job(tx, self.card(), &mut state, &row.job, finish).await?;
                    Ok((job, CancelOutcome::Canceled))
                }
            }
        })
    }
}

/// How a worker's complete with `token` (and `capture`, at most the hold) ends the job
/// locked as `row`: `None` for a repeat of it, which changes nothing.
pub(crate) fn complete_step(
    row: &JobRow,
    state: &AccountState,
    token: &str,
    capture: Option<&[PocketAmount]>,
) -> Result<Option<Finish<'static>>, Refusal> {
    let lines = decide::resolve_capture(&row.job.hold, capture)?;
    if let FinishCall::Repeat = check_lease(row, token, FinishedBy::Complete, state)? {
        return Ok(None);
    }
    Ok(Some(Finish {
        status: decide::complete_status(row.job.cancel_requested),
        capture: lines.iter().map(|l| l.capture).sum(),
        finished_by: FinishedBy::Complete,
        reason: None,
    }))
}

/// How a worker's fail with `token` ends the job locked as `row` (its hold released,
/// nothing charged): `None` for a repeat of it.
pub(crate) fn fail_step<'a>(
    row: &JobRow,
    state: &AccountState,
    token: &str,
    reason: Option<&'a str>,
) -> Result<Option<Finish<'a>>, Refusal> {
    // Refused here, as the request's own mistake, for a single fail and a batched one
    // alike: a batch binds it inside a document on SQLite, where the binding's own check
    // for NULs cannot see it.
    if reason.is_some_and(|r| r.contains('\0')) {
        let why = "reason: must not contain NUL characters";
        return Err(Refusal::InvalidRequest(why.into()));
    }
    if let FinishCall::Repeat = check_lease(row, token, FinishedBy::Fail, state)? {
        return Ok(None);
    }
    Ok(Some(Finish {
        status: JobStatus::Failed,
        capture: 0,
        finished_by: FinishedBy::Fail,
        reason,
    }))
}

/// The hash a submit's key records: its kind and payload.
pub(crate) fn submit_hash(req: &Submit) -> String {
    request_hash(&json!({ "op": "submit", "kind": req.kind, "payload": req.payload }))
}

/// The core's verdict on a finishing call's lease.
fn check_lease(
    row: &JobRow,
    token: &str,
    call: FinishedBy,
    state: &AccountState,
) -> Result<FinishCall, Refusal> {
    decide::check_finish_call(&row.lease(), token, call, state.snap.now)
}

/// The answer to an earlier submit under `key`, if the account knows one: the job as it
/// is now for the same request, `idempotency_mismatch` for another.
async fn submit_replay(
    tx: &mut Tx,
    state: &AccountState,
    key: &str,
    hash: &str,
) -> Result<Option<Submitted>, StoreError> {
    let Some(record) = state.replay(key, "submit", hash)? else {
        return Ok(None);
    };
    let job_id = record
        .job_id
        .clone()
        .ok_or_else(|| StoreError::Corrupt("submit record without job".into()))?;
    Ok(Some(Submitted {
        job: read_job(tx, &job_id).await?.job,
        replay: true,
    }))
}

/// The lease a leasing statement wrote: the job as it is now, its token and expiry.
pub(crate) fn lease_from(row: &Row) -> Result<Lease, StoreError> {
    let leased = job_from(row)?;
    let lease_expires_at = leased
        .job
        .lease_expires_at
        .ok_or_else(|| StoreError::Corrupt("lease without expiry".into()))?;
    let lease_token = leased
        .lease_token
        .ok_or_else(|| StoreError::Corrupt("lease without token".into()))?;
    Ok(Lease {
        job: leased.job,
        lease_token,
        lease_expires_at,
    })
}

pub(crate) fn new_lease_token() -> String {
    let bytes: [u8; 32] = rand::random();
    hex::encode(bytes)
}
