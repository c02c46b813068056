//! Jobs: lease (one or many), heartbeat, cancel, reads. A job is queued by
//! [`crate::submit`] and ends through [`crate::finish`].

use holdfast_core::decide::{self, CancelDecision, FinishedBy, JobStatus, PocketAmount};
use holdfast_core::{JobId, MONEY, Micros, Refusal, WorkerId};
use serde_json::json;

use crate::account_state::{AccountState, lock_job_with_account};
use crate::db::{Row, Tx};
use crate::error::StoreError;
use crate::finish::{Finish, check_batch_size, finish_job};
use crate::model::{Heartbeat, Job, JobActors, Lease};
use crate::scope::CrossAccount;
use crate::statement::Stmt;
use crate::store::Store;
use crate::{in_read_tx, in_write_tx, params, statement};

static READ_JOB: Stmt = statement!(shared "read_job");
static LEASE_JOBS: Stmt = statement!("lease_jobs");
static HEARTBEAT_JOB: Stmt = statement!("heartbeat_job");
static REQUEST_CANCEL: Stmt = statement!(shared "request_cancel");
static JOBS_NAMED_BY_REFS: Stmt = statement!("jobs_named_by_refs");

/// A job row with what only the store sees (its lease token, who finished it).
pub(crate) struct JobRow {
    pub job: Job,
    pub lease_token: Option<String>,
    pub finished_by: Option<String>,
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

    /// Hands the oldest leasable job of `lane` to a worker, or `None`. Jobs of suspended
    /// or blocked accounts are skipped. Many workers never get the same job. A lease of
    /// at most one ([`Store::lease_many`]).
    pub async fn lease(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
    ) -> Result<Option<Lease>, StoreError> {
        let mut leases = self.lease_many(lane, worker, lease_seconds, 1).await?;
        Ok(leases.pop())
    }

    /// Hands up to `max_jobs` of the oldest leasable jobs of `lane` to a worker in ONE
    /// statement, each with a fresh token of its own, oldest first (none when there are
    /// none). The same rules as [`Store::lease`]: jobs of suspended, blocked or banned
    /// accounts are skipped; many workers never get the same job.
    pub async fn lease_many(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
        max_jobs: usize,
    ) -> Result<Vec<Lease>, StoreError> {
        self.check_lease_ask(lane, lease_seconds)?;
        check_batch_size("max_jobs", max_jobs)?;
        let tokens: Vec<String> = (0..max_jobs).map(|_| new_lease_token()).collect();
        let tokens = json!(tokens).to_string();
        let max = i64::try_from(max_jobs).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mark = (max_jobs > 1).then_some(CrossAccount::LeaseJobs);
        in_write_tx!(self, unit mark, |tx| async {
            let params = params! {
                lane: lane, lease_tokens: tokens.as_str(), max_jobs: max,
                lease_seconds: lease_seconds, worker_id: worker.as_str(),
                actor: crate::actor::current(),
            };
            let rows = tx.rows(&LEASE_JOBS, params).await?;
            let mut leases = rows.iter().map(lease_from).collect::<Result<Vec<_>, _>>()?;
            leases.sort_by(|a, b| {
                (a.job.created_at, &a.job.job_id).cmp(&(b.job.created_at, &b.job.job_id))
            });
            debug_assert!(leases.len() <= max_jobs);
            Ok(leases)
        })
    }

    /// A lease's lane and length, as the rate card allows them.
    pub(crate) fn check_lease_ask(&self, lane: &str, lease_seconds: i64) -> Result<(), StoreError> {
        if !self.card().is_lane(lane) {
            return Err(Refusal::UnknownLane(lane.to_owned()).into());
        }
        decide::check_lease_seconds(lease_seconds, self.card().timeouts.stale_after_seconds)?;
        Ok(())
    }

    /// Extends a valid lease by its length; tells the worker whether a cancel was asked.
    pub async fn heartbeat(&self, job: &JobId, token: &str) -> Result<Heartbeat, StoreError> {
        in_write_tx!(self, |tx| async {
            let params = params! { job_id: job.as_str(), lease_token: token };
            match tx.maybe_row(&HEARTBEAT_JOB, params).await? {
                Some(row) => Ok(Heartbeat {
                    lease_expires_at: row.int("lease_expires_at")?,
                    cancel_requested: row.flag("cancel_requested")?,
                }),
                None => {
                    read_job(tx, job.as_str()).await?;
                    Err(Refusal::LeaseLost.into())
                }
            }
        })
    }

    /// Cancels a job: queued → canceled with the hold released, in one atomic step;
    /// running → `already_started`, or a cooperative cancel request.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        in_write_tx!(self, unit None, |tx| async {
            let (mut state, mut row) = lock_job(tx, job).await?;
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
                    let job = finish_job(tx, self.card(), &mut state, &mut row, finish).await?;
                    Ok((job, CancelOutcome::Canceled))
                }
            }
        })
    }
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
