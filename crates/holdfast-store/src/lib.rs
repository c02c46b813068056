//! holdfast-store: the store operations over SQLite and PostgreSQL.
//!
//! Owns: the schema and its migrations (one set per backend), every statement, and the
//! unit of work (lock the account → read → decide with `holdfast-core` → write balance,
//! ledger and outbox → commit). It is the only code that writes balances.
//! Must never: take a decision of its own (those live in `holdfast-core::decide`), or
//! write a balance without its ledger entry in the same transaction.
//!
//! Layout, imports running down the list (a module uses those below it, never above):
//! - [`passes`]: the scheduled passes over many accounts (sweep and notices,
//!   reactivation, reconciliation, retention, webhooks, the audit);
//! - [`reads`]: read-only listings, export, overview, metrics and the event feed;
//! - [`units`]: the units of work, one module per aggregate ([`units::money`],
//!   [`units::ingest`], [`units::jobs`], [`units::finish`], [`units::submit`],
//!   [`units::refunds`], [`units::accounts`], [`units::bans`], [`units::keys`]) over the
//!   lock layer [`units::account_state`] and the shared writes [`units::writes`];
//! - [`store`]: the transaction and its retries, which every unit and pass runs in;
//! - [`driver`]: the dialect layer ([`driver::db`], [`driver::statement`],
//!   [`driver::schema`], [`driver::failover`], SQLite's [`driver::group`] commit and
//!   [`driver::backup`]), which knows nothing of accounts or money.
//!
//! Every statement lives in `sql/<dialect>/NAME.sql` or `sql/shared/NAME.sql` (see
//! `docs/DESIGN.md`, "SQL files"); `tests/statements.rs` prepares each against a freshly
//! migrated database of its dialect.

pub mod actor;
pub mod driver;
pub mod error;
/// The answer types, which live in core (every crate above the store names them).
pub use holdfast_core::model;
pub mod passes;
pub mod reads;
pub mod scope;
pub mod store;
pub mod units;

pub use driver::db::{Dialect, PoolOptions, SqliteSync};
pub use driver::schema::SchemaMismatch;
pub use error::StoreError;
pub use holdfast_core::decide::Usage;
pub use holdfast_core::{AccountStatus, StatusMarks};
pub use model::*;
pub use passes::retention::{PRUNE_CHUNK, PruneReport};
pub use reads::events::EventFilter;
pub use reads::export::LedgerFilter;
pub use reads::listing::{AccountFilter, AccountPage, JobFilter};
pub use reads::usage::{UsageGrouping, UsageQuery};
pub use scope::CrossAccount;
pub use store::Store;
pub use units::accounts::PutAccount;
pub use units::bans::Banned;
pub use units::finish::{CompleteJob, FailJob, JobAnswers, MAX_JOB_BATCH};
pub use units::jobs::CancelOutcome;
pub use units::keys::key_hash;
pub use units::money::{CreditKind, DebitRequest, MAX_PAGE};
pub use units::payments::{CustomerAccount, Dispute, DisputeStatus};
pub use units::refunds::{Grant, Granted, JobRefund, JobRefunded};
pub use units::submit::{QueuedSubmit, Submit};
