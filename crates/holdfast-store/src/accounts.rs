//! Accounts, allowance pockets and the money pocket: put, read, activity, block; top-up,
//! bonus, debit, refund; the ledger by cursor.

use holdfast_core::decide::{self, AccountSnapshot, Timestamp};
use holdfast_core::{AccountId, IdempotencyKey, Micros, Refusal};
use serde_json::json;

use crate::args;
use crate::db::{Sql, Tx};
use crate::error::StoreError;
use crate::model::{AccountView, LedgerEntry, MoneyResult, Page};
use crate::store::{
    EntryFacts, Locked, MoneyChange, Store, apply_refills, entry_from, lock_account,
    lock_account_row, read_account, read_entry, request_hash, write_ledger, write_money,
};
use crate::{in_read_tx, in_write_tx};

/// A PUT of an account.
#[derive(Debug, Clone)]
pub struct PutAccount {
    pub plan: String,
    pub plan_until: Option<Timestamp>,
    pub max_concurrent_jobs: Option<i64>,
}

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

/// What a debit is for: an amount of money, or seconds of a meter priced from the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    Amount(Micros),
    Metered { meter: String, seconds: i64 },
}

/// One debit of a batch: what was used, the client's key, the job it bills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebitRequest {
    pub usage: Usage,
    pub key: IdempotencyKey,
    pub job_ref: Option<String>,
}

impl DebitRequest {
    pub fn new(usage: &Usage, key: &IdempotencyKey, job_ref: Option<&str>) -> DebitRequest {
        DebitRequest {
            usage: usage.clone(),
            key: key.clone(),
            job_ref: job_ref.map(str::to_owned),
        }
    }
}

/// A client's key with the operation and request hash it is used for.
type UseOfKey<'k> = (&'k IdempotencyKey, &'k str, &'k str);

/// A debit priced from the card and hashed, ready to apply.
struct PricedDebit<'r> {
    req: &'r DebitRequest,
    amount: Micros,
    hash: String,
}

/// Largest page a listing returns.
pub const MAX_PAGE: i64 = 1000;

impl Store {
    /// Creates or updates an account. Returns the account and whether it was created.
    pub async fn put_account(
        &self,
        account: &AccountId,
        req: &PutAccount,
    ) -> Result<(AccountView, bool), StoreError> {
        if !self.card().plans.contains_key(&req.plan) {
            return Err(Refusal::UnknownPlan(req.plan.clone()).into());
        }
        if req
            .max_concurrent_jobs
            .is_some_and(|n| !(1..=1_000_000).contains(&n))
        {
            return Err(Refusal::InvalidRequest(
                "max_concurrent_jobs: must be 1 to 1000000".into(),
            )
            .into());
        }
        in_write_tx!(self, |tx| self.put_account_in(tx, account, req))
    }

    async fn put_account_in(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        req: &PutAccount,
    ) -> Result<(AccountView, bool), StoreError> {
        let now = tx.fetch_one(crate::store::NOW, args![]).await?.int("now")?;
        let inserted = tx
            .execute(
                Sql::both(
                    "INSERT INTO accounts (account_id, plan, plan_until, max_concurrent_jobs, created_at) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id) DO NOTHING",
                ),
                args![account.as_str(), req.plan.as_str(), req.plan_until, req.max_concurrent_jobs, now],
            )
            .await?
            == 1;
        let mut locked = lock_account(tx, account, &[]).await?;
        let snap = &mut locked.snap;
        if !inserted {
            tx.execute(
                Sql::both("UPDATE accounts SET plan = $2, plan_until = $3, max_concurrent_jobs = $4 WHERE account_id = $1"),
                args![account.as_str(), req.plan.as_str(), req.plan_until, req.max_concurrent_jobs],
            )
            .await?;
            snap.plan = req.plan.clone();
            snap.plan_until = req.plan_until;
            snap.max_concurrent_jobs = req.max_concurrent_jobs;
        }
        // A new account's pockets start full (a refill entry explains each); a pocket a
        // new plan adds starts empty and fills at its first refill.
        let plan = &self.card().plans[&req.plan];
        for (pocket, quota) in &plan.allowances {
            if snap.allowances.contains_key(pocket) {
                continue;
            }
            let remaining = if inserted { *quota } else { 0 };
            tx.execute(
                Sql::both(
                    "INSERT INTO allowances (account_id, pocket, remaining, held, cycle_started_at) VALUES ($1, $2, $3, 0, $4)",
                ),
                args![account.as_str(), pocket.as_str(), remaining, snap.now],
            )
            .await?;
            if remaining > 0 {
                write_ledger(
                    tx,
                    account.as_str(),
                    snap.now,
                    EntryFacts {
                        pocket,
                        delta: remaining,
                        kind: "refill",
                        amount_after: remaining,
                        available_after: Some(remaining),
                        buffer: None,
                        reference: None,
                    },
                )
                .await?;
            }
            snap.allowances.insert(
                pocket.clone(),
                holdfast_core::AllowancePocket {
                    remaining,
                    held: 0,
                    cycle_started_at: snap.now,
                },
            );
        }
        Ok((locked.view(self.card())?, inserted))
    }

    pub async fn get_account(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        in_read_tx!(self, |tx| async {
            read_account(tx, account).await?.view(self.card())
        })
    }

    /// Records activity: applies due refills and stamps `last_active_at`.
    pub async fn activity(&self, account: &AccountId) -> Result<AccountView, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut locked = lock_account(tx, account, &[]).await?;
            self.record_activity(tx, account, &mut locked.snap).await?;
            locked.view(self.card())
        })
    }

    /// Account activity (a submit, whatever its outcome, or the activity call): applies
    /// the due refills and stamps `last_active_at`, in the caller's transaction.
    pub(crate) async fn record_activity(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
    ) -> Result<(), StoreError> {
        let refills = snap.due_refills(self.card());
        apply_refills(tx, account, snap, &refills).await?;
        self.stamp_activity(tx, account, snap).await
    }

    /// Stamps `last_active_at`, in the caller's transaction.
    pub(crate) async fn stamp_activity(
        &self,
        tx: &mut Tx,
        account: &AccountId,
        snap: &mut AccountSnapshot,
    ) -> Result<(), StoreError> {
        tx.execute(
            Sql::both("UPDATE accounts SET last_active_at = $2 WHERE account_id = $1"),
            args![account.as_str(), snap.now],
        )
        .await?;
        snap.last_active_at = Some(snap.now);
        Ok(())
    }

    /// Blocks (`true`) or unblocks an account. Blocking again keeps the first time.
    pub async fn set_blocked(
        &self,
        account: &AccountId,
        blocked: bool,
    ) -> Result<AccountView, StoreError> {
        in_write_tx!(self, |tx| async {
            let mut locked = lock_account(tx, account, &[]).await?;
            let blocked_at = if blocked {
                Some(locked.snap.blocked_at.unwrap_or(locked.snap.now))
            } else {
                None
            };
            tx.execute(
                Sql::both("UPDATE accounts SET blocked_at = $2 WHERE account_id = $1"),
                args![account.as_str(), blocked_at],
            )
            .await?;
            locked.snap.blocked_at = blocked_at;
            locked.view(self.card())
        })
    }

    /// A top-up or bonus. Idempotent by key.
    pub async fn credit(
        &self,
        account: &AccountId,
        amount: Micros,
        kind: CreditKind,
        key: &IdempotencyKey,
    ) -> Result<MoneyResult, StoreError> {
        check_request_amount(amount)?;
        let op = kind.as_str();
        let hash = request_hash(&json!({ "op": op, "amount_micros": amount.0 }));
        in_write_tx!(self, |tx| async {
            let mut locked = lock_account_row(tx, account, &[key.as_str()]).await?;
            let use_of_key = (key, op, hash.as_str());
            if let Some(replay) = self.known_replay(tx, &mut locked, use_of_key).await? {
                return Ok(replay);
            }
            let buffer = locked.snap.buffer(self.card()).0;
            let written = write_money(
                tx,
                &mut locked,
                buffer,
                MoneyChange {
                    delta: amount.0,
                    kind: op,
                    reference: None,
                    credited: amount.0,
                    spent: 0,
                    credit: true,
                },
                (key, &hash),
            )
            .await?;
            self.answer(tx, &mut locked, use_of_key, written).await
        })
    }

    /// Prices usage: money as given, or meter seconds rounded up to the micro-unit.
    pub fn price(&self, usage: &Usage) -> Result<Micros, StoreError> {
        match usage {
            Usage::Amount(m) => Ok(*m),
            Usage::Metered { meter, seconds } => {
                let per_second = self
                    .card()
                    .meters
                    .get(meter)
                    .ok_or_else(|| Refusal::UnknownMeter(meter.clone()))?;
                if *seconds <= 0 {
                    return Err(Refusal::InvalidRequest(
                        "usage.seconds: must be a positive integer".into(),
                    )
                    .into());
                }
                let too_large =
                    || Refusal::InvalidRequest("usage.seconds: too large for this meter".into());
                let price = per_second.times(*seconds).ok_or_else(too_large)?;
                if price > holdfast_core::MAX_REQUEST_AMOUNT {
                    return Err(too_large().into());
                }
                Ok(price)
            }
        }
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

    /// One debit as a request (the batcher's unit), as [`Store::debit_batch`] for one
    /// debit, with a mid-write refusal answered as such.
    pub async fn debit_one(
        &self,
        account: &AccountId,
        req: &DebitRequest,
    ) -> Result<MoneyResult, StoreError> {
        match self.debit_batch(account, std::slice::from_ref(req)).await {
            Err(StoreError::BatchAborted(r)) => Err(r.into()),
            Err(e) => Err(e),
            Ok(mut results) => results
                .pop()
                .ok_or_else(|| StoreError::Corrupt("a batch of one answered nothing".into()))?
                .map_err(StoreError::from),
        }
    }

    /// Applies debits of one account in arrival order in ONE transaction: each gets its
    /// own buffer check, ledger entry, idempotency key and result, and a refused debit
    /// refuses only itself (a refusal writes nothing). A key repeated inside the batch is
    /// a replay of its first use. The outer error fails the whole transaction (database);
    /// the inner results are per debit.
    pub async fn debit_batch(
        &self,
        account: &AccountId,
        requests: &[DebitRequest],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        let mut results = self
            .debit_batches(&[(account.clone(), requests.to_vec())])
            .await?;
        results
            .pop()
            .ok_or_else(|| StoreError::Corrupt("a batch answered no account".into()))
    }

    /// [`Store::debit_batch`] for several accounts in ONE transaction (group commit). The
    /// accounts are locked in sorted order, so two such transactions never deadlock;
    /// results come back in the order of `groups`.
    pub async fn debit_batches(
        &self,
        groups: &[(AccountId, Vec<DebitRequest>)],
    ) -> Result<Vec<Vec<Result<MoneyResult, Refusal>>>, StoreError> {
        let priced: Vec<Vec<Result<PricedDebit<'_>, Refusal>>> = groups
            .iter()
            .map(|(_, requests)| requests.iter().map(|r| self.price_debit(r)).collect())
            .collect();
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| groups[a].0.as_str().cmp(groups[b].0.as_str()));
        in_write_tx!(self, |tx| async {
            let mut out: Vec<Vec<Result<MoneyResult, Refusal>>> = vec![Vec::new(); groups.len()];
            for &i in &order {
                out[i] = self.debit_account_in(tx, &groups[i], &priced[i]).await?;
            }
            Ok(out)
        })
    }

    /// One account's debits of a batch, in the batch's transaction.
    async fn debit_account_in(
        &self,
        tx: &mut Tx,
        (account, requests): &(AccountId, Vec<DebitRequest>),
        priced: &[Result<PricedDebit<'_>, Refusal>],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        let keys: Vec<&str> = requests.iter().map(|r| r.key.as_str()).collect();
        let mut locked = match lock_account_row(tx, account, &keys).await {
            Err(StoreError::Refused(missing)) => {
                // 422s (an unknown meter, a bad amount) come before 404.
                return Ok(priced
                    .iter()
                    .map(|p| Err(p.as_ref().err().unwrap_or(&missing).clone()))
                    .collect());
            }
            other => other?,
        };
        let mut out = Vec::with_capacity(priced.len());
        for p in priced {
            out.push(match p {
                Err(r) => Err(r.clone()),
                Ok(p) => match self.debit_in(tx, &mut locked, p).await {
                    Ok(m) => Ok(m),
                    Err(StoreError::Refused(r)) => Err(r),
                    Err(e) => return Err(e),
                },
            });
        }
        Ok(out)
    }

    fn price_debit<'r>(&self, req: &'r DebitRequest) -> Result<PricedDebit<'r>, Refusal> {
        if req.job_ref.as_deref().is_some_and(|r| r.contains('\0')) {
            return Err(Refusal::InvalidRequest(
                "job_ref: must not contain NUL characters".into(),
            ));
        }
        let amount = self
            .price(&req.usage)
            .and_then(|a| check_request_amount(a).map(|()| a))
            .map_err(|e| match e {
                StoreError::Refused(r) => r,
                other => Refusal::InvalidRequest(other.to_string()),
            })?;
        let hash = request_hash(&json!({
            "op": "debit", "usage": usage_json(&req.usage), "job_ref": req.job_ref
        }));
        Ok(PricedDebit { req, amount, hash })
    }

    async fn debit_in(
        &self,
        tx: &mut Tx,
        locked: &mut Locked,
        p: &PricedDebit<'_>,
    ) -> Result<MoneyResult, StoreError> {
        let key = &p.req.key;
        let use_of_key = (key, "debit", p.hash.as_str());
        if let Some(replay) = self.known_replay(tx, locked, use_of_key).await? {
            return Ok(replay);
        }
        let buffer = locked.snap.buffer(self.card());
        if let Err(refusal) = decide::check_debit(&locked.snap, p.amount, buffer) {
            // The key may still name an earlier debit (PostgreSQL reads keys on demand):
            // a replay is answered as such whatever the balance is now.
            locked.check_key(tx, key.as_str()).await?;
            return match self.known_replay(tx, locked, use_of_key).await? {
                Some(replay) => Ok(replay),
                None => Err(refusal.into()),
            };
        }
        let change = MoneyChange {
            delta: -p.amount.0,
            kind: "debit",
            reference: p.req.job_ref.clone(),
            credited: 0,
            spent: p.amount.0,
            credit: false,
        };
        // The write is one statement: it either wrote this debit whole or nothing. A
        // refusal from it (a result out of range) aborts the whole batch all the same,
        // never only this debit; the batcher then answers its debits one by one.
        let written = write_money(tx, locked, buffer.0, change, (key, &p.hash))
            .await
            .map_err(|e| match e {
                StoreError::Refused(r) => StoreError::BatchAborted(r),
                other => other,
            })?;
        self.answer(tx, locked, use_of_key, written).await
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
        check_request_amount(amount)?;
        let hash = request_hash(
            &json!({ "op": "refund", "amount_micros": amount.0, "top_up": top_up_key.as_str() }),
        );
        in_write_tx!(self, |tx| async {
            let mut locked =
                lock_account(tx, account, &[top_up_key.as_str(), key.as_str()]).await?;
            let top_up_entry = match locked.record(top_up_key.as_str()) {
                Some(r) if r.operation == "top_up" => r
                    .entry_id
                    .ok_or_else(|| StoreError::Corrupt("top-up without entry".into()))?,
                Some(r) if r.operation == "bonus" => {
                    // Still the idempotency check first: a replay of this refund is a replay.
                    locked.replay(key.as_str(), "refund", &hash)?;
                    return Err(Refusal::NotRefundable.into());
                }
                _ => return Err(Refusal::TopUpNotFound.into()),
            };
            let use_of_key = (key, "refund", hash.as_str());
            if let Some(replay) = self.known_replay(tx, &mut locked, use_of_key).await? {
                return Ok(replay);
            }
            let credited = read_entry(tx, top_up_entry).await?.delta;
            let refunded = tx
                .fetch_one(
                    Sql::both(
                        "SELECT COALESCE(CAST(SUM(-delta) AS BIGINT), 0) AS refunded FROM ledger \
                         WHERE account_id = $1 AND kind = 'refund' AND ref = $2",
                    ),
                    args![account.as_str(), top_up_entry.to_string()],
                )
                .await?
                .int("refunded")?;
            if amount.0 > credited - refunded {
                return Err(Refusal::RefundExceedsTopUp.into());
            }
            let buffer = locked.snap.buffer(self.card()).0;
            let written = write_money(
                tx,
                &mut locked,
                buffer,
                MoneyChange {
                    delta: -amount.0,
                    kind: "refund",
                    reference: Some(top_up_entry.to_string()),
                    credited: 0,
                    spent: 0,
                    credit: false,
                },
                (key, &hash),
            )
            .await?;
            self.answer(tx, &mut locked, use_of_key, written).await
        })
    }

    /// Answers a money write: its entry and the account as it is now — or, when the key
    /// turned out to be taken already (nothing was written), the key's earlier use.
    async fn answer(
        &self,
        tx: &mut Tx,
        locked: &mut Locked,
        use_of_key: UseOfKey<'_>,
        written: Option<LedgerEntry>,
    ) -> Result<MoneyResult, StoreError> {
        if let Some(entry) = written {
            return Ok(MoneyResult {
                entry,
                account: locked.view(self.card())?,
                replay: false,
            });
        }
        locked.look_up(tx, &[use_of_key.0.as_str()]).await?;
        self.known_replay(tx, locked, use_of_key)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a taken key without its record".into()))
    }

    /// The answer to an earlier use of the key, if the account knows one: the original
    /// entry with the account as it is now for the same request, `idempotency_mismatch`
    /// for another.
    async fn known_replay(
        &self,
        tx: &mut Tx,
        locked: &mut Locked,
        (key, op, hash): UseOfKey<'_>,
    ) -> Result<Option<MoneyResult>, StoreError> {
        let Some(record) = locked.replay(key.as_str(), op, hash)? else {
            return Ok(None);
        };
        let entry_id = record
            .entry_id
            .ok_or_else(|| StoreError::Corrupt("money idempotency record without entry".into()))?;
        if locked.open_jobs.is_none() {
            locked.look_up(tx, &[]).await?;
        }
        Ok(Some(MoneyResult {
            entry: read_entry(tx, entry_id).await?,
            account: locked.view(self.card())?,
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
            let rows = tx
                .fetch_all(
                    Sql::both(
                        "SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at \
                         FROM ledger WHERE account_id = $1 AND entry_id > $2 ORDER BY entry_id LIMIT $3",
                    ),
                    args![account.as_str(), after.unwrap_or(0), limit],
                )
                .await?;
            let items = rows.iter().map(entry_from).collect::<Result<Vec<_>, _>>()?;
            let next = items.last().map(|e| e.entry_id).or(after);
            Ok(Page { items, next })
        })
    }
}

fn usage_json(usage: &Usage) -> serde_json::Value {
    match usage {
        Usage::Amount(m) => json!({ "amount_micros": m.0 }),
        Usage::Metered { meter, seconds } => json!({ "meter": meter, "seconds": seconds }),
    }
}

fn check_request_amount(amount: Micros) -> Result<(), StoreError> {
    if amount.0 <= 0 {
        return Err(Refusal::InvalidRequest("amount: must be greater than zero".into()).into());
    }
    if amount > holdfast_core::MAX_REQUEST_AMOUNT {
        return Err(Refusal::AmountOutOfRange.into());
    }
    Ok(())
}
