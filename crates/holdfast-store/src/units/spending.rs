//! What a rule of spending reads of the ledger: an account's spending since a period
//! began, for the marks of the period of its rule in force (core's
//! [`SpendMarks::mark`](holdfast_core::decide::SpendMarks::mark)), and the search of an
//! account's last entry before a time that it and the statements stand on.

use holdfast_core::AccountId;
use holdfast_core::MONEY;
use holdfast_core::decide::Timestamp;

use crate::driver::db::{Row, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::{params, statement};

static ENTRY_FROM: Stmt = statement!(shared "account_entry_from");
static NEWEST_ENTRY: Stmt = statement!(shared "account_newest_entry");
static SUMS_AFTER_ENTRY: Stmt = statement!(shared "ledger_sums_after_entry");

/// What `account` spent (money debits and captures less money job refunds, as
/// `total_spent` counts) in the entries written at or after `start`.
pub(crate) async fn spent_since(
    tx: &mut Tx,
    account: &AccountId,
    start: Timestamp,
) -> Result<i64, StoreError> {
    let after = last_entry_before(tx, account, start).await?.unwrap_or(0);
    let params = params! { account_id: account.as_str(), pocket: MONEY, after_entry_id: after };
    tx.row(&SUMS_AFTER_ENTRY, params).await?.int("spent")
}

/// The last entry of `account` written before `before` (`None`: none). An account's
/// entries are in time order (account_entry_from.sql), so a bisection over its entry ids
/// finds it in a few dozen index probes however far back `before` is, where a walk back
/// from the newest would read every entry written since.
pub(crate) async fn last_entry_before(
    tx: &mut Tx,
    account: &AccountId,
    before: Timestamp,
) -> Result<Option<i64>, StoreError> {
    let id = account.as_str();
    let entry = |r: Option<Row>| {
        r.map(|r| Ok::<_, StoreError>((r.int("entry_id")?, r.int("created_at")?)))
            .transpose()
    };
    let newest = tx
        .maybe_row(&NEWEST_ENTRY, params! { account_id: id })
        .await?;
    let newest = entry(newest)?;
    let Some((newest_id, newest_at)) = newest else {
        return Ok(None);
    };
    if newest_at < before {
        return Ok(Some(newest_id));
    }
    // The answer is `found` or an entry in (found, below); every entry from `below` on
    // was written at or after `before`.
    let (mut found, mut below) = (None, newest_id);
    loop {
        let floor = found.unwrap_or(0);
        if below - floor <= 1 {
            return Ok(found);
        }
        let mid = floor + (below - floor) / 2;
        let params = params! { account_id: id, from_id: mid };
        match entry(tx.maybe_row(&ENTRY_FROM, params).await?)? {
            Some((entry_id, created_at)) if created_at < before => found = Some(entry_id),
            // None in [mid, that entry), and it and all after it are not before.
            _ => below = mid,
        }
    }
}
