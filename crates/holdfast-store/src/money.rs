//! The money pocket: top-up, bonus, refund of a top-up, and the ledger by cursor (debits
//! are [`crate::debit`]'s). Each change is one unit of work: lock the account, let
//! `holdfast_core::decide` decide, write it with its ledger entry and events, commit.

use holdfast_core::decide::{self, MoneyMove, Usage};
use holdfast_core::{AccountId, IdempotencyKey, Micros, Refusal};
use serde_json::json;

use crate::account_state::{AccountState, lock_account, lock_account_row, read_account};
use crate::db::Tx;
use crate::error::StoreError;
use crate::model::{LedgerEntry, MoneyResult, Page};
use crate::statement::Stmt;
use crate::store::Store;
use crate::writes::{MoneyRequest, entry_from, read_entry, request_hash, write_money};
use crate::{in_read_tx, in_write_tx, params, statement};

static REFUNDED_OF_TOP_UP: Stmt = statement!(shared "refunded_of_top_up");
static LEDGER_PAGE: Stmt = statement!(shared "ledger_page");

/// Top-up (bought) or bonus (given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditKind {
    TopUp,
    Bonus,
}

impl CreditKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CreditKind::TopUp => "top_up",
            CreditKind::Bonus => "bonus",
        }
    }
}

/// A client's key with the operation and request hash it is used for.
#[derive(Clone, Copy)]
struct UseOfKey<'k> {
    key: &'k IdempotencyKey,
    operation: &'k str,
    request_hash: &'k str,
}

/// Largest page a listing returns.
pub const MAX_PAGE: i64 = 1000;

impl<'k> UseOfKey<'k> {
    fn request(self, change: MoneyMove, reference: Option<String>) -> MoneyRequest<'k> {
        MoneyRequest {
            change,
            kind: self.operation,
            reference,
            key: self.key,
            request_hash: self.request_hash,
        }
    }
}

impl Store {
    /// A top-up or bonus. Idempotent by key.
    pub async fn credit(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        decide::check_request_amount(amount)?;
        let operation = kind.as_str();
        let hash = request_hash(&json!({ "op": operation, "amount_micros": amount.0 }));
        let use_of_key = UseOfKey {
            key,
            operation,
            request_hash: &hash,
        };
        in_write_tx!(self, |tx| async {
            let mut state = lock_account_row(tx, account, &[key.as_str()]).await?;
            if let Some(replay) = self.known_replay(tx, &mut state, use_of_key).await? {
                return Ok(replay);
            }
            let buffer = state.snap.buffer(self.card());
            let req = use_of_key.request(MoneyMove::Credit(amount), None);
            let written = write_money(tx, self.card(), &mut state, buffer, req).await?;
            self.written_or_replay(tx, &mut state, use_of_key, written)
                .await
        })
    }

    /// Prices usage: money as given, or meter seconds at the card's rate.
    pub fn price(&self, usage: &Usage) -> Result<Micros, StoreError> {
        Ok(decide::price(self.card(), usage)?)
    }

    /// A forced debit refunding (part of) a top-up: no buffer check, never more than the
    /// top-up has left to refund, `total_spent` untouched.
    pub async fn refund(
        &self,
        account: &AccountId,
        top_up_key: &IdempotencyKey,
        amount: Micros,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        decide::check_request_amount(amount)?;
        let hash = request_hash(
            &json!({ "op": "refund", "amount_micros": amount.0, "top_up": top_up_key.as_str() }),
        );
        let use_of_key = UseOfKey {
            key,
            operation: "refund",
            request_hash: &hash,
        };
        in_write_tx!(self, |tx| async {
            let mut state = lock_account(tx, account, &[top_up_key.as_str(), key.as_str()]).await?;
            let top_up_entry = refundable_top_up(&state, top_up_key, use_of_key)?;
            if let Some(replay) = self.known_replay(tx, &mut state, use_of_key).await? {
                return Ok(replay);
            }
            let top_up = read_entry(tx, top_up_entry).await?.delta;
            let reference = top_up_entry.to_string();
            let params = params! { account_id: account.as_str(), reference: reference.as_str() };
            let refunded = tx.row(&REFUNDED_OF_TOP_UP, params).await?.int("refunded")?;
            decide::check_refund(top_up, refunded, amount)?;
            let buffer = state.snap.buffer(self.card());
            let req = use_of_key.request(MoneyMove::Refund(amount), Some(reference));
            let written = write_money(tx, self.card(), &mut state, buffer, req).await?;
            self.written_or_replay(tx, &mut state, use_of_key, written)
                .await
        })
    }

    /// Answers a money write: its entry and the account as it is now — or, when the key
    /// turned out to be taken already (nothing was written), the key's earlier use.
    async fn written_or_replay(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        use_of_key: UseOfKey<'_>,
        written: Option<LedgerEntry>,
    ) -> Result<MoneyResult, StoreError> {
        if let Some(entry) = written {
            return Ok(MoneyResult {
                entry,
                account: state.view(self.card())?,
                replay: false,
            });
        }
        state.look_up(tx, &[use_of_key.key.as_str()]).await?;
        self.known_replay(tx, state, use_of_key)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a taken key without its record".into()))
    }

    /// The answer to an earlier use of the key, if the account knows one: the original
    /// entry with the account as it is now for the same request, `idempotency_mismatch`
    /// for another.
    async fn known_replay(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        use_of_key: UseOfKey<'_>,
    ) -> Result<Option<MoneyResult>, StoreError> {
        let UseOfKey {
            key,
            operation,
            request_hash,
        } = use_of_key;
        let Some(record) = state.replay(key.as_str(), operation, request_hash)? else {
            return Ok(None);
        };
        let entry_id = record.entry_id.ok_or_else(|| {
            StoreError::Corrupt(format!("key {key:?}: a money record without its entry"))
        })?;
        if state.open_jobs.is_none() {
            state.look_up(tx, &[]).await?;
        }
        Ok(Some(MoneyResult {
            entry: read_entry(tx, entry_id).await?,
            account: state.view(self.card())?,
            replay: true,
        }))
    }

    /// The account's ledger after `after`, oldest first.
    pub async fn ledger(
        &self,
        account: &AccountId,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Page<LedgerEntry>, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        in_read_tx!(self, |tx| async {
            read_account(tx, account).await?;
            let params = params! {
                account_id: account.as_str(), after: after.unwrap_or(0), limit: limit,
            };
            let rows = tx.rows(&LEDGER_PAGE, params).await?;
            let items = rows.iter().map(entry_from).collect::<Result<Vec<_>, _>>()?;
            let next = items.last().map(|e| e.entry_id).or(after);
            Ok(Page { items, next })
        })
    }
}

/// The entry of the top-up `top_up_key` names, when it may be refunded: a bonus is not
/// (but a replay of this refund is still answered first), another key names no top-up.
fn refundable_top_up(
    state: &AccountState,
    top_up_key: &IdempotencyKey,
    refund: UseOfKey<'_>,
) -> Result<i64, StoreError> {
    match state.record(top_up_key.as_str()) {
        Some(r) if r.operation == "top_up" => r
            .entry_id
            .ok_or_else(|| StoreError::Corrupt("top-up without entry".into())),
        Some(r) if r.operation == "bonus" => {
            state.replay(refund.key.as_str(), refund.operation, refund.request_hash)?;
            Err(Refusal::NotRefundable.into())
        }
        _ => Err(Refusal::TopUpNotFound.into()),
    }
}
