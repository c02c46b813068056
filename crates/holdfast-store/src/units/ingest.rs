//! Debits: the one path of every debit — a single debit ([`Store::debit_one`], a call
//! of one), the debit batcher's group commit ([`Store::debit_many`]) and a batch ingest
//! ([`Store::ingest`]) — applied set-based in ONE transaction, so single and batched
//! debits answer alike by construction. Two statements per call whatever its size: lock
//! the accounts (sorted) and read their rows with the locks, then, every lock held, the
//! clock and their pockets and open jobs (`ingest_lock_accounts`); write everything
//! (`ingest_write`: every entry, which carries its key, and each account row once; on
//! PostgreSQL the items bound as one array of a composite type per kind of row, see
//! [`Records`]). Between the two, `holdfast_core::decide` decides every debit in order:
//! each account's debits in the order given, each buffer check seeing the debits before
//! it. The entries take their ids from the ledger as the write inserts them (under the
//! locks, so the ledger's order is the order of application); until then a decided
//! debit is known by its place in the call ([`Written`]). The answers' account views are
//! built after the commit, from each account's state and where each debit left it, so
//! the locks are not held while they are built.
//!
//! The keys are claimed as [`crate::units::claim`] says: unread, by the write's
//! `INSERT` (a key some earlier money change used fails it with a unique violation; one
//! a submit used leaves its entry out), the call redone reading them where one was
//! taken.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use holdfast_core::decide::{self, BlockAmount, MoneyMove, Suspension};
use holdfast_core::{AccountId, AccountSnapshot, MONEY, Micros, RateCard, Refusal};
use serde::Serialize;

use crate::driver::db::{Arg, Tx};
use crate::driver::statement::{Params, Records, Stmt};
use crate::error::StoreError;
use crate::model::{AccountView, LedgerEntry, MoneyResult, SpendView};
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::account_state::{AccountState, IdemRecord, account_id_of, listed_extras};
use crate::units::blocks::{BlockWrite, lines_text};
use crate::units::claim::{
    AttemptFailed, Keys, Stale, any_key_used, claimed_then_read, lock_accounts_and_read,
    locked_mut, read_again,
};
use crate::units::jobs::{UsedJobs, used_jobs};
use crate::units::money::{DebitRequest, PricedDebit};
use crate::units::writes::{
    EntryFacts, crossing_events, emit, emit_suspension, read_entry, spend_thresholds,
};
use crate::{in_write_tx, params, statement};

static WRITE: Stmt = statement!("ingest_write");

/// What the decision gave one debit of the call.
enum DebitOutcome {
    /// Applied: its entry, and where it left its account.
    Applied(Box<LedgerEntry>, Standing),
    /// An earlier use of the key: that entry's id, and where its account stood then.
    Replay(i64, Standing),
    Refused(Refusal),
}

/// A debit's answer as the transaction leaves it, or the refusal. Its account view is
/// built after the commit.
type Answer = Result<Answered, Refusal>;

/// A debit that was applied or replayed: its entry (a replay's read back), where its
/// account stood, and whether it was a replay.
struct Answered {
    entry: LedgerEntry,
    standing: Standing,
    replay: bool,
}

/// Where an account stood at one debit of the call: the part of its view that a debit
/// moves (a debit changes neither its held money, its pockets nor its open jobs).
#[derive(Debug, Clone, Copy)]
struct Standing {
    balance: i64,
    total_spent: i64,
    suspended_at: Option<i64>,
}

impl Standing {
    fn of(state: &AccountState) -> Standing {
        Standing {
            balance: state.snap.balance,
            total_spent: state.snap.total_spent,
            suspended_at: state.snap.suspended_at,
        }
    }

    /// The account's view at this point, from its view after the call.
    fn view(self, after: &AccountView) -> AccountView {
        let spent_since = after.total_spent - self.total_spent;
        let spend = after.spend.clone().map(|s| SpendView {
            spent: s.spent - spent_since,
            left: s.left.map(|left| left + spent_since),
            ..s
        });
        AccountView {
            balance: self.balance,
            available: after.available + (self.balance - after.balance),
            total_spent: self.total_spent,
            suspended_at: self.suspended_at,
            spend,
            ..after.clone()
        }
    }
}

/// What the call writes: the debits that apply, each account's sum, the suspensions.
#[derive(Default)]
struct IngestWrite {
    items: Vec<DebitItem>,
    changes: Vec<AccountChange>,
    suspensions: Vec<(String, Suspension, AccountSnapshot, i64)>,
    /// Low-balance crossings: (account, event type, data, time).
    crossings: Vec<(String, &'static str, serde_json::Value, i64)>,
    /// The keys of the debits the decision refused, `[account, key]`: unread, such a key
    /// may name an earlier debit, and then the answer is its replay.
    refused_keys: Vec<[String; 2]>,
    /// The credit blocks the debits drew from, as the call leaves them.
    blocks: Vec<BlockWrite>,
}

impl IngestWrite {
    /// The parameters of `ingest_write` (see [`Records`]); the items and changes move
    /// into them.
    fn params(&mut self, tx: &Tx, answered: &[AccountId]) -> Result<Params, StoreError> {
        let blocks = serde_json::to_string(&std::mem::take(&mut self.blocks))
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let named = params! {
            answered: Arg::texts(answered.iter().map(AccountId::as_str)), blocks: blocks,
        };
        Ok(tx
            .records("items", std::mem::take(&mut self.items))?
            .and(tx.records("changes", std::mem::take(&mut self.changes))?)
            .and(named))
    }
}

impl Records for DebitItem {
    fn texts(&self) -> impl Iterator<Item = &str> {
        let named = [&self.account_id, &self.key, &self.request_hash, &self.actor];
        let maybe = [&self.reference, &self.meter, &self.blocks];
        named
            .into_iter()
            .map(String::as_str)
            .chain(maybe.into_iter().filter_map(Option::as_deref))
    }
}

impl Records for AccountChange {
    fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.account_id.as_str()).chain(self.live_blocks.as_deref())
    }
}

/// An applied debit as `ingest_write` reads it (`:items`): on PostgreSQL a `debit_item`
/// (migration 0014: these fields in this order; sqlx derives its array type, `_debit_item`), on SQLite serialized as it is, not built
/// as a `serde_json::Value` (fewer allocations per debit).
#[derive(Clone, Serialize, sqlx::Type)]
#[sqlx(type_name = "debit_item")]
pub struct DebitItem {
    pub account_id: String,
    pub key: String,
    pub request_hash: String,
    pub delta: i64,
    pub amount_after: i64,
    pub available_after: i64,
    pub buffer: i64,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub now: i64,
    /// Who asked for it: a batch carries the debits of several callers (the batcher's
    /// group commit runs on a task of its own).
    pub actor: String,
    /// What a metered debit used: its meter and seconds.
    pub meter: Option<String>,
    pub seconds: Option<i64>,
    /// The credit blocks it drew from, as the entry stores them (NULL: none).
    pub blocks: Option<String>,
}

/// An account's row as `ingest_write` changes it (`:changes`): the sum of its debits;
/// on PostgreSQL an `account_change` (migration 0014). Public, with [`DebitItem`], for
/// the bench, which runs the engine's statements without the engine.
#[derive(Clone, Serialize, sqlx::Type)]
#[sqlx(type_name = "account_change")]
pub struct AccountChange {
    pub account_id: String,
    pub delta: i64,
    pub spent: i64,
    pub suspended_at: Option<i64>,
    pub balance_after: i64,
    pub buffer: i64,
    /// The account's live credit blocks after the call (`accounts.live_blocks`), where
    /// it drew from some; `None`: unchanged.
    pub live_blocks: Option<String>,
}

impl Store {
    /// Debits of any accounts in ONE transaction, answered in the order given, each
    /// exactly as a single debit would be answered (see the module). The outer error
    /// fails the transaction as a whole: nothing is written.
    pub async fn ingest(
        &self,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        self.apply_debits(items, CrossAccount::Ingest).await
    }

    /// [`Store::ingest`] for the debits that `why` brings together (a batch ingest, or
    /// the batcher's group commit: see [`Store::debit_many`]).
    pub(crate) async fn apply_debits(
        &self,
        items: &[(AccountId, DebitRequest)],
        why: CrossAccount,
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        let priced: Vec<Result<PricedDebit<'_>, Refusal>> =
            items.iter().map(|(_, r)| self.price_debit(r)).collect();
        let (answers, states) =
            claimed_then_read(|keys| self.ingest_attempt(items, &priced, keys, why)).await?;
        // Committed: each account's view after the call (once), then each answer's.
        let mut after: HashMap<&AccountId, AccountView> = HashMap::new();
        let mut out = Vec::with_capacity(answers.len());
        for ((account, _), answer) in items.iter().zip(answers) {
            let Answered {
                entry,
                standing,
                replay,
            } = match answer {
                Ok(applied) => applied,
                Err(refused) => {
                    out.push(Err(refused));
                    continue;
                }
            };
            let view = match after.entry(account) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(new) => new.insert(read_state(&states, account)?.view(self.card())?),
            };
            let account = standing.view(view);
            out.push(Ok(MoneyResult {
                entry,
                account,
                replay,
            }));
        }
        Ok(out)
    }

    /// One transaction of an ingest: lock and read, decide, write; what it answers, and
    /// the accounts' states after it (for the answers' views).
    async fn ingest_attempt(
        &self,
        items: &[(AccountId, DebitRequest)],
        priced: &[Result<PricedDebit<'_>, Refusal>],
        keys: Keys,
        why: CrossAccount,
    ) -> Result<(Vec<Answer>, HashMap<AccountId, Ingesting>), AttemptFailed> {
        let mark = items.iter().any(|(a, _)| a != &items[0].0).then_some(why);
        in_write_tx!(self, across mark, fails AttemptFailed, |tx| async {
            let mut states = lock_and_read(tx, self.card(), items, keys).await?;
            // Only the debits that passed their checks (a job_ref with a NUL does not).
            let refs = items.iter().zip(priced).filter_map(|((a, _), p)| {
                Some((a.as_str(), p.as_ref().ok()?.req.job_ref.as_deref()?))
            });
            let jobs = used_jobs(tx, refs).await?;
            let mut write = IngestWrite::default();
            let mut decided = Vec::with_capacity(items.len());
            for ((account, _), p) in items.iter().zip(priced) {
                let state = states.get_mut(account);
                decided.push(self.decide_one(state, p, &jobs, &mut write)?);
            }
            if any_key_used(tx, keys, &write.refused_keys).await? {
                return Err(AttemptFailed::KeyTaken);
            }
            for ing in states.values_mut() {
                let changed = ing.state.take_changed_blocks();
                write.blocks.extend(changed.rows.iter().map(BlockWrite::of));
                if let Some(mut change) = ing.change() {
                    change.live_blocks = changed.live;
                    write.changes.push(change);
                }
            }
            let written = apply(tx, write, keys, &mut states).await?;
            let mut out = Vec::with_capacity(decided.len());
            for d in decided {
                out.push(match d {
                    DebitOutcome::Applied(entry, standing) => {
                        let mut entry = *entry;
                        entry.entry_id = written.id_of(entry.entry_id)?;
                        Ok(Answered {
                            entry,
                            standing,
                            replay: false,
                        })
                    }
                    DebitOutcome::Replay(entry_id, standing) => Ok(Answered {
                        entry: read_entry(tx, written.id_of(entry_id)?).await?,
                        standing,
                        replay: true,
                    }),
                    DebitOutcome::Refused(r) => Err(r),
                });
            }
            // Every account answered must have its pockets and open jobs read: the
            // views are built after the commit, where an error could no longer undo it.
            for ((account, _), answer) in items.iter().zip(&out) {
                if answer.is_ok() {
                    read_state(&states, account)?.open_jobs()?;
                }
            }
            Ok((out, states))
        })
    }

    /// Decides one debit of the call on its account's state, and adds what it writes.
    fn decide_one(
        &self,
        state: Option<&mut Ingesting>,
        p: &Result<PricedDebit<'_>, Refusal>,
        jobs: &UsedJobs,
        write: &mut IngestWrite,
    ) -> Result<DebitOutcome, StoreError> {
        // As for a single debit: a 422 of the request before the account's 404.
        let p = match p {
            Ok(p) => p,
            Err(r) => return Ok(DebitOutcome::Refused(r.clone())),
        };
        let Some(ing) = state else {
            return Ok(DebitOutcome::Refused(Refusal::AccountNotFound));
        };
        let state = &mut ing.state;
        let key = p.req.key.as_str();
        match state.replay(key, "debit", &p.hash) {
            Err(r) => return Ok(DebitOutcome::Refused(r)),
            Ok(Some(record)) => {
                let entry_id = record
                    .entry_id
                    .ok_or_else(|| StoreError::Corrupt(format!("key {key:?}: no entry")))?;
                return Ok(DebitOutcome::Replay(entry_id, Standing::of(state)));
            }
            Ok(None) => {}
        }
        let buffer = state.snap.buffer(self.card());
        let change = MoneyMove::Debit(p.amount);
        let after = match self
            .may_debit(state, p, jobs, buffer)
            .and_then(|()| decide::change_money(&state.snap, change))
        {
            Ok(after) => after,
            Err(r) => {
                let account = state.account.to_string();
                write.refused_keys.push([account, key.to_owned()]);
                return Ok(DebitOutcome::Refused(r));
            }
        };
        let entry_id = Written::provisional(write.items.len());
        let before = state.snap.available_money();
        let lines = state.snap.draw(p.amount.0);
        (state.snap)
            .apply_money_from(&after, &lines)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", state.account)))?;
        let now_available = state.snap.available_money();
        let mut crossings = crossing_events(self.card(), &state.snap, before, now_available);
        crossings.extend(spend_thresholds(self.card(), &mut state.snap));
        for (event, data) in crossings {
            let account = state.account.to_string();
            write.crossings.push((account, event, data, state.snap.now));
        }
        let entry = ing.record(p, change, buffer, entry_id, lines, write);
        if after.suspension != Suspension::Unchanged {
            let account = ing.state.account.to_string();
            let suspension = (account, after.suspension, ing.state.snap.clone(), entry_id);
            write.suspensions.push(suspension);
        }
        Ok(DebitOutcome::Applied(
            Box::new(entry),
            Standing::of(&ing.state),
        ))
    }
}

/// The state of an account the call answered, which must have been read.
fn read_state<'s>(
    states: &'s HashMap<AccountId, Ingesting>,
    account: &AccountId,
) -> Result<&'s AccountState, StoreError> {
    states
        .get(account)
        .map(|ing| &ing.state)
        .ok_or_else(|| StoreError::Corrupt(format!("{account}: answered, not read")))
}

/// An account of the call: its state as the decisions move it, and its row's change.
struct Ingesting {
    state: AccountState,
    /// Where the account stood when read: its change is the difference.
    start: (i64, i64),
    /// The buffer its last applied debit was checked against (`None`: none applied).
    buffer: Option<i64>,
}

impl Ingesting {
    /// The change of its row, once a debit applied.
    fn change(&self) -> Option<AccountChange> {
        let buffer = self.buffer?;
        let snap = &self.state.snap;
        let (balance, spent) = self.start;
        Some(AccountChange {
            account_id: self.state.account.to_string(),
            delta: snap.balance - balance,
            spent: snap.total_spent - spent,
            suspended_at: snap.suspended_at,
            balance_after: snap.balance,
            buffer,
            live_blocks: None,
        })
    }

    /// Records an applied debit (its key, its entry, the account's change so far) and
    /// returns its entry.
    fn record(
        &mut self,
        p: &PricedDebit<'_>,
        change: MoneyMove,
        buffer: Micros,
        entry_id: i64,
        lines: Vec<BlockAmount>,
        write: &mut IngestWrite,
    ) -> LedgerEntry {
        let snap = &self.state.snap;
        let account = self.state.account.to_string();
        let available_after = snap.balance - snap.held;
        write.items.push(DebitItem {
            account_id: account.clone(),
            key: p.req.key.as_str().to_owned(),
            request_hash: p.hash.clone(),
            delta: change.delta_micros(),
            amount_after: snap.balance,
            available_after,
            buffer: buffer.0,
            reference: p.req.job_ref.clone(),
            now: snap.now,
            actor: p.req.actor.clone(),
            meter: p.req.usage.meter().map(str::to_owned),
            seconds: p.req.usage.seconds(),
            blocks: lines_text(&lines),
        });
        self.buffer = Some(buffer.0);
        let record = IdemRecord {
            operation: "debit".to_owned(),
            request_hash: p.hash.clone(),
            entry_id: Some(entry_id),
            job_id: None,
        };
        self.state.remember(p.req.key.as_str(), record);
        let facts = EntryFacts {
            pocket: MONEY,
            delta: change.delta_micros(),
            kind: "debit",
            amount_after: self.state.snap.balance,
            available_after: Some(available_after),
            buffer: Some(buffer.0),
            reference: p.req.job_ref.clone(),
        };
        LedgerEntry {
            actor: Some(p.req.actor.clone()),
            meter: p.req.usage.meter().map(str::to_owned),
            seconds: p.req.usage.seconds(),
            blocks: lines,
            ..facts.entry(entry_id, &account, self.state.snap.now)
        }
    }
}

/// Locks the accounts the items name (sorted), reading their rows with the locks, the
/// clock and `wanted` ledger ids (in increasing order) once every lock is held, and the
/// records of the keys named when `keys` says so. An account that does not exist is
/// absent.
async fn lock_and_read(
    tx: &mut Tx,
    card: &RateCard,
    items: &[(AccountId, DebitRequest)],
    keys: Keys,
) -> Result<HashMap<AccountId, Ingesting>, StoreError> {
    let named: Vec<[&str; 2]> = items
        .iter()
        .map(|(a, r)| [a.as_str(), r.key.as_str()])
        .collect();
    let states = lock_accounts_and_read(tx, card, &named, keys, Stale::ReadByTheWrite).await?;
    let states = states.into_iter().map(|(account, state)| {
        let start = (state.snap.balance, state.snap.total_spent);
        let ingesting = Ingesting {
            state,
            start,
            buffer: None,
        };
        (account, ingesting)
    });
    Ok(states.collect())
}

/// The entry ids a write listed (`1,2,3`), in order.
fn parse_ids(listed: &str) -> Result<Vec<i64>, StoreError> {
    listed
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<i64>()
                .map_err(|e| StoreError::Corrupt(format!("entry id {s:?}: {e}")))
        })
        .collect()
}

/// The ledger ids of a call's entries. The ledger gives them as the write inserts the
/// entries, in the order of the items; until then a debit decided in the call is known
/// by a provisional id, its place among the items, negative (never a ledger id).
struct Written {
    ids: Vec<i64>,
}

impl Written {
    fn provisional(index: usize) -> i64 {
        -(index as i64) - 1
    }

    /// The ledger id of `id`, provisional or not.
    fn id_of(&self, id: i64) -> Result<i64, StoreError> {
        if id > 0 {
            return Ok(id);
        }
        usize::try_from(-id - 1)
            .ok()
            .and_then(|index| self.ids.get(index).copied())
            .ok_or_else(|| StoreError::Corrupt(format!("entry {id}: not written")))
    }
}

/// Writes what was decided and checks every row was written; returns the entries' ids,
/// fills in the pockets and open jobs of the accounts read without them (for the
/// answers: the write reads them, or, when nothing is written, a statement of their
/// own), and emits the suspensions and crossings. With [`Keys::Claimed`], a key some
/// earlier call used fails the write or leaves its entries short:
/// [`AttemptFailed::KeyTaken`], and the caller rolls back and reads the keys.
async fn apply(
    tx: &mut Tx,
    mut write: IngestWrite,
    keys: Keys,
    states: &mut HashMap<AccountId, Ingesting>,
) -> Result<Written, AttemptFailed> {
    let unread: Vec<AccountId> = states
        .iter()
        .filter(|(_, ing)| ing.state.open_jobs.is_none())
        .map(|(account, _)| account.clone())
        .collect();
    if write.items.is_empty() {
        let unread_ids = unread.iter().map(AccountId::as_str).collect();
        for row in read_again(tx, unread_ids, &[]).await? {
            let ing = locked_mut(states, &account_id_of(&row)?, "read, not locked")?;
            ing.state.fill_from(&row)?;
        }
        return Ok(Written { ids: Vec::new() });
    }
    let items = write.items.len();
    let changes = write.changes.len() as i64;
    let params = write.params(tx, &unread)?;
    let row = match tx.row(&WRITE, params).await {
        // A key an earlier money change used (see ingest_write.sql).
        Err(e) if keys == Keys::Claimed && e.is_unique_violation() => {
            return Err(AttemptFailed::KeyTaken);
        }
        row => row?,
    };
    for listed in listed_extras(&row.text("extras")?)? {
        let account =
            AccountId::parse(&listed.account).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        locked_mut(states, &account, "read, not locked")?
            .state
            .fill_listed(listed);
    }
    let ids = parse_ids(&row.text("entry_ids")?)?;
    // A key a job submit used: its debit was not inserted.
    if keys == Keys::Claimed && ids.len() < items {
        return Err(AttemptFailed::KeyTaken);
    }
    let written = (ids.len(), row.int("accounts_changed")?);
    if written != (items, changes) {
        return Err(StoreError::Corrupt(format!(
            "an ingest wrote (entries, accounts) {written:?}, decided ({items}, {changes}); \
             nothing was written"
        ))
        .into());
    }
    let written = Written { ids };
    for (account, suspension, snap, entry_id) in &write.suspensions {
        let entry_id = written.id_of(*entry_id)?;
        emit_suspension(tx, account, *suspension, snap, entry_id).await?;
    }
    for (account, event, data, now) in &write.crossings {
        emit(tx, event, account, None, data.clone(), *now).await?;
    }
    for ing in states.values_mut() {
        ing.state.write_changed_marks(tx).await?;
    }
    Ok(written)
}
