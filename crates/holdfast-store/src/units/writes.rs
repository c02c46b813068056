//! The writes every unit of work shares, applied as decided: a ledger entry, an event,
//! due refills, and a change of the money pocket under the client's key.

use holdfast_core::decide::{
    AccountSnapshot, BlockAmount, MoneyAfter, MoneyMove, Refill, Suspension, ThresholdCrossed,
    Timestamp,
};
use holdfast_core::{IdempotencyKey, MONEY, Micros, RateCard, decide};
use sha2::{Digest, Sha256};

use crate::driver::db::{Row, Tx};
use crate::driver::statement::{BindByName, Stmt};
use crate::error::StoreError;
use crate::model::LedgerEntry;
use crate::units::account_state::{AccountState, IdemRecord};
use crate::units::blocks::{lines_of, lines_text};
use crate::{bind_by_name, params, statement};

static INSERT_LEDGER_ENTRY: Stmt = statement!(shared "insert_ledger_entry");
static INSERT_EVENT: Stmt = statement!(shared "insert_event");
static REFILL_POCKET: Stmt = statement!(shared "refill_pocket");
static TOUCH_ACCOUNT: Stmt = statement!(shared "touch_account");
static READ_LEDGER_ENTRY: Stmt = statement!(shared "read_ledger_entry");
static WRITE_MONEY: Stmt = statement!("write_money");
static RESTART_QUEUE_CLOCKS: Stmt = statement!(shared "restart_queue_clocks");

/// What a ledger entry records besides its account and time.
pub(crate) struct EntryFacts<'a> {
    pub pocket: &'a str,
    pub delta: i64,
    pub kind: &'a str,
    pub amount_after: i64,
    pub available_after: Option<i64>,
    pub buffer: Option<i64>,
    pub reference: Option<String>,
}

impl EntryFacts<'_> {
    pub fn entry(self, entry_id: i64, account: &str, now: Timestamp) -> LedgerEntry {
        LedgerEntry {
            entry_id,
            account_id: account.to_owned(),
            pocket: self.pocket.to_owned(),
            delta: self.delta,
            kind: self.kind.to_owned(),
            amount_after: self.amount_after,
            available_after: self.available_after,
            reference: self.reference,
            created_at: now,
            actor: Some(crate::actor::current()),
            meter: None,
            seconds: None,
            blocks: Vec::new(),
        }
    }
}

pub(crate) async fn write_ledger(
    tx: &mut Tx,
    account: &str,
    now: Timestamp,
    f: EntryFacts<'_>,
) -> Result<LedgerEntry, StoreError> {
    let params = params! {
        account_id: account, pocket: f.pocket, delta: f.delta, kind: f.kind,
        amount_after: f.amount_after, available_after: f.available_after,
        buffer_micros: f.buffer, reference: f.reference.clone(), now: now,
        actor: crate::actor::current(),
    };
    let row = tx.row(&INSERT_LEDGER_ENTRY, params).await?;
    Ok(f.entry(row.int("entry_id")?, account, now))
}

/// Appends an event to the outbox, in the caller's transaction.
pub(crate) async fn emit(
    tx: &mut Tx,
    event_type: &str,
    account: &str,
    job: Option<&str>,
    data: serde_json::Value,
    now: Timestamp,
) -> Result<(), StoreError> {
    let params = params! {
        event_type: event_type, account_id: account, job_id: job, data: data.to_string(), now: now,
        actor: crate::actor::current(),
    };
    tx.exec(&INSERT_EVENT, params).await?;
    Ok(())
}

/// Records an operator's action as the event `operator.<action>` (its actor is the
/// event's): block, unblock, ban, unban, plan change, grant, key creation and revocation,
/// reconciliation's adjustments. `account` is `""` for an action on no account (keys).
pub(crate) async fn emit_operator(
    tx: &mut Tx,
    action: &str,
    account: &str,
    mut data: serde_json::Value,
    reason: Option<&str>,
    now: Timestamp,
) -> Result<(), StoreError> {
    data["reason"] = serde_json::json!(reason);
    emit(tx, &format!("operator.{action}"), account, None, data, now).await
}

/// Writes due refills (pocket, cycle, `refill` ledger entries) and applies them to `snap`.
pub(crate) async fn apply_refills(
    tx: &mut Tx,
    account: &holdfast_core::AccountId,
    snap: &mut AccountSnapshot,
    refills: &[Refill],
) -> Result<(), StoreError> {
    for r in refills {
        let params = params! {
            account_id: account.as_str(), pocket: r.pocket.as_str(), quota: r.quota, now: snap.now,
        };
        tx.exec(&REFILL_POCKET, params).await?;
        if r.delta != 0 {
            let held = snap.allowances.get(&r.pocket).map_or(0, |p| p.held);
            let facts = EntryFacts {
                pocket: &r.pocket,
                delta: r.delta,
                kind: "refill",
                amount_after: r.quota,
                available_after: Some(r.quota - held),
                buffer: None,
                reference: None,
            };
            write_ledger(tx, account.as_str(), snap.now, facts).await?;
        }
    }
    if !refills.is_empty() {
        touch_account(tx, account.as_str()).await?;
    }
    snap.apply_refills(refills);
    Ok(())
}

/// A new version of the account's row, for a transaction that changes its pockets and
/// writes no column of the row: every change of an account's pockets or open jobs
/// updates its row (`touch_account.sql`; docs/DESIGN.md, "Account row versions").
pub(crate) async fn touch_account(tx: &mut Tx, account: &str) -> Result<(), StoreError> {
    tx.exec(&TOUCH_ACCOUNT, params! { account_id: account })
        .await?;
    Ok(())
}

/// The event a change of suspension emits, naming the entry that caused it; a
/// suspension that clears restarts the wait clocks of the account's queued jobs.
pub(crate) async fn emit_suspension(
    tx: &mut Tx,
    account: &str,
    suspension: Suspension,
    snap: &AccountSnapshot,
    entry_id: i64,
) -> Result<(), StoreError> {
    let event = match suspension {
        Suspension::Suspend => "account.suspended",
        Suspension::Unsuspend => {
            // The queue waited while suspended: its clocks start again now.
            let params = params! { account_id: account, now: snap.now };
            tx.exec(&RESTART_QUEUE_CLOCKS, params).await?;
            "account.unsuspended"
        }
        Suspension::Unchanged => return Ok(()),
    };
    let data = serde_json::json!({
        "balance": Micros(snap.balance).format(),
        "balance_micros": snap.balance,
        "entry_id": entry_id,
    });
    emit(tx, event, account, None, data, snap.now).await
}

/// The events a change of available money from `before` to `after` causes for the
/// account of `snap`: the low-balance warning when it crosses the effective plan's line
/// either way, and the recharge request when it falls below the account's
/// auto-recharge line (with a fresh key for the top-up it leads to).
pub(crate) fn crossing_events(
    card: &RateCard,
    snap: &AccountSnapshot,
    before: i64,
    after: i64,
) -> Vec<(&'static str, serde_json::Value)> {
    let mut events = Vec::new();
    let (_, plan) = snap.effective_plan(card);
    if let Some(line) = plan.low_balance
        && let Some(crossing) = decide::balance_crossing(Some(line), before, after)
    {
        let data = serde_json::json!({
            "available": Micros(after).format(), "available_micros": after,
            "low_balance": line.format(), "low_balance_micros": line.0,
        });
        events.push((crossing.event_type(), data));
    }
    if let Some(r) = decide::recharge_due(snap.recharge, before, after) {
        let key = format!("recharge_{}", uuid::Uuid::now_v7().simple());
        let data = serde_json::json!({
            "available": Micros(after).format(), "available_micros": after,
            "below": r.below.format(), "below_micros": r.below.0,
            "amount": r.amount.format(), "amount_micros": r.amount.0,
            "idempotency_key": key,
        });
        events.push(("account.recharge_requested", data));
    }
    events
}

/// The thresholds of the period's spending that `snap` reached and had not told in the
/// period, as events, in order; marked told on `snap` (written with its marks).
pub(crate) fn spend_thresholds(
    card: &RateCard,
    snap: &mut AccountSnapshot,
) -> Vec<(&'static str, serde_json::Value)> {
    let crossed = snap.take_thresholds(card).into_iter();
    crossed
        .map(|t| (ThresholdCrossed::EVENT, t.data()))
        .collect()
}

/// Emits the events of a change of available money ([`crossing_events`]).
pub(crate) async fn emit_crossing(
    tx: &mut Tx,
    card: &RateCard,
    account: &str,
    snap: &AccountSnapshot,
    before: i64,
    after: i64,
) -> Result<(), StoreError> {
    for (event, data) in crossing_events(card, snap, before, after) {
        emit(tx, event, account, None, data, snap.now).await?;
    }
    Ok(())
}

/// A change of the money pocket as the client asked for it.
pub(crate) struct MoneyRequest<'a> {
    pub change: MoneyMove,
    /// The entry's kind and the key's operation (a credit is `top_up` or `bonus`).
    pub kind: &'a str,
    pub reference: Option<String>,
    pub key: &'a IdempotencyKey,
    pub request_hash: &'a str,
    /// The credit blocks it takes from (a refund of a top-up; empty: none named).
    pub blocks: Vec<BlockAmount>,
}

/// The parameters of `write_money.sql`.
struct MoneyWrite {
    account_id: String,
    key: String,
    kind: String,
    request_hash: String,
    delta_micros: i64,
    credited_micros: i64,
    spent_micros: i64,
    suspended_at: Option<i64>,
    amount_after: i64,
    available_after: Option<i64>,
    buffer_micros: i64,
    reference: Option<String>,
    now: i64,
    actor: String,
    blocks: Option<String>,
}

bind_by_name!(MoneyWrite {
    account_id,
    key,
    kind,
    request_hash,
    delta_micros,
    credited_micros,
    spent_micros,
    suspended_at,
    amount_after,
    available_after,
    buffer_micros,
    reference,
    now,
    actor,
    blocks,
});

/// What `write_money.sql` answered: the entry (none when the key was taken) and the
/// balance it left.
struct MoneyWritten {
    balance_after: Option<i64>,
    entry_id: Option<i64>,
}

impl MoneyWrite {
    /// The write of `req` as decided (`after`) on the account `state` holds.
    fn new(
        state: &AccountState,
        buffer: Micros,
        req: &MoneyRequest<'_>,
        after: &MoneyAfter,
    ) -> MoneyWrite {
        MoneyWrite {
            account_id: state.account.to_string(),
            key: req.key.as_str().to_owned(),
            kind: req.kind.to_owned(),
            request_hash: req.request_hash.to_owned(),
            delta_micros: req.change.delta_micros(),
            credited_micros: req.change.credited_micros(),
            spent_micros: req.change.spent_micros(),
            suspended_at: after.suspended_at,
            amount_after: after.balance_micros,
            available_after: Some(after.balance_micros - state.snap.held),
            buffer_micros: buffer.0,
            reference: req.reference.clone(),
            now: state.snap.now,
            actor: crate::actor::current(),
            blocks: lines_text(&req.blocks),
        }
    }
}

fn money_written(row: &Row) -> Result<MoneyWritten, StoreError> {
    Ok(MoneyWritten {
        balance_after: row.opt_int("balance_after")?,
        entry_id: row.opt_int("entry_id")?,
    })
}

/// Writes a money change under the client's key (the ledger entry carrying the key,
/// balance, counters) and the suspension it causes, as `core::decide::change_money`
/// decides it, updating `state`. Returns the ledger entry, or `None` (nothing written)
/// when the key is taken already. A write that left another balance than decided is
/// corruption: the caller's transaction is rolled back. Emits the suspension and the
/// low-balance crossing the change causes.
pub(crate) async fn write_money(
    tx: &mut Tx,
    card: &RateCard,
    state: &mut AccountState,
    buffer: Micros,
    req: MoneyRequest<'_>,
) -> Result<Option<LedgerEntry>, StoreError> {
    let after: MoneyAfter = decide::change_money(&state.snap, req.change)?;
    let available_after = after.balance_micros - state.snap.held;
    let account = state.account.clone();
    let account = account.as_str();
    let write = MoneyWrite::new(state, buffer, &req, &after);
    let row = tx.row(&WRITE_MONEY, write.params()).await?;
    let written = money_written(&row)?;
    let Some(entry_id) = written.entry_id else {
        return Ok(None);
    };
    if written.balance_after != Some(after.balance_micros) {
        return Err(StoreError::Corrupt(format!(
            "account {account}: a money write left balance {:?}, decided {}",
            written.balance_after, after.balance_micros
        )));
    }
    state.fill_from(&row)?;
    let before = state.snap.available_money();
    (state.snap)
        .apply_money_from(&after, &req.blocks)
        .map_err(|e| StoreError::Corrupt(format!("{account}: {e}")))?;
    state.write_changed_blocks(tx).await?;
    emit_suspension(tx, account, after.suspension, &state.snap, entry_id).await?;
    let now_available = state.snap.available_money();
    emit_crossing(tx, card, account, &state.snap, before, now_available).await?;
    let record = IdemRecord {
        operation: req.kind.to_owned(),
        request_hash: req.request_hash.to_owned(),
        entry_id: Some(entry_id),
        job_id: None,
    };
    state.remember(req.key.as_str(), record);
    let facts = EntryFacts {
        pocket: MONEY,
        delta: write.delta_micros,
        kind: req.kind,
        amount_after: after.balance_micros,
        available_after: Some(available_after),
        buffer: Some(buffer.0),
        reference: req.reference,
    };
    Ok(Some(LedgerEntry {
        blocks: req.blocks,
        ..facts.entry(entry_id, account, state.snap.now)
    }))
}

/// The hash of a normalised request: the first 64 bits (16 hex digits) of the SHA-256 of
/// its canonical JSON (sorted keys, amounts in micros), compact. A `serde_json::Value` is
/// canonical as it is (its Map is ordered by key: no preserve_order feature); a struct
/// must declare its fields in sorted order. It tells a replay from another request under
/// the same key, which only the key's owner can send: 64 bits keep that apart, in 8 bytes
/// of every keyed ledger entry rather than 32 (migration 0011 cut the stored ones).
pub fn request_hash(request: &impl serde::Serialize) -> String {
    let mut hasher = Sha256::new();
    // A `Value`, or a struct of strings, integers and options, into a hasher (which
    // never fails to write): there is no map with non-string keys to refuse.
    serde_json::to_writer(&mut hasher, request).expect("a request serializes into a hasher");
    hex::encode(&hasher.finalize()[..8])
}

pub(crate) fn entry_from(row: &Row) -> Result<LedgerEntry, StoreError> {
    Ok(LedgerEntry {
        entry_id: row.int("entry_id")?,
        account_id: row.text("account_id")?,
        pocket: row.text("pocket")?,
        delta: row.int("delta")?,
        kind: row.text("kind")?,
        amount_after: row.int("amount_after")?,
        available_after: row.opt_int("available_after")?,
        reference: row.opt_text("ref")?,
        created_at: row.int("created_at")?,
        actor: row.opt_text("actor")?,
        meter: row.opt_text("meter")?,
        seconds: row.opt_int("seconds")?,
        blocks: lines_of(row.opt_text("blocks")?)?,
    })
}

pub(crate) async fn read_entry(tx: &mut Tx, entry_id: i64) -> Result<LedgerEntry, StoreError> {
    let row = tx
        .row(&READ_LEDGER_ENTRY, params! { entry_id: entry_id })
        .await?;
    entry_from(&row)
}
