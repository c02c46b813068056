//! Scheduled passes: the sweeper (expired leases and stale jobs) and the delayed notices.
//! Each is bounded per run and safe to run from several processes at once.

use holdfast_core::JobId;
use holdfast_core::decide::{self, JobStatus, MICROS_PER_SECOND, SweepFacts};
use serde_json::json;

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::PassReport;
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::finish::LockedJobs;
use crate::units::jobs::{Finish, finish_job};
use crate::units::writes::emit;
use crate::{in_read_tx, in_write_tx, params, statement};
use holdfast_core::decide::FinishedBy;

/// How many jobs one chunk of a pass takes.
pub const CHUNK: i64 = 100;

static JOBS_WITH_LEASE_PASSED: Stmt = statement!(shared "sweep_jobs_with_lease_passed");
static EXPIRABLE_OPEN_JOBS: Stmt = statement!("sweep_expirable_open_jobs");
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
        in_read_tx!(self, |tx| async {
            let now = crate::store::now(tx).await?;
            let mut rows = tx
                .rows(
                    &JOBS_WITH_LEASE_PASSED,
                    params! { now_micros: now, limit: limit },
                )
                .await?;
            rows.extend(
                tx.rows(&EXPIRABLE_OPEN_JOBS, self.clocks(now, limit))
                    .await?,
            );
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

    /// The parameters of `sweep_expirable_open_jobs.sql`: each kind's cutoffs at `now`.
    fn clocks(&self, now: i64, limit: i64) -> crate::driver::statement::Params {
        let before = |seconds: i64| now.saturating_sub(seconds.saturating_mul(MICROS_PER_SECOND));
        let card = self.card();
        let stale_before = before(card.timeouts.stale_after_seconds);
        let mut latest = stale_before;
        let mut kinds = serde_json::Map::new();
        for (name, kind) in &card.kinds {
            let t = kind.timeouts;
            let stale = before(t.stale_after_seconds);
            let queued = t.queued_expires_after_seconds.map(before);
            latest = latest.max(stale).max(queued.unwrap_or(i64::MIN));
            kinds.insert(
                name.clone(),
                json!({ "stale_before": stale, "queued_before": queued }),
            );
        }
        params! {
            kinds: serde_json::Value::Object(kinds).to_string(),
            stale_before: stale_before,
            latest_before: latest,
            limit: limit,
        }
    }

    /// Expires one job if it still qualifies (`core::decide::expiry`, under the locks of
    /// its account and itself, taken as a finish takes them): a job another sweeper or
    /// a worker finished meanwhile no longer qualifies.
    async fn expire_one(&self, job: &JobId) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut locked = LockedJobs::read(tx, self.card(), &[job.as_str()]).await?;
            let (row, state) = locked.only(job)?;
            let j = &row.job;
            let facts = SweepFacts {
                status: j.status,
                created_at: j.created_at,
                queued_since: row.queued_since.unwrap_or(j.created_at),
                lease_expires_at: j.lease_expires_at,
                account_suspended: state.snap.suspended_at.is_some(),
            };
            let timeouts = self.card().kind_timeouts(&j.kind);
            let Some(why) = decide::expiry(&facts, &timeouts, state.snap.now) else {
                return Ok(false);
            };
            let finish = Finish {
                status: JobStatus::Expired,
                capture: 0,
                finished_by: FinishedBy::Sweep,
                reason: Some(why.reason()),
            };
            finish_job(tx, self.card(), state, j, finish).await?;
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
            let n: u64 = in_write_tx!(self, across Some(CrossAccount::Notices), |tx| async {
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
