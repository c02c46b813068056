//! Read-only listings for operators: jobs by lane and status, newest first; accounts by
//! id, plan and status. Never locks, never writes.

use holdfast_core::decide::JobStatus;
use holdfast_core::{AccountId, AccountStatus};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{AccountView, Job};
use crate::store::Store;
use crate::units::account_state::{AccountState, account_id_of};
use crate::units::accounts::MAX_PAGE;
use crate::units::jobs::job_from;
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

static LIST_JOBS_OF_ACCOUNT: Stmt = statement!("list_jobs_of_account");
static LIST_JOBS_OF_LANE_AND_STATUS: Stmt = statement!(shared "list_jobs_of_lane_and_status");
static LIST_ACCOUNTS: Stmt = statement!("list_accounts");

/// Filters of an account listing; `None` matches everything.
#[derive(Debug, Clone, Default)]
pub struct AccountFilter {
    pub plan: Option<String>,
    pub status: Option<AccountStatus>,
    /// Only ids that start with this.
    pub prefix: Option<String>,
    /// The last id of the previous page.
    pub after: Option<AccountId>,
    /// 1 to [`MAX_PAGE`]; clamped.
    pub limit: i64,
}

impl Store {
    /// Jobs matching `filter`, newest first, at most `filter.limit`. A lane no kind uses is
    /// `unknown_lane` (a typo should not look like an empty queue).
    pub async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        if let Some(lane) = &filter.lane {
            self.card().check_lane(lane)?;
        }
        let limit = filter.limit.clamp(1, MAX_PAGE);
        let lanes = self.card().lanes();
        in_read_tx!(self, |tx| list_in(tx, filter, limit, &lanes))
    }
}

impl Store {
    /// Accounts matching `filter` in id order, after `filter.after`, at most
    /// `filter.limit`, each as [`Store::get_account`] shows it; `next` is the last id
    /// listed (or `after` when none is). A plan the card does not have is `unknown_plan`.
    pub async fn list_accounts(&self, filter: &AccountFilter) -> Result<AccountPage, StoreError> {
        if let Some(plan) = &filter.plan {
            self.card().check_plan(plan)?;
        }
        let limit = filter.limit.clamp(1, MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let params = params! {
                after_account_id: filter.after.as_ref().map_or("", |a| a.as_str()),
                prefix: filter.prefix.clone().unwrap_or_default(),
                plan: filter.plan.clone(),
                status: filter.status.map(AccountStatus::as_str),
                limit: limit,
            };
            let rows = tx.rows(&LIST_ACCOUNTS, params).await?;
            let mut accounts = Vec::with_capacity(rows.len());
            for row in &rows {
                let mut state = AccountState::from_row(&account_id_of(row)?, row)?;
                state.read_for_rules(tx, self.card()).await?;
                accounts.push(state.view(self.card())?);
            }
            let next = accounts
                .last()
                .map(|a| a.account_id.clone())
                .or_else(|| filter.after.as_ref().map(|a| a.to_string()));
            Ok(AccountPage { accounts, next })
        })
    }
}

/// A page of accounts and the cursor to pass next.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AccountPage {
    pub accounts: Vec<AccountView>,
    pub next: Option<String>,
}

/// `f`'s jobs, newest first; `all_lanes` are the card's, read when `f` names no lane.
async fn list_in(
    tx: &mut Tx,
    f: &JobFilter,
    limit: i64,
    all_lanes: &[String],
) -> Result<Vec<Job>, StoreError> {
    // A statement per shape of filter that has an index to read: one statement with
    // every filter optional is planned once for all of them on PostgreSQL (after five
    // calls) and can use no index on SQLite, so it sorted every job of a big database.
    // Without an account, every (lane, status) the filter leaves open is read newest first
    // by `jobs_by_lane_status` and the pages merged: a lane alone, or no filter at all,
    // then costs lanes × statuses short index reads, not a sort of every job (BENCHMARKS.md,
    // issue #14). An index on (lane, created_at) would do it in one read, but the lease
    // would then read a lane's queue through it instead of `jobs_queue` (tests/lanes.rs).
    if f.account_id.is_some() {
        return list_shape(tx, &LIST_JOBS_OF_ACCOUNT, f, limit).await;
    }
    let lanes = f
        .lane
        .clone()
        .map_or_else(|| all_lanes.to_vec(), |l| vec![l]);
    let statuses: Vec<JobStatus> = f
        .status
        .map_or_else(|| JobStatus::ALL.to_vec(), |s| vec![s]);
    let mut jobs = Vec::new();
    for lane in &lanes {
        for &status in &statuses {
            let one = JobFilter {
                lane: Some(lane.clone()),
                status: Some(status),
                account_id: None,
                limit,
            };
            jobs.extend(list_shape(tx, &LIST_JOBS_OF_LANE_AND_STATUS, &one, limit).await?);
        }
    }
    jobs.sort_by(|a, b| (b.created_at, &b.job_id).cmp(&(a.created_at, &a.job_id)));
    jobs.truncate(usize::try_from(limit).unwrap_or(0));
    Ok(jobs)
}

async fn list_shape(
    tx: &mut Tx,
    stmt: &'static Stmt,
    f: &JobFilter,
    limit: i64,
) -> Result<Vec<Job>, StoreError> {
    let filter = params! {
        lane: f.lane.clone(),
        status: f.status.map(JobStatus::as_str),
        account_id: f.account_id.clone(),
        limit: limit,
    };
    let rows = tx.rows(stmt, filter).await?;
    rows.iter().map(|r| Ok(job_from(r)?.job)).collect()
}
