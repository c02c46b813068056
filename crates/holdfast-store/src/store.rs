//! The store: every operation as one unit of work — lock the account, read a snapshot,
//! let the core decide, write balance + ledger + outbox, commit. This module and its
//! siblings are the only code that writes balances.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use holdfast_core::decide::{
    self, AccountSnapshot, AllowancePocket, Refill, Suspension, Timestamp,
};
use holdfast_core::{AccountId, MONEY, RateCard, Refusal};
use sha2::{Digest, Sha256};

use crate::args;
use crate::db::{Dialect, Pool, PoolOptions, Row, Sql, Tx};
use crate::error::StoreError;
use crate::model::{AccountView, AllowanceView, LedgerEntry};

/// How many times a transaction is tried when it meets a deadlock, a serialization
/// failure or a busy database.
pub const MAX_ATTEMPTS: u32 = 8;

/// Runs `$body` (an expression using `$tx: &mut Tx`) in a write transaction, commits on
/// `Ok`, rolls back on `Err`, and retries the whole transaction on contention.
#[macro_export]
macro_rules! in_write_tx {
    ($store:expr, |$tx:ident| $body:expr) => {{
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let mut tx = match $store.pool().begin_write().await {
                Ok(tx) => tx,
                Err(e) if e.is_retryable() && attempt < $crate::store::MAX_ATTEMPTS => {
                    $crate::store::backoff(attempt).await;
                    continue;
                }
                Err(e) if e.is_retryable() => {
                    break Err($crate::error::StoreError::Contention(attempt));
                }
                Err(e) => break Err(e),
            };
            let result: Result<_, $crate::error::StoreError> = {
                let $tx: &mut $crate::db::Tx = &mut tx;
                $body.await
            };
            match result {
                Ok(value) => match tx.commit().await {
                    Ok(()) => break Ok(value),
                    Err(e) if e.is_retryable() && attempt < $crate::store::MAX_ATTEMPTS => {
                        $crate::store::backoff(attempt).await;
                    }
                    Err(e) => break Err(e),
                },
                Err(e) => {
                    let _ = tx.rollback().await;
                    if e.is_retryable() && attempt < $crate::store::MAX_ATTEMPTS {
                        $crate::store::backoff(attempt).await;
                    } else if e.is_retryable() {
                        break Err($crate::error::StoreError::Contention(attempt));
                    } else {
                        break Err(e);
                    }
                }
            }
        }
    }};
}

/// Runs `$body` in a read transaction (one snapshot).
#[macro_export]
macro_rules! in_read_tx {
    ($store:expr, |$tx:ident| $body:expr) => {{
        let mut tx = $store.pool().begin_read().await?;
        let result: Result<_, $crate::error::StoreError> = {
            let $tx: &mut $crate::db::Tx = &mut tx;
            $body.await
        };
        let _ = tx.rollback().await;
        result
    }};
}

pub async fn backoff(attempt: u32) {
    let jitter = u64::from(rand::random::<u8>() % 8);
    tokio::time::sleep(Duration::from_millis(u64::from(attempt) * 3 + jitter)).await;
}

/// The store over one database with one rate card.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    card: Arc<RateCard>,
}

const ACCOUNT_COLUMNS_AND_CLOCK_PG: &str = "SELECT account_id, plan, plan_until, max_concurrent_jobs, balance, held, \
     total_credited, total_spent, suspended_at, blocked_at, created_at, last_active_at, \
     (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now FROM accounts WHERE account_id = $1";

/// Reads an account with the database clock; on PostgreSQL `FOR UPDATE` locks the row (on
/// SQLite the transaction already holds the write lock).
const LOCK_ACCOUNT: Sql = Sql {
    postgres: "SELECT account_id, plan, plan_until, max_concurrent_jobs, balance, held, \
     total_credited, total_spent, suspended_at, blocked_at, created_at, last_active_at, \
     (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now FROM accounts WHERE account_id = $1 FOR UPDATE",
    sqlite: "SELECT account_id, plan, plan_until, max_concurrent_jobs, balance, held, \
     total_credited, total_spent, suspended_at, blocked_at, created_at, last_active_at, \
     CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now FROM accounts WHERE account_id = $1",
};

const READ_ACCOUNT: Sql = Sql {
    postgres: ACCOUNT_COLUMNS_AND_CLOCK_PG,
    sqlite: LOCK_ACCOUNT.sqlite,
};

/// The database clock alone.
pub const NOW: Sql = Sql {
    postgres: "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now",
    sqlite: "SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now",
};

/// Whether a name found in live data is in the rate card.
type NameCheck = Box<dyn Fn(&str) -> bool + Send>;

impl Store {
    /// Connects by URL, runs the backend's migrations, and checks that the rate card still
    /// covers the live data.
    pub async fn open(url: &str, card: RateCard, opts: &PoolOptions) -> Result<Store, StoreError> {
        let pool = Pool::connect(url, opts).await?;
        pool.migrate().await?;
        let store = Store {
            pool,
            card: Arc::new(card),
        };
        store.check_card_covers_data().await?;
        Ok(store)
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub fn card(&self) -> &RateCard {
        &self.card
    }

    pub fn dialect(&self) -> Dialect {
        self.pool.dialect()
    }

    /// The database clock.
    pub async fn now(&self) -> Result<Timestamp, StoreError> {
        in_read_tx!(self, |tx| async {
            tx.fetch_one(NOW, args![]).await?.int("now")
        })
    }

    /// A card that no longer covers live data (a plan, kind, pocket or lane in use) is
    /// refused, naming what is missing.
    async fn check_card_covers_data(&self) -> Result<(), StoreError> {
        let card = self.card.clone();
        in_read_tx!(self, |tx| async {
            let checks: [(Sql, &str, NameCheck); 4] = [
                (
                    Sql::both("SELECT DISTINCT plan AS name FROM accounts"),
                    "plan",
                    Box::new({
                        let c = card.clone();
                        move |n| c.plans.contains_key(n)
                    }),
                ),
                (
                    Sql::both("SELECT DISTINCT pocket AS name FROM allowances"),
                    "allowance pocket",
                    Box::new({
                        let c = card.clone();
                        move |n| c.allowances.contains_key(n)
                    }),
                ),
                (
                    Sql::both(
                        "SELECT DISTINCT kind AS name FROM jobs WHERE status IN ('queued', 'in_progress')",
                    ),
                    "kind",
                    Box::new({
                        let c = card.clone();
                        move |n| c.kinds.contains_key(n)
                    }),
                ),
                (
                    Sql::both(
                        "SELECT DISTINCT lane AS name FROM jobs WHERE status IN ('queued', 'in_progress')",
                    ),
                    "lane",
                    Box::new({
                        let c = card.clone();
                        move |n| c.is_lane(n)
                    }),
                ),
            ];
            for (sql, what, known) in checks {
                for row in tx.fetch_all(sql, args![]).await? {
                    let name = row.text("name")?;
                    if !known(&name) {
                        return Err(StoreError::Config(format!(
                            "the rate card no longer covers live data: {what} {name:?} is in use but not in the card"
                        )));
                    }
                }
            }
            Ok(())
        })
    }
}

// ---- the unit-of-work building blocks, used by every operation ----

pub(crate) fn snapshot_from(
    row: &Row,
    allowances: BTreeMap<String, AllowancePocket>,
) -> Result<AccountSnapshot, StoreError> {
    Ok(AccountSnapshot {
        plan: row.text("plan")?,
        plan_until: row.opt_int("plan_until")?,
        max_concurrent_jobs: row.opt_int("max_concurrent_jobs")?,
        balance: row.int("balance")?,
        held: row.int("held")?,
        total_credited: row.int("total_credited")?,
        total_spent: row.int("total_spent")?,
        suspended_at: row.opt_int("suspended_at")?,
        blocked_at: row.opt_int("blocked_at")?,
        created_at: row.int("created_at")?,
        last_active_at: row.opt_int("last_active_at")?,
        allowances,
        now: row.int("now")?,
    })
}

async fn read_allowances(
    tx: &mut Tx,
    account: &str,
) -> Result<BTreeMap<String, AllowancePocket>, StoreError> {
    let rows = tx
        .fetch_all(
            Sql::both(
                "SELECT pocket, remaining, held, cycle_started_at FROM allowances WHERE account_id = $1",
            ),
            args![account],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.text("pocket")?,
                AllowancePocket {
                    remaining: r.int("remaining")?,
                    held: r.int("held")?,
                    cycle_started_at: r.int("cycle_started_at")?,
                },
            ))
        })
        .collect()
}

/// Locks the account row (PostgreSQL `FOR UPDATE`; SQLite holds the write lock already)
/// and reads it with its allowance pockets and the database clock.
pub(crate) async fn lock_account(
    tx: &mut Tx,
    account: &AccountId,
) -> Result<AccountSnapshot, StoreError> {
    let row = tx
        .fetch_optional(LOCK_ACCOUNT, args![account.as_str()])
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let allowances = read_allowances(tx, account.as_str()).await?;
    snapshot_from(&row, allowances)
}

/// Reads the account without locking it.
pub(crate) async fn read_account(
    tx: &mut Tx,
    account: &AccountId,
) -> Result<AccountSnapshot, StoreError> {
    let row = tx
        .fetch_optional(READ_ACCOUNT, args![account.as_str()])
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let allowances = read_allowances(tx, account.as_str()).await?;
    snapshot_from(&row, allowances)
}

/// What a ledger entry records besides its pocket and delta.
pub(crate) struct EntryFacts<'a> {
    pub pocket: &'a str,
    pub delta: i64,
    pub kind: &'a str,
    pub amount_after: i64,
    pub available_after: Option<i64>,
    pub buffer: Option<i64>,
    pub reference: Option<String>,
}

pub(crate) async fn write_ledger(
    tx: &mut Tx,
    account: &str,
    now: Timestamp,
    f: EntryFacts<'_>,
) -> Result<LedgerEntry, StoreError> {
    let row = tx
        .fetch_one(
            Sql::both(
                "INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING entry_id",
            ),
            args![account, f.pocket, f.delta, f.kind, f.amount_after, f.available_after, f.buffer, f.reference.clone(), now],
        )
        .await?;
    Ok(LedgerEntry {
        entry_id: row.int("entry_id")?,
        account_id: account.to_owned(),
        pocket: f.pocket.to_owned(),
        delta: f.delta,
        kind: f.kind.to_owned(),
        amount_after: f.amount_after,
        available_after: f.available_after,
        reference: f.reference,
        created_at: now,
    })
}

/// Appends an event to the outbox, in the caller's transaction.
pub(crate) async fn emit(
    tx: &mut Tx,
    event_type: &str,
    account: &str,
    job: Option<&str>,
    data: serde_json::Value,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.execute(
        Sql::both("INSERT INTO events (type, account_id, job_id, data, created_at) VALUES ($1, $2, $3, $4, $5)"),
        args![event_type, account, job, data.to_string(), now],
    )
    .await?;
    Ok(())
}

/// Writes due refills (pocket, cycle, `refill` ledger entries) and applies them to `snap`.
pub(crate) async fn apply_refills(
    tx: &mut Tx,
    account: &AccountId,
    snap: &mut AccountSnapshot,
    refills: &[Refill],
) -> Result<(), StoreError> {
    for r in refills {
        tx.execute(
            Sql::both(
                "UPDATE allowances SET remaining = $3, cycle_started_at = $4 WHERE account_id = $1 AND pocket = $2",
            ),
            args![account.as_str(), r.pocket.as_str(), r.quota, snap.now],
        )
        .await?;
        if r.delta != 0 {
            let held = snap.allowances.get(&r.pocket).map_or(0, |p| p.held);
            write_ledger(
                tx,
                account.as_str(),
                snap.now,
                EntryFacts {
                    pocket: &r.pocket,
                    delta: r.delta,
                    kind: "refill",
                    amount_after: r.quota,
                    available_after: Some(r.quota - held),
                    buffer: None,
                    reference: None,
                },
            )
            .await?;
        }
    }
    snap.apply_refills(refills);
    Ok(())
}

/// A change of the money pocket: the one place balances are written.
pub(crate) struct MoneyChange<'a> {
    pub delta: i64,
    pub kind: &'a str,
    pub reference: Option<String>,
    pub credited: i64,
    pub spent: i64,
    pub credit: bool,
}

/// Writes a money change (balance, counters, ledger entry) and the suspension it causes
/// (column and event), updating `snap`. Returns the ledger entry.
pub(crate) async fn write_money(
    tx: &mut Tx,
    account: &AccountId,
    snap: &mut AccountSnapshot,
    buffer: i64,
    c: MoneyChange<'_>,
) -> Result<LedgerEntry, StoreError> {
    let overflow = || StoreError::Refused(Refusal::AmountOutOfRange);
    let balance = snap.balance.checked_add(c.delta).ok_or_else(overflow)?;
    if balance.abs() > holdfast_core::MAX_BALANCE.0 {
        return Err(overflow());
    }
    let credited = snap
        .total_credited
        .checked_add(c.credited)
        .ok_or_else(overflow)?;
    let spent = snap.total_spent.checked_add(c.spent).ok_or_else(overflow)?;
    let suspension = decide::suspension_after(snap.suspended_at, balance, c.credit);
    let suspended_at = match suspension {
        Suspension::Suspend => Some(snap.now),
        Suspension::Unsuspend => None,
        Suspension::Unchanged => snap.suspended_at,
    };
    let changed = tx
        .execute(
            Sql::both(
                "UPDATE accounts SET balance = balance + $2, total_credited = total_credited + $3, \
                 total_spent = total_spent + $4, suspended_at = $5 WHERE account_id = $1",
            ),
            args![account.as_str(), c.delta, c.credited, c.spent, suspended_at],
        )
        .await?;
    debug_assert_eq!(changed, 1);
    snap.balance = balance;
    snap.total_credited = credited;
    snap.total_spent = spent;
    snap.suspended_at = suspended_at;
    let entry = write_ledger(
        tx,
        account.as_str(),
        snap.now,
        EntryFacts {
            pocket: MONEY,
            delta: c.delta,
            kind: c.kind,
            amount_after: balance,
            available_after: Some(balance - snap.held),
            buffer: Some(buffer),
            reference: c.reference,
        },
    )
    .await?;
    let data = serde_json::json!({
        "balance": holdfast_core::Micros(balance).format(),
        "balance_micros": balance,
        "entry_id": entry.entry_id,
    });
    match suspension {
        Suspension::Suspend => {
            emit(
                tx,
                "account.suspended",
                account.as_str(),
                None,
                data,
                snap.now,
            )
            .await?
        }
        Suspension::Unsuspend => {
            emit(
                tx,
                "account.unsuspended",
                account.as_str(),
                None,
                data,
                snap.now,
            )
            .await?
        }
        Suspension::Unchanged => {}
    }
    Ok(entry)
}

/// A stored idempotency record.
pub(crate) struct IdemRecord {
    pub operation: String,
    pub request_hash: String,
    pub entry_id: Option<i64>,
    pub job_id: Option<String>,
}

pub(crate) async fn find_idempotency(
    tx: &mut Tx,
    account: &str,
    key: &str,
) -> Result<Option<IdemRecord>, StoreError> {
    let row = tx
        .fetch_optional(
            Sql::both(
                "SELECT operation, request_hash, entry_id, job_id FROM idempotency WHERE account_id = $1 AND key = $2",
            ),
            args![account, key],
        )
        .await?;
    row.map(|r| {
        Ok(IdemRecord {
            operation: r.text("operation")?,
            request_hash: r.text("request_hash")?,
            entry_id: r.opt_int("entry_id")?,
            job_id: r.opt_text("job_id")?,
        })
    })
    .transpose()
}

/// Looks a key up for `operation` with the request's hash: `Some(record)` for a replay,
/// `None` for a new key, `IdempotencyMismatch` for a different request.
pub(crate) async fn check_idempotency(
    tx: &mut Tx,
    account: &str,
    key: &str,
    operation: &str,
    hash: &str,
) -> Result<Option<IdemRecord>, StoreError> {
    match find_idempotency(tx, account, key).await? {
        Some(r) if r.operation == operation && r.request_hash == hash => Ok(Some(r)),
        Some(_) => Err(Refusal::IdempotencyMismatch.into()),
        None => Ok(None),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn record_idempotency(
    tx: &mut Tx,
    account: &str,
    key: &str,
    operation: &str,
    hash: &str,
    entry_id: Option<i64>,
    job_id: Option<&str>,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.execute(
        Sql::both(
            "INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        ),
        args![account, key, operation, hash, entry_id, job_id, now],
    )
    .await?;
    Ok(())
}

/// The hash of a normalised request: canonical JSON (sorted keys, amounts in micros).
pub fn request_hash(request: &serde_json::Value) -> String {
    // serde_json's Map is ordered by key (no preserve_order feature), so this is canonical.
    hex::encode(Sha256::digest(request.to_string().as_bytes()))
}

pub(crate) fn entry_from(row: &Row) -> Result<LedgerEntry, StoreError> {
    Ok(LedgerEntry {
        entry_id: row.int("entry_id")?,
        account_id: row.text("account_id")?,
        pocket: row.text("pocket")?,
        delta: row.int("delta")?,
        kind: row.text("kind")?,
        amount_after: row.int("amount_after")?,
        available_after: row.opt_int("available_after")?,
        reference: row.opt_text("ref")?,
        created_at: row.int("created_at")?,
    })
}

pub(crate) async fn read_entry(tx: &mut Tx, entry_id: i64) -> Result<LedgerEntry, StoreError> {
    let row = tx
        .fetch_one(
            Sql::both(
                "SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at \
                 FROM ledger WHERE entry_id = $1",
            ),
            args![entry_id],
        )
        .await?;
    entry_from(&row)
}

pub(crate) async fn count_open_jobs(tx: &mut Tx, account: &str) -> Result<i64, StoreError> {
    tx.fetch_one(
        Sql::both(
            "SELECT COUNT(*) AS n FROM jobs WHERE account_id = $1 AND status IN ('queued', 'in_progress')",
        ),
        args![account],
    )
    .await?
    .int("n")
}

/// The account as a client sees it now: allowances whose window passed show the refill.
pub(crate) async fn view_of(
    tx: &mut Tx,
    card: &RateCard,
    account: &AccountId,
    snap: &AccountSnapshot,
) -> Result<AccountView, StoreError> {
    let mut effective = snap.clone();
    let refills = effective.due_refills(card);
    effective.apply_refills(&refills);
    let (plan_name, plan) = effective.effective_plan(card);
    let allowances = effective
        .allowances
        .iter()
        .map(|(pocket, p)| {
            (
                pocket.clone(),
                AllowanceView {
                    remaining: p.remaining,
                    held: p.held,
                    quota: plan.allowances.get(pocket).copied().unwrap_or(0),
                    cycle_started_at: p.cycle_started_at,
                    refills_at: effective.refills_at(card, pocket),
                },
            )
        })
        .collect();
    Ok(AccountView {
        account_id: account.to_string(),
        plan: snap.plan.clone(),
        plan_until: snap.plan_until,
        effective_plan: plan_name.to_owned(),
        balance: snap.balance,
        held: snap.held,
        available: snap.balance - snap.held,
        buffer: plan.buffer.0,
        total_credited: snap.total_credited,
        total_spent: snap.total_spent,
        suspended_at: snap.suspended_at,
        blocked_at: snap.blocked_at,
        max_concurrent_jobs: effective.concurrency_limit(card),
        max_concurrent_jobs_override: snap.max_concurrent_jobs,
        open_jobs: count_open_jobs(tx, account.as_str()).await?,
        created_at: snap.created_at,
        last_active_at: snap.last_active_at,
        allowances,
    })
}
