//! The events outbox, and the webhook deliveries made from it.

use holdfast_store::passes::webhooks::DeadDelivery;
use holdfast_store::{Event, EventFilter, Page, StoreError};

use super::Engine;

impl Engine {
    /// Events after the cursor, in the one order every reader sees.
    pub async fn events(&self, filter: &EventFilter) -> Result<Page<Event>, StoreError> {
        self.store.events(filter).await
    }

    /// Dead webhook deliveries (their last attempt failed), oldest first, after the
    /// delivery id `after`, optionally of one endpoint.
    pub async fn dead_deliveries(
        &self,
        endpoint: Option<&str>,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Page<DeadDelivery>, StoreError> {
        self.store.dead_deliveries(endpoint, after, limit).await
    }

    /// Queues a dead (or delivered) delivery of `event_id` to `endpoint` again with fresh
    /// attempts; `false` when there is no such delivery or it is still pending.
    pub async fn redeliver(&self, event_id: i64, endpoint: &str) -> Result<bool, StoreError> {
        self.store.redeliver(event_id, endpoint).await
    }
}
