//! The engine: a store with its rate card, plus the wake-ups long-polling workers wait on.
//!
//! [`Engine`] is the one public API of the library: the HTTP API and the operator CLI call
//! its methods and nothing below it. Each operation is a thin delegation to the store,
//! except that debits are batched and a submit wakes a worker. The methods live in one
//! file per aggregate: `accounts` (put, read, activity, block), `money` (credit, debit,
//! refund, ledger), `jobs` (submit, read, list, cancel; lease, heartbeat, complete,
//! fail), `events` (the outbox, webhook deliveries), `ops` (passes, audit, clock, stats)
//! and `keys` (API keys).

mod accounts;
mod events;
mod jobs;
mod keys;
mod money;
mod ops;
mod overview;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use holdfast_core::RateCard;
use holdfast_store::{PoolOptions, Store, StoreError};

use crate::batch::{BatchOptions, DebitBatcher, SubmitBatcher};
use tokio::sync::Notify;

/// A deployment: one database, one rate card.
#[derive(Clone)]
pub struct Engine {
    /// The store beneath (the passes and the dispatcher of this crate reach it too).
    pub(crate) store: Store,
    lanes: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    debits: DebitBatcher,
    submits: SubmitBatcher,
}

impl Engine {
    /// Opens the database by URL (`sqlite://…` or `postgres://…`), migrates it, and checks
    /// the card still covers the live data.
    pub async fn open(url: &str, card: RateCard) -> Result<Engine, StoreError> {
        Self::open_with(url, card, &PoolOptions::default()).await
    }

    /// [`Engine::open`] with the connection pool's options.
    pub async fn open_with(
        url: &str,
        card: RateCard,
        opts: &PoolOptions,
    ) -> Result<Engine, StoreError> {
        Ok(Engine::new(Store::open(url, card, opts).await?))
    }

    /// As [`Engine::open_with`], on a database that already holds this build's schema:
    /// nothing is created or migrated (see [`Store::open_existing`]). The operator CLI
    /// opens every database but `migrate`'s this way.
    pub async fn open_existing(
        url: &str,
        card: RateCard,
        opts: &PoolOptions,
    ) -> Result<Engine, StoreError> {
        Ok(Engine::new(Store::open_existing(url, card, opts).await?))
    }

    /// The engine over a store that is already open.
    pub fn new(store: Store) -> Engine {
        Engine {
            store,
            lanes: Arc::default(),
            debits: DebitBatcher::default(),
            submits: SubmitBatcher::default(),
        }
    }

    /// The same engine with debits batched by `opts` (set before it is shared).
    pub fn with_batching(mut self, opts: BatchOptions) -> Engine {
        self.debits = DebitBatcher::new(opts);
        self
    }

    /// The same engine with submits batched by `opts` (set before it is shared).
    pub fn with_submit_batching(mut self, opts: BatchOptions) -> Engine {
        self.submits = SubmitBatcher::new(opts);
        self
    }

    /// The store beneath the engine, for tests that read or break its tables (the
    /// `testing` feature only). Applications, the HTTP API, the CLI and the bench use the
    /// engine's own methods, which are the library's API.
    #[cfg(feature = "testing")]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The rate card in force.
    pub fn card(&self) -> &RateCard {
        self.store.card()
    }

    /// The wake-up for workers long-polling `lane` in this process.
    pub fn lane_notify(&self, lane: &str) -> Arc<Notify> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        lanes.entry(lane.to_owned()).or_default().clone()
    }
}
