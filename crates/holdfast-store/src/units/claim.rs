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

use holdfast_core::AccountId;
use serde_json::json;

use crate::driver::db::{Arg, Tx};
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

/// Locks the accounts of `named` (`[account, key]` pairs) in sorted order, reading
/// their rows, the clock and their pockets and open jobs once every lock is held. Where
/// the lock statement's snapshot may predate them (`stale`: the account's row changed
/// while it waited), and for every account with [`Keys::ReadFirst`] (then with the
/// records of the keys named), they are read again by a statement of their own. An
/// account that does not exist is absent.
pub(crate) async fn lock_accounts_and_read(
    tx: &mut Tx,
    named: &[[&str; 2]],
    keys: Keys,
) -> Result<HashMap<AccountId, AccountState>, StoreError> {
    let mut ids: Vec<&str> = named.iter().map(|[a, _]| *a).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut states = HashMap::with_capacity(ids.len());
    let mut stale = Vec::new();
    let locked = params! { account_ids: Arg::texts(ids) };
    for row in tx.rows(&LOCK_ACCOUNTS, locked).await? {
        let account = account_id_of(&row)?;
        if row.flag("stale")? {
            stale.push(account.clone());
        }
        let state = AccountState::from_row(&account, &row)?;
        states.insert(account, state);
    }
    let (again, keys): (Vec<&AccountId>, &[[&str; 2]]) = match keys {
        Keys::ReadFirst => (states.keys().collect(), named),
        Keys::Claimed => (stale.iter().collect(), &[]),
    };
    if again.is_empty() {
        return Ok(states);
    }
    let mut again: Vec<&str> = again.into_iter().map(AccountId::as_str).collect();
    again.sort_unstable();
    let read = params! {
        account_ids: json!(again).to_string(),
        keys: json!(keys).to_string(),
    };
    for row in tx.rows(&READ_ACCOUNTS, read).await? {
        let account = account_id_of(&row)?;
        let state = states
            .get_mut(&account)
            .ok_or_else(|| StoreError::Corrupt(format!("{account}: read, not locked")))?;
        state.fill_from(&row)?;
    }
    Ok(states)
}

/// Whether any of these `[account, key]` names a stored record: with
/// [`Keys::Claimed`], the keys the decision refused, which may name earlier calls.
pub(crate) async fn any_key_used(
    tx: &mut Tx,
    keys: Keys,
    named: &[[String; 2]],
) -> Result<bool, StoreError> {
    if keys == Keys::ReadFirst || named.is_empty() {
        return Ok(false);
    }
    let mut accounts: Vec<&str> = named.iter().map(|[a, _]| a.as_str()).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let read = params! {
        account_ids: json!(accounts).to_string(),
        keys: json!(named).to_string(),
    };
    for row in tx.rows(&READ_ACCOUNTS, read).await? {
        if row.text("keys")? != "[]" {
            return Ok(true);
        }
    }
    Ok(false)
}
