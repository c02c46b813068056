//! Jobs and two-phase holds: submit (hold), lease, heartbeat, complete (capture), fail and
//! cancel (release).

use holdfast_core::decide::{self, AccountSnapshot, CancelDecision, JobStatus, PocketAmount};
use holdfast_core::{AccountId, IdempotencyKey, JobId, MONEY, Refusal, WorkerId};
use serde_json::json;

use crate::args;
use crate::db::{Row, Sql, Tx};
use crate::error::StoreError;
use crate::model::{Heartbeat, Job, Lease, Submitted};
use crate::store::{
    EntryFacts, MoneyChange, Store, check_idempotency, count_open_jobs, emit, lock_account,
    record_idempotency, request_hash, write_ledger, write_money,
};
use crate::{in_read_tx, in_write_tx};

macro_rules! job_columns {
    () => {
        "job_id, account_id, kind, lane, status, payload, hold, charged, created_at, started_at, \
         finished_at, notice_at, cancel_requested, failure_reason, lease_token, lease_expires_at, \
         lease_seconds, worker_id, finished_by"
    };
}
pub(crate) use job_columns;

const READ_JOB: Sql = Sql::both(concat!(
    "SELECT ",
    job_columns!(),
    " FROM jobs WHERE job_id = $1"
));
const LOCK_JOB: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        job_columns!(),
        " FROM jobs WHERE job_id = $1 FOR UPDATE"
    ),
    sqlite: READ_JOB.sqlite,
};

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
            created_at: row.int("created_at")?,
            started_at: row.opt_int("started_at")?,
            finished_at: row.opt_int("finished_at")?,
            notice_at: row.int("notice_at")?,
            cancel_requested: row.flag("cancel_requested")?,
            failure_reason: row.opt_text("failure_reason")?,
            lease_expires_at: row.opt_int("lease_expires_at")?,
            worker_id: row.opt_text("worker_id")?,
        },
        lease_token: row.opt_text("lease_token")?,
        finished_by: row.opt_text("finished_by")?,
    })
}

pub(crate) async fn read_job(tx: &mut Tx, job: &str) -> Result<JobRow, StoreError> {
    let row = tx
        .fetch_optional(READ_JOB, args![job])
        .await?
        .ok_or(Refusal::JobNotFound)?;
    job_from(&row)
}

/// Reads a job, locks its account, then locks the job: the lock order everywhere is the
/// account row first, then its jobs.
async fn lock_job_and_account(
    tx: &mut Tx,
    job: &JobId,
) -> Result<(AccountSnapshot, JobRow), StoreError> {
    let account = read_job(tx, job.as_str()).await?.job.account_id;
    let account = AccountId::parse(&account).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let snap = lock_account(tx, &account).await?;
    let row = tx.fetch_one(LOCK_JOB, args![job.as_str()]).await?;
    Ok((snap, job_from(&row)?))
}

/// Raises (`sign = 1`) or lowers (`sign = -1`) the `held` of each pocket in `lines`.
pub(crate) async fn adjust_held(
    tx: &mut Tx,
    account: &str,
    snap: &mut AccountSnapshot,
    lines: &[PocketAmount],
    sign: i64,
) -> Result<(), StoreError> {
    for line in lines {
        let delta = sign * line.amount;
        if line.pocket == MONEY {
            tx.execute(
                Sql::both("UPDATE accounts SET held = held + $2 WHERE account_id = $1"),
                args![account, delta],
            )
            .await?;
            snap.held += delta;
        } else {
            tx.execute(
                Sql::both(
                    "UPDATE allowances SET held = held + $3 WHERE account_id = $1 AND pocket = $2",
                ),
                args![account, line.pocket.as_str(), delta],
            )
            .await?;
            if let Some(p) = snap.allowances.get_mut(&line.pocket) {
                p.held += delta;
            }
        }
    }
    Ok(())
}

/// Hold or charge lines as API.md writes them: money as a decimal string with
/// `amount_micros` beside it, allowances as counts.
pub fn lines_json(lines: &[PocketAmount]) -> serde_json::Value {
    lines
        .iter()
        .map(|l| {
            if l.pocket == MONEY {
                json!({ "pocket": l.pocket, "amount": holdfast_core::Micros(l.amount).format(), "amount_micros": l.amount })
            } else {
                json!({ "pocket": l.pocket, "amount": l.amount })
            }
        })
        .collect()
}

/// Finishes a job: status, charge, who finished it, and the event, in the caller's
/// transaction.
pub(crate) async fn finish_job(
    tx: &mut Tx,
    job: &Job,
    status: JobStatus,
    charged: &[PocketAmount],
    finished_by: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    let charged_json =
        serde_json::to_string(charged).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    tx.execute(
        Sql::both(
            "UPDATE jobs SET status = $2, charged = $3, finished_at = $4, finished_by = $5, failure_reason = $6, \
             lease_token = CASE WHEN $5 = 'sweep' THEN NULL ELSE lease_token END WHERE job_id = $1",
        ),
        args![job.job_id.as_str(), status.as_str(), charged_json, now, finished_by, reason],
    )
    .await?;
    let event = format!("job.{}", status.as_str());
    let data = json!({
        "kind": job.kind, "lane": job.lane, "status": status.as_str(), "charged": lines_json(charged)
    });
    emit(tx, &event, &job.account_id, Some(&job.job_id), data, now).await
}

const CAPTURE_ALLOWANCE: Sql = Sql {
    postgres: "UPDATE allowances SET remaining = GREATEST(0, remaining - $3) \
               WHERE account_id = $1 AND pocket = $2 RETURNING remaining, held",
    sqlite: "UPDATE allowances SET remaining = MAX(0, remaining - $3) \
             WHERE account_id = $1 AND pocket = $2 RETURNING remaining, held",
};

/// Submit request.
#[derive(Debug, Clone)]
pub struct Submit {
    pub account: AccountId,
    pub kind: String,
    pub payload: Option<serde_json::Value>,
    pub key: IdempotencyKey,
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
    /// Submits a job: hold its price and queue it, in one transaction. Idempotent by key.
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let kind = self
            .card()
            .kinds
            .get(&req.kind)
            .ok_or_else(|| Refusal::UnknownKind(req.kind.clone()))?;
        let hash =
            request_hash(&json!({ "op": "submit", "kind": req.kind, "payload": req.payload }));
        // A refusal still commits the due refill and the activity: time passing is not
        // the request's change.
        let outcome: Result<Submitted, Refusal> = in_write_tx!(self, |tx| async {
            let mut snap = lock_account(tx, &req.account).await?;
            let account = req.account.as_str();
            // A replay changes nothing: answered before the refill and the activity stamp.
            if let Some(r) =
                check_idempotency(tx, account, req.key.as_str(), "submit", &hash).await?
            {
                let job_id = r
                    .job_id
                    .ok_or_else(|| StoreError::Corrupt("submit record without job".into()))?;
                return Ok(Ok(Submitted {
                    job: read_job(tx, &job_id).await?.job,
                    replay: true,
                }));
            }
            self.record_activity(tx, &req.account, &mut snap).await?;
            let open = count_open_jobs(tx, account).await?;
            let decision = match decide::decide_submit(&snap, open, kind, self.card()) {
                Ok(d) => d,
                Err(refusal) => return Ok(Err(refusal)),
            };
            adjust_held(tx, account, &mut snap, &decision.hold, 1).await?;
            let job_id = uuid::Uuid::now_v7().to_string();
            let hold = serde_json::to_string(&decision.hold)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let notice_at =
                snap.now + self.card().timeouts.notice_delay_seconds * decide::MICROS_PER_SECOND;
            let payload = req.payload.as_ref().map(|p| p.to_string());
            let row = tx
                .fetch_one(
                    Sql::both(concat!(
                        "INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at, \
                         limit_at_submit, open_at_submit) VALUES ($1, $2, $3, $4, 'queued', $5, $6, $7, $8, $9, $10) RETURNING ",
                        job_columns!()
                    )),
                    args![
                        job_id.as_str(), account, req.kind.as_str(), decision.lane.as_str(), payload, hold,
                        snap.now, notice_at, snap.concurrency_limit(self.card()), open + 1
                    ],
                )
                .await?;
            record_idempotency(
                tx,
                account,
                req.key.as_str(),
                "submit",
                &hash,
                None,
                Some(&job_id),
                snap.now,
            )
            .await?;
            Ok(Ok(Submitted {
                job: job_from(&row)?.job,
                replay: false,
            }))
        })?;
        Ok(outcome?)
    }

    pub async fn get_job(&self, job: &JobId) -> Result<Job, StoreError> {
        in_read_tx!(self, |tx| async {
            Ok(read_job(tx, job.as_str()).await?.job)
        })
    }

    /// Hands the oldest leasable job of `lane` to a worker, or `None`. Jobs of suspended
    /// or blocked accounts are skipped. Many workers never get the same job.
    pub async fn lease(
        &self,
        lane: &str,
        worker: &WorkerId,
        lease_seconds: i64,
    ) -> Result<Option<Lease>, StoreError> {
        if !self.card().is_lane(lane) {
            return Err(Refusal::UnknownLane(lane.to_owned()).into());
        }
        let stale = self.card().timeouts.stale_after_seconds;
        if !(1..=stale).contains(&lease_seconds) {
            return Err(
                Refusal::InvalidRequest(format!("lease_seconds: must be 1 to {stale}")).into(),
            );
        }
        const LEASE: Sql = Sql {
            postgres: concat!(
                "UPDATE jobs SET status = 'in_progress', lease_token = $2, lease_seconds = $3, worker_id = $4, \
                 started_at = COALESCE(started_at, (extract(epoch from clock_timestamp()) * 1000000)::bigint), \
                 lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + $3 * 1000000 \
                 WHERE status = 'queued' AND job_id = (SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id \
                 WHERE j.lane = $1 AND j.status = 'queued' AND a.suspended_at IS NULL AND a.blocked_at IS NULL \
                 ORDER BY j.created_at, j.job_id LIMIT 1 FOR UPDATE OF j SKIP LOCKED) RETURNING ",
                job_columns!()
            ),
            sqlite: concat!(
                "UPDATE jobs SET status = 'in_progress', lease_token = $2, lease_seconds = $3, worker_id = $4, \
                 started_at = COALESCE(started_at, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)), \
                 lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + $3 * 1000000 \
                 WHERE status = 'queued' AND job_id = (SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id \
                 WHERE j.lane = $1 AND j.status = 'queued' AND a.suspended_at IS NULL AND a.blocked_at IS NULL \
                 ORDER BY j.created_at, j.job_id LIMIT 1) RETURNING ",
                job_columns!()
            ),
        };
        let token = new_lease_token();
        in_write_tx!(self, |tx| async {
            let Some(row) = tx
                .fetch_optional(
                    LEASE,
                    args![lane, token.as_str(), lease_seconds, worker.as_str()],
                )
                .await?
            else {
                return Ok(None);
            };
            let job = job_from(&row)?.job;
            let lease_expires_at = job
                .lease_expires_at
                .ok_or_else(|| StoreError::Corrupt("lease without expiry".into()))?;
            Ok(Some(Lease {
                job,
                lease_token: token.clone(),
                lease_expires_at,
            }))
        })
    }

    /// Extends a valid lease by its length; tells the worker whether a cancel was asked.
    pub async fn heartbeat(&self, job: &JobId, token: &str) -> Result<Heartbeat, StoreError> {
        const BEAT: Sql = Sql {
            postgres: "UPDATE jobs SET lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + lease_seconds * 1000000 \
                       WHERE job_id = $1 AND lease_token = $2 AND status = 'in_progress' \
                       AND lease_expires_at > (extract(epoch from clock_timestamp()) * 1000000)::bigint \
                       RETURNING lease_expires_at, cancel_requested",
            sqlite: "UPDATE jobs SET lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + lease_seconds * 1000000 \
                     WHERE job_id = $1 AND lease_token = $2 AND status = 'in_progress' \
                     AND lease_expires_at > CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) \
                     RETURNING lease_expires_at, cancel_requested",
        };
        in_write_tx!(self, |tx| async {
            match tx.fetch_optional(BEAT, args![job.as_str(), token]).await? {
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

    /// Checks the lease for a finishing call. `Ok(Some(job))` is a repeat of the call that
    /// finished the job (answer it as it is), `Ok(None)` a valid lease.
    fn check_finish(
        row: &JobRow,
        token: &str,
        op: &str,
        now: i64,
    ) -> Result<Option<Job>, StoreError> {
        let token_matches = row.lease_token.as_deref() == Some(token);
        if !row.job.status.is_open() {
            return match (token_matches, row.finished_by.as_deref() == Some(op)) {
                (true, true) => Ok(Some(row.job.clone())),
                (true, false) => Err(Refusal::AlreadyFinished.into()),
                (false, _) => Err(Refusal::LeaseLost.into()),
            };
        }
        let live = row.job.status == JobStatus::InProgress
            && row.job.lease_expires_at.is_some_and(|t| now < t);
        if token_matches && live {
            Ok(None)
        } else {
            Err(Refusal::LeaseLost.into())
        }
    }

    /// Completes a job with its lease: captures the hold (or a partial capture ≤ held per
    /// pocket, the rest released). A repeat with the same token charges nothing more.
    pub async fn complete(
        &self,
        job: &JobId,
        token: &str,
        capture: Option<&[PocketAmount]>,
    ) -> Result<Job, StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut snap, row) = lock_job_and_account(tx, job).await?;
            let lines = decide::resolve_capture(&row.job.hold, capture)?;
            if let Some(done) = Self::check_finish(&row, token, "complete", snap.now)? {
                return Ok(done);
            }
            let account = AccountId::parse(&row.job.account_id)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            adjust_held(tx, account.as_str(), &mut snap, &row.job.hold, -1).await?;
            let mut charged = Vec::new();
            for line in lines.iter().filter(|l| l.capture > 0) {
                let decrease = self
                    .capture_line(
                        tx,
                        &account,
                        &mut snap,
                        &line.pocket,
                        line.capture,
                        &row.job.job_id,
                    )
                    .await?;
                charged.push(PocketAmount {
                    pocket: line.pocket.clone(),
                    amount: decrease,
                });
            }
            let status = if row.job.cancel_requested {
                JobStatus::Canceled
            } else {
                JobStatus::Succeeded
            };
            finish_job(tx, &row.job, status, &charged, "complete", None, snap.now).await?;
            Ok(read_job(tx, job.as_str()).await?.job)
        })
    }

    /// Takes `amount` from one pocket for a job; returns the actual decrease.
    async fn capture_line(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
        pocket: &str,
        amount: i64,
        job_id: &str,
    ) -> Result<i64, StoreError> {
        if pocket == MONEY {
            let buffer = snap.buffer(self.card()).0;
            write_money(
                tx,
                account,
                snap,
                buffer,
                MoneyChange {
                    delta: -amount,
                    kind: "capture",
                    reference: Some(job_id.to_owned()),
                    credited: 0,
                    spent: amount,
                    credit: false,
                },
            )
            .await?;
            return Ok(amount);
        }
        let before = snap.allowances.get(pocket).map_or(0, |p| p.remaining);
        let row = tx
            .fetch_one(CAPTURE_ALLOWANCE, args![account.as_str(), pocket, amount])
            .await?;
        let after = row.int("remaining")?;
        let decrease = before - after;
        if let Some(p) = snap.allowances.get_mut(pocket) {
            p.remaining = after;
        }
        if decrease != 0 {
            write_ledger(
                tx,
                account.as_str(),
                snap.now,
                EntryFacts {
                    pocket,
                    delta: -decrease,
                    kind: "capture",
                    amount_after: after,
                    available_after: Some(after - row.int("held")?),
                    buffer: None,
                    reference: Some(job_id.to_owned()),
                },
            )
            .await?;
        }
        Ok(decrease)
    }

    /// Fails a job with its lease: the hold is released, nothing is charged.
    pub async fn fail(
        &self,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut snap, row) = lock_job_and_account(tx, job).await?;
            if let Some(done) = Self::check_finish(&row, token, "fail", snap.now)? {
                return Ok(done);
            }
            adjust_held(tx, &row.job.account_id, &mut snap, &row.job.hold, -1).await?;
            finish_job(
                tx,
                &row.job,
                JobStatus::Failed,
                &[],
                "fail",
                reason,
                snap.now,
            )
            .await?;
            Ok(read_job(tx, job.as_str()).await?.job)
        })
    }

    /// Cancels a job: queued → canceled with the hold released, in one atomic step;
    /// running → `already_started`, or a cooperative cancel request.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut snap, row) = lock_job_and_account(tx, job).await?;
            let policy = self
                .card()
                .kinds
                .get(&row.job.kind)
                .map(|k| k.cancel_in_progress)
                .unwrap_or_default();
            match decide::decide_cancel(row.job.status, policy)? {
                CancelDecision::Repeat => Ok((row.job, CancelOutcome::Canceled)),
                CancelDecision::RequestCancel => {
                    tx.execute(
                        Sql::both("UPDATE jobs SET cancel_requested = 1 WHERE job_id = $1"),
                        args![job.as_str()],
                    )
                    .await?;
                    Ok((
                        read_job(tx, job.as_str()).await?.job,
                        CancelOutcome::Requested,
                    ))
                }
                CancelDecision::CancelNow => {
                    adjust_held(tx, &row.job.account_id, &mut snap, &row.job.hold, -1).await?;
                    finish_job(
                        tx,
                        &row.job,
                        JobStatus::Canceled,
                        &[],
                        "cancel",
                        None,
                        snap.now,
                    )
                    .await?;
                    Ok((
                        read_job(tx, job.as_str()).await?.job,
                        CancelOutcome::Canceled,
                    ))
                }
            }
        })
    }
}

fn new_lease_token() -> String {
    let bytes: [u8; 32] = rand::random();
    hex::encode(bytes)
}
