//! Finishing jobs: ONE unit of work for every end of a job, whatever the call's size. A
//! worker's complete or fail of one job ([`Store::complete`], [`Store::fail`]) is a batch
//! of one through the statements of a batched complete or fail ([`Store::complete_many`],
//! [`Store::fail_many`]); a cancel, a ban's cancels and the sweeper's expiry decide their
//! job's end with the same [`decide_finish`] and write it with the same
//! [`write_finishes`].
//!
//! Set-based: one statement locks every job and its account (`lock_jobs_and_accounts`),
//! `holdfast_core::decide` decides each item in request order on its account's state and
//! its job as the items before it left them (fencing by lease token, the capture, the
//! release, suspension, the low-balance line), and one statement writes every job, entry,
//! end event and account row (`finish_jobs`); the events an item causes besides its
//! job's own (a change of suspension, a low-balance crossing) are written right after
//! its own, so every event keeps the order decided (a run of ends that cause none is one
//! statement). A job named again later in the call is decided on the job as the
//! earlier item left it (a repeat answers the job as written). A refusal is decided
//! before anything is written: it is its item's answer, and the others go on. A call that
//! fails as a whole for another reason is rolled back and its items are run one by one,
//! so one bad item never fails the others and nothing is lost or done twice.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use holdfast_core::decide::{
    self, AccountSnapshot, FinishCall, FinishError, FinishedBy, JobStatus, LeaseState,
    PocketAmount, Suspension,
};
use holdfast_core::{AccountId, JobId, MONEY, RateCard, Refusal};
use serde_json::json;

use crate::account_state::{AccountState, account_id_of};
use crate::db::Tx;
use crate::error::{StoreError, answer_of_one};
use crate::jobs::{JobRow, job_from, lines_json};
use crate::model::Job;
use crate::scope::CrossAccount;
use crate::statement::{Params, Stmt};
use crate::store::Store;
use crate::writes::{crossing_event, emit, emit_suspension, items_params};
use crate::{columns, in_write_tx, params, statement};

static LOCK_JOBS_AND_ACCOUNTS: Stmt = statement!("lock_jobs_and_accounts");
static FINISH_JOBS: Stmt = statement!("finish_jobs");

/// Most jobs one batched call leases, completes or fails.
pub const MAX_JOB_BATCH: usize = 100;

/// One job of a batched complete: the single call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteJob {
    pub job: JobId,
    pub lease_token: String,
    pub capture: Option<Vec<PocketAmount>>,
}

/// One job of a batched fail: the single call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailJob {
    pub job: JobId,
    pub lease_token: String,
    pub reason: Option<String>,
}

/// Each item's answer, in request order: the job, or why not (a refusal, or, for an item
/// run alone after its batch failed, that item's own error).
pub type JobAnswers = Vec<Result<Job, StoreError>>;

/// An item of a finishing call: the job it names, and how it ends that job.
trait FinishItem: Sync {
    fn job(&self) -> &JobId;

    /// How the call decides on the job locked as `row`: `None` for a repeat.
    fn step(&self, row: &JobRow, state: &AccountState) -> Result<Option<Finish<'_>>, Refusal>;
}

impl FinishItem for CompleteJob {
    fn job(&self) -> &JobId {
        &self.job
    }

    fn step(&self, row: &JobRow, state: &AccountState) -> Result<Option<Finish<'_>>, Refusal> {
        complete_step(row, state, &self.lease_token, self.capture.as_deref())
    }
}

impl FinishItem for FailJob {
    fn job(&self) -> &JobId {
        &self.job
    }

    fn step(&self, row: &JobRow, state: &AccountState) -> Result<Option<Finish<'_>>, Refusal> {
        fail_step(row, state, &self.lease_token, self.reason.as_deref())
    }
}

/// 1 to [`MAX_JOB_BATCH`] items, or `invalid_request`.
pub(crate) fn check_batch_size(what: &str, n: usize) -> Result<(), StoreError> {
    if n == 0 || n > MAX_JOB_BATCH {
        return Err(
            Refusal::InvalidRequest(format!("{what}: 1 to {MAX_JOB_BATCH} jobs, got {n}")).into(),
        );
    }
    Ok(())
}

impl Store {
    /// Completes a job with its lease: captures the hold (or a partial capture ≤ held per
    /// pocket, the rest released). A repeat with the same token charges nothing more. A
    /// batch of one.
    pub async fn complete(
        &self,
        job: &JobId,
        token: &str,
        capture: Option<&[PocketAmount]>,
    ) -> Result<Job, StoreError> {
        let item = CompleteJob {
            job: job.clone(),
            lease_token: token.to_owned(),
            capture: capture.map(<[PocketAmount]>::to_vec),
        };
        self.finish_one(&item).await
    }

    /// Fails a job with its lease: the hold is released, nothing is charged. A batch of
    /// one.
    pub async fn fail(
        &self,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        let item = FailJob {
            job: job.clone(),
            lease_token: token.to_owned(),
            reason: reason.map(str::to_owned),
        };
        self.finish_one(&item).await
    }

    /// Completes many jobs, each answered as alone, in ONE transaction when it can (see
    /// [`Store::finish_many`]); answers in request order.
    pub async fn complete_many(&self, items: &[CompleteJob]) -> Result<JobAnswers, StoreError> {
        self.finish_many(items).await
    }

    /// Fails many jobs, each answered as alone, in ONE transaction when it can (see
    /// [`Store::finish_many`]); answers in request order.
    pub async fn fail_many(&self, items: &[FailJob]) -> Result<JobAnswers, StoreError> {
        self.finish_many(items).await
    }

    /// One item in a transaction of its own, its refusal answered as the error it is.
    async fn finish_one<T: FinishItem>(&self, item: &T) -> Result<Job, StoreError> {
        answer_of_one(self.finish_batch(std::slice::from_ref(item)).await?)
    }

    /// The batch in one transaction; when that fails as a whole (anything but a refusal,
    /// which is an item's answer and writes nothing), it was rolled back and each item is
    /// run on its own. An outage or a full disk ends the call instead: each item alone
    /// would fail the same way, and nothing of the batch was written.
    async fn finish_many<T: FinishItem>(&self, items: &[T]) -> Result<JobAnswers, StoreError> {
        check_batch_size("items", items.len())?;
        match self.finish_batch(items).await {
            Ok(answers) => Ok(answers
                .into_iter()
                .map(|a| a.map_err(StoreError::Refused))
                .collect()),
            Err(e @ (StoreError::Unavailable(_) | StoreError::DiskFull(_))) => Err(e),
            Err(e) => {
                tracing::warn!(error = %e, items = items.len(), "job batch failed; finishing its jobs one by one");
                let mut answers = Vec::with_capacity(items.len());
                for item in items {
                    answers.push(self.finish_one(item).await);
                }
                Ok(answers)
            }
        }
    }

    /// One transaction: every job and its account locked in one statement (accounts
    /// first, in sorted order, so two batches never deadlock), each item decided in
    /// request order, then everything written ([`write_finishes`]). A refusal is decided
    /// before its item writes anything, so it is that item's answer and the transaction
    /// goes on; any other error fails it all.
    async fn finish_batch<T: FinishItem>(
        &self,
        items: &[T],
    ) -> Result<Vec<Result<Job, Refusal>>, StoreError> {
        let job_ids: Vec<&str> = items.iter().map(|i| i.job().as_str()).collect();
        let job_ids = json!(job_ids).to_string();
        // Marked as it begins: its jobs may be of several accounts (a mark on a batch whose
        // jobs turn out to be of one account is harmless; one set after the locks would be
        // a round trip while they are held).
        let mark = (items.len() > 1).then_some(CrossAccount::FinishJobs);
        in_write_tx!(self, unit mark, |tx| async {
            let mut locked = Locked::read(tx, &job_ids).await?;
            let decided = decide_batch(self.card(), items, &mut locked)?;
            let written = write_finishes(tx, &decided.finishes).await?;
            let mut answers = Vec::with_capacity(decided.answers.len());
            for answer in decided.answers {
                answers.push(match answer {
                    Decided::Answered(answer) => answer,
                    Decided::Written(job_id) => match written.get(&job_id) {
                        Some(job) => Ok(job.clone()),
                        None => {
                            let why = format!("job {job_id}: decided, not written");
                            return Err(StoreError::Corrupt(why));
                        }
                    },
                });
            }
            Ok(answers)
        })
    }
}

/// The jobs of a batch and their accounts, locked and read.
struct Locked {
    jobs: HashMap<String, JobRow>,
    accounts: HashMap<String, AccountState>,
}

impl Locked {
    /// Locks and reads the jobs (JSON array `job_ids`) and their accounts, and the
    /// pockets of the accounts whose jobs hold one.
    async fn read(tx: &mut Tx, job_ids: &str) -> Result<Locked, StoreError> {
        let rows = tx
            .rows(&LOCK_JOBS_AND_ACCOUNTS, params! { job_ids: job_ids })
            .await?;
        let mut locked = Locked {
            jobs: HashMap::with_capacity(rows.len()),
            accounts: HashMap::new(),
        };
        for row in &rows {
            let job = job_from(row)?;
            if let Entry::Vacant(new) = locked.accounts.entry(job.job.account_id.clone()) {
                let account: AccountId = account_id_of(row)?;
                new.insert(AccountState::from_row(&account, row)?);
            }
            locked.jobs.insert(job.job.job_id.clone(), job);
        }
        for job in locked.jobs.values() {
            if job.job.hold.iter().any(|l| l.pocket != MONEY) {
                let state = account_of(&mut locked.accounts, &job.job)?;
                state.read_pockets(tx).await?;
            }
        }
        Ok(locked)
    }
}

fn account_of<'s>(
    accounts: &'s mut HashMap<String, AccountState>,
    job: &Job,
) -> Result<&'s mut AccountState, StoreError> {
    accounts
        .get_mut(&job.account_id)
        .ok_or_else(|| StoreError::Corrupt(format!("job {}: its account not locked", job.job_id)))
}

/// An item's answer as decided, before the write.
#[allow(clippy::large_enum_variant)] // one per item of a batch, moved once into the answer
enum Decided {
    /// Its job as it was (a repeat), or the refusal.
    Answered(Result<Job, Refusal>),
    /// Finished: the job, to be read back from the write.
    Written(String),
}

/// Every item decided, in request order, and the ends of the jobs finished.
struct DecidedBatch {
    answers: Vec<Decided>,
    finishes: Vec<DecidedFinish>,
}

/// Decides each item on its account's state, and its job, as the items before it left
/// them.
fn decide_batch<T: FinishItem>(
    card: &RateCard,
    items: &[T],
    locked: &mut Locked,
) -> Result<DecidedBatch, StoreError> {
    let mut decided = DecidedBatch {
        answers: Vec::with_capacity(items.len()),
        finishes: Vec::with_capacity(items.len()),
    };
    for item in items {
        let Some(row) = locked.jobs.get_mut(item.job().as_str()) else {
            decided
                .answers
                .push(Decided::Answered(Err(Refusal::JobNotFound)));
            continue;
        };
        let state = account_of(&mut locked.accounts, &row.job)?;
        let job_id = row.job.job_id.clone();
        let answer = match item.step(row, state) {
            Err(refused) => Decided::Answered(Err(refused)),
            // A repeat of an item before it in this batch: the job as that one wrote it.
            Ok(None) if decided.finishes.iter().any(|f| f.write.job_id == job_id) => {
                Decided::Written(job_id)
            }
            Ok(None) => Decided::Answered(Ok(row.job.clone())),
            Ok(Some(finish)) => match decide_finish(card, state, row, &finish) {
                Err(StoreError::Refused(refused)) => Decided::Answered(Err(refused)),
                Err(e) => return Err(e),
                Ok(ended) => {
                    decided.finishes.push(ended);
                    Decided::Written(job_id)
                }
            },
        };
        decided.answers.push(answer);
    }
    Ok(decided)
}

/// How a job ends.
pub(crate) struct Finish<'a> {
    pub status: JobStatus,
    /// What is taken from the hold (at most the hold); the rest of it is released.
    pub capture: i64,
    pub finished_by: FinishedBy,
    pub reason: Option<&'a str>,
}

/// One job's end as `finish_jobs.sql` writes it (by the same names).
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

impl FinishWrite {
    /// Finishes as `finish_jobs` takes them on PostgreSQL: one array per field.
    fn columns(writes: &[&FinishWrite]) -> Params {
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

/// A job's end as decided on its account's state: its write, and the events it causes
/// besides the job's own (a change of suspension, a low-balance crossing), written after
/// the jobs in the order decided.
pub(crate) struct DecidedFinish {
    write: FinishWrite,
    suspension: Suspension,
    /// The account as this finish left it (the suspension event's balance and time).
    after: AccountSnapshot,
    crossing: Option<(&'static str, serde_json::Value)>,
}

/// Decides how `job` ends on its account's state (`core::decide::plan_finish`: its hold
/// released, the capture taken), and applies it to the state and the job's row, so a
/// finish decided after it sees it.
pub(crate) fn decide_finish(
    card: &RateCard,
    state: &mut AccountState,
    row: &mut JobRow,
    f: &Finish<'_>,
) -> Result<DecidedFinish, StoreError> {
    let job = &row.job;
    let buffer = state.snap.buffer(card);
    let plan =
        decide::plan_finish(&state.snap, &job.hold, f.capture, buffer).map_err(|e| match e {
            FinishError::Refused(r) => StoreError::Refused(r),
            FinishError::Inconsistent(what) => {
                StoreError::Corrupt(format!("job {}: {what}", job.job_id))
            }
        })?;
    let write = FinishWrite::new(job, &plan, f)?;
    let before = state.snap.available_money();
    let crossing = crossing_event(card, &plan.after, before, plan.after.available_money());
    let suspension = plan.money.map_or(Suspension::Unchanged, |m| m.suspension);
    if let Some(open) = state.open_jobs.as_mut()
        && job.status.is_open()
        && !f.status.is_open()
    {
        *open -= 1;
    }
    state.snap = plan.after;
    row.job.status = f.status;
    row.finished_by = Some(f.finished_by.as_str().to_owned());
    Ok(DecidedFinish {
        write,
        suspension,
        after: state.snap.clone(),
        crossing,
    })
}

/// Ends one job locked with its account (a cancel, a ban's cancels, the sweeper's
/// expiry): [`decide_finish`], then the one write every finish goes through
/// ([`write_finishes`]). Returns the job as written.
pub(crate) async fn finish_job(
    tx: &mut Tx,
    card: &RateCard,
    state: &mut AccountState,
    row: &mut JobRow,
    f: Finish<'_>,
) -> Result<Job, StoreError> {
    let decided = decide_finish(card, state, row, &f)?;
    let job_id = decided.write.job_id.clone();
    let mut written = write_finishes(tx, &[decided]).await?;
    written
        .remove(&job_id)
        .ok_or_else(|| StoreError::Corrupt(format!("job {job_id}: not written")))
}

/// Writes the decided ends of jobs (`finish_jobs`: account rows, pockets, capture
/// entries, the jobs' own events, the job rows), checks each was written as decided (its
/// row, and one capture entry when it was charged), and writes the suspension and
/// low-balance events each caused right after its own, so every event keeps the order
/// decided: ONE statement for a run of ends that cause no other event, and a run ends at
/// an end that causes one. The jobs as written, by id.
pub(crate) async fn write_finishes(
    tx: &mut Tx,
    decided: &[DecidedFinish],
) -> Result<HashMap<String, Job>, StoreError> {
    let mut written = HashMap::with_capacity(decided.len());
    for run in decided.split_inclusive(DecidedFinish::causes_events) {
        let entries = write_run(tx, run, &mut written).await?;
        let Some(last) = run.last().filter(|d| d.causes_events()) else {
            continue;
        };
        let account = &last.write.account_id;
        if last.suspension != Suspension::Unchanged {
            let entry_id = entries.get(&last.write.job_id).copied().flatten();
            let entry_id = entry_id.ok_or_else(|| {
                let job = &last.write.job_id;
                StoreError::Corrupt(format!("job {job}: a suspension without its capture"))
            })?;
            emit_suspension(tx, account, last.suspension, &last.after, entry_id).await?;
        }
        if let Some((event, data)) = &last.crossing {
            emit(tx, event, account, None, data.clone(), last.after.now).await?;
        }
    }
    Ok(written)
}

impl DecidedFinish {
    /// Whether this end causes an event besides its job's own.
    fn causes_events(&self) -> bool {
        self.suspension != Suspension::Unchanged || self.crossing.is_some()
    }
}

/// Writes a run of ends in one statement into `written`, checking each; the capture
/// entry of each job, by id.
async fn write_run(
    tx: &mut Tx,
    run: &[DecidedFinish],
    written: &mut HashMap<String, Job>,
) -> Result<HashMap<String, Option<i64>>, StoreError> {
    let writes: Vec<&FinishWrite> = run.iter().map(|d| &d.write).collect();
    let params = items_params(
        tx.dialect(),
        "finish_jobs",
        "items",
        &writes,
        FinishWrite::columns,
    )?;
    let mut captures = HashMap::with_capacity(run.len());
    let mut entries = HashMap::with_capacity(run.len());
    for row in tx.rows(&FINISH_JOBS, params).await? {
        let job = job_from(&row)?.job;
        captures.insert(job.job_id.clone(), row.int("captures")?);
        entries.insert(job.job_id.clone(), row.opt_int("capture_entry_id")?);
        written.insert(job.job_id.clone(), job);
    }
    for write in writes {
        let charged = i64::from(write.entry_delta != 0);
        let found = captures.get(&write.job_id);
        if found != Some(&charged) {
            return Err(StoreError::Corrupt(format!(
                "finishing job {} wrote {found:?} (captures), decided {charged}",
                write.job_id
            )));
        }
    }
    Ok(entries)
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
    // Refused here, as the request's own mistake before any state's: the write binds it
    // inside a document on SQLite, where the binding's own check cannot see it.
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

/// The core's verdict on a finishing call's lease.
fn check_lease(
    row: &JobRow,
    token: &str,
    call: FinishedBy,
    state: &AccountState,
) -> Result<FinishCall, Refusal> {
    let lease = LeaseState {
        status: row.job.status,
        lease_token: row.lease_token.as_deref(),
        lease_expires_at: row.job.lease_expires_at,
        finished_by: row.finished_by.as_deref(),
    };
    decide::check_finish_call(&lease, token, call, state.snap.now)
}
