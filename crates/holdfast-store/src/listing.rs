//! Read-only listings for operators: jobs by lane and status, newest first. Never locks,
//! never writes.

use holdfast_core::Refusal;
use holdfast_core::decide::JobStatus;

use crate::accounts::MAX_PAGE;
use crate::args;
use crate::db::{Sql, Tx};
use crate::error::StoreError;
use crate::in_read_tx;
use crate::jobs::{job_columns, job_from};
use crate::model::Job;
use crate::store::Store;

/// Filters of a job listing; `None` matches everything.
#[derive(Debug, Clone)]
pub struct JobFilter {
    pub lane: Option<String>,
    pub status: Option<JobStatus>,
    pub account_id: Option<String>,
    /// 1 to [`MAX_PAGE`]; clamped.
    pub limit: i64,
}

const LIST_JOBS: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE ($1::text IS NULL OR lane = $1) AND ($2::text IS NULL OR status = $2) \
         AND ($3::text IS NULL OR account_id = $3) ORDER BY created_at DESC, job_id DESC LIMIT $4"
    ),
    sqlite: concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE ($1 IS NULL OR lane = $1) AND ($2 IS NULL OR status = $2) \
         AND ($3 IS NULL OR account_id = $3) ORDER BY created_at DESC, job_id DESC LIMIT $4"
    ),
};

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
    let rows = tx
        .fetch_all(
            LIST_JOBS,
            args![
                f.lane.clone(),
                f.status.map(JobStatus::as_str),
                f.account_id.clone(),
                limit
            ],
        )
        .await?;
    rows.iter().map(|r| Ok(job_from(r)?.job)).collect()
}
