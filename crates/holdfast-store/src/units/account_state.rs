//! The lock layer: how a unit of work locks an account and reads it, and the
//! [`AccountState`] it then decides on. Lock order everywhere: the account row first,
//! then its jobs.
//!
//! What differs by dialect is in the statements, not here: on PostgreSQL the account
//! row is locked with `FOR UPDATE` and the rest is read after the lock by a statement of
//! its own; on SQLite the write transaction holds the database lock from `BEGIN
//! IMMEDIATE`, so one statement reads it all. Both dialects' statements answer the same
//! columns (tests/statements.rs): what one did not read is NULL.

use std::collections::{BTreeMap, HashMap};

use holdfast_core::decide::{
    AccountSnapshot, AllowancePocket, CreditBlock, GENERAL, Recharge, Spend, SpendMarks,
    SpendPolicy,
};
use holdfast_core::{AccountId, Micros, RateCard, Refusal};

use crate::driver::db::{Row, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{AccountView, AllowanceView, BlockView, SpendView};
use crate::units::blocks::{ChangedBlocks, blocks_of, read_block, read_blocks, write_blocks};
use crate::units::spending::spent_since;
use crate::{params, statement};

static LOCK_ACCOUNT: Stmt = statement!("lock_account");
static READ_ACCOUNT_EXTRAS: Stmt = statement!("read_account_extras");
static READ_ACCOUNT: Stmt = statement!("read_account");
static WRITE_SPEND_MARKS: Stmt = statement!(shared "write_spend_marks");

/// A stored idempotency record.
#[derive(Debug, Clone)]
pub(crate) struct IdemRecord {
    pub operation: String,
    pub request_hash: String,
    pub entry_id: Option<i64>,
    pub job_id: Option<String>,
}

/// What is read about an account besides its row: its allowance pockets, its open jobs
/// and the idempotency records of the keys the operation named, each `None` where the
/// row did not read it.
struct AccountExtras {
    allowances: BTreeMap<String, AllowancePocket>,
    open_jobs: Option<i64>,
    keys: Option<HashMap<String, IdemRecord>>,
}

/// An allowance pocket as the statements list it: pocket, remaining, held, cycle start.
type PocketColumns = (String, i64, i64, i64);
/// An idempotency record as the statements list it: key, operation, hash, entry, job.
type KeyColumns = (String, String, String, Option<i64>, Option<String>);

fn parse_json<T: serde::de::DeserializeOwned>(col: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{col}: {e}")))
}

fn pockets_of(pockets: Vec<PocketColumns>) -> BTreeMap<String, AllowancePocket> {
    let pocket = |(pocket, remaining, held, cycle_started_at): PocketColumns| {
        let p = AllowancePocket {
            remaining,
            held,
            cycle_started_at,
        };
        (pocket, p)
    };
    pockets.into_iter().map(pocket).collect()
}

/// An account's pockets and open jobs as a write lists them (see [`listed_extras`]).
pub(crate) struct ListedExtras {
    pub account: String,
    pockets: Vec<PocketColumns>,
    open_jobs: i64,
}

/// The pockets and open jobs of accounts as a write answers them (`extras`: a JSON
/// array of `[account, pockets, open jobs]`, the pockets as the statements list them).
pub(crate) fn listed_extras(text: &str) -> Result<Vec<ListedExtras>, StoreError> {
    let listed: Vec<(String, Vec<PocketColumns>, i64)> = parse_json("extras", text)?;
    let extras = |(account, pockets, open_jobs)| ListedExtras {
        account,
        pockets,
        open_jobs,
    };
    Ok(listed.into_iter().map(extras).collect())
}

/// The extras a row carries: every statement that reads an account's extras answers
/// `allowances`, `open_jobs` and `keys`, each NULL where it was not read. `None` when
/// the pockets were not read (as `lock_account` on PostgreSQL, which leaves them to
/// `read_account_extras`).
fn extras_from(row: &Row) -> Result<Option<AccountExtras>, StoreError> {
    let Some(pockets) = row.opt_text("allowances")? else {
        return Ok(None);
    };
    let pockets: Vec<PocketColumns> = parse_json("allowances", &pockets)?;
    let keys: Option<Vec<KeyColumns>> = (row.opt_text("keys")?)
        .map(|keys| parse_json("keys", &keys))
        .transpose()?;
    let open_jobs = row.opt_int("open_jobs")?;
    let record = |(key, operation, request_hash, entry_id, job_id): KeyColumns| {
        let r = IdemRecord {
            operation,
            request_hash,
            entry_id,
            job_id,
        };
        (key, r)
    };
    Ok(Some(AccountExtras {
        allowances: pockets_of(pockets),
        open_jobs,
        keys: keys.map(|keys| keys.into_iter().map(record).collect()),
    }))
}

/// An account as a unit of work holds it: the snapshot with the database clock, its open
/// jobs (their count changes only under the account lock), and the idempotency records
/// of the keys the operation named, kept current as the operation records keys. The
/// pockets and open jobs are empty/`None` until read: a debit does not need them to
/// decide, and on PostgreSQL its write statement reads them.
pub(crate) struct AccountState {
    pub account: AccountId,
    pub snap: AccountSnapshot,
    pub open_jobs: Option<i64>,
    pockets_read: bool,
    keys: HashMap<String, IdemRecord>,
    /// The spending marks as stored (the snapshot's may have been marked since).
    marks_stored: SpendMarks,
    /// Whether the account has had credit blocks (then they are read with it).
    has_blocks: bool,
    /// The credit blocks as stored (the snapshot's may have been drawn since); `None`
    /// until read, for an account that has had blocks.
    blocks_stored: Option<Vec<CreditBlock>>,
}

impl AccountState {
    /// The account of a row that reads it (its columns as the table's).
    pub(crate) fn from_row(account: &AccountId, row: &Row) -> Result<AccountState, StoreError> {
        Self::read(account, row, "created_at")
    }

    /// The account of a row that reads a job with it: the job's own `created_at` is
    /// there, the account's is `account_created_at`.
    pub(crate) fn from_job_row(account: &AccountId, row: &Row) -> Result<AccountState, StoreError> {
        Self::read(account, row, "account_created_at")
    }

    /// The account of `row`, its creation under `created_at`, with what else it read.
    fn read(account: &AccountId, row: &Row, created_at: &str) -> Result<AccountState, StoreError> {
        let (snap, marks_stored) = snapshot_from(row, created_at)?;
        let mut state = AccountState {
            account: account.clone(),
            snap,
            open_jobs: None,
            pockets_read: false,
            keys: HashMap::new(),
            marks_stored,
            has_blocks: false,
            blocks_stored: Some(Vec::new()),
        };
        if row.int("has_blocks")? != 0 {
            state.has_blocks = true;
            state.blocks_stored = None;
        }
        state.fill_from(row)?;
        Ok(state)
    }

    /// Forgets the pockets and open jobs read, for a statement to read them again.
    pub(crate) fn forget_extras(&mut self) {
        self.snap.allowances.clear();
        self.pockets_read = false;
        self.open_jobs = None;
    }

    /// Fills in the pockets and open jobs a write listed.
    pub(crate) fn fill_listed(&mut self, listed: ListedExtras) {
        self.snap.allowances = pockets_of(listed.pockets);
        self.pockets_read = true;
        self.open_jobs = Some(listed.open_jobs);
    }

    /// Fills in the extras `row` read: pockets, open jobs, records of keys.
    pub fn fill_from(&mut self, row: &Row) -> Result<(), StoreError> {
        let Some(extras) = extras_from(row)? else {
            return Ok(());
        };
        self.snap.allowances = extras.allowances;
        self.pockets_read = true;
        self.open_jobs = extras.open_jobs.or(self.open_jobs);
        if let Some(keys) = extras.keys {
            self.keys.extend(keys);
        }
        Ok(())
    }

    /// Reads the pockets and open jobs (again) with the records of `keys` (at most two).
    pub async fn look_up(&mut self, tx: &mut Tx, keys: &[&str]) -> Result<(), StoreError> {
        let (first_key, second_key) = match keys {
            [] => (None, None),
            [a] => (Some(*a), None),
            [a, b] => (Some(*a), Some(*b)),
            _ => return Err(StoreError::Corrupt("more than two keys looked up".into())),
        };
        let account_id = self.account.as_str();
        let row = tx
            .row(
                &READ_ACCOUNT_EXTRAS,
                params! { account_id: account_id, first_key: first_key, second_key: second_key },
            )
            .await?;
        self.fill_from(&row)
    }

    /// Reads the pockets (and open jobs) unless a statement read them with the lock.
    pub async fn read_pockets(&mut self, tx: &mut Tx) -> Result<(), StoreError> {
        if self.pockets_read {
            return Ok(());
        }
        self.look_up(tx, &[]).await
    }

    /// The open jobs, which must have been read.
    pub fn open_jobs(&self) -> Result<i64, StoreError> {
        self.open_jobs
            .ok_or_else(|| StoreError::Corrupt("the open jobs were not read".into()))
    }

    /// The record of `key`, whatever operation wrote it (it must have been read).
    pub fn record(&self, key: &str) -> Option<&IdemRecord> {
        self.keys.get(key)
    }

    /// `Some(record)` for a replay of `operation` with this request hash, `None` for a
    /// new key, `idempotency_mismatch` for a different request under the same key.
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

    pub fn remember(&mut self, key: &str, record: IdemRecord) {
        self.keys.insert(key.to_owned(), record);
    }

    /// Reads what the rules of money need beside the account's row, where it has any:
    /// its credit blocks ([`AccountState::read_blocks`]) and the marks of its rule of
    /// spending ([`AccountState::mark_spending`]). Nothing for an account with neither.
    pub async fn read_for_rules(&mut self, tx: &mut Tx, card: &RateCard) -> Result<(), StoreError> {
        self.read_blocks(tx).await?;
        self.mark_spending(tx, card).await
    }

    /// Reads the credit blocks that hold money, if the account has had any and a
    /// statement did not read them with its lock.
    async fn read_blocks(&mut self, tx: &mut Tx) -> Result<(), StoreError> {
        if self.blocks_stored.is_none() {
            self.snap.blocks = read_blocks(tx, &self.account).await?;
            self.blocks_stored = Some(self.snap.blocks.clone());
        }
        Ok(())
    }

    /// Takes the credit blocks a lock statement read (`blocks`: NULL for an account
    /// without them), when they are current.
    pub(crate) fn blocks_from(&mut self, row: &Row) -> Result<(), StoreError> {
        if self.blocks_stored.is_none()
            && let Some(text) = row.opt_text("blocks")?
        {
            self.snap.blocks = blocks_of(&text)?;
            self.blocks_stored = Some(self.snap.blocks.clone());
        }
        Ok(())
    }

    /// Reads the blocks `named` that the snapshot lacks (emptied ones: a job refund gives
    /// back to the blocks its job was charged from).
    pub async fn read_named_blocks(
        &mut self,
        tx: &mut Tx,
        named: impl Iterator<Item = i64>,
    ) -> Result<(), StoreError> {
        let mut wanted: Vec<i64> = named.filter(|&b| b != GENERAL).collect();
        wanted.sort_unstable();
        wanted.dedup();
        for id in wanted {
            if self.snap.blocks.iter().any(|b| b.id == id) {
                continue;
            }
            let block = read_block(tx, &self.account, id).await?.ok_or_else(|| {
                StoreError::Corrupt(format!("{}: block {id} is missing", self.account))
            })?;
            self.snap.blocks.push(block.clone());
            self.blocks_stored.get_or_insert_with(Vec::new).push(block);
        }
        Ok(())
    }

    /// Whether the account has had credit blocks.
    pub fn has_blocks(&self) -> bool {
        self.has_blocks
    }

    /// Counts a block the unit of work made (and wrote) as read and stored.
    pub fn add_block(&mut self, block: CreditBlock) {
        self.has_blocks = true;
        self.snap.blocks.push(block.clone());
        self.blocks_stored.get_or_insert_with(Vec::new).push(block);
    }

    /// The credit blocks the unit of work changed (drawn, held, released, given back,
    /// written off), counted as written from here on: the caller writes them
    /// ([`write_blocks`]) in its transaction.
    pub(crate) fn take_changed_blocks(&mut self) -> ChangedBlocks {
        let stored = self.blocks_stored.as_deref().unwrap_or(&[]);
        let changed: Vec<CreditBlock> = (self.snap.blocks.iter())
            .filter(|b| !stored.contains(b))
            .cloned()
            .collect();
        if !changed.is_empty() {
            self.blocks_stored = Some(self.snap.blocks.clone());
        }
        ChangedBlocks::of(changed, &self.snap.blocks)
    }

    /// Writes the credit blocks the unit of work changed
    /// ([`AccountState::take_changed_blocks`]).
    pub async fn write_changed_blocks(&mut self, tx: &mut Tx) -> Result<(), StoreError> {
        let changed = self.take_changed_blocks();
        write_blocks(tx, self.account.as_str(), &changed).await
    }

    /// Marks the period of the rule in force from the ledger where it is not marked for
    /// now (core's [`AccountSnapshot::unmarked_spend_period`]): once per account and
    /// period under a rule; nothing for an account without one. The account is locked
    /// (or read in one snapshot), so the ledger agrees with its `total_spent`.
    async fn mark_spending(&mut self, tx: &mut Tx, card: &RateCard) -> Result<(), StoreError> {
        let snap = &mut self.snap;
        let Some((period, start)) = snap.unmarked_spend_period(card) else {
            return Ok(());
        };
        let spent = spent_since(tx, &self.account, start).await?;
        (snap.spend.marks).mark(period, start, snap.total_spent, spent);
        Ok(())
    }

    /// The spending marks when the unit of work changed them (a period marked, or a
    /// threshold told), counted as written from here on: the caller writes them
    /// ([`write_spend_marks`]) in its transaction.
    pub fn take_changed_marks(&mut self) -> Option<SpendMarks> {
        let marks = self.snap.spend.marks;
        (marks != self.marks_stored).then(|| {
            self.marks_stored = marks;
            marks
        })
    }

    /// Writes the spending marks where the unit of work changed them
    /// ([`AccountState::take_changed_marks`]).
    pub async fn write_changed_marks(&mut self, tx: &mut Tx) -> Result<(), StoreError> {
        match self.take_changed_marks() {
            Some(marks) => write_spend_marks(tx, self.account.as_str(), marks).await,
            None => Ok(()),
        }
    }

    /// The account as a client sees it now: allowances whose window passed show the refill.
    pub fn view(&self, card: &RateCard) -> Result<AccountView, StoreError> {
        let snap = &self.snap;
        let mut effective = snap.clone();
        let refills = effective.due_refills(card);
        effective.apply_refills(&refills);
        let (plan_name, plan) = effective.effective_plan(card);
        let allowances = effective.allowances.iter().map(|(pocket, p)| {
            let view = AllowanceView {
                remaining: p.remaining,
                held: p.held,
                quota: plan.allowances.get(pocket).copied().unwrap_or(0),
                cycle_started_at: p.cycle_started_at,
                refills_at: effective.refills_at(card, pocket),
            };
            (pocket.clone(), view)
        });
        Ok(AccountView {
            account_id: self.account.to_string(),
            plan: snap.plan.clone(),
            plan_until: snap.plan_until,
            effective_plan: plan_name.to_owned(),
            balance: snap.balance,
            held: snap.held,
            available: snap.available_money(),
            buffer: plan.buffer.0,
            total_credited: snap.total_credited,
            total_spent: snap.total_spent,
            suspended_at: snap.suspended_at,
            blocked_at: snap.blocked_at,
            banned_at: snap.banned_at,
            max_concurrent_jobs: effective.concurrency_limit(card),
            max_concurrent_jobs_override: snap.max_concurrent_jobs,
            open_jobs: self.open_jobs()?,
            currency: card.currency.clone(),
            created_at: snap.created_at,
            last_active_at: snap.last_active_at,
            recharge: snap.recharge,
            spend: SpendView::of(snap, card),
            allowances: allowances.collect(),
            blocks: BlockView::of(snap),
        })
    }
}

/// Writes an account's spending marks ([`AccountState::take_changed_marks`]).
pub(crate) async fn write_spend_marks(
    tx: &mut Tx,
    account: &str,
    m: SpendMarks,
) -> Result<(), StoreError> {
    let params = params! {
        account_id: account,
        day_start: m.day_start, day_base: m.day_base,
        month_start: m.month_start, month_base: m.month_base,
        alerted_start: m.alerted_start, alerted: m.alerted,
    };
    tx.exec(&WRITE_SPEND_MARKS, params).await?;
    Ok(())
}

/// The account columns of a row, the account's creation under `created_at`, with an
/// empty set of pockets and its spending marks as stored (a mark not kept is NULL, or 0
/// where SQLite's column cannot be NULL).
fn snapshot_from(row: &Row, created_at: &str) -> Result<(AccountSnapshot, SpendMarks), StoreError> {
    let stored = SpendMarks {
        day_start: row.opt_int("spend_day_start")?,
        day_base: row.opt_int("spend_day_base")?.unwrap_or(0),
        month_start: row.opt_int("spend_month_start")?,
        month_base: row.opt_int("spend_month_base")?.unwrap_or(0),
        alerted_start: row.opt_int("spend_alerted_start")?,
        alerted: row.opt_int("spend_alerted")?.unwrap_or(0),
    };
    let policy: Option<SpendPolicy> = (row.opt_text("spend_policy")?)
        .map(|text| parse_json("spend_policy", &text))
        .transpose()?;
    let (now, total_spent) = (row.int("now")?, row.int("total_spent")?);
    let spend = Spend {
        policy,
        marks: stored,
    };
    let snap = AccountSnapshot {
        plan: row.text("plan")?,
        plan_until: row.opt_int("plan_until")?,
        max_concurrent_jobs: row.opt_int("max_concurrent_jobs")?,
        balance: row.int("balance")?,
        held: row.int("held")?,
        total_credited: row.int("total_credited")?,
        total_spent,
        suspended_at: row.opt_int("suspended_at")?,
        blocked_at: row.opt_int("blocked_at")?,
        banned_at: row.opt_int("banned_at")?,
        created_at: row.int(created_at)?,
        last_active_at: row.opt_int("last_active_at")?,
        recharge: recharge_from(row)?,
        allowances: BTreeMap::new(),
        spend,
        blocks: Vec::new(),
        now,
    };
    Ok((snap, stored))
}

/// The account's auto-recharge: both columns or neither.
fn recharge_from(row: &Row) -> Result<Option<Recharge>, StoreError> {
    match (
        row.opt_int("recharge_below")?,
        row.opt_int("recharge_amount")?,
    ) {
        (Some(below), Some(amount)) => Ok(Some(Recharge {
            below: Micros(below),
            amount: Micros(amount),
        })),
        (None, None) => Ok(None),
        _ => Err(StoreError::Corrupt(
            "an account with half an auto-recharge".into(),
        )),
    }
}

fn keys_json(keys: &[&str]) -> String {
    serde_json::Value::from(keys).to_string()
}

/// Locks the account row and reads it with the database clock, and with its pockets,
/// open jobs and the records of `keys` where the statement reads them with the lock
/// (SQLite); elsewhere they are read on demand. The period of its rule of spending is
/// marked and its blocks read ([`AccountState::read_for_rules`]).
pub(crate) async fn lock_account_row(
    tx: &mut Tx,
    card: &RateCard,
    account: &AccountId,
    keys: &[&str],
) -> Result<AccountState, StoreError> {
    let params = params! { account_id: account.as_str(), keys: keys_json(keys) };
    let row = tx
        .maybe_row(&LOCK_ACCOUNT, params)
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let mut state = AccountState::read(account, &row, "created_at")?;
    state.read_for_rules(tx, card).await?;
    Ok(state)
}

/// Locks the account row and reads it with its pockets, its open jobs and the records
/// of `keys`, all current.
pub(crate) async fn lock_account(
    tx: &mut Tx,
    card: &RateCard,
    account: &AccountId,
    keys: &[&str],
) -> Result<AccountState, StoreError> {
    let mut state = lock_account_row(tx, card, account, keys).await?;
    if state.open_jobs.is_none() {
        state.look_up(tx, keys).await?;
    }
    Ok(state)
}

/// Reads the account without locking it (in a read transaction: one snapshot), the
/// period of its rule of spending marked (not written).
pub(crate) async fn read_account(
    tx: &mut Tx,
    card: &RateCard,
    account: &AccountId,
) -> Result<AccountState, StoreError> {
    let row = tx
        .maybe_row(&READ_ACCOUNT, params! { account_id: account.as_str() })
        .await?
        .ok_or(Refusal::AccountNotFound)?;
    let mut state = AccountState::from_row(account, &row)?;
    state.read_for_rules(tx, card).await?;
    Ok(state)
}

pub(crate) fn account_id_of(row: &Row) -> Result<AccountId, StoreError> {
    AccountId::parse(&row.text("account_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))
}
