//! Usage across accounts for a period: what each account, job kind or meter spent (debits
//! and captures of money, and the seconds of the metered debits) and got back (job
//! refunds), for an operator's invoices and dashboards. Reads only; one account's by its
//! own entries, every account's by the period's (on PostgreSQL through the BRIN index on
//! `created_at`). Job kinds and meters come from one read grouped by both, summed here by
//! the one asked for (a statement shows both from it).

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
static BY_KIND_AND_METER: Stmt = statement!(shared "usage_by_kind_and_meter");
static BY_KIND_AND_METER_OF_ACCOUNT: Stmt = statement!(shared "usage_by_kind_and_meter_of_account");

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

/// The period's spending of one job kind on one meter (either `None`: see
/// `usage_by_kind_and_meter.sql`).
#[derive(Clone)]
pub(crate) struct KindAndMeter {
    job_kind: Option<String>,
    meter: Option<String>,
    spent: UsageGroup,
}

/// The usage in `[from, to)` of `account` (or of every account) by job kind and meter
/// together, in the caller's read transaction: [`sum_by`] gives either grouping.
pub(crate) async fn by_kind_and_meter(
    tx: &mut Tx,
    account: Option<&AccountId>,
    from: Timestamp,
    to: Timestamp,
) -> Result<Vec<KindAndMeter>, StoreError> {
    let period = params! { from: from, to: to };
    let rows = match account {
        Some(a) => {
            let account = params! { account_id: a.as_str() };
            tx.rows(&BY_KIND_AND_METER_OF_ACCOUNT, period.and(account))
                .await?
        }
        None => tx.rows(&BY_KIND_AND_METER, period).await?,
    };
    let part = |row: &Row| {
        Ok(KindAndMeter {
            job_kind: row.opt_text("job_kind")?,
            meter: row.opt_text("meter")?,
            spent: figures(row, None)?,
        })
    };
    rows.iter().map(part).collect()
}

/// `parts` summed by job kind or by meter, in the key's order, `None` last.
pub(crate) fn sum_by(parts: Vec<KindAndMeter>, grouping: UsageGrouping) -> Vec<UsageGroup> {
    let mut groups: Vec<UsageGroup> = Vec::new();
    for part in parts {
        let key = match grouping {
            UsageGrouping::Meter => part.meter,
            UsageGrouping::Kind | UsageGrouping::Account => part.job_kind,
        };
        let at = match groups.iter().position(|g| g.key == key) {
            Some(at) => at,
            None => {
                groups.push(UsageGroup {
                    key,
                    ..UsageGroup::default()
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[at];
        group.entries += part.spent.entries;
        group.spent += part.spent.spent;
        group.refunded += part.spent.refunded;
        group.seconds += part.spent.seconds;
    }
    groups.sort_by(|a, b| (a.key.is_none(), &a.key).cmp(&(b.key.is_none(), &b.key)));
    groups
}

/// A row's figures, as the group `key`.
fn figures(row: &Row, key: Option<String>) -> Result<UsageGroup, StoreError> {
    Ok(UsageGroup {
        key,
        entries: row.int("entries")?,
        spent: row.int("spent")?,
        refunded: row.int("refunded")?,
        seconds: row.int("seconds")?,
    })
}

/// An account's group (`usage_by_account`, `usage_of_account`).
fn group_from(row: &Row) -> Result<UsageGroup, StoreError> {
    figures(row, Some(row.text("group_key")?))
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
                (UsageGrouping::Account, None) => {
                    let page = params! { after: q.after.as_str(), limit: q.limit };
                    tx.rows(&BY_ACCOUNT, period().and(page)).await?
                }
                // One account's page after itself is empty.
                (UsageGrouping::Account, Some(a)) if a.as_str() <= q.after.as_str() => vec![],
                (UsageGrouping::Account, Some(a)) => {
                    let account = params! { account_id: a.as_str() };
                    tx.rows(&OF_ACCOUNT, period().and(account)).await?
                }
                (grouping, account) => {
                    let parts = by_kind_and_meter(tx, account.as_ref(), q.from, q.to).await?;
                    return Ok(sum_by(parts, grouping));
                }
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
