//! Bans: an operator's decision that an account gets no more work. A ban cancels the
//! account's queued jobs (their holds released, nothing charged), refuses new submits
//! and debits (`account_banned`) and is skipped by reactivation; jobs already running
//! may end. Unlike a block, which only pauses work, a ban is for abuse or fraud.

use holdfast_core::AccountId;
use holdfast_core::decide::{FinishedBy, JobStatus};
use serde_json::json;

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{AccountView, Job};
use crate::store::Store;
use crate::units::account_state::lock_account;
use crate::units::jobs::{Finish, decide_finish, job_from, write_finishes};
use crate::units::refunds::check_reason;
use crate::units::writes::{emit, emit_operator};
use crate::{in_write_tx, params, statement};

static SET_BANNED: Stmt = statement!(shared "set_banned");
static QUEUED_JOBS_OF_ACCOUNT: Stmt = statement!("queued_jobs_of_account");

/// A ban's answer: the account, and the queued jobs it canceled.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Banned {
    pub account: AccountView,
    pub canceled: Vec<Job>,
}

impl Store {
    /// Bans an account: cancels its queued jobs (holds released) and emits
    /// `account.banned` with the reason. Banning a banned account changes nothing and
    /// keeps the first time.
    pub async fn ban(&self, account: &AccountId, reason: &str) -> Result<Banned, StoreError> {
        check_reason(reason)?;
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            if state.snap.banned_at.is_some() {
                let account = state.view(self.card())?;
                return Ok(Banned {
                    account,
                    canceled: vec![],
                });
            }
            let now = state.snap.now;
            let params = params! { account_id: account.as_str(), banned_at: now };
            tx.exec(&SET_BANNED, params).await?;
            state.snap.banned_at = Some(now);
            let rows = tx
                .rows(
                    &QUEUED_JOBS_OF_ACCOUNT,
                    params! { account_id: account.as_str() },
                )
                .await?;
            let mut decided = Vec::with_capacity(rows.len());
            let mut order = Vec::with_capacity(rows.len());
            for row in &rows {
                let job = job_from(row)?.job;
                let finish = Finish {
                    status: JobStatus::Canceled,
                    capture: 0,
                    finished_by: FinishedBy::Cancel,
                    reason: Some("account banned"),
                };
                decided.push(decide_finish(self.card(), &mut state, &job, &finish)?);
                order.push(job.job_id);
            }
            let mut written = write_finishes(tx, decided).await?;
            let canceled = order
                .iter()
                .map(|id| written.remove(id))
                .collect::<Option<Vec<Job>>>()
                .ok_or_else(|| StoreError::Corrupt("a ban's cancel not written".into()))?;
            let ids: Vec<&str> = canceled.iter().map(|j| j.job_id.as_str()).collect();
            let data = json!({ "reason": reason, "canceled_jobs": ids });
            emit(tx, "account.banned", account.as_str(), None, data, now).await?;
            let data = json!({ "canceled_jobs": ids });
            emit_operator(tx, "banned", account.as_str(), data, Some(reason), now).await?;
            Ok(Banned {
                account: state.view(self.card())?,
                canceled,
            })
        })
    }

    /// Lifts a ban (`account.unbanned`); an account not banned is answered as it is.
    pub async fn unban(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            if state.snap.banned_at.is_none() {
                return state.view(self.card());
            }
            let params = params! { account_id: account.as_str(), banned_at: None::<i64> };
            tx.exec(&SET_BANNED, params).await?;
            state.snap.banned_at = None;
            let now = state.snap.now;
            emit(
                tx,
                "account.unbanned",
                account.as_str(),
                None,
                json!({}),
                now,
            )
            .await?;
            emit_operator(tx, "unbanned", account.as_str(), json!({}), None, now).await?;
            state.view(self.card())
        })
    }
}
