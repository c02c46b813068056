//! Batch ingest: the debits of many accounts in ONE transaction, set-based. Where a
//! debit batch of the batcher runs two statements per debit, an ingest runs four per
//! call whatever its size: lock the accounts (sorted), read them with the keys named,
//! reserve ledger ids, write everything (`ingest_write`: every key, every entry, each
//! account row once). Between the read and the write, `holdfast_core::decide` decides
//! every debit in order, exactly as for a single debit: each account's debits in the
//! order given, each buffer check seeing the debits before it.

use std::collections::HashMap;

use holdfast_core::decide::{self, MoneyMove, Suspension};
use holdfast_core::{AccountId, AccountSnapshot, MONEY, Micros, Refusal};
use serde_json::json;

use crate::account_state::{AccountState, IdemRecord};
use crate::db::Tx;
use crate::error::StoreError;
use crate::jobs::{UsedJobs, used_jobs};
use crate::model::{LedgerEntry, MoneyResult};
use crate::money::{DebitRequest, PricedDebit};
use crate::scope::CrossAccount;
use crate::statement::Stmt;
use crate::store::Store;
use crate::writes::{EntryFacts, crossing_event, emit, emit_suspension, read_entry};
use crate::{in_write_tx, params, statement};

static LOCK_ACCOUNTS: Stmt = statement!("ingest_lock_accounts");
static READ_ACCOUNTS: Stmt = statement!("ingest_read_accounts");
static RESERVE_ENTRY_IDS: Stmt = statement!("ingest_reserve_entry_ids");
static WRITE: Stmt = statement!("ingest_write");

/// What the decision gave one debit of the call.
enum Decided {
    Applied(MoneyResult),
    /// An earlier use of the key: its entry, with the account as it was at this point.
    Replay(i64, crate::model::AccountView),
    Refused(Refusal),
}

/// What the call writes: the debits that apply, each account's sum, the suspensions.
#[derive(Default)]
struct IngestWrite {
    items: Vec<serde_json::Value>,
    changes: Vec<serde_json::Value>,
    suspensions: Vec<(String, Suspension, AccountSnapshot, i64)>,
    /// Low-balance crossings: (account, event type, data, time).
    crossings: Vec<(String, &'static str, serde_json::Value, i64)>,
}

impl Store {
    /// Debits of any accounts in ONE transaction, answered in the order given, each
    /// exactly as a single debit would be answered (see the module). The outer error
    /// fails the transaction as a whole: nothing is written.
    pub async fn ingest(
        &self,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        let priced: Vec<Result<PricedDebit<'_>, Refusal>> =
            items.iter().map(|(_, r)| self.price_debit(r)).collect();
        in_write_tx!(self, |tx| async {
            if items.iter().any(|(a, _)| a != &items[0].0) {
                tx.across_accounts(CrossAccount::Ingest).await?;
            }
            let mut states = lock_and_read(tx, items).await?;
            // Only the debits that passed their checks (a job_ref with a NUL does not).
            let refs = items.iter().zip(&priced).filter_map(|((a, _), p)| {
                Some((a.as_str(), p.as_ref().ok()?.req.job_ref.as_deref()?))
            });
            let jobs = used_jobs(tx, refs).await?;
            // Ids under the locks: taken before them, another transaction's entry on one
            // of these accounts could get a higher id yet commit first, and the ledger's
            // order would not be the order of application (the audit finds it).
            let wanted = priced.iter().filter(|p| p.is_ok()).count();
            let mut ids = reserve_entry_ids(tx, wanted).await?.into_iter();
            let mut write = IngestWrite::default();
            let mut decided = Vec::with_capacity(items.len());
            for ((account, _), p) in items.iter().zip(&priced) {
                let state = states.get_mut(account);
                decided.push(self.decide_one(state, p, &jobs, &mut ids, &mut write)?);
            }
            write.changes = states
                .values_mut()
                .filter_map(|s| s.change.take())
                .collect();
            apply(tx, &write).await?;
            let mut out = Vec::with_capacity(decided.len());
            for d in decided {
                out.push(match d {
                    Decided::Applied(m) => Ok(m),
                    Decided::Replay(entry_id, account) => Ok(MoneyResult {
                        entry: read_entry(tx, entry_id).await?,
                        account,
                        replay: true,
                    }),
                    Decided::Refused(r) => Err(r),
                });
            }
            Ok(out)
        })
    }

    /// Decides one debit of the call on its account's state, and adds what it writes.
    fn decide_one(
        &self,
        state: Option<&mut Ingesting>,
        p: &Result<PricedDebit<'_>, Refusal>,
        jobs: &UsedJobs,
        ids: &mut impl Iterator<Item = i64>,
        write: &mut IngestWrite,
    ) -> Result<Decided, StoreError> {
        // As for a single debit: a 422 of the request before the account's 404.
        let p = match p {
            Ok(p) => p,
            Err(r) => return Ok(Decided::Refused(r.clone())),
        };
        let Some(ing) = state else {
            return Ok(Decided::Refused(Refusal::AccountNotFound));
        };
        let state = &mut ing.state;
        let key = p.req.key.as_str();
        match state.replay(key, "debit", &p.hash) {
            Err(r) => return Ok(Decided::Refused(r)),
            Ok(Some(record)) => {
                let entry_id = record
                    .entry_id
                    .ok_or_else(|| StoreError::Corrupt(format!("key {key:?}: no entry")))?;
                return Ok(Decided::Replay(entry_id, state.view(self.card())?));
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
            Err(r) => return Ok(Decided::Refused(r)),
        };
        let entry_id = ids
            .next()
            .ok_or_else(|| StoreError::Corrupt("fewer entry ids than debits".into()))?;
        let before = state.snap.available_money();
        state.snap.apply_money(&after);
        let now_available = state.snap.available_money();
        if let Some((event, data)) = crossing_event(self.card(), &state.snap, before, now_available)
        {
            let account = state.account.to_string();
            write.crossings.push((account, event, data, state.snap.now));
        }
        let entry = ing.record(p, change, buffer, entry_id, write);
        if after.suspension != Suspension::Unchanged {
            let account = ing.state.account.to_string();
            let suspension = (account, after.suspension, ing.state.snap.clone(), entry_id);
            write.suspensions.push(suspension);
        }
        Ok(Decided::Applied(MoneyResult {
            entry,
            account: ing.state.view(self.card())?,
            replay: false,
        }))
    }
}

/// An account of the call: its state as the decisions move it, and its row's change.
struct Ingesting {
    state: AccountState,
    /// Where the account stood when read: its change is the difference.
    start: (i64, i64),
    change: Option<serde_json::Value>,
}

impl Ingesting {
    /// Records an applied debit (its key, its entry, the account's change so far) and
    /// returns its entry.
    fn record(
        &mut self,
        p: &PricedDebit<'_>,
        change: MoneyMove,
        buffer: Micros,
        entry_id: i64,
        write: &mut IngestWrite,
    ) -> LedgerEntry {
        let snap = &self.state.snap;
        let account = self.state.account.to_string();
        let available_after = snap.balance - snap.held;
        write.items.push(json!({
            "account_id": account, "key": p.req.key.as_str(), "request_hash": p.hash,
            "entry_id": entry_id, "delta": change.delta_micros(), "amount_after": snap.balance,
            "available_after": available_after, "buffer": buffer.0, "ref": p.req.job_ref,
            "now": snap.now,
        }));
        let (balance, spent) = self.start;
        self.change = Some(json!({
            "account_id": account, "delta": snap.balance - balance,
            "spent": snap.total_spent - spent, "suspended_at": snap.suspended_at,
            "balance_after": snap.balance, "buffer": buffer.0,
        }));
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
        facts.entry(entry_id, &account, self.state.snap.now)
    }
}

/// Locks the accounts the items name (sorted), then reads them current with the
/// records of the keys named for each. An account that does not exist is absent.
async fn lock_and_read(
    tx: &mut Tx,
    items: &[(AccountId, DebitRequest)],
) -> Result<HashMap<AccountId, Ingesting>, StoreError> {
    let mut ids: Vec<&str> = items.iter().map(|(a, _)| a.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let account_ids = json!(ids).to_string();
    let keys: Vec<[&str; 2]> = items
        .iter()
        .map(|(a, r)| [a.as_str(), r.key.as_str()])
        .collect();
    let keys = json!(keys).to_string();
    let locked = params! { account_ids: account_ids.as_str() };
    tx.rows(&LOCK_ACCOUNTS, locked).await?;
    let read = params! { account_ids: account_ids, keys: keys };
    let mut states = HashMap::with_capacity(ids.len());
    for row in tx.rows(&READ_ACCOUNTS, read).await? {
        let account = AccountId::parse(&row.text("account_id")?)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let state = AccountState::from_row(&account, &row)?;
        let start = (state.snap.balance, state.snap.total_spent);
        let ingesting = Ingesting {
            state,
            start,
            change: None,
        };
        states.insert(account, ingesting);
    }
    Ok(states)
}

async fn reserve_entry_ids(tx: &mut Tx, count: usize) -> Result<Vec<i64>, StoreError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let rows = tx
        .rows(&RESERVE_ENTRY_IDS, params! { count: count as i64 })
        .await?;
    let mut ids = rows
        .iter()
        .map(|r| r.int("entry_id"))
        .collect::<Result<Vec<i64>, _>>()?;
    ids.sort_unstable();
    Ok(ids)
}

/// Writes what was decided, checks every row was written, and emits the suspensions.
async fn apply(tx: &mut Tx, write: &IngestWrite) -> Result<(), StoreError> {
    if write.items.is_empty() {
        return Ok(());
    }
    let params = params! {
        items: json!(write.items).to_string(),
        changes: json!(write.changes).to_string(),
        actor: crate::actor::current(),
    };
    let row = tx.row(&WRITE, params).await?;
    let written = (
        row.int("keys_claimed")?,
        row.int("entries_written")?,
        row.int("accounts_changed")?,
    );
    let n = write.items.len() as i64;
    let expected = (n, n, write.changes.len() as i64);
    if written != expected {
        return Err(StoreError::Corrupt(format!(
            "an ingest wrote (keys, entries, accounts) {written:?}, decided {expected:?}; \
             nothing was written"
        )));
    }
    for (account, suspension, snap, entry_id) in &write.suspensions {
        emit_suspension(tx, account, *suspension, snap, *entry_id).await?;
    }
    for (account, event, data, now) in &write.crossings {
        emit(tx, event, account, None, data.clone(), *now).await?;
    }
    Ok(())
}
