//! The books across accounts: ledger entries in entry order by time range, account and
//! kind, a page per read transaction, so an export of any size holds one page at a time
//! (the HTTP CSV stream and `holdfast export` page through it).

use holdfast_core::decide::Timestamp;
use holdfast_core::{AccountId, Refusal};

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{LedgerEntry, Page};
use crate::store::Store;
use crate::units::money::MAX_PAGE;
use crate::units::writes::entry_from;
use crate::{in_read_tx, params, statement};

static LEDGER_EXPORT: Stmt = statement!(shared "ledger_export");
static LEDGER_EXPORT_COUNT: Stmt = statement!(shared "ledger_export_count");

/// The kinds of ledger entries (docs/API.md).
pub const ENTRY_KINDS: &[&str] = &[
    "top_up",
    "bonus",
    "debit",
    "capture",
    "refund",
    "job_refund",
    "grant",
    "refill",
    "adjustment",
    "expiry",
];

/// Which entries an export takes: written in `[since, until)`, optionally of one account
/// and one kind, after the entry `after`.
#[derive(Debug, Clone, Default)]
pub struct LedgerFilter {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    pub account_id: Option<AccountId>,
    pub kind: Option<String>,
    pub after: Option<i64>,
    /// 1 to [`MAX_PAGE`]; clamped.
    pub limit: i64,
}

impl LedgerFilter {
    fn check(&self) -> Result<(), Refusal> {
        if let Some(kind) = &self.kind
            && !ENTRY_KINDS.contains(&kind.as_str())
        {
            return Err(Refusal::InvalidRequest(format!(
                "kind: must be one of {}",
                ENTRY_KINDS.join(", ")
            )));
        }
        if let (Some(since), Some(until)) = (self.since, self.until)
            && since > until
        {
            return Err(Refusal::InvalidRequest(
                "since: must not be after until".into(),
            ));
        }
        Ok(())
    }

    fn params(&self) -> crate::driver::statement::Params {
        params! {
            after: self.after.unwrap_or(0),
            since: self.since.unwrap_or(i64::MIN),
            until: self.until.unwrap_or(i64::MAX),
            account_id: self.account_id.as_ref().map(|a| a.to_string()),
            kind: self.kind.clone(),
        }
    }
}

impl Store {
    /// One page of the export; `next` is the last entry id returned (or `after` when the
    /// page is empty). Pass it back as `after` for the next page.
    pub async fn export_ledger(
        &self,
        filter: &LedgerFilter,
    ) -> Result<Page<LedgerEntry>, StoreError> {
        filter.check()?;
        let limit = filter.limit.clamp(1, MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let mut params = filter.params();
            params.0.push(("limit", limit.into()));
            let rows = tx.rows(&LEDGER_EXPORT, params).await?;
            let items = rows.iter().map(entry_from).collect::<Result<Vec<_>, _>>()?;
            let next = items.last().map(|e| e.entry_id).or(filter.after);
            Ok(Page { items, next })
        })
    }

    /// How many entries the export has from `filter.after` on.
    pub async fn count_ledger_export(&self, filter: &LedgerFilter) -> Result<u64, StoreError> {
        filter.check()?;
        in_read_tx!(self, |tx| async {
            let row = tx.row(&LEDGER_EXPORT_COUNT, filter.params()).await?;
            Ok(u64::try_from(row.int("n")?).unwrap_or(0))
        })
    }
}
