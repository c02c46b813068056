//! holdfast: charge exactly once for asynchronous paid work.
//!
//! The engine over a store: opening a deployment (database + rate card), the public
//! library API ([`Engine`]'s methods), and the scheduled passes (sweeper, notices) that
//! `serve` runs. Everything a caller of the engine needs is named here, at the crate root:
//! the domain types of `holdfast-core` and the engine's requests and results.
//!
//! ```no_run
//! # async fn demo() -> Result<(), holdfast::StoreError> {
//! use holdfast::{Engine, RateCard};
//! let engine = Engine::open("sqlite://holdfast.db", RateCard::builtin()).await?;
//! let account = holdfast::AccountId::parse("user-1").unwrap();
//! let view = engine.get_account(&account).await;
//! # Ok(()) }
//! ```

pub mod batch;
pub mod engine;
pub mod schedules;
pub mod stripe;
#[cfg(feature = "testing")]
pub mod testing;
pub mod webhooks;

pub use engine::Engine;
pub use holdfast_core::{self as core, *};

/// A consistent copy of a live SQLite database (`holdfast backup`).
pub use holdfast_store::driver::backup::{SqliteBackup, backup_sqlite};

/// Who caused a change: name the actor of a piece of work with [`actor::acting_as`].
pub use holdfast_store::actor;

// The engine's requests and results.
pub use holdfast_core::model::{
    AccountView, AllowanceView, ApiKey, BalanceAt, BlockAt, BlockView, Event, Heartbeat, Job,
    JobActors, JobKindSpend, Lease, LedgerEntry, MeterSpend, MoneyResult, Page, PassReport,
    PocketAt, SpendView, Statement, StatementLine, Submitted, Violation,
};
/// Most jobs one batched complete or fail takes.
pub use holdfast_store::MAX_JOB_BATCH;
/// The file a `sqlite:` URL names.
pub use holdfast_store::driver::db::sqlite_file;
/// How many jobs one chunk of a pass takes.
pub use holdfast_store::passes::sweep::CHUNK as PASS_CHUNK;
pub use holdfast_store::passes::webhooks::DeadDelivery;
/// The ledger entry kinds (`top_up`, `debit`, …), for a filter's validation.
pub use holdfast_store::reads::export::ENTRY_KINDS;
pub use holdfast_store::reads::overview::{AccountCounts, DeliveryRow, FinishedInMinute, OpenLane};
pub use holdfast_store::reads::stats::{LaneCount, Stats};
/// Largest page a listing returns (`limit` is clamped to 1 ..= this).
pub use holdfast_store::units::accounts::MAX_PAGE;
/// Hold or charge lines as the API writes them.
pub use holdfast_store::units::jobs::lines_json;
pub use holdfast_store::{
    AccountFilter, AccountPage, AccountStatus, Banned, CancelOutcome, CompleteJob, CreditKind,
    CustomerAccount, EventFilter, FailJob, Grant, Granted, JobAnswers, JobFilter, JobRefund,
    JobRefunded, LedgerFilter, PRUNE_CHUNK, PruneReport, PutAccount, SchemaMismatch, StoreError,
    Submit, Usage, UsageGrouping, UsageQuery, key_hash,
};

// A debit as `Engine::debit_many` takes it, and how a database is opened.
pub use holdfast_store::{DebitRequest, PoolOptions, SqliteSync};
