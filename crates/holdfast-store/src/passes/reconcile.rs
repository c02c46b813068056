//! Reconciliation: a scheduled pass that checks every pocket's stored amount against its
//! ledger, one account per short transaction under the account lock.
//!
//! Each pocket keeps a checkpoint (the ledger sum up to an entry), so a run reads only the
//! entries written since the previous one. A pocket amount that disagrees with its ledger
//! is never "fixed" by editing it: one signed `adjustment` entry (delta = stored − ledger
//! sum, amount after = stored) explains the difference, with a `ledger.adjusted` event, a
//! metric and a warning. A drift in `held` or in the counters is reported (metric and
//! warning), not adjusted. So is a credit block's: its remaining against the signed sum
//! of the ledger lines that name it (a checkpoint per block, as per pocket), its held
//! against its open jobs' hold lines. Must never: write a balance, or take a second
//! account's lock in the same transaction.

use std::collections::BTreeMap;

use holdfast_core::decide::{
    AccountSnapshot, BlockFigures, Drift, PocketAmount, PocketBooks, PocketFigures, Reconciled,
};
use holdfast_core::{AccountId, MONEY};
use serde_json::json;

use crate::driver::db::Tx;
use crate::driver::statement::{BindByName, Params, Statement, Stmt};
use crate::error::StoreError;
use crate::model::{LedgerEntry, PassReport};
use crate::passes::sweep::CHUNK;
use crate::store::Store;
use crate::units::account_state::lock_account;
use crate::units::blocks::{block_from, lines_of, tally_held, tally_moves};
use crate::units::writes::emit_operator;
use crate::units::writes::{EntryFacts, emit, write_ledger};
use crate::{bind_by_name, in_read_tx, in_write_tx, params, statement};

/// Takes the account row lock, or nothing when another transaction holds it (PostgreSQL);
/// SQLite's `BEGIN IMMEDIATE` already holds the write lock.
pub(crate) static TRY_LOCK_ACCOUNT: Stmt = statement!("try_lock_account");
static ACCOUNTS_AFTER: Stmt = statement!(shared "accounts_after");
static READ_PASS_CURSOR: Stmt = statement!(shared "read_pass_cursor");
static SAVE_PASS_CURSOR: Stmt = statement!(shared "save_pass_cursor");
static READ_CHECKPOINT: Stmt = statement!(shared "read_reconcile_checkpoint");
static LEDGER_SUMS_AFTER_ENTRY: Stmt = statement!(shared "ledger_sums_after_entry");
static ENTRY_AMOUNT_AFTER: Stmt = statement!(shared "ledger_entry_amount_after");
static SAVE_CHECKPOINT: Stmt = statement!(shared "save_reconcile_checkpoint");
static OPEN_JOB_HOLDS: Stmt = statement!(shared "open_job_holds_of_account");
static BLOCKS_TO_RECONCILE: Stmt = statement!(shared "blocks_to_reconcile");
static BLOCK_LINES_AFTER_ENTRY: Stmt = statement!(shared "block_lines_after_entry");
static SAVE_BLOCK_CHECKPOINT: Stmt = statement!(shared "save_block_checkpoint");

/// What the ledger says about one pocket up to its last entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LedgerFacts {
    last_entry_id: i64,
    sum: i64,
    credited: i64,
    spent: i64,
    last_after: Option<i64>,
}

/// What one account's reconciliation found.
#[derive(Debug, Default)]
struct AccountOutcome {
    adjusted: u64,
    drifted: u64,
}

impl Store {
    /// Reconciles up to `max_accounts` accounts, going on from where the previous run
    /// stopped (wrapping around once). Accounts locked by someone else are skipped.
    pub async fn reconcile(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        let ids = self
            .next_accounts("reconcile", max_accounts, &ACCOUNTS_AFTER, &params! {})
            .await?;
        for account in ids {
            if let Some(o) = self.reconcile_one(&account).await? {
                report.processed += 1;
                report.adjusted += o.adjusted;
                report.drifted += o.drifted;
            }
        }
        Ok(report)
    }

    /// Up to `max` account ids after the pass's cursor, wrapping around to the start once,
    /// as `accounts_after` gives them (a statement taking `:after_account_id`, `:limit` and
    /// the `extra` parameters, e.g. [`ACCOUNTS_AFTER`]). Saves the new cursor.
    pub(crate) async fn next_accounts(
        &self,
        pass: &str,
        max: u64,
        accounts_after: &'static Statement,
        extra: &Params,
    ) -> Result<Vec<AccountId>, StoreError> {
        let start = self.pass_cursor(pass).await?;
        let mut out: Vec<AccountId> = Vec::new();
        let mut after = start.clone();
        // Lap 0 runs from the cursor to the end; lap 1 from the start back to the cursor.
        let mut lap = 0;
        'chunks: loop {
            let budget = (max - out.len() as u64).min(CHUNK as u64) as i64;
            if budget == 0 {
                break;
            }
            let mut chunk = params! { after_account_id: after.as_str(), limit: budget };
            chunk.0.extend(extra.0.iter().cloned());
            let rows = in_read_tx!(self, |tx| async { tx.rows(accounts_after, chunk).await })?;
            let found = rows.len() as i64;
            for r in rows {
                let id = r.text("account_id")?;
                if lap == 1 && id >= start {
                    break 'chunks;
                }
                out.push(AccountId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?);
                after = id;
            }
            if found < budget {
                after.clear();
                if lap == 1 || start.is_empty() {
                    break;
                }
                lap = 1;
            }
        }
        self.save_pass_cursor(pass, &after).await?;
        Ok(out)
    }

    async fn pass_cursor(&self, pass: &str) -> Result<String, StoreError> {
        in_read_tx!(self, |tx| async {
            let row = tx
                .maybe_row(&READ_PASS_CURSOR, params! { pass: pass })
                .await?;
            row.map_or(Ok(String::new()), |r| r.text("position"))
        })
    }

    async fn save_pass_cursor(&self, pass: &str, position: &str) -> Result<(), StoreError> {
        in_write_tx!(self, |tx| async {
            tx.exec(
                &SAVE_PASS_CURSOR,
                params! { pass: pass, position: position },
            )
            .await?;
            Ok(())
        })
    }

    /// Reconciles one account in one short transaction; `None` when another transaction
    /// holds its lock or it is gone.
    async fn reconcile_one(
        &self,
        account: &AccountId,
    ) -> Result<Option<AccountOutcome>, StoreError> {
        in_write_tx!(self, |tx| async {
            if tx
                .maybe_row(&TRY_LOCK_ACCOUNT, params! { account_id: account.as_str() })
                .await?
                .is_none()
            {
                return Ok(None);
            }
            let state = lock_account(tx, self.card(), account, &[]).await?;
            let has_blocks = state.has_blocks();
            let snap = state.snap;
            let mut outcome = AccountOutcome::default();
            let open = open_holds(tx, account.as_str()).await?;
            let mut pockets: Vec<(&str, i64, i64)> = vec![(MONEY, snap.balance, snap.held)];
            pockets.extend(
                snap.allowances
                    .iter()
                    .map(|(p, a)| (p.as_str(), a.remaining, a.held)),
            );
            for (pocket, stored, held) in pockets {
                let facts = pocket_ledger(tx, account.as_str(), pocket).await?;
                let facts = self
                    .explain(tx, account, &snap, pocket, stored, facts, &mut outcome)
                    .await?;
                save_checkpoint(tx, account.as_str(), pocket, &facts, snap.now).await?;
                let figures = PocketFigures {
                    pocket,
                    held,
                    open_held: open.pockets.get(pocket).copied().unwrap_or(0),
                    credited: (snap.total_credited, facts.credited),
                    spent: (snap.total_spent, facts.spent),
                };
                for drift in figures.drifts() {
                    report_drift(account, pocket, drift);
                    outcome.drifted += 1;
                }
            }
            if has_blocks {
                for (block, drift) in reconcile_blocks(tx, account, &open.blocks).await? {
                    report_drift(account, &format!("{MONEY} block {block}"), drift);
                    outcome.drifted += 1;
                }
            }
            Ok(Some(outcome))
        })
    }

    /// Writes the adjustment that explains a pocket's difference from its ledger, if any,
    /// and returns the ledger facts after it.
    #[allow(clippy::too_many_arguments)]
    async fn explain(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &AccountSnapshot,
        pocket: &str,
        stored: i64,
        mut facts: LedgerFacts,
        outcome: &mut AccountOutcome,
    ) -> Result<LedgerFacts, StoreError> {
        let books = PocketBooks {
            stored,
            ledger_sum: facts.sum,
            last_amount_after: facts.last_after,
        };
        let delta = match books.reconcile() {
            Reconciled::Agrees => return Ok(facts),
            Reconciled::Adjust { delta } => delta,
            Reconciled::Overflows => {
                let why = format!("pocket {pocket}: difference overflows");
                return Err(StoreError::Corrupt(why));
            }
        };
        let entry = self
            .write_adjustment(tx, account, snap, pocket, stored, delta)
            .await?;
        let data = json!({
            "pocket": pocket,
            "delta": delta,
            "amount_after": stored,
            "ledger_sum": facts.sum,
            "last_amount_after": facts.last_after,
            "entry_id": entry.entry_id,
        });
        emit(
            tx,
            "ledger.adjusted",
            account.as_str(),
            None,
            data,
            snap.now,
        )
        .await?;
        let data = json!({ "pocket": pocket, "delta": entry.delta, "entry_id": entry.entry_id });
        emit_operator(tx, "adjusted", account.as_str(), data, None, snap.now).await?;
        report_adjustment(account, pocket, stored, &facts, &entry);
        outcome.adjusted += 1;
        facts.last_entry_id = entry.entry_id;
        facts.sum = stored;
        facts.last_after = Some(stored);
        Ok(facts)
    }

    /// Writes the `adjustment` ledger entry that brings the pocket's ledger to `stored`.
    async fn write_adjustment(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &AccountSnapshot,
        pocket: &str,
        stored: i64,
        delta: i64,
    ) -> Result<LedgerEntry, StoreError> {
        let (available_after, buffer) = if pocket == MONEY {
            (Some(stored - snap.held), Some(snap.buffer(self.card()).0))
        } else {
            let held = snap.allowances.get(pocket).map_or(0, |p| p.held);
            (Some(stored - held), None)
        };
        let facts = EntryFacts {
            pocket,
            delta,
            kind: "adjustment",
            amount_after: stored,
            available_after,
            buffer,
            reference: Some("reconcile".to_owned()),
        };
        write_ledger(tx, account.as_str(), snap.now, facts).await
    }
}

/// The metric and the warning of an adjustment entry; `facts` are the ledger's before it.
fn report_adjustment(
    account: &AccountId,
    pocket: &str,
    stored: i64,
    facts: &LedgerFacts,
    entry: &LedgerEntry,
) {
    metrics::counter!("holdfast_ledger_adjustments_total", "pocket" => pocket.to_owned())
        .increment(1);
    tracing::warn!(
        account = account.as_str(),
        pocket,
        delta = entry.delta,
        stored,
        ledger_sum = facts.sum,
        last_amount_after = ?facts.last_after,
        entry_id = entry.entry_id,
        "reconciliation: pocket disagreed with its ledger; wrote an adjustment entry"
    );
}

fn report_drift(account: &AccountId, pocket: &str, drift: Drift) {
    metrics::counter!("holdfast_reconcile_drift_total", "what" => drift.what).increment(1);
    tracing::warn!(
        account = account.as_str(),
        pocket,
        what = drift.what,
        stored = drift.stored,
        source = drift.source,
        "reconciliation: stored value disagrees with its source (reported, not adjusted)"
    );
}

/// The pocket's ledger up to its last entry: the checkpoint plus the entries since.
async fn pocket_ledger(
    tx: &mut Tx,
    account: &str,
    pocket: &str,
) -> Result<LedgerFacts, StoreError> {
    let checkpoint = tx
        .maybe_row(
            &READ_CHECKPOINT,
            params! { account_id: account, pocket: pocket },
        )
        .await?;
    let mut f = match checkpoint {
        Some(r) => LedgerFacts {
            last_entry_id: r.int("last_entry_id")?,
            sum: r.int("ledger_sum")?,
            credited: r.int("credited_sum")?,
            spent: r.int("spent_sum")?,
            last_after: None,
        },
        None => LedgerFacts::default(),
    };
    let after_checkpoint = params! {
        account_id: account,
        pocket: pocket,
        after_entry_id: f.last_entry_id,
    };
    let since = tx.row(&LEDGER_SUMS_AFTER_ENTRY, after_checkpoint).await?;
    let checked = |a: i64, b: i64| {
        a.checked_add(b)
            .ok_or_else(|| StoreError::Corrupt(format!("pocket {pocket}: ledger sum overflows")))
    };
    f.sum = checked(f.sum, since.int("total")?)?;
    f.credited = checked(f.credited, since.int("credited")?)?;
    f.spent = checked(f.spent, since.int("spent")?)?;
    if let Some(last) = since.opt_int("last_id")? {
        f.last_entry_id = last;
    }
    if f.last_entry_id > 0 {
        f.last_after = tx
            .maybe_row(&ENTRY_AMOUNT_AFTER, params! { entry_id: f.last_entry_id })
            .await?
            .map(|r| r.int("amount_after"))
            .transpose()?;
    }
    Ok(f)
}

/// The parameters of [`SAVE_CHECKPOINT`].
struct Checkpoint<'a> {
    account_id: &'a str,
    pocket: &'a str,
    last_entry_id: i64,
    ledger_sum: i64,
    credited_sum: i64,
    spent_sum: i64,
    checked_at_micros: i64,
}

bind_by_name!(Checkpoint<'_> {
    account_id,
    pocket,
    last_entry_id,
    ledger_sum,
    credited_sum,
    spent_sum,
    checked_at_micros,
});

async fn save_checkpoint(
    tx: &mut Tx,
    account: &str,
    pocket: &str,
    f: &LedgerFacts,
    now: i64,
) -> Result<(), StoreError> {
    let checkpoint = Checkpoint {
        account_id: account,
        pocket,
        last_entry_id: f.last_entry_id,
        ledger_sum: f.sum,
        credited_sum: f.credited,
        spent_sum: f.spent,
        checked_at_micros: now,
    };
    tx.exec(&SAVE_CHECKPOINT, checkpoint.params()).await?;
    Ok(())
}

/// What the open holds of one account reserve.
#[derive(Debug, Default)]
struct OpenHolds {
    /// Σ of the hold lines per pocket.
    pockets: BTreeMap<String, i64>,
    /// Σ of the money lines' sources per credit block.
    blocks: BTreeMap<i64, i64>,
}

async fn open_holds(tx: &mut Tx, account: &str) -> Result<OpenHolds, StoreError> {
    let rows = tx
        .rows(&OPEN_JOB_HOLDS, params! { account_id: account })
        .await?;
    let mut out = OpenHolds::default();
    for r in rows {
        let lines: Vec<PocketAmount> = serde_json::from_str(&r.text("hold")?)
            .map_err(|e| StoreError::Corrupt(format!("job hold: {e}")))?;
        for l in lines {
            tally_held(&mut out.blocks, &l.blocks);
            *out.pockets.entry(l.pocket).or_default() += l.amount;
        }
    }
    Ok(out)
}

/// A credit block's checkpoint as reconciliation moves it: the sum of the ledger lines
/// naming it up to entry `after`.
struct BlockCheck {
    after: i64,
    sum: i64,
}

/// Checks each open credit block of the account against the ledger lines that name it
/// (read from the oldest of their checkpoints on) and its open holds, and moves each
/// checkpoint to the last entry read: the drifts found, by block.
async fn reconcile_blocks(
    tx: &mut Tx,
    account: &AccountId,
    open_held: &BTreeMap<i64, i64>,
) -> Result<Vec<(i64, Drift)>, StoreError> {
    let rows = tx
        .rows(
            &BLOCKS_TO_RECONCILE,
            params! { account_id: account.as_str() },
        )
        .await?;
    let mut blocks = Vec::with_capacity(rows.len());
    let mut checks = BTreeMap::new();
    for r in &rows {
        let block = block_from(r)?;
        // No entry before the block's own (its id) names it.
        let after = r.int("checked_entry_id")?.max(block.id - 1);
        let sum = r.int("checked_remaining")?;
        checks.insert(block.id, BlockCheck { after, sum });
        blocks.push(block);
    }
    let Some(from) = checks.values().map(|c| c.after).min() else {
        return Ok(Vec::new());
    };
    let params = params! { account_id: account.as_str(), after_entry_id: from };
    let mut last = from;
    for r in tx.rows(&BLOCK_LINES_AFTER_ENTRY, params).await? {
        let entry = r.int("entry_id")?;
        let mut moved = BTreeMap::new();
        tally_moves(
            &mut moved,
            r.int("delta")?,
            &lines_of(r.opt_text("blocks")?)?,
        );
        for (block, amount) in moved {
            if let Some(c) = checks.get_mut(&block).filter(|c| entry > c.after) {
                c.sum = c.sum.saturating_add(amount);
            }
        }
        last = last.max(entry);
    }
    let mut drifts = Vec::new();
    for b in blocks {
        let c = &checks[&b.id];
        let figures = BlockFigures {
            remaining: (b.remaining, c.sum),
            held: (b.held, open_held.get(&b.id).copied().unwrap_or(0)),
        };
        drifts.extend(figures.drifts().into_iter().map(|d| (b.id, d)));
        if last > c.after {
            let params = params! {
                block_id: b.id, checked_entry_id: last, checked_remaining: c.sum,
            };
            tx.exec(&SAVE_BLOCK_CHECKPOINT, params).await?;
        }
    }
    Ok(drifts)
}
