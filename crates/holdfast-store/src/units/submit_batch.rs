//! The submit batcher's group commit: the submits of many accounts that arrived together,
//! in ONE transaction, set-based. Three statements whatever the batch's size: lock the
//! accounts (sorted) with the clock (`ingest_lock_accounts`); read, every lock held,
//! their pockets, open jobs and the records of the keys named (`ingest_read_accounts`);
//! write every key, hold and job (`submit_jobs`). Between them `holdfast_core::decide`
//! decides each submit in order exactly as [`Store::submit`] does, on its account as the
//! submits before it left it (their holds held, their jobs open, their keys recorded):
//! a replay, a mismatch, a due refill, a refusal, the concurrency limit and the
//! low-balance line are each what the single call would make of them.
//!
//! What only some submits need runs per account, in the same transaction: a due refill
//! (before the account's first decision), the activity stamp of a refused submit, a
//! replay's job read back (after the write), and a low-balance event (after the write,
//! in order; a submit writes no other event). Each is written as its submit's caller
//! (its actor), not as the batch's task.

use std::collections::HashMap;

use holdfast_core::decide::{self, AccountSnapshot};
use holdfast_core::{AccountId, Refusal};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::Submitted;
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::account_state::{AccountState, IdemRecord};
use crate::units::ingest::lock_accounts_and_read;
use crate::units::jobs::{Submit, SubmitWrite, job_from, read_job, submit_hash};
use crate::units::writes::{apply_refills, crossing_events, emit};
use crate::{in_write_tx, statement};

static WRITE: Stmt = statement!("submit_jobs");

/// One submit of a batch, with the actor of its caller: the batch runs in a task of its
/// own, where [`crate::actor::current`] is not the caller's.
#[derive(Debug, Clone)]
pub struct QueuedSubmit {
    pub req: Submit,
    pub actor: String,
}

/// A submit's answer as decided, before the write.
enum SubmitAnswer {
    /// A new job, to be read back from the write.
    New(String),
    /// An earlier submit under the key (maybe of this batch): that job, read after the
    /// write.
    Replay(String),
    Refused(Refusal),
}

/// A low-balance event a submit causes, with the actor of its submit.
struct Crossing {
    account: String,
    event: &'static str,
    data: serde_json::Value,
    now: i64,
    actor: String,
}

/// What the batch writes besides the jobs: low-balance events in order, and the accounts
/// whose refused submits stamp their activity.
#[derive(Default)]
struct SideEffects {
    crossings: Vec<Crossing>,
    stamps: Vec<AccountId>,
}

impl Store {
    /// Submits of any accounts in ONE transaction, each answered exactly as
    /// [`Store::submit`] would answer it, in the order given (see the module). The outer
    /// error fails the transaction as a whole: nothing is written. A batch of one runs as
    /// a single submit.
    pub async fn submit_many(
        &self,
        items: &[QueuedSubmit],
    ) -> Result<Vec<Result<Submitted, Refusal>>, StoreError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        if let [one] = items {
            return match crate::actor::acting_as(&one.actor, self.submit(&one.req)).await {
                Ok(submitted) => Ok(vec![Ok(submitted)]),
                Err(StoreError::Refused(refused)) => Ok(vec![Err(refused)]),
                Err(e) => Err(e),
            };
        }
        let hashes: Vec<String> = items.iter().map(|i| submit_hash(&i.req)).collect();
        let first = &items[0].req.account;
        let several = items.iter().any(|i| &i.req.account != first);
        in_write_tx!(self, across several.then_some(CrossAccount::SubmitBatch), |tx| async {
            let named: Vec<[&str; 2]> = items
                .iter()
                .map(|i| [i.req.account.as_str(), i.req.key.as_str()])
                .collect();
            let mut states = lock_accounts_and_read(tx, &named, Some(&named)).await?;
            let mut writes = Vec::with_capacity(items.len());
            let mut effects = SideEffects::default();
            let mut decided = Vec::with_capacity(items.len());
            for (item, hash) in items.iter().zip(&hashes) {
                let state = states.get_mut(&item.req.account);
                let d = self.decide_queued(tx, state, item, hash, &mut writes, &mut effects);
                decided.push(d.await?);
            }
            let mut written = write_jobs(tx, &writes).await?;
            for account in &effects.stamps {
                let snap = snapshot_of(&mut states, account)?;
                self.stamp_activity(tx, account, snap).await?;
            }
            for c in effects.crossings {
                let emitted = emit(tx, c.event, &c.account, None, c.data, c.now);
                crate::actor::acting_as(&c.actor, emitted).await?;
            }
            let mut answers = Vec::with_capacity(decided.len());
            for d in decided {
                answers.push(match d {
                    SubmitAnswer::New(job_id) => Ok(Submitted {
                        job: written.remove(&job_id).ok_or_else(|| {
                            StoreError::Corrupt(format!("job {job_id}: decided, not written"))
                        })?,
                        replay: false,
                    }),
                    SubmitAnswer::Replay(job_id) => Ok(Submitted {
                        job: read_job(tx, &job_id).await?.job,
                        replay: true,
                    }),
                    SubmitAnswer::Refused(refused) => Err(refused),
                });
            }
            Ok(answers)
        })
    }

    /// Decides one submit of the batch on its account's state (`None`: no such account)
    /// as [`Store::submit`] decides, and applies it to the state: the hold held, the job
    /// open, the key recorded.
    async fn decide_queued(
        &self,
        tx: &mut Tx,
        state: Option<&mut AccountState>,
        item: &QueuedSubmit,
        hash: &str,
        writes: &mut Vec<SubmitWrite>,
        effects: &mut SideEffects,
    ) -> Result<SubmitAnswer, StoreError> {
        let req = &item.req;
        // As for a single submit: an unknown kind before the account's 404.
        let kind = match self.card().kind(&req.kind) {
            Ok(kind) => kind,
            Err(unknown) => return Ok(SubmitAnswer::Refused(unknown)),
        };
        let Some(state) = state else {
            return Ok(SubmitAnswer::Refused(Refusal::AccountNotFound));
        };
        let key = req.key.as_str();
        match state.replay(key, "submit", hash) {
            Err(refused) => return Ok(SubmitAnswer::Refused(refused)),
            Ok(Some(record)) => {
                let job = record.job_id.clone();
                let job =
                    job.ok_or_else(|| StoreError::Corrupt("submit record without job".into()))?;
                return Ok(SubmitAnswer::Replay(job));
            }
            Ok(None) => {}
        }
        let refills = state.snap.due_refills(self.card());
        // Written as the caller's: the batch runs on a task of its own.
        let refilled = apply_refills(tx, &req.account, &mut state.snap, &refills);
        crate::actor::acting_as(&item.actor, refilled).await?;
        let open = state.open_jobs()?;
        let decision = match decide::decide_submit(&state.snap, open, kind, self.card()) {
            Ok(decision) => decision,
            Err(refused) => {
                if !effects.stamps.contains(&req.account) {
                    effects.stamps.push(req.account.clone());
                }
                return Ok(SubmitAnswer::Refused(refused));
            }
        };
        let mut write = SubmitWrite::new(self.card(), state, req, hash, decision.clone())?;
        write.actor = item.actor.clone();
        let before = state.snap.available_money();
        let after = before - write.money_hold_micros;
        for (event, data) in crossing_events(self.card(), &state.snap, before, after) {
            effects.crossings.push(Crossing {
                account: req.account.to_string(),
                event,
                data,
                now: state.snap.now,
                actor: item.actor.clone(),
            });
        }
        state.snap.apply_hold(&decision.hold);
        state.snap.last_active_at = Some(state.snap.now);
        state.open_jobs = Some(open + 1);
        let record = IdemRecord {
            operation: "submit".to_owned(),
            request_hash: hash.to_owned(),
            entry_id: None,
            job_id: Some(write.job_id.clone()),
        };
        state.remember(key, record);
        let job_id = write.job_id.clone();
        writes.push(write);
        Ok(SubmitAnswer::New(job_id))
    }
}

fn snapshot_of<'s>(
    states: &'s mut HashMap<AccountId, AccountState>,
    account: &AccountId,
) -> Result<&'s mut AccountSnapshot, StoreError> {
    states
        .get_mut(account)
        .map(|s| &mut s.snap)
        .ok_or_else(|| StoreError::Corrupt(format!("{account}: refused, not read")))
}

/// Writes the new jobs in one statement; the jobs as written, by id.
async fn write_jobs(
    tx: &mut Tx,
    writes: &[SubmitWrite],
) -> Result<HashMap<String, crate::model::Job>, StoreError> {
    let mut written = HashMap::with_capacity(writes.len());
    if writes.is_empty() {
        return Ok(written);
    }
    let params = tx.items("items", writes)?;
    for row in tx.rows(&WRITE, params).await? {
        let job = job_from(&row)?.job;
        written.insert(job.job_id.clone(), job);
    }
    if written.len() != writes.len() {
        return Err(StoreError::Corrupt(format!(
            "a submit batch wrote {} jobs, decided {}",
            written.len(),
            writes.len()
        )));
    }
    Ok(written)
}
