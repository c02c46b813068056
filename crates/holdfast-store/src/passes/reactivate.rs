//! Reactivation: a scheduled pass that refills the allowances of accounts that have been
//! idle for `reactivate_after_seconds`, whose window has passed and that are below quota,
//! and emits `allowance.refilled` so the application can say "your limits are back".
//!
//! Re-engagement, not billing: the refill itself is the one activity applies
//! (`due_refills` + `apply_refills`, under the account lock, the condition checked again
//! there). Skips blocked accounts and accounts never active since creation. Does not stamp
//! `last_active_at`: a refill is not the user's activity. Must never take a second
//! account's lock in the same transaction.

use holdfast_core::AccountId;
use holdfast_core::decide::MICROS_PER_SECOND;
use serde_json::json;

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::PassReport;
use crate::passes::reconcile::TRY_LOCK_ACCOUNT;
use crate::store::Store;
use crate::units::account_state::lock_account;
use crate::units::writes::{apply_refills, emit};
use crate::{in_read_tx, in_write_tx, params, statement};

/// Idle, unblocked, once-active accounts with a pocket whose shortest window has passed.
static IDLE_ACCOUNTS_AFTER: Stmt = statement!(shared "idle_accounts_after");

impl Store {
    /// Refills up to `max_accounts` idle accounts whose window has passed and that are
    /// below quota, each in its own short transaction; emits `allowance.refilled` for each.
    pub async fn reactivate(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        let Some(shortest) = self.card().allowances.values().min().copied() else {
            return Ok(report);
        };
        let now = in_read_tx!(self, |tx| async { crate::store::now(tx).await })?;
        let idle_since = now - self.card().timeouts.reactivate_after_seconds * MICROS_PER_SECOND;
        let window_from = now - shortest * MICROS_PER_SECOND;
        let idle = params! {
            idle_since_micros: idle_since,
            cycle_started_before_micros: window_from,
        };
        let candidates = self
            .next_accounts("reactivate", max_accounts, &IDLE_ACCOUNTS_AFTER, &idle)
            .await?;
        for account in candidates {
            if self.reactivate_one(&account).await? {
                report.processed += 1;
            }
        }
        Ok(report)
    }

    /// Refills one account if it still qualifies under its lock. Skips an account another
    /// transaction holds (it is active right now).
    async fn reactivate_one(&self, account: &AccountId) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            if tx
                .maybe_row(&TRY_LOCK_ACCOUNT, params! { account_id: account.as_str() })
                .await?
                .is_none()
            {
                return Ok(false);
            }
            let mut snap = lock_account(tx, self.card(), account, &[]).await?.snap;
            let Some(refills) = snap.reactivation_refills(self.card()) else {
                return Ok(false);
            };
            apply_refills(tx, account, &mut snap, &refills).await?;
            let pockets: serde_json::Map<String, serde_json::Value> = refills
                .iter()
                .map(|r| {
                    let p = json!({ "remaining": r.quota, "quota": r.quota, "delta": r.delta });
                    (r.pocket.clone(), p)
                })
                .collect();
            let data = json!({ "pockets": pockets, "reason": "reactivation" });
            emit(
                tx,
                "allowance.refilled",
                account.as_str(),
                None,
                data,
                snap.now,
            )
            .await?;
            Ok(true)
        })
    }
}
