//! An account's past, read from its ledger: its statement for a period (opening and
//! closing balance of its money and every change between, grouped by ledger kind, by the
//! kind of job and by the meter spent on; what its jobs held at the end), and its pockets
//! as they were at a time. Each read in one read transaction, so its figures agree with
//! each other: opening + the changes = closing.

use std::collections::BTreeMap;

use holdfast_core::decide::{PocketAmount, Timestamp};
use holdfast_core::{AccountId, MONEY, Refusal};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{
    BalanceAt, BlockAt, JobKindSpend, MeterSpend, PocketAt, Statement, StatementLine, UsageGroup,
};
use crate::reads::usage::{UsageGrouping, by_kind_and_meter, sum_by};
use crate::store::Store;
use crate::units::account_state::read_account;
use crate::units::blocks::{block_from, lines_of, tally_moves};
use crate::units::spending::last_entry_before;
use crate::{in_read_tx, params, statement};

static POCKET_BEFORE: Stmt = statement!(shared "pocket_before");
static CHANGES: Stmt = statement!(shared "statement_changes");
static HOLDS_OPEN_AT: Stmt = statement!(shared "statement_holds_open_at");
static RETENTION_MARKS: Stmt = statement!(shared "read_retention_marks");
static BLOCK_LINES_UNTIL: Stmt = statement!(shared "block_lines_until");
static BLOCKS_MADE_UNTIL: Stmt = statement!(shared "blocks_made_until");

impl Store {
    /// The statement of `account` for `[from, to)` (`account_not_found` if none).
    pub async fn statement(
        &self,
        account: &AccountId,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Statement, StoreError> {
        if from > to {
            return Err(Refusal::InvalidRequest("from: must not be after to".into()).into());
        }
        let id = account.as_str();
        in_read_tx!(self, |tx| async {
            read_account(tx, self.card(), account).await?;
            let balance_before = async |tx: &mut Tx, before| {
                let Some(last) = last_entry_before(tx, account, before).await? else {
                    return Ok::<_, StoreError>(0);
                };
                Ok(pocket_at(tx, account, MONEY, last).await?.unwrap_or(0))
            };
            let opening = balance_before(tx, from).await?;
            let closing = balance_before(tx, to).await?;
            let period = || params! { account_id: id, from: from, to: to };
            let mut changes = Vec::new();
            for row in tx.rows(&CHANGES, period()).await? {
                changes.push(StatementLine {
                    kind: row.text("kind")?,
                    entries: row.int("entries")?,
                    amount: row.int("amount")?,
                });
            }
            // The usage report's groups of this account, less those that only had refunds
            // in the period: by job kind and by meter from one read.
            let parts = by_kind_and_meter(tx, Some(account), from, to).await?;
            let spent_on = |parts, grouping| {
                let groups = sum_by(parts, grouping).into_iter();
                groups.filter(|g: &UsageGroup| g.entries > 0)
            };
            let spending_by_meter = (spent_on(parts.clone(), UsageGrouping::Meter))
                .map(|g| MeterSpend {
                    meter: g.key,
                    entries: g.entries,
                    seconds: g.seconds,
                    amount: g.spent,
                })
                .collect();
            let spending_by_job_kind = (spent_on(parts, UsageGrouping::Kind))
                .map(|g| JobKindSpend {
                    job_kind: g.key,
                    entries: g.entries,
                    amount: g.spent,
                })
                .collect();
            let held_at_end = held_before(tx, account, to)
                .await?
                .0
                .remove(MONEY)
                .unwrap_or(0);
            Ok(Statement {
                account_id: id.to_owned(),
                from,
                to,
                opening,
                closing,
                changes,
                spending_by_job_kind,
                spending_by_meter,
                held_at_end,
            })
        })
    }

    /// The money and allowance pockets of `account` as they were at `at`: every entry
    /// written at or before it counts (`account_not_found` if none).
    pub async fn balance_at(
        &self,
        account: &AccountId,
        at: Timestamp,
    ) -> Result<BalanceAt, StoreError> {
        let before = at.saturating_add(1);
        in_read_tx!(self, |tx| async {
            let now = read_account(tx, self.card(), account).await?;
            // Before the jobs' cut a job open then may be gone: the holds are not read.
            let held_known = jobs_pruned_before(tx).await? <= at;
            let (mut held, mut blocks_held) = if held_known {
                held_before(tx, account, before).await?
            } else {
                (BTreeMap::new(), BTreeMap::new())
            };
            let mut held_of = |pocket: &str| held_known.then(|| held.remove(pocket).unwrap_or(0));
            let last_entry = last_entry_before(tx, account, before).await?;
            let mut answer = BalanceAt {
                account_id: account.to_string(),
                at,
                last_entry_id: last_entry,
                balance: 0,
                held: held_of(MONEY),
                allowances: BTreeMap::new(),
                blocks: Vec::new(),
            };
            let Some(last) = last_entry else {
                return Ok(answer);
            };
            answer.balance = pocket_at(tx, account, MONEY, last).await?.unwrap_or(0);
            if now.has_blocks() {
                answer.blocks = blocks_at(tx, account, last).await?;
                for b in &mut answer.blocks {
                    b.held = held_known.then(|| blocks_held.remove(&b.block_id).unwrap_or(0));
                }
            }
            // A pocket is never deleted: those the account has now are all it ever had.
            for pocket in now.snap.allowances.keys() {
                let Some(remaining) = pocket_at(tx, account, pocket, last).await? else {
                    continue;
                };
                let held = held_of(pocket);
                answer
                    .allowances
                    .insert(pocket.clone(), PocketAt { remaining, held });
            }
            Ok(answer)
        })
    }
}

/// What one pocket of `account` held as of its entry `last` (`None`: no entry of that
/// pocket by then).
async fn pocket_at(
    tx: &mut Tx,
    account: &AccountId,
    pocket: &str,
    last: i64,
) -> Result<Option<i64>, StoreError> {
    let params = params! { account_id: account.as_str(), pocket: pocket, last_entry: last };
    let row = tx.maybe_row(&POCKET_BEFORE, params).await?;
    row.map(|r| r.int("amount_after")).transpose()
}

/// What the jobs of `account` open just before `before` held, by pocket and by credit
/// block (while those jobs are kept: see [`jobs_pruned_before`]).
async fn held_before(
    tx: &mut Tx,
    account: &AccountId,
    before: Timestamp,
) -> Result<(BTreeMap<String, i64>, BTreeMap<i64, i64>), StoreError> {
    let params = params! { account_id: account.as_str(), at: before };
    let (mut held, mut blocks) = (BTreeMap::new(), BTreeMap::new());
    for row in tx.rows(&HOLDS_OPEN_AT, params).await? {
        let lines: Vec<PocketAmount> = serde_json::from_str(&row.text("hold")?)
            .map_err(|e| StoreError::Corrupt(format!("job hold: {e}")))?;
        for line in lines {
            for b in &line.blocks {
                *blocks.entry(b.block).or_insert(0) += b.amount;
            }
            *held.entry(line.pocket).or_insert(0) += line.amount;
        }
    }
    Ok((held, blocks))
}

/// The credit blocks of `account` made by its entry `last` that held money then: each
/// one's remaining is what the entries up to `last` moved of it (invariant 10).
async fn blocks_at(
    tx: &mut Tx,
    account: &AccountId,
    last: i64,
) -> Result<Vec<BlockAt>, StoreError> {
    let params = || params! { account_id: account.as_str(), last_entry: last };
    let mut moved: BTreeMap<i64, i64> = BTreeMap::new();
    for row in tx.rows(&BLOCK_LINES_UNTIL, params()).await? {
        let lines = lines_of(row.opt_text("blocks")?)?;
        tally_moves(&mut moved, row.int("delta")?, &lines);
    }
    let mut out = Vec::new();
    for row in tx.rows(&BLOCKS_MADE_UNTIL, params()).await? {
        let block = block_from(&row)?;
        let remaining = moved.get(&block.id).copied().unwrap_or(0);
        if remaining > 0 {
            out.push(BlockAt {
                block_id: block.id,
                category: block.terms.category,
                priority: block.terms.priority,
                expires_at: block.terms.expires_at,
                created_at: block.created_at,
                granted: block.granted,
                remaining,
                held: None,
            });
        }
    }
    Ok(out)
}

/// Before when finished jobs may have been pruned (0: never): a job that finished since
/// then is kept (prune_jobs.sql) — the job of an entry made since then, and every job open
/// at a time since then, with its holds.
pub(crate) async fn jobs_pruned_before(tx: &mut Tx) -> Result<i64, StoreError> {
    for r in tx.rows(&RETENTION_MARKS, params! {}).await? {
        if r.text("what")? == "jobs" {
            return r.int("pruned_before");
        }
    }
    Ok(0)
}
