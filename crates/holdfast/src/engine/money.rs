//! The money pocket: top-ups and bonuses, debits, refunds, the ledger.

use holdfast_core::{AccountId, IdempotencyKey, Micros, Refusal};
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

    /// Debits of any accounts in one call (batch ingest), answered in the order given,
    /// each exactly as [`Engine::debit`] would answer it: its own buffer check, entry, key
    /// and refusal; each account's debits apply in the order given. Applied in ONE
    /// transaction; when that transaction fails as a whole because one debit's result is
    /// out of range, each debit is applied on its own instead, so every item still gets
    /// its own answer. Not atomic across items. A database error ends the call: what was
    /// applied before it stays applied, and a retry with the same keys replays it.
    pub async fn debit_many(
        &self,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        match self.store.debit_many(items).await {
            Err(StoreError::BatchAborted(_)) => {}
            other => return other,
        }
        let mut out = Vec::with_capacity(items.len());
        for (account, req) in items {
            out.push(match self.store.debit_one(account, req).await {
                Err(StoreError::Refused(refusal)) => Err(refusal),
                other => Ok(other?),
            });
        }
        Ok(out)
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
