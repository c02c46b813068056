//! Giving back: a refund of what a job was charged (`POST /v1/jobs/{id}/refund`) and an
//! operator's grant of allowance items (`POST /v1/accounts/{id}/grants`). Each is one
//! unit of work: lock, let `holdfast_core::decide` decide, write the pocket, its ledger
//! entry, the client's key and the event in one statement, commit.

use holdfast_core::decide::{self, PocketEntry};
use holdfast_core::{AccountId, IdempotencyKey, JobId, Micros};
use serde_json::json;

use crate::driver::db::{Row, Tx};
use crate::driver::statement::{BindByName, Stmt};
use crate::error::StoreError;
use crate::model::{AccountView, Job, LedgerEntry};
use crate::store::Store;
use crate::units::account_state::{AccountState, lock_account};
use crate::units::blocks::lines_text;
use crate::units::finish::LockedJobs;
use crate::units::jobs::{job_from, lines_json, read_job};
use crate::units::writes::{
    EntryFacts, apply_refills, emit_crossing, emit_operator, emit_suspension, read_entry,
    request_hash, touch_account,
};
use crate::{bind_by_name, in_write_tx, statement};

static REFUND_JOB: Stmt = statement!("refund_job");
static GRANT_ALLOWANCE: Stmt = statement!("grant_allowance");

/// A refund of a job's charge: all that is left of it (`amount: None`) or a part. For a
/// job charged from an allowance the amount is whole items written as a decimal (`1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRefund {
    pub amount: Option<Micros>,
    pub reason: String,
    pub key: IdempotencyKey,
}

/// A refund's answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JobRefunded {
    /// One entry per pocket given back to (a job is charged from one pocket).
    pub entries: Vec<LedgerEntry>,
    pub job: Job,
    pub account: AccountView,
    pub replay: bool,
}

/// An operator's grant of allowance items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub pocket: String,
    pub amount: i64,
    pub reason: String,
    pub key: IdempotencyKey,
}

/// A grant's answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Granted {
    pub entry: LedgerEntry,
    pub account: AccountView,
    pub replay: bool,
}

pub use holdfast_core::decide::check_reason;

/// The parameters of `refund_job.sql`.
struct RefundWrite {
    account_id: String,
    money_micros: i64,
    suspended_at: Option<i64>,
    pocket: Option<String>,
    pocket_delta: i64,
    entry_pocket: String,
    entry_delta: i64,
    entry_amount_after: i64,
    entry_available_after: i64,
    entry_buffer_micros: Option<i64>,
    entry_blocks: Option<String>,
    job_id: String,
    refunded: String,
    key: String,
    request_hash: String,
    event_data: String,
    now: i64,
    actor: String,
}

bind_by_name!(RefundWrite {
    account_id,
    money_micros,
    suspended_at,
    pocket,
    pocket_delta,
    entry_pocket,
    entry_delta,
    entry_amount_after,
    entry_available_after,
    entry_buffer_micros,
    entry_blocks,
    job_id,
    refunded,
    key,
    request_hash,
    event_data,
    now,
    actor,
});

impl RefundWrite {
    fn new(
        j: &Job,
        plan: &decide::JobRefundPlan,
        req: &JobRefund,
        hash: &str,
    ) -> Result<RefundWrite, StoreError> {
        let entry = &plan.entry;
        let refund_line = [decide::PocketAmount {
            pocket: entry.pocket.clone(),
            amount: entry.delta,
            blocks: Vec::new(),
        }];
        let event = json!({
            "refund": lines_json(&refund_line), "refunded": lines_json(&plan.refunded),
            "reason": req.reason,
        });
        let money = plan.money.is_some();
        Ok(RefundWrite {
            account_id: j.account_id.clone(),
            money_micros: if money { entry.delta } else { 0 },
            suspended_at: plan.after.suspended_at,
            pocket: (!money).then(|| entry.pocket.clone()),
            pocket_delta: if money { 0 } else { entry.delta },
            entry_pocket: entry.pocket.clone(),
            entry_delta: entry.delta,
            entry_amount_after: entry.amount_after,
            entry_available_after: entry.available_after,
            entry_buffer_micros: entry.buffer_micros,
            entry_blocks: lines_text(&entry.blocks),
            job_id: j.job_id.clone(),
            refunded: serde_json::to_string(&plan.refunded)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            key: req.key.as_str().to_owned(),
            request_hash: hash.to_owned(),
            event_data: event.to_string(),
            now: plan.after.now,
            actor: crate::actor::current(),
        })
    }
}

/// The parameters of `grant_allowance.sql`.
struct GrantWrite {
    account_id: String,
    pocket: String,
    amount: i64,
    amount_after: i64,
    available_after: i64,
    key: String,
    request_hash: String,
    event_data: String,
    now: i64,
    actor: String,
}

bind_by_name!(GrantWrite {
    account_id,
    pocket,
    amount,
    amount_after,
    available_after,
    key,
    request_hash,
    event_data,
    now,
    actor,
});

/// The entry a write made (with its key on it): none is corruption, and the caller's
/// transaction rolls back.
fn written_entry(row: &Row, what: &str) -> Result<i64, StoreError> {
    row.opt_int("entry_id")?
        .ok_or_else(|| StoreError::Corrupt(format!("{what}: no entry was written")))
}

fn credit_facts<'e>(
    entry: &'e PocketEntry,
    kind: &'static str,
    reference: Option<String>,
) -> EntryFacts<'e> {
    EntryFacts {
        pocket: &entry.pocket,
        delta: entry.delta,
        kind,
        amount_after: entry.amount_after,
        available_after: Some(entry.available_after),
        buffer: entry.buffer_micros,
        reference,
    }
}

impl Store {
    /// Refunds (part of) what a succeeded job was charged, to the pocket it was taken
    /// from, never more than its charge across all its refunds. Idempotent by `key` (on
    /// the job's account).
    pub async fn refund_job(
        &self,
        job: &JobId,
        req: &JobRefund,
    ) -> Result<JobRefunded, StoreError> {
        check_reason(&req.reason)?;
        if let Some(a) = req.amount {
            decide::check_request_amount(a)?;
        }
        let hash = request_hash(&json!({
            "op": "job_refund", "job": job.as_str(),
            "amount_micros": req.amount.map(|a| a.0), "reason": req.reason,
        }));
        in_write_tx!(self, |tx| async {
            // The look-up after the locks reads the pockets with the key's record: the
            // lock need not read them first.
            let mut locked = LockedJobs::lock(tx, self.card(), &[job.as_str()]).await?;
            let (row, state) = locked.only(job)?;
            state.look_up(tx, &[req.key.as_str()]).await?;
            if let Some(record) = state.replay(req.key.as_str(), "job_refund", &hash)? {
                let entry_id = record.entry_id;
                return self.refund_replay(tx, state, job, entry_id).await;
            }
            let j = &row.job;
            let charged_blocks = j.charged.iter().flat_map(|c| c.blocks.iter());
            state
                .read_named_blocks(tx, charged_blocks.map(|b| b.block))
                .await?;
            let buffer = state.snap.buffer(self.card());
            let plan = decide::plan_job_refund(
                &state.snap,
                j.status,
                &j.charged,
                &j.refunded,
                req.amount,
                buffer,
            )?;
            let write = RefundWrite::new(j, &plan, req, &hash)?;
            let rows = tx.rows(&REFUND_JOB, write.params()).await?;
            let [written] = rows.as_slice() else {
                return Err(StoreError::Corrupt(format!(
                    "refunding job {} wrote {} job rows",
                    j.job_id,
                    rows.len()
                )));
            };
            let entry_id = written_entry(written, "refunding a job")?;
            let before = state.snap.available_money();
            state.snap = plan.after;
            state.write_changed_marks(tx).await?;
            state.write_changed_blocks(tx).await?;
            if let Some(m) = plan.money {
                emit_suspension(tx, &j.account_id, m.suspension, &state.snap, entry_id).await?;
            }
            let after = state.snap.available_money();
            emit_crossing(tx, self.card(), &j.account_id, &state.snap, before, after).await?;
            let facts = credit_facts(&plan.entry, "job_refund", Some(j.job_id.clone()));
            let entry = LedgerEntry {
                blocks: plan.entry.blocks.clone(),
                ..facts.entry(entry_id, &j.account_id, state.snap.now)
            };
            Ok(JobRefunded {
                entries: vec![entry],
                job: job_from(written)?.job,
                account: state.view(self.card())?,
                replay: false,
            })
        })
    }

    async fn refund_replay(
        &self,
        tx: &mut Tx,
        state: &AccountState,
        job: &JobId,
        entry_id: Option<i64>,
    ) -> Result<JobRefunded, StoreError> {
        let entry_id = entry_id
            .ok_or_else(|| StoreError::Corrupt("a job refund key without its entry".into()))?;
        Ok(JobRefunded {
            entries: vec![read_entry(tx, entry_id).await?],
            job: read_job(tx, job.as_str()).await?.job,
            account: state.view(self.card())?,
            replay: true,
        })
    }

    /// Grants allowance items to a pocket the account has (after its due refills, so a
    /// refill that was due does not wipe the grant at once); the grant lasts until the
    /// pocket's next refill. Idempotent by `key`.
    pub async fn grant(&self, account: &AccountId, req: &Grant) -> Result<Granted, StoreError> {
        check_reason(&req.reason)?;
        let hash = request_hash(&json!({
            "op": "grant", "pocket": req.pocket, "amount": req.amount, "reason": req.reason,
        }));
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[req.key.as_str()]).await?;
            if let Some(record) = state.replay(req.key.as_str(), "grant", &hash)? {
                let entry_id = record
                    .entry_id
                    .ok_or_else(|| StoreError::Corrupt("a grant key without its entry".into()))?;
                return Ok(Granted {
                    entry: read_entry(tx, entry_id).await?,
                    account: state.view(self.card())?,
                    replay: true,
                });
            }
            let refills = state.snap.due_refills(self.card());
            apply_refills(tx, account, &mut state.snap, &refills).await?;
            let (entry, after) = decide::plan_grant(&state.snap, &req.pocket, req.amount)?;
            let event = json!({
                "pocket": req.pocket, "amount": req.amount, "remaining": entry.amount_after,
                "reason": req.reason,
            });
            let write = GrantWrite {
                account_id: account.as_str().to_owned(),
                pocket: req.pocket.clone(),
                amount: req.amount,
                amount_after: entry.amount_after,
                available_after: entry.available_after,
                key: req.key.as_str().to_owned(),
                request_hash: hash.clone(),
                event_data: event.to_string(),
                now: after.now,
                actor: crate::actor::current(),
            };
            let row = tx.row(&GRANT_ALLOWANCE, write.params()).await?;
            let entry_id = written_entry(&row, "granting allowance")?;
            touch_account(tx, account.as_str()).await?;
            if row.opt_int("remaining_after")? != Some(entry.amount_after) {
                return Err(StoreError::Corrupt(format!(
                    "account {account}: a grant left {:?} items, decided {}",
                    row.opt_int("remaining_after")?,
                    entry.amount_after
                )));
            }
            let data = json!({ "pocket": req.pocket, "amount": req.amount, "entry_id": entry_id });
            emit_operator(
                tx,
                "granted",
                account.as_str(),
                data,
                Some(&req.reason),
                after.now,
            )
            .await?;
            state.snap = after;
            let facts = credit_facts(&entry, "grant", None);
            Ok(Granted {
                entry: facts.entry(entry_id, account.as_str(), state.snap.now),
                account: state.view(self.card())?,
                replay: false,
            })
        })
    }
}
