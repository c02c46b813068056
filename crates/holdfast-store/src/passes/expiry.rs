//! Expiry: a scheduled pass that writes off what is left of credit blocks past their
//! expiry, one account per short transaction under its lock: one `expiry` ledger entry
//! per block (naming it), the balance down by it, `credit.expired`. What open holds
//! reserved of a block stays until its job ends (core's
//! [`holdfast_core::decide::blocks`]): captured, it is spent; released, the next run
//! writes it off. Until a run writes it off, an expired block's free money is in the
//! balance but not available, so nothing draws on it meanwhile. A run closes the expired
//! blocks that hold nothing (`closed_at`), so the next runs never look at them again; a
//! job refund that gives one money back opens it again (`write_block.sql`).
//!
//! Before it writes off, a run tells `credit.expiring` once for each open block that
//! holds money and expires within the card's `timeouts.credit_expiring_notice_days`
//! (`expiring_noticed_at` marks it told; a block made inside the window is told by the
//! next run). The claim spans accounts, as the notices of jobs do.

use holdfast_core::decide::{MoneyMove, change_money, expiring_window_end};
use holdfast_core::{AccountId, MONEY, Micros};
use serde_json::json;

use crate::error::StoreError;
use crate::model::PassReport;
use crate::passes::reconcile::TRY_LOCK_ACCOUNT;
use crate::passes::sweep::CHUNK;
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::units::account_state::lock_account;
use crate::units::blocks::{block_from, set_entry_blocks};
use crate::units::writes::{EntryFacts, emit, emit_suspension, write_ledger};
use crate::{driver::statement::Stmt, in_read_tx, in_write_tx, params, statement};

static ACCOUNTS_TO_EXPIRE: Stmt = statement!(shared "accounts_with_blocks_to_expire");
static WRITE_OFF_BALANCE: Stmt = statement!(shared "write_off_balance");
static CLOSE_EXPIRED_BLOCKS: Stmt = statement!(shared "close_expired_blocks");
static CLAIM_EXPIRING_BLOCKS: Stmt = statement!("claim_expiring_blocks");

impl Store {
    /// Tells `credit.expiring` for up to `max_accounts` blocks, then writes off the
    /// expired blocks of up to `max_accounts` accounts (`processed` counts both). An
    /// account another transaction holds is left to the next run.
    pub async fn expire_blocks(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        report.processed += self.tell_expiring(max_accounts).await?;
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

    /// Tells `credit.expiring` once for each block due, in chunks; how many.
    async fn tell_expiring(&self, max_blocks: u64) -> Result<u64, StoreError> {
        let days = self.card().timeouts.credit_expiring_notice_days;
        let mut told = 0;
        while days > 0 && told < max_blocks {
            let budget = (max_blocks - told).min(CHUNK as u64) as i64;
            let n = in_write_tx!(self, across Some(CrossAccount::Notices), |tx| async {
                let now = crate::store::now(tx).await?;
                let until = expiring_window_end(now, days);
                let claim = params! { now: now, until: until, limit: budget };
                let rows = tx.rows(&CLAIM_EXPIRING_BLOCKS, claim).await?;
                for row in &rows {
                    let (account, block) = (row.text("account_id")?, block_from(row)?);
                    let data = block.expiring_data();
                    emit(tx, "credit.expiring", &account, None, data, now).await?;
                }
                Ok::<u64, StoreError>(rows.len() as u64)
            })?;
            told += n;
            if (n as i64) < budget {
                break;
            }
        }
        Ok(told)
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
