//! Submits: the one path of every submit — a single submit ([`Store::submit`], a call of
//! one) and the submit batcher's group commit ([`Store::submit_many`]) — applied
//! set-based in ONE transaction, so single and batched submits answer alike by
//! construction. Two statements per call whatever its size: lock the accounts (sorted)
//! and, every lock held, read the clock and their pockets and open jobs
//! (`ingest_lock_accounts`, as for debits); write every key, hold and job
//! (`submit_jobs`; on PostgreSQL the items bound as one array of `submit_item`, see
//! [`Records`]). Between the two `holdfast_core::decide` decides each submit in order, on
//! its account as the submits before it left it (their holds held, their jobs open,
//! their keys recorded). The keys are claimed as [`crate::units::claim`] says.
//!
//! What only some submits need runs per account, in the same transaction: a due refill
//! (before the account's first decision; a refusal still commits it, since time passing
//! is not the request's change), the activity stamp of a refused submit, a replay's job
//! read back (after the write), and a low-balance event (after the write, in order; a
//! submit writes no other event). Each is written as its submit's caller (its actor),
//! not as the batch's task.

use std::collections::HashMap;

use holdfast_core::decide::{self, SubmitDecision};
use holdfast_core::{AccountId, IdempotencyKey, MONEY, RateCard, Refusal};
use serde::Serialize;
use serde_json::json;

use crate::driver::db::Tx;
use crate::driver::statement::{Records, Stmt};
use crate::error::StoreError;
use crate::model::{Job, Submitted};
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::account_state::{AccountState, IdemRecord};
use crate::units::claim::{
    AttemptFailed, Keys, Stale, any_key_used, claimed_then_read, lock_accounts_and_read, locked_mut,
};
use crate::units::jobs::{job_from, read_job};
use crate::units::writes::{apply_refills, crossing_events, emit, request_hash};
use crate::{in_write_tx, statement};

static WRITE: Stmt = statement!("submit_jobs");

/// Submit request.
#[derive(Debug, Clone)]
pub struct Submit {
    pub account: AccountId,
    pub kind: String,
    pub payload: Option<serde_json::Value>,
    pub key: IdempotencyKey,
}

/// One submit of a call, with the actor of its caller: a batch runs in a task of its
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
    /// An earlier submit under the key (maybe of this call): that job, read after the
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

/// What the call writes: the jobs, the low-balance events in order, the accounts whose
/// refused submits stamp their activity, and the keys the decision refused (unread, such
/// a key may name an earlier submit, and then the answer is its replay).
#[derive(Default)]
struct SubmitCall {
    writes: Vec<SubmitWrite>,
    crossings: Vec<Crossing>,
    stamps: Vec<AccountId>,
    refused_keys: Vec<[String; 2]>,
}

impl SubmitCall {
    /// A submit the decision refused: its account's activity is stamped, and its key,
    /// unread, may name an earlier call (then the answer is that call's).
    fn refused(&mut self, account: &AccountId, key: &str, refused: Refusal) -> SubmitAnswer {
        if !self.stamps.contains(account) {
            self.stamps.push(account.clone());
        }
        self.refused_keys
            .push([account.to_string(), key.to_owned()]);
        SubmitAnswer::Refused(refused)
    }
}

/// A submit decided to hold and queue, as `submit_jobs` reads it (`:items`): on
/// PostgreSQL a `submit_item` (migration 0015: these fields in this order), on SQLite
/// serialized as it is.
#[derive(Clone, Serialize, sqlx::Type)]
#[sqlx(type_name = "submit_item")]
pub(crate) struct SubmitWrite {
    account_id: String,
    key: String,
    request_hash: String,
    job_id: String,
    kind: String,
    lane: String,
    /// The client's payload, JSON text.
    payload: Option<String>,
    /// The hold lines decided, JSON text.
    hold: String,
    money_hold_micros: i64,
    pocket: Option<String>,
    pocket_hold: i64,
    /// The database clock as the account was read (micros): created_at, last_active_at.
    now: i64,
    /// When a job.waiting notice is due if the job is still open.
    notice_at: i64,
    limit_at_submit: i64,
    /// The open jobs with this one.
    open_at_submit: i64,
    actor: String,
    /// The card's currency, which the hold is priced in.
    currency: String,
}

impl Records for SubmitWrite {
    fn texts(&self) -> impl Iterator<Item = &str> {
        let named = [
            &self.account_id,
            &self.key,
            &self.request_hash,
            &self.job_id,
            &self.kind,
            &self.lane,
            &self.hold,
            &self.actor,
            &self.currency,
        ];
        let maybe = [&self.payload, &self.pocket];
        named
            .into_iter()
            .map(String::as_str)
            .chain(maybe.into_iter().filter_map(Option::as_deref))
    }
}

impl SubmitWrite {
    fn new(
        card: &RateCard,
        state: &AccountState,
        item: &QueuedSubmit,
        hash: &str,
        decision: &SubmitDecision,
    ) -> Result<SubmitWrite, StoreError> {
        let (money_hold, pocket_hold) = match decision.hold.as_slice() {
            [] => (0, None),
            [h] if h.pocket == MONEY => (h.amount, None),
            [h] => (0, Some(h)),
            _ => return Err(StoreError::Corrupt("a hold of more than one pocket".into())),
        };
        let (snap, req) = (&state.snap, &item.req);
        Ok(SubmitWrite {
            account_id: req.account.to_string(),
            key: req.key.as_str().to_owned(),
            request_hash: hash.to_owned(),
            job_id: uuid::Uuid::now_v7().to_string(),
            kind: req.kind.clone(),
            lane: decision.lane.clone(),
            payload: req.payload.as_ref().map(|p| p.to_string()),
            hold: serde_json::to_string(&decision.hold)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            money_hold_micros: money_hold,
            pocket: pocket_hold.map(|h| h.pocket.clone()),
            pocket_hold: pocket_hold.map_or(0, |h| h.amount),
            now: snap.now,
            notice_at: snap.now + card.timeouts.notice_delay_seconds * decide::MICROS_PER_SECOND,
            limit_at_submit: snap.concurrency_limit(card),
            open_at_submit: state.open_jobs()? + 1,
            actor: item.actor.clone(),
            currency: card.currency.clone(),
        })
    }
}

impl Store {
    /// Submits a job: hold its price and queue it, in one transaction. Idempotent by key.
    /// A call of one of [`Store::submit_many`].
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let one = [QueuedSubmit {
            req: req.clone(),
            actor: crate::actor::current(),
        }];
        match self.submit_many(&one).await?.pop() {
            Some(answer) => Ok(answer?),
            None => Err(StoreError::Corrupt("a submit without an answer".into())),
        }
    }

    /// Submits of any accounts in ONE transaction, answered in the order given (see the
    /// module). The outer error fails the transaction as a whole: nothing is written.
    pub async fn submit_many(
        &self,
        items: &[QueuedSubmit],
    ) -> Result<Vec<Result<Submitted, Refusal>>, StoreError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let hashes: Vec<String> = items.iter().map(|i| submit_hash(&i.req)).collect();
        claimed_then_read(|keys| self.submit_attempt(items, &hashes, keys)).await
    }

    /// One transaction of a submit call: lock and read, decide, write; its answers.
    async fn submit_attempt(
        &self,
        items: &[QueuedSubmit],
        hashes: &[String],
        keys: Keys,
    ) -> Result<Vec<Result<Submitted, Refusal>>, AttemptFailed> {
        let first = &items[0].req.account;
        let mark = items.iter().any(|i| &i.req.account != first);
        in_write_tx!(self, across mark.then_some(CrossAccount::SubmitBatch), fails AttemptFailed, |tx| async {
            let named: Vec<[&str; 2]> = items
                .iter()
                .map(|i| [i.req.account.as_str(), i.req.key.as_str()])
                .collect();
            let mut states = lock_accounts_and_read(tx, self.card(), &named, keys, Stale::ReadBeforeDeciding).await?;
            let mut call = SubmitCall::default();
            let mut decided = Vec::with_capacity(items.len());
            for (item, hash) in items.iter().zip(hashes) {
                let state = states.get_mut(&item.req.account);
                decided.push(self.decide_submit(tx, state, item, hash, &mut call).await?);
            }
            if any_key_used(tx, keys, &call.refused_keys).await? {
                return Err(AttemptFailed::KeyTaken);
            }
            let mut written = write_jobs(tx, std::mem::take(&mut call.writes), keys).await?;
            for state in states.values_mut() {
                state.write_changed_blocks(tx).await?;
            }
            for account in &call.stamps {
                let snap = &mut locked_mut(&mut states, account, "refused, not read")?.snap;
                self.stamp_activity(tx, account, snap).await?;
            }
            for c in call.crossings {
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

    /// Decides one submit of the call on its account's state (`None`: no such account),
    /// and applies it to the state: the hold held, the job open, the key recorded.
    async fn decide_submit(
        &self,
        tx: &mut Tx,
        state: Option<&mut AccountState>,
        item: &QueuedSubmit,
        hash: &str,
        call: &mut SubmitCall,
    ) -> Result<SubmitAnswer, StoreError> {
        let req = &item.req;
        // An unknown kind before the account's 404.
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
        // Written as the caller's: a batch runs on a task of its own.
        let refilled = apply_refills(tx, &req.account, &mut state.snap, &refills);
        crate::actor::acting_as(&item.actor, refilled).await?;
        let open = state.open_jobs()?;
        let decision = match decide::decide_submit(&state.snap, open, kind, self.card()) {
            Ok(decision) => decision,
            Err(refused) => return Ok(call.refused(&req.account, key, refused)),
        };
        let write = SubmitWrite::new(self.card(), state, item, hash, &decision)?;
        let before = state.snap.available_money();
        let after = before - write.money_hold_micros;
        for (event, data) in crossing_events(self.card(), &state.snap, before, after) {
            call.crossings.push(Crossing {
                account: req.account.to_string(),
                event,
                data,
                now: state.snap.now,
                actor: item.actor.clone(),
            });
        }
        let held = state.snap.apply_hold(&decision.hold);
        held.map_err(|e| StoreError::Corrupt(format!("{}: {e}", req.account)))?;
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
        call.writes.push(write);
        Ok(SubmitAnswer::New(job_id))
    }
}

/// The hash a submit's key records: its kind and payload.
fn submit_hash(req: &Submit) -> String {
    request_hash(&json!({ "op": "submit", "kind": req.kind, "payload": req.payload }))
}

/// Writes the new jobs in one statement; the jobs as written, by id. With
/// [`Keys::Claimed`], a key some earlier call used fails the write (a submit's) or
/// leaves its job out (a money change's): [`AttemptFailed::KeyTaken`].
async fn write_jobs(
    tx: &mut Tx,
    writes: Vec<SubmitWrite>,
    keys: Keys,
) -> Result<HashMap<String, Job>, AttemptFailed> {
    let decided = writes.len();
    let mut written = HashMap::with_capacity(decided);
    if decided == 0 {
        return Ok(written);
    }
    let params = tx.records("items", writes)?;
    let rows = match tx.rows(&WRITE, params).await {
        Err(e) if keys == Keys::Claimed && e.is_unique_violation() => {
            return Err(AttemptFailed::KeyTaken);
        }
        rows => rows?,
    };
    for row in rows {
        let job = job_from(&row)?.job;
        written.insert(job.job_id.clone(), job);
    }
    if keys == Keys::Claimed && written.len() < decided {
        return Err(AttemptFailed::KeyTaken);
    }
    if written.len() != decided {
        return Err(StoreError::Corrupt(format!(
            "a submit call wrote {} jobs, decided {decided}",
            written.len(),
        ))
        .into());
    }
    Ok(written)
}
