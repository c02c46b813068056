//! Batched worker calls: lease many jobs in one statement, complete or fail many in one
//! transaction. Each item is exactly the single call ([`Store::lease`],
//! [`Store::complete`], [`Store::fail`]): same fencing by lease token, same charges, same
//! events, the same refusals. A batch that fails as a whole for a reason other than a
//! refusal is rolled back and its items are run one by one, so one bad item never fails
//! the others and nothing is lost or done twice.

use std::collections::BTreeSet;

use holdfast_core::decide::PocketAmount;
use holdfast_core::{JobId, Refusal, WorkerId};
use serde_json::json;

use crate::db::Tx;
use crate::error::StoreError;
use crate::jobs::{lease_from, new_lease_token};
use crate::model::{Job, Lease};
use crate::scope::CrossAccount;
use crate::statement::Stmt;
use crate::store::Store;
use crate::{in_write_tx, params, statement};

static LEASE_JOBS: Stmt = statement!("lease_jobs");
static ACCOUNTS_OF_JOBS: Stmt = statement!("accounts_of_jobs");
/// Locks accounts in sorted order of id (the lock order of every multi-account
/// transaction); the batch ingest's statement, shared.
static LOCK_ACCOUNTS: Stmt = statement!("lock_accounts");

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

/// An item of a batched finishing call: the job it names, and its single call in the
/// batch's transaction; alone, the same call in a transaction of its own.
trait FinishItem: Sync {
    fn job(&self) -> &JobId;

    fn finish_in<'a>(
        &'a self,
        store: &'a Store,
        tx: &'a mut Tx,
    ) -> impl Future<Output = Result<Job, StoreError>> + Send + 'a;

    fn finish_alone<'a>(
        &'a self,
        store: &'a Store,
    ) -> impl Future<Output = Result<Job, StoreError>> + Send + 'a {
        async move { in_write_tx!(store, |tx| self.finish_in(store, tx)) }
    }
}

impl FinishItem for CompleteJob {
    fn job(&self) -> &JobId {
        &self.job
    }

    fn finish_in<'a>(
        &'a self,
        store: &'a Store,
        tx: &'a mut Tx,
    ) -> impl Future<Output = Result<Job, StoreError>> + Send + 'a {
        store.complete_in(tx, &self.job, &self.lease_token, self.capture.as_deref())
    }
}

impl FinishItem for FailJob {
    fn job(&self) -> &JobId {
        &self.job
    }

    fn finish_in<'a>(
        &'a self,
        store: &'a Store,
        tx: &'a mut Tx,
    ) -> impl Future<Output = Result<Job, StoreError>> + Send + 'a {
        store.fail_in(tx, &self.job, &self.lease_token, self.reason.as_deref())
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
        in_write_tx!(self, |tx| async {
            if max_jobs > 1 {
                tx.across_accounts(CrossAccount::LeaseJobs).await?;
            }
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
                    answers.push(item.finish_alone(self).await);
                }
                Ok(answers)
            }
        }
    }

    /// One transaction: the accounts of the jobs are read, then locked in sorted order
    /// (so two batches never deadlock), then each item runs as its single call does, in
    /// request order. A refusal is decided before its item writes anything, so it is
    /// that item's answer and the transaction goes on; any other error fails it all.
    async fn finish_batch<T: FinishItem>(
        &self,
        items: &[T],
    ) -> Result<Vec<Result<Job, Refusal>>, StoreError> {
        let job_ids: Vec<&str> = items.iter().map(|i| i.job().as_str()).collect();
        let job_ids = json!(job_ids).to_string();
        in_write_tx!(self, |tx| async {
            let rows = tx
                .rows(&ACCOUNTS_OF_JOBS, params! { job_ids: job_ids.as_str() })
                .await?;
            let accounts = rows
                .iter()
                .map(|r| r.text("account_id"))
                .collect::<Result<BTreeSet<String>, _>>()?;
            if accounts.len() > 1 {
                tx.across_accounts(CrossAccount::FinishJobs).await?;
            }
            let accounts = json!(accounts).to_string();
            tx.rows(&LOCK_ACCOUNTS, params! { account_ids: accounts.as_str() })
                .await?;
            let mut answers = Vec::with_capacity(items.len());
            for item in items {
                answers.push(match item.finish_in(self, tx).await {
                    Ok(job) => Ok(job),
                    Err(StoreError::Refused(r)) => Err(r),
                    Err(e) => return Err(e),
                });
            }
            Ok(answers)
        })
    }
}
