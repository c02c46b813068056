//! What the set-based units of work (debits: [`crate::units::ingest`]; submits:
//! [`crate::units::submit`]) share: how a call locks its accounts, and how it claims the
//! idempotency keys its items name.
//!
//! The keys are claimed optimistically: an attempt does not read them before deciding,
//! and the write claims them with its `INSERT`. A key used already (a retry, or a
//! duplicate in flight) fails the write with a unique violation or leaves its row out:
//! the attempt is rolled back and the call redone reading its keys first
//! ([`Keys::ReadFirst`], one more statement), where a used key is a replay or a
//! mismatch. A key refused by the decision is looked up before the write
//! ([`any_key_used`]): such a key may name an earlier call, whose replay is the answer.
//! A key repeated inside one call is a replay of its first use on either attempt (the
//! decision remembers the keys it records).

use std::collections::HashMap;
use std::future::Future;

use holdfast_core::{AccountId, RateCard};
use serde_json::json;

use crate::driver::db::{Arg, Row, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::store::TxFailure;
use crate::units::account_state::{AccountState, account_id_of};
use crate::{params, statement};

static LOCK_ACCOUNTS: Stmt = statement!("ingest_lock_accounts");
static READ_ACCOUNTS: Stmt = statement!("ingest_read_accounts");

/// How an attempt treats the keys the call names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keys {
    /// Not read: the write claims them, and a key used already fails the attempt
    /// ([`AttemptFailed::KeyTaken`]), to be redone with [`Keys::ReadFirst`].
    Claimed,
    /// Read with the pockets before deciding: a key used already is a replay or a
    /// mismatch.
    ReadFirst,
}

/// How an attempt fails: the store's error, or a key it claimed without reading turned
/// out taken — a signal to the units of work alone: the attempt is rolled back and the
/// call redone reading its keys first.
pub(crate) enum AttemptFailed {
    Store(StoreError),
    KeyTaken,
}

impl From<StoreError> for AttemptFailed {
    fn from(e: StoreError) -> AttemptFailed {
        AttemptFailed::Store(e)
    }
}

impl TxFailure for AttemptFailed {
    fn is_retryable(&self) -> bool {
        match self {
            AttemptFailed::Store(e) => e.is_retryable(),
            AttemptFailed::KeyTaken => false,
        }
    }
}

/// Runs `attempt` claiming the keys, and once more reading them first where one was
/// taken. A key taken on the second attempt is corruption: it read its keys.
pub(crate) async fn claimed_then_read<T, F, Fut>(mut attempt: F) -> Result<T, StoreError>
where
    F: FnMut(Keys) -> Fut,
    Fut: Future<Output = Result<T, AttemptFailed>>,
{
    let result = match attempt(Keys::Claimed).await {
        Err(AttemptFailed::KeyTaken) => attempt(Keys::ReadFirst).await,
        other => other,
    };
    result.map_err(|failed| match failed {
        AttemptFailed::Store(e) => e,
        AttemptFailed::KeyTaken => {
            StoreError::Corrupt("a call that read its keys first found one taken".into())
        }
    })
}

/// Where a call gets the pockets and open jobs of the accounts whose rows changed while
/// its lock waited (`stale`: the lock statement's snapshot predates them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stale {
    /// Read again before deciding, by a statement of their own (a submit decides on
    /// them).
    ReadBeforeDeciding,
    /// Left unread (`None`) for the call's write to read, whose snapshot postdates every
    /// lock (a debit's answers show them; its decision does not stand on them): no
    /// statement more while the locks are held.
    ReadByTheWrite,
}

/// Locks the accounts of `named` (`[account, key]` pairs) in sorted order, reading
/// their rows, the clock and their pockets and open jobs once every lock is held. Where
/// the lock statement's snapshot may predate the pockets and open jobs (`stale`: the
/// account's row changed while it waited), `stale` says what is done; with
/// [`Keys::ReadFirst`] they are read again for every account, with the records of the
/// keys named, by a statement of their own. An account that does not exist is absent.
/// The period of each account's rule of spending is marked
/// ([`AccountState::read_for_rules`]).
pub(crate) async fn lock_accounts_and_read(
    tx: &mut Tx,
    card: &RateCard,
    named: &[[&str; 2]],
    keys: Keys,
    on_stale: Stale,
) -> Result<HashMap<AccountId, AccountState>, StoreError> {
    let mut ids: Vec<&str> = named.iter().map(|[a, _]| *a).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut states = HashMap::with_capacity(ids.len());
    let mut stale = Vec::new();
    let locked = params! { account_ids: Arg::texts(ids) };
    for row in tx.rows(&LOCK_ACCOUNTS, locked).await? {
        let account = account_id_of(&row)?;
        let mut state = AccountState::from_row(&account, &row)?;
        // The locked row's own: current, stale or not.
        state.blocks_from(&row)?;
        if row.flag("stale")? {
            if on_stale == Stale::ReadByTheWrite {
                state.forget_extras();
            }
            stale.push(account.clone());
        }
        states.insert(account, state);
    }
    let (again, keys): (Vec<&str>, &[[&str; 2]]) = match (keys, on_stale) {
        (Keys::ReadFirst, _) => (states.keys().map(AccountId::as_str).collect(), named),
        (Keys::Claimed, Stale::ReadBeforeDeciding) => {
            (stale.iter().map(AccountId::as_str).collect(), &[])
        }
        (Keys::Claimed, Stale::ReadByTheWrite) => (Vec::new(), &[]),
    };
    let rows = read_again(tx, again, keys).await?;
    for row in rows {
        locked_mut(&mut states, &account_id_of(&row)?, "read, not locked")?.fill_from(&row)?;
    }
    for state in states.values_mut() {
        state.read_for_rules(tx, card).await?;
    }
    Ok(states)
}

/// The entry of `account` in a call's accounts, which the call locked: its absence is a
/// bug of the call (`Corrupt`, saying `why`).
pub(crate) fn locked_mut<'s, V>(
    states: &'s mut HashMap<AccountId, V>,
    account: &AccountId,
    why: &str,
) -> Result<&'s mut V, StoreError> {
    states
        .get_mut(account)
        .ok_or_else(|| StoreError::Corrupt(format!("{account}: {why}")))
}

/// Reads the pockets and open jobs of the locked accounts `again` (and the records of
/// `keys`) by a statement of their own, after every lock: a row per account, for
/// [`AccountState::fill_from`].
pub(crate) async fn read_again(
    tx: &mut Tx,
    mut again: Vec<&str>,
    keys: &[[&str; 2]],
) -> Result<Vec<Row>, StoreError> {
    if again.is_empty() {
        return Ok(Vec::new());
    }
    again.sort_unstable();
    again.dedup();
    let read = params! {
        account_ids: json!(again).to_string(),
        keys: json!(keys).to_string(),
    };
    tx.rows(&READ_ACCOUNTS, read).await
}

/// Whether any of these `[account, key]` names a stored record: with
/// [`Keys::Claimed`], the keys the decision refused, which may name earlier calls.
pub(crate) async fn any_key_used(
    tx: &mut Tx,
    keys: Keys,
    named: &[[String; 2]],
) -> Result<bool, StoreError> {
    if keys == Keys::ReadFirst {
        return Ok(false);
    }
    let named: Vec<[&str; 2]> = named
        .iter()
        .map(|[a, k]| [a.as_str(), k.as_str()])
        .collect();
    let accounts = named.iter().map(|[a, _]| *a).collect();
    for row in read_again(tx, accounts, &named).await? {
        if row.text("keys")? != "[]" {
            return Ok(true);
        }
    }
    Ok(false)
}
