//! The engine: a store with its rate card, plus the wake-ups long-polling workers wait on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use holdfast_core::{AccountId, IdempotencyKey, RateCard};
use holdfast_store::{
    DebitRequest, MoneyResult, PoolOptions, Store, StoreError, Submit, Submitted, Usage,
};

use crate::batch::{BatchOptions, DebitBatcher};
use tokio::sync::Notify;

/// A deployment: one database, one rate card.
#[derive(Clone)]
pub struct Engine {
    store: Store,
    lanes: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    debits: DebitBatcher,
}

impl Engine {
    /// Opens the database by URL (`sqlite://…` or `postgres://…`), migrates it, and checks
    /// the card still covers the live data.
    pub async fn open(url: &str, card: RateCard) -> Result<Engine, StoreError> {
        Self::open_with(url, card, &PoolOptions::default()).await
    }

    pub async fn open_with(
        url: &str,
        card: RateCard,
        opts: &PoolOptions,
    ) -> Result<Engine, StoreError> {
        Ok(Engine::new(Store::open(url, card, opts).await?))
    }

    pub fn new(store: Store) -> Engine {
        Engine {
            store,
            lanes: Arc::default(),
            debits: DebitBatcher::default(),
        }
    }

    /// The same engine with debits batched by `opts` (set before it is shared).
    pub fn with_batching(mut self, opts: BatchOptions) -> Engine {
        self.debits = DebitBatcher::new(opts);
        self
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn card(&self) -> &RateCard {
        self.store.card()
    }

    /// The wake-up for workers long-polling `lane` in this process.
    pub fn lane_notify(&self, lane: &str) -> Arc<Notify> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        lanes.entry(lane.to_owned()).or_default().clone()
    }

    /// Submits a job and wakes a worker waiting on its lane.
    pub async fn submit(&self, req: &Submit) -> Result<Submitted, StoreError> {
        let submitted = self.store.submit(req).await?;
        if !submitted.replay {
            self.lane_notify(&submitted.job.lane).notify_one();
        }
        Ok(submitted)
    }

    /// A metered debit, group-committed with the debits that arrive while one is in
    /// flight (one transaction for all of them; see [`crate::batch`]).
    pub async fn debit(
        &self,
        account: &AccountId,
        usage: &Usage,
        key: &IdempotencyKey,
        job_ref: Option<&str>,
    ) -> Result<MoneyResult, StoreError> {
        let req = DebitRequest::new(usage, key, job_ref);
        self.debits.debit(&self.store, account, req).await
    }
}
