//! Jobs: as the service sees them (submit, read, list, cancel) and as workers do (lease,
//! heartbeat, complete, fail).

use holdfast_core::{JobId, PocketAmount, WorkerId};
use holdfast_store::{
    CancelOutcome, CompleteJob, FailJob, Heartbeat, Job, JobAnswers, JobFilter, Lease,
    QueuedSubmit, StoreError, Submit, Submitted,
};

use super::Engine;

impl Engine {
    /// Submits a job (holds its price and queues it, in one transaction; idempotent by
    /// key) and wakes a worker waiting on its lane.
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let queued = QueuedSubmit {
            req: req.clone(),
            actor: holdfast_store::actor::current(),
        };
        let submitted = self
            .submits
            .apply(&self.store, &req.account, queued)
            .await?;
        if !submitted.replay {
            self.lane_notify(&submitted.job.lane).notify_one();
        }
        Ok(submitted)
    }

    /// A job as it is now (`job_not_found` if none).
    pub async fn get_job(&self, job: &JobId) -> Result<Job, StoreError> {
        self.store.get_job(job).await
    }

    /// Jobs matching `filter`, newest first; a lane no kind uses is `unknown_lane`.
    pub async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        self.store.list_jobs(filter).await
    }

    /// Cancels a job: a queued one at once (its hold released); a running one is
    /// `already_started`, or asked to stop when its kind is cooperative.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        self.store.cancel(job).await
    }

    /// Hands the oldest leasable job of `lane` to `worker` for `lease_seconds`, or `None`
    /// when there is none now (this does not wait; see [`Engine::lane_notify`]).
    pub async fn lease(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
    ) -> Result<Option<Lease>, StoreError> {
        self.store.lease(lane, worker, lease_seconds).await
    }

    /// Extends a valid lease by its length; tells the worker whether a cancel was asked.
    pub async fn heartbeat(&self, job: &JobId, token: &str) -> Result<Heartbeat, StoreError> {
        self.store.heartbeat(job, token).await
    }

    /// Completes a job with its lease: captures the hold, or with `capture` each listed
    /// pocket up to its hold, the rest released. A repeat charges nothing more.
    pub async fn complete(
        &self,
        job: &JobId,
        token: &str,
        capture: Option<&[PocketAmount]>,
    ) -> Result<Job, StoreError> {
        self.store.complete(job, token, capture).await
    }

    /// Fails a job with its lease: the hold is released, nothing is charged.
    pub async fn fail(
        &self,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        self.store.fail(job, token, reason).await
    }

    /// Up to `max_jobs` (1 to 100) of the oldest leasable jobs of `lane`, in one
    /// statement, each with its own lease; none when there are none now (this does not
    /// wait).
    pub async fn lease_many(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
        max_jobs: usize,
    ) -> Result<Vec<Lease>, StoreError> {
        self.store
            .lease_many(lane, worker, lease_seconds, max_jobs)
            .await
    }

    /// Completes 1 to 100 jobs, each exactly as [`Engine::complete`], in one transaction
    /// when it can; one answer per item, in order.
    pub async fn complete_many(&self, items: &[CompleteJob]) -> Result<JobAnswers, StoreError> {
        self.store.complete_many(items).await
    }

    /// Fails 1 to 100 jobs, each exactly as [`Engine::fail`], in one transaction when it
    /// can; one answer per item, in order.
    pub async fn fail_many(&self, items: &[FailJob]) -> Result<JobAnswers, StoreError> {
        self.store.fail_many(items).await
    }
}
