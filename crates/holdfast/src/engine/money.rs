//! The money pocket: top-ups and bonuses, debits, refunds, the ledger.

use holdfast_core::{AccountId, IdempotencyKey, Micros};
use holdfast_store::{CreditKind, DebitRequest, LedgerEntry, MoneyResult, Page, StoreError, Usage};

use super::Engine;

impl Engine {
    /// A top-up (bought) or bonus (given). Idempotent by key.
    pub async fn credit(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        self.store.credit(account, amount, kind, key).await
    }

    /// A metered debit, group-committed with the debits that arrive while one is in
    /// flight (one transaction for all of them; see [`crate::batch`]). Passes when
    /// `balance − held − amount ≥ −buffer`, else `insufficient_funds`. Idempotent by key.
    pub async fn debit(
        &self,
        account: &AccountId,
        usage: &Usage,
        key: &IdempotencyKey,
        job_ref: Option<&str>,
    ) -> Result<MoneyResult, StoreError> {
        let req = DebitRequest::new(usage, key, job_ref);
        self.debits.debit(&self.store, account, req).await
    }

    /// A forced debit refunding (part of) the top-up keyed `top_up_key`: no buffer check,
    /// never more than the top-up has left to refund. Idempotent by `key`.
    pub async fn refund(
        &self,
        account: &AccountId,
        top_up_key: &IdempotencyKey,
        amount: Micros,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        self.store.refund(account, top_up_key, amount, key).await
    }

    /// The account's ledger after the entry id `after`, oldest first, at most `limit`
    /// (clamped to 1 ..= [`crate::MAX_PAGE`]).
    pub async fn ledger(
        &self,
        account: &AccountId,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Page<LedgerEntry>, StoreError> {
        self.store.ledger(account, after, limit).await
    }
}
