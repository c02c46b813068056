//! The money pocket: top-ups and bonuses, debits, refunds of top-ups and of jobs, grants
//! of allowance, the ledger.

use holdfast_core::{AccountId, IdempotencyKey, JobId, Micros, Refusal};
use holdfast_store::{
    CreditKind, DebitRequest, Grant, Granted, JobRefund, JobRefunded, LedgerEntry, LedgerFilter,
    MoneyResult, Page, StoreError, Usage,
};

use super::Engine;

impl Engine {
    /// The account's statement for `[from, to)`: opening and closing balance, the changes
    /// between by ledger kind, spending by job kind, what its jobs held at `to`.
    pub async fn statement(
        &self,
        account: &AccountId,
        from: holdfast_core::Timestamp,
        to: holdfast_core::Timestamp,
    ) -> Result<holdfast_core::model::Statement, StoreError> {
        self.store.statement(account, from, to).await
    }

    /// The money and allowance pockets of `account` as they were at `at` (every entry
    /// written at or before it), and what its jobs held then if they are still kept.
    pub async fn balance_at(
        &self,
        account: &AccountId,
        at: holdfast_core::Timestamp,
    ) -> Result<holdfast_core::model::BalanceAt, StoreError> {
        self.store.balance_at(account, at).await
    }

    /// What accounts, job kinds or meters spent in a period (debits and captures of money,
    /// with the seconds of the metered debits) and got back (job refunds).
    pub async fn usage(
        &self,
        q: &holdfast_store::UsageQuery,
    ) -> Result<holdfast_core::model::UsageReport, StoreError> {
        self.store.usage(q).await
    }

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

    /// A top-up or bonus on `terms`: a credit block of its own when the terms make one
    /// (an expiry, a priority, a category), else general money. Idempotent by key.
    pub async fn credit_on_terms(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        terms: holdfast_core::decide::BlockTerms,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        (self
            .store
            .credit_on_terms(account, amount, kind, terms, key))
        .await
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
        self.debits.apply(&self.store, account, req).await
    }

    /// Debits of any accounts in one call (batch ingest), answered in the order given,
    /// each exactly as [`Engine::debit`] would answer it: its own buffer check, entry, key
    /// and refusal; each account's debits apply in the order given. Applied set-based in
    /// ONE transaction (see `holdfast_store::units::ingest`). Not atomic across items: what one
    /// item answers does not depend on another. A database error ends the call with
    /// nothing of it written; a retry with the same keys is safe.
    pub async fn debit_many(
        &self,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        self.store.ingest(items).await
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

    /// Refunds (part of) what a succeeded job was charged, to the pocket it was taken
    /// from; never more than the charge across all the job's refunds. Idempotent by the
    /// request's key (on the job's account).
    pub async fn refund_job(
        &self,
        job: &JobId,
        req: &JobRefund,
    ) -> Result<JobRefunded, StoreError> {
        self.store.refund_job(job, req).await
    }

    /// Grants allowance items to a pocket of the account, until its next refill.
    /// Idempotent by the request's key.
    pub async fn grant(&self, account: &AccountId, req: &Grant) -> Result<Granted, StoreError> {
        self.store.grant(account, req).await
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

    /// One page of the books across accounts, in entry order (each page its own read
    /// transaction: an export of any size holds one page at a time).
    pub async fn export_ledger(
        &self,
        filter: &LedgerFilter,
    ) -> Result<Page<LedgerEntry>, StoreError> {
        self.store.export_ledger(filter).await
    }

    /// How many entries an export has from its `after` on.
    pub async fn count_ledger_export(&self, filter: &LedgerFilter) -> Result<u64, StoreError> {
        self.store.count_ledger_export(filter).await
    }
}
