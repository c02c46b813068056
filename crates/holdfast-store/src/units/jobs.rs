//! Jobs and two-phase holds: submit (hold), lease, heartbeat, complete (capture), fail and
//! cancel (release). Each operation is one unit of work: lock, read, let
//! `holdfast_core::decide` decide, apply, commit.

use std::collections::HashMap;

use holdfast_core::decide::{
    self, AccountSnapshot, FinishCall, FinishError, FinishedBy, JobStatus, LeaseState,
    PocketAmount, SpendMarks, Suspension,
};
use holdfast_core::{JobId, MONEY, Micros, RateCard, Refusal};
use serde_json::json;

use crate::driver::db::{Row, Tx};
use crate::driver::statement::{Records, Stmt};
use crate::error::StoreError;
use crate::model::{Heartbeat, Job, JobActors, Lease};
use crate::store::Store;
use crate::units::account_state::{AccountState, write_spend_marks};
use crate::units::blocks::{ChangedBlocks, lines_text, write_blocks};
use crate::units::writes::{crossing_events, emit, emit_suspension, spend_thresholds};
use crate::{in_read_tx, in_write_tx, params, statement};

static READ_JOB: Stmt = statement!(shared "read_job");
static FINISH_JOBS: Stmt = statement!("finish_jobs");
static LOCK_JOB_LEASE: Stmt = statement!("lock_job_lease");
static EXTEND_LEASE: Stmt = statement!(shared "extend_lease");
static JOBS_NAMED_BY_REFS: Stmt = statement!("jobs_named_by_refs");

/// A job row with what only the store sees (its lease token, who finished it).
pub(crate) struct JobRow {
    pub job: Job,
    pub lease_token: Option<String>,
    pub finished_by: Option<String>,
    /// Since when it waits in its queue (the sweep's clock for queued jobs).
    pub queued_since: Option<i64>,
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
        queued_since: row.opt_int("queued_since")?,
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

/// A job's end as `finish_jobs` reads it (`:items`): on PostgreSQL a `finish_item`
/// (migration 0015: these fields in this order), on SQLite serialized as it is.
#[derive(Clone, serde::Serialize, sqlx::Type)]
#[sqlx(type_name = "finish_item")]
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
    entry_delta: i64,
    entry_amount_after: i64,
    entry_available_after: Option<i64>,
    entry_buffer_micros: Option<i64>,
    job_id: String,
    now: i64,
    status: String,
    charged: String,
    finished_by: String,
    failure_reason: Option<String>,
    event_type: String,
    event_data: String,
    actor: String,
    /// The credit blocks the capture took from, JSON text (NULL: none; migration 0018
    /// adds it last).
    entry_blocks: Option<String>,
}

impl Records for FinishWrite {
    fn texts(&self) -> impl Iterator<Item = &str> {
        let named = [
            &self.account_id,
            &self.job_id,
            &self.status,
            &self.charged,
            &self.finished_by,
            &self.event_type,
            &self.event_data,
            &self.actor,
        ];
        let maybe = [
            &self.pocket,
            &self.entry_pocket,
            &self.failure_reason,
            &self.entry_blocks,
        ];
        named
            .into_iter()
            .map(String::as_str)
            .chain(maybe.into_iter().filter_map(Option::as_deref))
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
            entry_blocks: entry.and_then(|e| lines_text(&e.blocks)),
            job_id: job.job_id.clone(),
            now: plan.after.now,
            status: f.status.as_str().to_owned(),
            charged: serde_json::to_string(&plan.charged)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            finished_by: f.finished_by.as_str().to_owned(),
            failure_reason: f.reason.map(str::to_owned),
            event_type: format!("job.{}", f.status.as_str()),
            event_data: data.to_string(),
            actor: crate::actor::current(),
        })
    }
}

/// A job's end as decided: its write, and the events besides the job's own that it
/// causes (a suspension's, a low-balance crossing's), emitted after its write.
pub(crate) struct DecidedFinish {
    write: FinishWrite,
    events: Option<FinishEvents>,
    /// The account's spending marks, where this finish changed them.
    marks: Option<SpendMarks>,
    /// The account's credit blocks this finish changed (released, captured).
    blocks: ChangedBlocks,
}

impl DecidedFinish {
    pub(crate) fn job_id(&self) -> &str {
        &self.write.job_id
    }
}

/// The events a finish causes besides its job's own, and the account they stand on.
struct FinishEvents {
    suspension: Suspension,
    crossings: Vec<(&'static str, serde_json::Value)>,
    snap: AccountSnapshot,
}

/// How `job` ends, as `core::decide::plan_finish` decides it on the account's state
/// (releases its hold, takes the capture), applied to the state: the finishes after it
/// see it.
pub(crate) fn decide_finish(
    card: &RateCard,
    state: &mut AccountState,
    job: &Job,
    f: &Finish<'_>,
) -> Result<DecidedFinish, StoreError> {
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
    let after = plan.after.available_money();
    let suspension = plan.money.map_or(Suspension::Unchanged, |m| m.suspension);
    let mut finished = plan.after;
    let mut crossings = crossing_events(card, &finished, before, after);
    crossings.extend(spend_thresholds(card, &mut finished));
    let events =
        (suspension != Suspension::Unchanged || !crossings.is_empty()).then(|| FinishEvents {
            suspension,
            crossings,
            snap: finished.clone(),
        });
    state.snap = finished;
    let marks = state.take_changed_marks();
    let blocks = state.take_changed_blocks();
    if let Some(open) = state.open_jobs.as_mut()
        && job.status.is_open()
        && !f.status.is_open()
    {
        *open -= 1;
    }
    Ok(DecidedFinish {
        write,
        events,
        marks,
        blocks,
    })
}

/// Finishes a job under its account's lock, as [`decide_finish`] decides; returns the
/// job as written.
pub(crate) async fn finish_job(
    tx: &mut Tx,
    card: &RateCard,
    state: &mut AccountState,
    job: &Job,
    f: Finish<'_>,
) -> Result<Job, StoreError> {
    let decided = decide_finish(card, state, job, &f)?;
    let mut written = write_finishes(tx, vec![decided]).await?;
    written
        .remove(&job.job_id)
        .ok_or_else(|| StoreError::Corrupt(format!("job {}: not written", job.job_id)))
}

/// Writes finishes in the order decided, in as few statements of `finish_jobs` as keep
/// the events in order: the finishes up to one that causes events besides its job's
/// own in one statement, then those events, and so on. Checks each job was written as
/// decided (its row, and one capture entry when it was charged); the jobs as written, by
/// id (a job finished twice: as last written).
pub(crate) async fn write_finishes(
    tx: &mut Tx,
    finishes: Vec<DecidedFinish>,
) -> Result<HashMap<String, Job>, StoreError> {
    let mut written = HashMap::with_capacity(finishes.len());
    let mut pending = Vec::with_capacity(finishes.len());
    for finish in finishes {
        let account = finish.write.account_id.clone();
        let job_id = finish.write.job_id.clone();
        if let Some(marks) = finish.marks {
            write_spend_marks(tx, &account, marks).await?;
        }
        write_blocks(tx, &account, &finish.blocks).await?;
        pending.push(finish.write);
        if let Some(events) = finish.events {
            let entry_id = write_finish_rows(tx, std::mem::take(&mut pending), &mut written)
                .await?
                .remove(&job_id)
                .flatten();
            if events.suspension != Suspension::Unchanged {
                let entry_id = entry_id.ok_or_else(|| {
                    StoreError::Corrupt(format!("job {job_id}: a suspension without its entry"))
                })?;
                emit_suspension(tx, &account, events.suspension, &events.snap, entry_id).await?;
            }
            for (event, data) in events.crossings {
                emit(tx, event, &account, None, data, events.snap.now).await?;
            }
        }
    }
    write_finish_rows(tx, pending, &mut written).await?;
    Ok(written)
}

/// One statement of [`write_finishes`]: adds the jobs written to `written`; answers the
/// capture entry of each (`None`: not charged).
async fn write_finish_rows(
    tx: &mut Tx,
    writes: Vec<FinishWrite>,
    written: &mut HashMap<String, Job>,
) -> Result<HashMap<String, Option<i64>>, StoreError> {
    if writes.is_empty() {
        return Ok(HashMap::new());
    }
    let charged: Vec<(String, i64)> = writes
        .iter()
        .map(|w| (w.job_id.clone(), i64::from(w.entry_delta != 0)))
        .collect();
    let params = tx.records("items", writes)?;
    let mut entries = HashMap::with_capacity(charged.len());
    let mut captures = HashMap::with_capacity(charged.len());
    for row in tx.rows(&FINISH_JOBS, params).await? {
        let job = job_from(&row)?.job;
        captures.insert(job.job_id.clone(), row.int("captures")?);
        entries.insert(job.job_id.clone(), row.opt_int("entry_id")?);
        written.insert(job.job_id.clone(), job);
    }
    for (job_id, charged) in charged {
        if captures.get(&job_id) != Some(&charged) {
            return Err(StoreError::Corrupt(format!(
                "finishing job {job_id} wrote {:?} (captures), decided {charged}",
                captures.get(&job_id)
            )));
        }
    }
    Ok(entries)
}

/// How a cancel was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// The job is canceled (now or already).
    Canceled,
    /// A running cooperative job was asked to stop.
    Requested,
}

impl Store {
    pub async fn get_job(&self, job: &JobId) -> Result<Job, StoreError> {
        in_read_tx!(self, |tx| async {
            Ok(read_job(tx, job.as_str()).await?.job)
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

/// The core's verdict on a finishing call's lease.
fn check_lease(
    row: &JobRow,
    token: &str,
    call: FinishedBy,
    state: &AccountState,
) -> Result<FinishCall, Refusal> {
    decide::check_finish_call(&row.lease(), token, call, state.snap.now)
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
