//! holdfast: charge exactly once for asynchronous paid work.
//!
//! The engine over a [`Store`]: opening a deployment (database + rate card), the public
//! library API, and the scheduled passes (sweeper, notices) that `serve` runs.
//!
//! ```no_run
//! # async fn demo() -> Result<(), holdfast::StoreError> {
//! use holdfast::{Engine, RateCard};
//! let engine = Engine::open("sqlite://holdfast.db", RateCard::builtin()).await?;
//! let account = holdfast::AccountId::parse("user-1").unwrap();
//! let view = engine.store().get_account(&account).await;
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
pub use holdfast_store::{self as store, *};
