//! holdfast-store: the store operations over SQLite and PostgreSQL.
//!
//! Owns: the schema and its migrations (one set per backend), every statement, and the
//! unit of work (lock the account → read → decide with `holdfast-core` → write balance,
//! ledger and outbox → commit). It is the only code that writes balances.
//! Must never: take a decision of its own (those live in `holdfast-core::decide`), or
//! write a balance without its ledger entry in the same transaction.
//!
//! Layout: one module per aggregate — [`accounts`], [`money`], [`jobs`] (and
//! [`job_batch`], its batched worker calls), [`refunds`]
//! (job refunds, grants), [`events`],
//! [`webhooks`], [`keys`], [`passes`] (sweeper, notices), [`reactivate`], [`reconcile`],
//! [`retention`] (prune), [`audit`], [`backup`] (a SQLite copy, the checkpoint at a stop) — over a small shared layer: [`store`] (the transaction and its retries),
//! [`account_state`] (locking and reading an account), [`writes`] (ledger entries, events,
//! refills, the money write), [`db`] and [`statement`] (the two backends, statements
//! bound by name), [`group`] (SQLite's write gate, where queued units of work share a
//! commit). Every statement lives in `sql/<dialect>/NAME.sql` or
//! `sql/shared/NAME.sql` (see `docs/DESIGN.md`, "SQL files"); `tests/statements.rs`
//! prepares each against a freshly migrated database of its dialect.

pub mod account_state;
pub mod accounts;
pub mod actor;
pub mod audit;
pub mod backup;
pub mod bans;
pub mod db;
pub mod error;
pub mod events;
pub mod export;
pub mod failover;
pub mod group;
pub mod ingest;
pub mod job_batch;
pub mod jobs;
pub mod keys;
pub mod listing;
pub mod model;
pub mod money;
pub mod overview;
pub mod passes;
pub mod reactivate;
pub mod reconcile;
pub mod refunds;
pub mod retention;
pub mod schema;
pub mod scope;
pub mod statement;
pub mod stats;
pub mod store;
pub mod submit_batch;
pub mod webhooks;
pub mod writes;

pub use accounts::PutAccount;
pub use bans::Banned;
pub use db::{Dialect, PoolOptions, SqliteSync};
pub use error::StoreError;
pub use events::EventFilter;
pub use export::LedgerFilter;
pub use holdfast_core::decide::Usage;
pub use holdfast_core::{AccountStatus, StatusMarks};
pub use job_batch::{CompleteJob, FailJob, JobAnswers, MAX_JOB_BATCH};
pub use jobs::{CancelOutcome, Submit};
pub use keys::key_hash;
pub use listing::{AccountFilter, AccountPage, JobFilter};
pub use model::*;
pub use money::{CreditKind, DebitRequest, MAX_PAGE};
pub use refunds::{Grant, Granted, JobRefund, JobRefunded};
pub use retention::{PRUNE_CHUNK, PruneReport};
pub use schema::SchemaMismatch;
pub use scope::CrossAccount;
pub use store::Store;
pub use submit_batch::QueuedSubmit;
