//! The money pocket: top-up, bonus, debit (one, or batches group-committed across
//! accounts), refund of a top-up, and the ledger by cursor. Each change is one unit of
//! work: lock the account, let `holdfast_core::decide` decide, write it with its ledger
//! entry and events, commit.

use holdfast_core::decide::{
    self, BlockAmount, BlockTerms, CreditBlock, GENERAL, MoneyMove, RefundAsk, Usage,
};
use holdfast_core::{AccountId, IdempotencyKey, Micros, Refusal};
use serde_json::json;

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{LedgerEntry, MoneyResult, Page};
use crate::scope::CrossAccount;
use crate::store::{Store, TxFailure};
use crate::units::account_state::{AccountState, lock_account, lock_account_row, read_account};
use crate::units::blocks::insert_block;
use crate::units::jobs::UsedJobs;
use crate::units::writes::{MoneyRequest, entry_from, read_entry, request_hash, write_money};
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

/// One debit of a batch: what was used, the client's key, the job it bills, and who
/// asked (the batcher applies it in a task of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebitRequest {
    pub usage: Usage,
    pub key: IdempotencyKey,
    pub job_ref: Option<String>,
    /// The actor of the work that made the request ([`crate::actor::current`]).
    pub actor: String,
}

impl DebitRequest {
    pub fn new(usage: &Usage, key: &IdempotencyKey, job_ref: Option<&str>) -> DebitRequest {
        DebitRequest {
            usage: usage.clone(),
            key: key.clone(),
            job_ref: job_ref.map(str::to_owned),
            actor: crate::actor::current(),
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

/// A debit priced from the card and hashed, ready to apply.
pub(crate) struct PricedDebit<'r> {
    pub req: &'r DebitRequest,
    pub amount: Micros,
    pub hash: String,
}

/// How a money write's transaction fails: the store's error, or a signal to this module
/// alone.
enum MoneyFailed {
    Store(StoreError),
    /// The write found its key taken, and by the time it read the key's record the
    /// record was gone: pruned in between, its retention window past, so the key is free
    /// again. The transaction runs again and writes the key as new.
    KeyPrunedMeanwhile,
}

impl From<StoreError> for MoneyFailed {
    fn from(e: StoreError) -> MoneyFailed {
        MoneyFailed::Store(e)
    }
}

impl From<Refusal> for MoneyFailed {
    fn from(r: Refusal) -> MoneyFailed {
        MoneyFailed::Store(r.into())
    }
}

impl TxFailure for MoneyFailed {
    fn is_retryable(&self) -> bool {
        match self {
            MoneyFailed::Store(e) => e.is_retryable(),
            MoneyFailed::KeyPrunedMeanwhile => true,
        }
    }
}

impl MoneyFailed {
    /// The error a caller sees. (A key pruned meanwhile never gets here: its transaction
    /// runs again, and after the last attempt it is [`StoreError::Contention`].)
    fn into_store(self) -> StoreError {
        match self {
            MoneyFailed::Store(e) => e,
            MoneyFailed::KeyPrunedMeanwhile => StoreError::Contention(crate::store::MAX_ATTEMPTS),
        }
    }
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
            blocks: Vec::new(),
        }
    }
}

impl Store {
    /// A top-up or bonus of general money. Idempotent by key.
    pub async fn credit(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        (self.credit_on_terms(account, amount, kind, BlockTerms::GENERAL, key)).await
    }

    /// A top-up or bonus on `terms`: general money, or a credit block of its own when
    /// the terms make one (core's [`holdfast_core::decide::blocks`]: the account's debt
    /// is paid first, the rest is the block's). Idempotent by key; the terms are part of
    /// the request (a credit of general money hashes as it always has).
    pub async fn credit_on_terms(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        terms: BlockTerms,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        decide::check_request_amount(amount)?;
        terms.check()?;
        let operation = kind.as_str();
        let mut request = json!({ "op": operation, "amount_micros": amount.0 });
        if terms.makes_block() {
            request["terms"] = json!(terms);
        }
        let hash = request_hash(&request);
        let use_of_key = UseOfKey {
            key,
            operation,
            request_hash: &hash,
        };
        in_write_tx!(self, fails MoneyFailed, |tx| async {
            let mut state = lock_account_row(tx, self.card(), account, &[key.as_str()]).await?;
            if let Some(replay) = self.known_replay(tx, &mut state, use_of_key).await? {
                return Ok(replay);
            }
            let share = state.snap.block_share_of_credit(amount.0);
            let buffer = state.snap.buffer(self.card());
            let req = use_of_key.request(MoneyMove::Credit(amount), None);
            let mut written = write_money(tx, self.card(), &mut state, buffer, req).await?;
            if let Some(entry) = written.as_mut().filter(|_| terms.makes_block()) {
                entry.blocks = make_block(tx, &mut state, entry, terms, share).await?;
            }
            self.written_or_replay(tx, &mut state, use_of_key, written)
                .await
        })
        .map_err(MoneyFailed::into_store)
    }

    /// Prices usage: money as given, or meter seconds at the card's rate.
    pub fn price(&self, usage: &Usage) -> Result<Micros, StoreError> {
        Ok(decide::price(self.card(), usage)?)
    }

    /// A metered debit: `balance − held − amount ≥ −buffer`, or `insufficient_funds`.
    /// The same path as a batch of one.
    pub async fn debit(
        &self,
        account: &AccountId,
        usage: &Usage,
        key: &IdempotencyKey,
        job_ref: Option<&str>,
    ) -> Result<MoneyResult, StoreError> {
        let req = DebitRequest::new(usage, key, job_ref);
        self.debit_one(account, &req).await
    }

    /// One debit as a request (the batcher's unit): a call of one debit through the one
    /// debit path ([`Store::ingest`]'s statements and decisions), so a single debit and a
    /// batched one answer alike by construction.
    pub async fn debit_one(
        &self,
        account: &AccountId,
        req: &DebitRequest,
    ) -> Result<MoneyResult, StoreError> {
        let items = [(account.clone(), req.clone())];
        let mut answers = self.apply_debits(&items, CrossAccount::DebitBatch).await?;
        match (answers.pop(), answers.is_empty()) {
            (Some(answer), true) => answer.map_err(StoreError::from),
            _ => Err(StoreError::Corrupt(
                "a call of one debit answered other than once".into(),
            )),
        }
    }

    /// Debits of any accounts in ONE transaction, answered in the order given: the debit
    /// batcher's group commit. Applied set-based, as a batch ingest is ([`Store::ingest`]:
    /// two statements per call whatever its size), each debit exactly as a single debit
    /// (its own buffer check, entry, key and refusal; each account's debits in the order
    /// given; a key repeated in the call is a replay of its first use). The outer error
    /// fails the transaction as a whole: nothing is written.
    pub async fn debit_many(
        &self,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        self.apply_debits(items, CrossAccount::DebitBatch).await
    }

    /// May this debit pass on the account as it is now: the job its `job_ref` names (if
    /// it names one of this engine), then the buffer.
    pub(crate) fn may_debit(
        &self,
        state: &AccountState,
        p: &PricedDebit<'_>,
        jobs: &UsedJobs,
        buffer: Micros,
    ) -> Result<(), Refusal> {
        let job = p
            .req
            .job_ref
            .as_ref()
            .and_then(|r| jobs.get(&(state.account.to_string(), r.clone())));
        let grace = self.card().timeouts.late_usage_grace_seconds;
        decide::check_usage_of_job(job, state.snap.now, grace)?;
        decide::check_debit(&state.snap, p.amount, buffer)?;
        state.snap.check_spend(self.card(), p.amount.0)
    }

    pub(crate) fn price_debit<'r>(
        &self,
        req: &'r DebitRequest,
    ) -> Result<PricedDebit<'r>, Refusal> {
        if req.job_ref.as_deref().is_some_and(|r| r.contains('\0')) {
            return Err(Refusal::InvalidRequest(
                "job_ref: must not contain NUL characters".into(),
            ));
        }
        let amount = decide::price(self.card(), &req.usage)?;
        decide::check_request_amount(amount)?;
        let hash = request_hash(&HashedDebit::of(req));
        Ok(PricedDebit { req, amount, hash })
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
        let ask = RefundAsk::Exactly(amount);
        self.refund_as_asked(account, top_up_key, ask, key)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a refund of an exact amount wrote nothing".into()))
    }

    /// [`Store::refund`] of what `ask` comes to under the account lock (decided by
    /// [`decide::refund_amount`]): `None`, and nothing written, when it comes to nothing.
    pub async fn refund_as_asked(
        &self,
        account: &AccountId,
        top_up_key: &IdempotencyKey,
        ask: RefundAsk,
        key: &IdempotencyKey,
    ) -> Result<Option<MoneyResult>, StoreError> {
        decide::check_request_amount(ask.amount())?;
        let hash = request_hash(&refund_request(top_up_key, ask));
        let use_of_key = UseOfKey {
            key,
            operation: "refund",
            request_hash: &hash,
        };
        in_write_tx!(self, fails MoneyFailed, |tx| async {
            let mut state = lock_account(tx, self.card(), account, &[top_up_key.as_str(), key.as_str()]).await?;
            let top_up_entry = refundable_top_up(&state, top_up_key, use_of_key)?;
            if let Some(replay) = self.known_replay(tx, &mut state, use_of_key).await? {
                return Ok(Some(replay));
            }
            let top_up = read_entry(tx, top_up_entry).await?;
            // The block the top-up made, if it made one (its id is the top-up's entry).
            let block = top_up.blocks.iter().any(|b| b.block == top_up_entry).then_some(top_up_entry);
            let top_up = top_up.delta;
            let reference = top_up_entry.to_string();
            let params = params! { account_id: account.as_str(), reference: reference.as_str() };
            let refunded = tx.row(&REFUNDED_OF_TOP_UP, params).await?.int("refunded")?;
            let Some(amount) = decide::refund_amount(top_up, refunded, ask)? else {
                return Ok(None);
            };
            let buffer = state.snap.buffer(self.card());
            let mut req = use_of_key.request(MoneyMove::Refund(amount), Some(reference));
            req.blocks = state.snap.refund_lines(block, amount.0);
            let written = write_money(tx, self.card(), &mut state, buffer, req).await?;
            self.written_or_replay(tx, &mut state, use_of_key, written)
                .await
                .map(Some)
        })
        .map_err(MoneyFailed::into_store)
    }

    /// Answers a money write: its entry and the account as it is now — or, when the key
    /// turned out to be taken already (nothing was written), the key's earlier use; or,
    /// when that use's record was pruned meanwhile, [`MoneyFailed::KeyPrunedMeanwhile`]
    /// (the transaction runs again).
    async fn written_or_replay(
        &self,
        tx: &mut Tx,
        state: &mut AccountState,
        use_of_key: UseOfKey<'_>,
        written: Option<LedgerEntry>,
    ) -> Result<MoneyResult, MoneyFailed> {
        if let Some(entry) = written {
            return Ok(MoneyResult {
                entry,
                account: state.view(self.card())?,
                replay: false,
            });
        }
        state.look_up(tx, &[use_of_key.key.as_str()]).await?;
        // Taken, yet no record now: a prune removed it in between (its window past);
        // the transaction runs again and finds the key free.
        self.known_replay(tx, state, use_of_key)
            .await?
            .ok_or(MoneyFailed::KeyPrunedMeanwhile)
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
        // A money change's key is its entry's: a record without one is not of this kind.
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
            read_account(tx, self.card(), account).await?;
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

/// Makes the block a credit on `terms` wrote `entry` for: its id the entry's, keeping
/// `share` of it (what paid the account's debt is general money); answers the entry's
/// lines.
async fn make_block(
    tx: &mut Tx,
    state: &mut AccountState,
    entry: &LedgerEntry,
    terms: BlockTerms,
    share: i64,
) -> Result<Vec<BlockAmount>, StoreError> {
    let block = CreditBlock {
        id: entry.entry_id,
        terms,
        created_at: entry.created_at,
        granted: share,
        remaining: share,
        held: 0,
    };
    let mut lines = vec![BlockAmount {
        block: block.id,
        amount: share,
    }];
    if entry.delta > share {
        lines.push(BlockAmount {
            block: GENERAL,
            amount: entry.delta - share,
        });
    }
    state.add_block(block.clone());
    insert_block(tx, &state.account, &block, &state.snap.blocks, &lines).await?;
    Ok(lines)
}

/// The entry of the top-up `top_up_key` names, when it may be refunded: a bonus is not
/// (but a replay of this refund is still answered first), another key names no top-up.
/// A refund as its request hash reads it. An exact refund hashes as it always has
/// (`amount_micros`), so the keys of refunds made before the other asks existed replay.
fn refund_request(top_up_key: &IdempotencyKey, ask: RefundAsk) -> serde_json::Value {
    let top_up = top_up_key.as_str();
    match ask {
        RefundAsk::Exactly(m) => json!({ "op": "refund", "amount_micros": m.0, "top_up": top_up }),
        RefundAsk::AtMost(m) => json!({ "op": "refund", "at_most_micros": m.0, "top_up": top_up }),
        RefundAsk::ToTotal(m) => {
            json!({ "op": "refund", "to_total_micros": m.0, "top_up": top_up })
        }
    }
}

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

/// A debit as its request hash reads it: `{"job_ref", "op": "debit", "usage"}`, keys in
/// sorted order, the usage as `{"amount_micros"}` or `{"meter", "seconds"}`. Serialized
/// straight from the request, with no `serde_json::Value` built per debit; the bytes are
/// those of the sorted-key `Value` that the stored hashes were made from (tested below).
#[derive(serde::Serialize)]
struct HashedDebit<'r> {
    job_ref: Option<&'r str>,
    op: &'static str,
    usage: HashedUsage<'r>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum HashedUsage<'r> {
    Amount { amount_micros: i64 },
    Metered { meter: &'r str, seconds: i64 },
}

impl<'r> HashedDebit<'r> {
    fn of(req: &'r DebitRequest) -> HashedDebit<'r> {
        let usage = match &req.usage {
            Usage::Amount(m) => HashedUsage::Amount { amount_micros: m.0 },
            Usage::Metered { meter, seconds } => HashedUsage::Metered {
                meter,
                seconds: *seconds,
            },
        };
        HashedDebit {
            job_ref: req.job_ref.as_deref(),
            op: "debit",
            usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of a debit as it was made before `HashedDebit`: a `serde_json::Value`.
    fn hash_by_value(req: &DebitRequest) -> String {
        let usage = match &req.usage {
            Usage::Amount(m) => json!({ "amount_micros": m.0 }),
            Usage::Metered { meter, seconds } => json!({ "meter": meter, "seconds": seconds }),
        };
        request_hash(&json!({ "op": "debit", "usage": usage, "job_ref": req.job_ref }))
    }

    #[test]
    fn a_debit_hashes_as_its_sorted_json_value_did() {
        let key = IdempotencyKey::parse("k-1").unwrap();
        let usages = [
            Usage::Amount(Micros(1)),
            Usage::Amount(Micros(i64::MAX)),
            Usage::Metered {
                meter: "linux-small".into(),
                seconds: 3600,
            },
            Usage::Metered {
                meter: "m\"é\u{1}/\\".into(),
                seconds: -1,
            },
        ];
        let refs = [None, Some("job-1"), Some("quote\" and \u{7f} and ü and \n")];
        for usage in &usages {
            for job_ref in refs {
                let req = DebitRequest::new(usage, &key, job_ref);
                assert_eq!(
                    request_hash(&HashedDebit::of(&req)),
                    hash_by_value(&req),
                    "{usage:?} {job_ref:?}"
                );
            }
        }
        // And the bytes hashed are the ones a stored hash was made from, not just equal.
        let req = DebitRequest::new(&usages[2], &key, Some("j"));
        assert_eq!(
            serde_json::to_string(&HashedDebit::of(&req)).unwrap(),
            r#"{"job_ref":"j","op":"debit","usage":{"meter":"linux-small","seconds":3600}}"#
        );
    }
}
