//! Submits: ONE unit of work for every submit, whatever its size — a single submit
//! ([`Store::submit`], the submit batcher's call alone) is a batch of one through the
//! same statements as the batcher's group commit ([`Store::submit_many`]), so the two
//! answer alike by construction.
//!
//! Set-based: lock the accounts (sorted) with the clock (`ingest_lock_accounts`, which on
//! PostgreSQL reads the pockets and open jobs before its first lock and keeps them where
//! the account's row version did not change meanwhile: docs/DESIGN.md, "Account row
//! versions"); read, every lock held, the pockets and open jobs of the accounts whose row
//! changed while the lock waited (`ingest_read_accounts`, only when there is one); write
//! every key, hold and job (`submit_jobs`). Between them `holdfast_core::decide` decides
//! each submit in order, on its account as the submits before it left it (their holds
//! held, their jobs open, their keys recorded: a key repeated in the call is a replay of
//! its first use).
//!
//! The keys are claimed optimistically, as a debit's are ([`crate::debit`]): the call
//! does not read them before deciding, and the write's plain `INSERT` claims them. A key
//! used already (a retry, a duplicate in flight) fails the write with a unique
//! violation; a refused submit's key is looked up before the write (a refused retry of an
//! earlier submit is answered as its replay). Either way the attempt is rolled back and
//! the call redone reading its keys with the pockets, so that a replay or a mismatch is
//! answered before anything (a due refill) is written for it.
//!
//! What only some submits need runs per account, in the same transaction: a due refill
//! (before the account's first decision), the activity stamp of a refused submit, a
//! replay's job read back (after the write), and a low-balance event (after the write,
//! in order; a submit writes no other event). Each is written as its submit's caller
//! (its actor), not as the batch's task.

use std::collections::HashMap;

use holdfast_core::decide::{self, AccountSnapshot, SubmitDecision};
use holdfast_core::{AccountId, IdempotencyKey, MONEY, RateCard, Refusal};
use serde_json::json;

use crate::account_state::{AccountState, IdemRecord};
use crate::db::Tx;
use crate::debit::{Keys, any_key_used, lock_accounts_and_read, read_unread_pockets};
use crate::error::{StoreError, answer_of_one};
use crate::jobs::{job_from, read_job};
use crate::model::Submitted;
use crate::scope::CrossAccount;
use crate::statement::{Params, Stmt};
use crate::store::Store;
use crate::writes::{apply_refills, crossing_event, emit, items_params, request_hash};
use crate::{columns, in_write_tx, statement};

static WRITE: Stmt = statement!("submit_jobs");

/// Submit request.
#[derive(Debug, Clone)]
pub struct Submit {
    pub account: holdfast_core::AccountId,
    pub kind: String,
    pub payload: Option<serde_json::Value>,
    pub key: IdempotencyKey,
}

/// One submit of a batch, with the actor of its caller: the batch runs in a task of its
/// own, where [`crate::actor::current`] is not the caller's.
#[derive(Debug, Clone)]
pub struct QueuedSubmit {
    pub req: Submit,
    pub actor: String,
}

/// A submit's answer as decided, before the write.
enum Decided {
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

/// What the call writes besides the jobs: low-balance events in order, and the accounts
/// whose refused submits stamp their activity; and the keys of the refused submits,
/// `[account, key]`: unread, such a key may name an earlier submit, whose replay is then
/// the answer.
#[derive(Default)]
struct SideWrites {
    crossings: Vec<Crossing>,
    stamps: Vec<AccountId>,
    refused_keys: Vec<[String; 2]>,
}

impl Store {
    /// Submits a job: hold its price and queue it, in one transaction. Idempotent by key.
    /// A refusal still commits the due refill and the activity: time passing is not the
    /// request's change. A batch of one.
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let item = QueuedSubmit {
            req: req.clone(),
            actor: crate::actor::current(),
        };
        self.submit_one(&item).await
    }

    /// One submit with its caller's actor (the submit batcher's call alone): a batch of
    /// one, its refusal answered as the error it is.
    pub async fn submit_one(&self, item: &QueuedSubmit) -> Result<Submitted, StoreError> {
        answer_of_one(self.submit_many(std::slice::from_ref(item)).await?)
    }

    /// Submits of any accounts in ONE transaction, each answered as alone, in the order
    /// given (see the module). The outer error fails the transaction as a whole: nothing
    /// is written.
    pub async fn submit_many(
        &self,
        items: &[QueuedSubmit],
    ) -> Result<Vec<Result<Submitted, Refusal>>, StoreError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let hashes: Vec<String> = items.iter().map(|i| submit_hash(&i.req)).collect();
        match self.submit_attempt(items, &hashes, Keys::Claimed).await {
            Err(StoreError::KeyTaken) => self.submit_attempt(items, &hashes, Keys::ReadFirst).await,
            other => other,
        }
    }

    /// One transaction of a submit call: lock and read, decide, write, answer.
    async fn submit_attempt(
        &self,
        items: &[QueuedSubmit],
        hashes: &[String],
        keys: Keys,
    ) -> Result<Vec<Result<Submitted, Refusal>>, StoreError> {
        let first = &items[0].req.account;
        let several = items.iter().any(|i| &i.req.account != first);
        in_write_tx!(self, unit several.then_some(CrossAccount::SubmitBatch), |tx| async {
            let named: Vec<[&str; 2]> = items
                .iter()
                .map(|i| [i.req.account.as_str(), i.req.key.as_str()])
                .collect();
            let read_keys = (keys == Keys::ReadFirst).then_some(named.as_slice());
            let (mut states, _) = lock_accounts_and_read(tx, &named, read_keys, 0).await?;
            read_unread_pockets(tx, &mut states).await?;
            let mut writes = Vec::with_capacity(items.len());
            let mut extras = SideWrites::default();
            let mut decided = Vec::with_capacity(items.len());
            for (item, hash) in items.iter().zip(hashes) {
                let state = states.get_mut(&item.req.account);
                let d = self.decide_queued(tx, state, item, hash, &mut writes, &mut extras);
                decided.push(d.await?);
            }
            if keys == Keys::Claimed && any_key_used(tx, &extras.refused_keys).await? {
                return Err(StoreError::KeyTaken);
            }
            let mut written = match write_jobs(tx, &writes).await {
                // The write claims the keys with a plain INSERT (see submit_jobs.sql).
                Err(e) if keys == Keys::Claimed && e.is_unique_violation() => {
                    return Err(StoreError::KeyTaken);
                }
                written => written?,
            };
            for account in &extras.stamps {
                let snap = snapshot_of(&mut states, account)?;
                self.stamp_activity(tx, account, snap).await?;
            }
            for c in extras.crossings {
                let emitted = emit(tx, c.event, &c.account, None, c.data, c.now);
                crate::actor::acting_as(&c.actor, emitted).await?;
            }
            let mut answers = Vec::with_capacity(decided.len());
            for d in decided {
                answers.push(match d {
                    Decided::New(job_id) => Ok(Submitted {
                        job: written.remove(&job_id).ok_or_else(|| {
                            StoreError::Corrupt(format!("job {job_id}: decided, not written"))
                        })?,
                        replay: false,
                    }),
                    Decided::Replay(job_id) => Ok(Submitted {
                        job: read_job(tx, &job_id).await?.job,
                        replay: true,
                    }),
                    Decided::Refused(refused) => Err(refused),
                });
            }
            Ok(answers)
        })
    }

    /// Decides one submit of the call on its account's state (`None`: no such account),
    /// and applies it to the state: the hold held, the job open, the key recorded.
    async fn decide_queued(
        &self,
        tx: &mut Tx,
        state: Option<&mut AccountState>,
        item: &QueuedSubmit,
        hash: &str,
        writes: &mut Vec<SubmitWrite>,
        extras: &mut SideWrites,
    ) -> Result<Decided, StoreError> {
        let req = &item.req;
        // As for a single submit: an unknown kind before the account's 404.
        let Some(kind) = self.card().kinds.get(&req.kind) else {
            return Ok(Decided::Refused(Refusal::UnknownKind(req.kind.clone())));
        };
        let Some(state) = state else {
            return Ok(Decided::Refused(Refusal::AccountNotFound));
        };
        let key = req.key.as_str();
        match state.replay(key, "submit", hash) {
            Err(refused) => return Ok(Decided::Refused(refused)),
            Ok(Some(record)) => {
                let job = record.job_id.clone();
                let job =
                    job.ok_or_else(|| StoreError::Corrupt("submit record without job".into()))?;
                return Ok(Decided::Replay(job));
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
                if !extras.stamps.contains(&req.account) {
                    extras.stamps.push(req.account.clone());
                }
                let named = [req.account.to_string(), key.to_owned()];
                extras.refused_keys.push(named);
                return Ok(Decided::Refused(refused));
            }
        };
        let mut write = SubmitWrite::new(self.card(), state, req, hash, decision.clone())?;
        write.actor = item.actor.clone();
        let before = state.snap.available_money();
        let after = before - write.money_hold_micros;
        if let Some((event, data)) = crossing_event(self.card(), &state.snap, before, after) {
            extras.crossings.push(Crossing {
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
        Ok(Decided::New(job_id))
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
    let params = items_params(
        tx.dialect(),
        "submit_jobs",
        "items",
        writes,
        SubmitWrite::columns,
    )?;
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

/// One submit as `submit_jobs.sql` writes it (by the same names).
#[derive(serde::Serialize)]
pub(crate) struct SubmitWrite {
    account_id: String,
    key: String,
    request_hash: String,
    pub(crate) job_id: String,
    kind: String,
    lane: String,
    payload: Option<String>,
    hold: String,
    pub(crate) money_hold_micros: i64,
    pocket: Option<String>,
    pocket_hold: i64,
    now: i64,
    notice_at: i64,
    limit_at_submit: i64,
    open_at_submit: i64,
    pub(crate) actor: String,
    currency: String,
}

impl SubmitWrite {
    /// Submits as `submit_jobs` takes them on PostgreSQL: one array per field.
    pub(crate) fn columns(writes: &[SubmitWrite]) -> Params {
        columns!(writes;
            account_ids: account_id, keys: key, request_hashes: request_hash, job_ids: job_id,
            kinds: kind, lanes: lane, payloads: payload, holds: hold,
            money_hold_micros: money_hold_micros, pockets: pocket, pocket_holds: pocket_hold,
            nows: now, notice_ats: notice_at, limits_at_submit: limit_at_submit,
            open_at_submit: open_at_submit, actors: actor, currencies: currency)
    }
}

impl SubmitWrite {
    pub(crate) fn new(
        card: &RateCard,
        state: &AccountState,
        req: &Submit,
        hash: &str,
        decision: SubmitDecision,
    ) -> Result<SubmitWrite, StoreError> {
        let (money_hold, pocket_hold) = match decision.hold.as_slice() {
            [] => (0, None),
            [h] if h.pocket == MONEY => (h.amount, None),
            [h] => (0, Some(h)),
            _ => return Err(StoreError::Corrupt("a hold of more than one pocket".into())),
        };
        let snap = &state.snap;
        let open = state.open_jobs()?;
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
            open_at_submit: open + 1,
            actor: crate::actor::current(),
            currency: card.currency.clone(),
        })
    }
}

/// The hash a submit's key records: its kind and payload.
pub(crate) fn submit_hash(req: &Submit) -> String {
    request_hash(&json!({ "op": "submit", "kind": req.kind, "payload": req.payload }))
}
