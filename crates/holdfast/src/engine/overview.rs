//! What an operator's pages show that no API answer carries (the console's reads): each
//! bounded by an index, each in one read transaction.

use holdfast_core::decide::Timestamp;
use holdfast_store::reads::overview::{AccountCounts, DeliveryRow, FinishedInMinute, OpenLane};
use holdfast_store::reads::stats::Stats;
use holdfast_store::{Event, LedgerEntry, StoreError};

use super::Engine;

impl Engine {
    /// How many accounts there are, and how many have each status.
    pub async fn account_counts(&self) -> Result<AccountCounts, StoreError> {
        self.store.account_counts().await
    }

    /// Money held and the webhook backlog (the dashboard's numbers without counting
    /// every job).
    pub async fn stats_of_holds_and_webhooks(&self) -> Result<Stats, StoreError> {
        self.store.stats_of_holds_and_webhooks().await
    }

    /// Every lane with open jobs, by name.
    pub async fn open_lanes(&self) -> Result<Vec<OpenLane>, StoreError> {
        self.store.open_lanes().await
    }

    /// Jobs finished at or after `since`, per minute and end status, oldest minute first.
    pub async fn finished_per_minute(
        &self,
        since: Timestamp,
    ) -> Result<Vec<FinishedInMinute>, StoreError> {
        self.store.finished_per_minute(since).await
    }

    /// An account's ledger entries with ids below `before` (`None`: from the newest),
    /// newest first, at most `limit`.
    pub async fn recent_ledger(
        &self,
        account_id: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        self.store.recent_ledger(account_id, before, limit).await
    }

    /// An account's ledger entries whose `ref` is `reference`, oldest first.
    pub async fn entries_of_ref(
        &self,
        account_id: &str,
        reference: &str,
        limit: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        self.store
            .entries_of_ref(account_id, reference, limit)
            .await
    }

    /// An account's newest events, newest first.
    pub async fn recent_account_events(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<Event>, StoreError> {
        self.store.recent_account_events(account_id, limit).await
    }

    /// A job's events, oldest first.
    pub async fn job_events(
        &self,
        account_id: &str,
        job_id: &str,
        limit: i64,
    ) -> Result<Vec<Event>, StoreError> {
        self.store.job_events(account_id, job_id, limit).await
    }

    /// The newest webhook deliveries, newest first.
    pub async fn recent_deliveries(&self, limit: i64) -> Result<Vec<DeliveryRow>, StoreError> {
        self.store.recent_deliveries(limit).await
    }
}
