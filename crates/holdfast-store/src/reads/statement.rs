//! An account's statement for a period: opening and closing balance of its money and
//! every change between, grouped by ledger kind, by the kind of job and by the meter spent
//! on; what its jobs held at the end. Read from the ledger in one read transaction, so the figures
//! agree with each other: opening + the changes = closing.

use holdfast_core::decide::{PocketAmount, Timestamp};
use holdfast_core::{AccountId, MONEY, Refusal};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{JobKindSpend, MeterSpend, Statement, StatementLine, UsageGroup};
use crate::reads::usage::{UsageGrouping, by_kind_and_meter, sum_by};
use crate::store::Store;
use crate::units::account_state::read_account;
use crate::{in_read_tx, params, statement};

static BALANCE_BEFORE: Stmt = statement!(shared "statement_balance_before");
static CHANGES: Stmt = statement!(shared "statement_changes");
static HOLDS_OPEN_AT: Stmt = statement!(shared "statement_holds_open_at");

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
            read_account(tx, account).await?;
            let balance_before = async |tx: &mut Tx, at: Timestamp| {
                let row = tx
                    .maybe_row(&BALANCE_BEFORE, params! { account_id: id, at: at })
                    .await?;
                row.map_or(Ok(0), |r| r.int("amount_after"))
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
            let held_at_end = money_held_at(tx, account, to).await?;
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
}

/// The money the jobs of `account` open at `at` held (while those jobs are retained).
async fn money_held_at(tx: &mut Tx, account: &AccountId, at: Timestamp) -> Result<i64, StoreError> {
    let params = params! { account_id: account.as_str(), at: at };
    let mut held = 0;
    for row in tx.rows(&HOLDS_OPEN_AT, params).await? {
        let lines: Vec<PocketAmount> = serde_json::from_str(&row.text("hold")?)
            .map_err(|e| StoreError::Corrupt(format!("job hold: {e}")))?;
        let money = lines.iter().filter(|l| l.pocket == MONEY);
        held += money.map(|l| l.amount).sum::<i64>();
    }
    Ok(held)
}
