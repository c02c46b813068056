//! What the operator console shows that no API answer carries: accounts by status, the
//! open jobs of each lane, jobs finished per minute, the newest of an account's ledger and
//! events, a job's events, the newest webhook deliveries. Reads only, each in one read
//! transaction, each bounded by an index (the console must stay fast on a big database).

use holdfast_core::decide::Timestamp;

use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{Event, LedgerEntry};
use crate::reads::events::event_from;
use crate::store::Store;
use crate::units::writes::entry_from;
use crate::{in_read_tx, params, statement};

static ACCOUNTS_BY_STATUS: Stmt = statement!(shared "overview_accounts_by_status");
static OPEN_LANES: Stmt = statement!(shared "overview_open_lanes");
static FINISHED_PER_MINUTE: Stmt = statement!(shared "overview_finished_per_minute");
static RECENT_LEDGER: Stmt = statement!(shared "recent_ledger");
static RECENT_ACCOUNT_EVENTS: Stmt = statement!(shared "recent_account_events");
static JOB_EVENTS: Stmt = statement!(shared "job_events");
static RECENT_DELIVERIES: Stmt = statement!(shared "recent_deliveries");
static ENTRIES_OF_REF: Stmt = statement!(shared "entries_of_ref");

/// How many accounts there are, and how many have each status (as the listing filters
/// them: an account both suspended and blocked counts in each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountCounts {
    pub accounts: i64,
    pub active: i64,
    pub suspended: i64,
    pub blocked: i64,
    pub banned: i64,
}

/// One lane's open jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenLane {
    pub lane: String,
    pub queued: i64,
    pub in_progress: i64,
    /// When the oldest queued job was submitted.
    pub oldest_queued_at: Option<Timestamp>,
}

/// Jobs that ended with one status within one minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedInMinute {
    /// Minutes since the epoch.
    pub minute: i64,
    pub status: String,
    pub jobs: i64,
}

/// One webhook delivery, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    pub delivery_id: i64,
    pub event_id: i64,
    /// The event's type; `None` once the event is pruned.
    pub event_type: Option<String>,
    pub endpoint: String,
    pub account_id: String,
    pub status: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}

impl Store {
    /// Accounts by status.
    pub async fn account_counts(&self) -> Result<AccountCounts, StoreError> {
        in_read_tx!(self, |tx| async {
            let r = tx.row(&ACCOUNTS_BY_STATUS, params! {}).await?;
            Ok(AccountCounts {
                accounts: r.int("accounts")?,
                active: r.int("active")?,
                suspended: r.int("suspended")?,
                blocked: r.int("blocked")?,
                banned: r.int("banned")?,
            })
        })
    }

    /// Every lane with open jobs, by name.
    pub async fn open_lanes(&self) -> Result<Vec<OpenLane>, StoreError> {
        in_read_tx!(self, |tx| async {
            let rows = tx.rows(&OPEN_LANES, params! {}).await?;
            rows.iter()
                .map(|r| {
                    Ok(OpenLane {
                        lane: r.text("lane")?,
                        queued: r.int("queued")?,
                        in_progress: r.int("in_progress")?,
                        oldest_queued_at: r.opt_int("oldest_queued_at")?,
                    })
                })
                .collect()
        })
    }

    /// Jobs finished at or after `since`, per minute and end status, oldest minute first.
    pub async fn finished_per_minute(
        &self,
        since: Timestamp,
    ) -> Result<Vec<FinishedInMinute>, StoreError> {
        in_read_tx!(self, |tx| async {
            let rows = tx
                .rows(&FINISHED_PER_MINUTE, params! { since: since })
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(FinishedInMinute {
                        minute: r.int("minute")?,
                        status: r.text("status")?,
                        jobs: r.int("jobs")?,
                    })
                })
                .collect()
        })
    }

    /// An account's ledger entries with ids below `before` (`None`: from the newest),
    /// newest first, at most `limit` (clamped to 1 ..= 1,000).
    pub async fn recent_ledger(
        &self,
        account_id: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        in_read_tx!(self, |tx| async {
            let page = params! {
                account_id: account_id,
                before: before.unwrap_or(i64::MAX),
                limit: limit.clamp(1, crate::units::accounts::MAX_PAGE),
            };
            let rows = tx.rows(&RECENT_LEDGER, page).await?;
            rows.iter().map(entry_from).collect()
        })
    }

    /// An account's ledger entries whose `ref` is `reference` (a job's capture and
    /// refunds, a top-up's refunds), oldest first.
    pub async fn entries_of_ref(
        &self,
        account_id: &str,
        reference: &str,
        limit: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        let limit = limit.clamp(1, crate::units::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let filter = params! { account_id: account_id, reference: reference, limit: limit };
            let rows = tx.rows(&ENTRIES_OF_REF, filter).await?;
            rows.iter().map(entry_from).collect()
        })
    }

    /// An account's newest events, newest first.
    pub async fn recent_account_events(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<Event>, StoreError> {
        let limit = limit.clamp(1, crate::units::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let rows = tx
                .rows(
                    &RECENT_ACCOUNT_EVENTS,
                    params! { account_id: account_id, limit: limit },
                )
                .await?;
            rows.iter()
                .map(|r| event_from(r, &self.card().currency))
                .collect()
        })
    }

    /// A job's events, oldest first.
    pub async fn job_events(
        &self,
        account_id: &str,
        job_id: &str,
        limit: i64,
    ) -> Result<Vec<Event>, StoreError> {
        let limit = limit.clamp(1, crate::units::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let filter = params! { account_id: account_id, job_id: job_id, limit: limit };
            let rows = tx.rows(&JOB_EVENTS, filter).await?;
            rows.iter()
                .map(|r| event_from(r, &self.card().currency))
                .collect()
        })
    }

    /// The newest webhook deliveries, newest first.
    pub async fn recent_deliveries(&self, limit: i64) -> Result<Vec<DeliveryRow>, StoreError> {
        let limit = limit.clamp(1, crate::units::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let rows = tx
                .rows(&RECENT_DELIVERIES, params! { limit: limit })
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(DeliveryRow {
                        delivery_id: r.int("delivery_id")?,
                        event_id: r.int("event_id")?,
                        event_type: r.opt_text("event_type")?,
                        endpoint: r.text("endpoint")?,
                        account_id: r.text("account_id")?,
                        status: r.text("status")?,
                        attempts: r.int("attempts")?,
                        last_error: r.opt_text("last_error")?,
                        created_at: r.int("created_at")?,
                        finished_at: r.opt_int("finished_at")?,
                    })
                })
                .collect()
        })
    }
}
