//! Scheduled passes: the sweeper (expired leases and stale jobs) and the delayed notices.
//! Each is bounded per run and safe to run from several processes at once.

use holdfast_core::JobId;
use holdfast_core::decide::{JobStatus, MICROS_PER_SECOND};
use serde_json::json;

use crate::error::StoreError;
use crate::jobs::{Finish, finish_job, job_from};
use crate::model::PassReport;
use crate::statement::Stmt;
use crate::store::{Store, emit, lock_account_of_job};
use crate::{in_read_tx, in_write_tx, params, statement};
use holdfast_core::decide::FinishedBy;

/// The job, unless a worker holds it right now (then the next pass takes it), with the
/// account's pockets where they are read after the account lock.
static LOCK_JOB_IF_FREE: Stmt = statement!("lock_job_if_free");

/// How many jobs one chunk of a pass takes.
pub const CHUNK: i64 = 100;

static JOBS_WITH_LEASE_PASSED: Stmt = statement!(shared "sweep_jobs_with_lease_passed");
static STALE_OPEN_JOBS: Stmt = statement!(shared "sweep_stale_open_jobs");
static CLAIM_DUE_NOTICES: Stmt = statement!("notice_claim_due_jobs");

impl Store {
    /// Expires in-progress jobs whose lease passed and open jobs older than
    /// `stale_after_seconds`: releases their holds, marks them `expired`, revokes the lease,
    /// then emits `job.expired`. One job per short transaction (account lock first), at
    /// most `max_jobs` per run.
    pub async fn sweep(&self, max_jobs: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        loop {
            let budget = (max_jobs - report.processed).min(CHUNK as u64) as i64;
            if budget == 0 {
                break;
            }
            let candidates = self.sweep_candidates(budget).await?;
            let found = candidates.len();
            for job in candidates {
                if self.expire_one(&job).await? {
                    report.processed += 1;
                }
            }
            if (found as i64) < budget {
                break;
            }
        }
        Ok(report)
    }

    async fn sweep_candidates(&self, limit: i64) -> Result<Vec<JobId>, StoreError> {
        let stale_micros = self.card().timeouts.stale_after_seconds * MICROS_PER_SECOND;
        in_read_tx!(self, |tx| async {
            let now = crate::store::now(tx).await?;
            let mut rows = tx
                .rows(
                    &JOBS_WITH_LEASE_PASSED,
                    params! { now_micros: now, limit: limit },
                )
                .await?;
            let stale = params! { created_before_micros: now - stale_micros, limit: limit };
            rows.extend(tx.rows(&STALE_OPEN_JOBS, stale).await?);
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let job = JobId::parse(&r.text("job_id")?)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                if !out.contains(&job) {
                    out.push(job);
                }
            }
            out.truncate(limit as usize);
            Ok(out)
        })
    }

    /// Expires one job if it still qualifies. Another sweeper holding it is skipped.
    async fn expire_one(&self, job: &JobId) -> Result<bool, StoreError> {
        let stale_micros = self.card().timeouts.stale_after_seconds * MICROS_PER_SECOND;
        in_write_tx!(self, |tx| async {
            let (mut locked, Some(row)) =
                lock_account_of_job(tx, job.as_str(), &LOCK_JOB_IF_FREE).await?
            else {
                return Ok(false);
            };
            let row = job_from(&row)?;
            let j = &row.job;
            let now = locked.snap.now;
            let lease_passed =
                j.status == JobStatus::InProgress && j.lease_expires_at.is_some_and(|t| t <= now);
            let stale = j.status.is_open() && j.created_at <= now - stale_micros;
            if !(lease_passed || stale) {
                return Ok(false);
            }
            let reason = if lease_passed {
                "lease expired"
            } else {
                "stale: open longer than stale_after_seconds"
            };
            let finish = Finish {
                status: JobStatus::Expired,
                capture: 0,
                finished_by: FinishedBy::Sweep,
                reason: Some(reason),
            };
            finish_job(tx, self.card(), &mut locked, j, finish).await?;
            Ok(true)
        })
    }

    /// Emits `job.waiting` once for each open job whose `notice_at` has passed; a job that
    /// finished first gets nothing. At most `max_jobs` per run.
    pub async fn notices(&self, max_jobs: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        loop {
            let budget = (max_jobs - report.processed).min(CHUNK as u64) as i64;
            if budget == 0 {
                break;
            }
            let n: u64 = in_write_tx!(self, |tx| async {
                let now = crate::store::now(tx).await?;
                let rows = tx
                    .rows(
                        &CLAIM_DUE_NOTICES,
                        params! { now_micros: now, limit: budget },
                    )
                    .await?;
                for r in &rows {
                    let data = json!({ "kind": r.text("kind")?, "lane": r.text("lane")?, "status": r.text("status")? });
                    let job = r.text("job_id")?;
                    emit(
                        tx,
                        "job.waiting",
                        &r.text("account_id")?,
                        Some(&job),
                        data,
                        now,
                    )
                    .await?;
                }
                Ok::<u64, StoreError>(rows.len() as u64)
            })?;
            report.processed += n;
            if (n as i64) < budget {
                break;
            }
        }
        Ok(report)
    }
}
