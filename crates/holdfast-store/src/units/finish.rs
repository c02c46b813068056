//! Finishing jobs: complete, fail and cancel, one or a worker's batch, through one unit
//! of work. One statement locks every job and its account (`lock_jobs_and_accounts`,
//! accounts first in sorted order, so two calls never deadlock), `holdfast_core::decide`
//! decides each item in request order on its account's state as the items before it
//! left it ([`complete_step`] / [`fail_step`] and [`decide_finish`]), and
//! [`write_finishes`] writes every job, entry, event and account row (`finish_jobs`). A
//! single call is a batch of one. A job named again later in a batch is decided on the
//! job as the earlier item left it (a repeat answers the job as written). A batch that
//! fails as a whole for a reason other than a refusal is rolled back and its items are
//! run one by one, so one bad item never fails the others and nothing is lost or done
//! twice. Leasing many jobs in one statement lives here too ([`Store::lease_many`]).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use holdfast_core::decide::{self, CancelDecision, FinishedBy, JobStatus, PocketAmount};
use holdfast_core::{AccountId, JobId, MONEY, RateCard, Refusal, WorkerId};

use crate::driver::db::{Arg, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{Job, Lease};
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::account_state::{AccountState, account_id_of};
use crate::units::jobs::{
    CancelOutcome, DecidedFinish, Finish, JobRow, complete_step, decide_finish, fail_step,
    finish_job, job_from, lease_from, read_job, write_finishes,
};
use crate::{in_write_tx, params, statement};

static LEASE_JOBS: Stmt = statement!("lease_jobs");
static REQUEST_CANCEL: Stmt = statement!(shared "request_cancel");
static LOCK_JOBS_AND_ACCOUNTS: Stmt = statement!("lock_jobs_and_accounts");

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

/// An item of a finishing call: the job it names, and how it decides.
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
fn check_batch_size(what: &str, n: usize) -> Result<(), StoreError> {
    if n == 0 || n > MAX_JOB_BATCH {
        return Err(
            Refusal::InvalidRequest(format!("{what}: 1 to {MAX_JOB_BATCH} jobs, got {n}")).into(),
        );
    }
    Ok(())
}

impl Store {
    /// Hands the oldest leasable job of `lane` to a worker, or `None`: a lease of one.
    /// Jobs of suspended or blocked accounts are skipped. Many workers never get the
    /// same job.
    pub async fn lease(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
    ) -> Result<Option<Lease>, StoreError> {
        Ok(self.lease_many(lane, worker, lease_seconds, 1).await?.pop())
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
        let max = i64::try_from(max_jobs).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mark = (max_jobs > 1).then_some(CrossAccount::LeaseJobs);
        in_write_tx!(self, across mark, |tx| async {
            let params = params! {
                lane: lane, max_jobs: max,
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

    /// Completes a job with its lease: captures the hold (or a partial capture ≤ held per
    /// pocket, the rest released). A repeat with the same token charges nothing more.
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

    /// Fails a job with its lease: the hold is released, nothing is charged.
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

    /// Cancels a job: queued → canceled with the hold released, in one atomic step;
    /// running → `already_started`, or a cooperative cancel request.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        in_write_tx!(self, |tx| async {
            let mut locked = LockedJobs::read(tx, self.card(), &[job.as_str()]).await?;
            let (row, state) = locked.only(job)?;
            let policy = self
                .card()
                .kinds
                .get(&row.job.kind)
                .map(|k| k.cancel_in_progress)
                .unwrap_or_default();
            match decide::decide_cancel(row.job.status, policy)? {
                CancelDecision::Repeat => Ok((row.job.clone(), CancelOutcome::Canceled)),
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
                    let job = finish_job(tx, self.card(), state, &row.job, finish).await?;
                    Ok((job, CancelOutcome::Canceled))
                }
            }
        })
    }

    /// Completes many jobs, each exactly as [`Store::complete`], in ONE transaction when
    /// it can (see [`Store::finish_many`]); answers in request order.
    pub async fn complete_many(&self, items: &[CompleteJob]) -> Result<JobAnswers, StoreError> {
        self.finish_many(items).await
    }

    /// Fails many jobs, each exactly as [`Store::fail`], in ONE transaction when it can
    /// (see [`Store::finish_many`]); answers in request order.
    pub async fn fail_many(&self, items: &[FailJob]) -> Result<JobAnswers, StoreError> {
        self.finish_many(items).await
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

    /// One item as a batch of one: its answer, a refusal as an error.
    async fn finish_one<T: FinishItem>(&self, item: &T) -> Result<Job, StoreError> {
        let answers = self.finish_batch(std::slice::from_ref(item)).await?;
        match <[_; 1]>::try_from(answers) {
            Ok([answer]) => Ok(answer?),
            Err(answers) => Err(StoreError::Corrupt(format!(
                "a finish of one job answered {} times",
                answers.len()
            ))),
        }
    }

    /// One transaction: every job and its account locked in one statement (accounts
    /// first, in sorted order, so two batches never deadlock), each item decided in
    /// request order, then everything written (see the module). A refusal is decided
    /// before its item writes anything, so it is that item's answer and the transaction
    /// goes on; any other error fails it all.
    async fn finish_batch<T: FinishItem>(
        &self,
        items: &[T],
    ) -> Result<Vec<Result<Job, Refusal>>, StoreError> {
        let job_ids: Vec<&str> = items.iter().map(|i| i.job().as_str()).collect();
        // Marked as it begins: its jobs may be of several accounts (a mark on a batch whose
        // jobs turn out to be of one account is harmless; one set after the locks would be
        // a round trip while they are held).
        let mark = (items.len() > 1).then_some(CrossAccount::FinishJobs);
        in_write_tx!(self, across mark, |tx| async {
            let mut locked = LockedJobs::read(tx, self.card(), &job_ids).await?;
            let decided = decide_batch(self.card(), items, &mut locked)?;
            write_batch(tx, decided).await
        })
    }
}

/// Jobs and their accounts, locked and read.
pub(crate) struct LockedJobs {
    jobs: HashMap<String, JobRow>,
    accounts: HashMap<String, AccountState>,
}

impl LockedJobs {
    /// Locks and reads the jobs and their accounts, and the pockets of the accounts whose
    /// jobs hold one.
    pub(crate) async fn read(
        tx: &mut Tx,
        card: &RateCard,
        job_ids: &[&str],
    ) -> Result<LockedJobs, StoreError> {
        let mut locked = Self::lock(tx, card, job_ids).await?;
        for job in locked.jobs.values() {
            if job.job.hold.iter().any(|l| l.pocket != MONEY) {
                let state = account_of(&mut locked.accounts, &job.job)?;
                state.read_pockets(tx).await?;
            }
        }
        Ok(locked)
    }

    /// Locks and reads the jobs and their accounts (the accounts' pockets not read; the
    /// period of a rule of spending marked).
    pub(crate) async fn lock(
        tx: &mut Tx,
        card: &RateCard,
        job_ids: &[&str],
    ) -> Result<LockedJobs, StoreError> {
        let params = params! { job_ids: Arg::texts(job_ids.iter().copied()) };
        let rows = tx.rows(&LOCK_JOBS_AND_ACCOUNTS, params).await?;
        let mut locked = LockedJobs {
            jobs: HashMap::with_capacity(rows.len()),
            accounts: HashMap::new(),
        };
        for row in &rows {
            let job = job_from(row)?;
            if let Entry::Vacant(new) = locked.accounts.entry(job.job.account_id.clone()) {
                let account: AccountId = account_id_of(row)?;
                new.insert(AccountState::from_job_row(&account, row)?);
            }
            locked.jobs.insert(job.job.job_id.clone(), job);
        }
        for state in locked.accounts.values_mut() {
            state.read_for_rules(tx, card).await?;
        }
        Ok(locked)
    }

    /// The job of a call of one, and its account; `job_not_found` if there is none.
    pub(crate) fn only(&mut self, job: &JobId) -> Result<(&JobRow, &mut AccountState), StoreError> {
        let row = self.jobs.get(job.as_str()).ok_or(Refusal::JobNotFound)?;
        Ok((row, account_of(&mut self.accounts, &row.job)?))
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
enum FinishAnswer {
    /// Its job as it was (a repeat), or the refusal.
    Answered(Result<Job, Refusal>),
    /// Finished: the job, to be read back from the write.
    Written(String),
}

/// Every item decided, in request order, and what the finished ones write.
struct FinishPlan {
    answers: Vec<FinishAnswer>,
    finishes: Vec<DecidedFinish>,
}

/// Decides each item on its account's state, and its job, as the items before it left
/// them, exactly as its single call decides.
fn decide_batch<T: FinishItem>(
    card: &RateCard,
    items: &[T],
    locked: &mut LockedJobs,
) -> Result<FinishPlan, StoreError> {
    let mut decided = FinishPlan {
        answers: Vec::with_capacity(items.len()),
        finishes: Vec::with_capacity(items.len()),
    };
    for item in items {
        let Some(row) = locked.jobs.get_mut(item.job().as_str()) else {
            decided
                .answers
                .push(FinishAnswer::Answered(Err(Refusal::JobNotFound)));
            continue;
        };
        let state = account_of(&mut locked.accounts, &row.job)?;
        let answer = match decide_item(card, item, row, state)? {
            ItemDecision::Refused(refused) => FinishAnswer::Answered(Err(refused)),
            // A repeat of an item before it in this batch: the job as that one wrote it.
            ItemDecision::Repeat
                if decided
                    .finishes
                    .iter()
                    .any(|f| f.job_id() == row.job.job_id) =>
            {
                FinishAnswer::Written(row.job.job_id.clone())
            }
            ItemDecision::Repeat => FinishAnswer::Answered(Ok(row.job.clone())),
            ItemDecision::Finish(finish) => {
                decided.finishes.push(finish);
                FinishAnswer::Written(row.job.job_id.clone())
            }
        };
        decided.answers.push(answer);
    }
    Ok(decided)
}

/// What one item does.
#[allow(clippy::large_enum_variant)] // returned once per item, never stored
enum ItemDecision {
    Refused(Refusal),
    Repeat,
    /// Its write.
    Finish(DecidedFinish),
}

/// Decides one item as its single call does; a finish is applied to the account's state
/// and the job's row, so the items after it see it.
fn decide_item<T: FinishItem>(
    card: &RateCard,
    item: &T,
    row: &mut JobRow,
    state: &mut AccountState,
) -> Result<ItemDecision, StoreError> {
    let finish = match item.step(row, state) {
        Err(refused) => return Ok(ItemDecision::Refused(refused)),
        Ok(None) => return Ok(ItemDecision::Repeat),
        Ok(Some(finish)) => finish,
    };
    let decided = match decide_finish(card, state, &row.job, &finish) {
        Err(StoreError::Refused(refused)) => return Ok(ItemDecision::Refused(refused)),
        Err(e) => return Err(e),
        Ok(decided) => decided,
    };
    row.job.status = finish.status;
    row.finished_by = Some(finish.finished_by.as_str().to_owned());
    Ok(ItemDecision::Finish(decided))
}

/// Writes the finished jobs ([`write_finishes`]); answers in request order.
async fn write_batch(
    tx: &mut Tx,
    decided: FinishPlan,
) -> Result<Vec<Result<Job, Refusal>>, StoreError> {
    let written = write_finishes(tx, decided.finishes).await?;
    let mut answers = Vec::with_capacity(decided.answers.len());
    for answer in decided.answers {
        answers.push(match answer {
            FinishAnswer::Answered(answer) => answer,
            FinishAnswer::Written(job_id) => match written.get(&job_id) {
                Some(job) => Ok(job.clone()),
                None => return Err(StoreError::Corrupt(format!("job {job_id}: not written"))),
            },
        });
    }
    Ok(answers)
}
