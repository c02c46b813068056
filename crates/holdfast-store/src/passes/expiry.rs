//! Expiry: a scheduled pass that writes off what is left of credit blocks past their
//! expiry, one account per short transaction under its lock: one `expiry` ledger entry
//! per block (naming it), the balance down by it, `credit.expired`. What open holds
//! reserved of a block stays until its job ends (core's
//! [`holdfast_core::decide::blocks`]): captured, it is spent; released, the next run
//! writes it off. Until a run writes it off, an expired block's free money is in the
//! balance but not available, so nothing draws on it meanwhile. A run closes the expired
//! blocks that hold nothing (`closed_at`), so the next runs never look at them again; a
//! job refund that gives one money back opens it again (`write_block.sql`).

use holdfast_core::decide::{MoneyMove, change_money};
use holdfast_core::{AccountId, MONEY, Micros};
use serde_json::json;

use crate::error::StoreError;
use crate::model::PassReport;
use crate::passes::reconcile::TRY_LOCK_ACCOUNT;
use crate::store::Store;
use crate::units::account_state::lock_account;
use crate::units::blocks::set_entry_blocks;
use crate::units::writes::{EntryFacts, emit, emit_suspension, write_ledger};
use crate::{driver::statement::Stmt, in_read_tx, in_write_tx, params, statement};

static ACCOUNTS_TO_EXPIRE: Stmt = statement!(shared "accounts_with_blocks_to_expire");
static WRITE_OFF_BALANCE: Stmt = statement!(shared "write_off_balance");
static CLOSE_EXPIRED_BLOCKS: Stmt = statement!(shared "close_expired_blocks");

impl Store {
    /// Writes off the expired blocks of up to `max_accounts` accounts. An account another
    /// transaction holds is left to the next run.
    pub async fn expire_blocks(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        let accounts = in_read_tx!(self, |tx| async {
            let now = crate::store::now(tx).await?;
            let limit = i64::try_from(max_accounts).unwrap_or(i64::MAX);
            tx.rows(&ACCOUNTS_TO_EXPIRE, params! { now: now, limit: limit })
                .await
        })?;
        for row in accounts {
            let account = AccountId::parse(&row.text("account_id")?)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            report.processed += self.expire_blocks_of(&account).await?;
        }
        Ok(report)
    }

    /// Writes off one account's expired blocks under its lock; how many.
    async fn expire_blocks_of(&self, account: &AccountId) -> Result<u64, StoreError> {
        in_write_tx!(self, |tx| async {
            let params = params! { account_id: account.as_str() };
            if tx.maybe_row(&TRY_LOCK_ACCOUNT, params).await?.is_none() {
                return Ok(0);
            }
            let mut state = lock_account(tx, self.card(), account, &[]).await?;
            let expiring = state.snap.expiring_lines();
            let buffer = state.snap.buffer(self.card());
            for line in &expiring {
                let snap = &mut state.snap;
                let after = change_money(snap, MoneyMove::Expiry(Micros(line.amount)))?;
                let lines = std::slice::from_ref(line);
                (snap.apply_money_from(&after, lines))
                    .map_err(|e| StoreError::Corrupt(format!("{account}: {e}")))?;
                let params = params! {
                    account_id: account.as_str(), delta: -line.amount,
                    suspended_at: after.suspended_at,
                };
                tx.exec(&WRITE_OFF_BALANCE, params).await?;
                let facts = EntryFacts {
                    pocket: MONEY,
                    delta: -line.amount,
                    kind: "expiry",
                    amount_after: snap.balance,
                    available_after: Some(snap.balance - snap.held),
                    buffer: Some(buffer.0),
                    reference: Some(line.block.to_string()),
                };
                let entry = write_ledger(tx, account.as_str(), snap.now, facts).await?;
                set_entry_blocks(tx, entry.entry_id, lines).await?;
                emit_suspension(tx, account.as_str(), after.suspension, snap, entry.entry_id)
                    .await?;
                let data = json!({
                    "block_id": line.block, "amount": Micros(line.amount).format(),
                    "amount_micros": line.amount, "entry_id": entry.entry_id,
                });
                emit(tx, "credit.expired", account.as_str(), None, data, snap.now).await?;
            }
            state.write_changed_blocks(tx).await?;
            let params = params! { account_id: account.as_str(), now: state.snap.now };
            tx.exec(&CLOSE_EXPIRED_BLOCKS, params).await?;
            Ok(expiring.len() as u64)
        })
    }
}
