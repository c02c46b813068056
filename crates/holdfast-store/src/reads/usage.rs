//! Usage across accounts for a period: what each account, job kind or meter spent (debits
//! and captures of money, and the seconds of the metered debits) and got back (job
//! refunds), for an operator's invoices and dashboards. Reads only; one account's by its own entries, every account's by the
//! period's (on PostgreSQL through the BRIN index on `created_at`).

use holdfast_core::decide::Timestamp;
use holdfast_core::{AccountId, Refusal};

use crate::driver::db::{Row, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{UsageGroup, UsageReport};
use crate::store::Store;
use crate::{in_read_tx, params, statement};

static BY_ACCOUNT: Stmt = statement!(shared "usage_by_account");
static OF_ACCOUNT: Stmt = statement!(shared "usage_of_account");
static BY_KIND: Stmt = statement!(shared "usage_by_kind");
static BY_KIND_OF_ACCOUNT: Stmt = statement!(shared "usage_by_kind_of_account");
static BY_METER: Stmt = statement!(shared "usage_by_meter");
static BY_METER_OF_ACCOUNT: Stmt = statement!(shared "usage_by_meter_of_account");

/// What a usage report groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageGrouping {
    Account,
    Kind,
    Meter,
}

impl UsageGrouping {
    pub const ALL: [UsageGrouping; 3] = [
        UsageGrouping::Account,
        UsageGrouping::Kind,
        UsageGrouping::Meter,
    ];

    /// The grouping's name in the API (`group_by=`).
    pub fn name(self) -> &'static str {
        match self {
            UsageGrouping::Account => "account",
            UsageGrouping::Kind => "kind",
            UsageGrouping::Meter => "meter",
        }
    }
}

/// A usage report's question: `[from, to)`, grouped, optionally of one account; account
/// groups by page (`after` the last account id listed, at most `limit`).
#[derive(Debug, Clone)]
pub struct UsageQuery {
    pub from: Timestamp,
    pub to: Timestamp,
    pub group_by: UsageGrouping,
    pub account_id: Option<AccountId>,
    pub after: String,
    pub limit: i64,
}

/// One account's usage in `[from, to)` by job kind, or by meter, in the caller's read
/// transaction.
pub(crate) async fn of_account(
    tx: &mut Tx,
    account: &AccountId,
    group_by: UsageGrouping,
    from: Timestamp,
    to: Timestamp,
) -> Result<Vec<UsageGroup>, StoreError> {
    let statement = match group_by {
        UsageGrouping::Account => &OF_ACCOUNT,
        UsageGrouping::Kind => &BY_KIND_OF_ACCOUNT,
        UsageGrouping::Meter => &BY_METER_OF_ACCOUNT,
    };
    let params = params! { account_id: account.as_str(), from: from, to: to };
    let rows = tx.rows(statement, params).await?;
    rows.iter().map(group_from).collect()
}

fn group_from(row: &Row) -> Result<UsageGroup, StoreError> {
    Ok(UsageGroup {
        key: row.opt_text("group_key")?,
        entries: row.int("entries")?,
        spent: row.int("spent")?,
        refunded: row.int("refunded")?,
        seconds: row.int("seconds")?,
    })
}

impl Store {
    /// The usage report `q` asks for. Kind groups come whole (`next` is `None`); account
    /// groups by page, `next` the last account id when the page is full.
    pub async fn usage(&self, q: &UsageQuery) -> Result<UsageReport, StoreError> {
        if q.from > q.to {
            return Err(Refusal::InvalidRequest("from: must not be after to".into()).into());
        }
        let period = || params! { from: q.from, to: q.to };
        let groups = in_read_tx!(self, |tx| async {
            let rows = match (q.group_by, &q.account_id) {
                // One account's page after itself is empty.
                (UsageGrouping::Account, Some(a)) if a.as_str() <= q.after.as_str() => vec![],
                (group_by, Some(a)) => return of_account(tx, a, group_by, q.from, q.to).await,
                (UsageGrouping::Account, None) => {
                    let page = params! { after: q.after.as_str(), limit: q.limit };
                    tx.rows(&BY_ACCOUNT, period().and(page)).await?
                }
                (UsageGrouping::Kind, None) => tx.rows(&BY_KIND, period()).await?,
                (UsageGrouping::Meter, None) => tx.rows(&BY_METER, period()).await?,
            };
            rows.iter().map(group_from).collect::<Result<Vec<_>, _>>()
        })?;
        let full = q.group_by == UsageGrouping::Account && groups.len() as i64 >= q.limit;
        let next = if full {
            groups.last().and_then(|g| g.key.clone())
        } else {
            None
        };
        Ok(UsageReport { groups, next })
    }
}
