//! Jobs and two-phase holds: submit (hold), lease, heartbeat, complete (capture), fail and
//! cancel (release).

use holdfast_core::decide::{self, CancelDecision, JobStatus, PocketAmount};
use holdfast_core::{AccountId, IdempotencyKey, JobId, MONEY, Refusal, WorkerId};
use serde_json::json;

use crate::args;
use crate::db::{Row, Sql, Tx};
use crate::error::StoreError;
use crate::model::{Heartbeat, Job, Lease, Submitted};
use crate::statement::Stmt;
use crate::store::{
    EntryFacts, Locked, MoneyChange, Store, apply_refills, change_money, clock, emit_suspension,
    lock_account_and_job, lock_account_seen, pockets_json, request_hash,
};
use crate::{in_read_tx, in_write_tx, params, statement};

macro_rules! job_columns {
    () => {
        "job_id, account_id, kind, lane, status, payload, hold, charged, created_at, started_at, \
         finished_at, notice_at, cancel_requested, failure_reason, lease_token, lease_expires_at, \
         lease_seconds, worker_id, finished_by"
    };
}
pub(crate) use job_columns;

static READ_JOB: Stmt = statement!(shared "read_job");
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
        .maybe_row(&READ_JOB, params! { job_id: job })
        .await?
        .ok_or(Refusal::JobNotFound)?;
    job_from(&row)
}

/// Locks a job's account, then the job (the lock order everywhere), reading the
/// account's pockets only when the job holds one.
async fn lock_job_and_account(tx: &mut Tx, job: &JobId) -> Result<(Locked, JobRow), StoreError> {
    lock_account_and_job(tx, job.as_str(), |row| {
        let j = job_from(row)?;
        let holds_a_pocket = j.job.hold.iter().any(|l| l.pocket != MONEY);
        Ok((j, holds_a_pocket))
    })
    .await
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

/// Finishing a job in ONE statement: its account row (money hold released, capture
/// taken, suspension), its allowance pocket (hold released, capture taken, floored at 0),
/// the capture's ledger entry (when something was taken), the job row and its event.
/// Returns the job as written and the entry id.
const FINISH: Sql = Sql {
    postgres: concat!(
        "WITH a AS (UPDATE accounts SET balance = balance + $2, held = held + $3, total_spent = total_spent + $4, \
         suspended_at = $5 WHERE account_id = $1 AND ($2 <> 0 OR $3 <> 0)), \
         p AS (UPDATE allowances SET held = held + $7, remaining = remaining + $8 WHERE account_id = $1 AND pocket = $6), \
         e AS (INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
         SELECT $1, $9, $10, 'capture', $11, $12, $13, $14, $15 WHERE $10 <> 0 RETURNING entry_id), \
         v AS (INSERT INTO events (type, account_id, job_id, data, created_at) VALUES ($20, $1, $14, $21, $15)), \
         j AS (UPDATE jobs SET status = $16, charged = $17, finished_at = $15, finished_by = $18, failure_reason = $19, \
         lease_token = CASE WHEN $18 = 'sweep' THEN NULL ELSE lease_token END WHERE job_id = $14 RETURNING ",
        job_columns!(),
        ") SELECT ",
        job_columns!(),
        ", (SELECT entry_id FROM e) AS entry_id FROM j"
    ),
    sqlite: concat!(
        "UPDATE accounts SET balance = balance + $2, held = held + $3, total_spent = total_spent + $4, \
         suspended_at = $5 WHERE account_id = $1 AND ($2 <> 0 OR $3 <> 0); \
         UPDATE allowances SET held = held + $7, remaining = remaining + $8 WHERE account_id = $1 AND pocket = $6; \
         INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
         SELECT $1, $9, $10, 'capture', $11, $12, $13, $14, $15 WHERE $10 <> 0; \
         UPDATE jobs SET status = $16, charged = $17, finished_at = $15, finished_by = $18, failure_reason = $19, \
         lease_token = CASE WHEN $18 = 'sweep' THEN NULL ELSE lease_token END WHERE job_id = $14 RETURNING ",
        job_columns!(),
        ", CASE WHEN $10 <> 0 THEN last_insert_rowid() END AS entry_id; \
         INSERT INTO events (type, account_id, job_id, data, created_at) VALUES ($20, $1, $14, $21, $15)"
    ),
};

/// How a job ends.
pub(crate) struct Finish<'a> {
    pub status: JobStatus,
    /// What is taken from the hold (at most the hold); the rest of it is released.
    pub capture: i64,
    pub finished_by: &'a str,
    pub reason: Option<&'a str>,
}

/// Finishes a job under its account's lock: releases its hold, takes the capture, writes
/// status, charge, who finished it and the event. Returns the job as written.
pub(crate) async fn finish_job(
    tx: &mut Tx,
    card: &holdfast_core::RateCard,
    locked: &mut Locked,
    job: &Job,
    f: Finish<'_>,
) -> Result<Job, StoreError> {
    let hold = match job.hold.as_slice() {
        [] => None,
        [line] => Some(line),
        _ => return Err(StoreError::Corrupt("a hold of more than one pocket".into())),
    };
    let snap = &mut locked.snap;
    let now = snap.now;
    let buffer = snap.buffer(card).0;
    let mut money = (0, 0, None); // balance delta, held delta, suspension
    let mut pocket = (None, 0, 0); // pocket, held delta, remaining delta
    let mut entry = None;
    let mut charged = Vec::new();
    match hold {
        None => {}
        Some(h) if h.pocket == MONEY => {
            snap.held -= h.amount;
            money.1 = -h.amount;
            // A release alone (nothing captured) leaves the balance where it is.
            if f.capture > 0 {
                let change = MoneyChange {
                    delta: -f.capture,
                    kind: "capture",
                    reference: Some(job.job_id.clone()),
                    credited: 0,
                    spent: f.capture,
                    credit: false,
                };
                money.0 = change.delta;
                money.2 = Some(change_money(snap, &change)?);
                entry = Some(EntryFacts {
                    pocket: MONEY,
                    delta: change.delta,
                    kind: change.kind,
                    amount_after: snap.balance,
                    available_after: Some(snap.balance - snap.held),
                    buffer: Some(buffer),
                    reference: change.reference,
                });
            }
        }
        Some(h) => {
            let p = snap.allowances.get_mut(&h.pocket).ok_or_else(|| {
                StoreError::Corrupt(format!("a hold on a missing pocket {:?}", h.pocket))
            })?;
            let decrease = decide::actual_decrease(&h.pocket, p.remaining, f.capture);
            p.held -= h.amount;
            p.remaining -= decrease;
            pocket = (Some(h.pocket.as_str()), -h.amount, -decrease);
            entry = Some(EntryFacts {
                pocket: &h.pocket,
                delta: -decrease,
                kind: "capture",
                amount_after: p.remaining,
                available_after: Some(p.remaining - p.held),
                buffer: None,
                reference: Some(job.job_id.clone()),
            });
        }
    }
    if let Some(h) = hold
        && f.capture > 0
    {
        let taken = entry.as_ref().map_or(0, |e| -e.delta);
        charged.push(PocketAmount {
            pocket: h.pocket.clone(),
            amount: taken,
        });
    }
    let entry = entry.filter(|e| e.delta != 0);
    let charged_json =
        serde_json::to_string(&charged).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let event = format!("job.{}", f.status.as_str());
    let data = json!({
        "kind": job.kind, "lane": job.lane, "status": f.status.as_str(), "charged": lines_json(&charged)
    });
    let e = entry.as_ref();
    let rows = tx
        .fetch_all(
            FINISH,
            args![
                job.account_id.as_str(),
                money.0,
                money.1,
                -money.0,
                snap.suspended_at,
                pocket.0,
                pocket.1,
                pocket.2,
                e.map(|e| e.pocket),
                e.map_or(0, |e| e.delta),
                e.map_or(0, |e| e.amount_after),
                e.and_then(|e| e.available_after),
                e.and_then(|e| e.buffer),
                job.job_id.as_str(),
                now,
                f.status.as_str(),
                charged_json,
                f.finished_by,
                f.reason,
                event,
                data.to_string()
            ],
        )
        .await?;
    let row = match rows.as_slice() {
        [row] => row,
        _ => {
            return Err(StoreError::Corrupt(
                "finishing a job wrote no job row".into(),
            ));
        }
    };
    if let Some(suspension) = money.2 {
        let entry_id = row.int("entry_id")?;
        emit_suspension(tx, &job.account_id, suspension, snap, entry_id).await?;
    }
    if let Some(open) = locked.open_jobs.as_mut()
        && job.status.is_open()
        && !f.status.is_open()
    {
        *open -= 1;
    }
    Ok(job_from(row)?.job)
}

/// A submit's writes in ONE statement, under the client's key: the idempotency record,
/// the account's money hold and activity stamp, the allowance pocket's hold, the job — or
/// nothing at all when the key is taken already (then no job comes back and the caller
/// looks the key up). `ON CONFLICT DO NOTHING`: a failing insert would abort the
/// transaction on PostgreSQL.
const SUBMIT: Sql = Sql {
    // `g` holds a row when what the decision stood on is still so ($17 open jobs, $18
    // pockets; NULL: confirmed after the lock, nothing to check). `fresh` says which.
    postgres: concat!(
        "WITH g AS (SELECT 1 AS ok WHERE ($17::bigint IS NULL OR \
         (SELECT COUNT(*) FROM jobs WHERE account_id = $1 AND status IN ('queued', 'in_progress')) = $17) \
         AND ($18::text IS NULL OR ",
        pockets_json!(postgres, "$1"),
        " = $18)), \
         k AS (INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
         SELECT $1, $15, 'submit', $16, NULL, $6, $11 FROM g ON CONFLICT (account_id, key) DO NOTHING RETURNING job_id), \
         a AS (UPDATE accounts SET held = held + $2, last_active_at = $3 WHERE account_id = $1 AND EXISTS (SELECT 1 FROM k)), \
         p AS (UPDATE allowances SET held = held + $5 WHERE account_id = $1 AND pocket = $4 AND EXISTS (SELECT 1 FROM k)), \
         j AS (INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at, \
         limit_at_submit, open_at_submit) SELECT $6, $1, $7, $8, 'queued', $9, $10, $11, $12, $13, $14 FROM k RETURNING ",
        job_columns!(),
        ") SELECT (SELECT COUNT(*) FROM g) AS fresh, j.* FROM (SELECT 1) AS one LEFT JOIN j ON true"
    ),
    // Each step runs only when the key's record is this submit's (its new job id).
    sqlite: concat!(
        "INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
         VALUES ($1, $15, 'submit', $16, NULL, $6, $11) ON CONFLICT (account_id, key) DO NOTHING; \
         UPDATE accounts SET held = held + $2, last_active_at = $3 WHERE account_id = $1 \
         AND EXISTS (SELECT 1 FROM idempotency WHERE account_id = $1 AND key = $15 AND job_id = $6); \
         UPDATE allowances SET held = held + $5 WHERE account_id = $1 AND pocket = $4 \
         AND EXISTS (SELECT 1 FROM idempotency WHERE account_id = $1 AND key = $15 AND job_id = $6); \
         INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at, \
         limit_at_submit, open_at_submit) SELECT $6, $1, $7, $8, 'queued', $9, $10, $11, $12, $13, $14 \
         WHERE EXISTS (SELECT 1 FROM idempotency WHERE account_id = $1 AND key = $15 AND job_id = $6) RETURNING ",
        job_columns!()
    ),
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
            let mut locked = lock_account_seen(tx, &req.account).await?;
            loop {
                if let Some(done) = self.submit_in(tx, &mut locked, req, kind, &hash).await? {
                    return Ok(done);
                }
                // Read the rest again, now that the lock is held, and decide again.
                locked.confirm(tx).await?;
            }
        })?;
        Ok(outcome?)
    }

    /// A submit under the account lock. `None`, with nothing written, when what was
    /// read with the lock ([`Locked::seen`]) must be confirmed first: a due refill or a
    /// refusal would stand on it, or the write found it changed. Once confirmed it is
    /// never `None`.
    async fn submit_in(
        &self,
        tx: &mut Tx,
        locked: &mut Locked,
        req: &Submit,
        kind: &holdfast_core::ratecard::Kind,
        hash: &str,
    ) -> Result<Option<Result<Submitted, Refusal>>, StoreError> {
        let (account, key) = (req.account.as_str(), req.key.as_str());
        let refills = locked.snap.due_refills(self.card());
        if !refills.is_empty() {
            if locked.seen.is_some() {
                return Ok(None);
            }
            // A replay changes nothing: its key is looked up before a refill is written.
            locked.check_key(tx, key).await?;
        }
        if let Some(replay) = submit_replay(tx, locked, key, hash).await? {
            return Ok(Some(Ok(replay)));
        }
        let open = locked.open_jobs()?;
        apply_refills(tx, &req.account, &mut locked.snap, &refills).await?;
        let decision = match decide::decide_submit(&locked.snap, open, kind, self.card()) {
            Ok(d) => d,
            Err(_) if locked.seen.is_some() => return Ok(None),
            Err(refusal) => {
                // Nor does a replay stamp activity (a new key's first use needs no
                // look-up: the write claims it).
                locked.check_key(tx, key).await?;
                if let Some(replay) = submit_replay(tx, locked, key, hash).await? {
                    return Ok(Some(Ok(replay)));
                }
                self.stamp_activity(tx, &req.account, &mut locked.snap)
                    .await?;
                return Ok(Some(Err(refusal)));
            }
        };
        let (money_hold, pocket_hold) = match decision.hold.as_slice() {
            [] => (0, None),
            [h] if h.pocket == MONEY => (h.amount, None),
            [h] => (0, Some(h)),
            _ => return Err(StoreError::Corrupt("a hold of more than one pocket".into())),
        };
        let snap = &locked.snap;
        let job_id = uuid::Uuid::now_v7().to_string();
        let hold = serde_json::to_string(&decision.hold)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let notice_at =
            snap.now + self.card().timeouts.notice_delay_seconds * decide::MICROS_PER_SECOND;
        let payload = req.payload.as_ref().map(|p| p.to_string());
        let seen = locked.seen.as_ref();
        let rows = tx
            .fetch_all(
                SUBMIT,
                args![
                    account,
                    money_hold,
                    snap.now,
                    pocket_hold.map(|h| h.pocket.as_str()),
                    pocket_hold.map_or(0, |h| h.amount),
                    job_id.as_str(),
                    req.kind.as_str(),
                    decision.lane.as_str(),
                    payload,
                    hold,
                    snap.now,
                    notice_at,
                    snap.concurrency_limit(self.card()),
                    open + 1,
                    key,
                    hash,
                    seen.map(|s| s.open_jobs),
                    seen.map(|s| s.pockets.as_str())
                ],
            )
            .await?;
        let row = match rows.as_slice() {
            [row] if row.has("fresh") && row.int("fresh")? == 0 => return Ok(None),
            [row] if row.opt_text("job_id")?.is_some() => row,
            // Nothing written: the key is taken, by the earlier submit or another operation.
            [] | [_] => {
                locked.look_up(tx, &[key]).await?;
                return match submit_replay(tx, locked, key, hash).await? {
                    Some(replay) => Ok(Some(Ok(replay))),
                    None => Err(StoreError::Corrupt("a taken key without its record".into())),
                };
            }
            _ => {
                return Err(StoreError::Corrupt(
                    "a submit wrote more than one job".into(),
                ));
            }
        };
        Ok(Some(Ok(Submitted {
            job: job_from(row)?.job,
            replay: false,
        })))
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
                 started_at = COALESCE(started_at, ",
                clock!(postgres),
                "), lease_expires_at = ",
                clock!(postgres),
                " + $3 * 1000000 \
                 WHERE status = 'queued' AND job_id = (SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id \
                 WHERE j.lane = $1 AND j.status = 'queued' AND a.suspended_at IS NULL AND a.blocked_at IS NULL \
                 ORDER BY j.created_at, j.job_id LIMIT 1 FOR UPDATE OF j SKIP LOCKED) RETURNING ",
                job_columns!()
            ),
            sqlite: concat!(
                "UPDATE jobs SET status = 'in_progress', lease_token = $2, lease_seconds = $3, worker_id = $4, \
                 started_at = COALESCE(started_at, ",
                clock!(sqlite),
                "), lease_expires_at = ",
                clock!(sqlite),
                " + $3 * 1000000 \
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
            postgres: concat!(
                "UPDATE jobs SET lease_expires_at = ",
                clock!(postgres),
                " + lease_seconds * 1000000 \
                 WHERE job_id = $1 AND lease_token = $2 AND status = 'in_progress' AND lease_expires_at > ",
                clock!(postgres),
                " RETURNING lease_expires_at, cancel_requested"
            ),
            sqlite: concat!(
                "UPDATE jobs SET lease_expires_at = ",
                clock!(sqlite),
                " + lease_seconds * 1000000 \
                 WHERE job_id = $1 AND lease_token = $2 AND status = 'in_progress' AND lease_expires_at > ",
                clock!(sqlite),
                " RETURNING lease_expires_at, cancel_requested"
            ),
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
            let (mut locked, row) = lock_job_and_account(tx, job).await?;
            let lines = decide::resolve_capture(&row.job.hold, capture)?;
            if let Some(done) = Self::check_finish(&row, token, "complete", locked.snap.now)? {
                return Ok(done);
            }
            let status = if row.job.cancel_requested {
                JobStatus::Canceled
            } else {
                JobStatus::Succeeded
            };
            let finish = Finish {
                status,
                capture: lines.iter().map(|l| l.capture).sum(),
                finished_by: "complete",
                reason: None,
            };
            finish_job(tx, self.card(), &mut locked, &row.job, finish).await
        })
    }

    /// Fails a job with its lease: the hold is released, nothing is charged.
    pub async fn fail(
        &self,
        job: &JobId,
        token: &str,
        reason: Option<&str>,
    ) -> Result<Job, StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut locked, row) = lock_job_and_account(tx, job).await?;
            if let Some(done) = Self::check_finish(&row, token, "fail", locked.snap.now)? {
                return Ok(done);
            }
            let finish = Finish {
                status: JobStatus::Failed,
                capture: 0,
                finished_by: "fail",
                reason,
            };
            finish_job(tx, self.card(), &mut locked, &row.job, finish).await
        })
    }

    /// Cancels a job: queued → canceled with the hold released, in one atomic step;
    /// running → `already_started`, or a cooperative cancel request.
    pub async fn cancel(&self, job: &JobId) -> Result<(Job, CancelOutcome), StoreError> {
        in_write_tx!(self, |tx| async {
            let (mut locked, row) = lock_job_and_account(tx, job).await?;
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
                    let finish = Finish {
                        status: JobStatus::Canceled,
                        capture: 0,
                        finished_by: "cancel",
                        reason: None,
                    };
                    let job = finish_job(tx, self.card(), &mut locked, &row.job, finish).await?;
                    Ok((job, CancelOutcome::Canceled))
                }
            }
        })
    }
}

/// The answer to an earlier submit under `key`, if the account knows one: the job as it
/// is now for the same request, `idempotency_mismatch` for another.
async fn submit_replay(
    tx: &mut Tx,
    locked: &Locked,
    key: &str,
    hash: &str,
) -> Result<Option<Submitted>, StoreError> {
    let Some(record) = locked.replay(key, "submit", hash)? else {
        return Ok(None);
    };
    let job_id = record
        .job_id
        .clone()
        .ok_or_else(|| StoreError::Corrupt("submit record without job".into()))?;
    Ok(Some(Submitted {
        job: read_job(tx, &job_id).await?.job,
        replay: true,
    }))
}

fn new_lease_token() -> String {
    let bytes: [u8; 32] = rand::random();
    hex::encode(bytes)
}
