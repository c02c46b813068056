//! Read-only listings for operators: jobs by lane and status, newest first. Never locks,
//! never writes.

use holdfast_core::Refusal;
use holdfast_core::decide::JobStatus;

use crate::accounts::MAX_PAGE;
use crate::db::Tx;
use crate::error::StoreError;
use crate::jobs::job_from;
use crate::model::Job;
use crate::statement::Stmt;
use crate::store::Store;
use crate::{in_read_tx, params, statement};

/// Filters of a job listing; `None` matches everything.
#[derive(Debug, Clone)]
pub struct JobFilter {
    pub lane: Option<String>,
    pub status: Option<JobStatus>,
    pub account_id: Option<String>,
    /// 1 to [`MAX_PAGE`]; clamped.
    pub limit: i64,
}

static LIST_JOBS: Stmt = statement!("list_jobs");

impl Store {
    /// Jobs matching `filter`, newest first, at most `filter.limit`. A lane no kind uses is
    /// `unknown_lane` (a typo should not look like an empty queue).
    pub async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        if let Some(lane) = &filter.lane
            && !self.card().is_lane(lane)
        {
            return Err(Refusal::UnknownLane(lane.clone()).into());
        }
        let limit = filter.limit.clamp(1, MAX_PAGE);
        in_read_tx!(self, |tx| list_in(tx, filter, limit))
    }
}

async fn list_in(tx: &mut Tx, f: &JobFilter, limit: i64) -> Result<Vec<Job>, StoreError> {
    let filter = params! {
        lane: f.lane.clone(),
        status: f.status.map(JobStatus::as_str),
        account_id: f.account_id.clone(),
        limit: limit,
    };
    let rows = tx.rows(&LIST_JOBS, filter).await?;
    rows.iter().map(|r| Ok(job_from(r)?.job)).collect()
}
