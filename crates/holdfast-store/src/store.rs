//! The store: every operation as one unit of work — lock the account, read a snapshot,
//! let the core decide, write balance + ledger + outbox, commit. This module and its
//! siblings are the only code that writes balances.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use holdfast_core::decide::{
    self, AccountSnapshot, AllowancePocket, Refill, Suspension, Timestamp,
};
use holdfast_core::{AccountId, IdempotencyKey, MONEY, RateCard, Refusal};
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

/// The database clock, integer microseconds since the Unix epoch: the one time source of
/// every statement.
macro_rules! clock {
    (postgres) => {
        "(extract(epoch from clock_timestamp()) * 1000000)::bigint"
    };
    (sqlite) => {
        "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"
    };
}
pub(crate) use clock;

/// The account's columns and the database clock.
macro_rules! account_columns {
    ($dialect:ident) => {
        concat!(
            "account_id, plan, plan_until, max_concurrent_jobs, balance, held, total_credited, total_spent, \
             suspended_at, blocked_at, created_at, last_active_at, ",
            clock!($dialect),
            " AS now"
        )
    };
}

/// The account's allowance pockets, as one column. `$account` is the placeholder of the
/// account id.
macro_rules! pockets_json {
    (postgres, $account:literal) => {
        concat!(
            "(SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text \
              FROM allowances WHERE account_id = ", $account, ")"
        )
    };
    (sqlite, $account:literal) => {
        concat!(
            "(SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at)) \
              FROM allowances WHERE account_id = ", $account, ")"
        )
    };
}
pub(crate) use pockets_json;

/// The same as a column.
macro_rules! pockets_column {
    ($dialect:ident, $account:literal) => {
        concat!(
            $crate::store::pockets_json!($dialect, $account),
            " AS allowances"
        )
    };
}
pub(crate) use pockets_column;

/// What a unit of work reads besides the account row, as two columns: its allowance
/// pockets and its open jobs.
macro_rules! rest_columns {
    ($dialect:ident, $account:literal) => {
        concat!(
            pockets_column!($dialect, $account),
            ", (SELECT COUNT(*) FROM jobs WHERE account_id = ",
            $account,
            " AND status IN ('queued', 'in_progress')) AS open_jobs"
        )
    };
}

/// The idempotency records of the keys an operation names, as one column; `$keys` is
/// the condition on `key` that names them.
macro_rules! keys_column {
    (postgres, $account:literal, $keys:literal) => {
        concat!(
            "(SELECT COALESCE(json_agg(json_build_array(key, operation, request_hash, entry_id, job_id)), '[]')::text \
              FROM idempotency WHERE account_id = ", $account, " AND key ", $keys, ") AS keys"
        )
    };
    (sqlite, $account:literal, $keys:literal) => {
        concat!(
            "(SELECT json_group_array(json_array(key, operation, request_hash, entry_id, job_id)) \
              FROM idempotency WHERE account_id = ", $account, " AND key ", $keys, ") AS keys"
        )
    };
}

/// Locks the account row and reads it with the database clock. On PostgreSQL `FOR
/// UPDATE` takes the lock and the rest is read by [`READ_REST`] after it; on SQLite the
/// write transaction holds the database lock from `BEGIN IMMEDIATE`, so one statement
/// reads it all.
const LOCK_ACCOUNT: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        account_columns!(postgres),
        " FROM accounts WHERE account_id = $1 FOR UPDATE"
    ),
    sqlite: concat!(
        "SELECT ",
        account_columns!(sqlite),
        ", ",
        rest_columns!(sqlite, "$1"),
        ", ",
        keys_column!(sqlite, "$1", "IN (SELECT value FROM json_each($2))"),
        " FROM accounts WHERE account_id = $1"
    ),
};

/// The account locked and its rest read in ONE statement, for an operation that
/// validates what it read in its write ([`Seen`]). On PostgreSQL the rest comes from the
/// snapshot the statement took before any wait for the lock, so it may be stale; on
/// SQLite it cannot be.
const LOCK_ACCOUNT_SEEN: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        account_columns!(postgres),
        ", ",
        rest_columns!(postgres, "$1"),
        " FROM accounts WHERE account_id = $1 FOR UPDATE"
    ),
    sqlite: LOCK_ACCOUNT.sqlite,
};

/// The same, finding the account by one of its jobs (`$1`; a job's account never changes).
pub(crate) const LOCK_ACCOUNT_OF_JOB: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        account_columns!(postgres),
        " FROM accounts WHERE account_id = (SELECT account_id FROM jobs WHERE job_id = $1) FOR UPDATE"
    ),
    sqlite: concat!(
        "SELECT ",
        account_columns!(sqlite),
        ", ",
        pockets_column!(sqlite, "accounts.account_id"),
        " FROM accounts WHERE account_id = (SELECT account_id FROM jobs WHERE job_id = $1)"
    ),
};

/// A job and its account, both locked, in one statement: `FOR UPDATE OF a, j` locks the
/// account row first, then the job (the lock order everywhere), and re-reads both if it
/// had to wait for either, so both are fresh. The pockets are read with them on SQLite
/// only; see [`lock_account_and_job`].
macro_rules! account_and_job_columns {
    ($dialect:ident) => {
        concat!(
            "SELECT j.*, a.plan, a.plan_until, a.max_concurrent_jobs, a.balance, a.held, a.total_credited, \
             a.total_spent, a.suspended_at, a.blocked_at, a.created_at AS account_created_at, a.last_active_at, ",
            clock!($dialect),
            " AS now"
        )
    };
}

const LOCK_ACCOUNT_AND_JOB: Sql = Sql {
    postgres: concat!(
        account_and_job_columns!(postgres),
        " FROM accounts a JOIN jobs j ON j.account_id = a.account_id WHERE j.job_id = $1 FOR UPDATE OF a, j"
    ),
    sqlite: concat!(
        account_and_job_columns!(sqlite),
        ", ",
        pockets_column!(sqlite, "a.account_id"),
        " FROM accounts a JOIN jobs j ON j.account_id = a.account_id WHERE j.job_id = $1"
    ),
};

/// The rest with the records of at most two keys (`$2`, `$3`; `NULL` names none): on
/// PostgreSQL read by a statement of its own AFTER the lock: under READ
/// COMMITTED each statement takes a new snapshot, so it sees what another transaction
/// committed while this one waited for the lock. (A subquery of the locking statement
/// itself would read the snapshot from before the wait: a stale pocket, a missed key.)
const READ_REST: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        rest_columns!(postgres, "$1"),
        ", ",
        keys_column!(postgres, "$1", "IN ($2, $3)")
    ),
    sqlite: concat!(
        "SELECT ",
        rest_columns!(sqlite, "$1"),
        ", ",
        keys_column!(sqlite, "$1", "IN ($2, $3)")
    ),
};

/// An account and its rest in one statement, for read transactions (one snapshot).
const READ_ACCOUNT: Sql = Sql {
    postgres: concat!(
        "SELECT ",
        account_columns!(postgres),
        ", ",
        rest_columns!(postgres, "$1"),
        " FROM accounts WHERE account_id = $1"
    ),
    sqlite: concat!(
        "SELECT ",
        account_columns!(sqlite),
        ", ",
        rest_columns!(sqlite, "$1"),
        " FROM accounts WHERE account_id = $1"
    ),
};

/// The database clock alone.
pub const NOW: Sql = Sql {
    postgres: concat!("SELECT ", clock!(postgres), " AS now"),
    sqlite: concat!("SELECT ", clock!(sqlite), " AS now"),
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
    // Read with its job ([`LOCK_ACCOUNT_AND_JOB`]) the account's creation has its own name.
    let created_at = if row.has("account_created_at") {
        "account_created_at"
    } else {
        "created_at"
    };
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
        created_at: row.int(created_at)?,
        last_active_at: row.opt_int("last_active_at")?,
        allowances,
        now: row.int("now")?,
    })
}

/// A stored idempotency record.
#[derive(Debug, Clone)]
pub(crate) struct IdemRecord {
    pub operation: String,
    pub request_hash: String,
    pub entry_id: Option<i64>,
    pub job_id: Option<String>,
}

/// An idempotency record as [`keys_column`] lists it: key, operation, hash, entry, job.
type KeyRow = (String, String, String, Option<i64>, Option<String>);

/// What [`pockets_column`], [`rest_columns`] and [`keys_column`] hold, parsed: the
/// open jobs and the keys where the row has them.
pub(crate) struct Rest {
    allowances: BTreeMap<String, AllowancePocket>,
    open_jobs: Option<i64>,
    keys: HashMap<String, IdemRecord>,
}

fn json_column<T: serde::de::DeserializeOwned>(row: &Row, col: &str) -> Result<T, StoreError> {
    serde_json::from_str(&row.text(col)?).map_err(|e| StoreError::Corrupt(format!("{col}: {e}")))
}

pub(crate) fn rest_from(row: &Row) -> Result<Rest, StoreError> {
    let pockets: Vec<(String, i64, i64, i64)> = json_column(row, "allowances")?;
    let keys: Vec<KeyRow> = if row.has("keys") {
        json_column(row, "keys")?
    } else {
        Vec::new()
    };
    let open_jobs = if row.has("open_jobs") {
        Some(row.int("open_jobs")?)
    } else {
        None
    };
    Ok(Rest {
        allowances: pockets
            .into_iter()
            .map(|(pocket, remaining, held, cycle_started_at)| {
                let p = AllowancePocket {
                    remaining,
                    held,
                    cycle_started_at,
                };
                (pocket, p)
            })
            .collect(),
        open_jobs,
        keys: keys
            .into_iter()
            .map(|(key, operation, request_hash, entry_id, job_id)| {
                let r = IdemRecord {
                    operation,
                    request_hash,
                    entry_id,
                    job_id,
                };
                (key, r)
            })
            .collect(),
    })
}

/// The keys an operation looks up, as the JSON array [`LOCK_ACCOUNT`] takes on SQLite.
pub(crate) fn keys_json(keys: &[&str]) -> String {
    serde_json::Value::from(keys).to_string()
}

/// An account as a unit of work holds it: the snapshot read under the lock, its open
/// jobs (their count only changes under this lock), and the idempotency records of the
/// keys the operation named, kept up to date in memory as the operation records keys.
/// The pockets and the open jobs are `None`/empty until read: a debit does not need them
/// to decide, and on PostgreSQL its write statement reads them.
pub(crate) struct Locked {
    pub account: AccountId,
    pub snap: AccountSnapshot,
    pub open_jobs: Option<i64>,
    keys: HashMap<String, IdemRecord>,
    /// The keys whose records were read (a key read and not in `keys` is free).
    checked: HashSet<String>,
    /// What was read with the lock but may predate it (PostgreSQL, [`lock_account_seen`]):
    /// a write that decides on it must check it is still so, or it must be confirmed.
    pub seen: Option<Seen>,
}

/// The rest of an account as read with its lock, to be checked by the write that
/// decided on it: the open jobs and the pockets exactly as the statement wrote them.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub open_jobs: i64,
    pub pockets: String,
}

impl Locked {
    fn new(account: &AccountId, row: &Row, rest: Option<Rest>) -> Result<Locked, StoreError> {
        let mut locked = Locked {
            account: account.clone(),
            snap: snapshot_from(row, BTreeMap::new())?,
            open_jobs: None,
            keys: HashMap::new(),
            checked: HashSet::new(),
            seen: None,
        };
        if let Some(rest) = rest {
            locked.fill(rest);
        }
        Ok(locked)
    }

    fn fill(&mut self, rest: Rest) {
        self.snap.allowances = rest.allowances;
        self.open_jobs = rest.open_jobs.or(self.open_jobs);
        self.keys.extend(rest.keys);
    }

    /// Reads the rest of the account (again) with the records of `keys` (at most two).
    pub async fn look_up(&mut self, tx: &mut Tx, keys: &[&str]) -> Result<(), StoreError> {
        let (first, second) = match keys {
            [] => (None, None),
            [a] => (Some(*a), None),
            [a, b] => (Some(*a), Some(*b)),
            _ => return Err(StoreError::Corrupt("more than two keys looked up".into())),
        };
        let row = tx
            .fetch_one(READ_REST, args![self.account.as_str(), first, second])
            .await?;
        self.checked.extend(keys.iter().map(|k| k.to_string()));
        self.fill(rest_from(&row)?);
        Ok(())
    }

    /// Reads the rest again, after the lock, so that it is current.
    pub async fn confirm(&mut self, tx: &mut Tx) -> Result<(), StoreError> {
        self.look_up(tx, &[]).await?;
        self.seen = None;
        Ok(())
    }

    /// Reads the record of `key` unless it was read already.
    pub async fn check_key(&mut self, tx: &mut Tx, key: &str) -> Result<(), StoreError> {
        if self.checked.contains(key) {
            return Ok(());
        }
        self.look_up(tx, &[key]).await
    }

    /// The open jobs, which must have been read.
    pub fn open_jobs(&self) -> Result<i64, StoreError> {
        self.open_jobs
            .ok_or_else(|| StoreError::Corrupt("the open jobs were not read".into()))
    }

    /// The record of `key`, whatever operation wrote it (it must have been named when
    /// the account was locked).
    pub fn record(&self, key: &str) -> Option<&IdemRecord> {
        self.keys.get(key)
    }

    /// `Some(record)` for a replay of `operation` with this request hash, `None` for a
    /// new key, `IdempotencyMismatch` for a different request under the same key.
    pub fn replay(
        &self,
        key: &str,
        operation: &str,
        hash: &str,
    ) -> Result<Option<&IdemRecord>, Refusal> {
        match self.keys.get(key) {
            Some(r) if r.operation == operation && r.request_hash == hash => Ok(Some(r)),
            Some(_) => Err(Refusal::IdempotencyMismatch),
            None => Ok(None),
        }
    }

    fn remember(&mut self, key: &str, record: IdemRecord) {
        self.keys.insert(key.to_owned(), record);
    }

    /// The account as a client sees it now: allowances whose window passed show the refill.
    pub fn view(&self, card: &RateCard) -> Result<AccountView, StoreError> {
        let snap = &self.snap;
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
            account_id: self.account.to_string(),
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
            open_jobs: self.open_jobs()?,
            created_at: snap.created_at,
            last_active_at: snap.last_active_at,
            allowances,
        })
    }
}

/// Locks the account row and reads it with its pockets, its open jobs, the records of
/// `keys` and the database clock: two statements on PostgreSQL, one on SQLite (see
/// [`LOCK_ACCOUNT`]).
pub(crate) async fn lock_account(
    tx: &mut Tx,
    account: &AccountId,
    keys: &[&str],
) -> Result<Locked, StoreError> {
    let mut locked = lock_account_row(tx, account, keys).await?;
    if locked.open_jobs.is_none() {
        locked.look_up(tx, keys).await?;
    }
    Ok(locked)
}

/// Locks the account row and reads it with its pockets and open jobs in one statement;
/// on PostgreSQL what it read is marked [`Locked::seen`], to be validated by the write or
/// confirmed ([`Locked::confirm`]) before a decision stands on it.
pub(crate) async fn lock_account_seen(
    tx: &mut Tx,
    account: &AccountId,
) -> Result<Locked, StoreError> {
    let row = tx
        .fetch_optional(LOCK_ACCOUNT_SEEN, args![account.as_str(), "[]"])
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let mut locked = Locked::new(account, &row, Some(rest_from(&row)?))?;
    if tx.dialect() == Dialect::Postgres {
        locked.seen = Some(Seen {
            open_jobs: locked.open_jobs()?,
            pockets: row.text("allowances")?,
        });
    }
    Ok(locked)
}

/// Locks the account row and reads it with the database clock; on SQLite the same
/// statement reads the rest and the records of `keys`, on PostgreSQL they are not read.
pub(crate) async fn lock_account_row(
    tx: &mut Tx,
    account: &AccountId,
    keys: &[&str],
) -> Result<Locked, StoreError> {
    let row = tx
        .fetch_optional(LOCK_ACCOUNT, args![account.as_str(), keys_json(keys)])
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let mut locked = match tx.dialect() {
        Dialect::Sqlite => Locked::new(account, &row, Some(rest_from(&row)?))?,
        Dialect::Postgres => return Locked::new(account, &row, None),
    };
    locked.checked.extend(keys.iter().map(|k| k.to_string()));
    Ok(locked)
}

/// Reads the account without locking it (in a read transaction: one snapshot).
pub(crate) async fn read_account(tx: &mut Tx, account: &AccountId) -> Result<Locked, StoreError> {
    let row = tx
        .fetch_optional(READ_ACCOUNT, args![account.as_str()])
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let rest = rest_from(&row)?;
    Locked::new(account, &row, Some(rest))
}

/// Locks the account of a job, then fetches the job row by `lock_job`, which is given
/// the job id (`$1`) and the account id (`$2`). The pockets are read with the account on
/// SQLite, and by `lock_job` on PostgreSQL (its `pockets_column`, after the account lock);
/// the open jobs are not read (finishing a job does not need them). Without a job row
/// (`lock_job` skipped a locked one) the account is not to be used.
pub(crate) async fn lock_account_of_job(
    tx: &mut Tx,
    job: &str,
    lock_job: Sql,
) -> Result<(Locked, Option<Row>), StoreError> {
    let row = tx
        .fetch_optional(LOCK_ACCOUNT_OF_JOB, args![job])
        .await?
        .ok_or(Refusal::JobNotFound)?;
    let account = account_id_of(&row)?;
    let job_row = tx
        .fetch_optional(lock_job, args![job, account.as_str()])
        .await?;
    let rest = match (tx.dialect(), &job_row) {
        (Dialect::Sqlite, _) => Some(rest_from(&row)?),
        (Dialect::Postgres, Some(j)) => Some(rest_from(j)?),
        (Dialect::Postgres, None) => None,
    };
    Ok((Locked::new(&account, &row, rest)?, job_row))
}

fn account_id_of(row: &Row) -> Result<AccountId, StoreError> {
    AccountId::parse(&row.text("account_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Locks a job and its account ([`LOCK_ACCOUNT_AND_JOB`]). `read` takes the job from
/// the row and says whether the pockets are needed: they are read then (on PostgreSQL by
/// a statement of their own, after the lock). The open jobs are not read (finishing a job
/// does not need them).
pub(crate) async fn lock_account_and_job<T>(
    tx: &mut Tx,
    job: &str,
    read: impl FnOnce(&Row) -> Result<(T, bool), StoreError>,
) -> Result<(Locked, T), StoreError> {
    let row = tx
        .fetch_optional(LOCK_ACCOUNT_AND_JOB, args![job])
        .await?
        .ok_or(Refusal::JobNotFound)?;
    let account = account_id_of(&row)?;
    let (job, needs_pockets) = read(&row)?;
    let mut locked = match tx.dialect() {
        Dialect::Sqlite => Locked::new(&account, &row, Some(rest_from(&row)?))?,
        Dialect::Postgres => Locked::new(&account, &row, None)?,
    };
    if tx.dialect() == Dialect::Postgres && needs_pockets {
        locked.look_up(tx, &[]).await?;
    }
    Ok((locked, job))
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

impl EntryFacts<'_> {
    pub fn entry(self, entry_id: i64, account: &str, now: Timestamp) -> LedgerEntry {
        LedgerEntry {
            entry_id,
            account_id: account.to_owned(),
            pocket: self.pocket.to_owned(),
            delta: self.delta,
            kind: self.kind.to_owned(),
            amount_after: self.amount_after,
            available_after: self.available_after,
            reference: self.reference,
            created_at: now,
        }
    }
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
    Ok(f.entry(row.int("entry_id")?, account, now))
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

/// A change of the money pocket.
pub(crate) struct MoneyChange<'a> {
    pub delta: i64,
    pub kind: &'a str,
    pub reference: Option<String>,
    pub credited: i64,
    pub spent: i64,
    pub credit: bool,
}

/// Applies a money change to the snapshot (balance, counters, suspension), refusing a
/// result out of range; returns what it does to suspension. Nothing is written.
pub(crate) fn change_money(
    snap: &mut AccountSnapshot,
    c: &MoneyChange<'_>,
) -> Result<Suspension, StoreError> {
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
    snap.suspended_at = match suspension {
        Suspension::Suspend => Some(snap.now),
        Suspension::Unsuspend => None,
        Suspension::Unchanged => snap.suspended_at,
    };
    snap.balance = balance;
    snap.total_credited = credited;
    snap.total_spent = spent;
    Ok(suspension)
}

/// The event a change of suspension emits, naming the entry that caused it.
pub(crate) async fn emit_suspension(
    tx: &mut Tx,
    account: &str,
    suspension: Suspension,
    snap: &AccountSnapshot,
    entry_id: i64,
) -> Result<(), StoreError> {
    let event = match suspension {
        Suspension::Suspend => "account.suspended",
        Suspension::Unsuspend => "account.unsuspended",
        Suspension::Unchanged => return Ok(()),
    };
    let data = serde_json::json!({
        "balance": holdfast_core::Micros(snap.balance).format(),
        "balance_micros": snap.balance,
        "entry_id": entry_id,
    });
    emit(tx, event, account, None, data, snap.now).await
}

/// One money change in ONE statement, under the client's key: the idempotency record,
/// the account row and the ledger entry — or nothing at all when the key is taken
/// already (then no entry comes back and the caller looks the key up). `ON CONFLICT DO
/// NOTHING` rather than a failing insert: on PostgreSQL an error would abort the whole
/// transaction, and with it a batch. On PostgreSQL the statement also reads the rest of
/// the account for the answer (it runs after the lock: a fresh snapshot).
const WRITE_MONEY: Sql = Sql {
    postgres: concat!(
        "WITH k AS (INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
         VALUES ($1, $12, $6, $13, nextval('ledger_entry_id_seq'), NULL, $11) \
         ON CONFLICT (account_id, key) DO NOTHING RETURNING entry_id), \
         a AS (UPDATE accounts SET balance = balance + $2, total_credited = total_credited + $3, \
         total_spent = total_spent + $4, suspended_at = $5 WHERE account_id = $1 AND EXISTS (SELECT 1 FROM k)), \
         e AS (INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
         OVERRIDING SYSTEM VALUE SELECT entry_id, $1, $14, $2, $6, $7, $8, $9, $10, $11 FROM k RETURNING entry_id) \
         SELECT (SELECT entry_id FROM e) AS entry_id, ",
        rest_columns!(postgres, "$1")
    ),
    // `changes()` is the row count of the statement before: each step runs only when the
    // one before it wrote its row.
    sqlite: "INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
             VALUES ($1, $12, $6, $13, NULL, NULL, $11) ON CONFLICT (account_id, key) DO NOTHING; \
             INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
             SELECT $1, $14, $2, $6, $7, $8, $9, $10, $11 WHERE changes() = 1 RETURNING entry_id; \
             UPDATE accounts SET balance = balance + $2, total_credited = total_credited + $3, \
             total_spent = total_spent + $4, suspended_at = $5 WHERE account_id = $1 AND changes() = 1; \
             UPDATE idempotency SET entry_id = last_insert_rowid() \
             WHERE account_id = $1 AND key = $12 AND entry_id IS NULL AND changes() = 1",
};

/// Writes a money change under the client's key (idempotency record, balance, counters,
/// ledger entry) and the suspension it causes, updating `locked`. Returns the ledger
/// entry, or `None` (nothing written) when the key is taken already. The idempotency
/// operation is the entry's kind.
pub(crate) async fn write_money(
    tx: &mut Tx,
    locked: &mut Locked,
    buffer: i64,
    c: MoneyChange<'_>,
    (key, hash): (&IdempotencyKey, &str),
) -> Result<Option<LedgerEntry>, StoreError> {
    let mut snap = locked.snap.clone();
    let suspension = change_money(&mut snap, &c)?;
    let account = locked.account.as_str();
    let facts = EntryFacts {
        pocket: MONEY,
        delta: c.delta,
        kind: c.kind,
        amount_after: snap.balance,
        available_after: Some(snap.balance - snap.held),
        buffer: Some(buffer),
        reference: c.reference,
    };
    let rows = tx
        .fetch_all(
            WRITE_MONEY,
            args![
                account,
                c.delta,
                c.credited,
                c.spent,
                snap.suspended_at,
                c.kind,
                facts.amount_after,
                facts.available_after,
                buffer,
                facts.reference.clone(),
                snap.now,
                key.as_str(),
                hash,
                MONEY
            ],
        )
        .await?;
    let (entry_id, rest) = match (tx.dialect(), rows.as_slice()) {
        (Dialect::Postgres, [row]) => (row.opt_int("entry_id")?, Some(rest_from(row)?)),
        (Dialect::Sqlite, [row]) => (Some(row.int("entry_id")?), None),
        (Dialect::Sqlite, []) => (None, None),
        _ => {
            return Err(StoreError::Corrupt(
                "a money write answered more than one row".into(),
            ));
        }
    };
    let Some(entry_id) = entry_id else {
        return Ok(None);
    };
    emit_suspension(tx, account, suspension, &snap, entry_id).await?;
    let entry = facts.entry(entry_id, account, snap.now);
    locked.snap = snap;
    if let Some(rest) = rest {
        locked.fill(rest);
    }
    let record = IdemRecord {
        operation: c.kind.to_owned(),
        request_hash: hash.to_owned(),
        entry_id: Some(entry_id),
        job_id: None,
    };
    locked.remember(key.as_str(), record);
    Ok(Some(entry))
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
