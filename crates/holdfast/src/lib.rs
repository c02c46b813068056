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
#[cfg(feature = "testing")]
pub mod testing;
pub mod webhooks;

pub use engine::Engine;
pub use holdfast_core::{self as core, *};

/// A consistent copy of a live SQLite database (`holdfast backup`).
pub use holdfast_store::backup::{SqliteBackup, backup_sqlite};

/// Who caused a change: name the actor of a piece of work with [`actor::acting_as`].
pub use holdfast_store::actor;

// The engine's requests and results.
/// Most jobs one batched complete or fail takes.
pub use holdfast_store::MAX_JOB_BATCH;
/// Largest page a listing returns (`limit` is clamped to 1 ..= this).
pub use holdfast_store::accounts::MAX_PAGE;
/// The file a `sqlite:` URL names.
pub use holdfast_store::db::sqlite_file;
/// The ledger entry kinds (`top_up`, `debit`, …), for a filter's validation.
pub use holdfast_store::export::ENTRY_KINDS;
/// Hold or charge lines as the API writes them.
pub use holdfast_store::jobs::lines_json;
pub use holdfast_store::overview::{AccountCounts, DeliveryRow, FinishedInMinute, OpenLane};
/// How many jobs one chunk of a pass takes.
pub use holdfast_store::passes::CHUNK as PASS_CHUNK;
pub use holdfast_store::stats::{LaneCount, Stats};
pub use holdfast_store::webhooks::DeadDelivery;
pub use holdfast_store::{
    AccountFilter, AccountPage, AccountStatus, AccountView, AllowanceView, ApiKey, Banned,
    CancelOutcome, CompleteJob, CreditKind, Event, EventFilter, FailJob, Grant, Granted, Heartbeat,
    Job, JobAnswers, JobFilter, JobRefund, JobRefunded, Lease, LedgerEntry, LedgerFilter,
    MoneyResult, PRUNE_CHUNK, Page, PassReport, PruneReport, PutAccount, SchemaMismatch,
    StoreError, Submit, Submitted, Usage, Violation, key_hash,
};

// Opening a store by hand, and a debit or a submit as a batcher hands it to the store.
pub use holdfast_store::{DebitRequest, PoolOptions, QueuedSubmit, SqliteSync, Store};
