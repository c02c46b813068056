//! The store: one database with one rate card, and the transaction layer every unit of
//! work runs in — begin, (lock, read, let the core decide, apply), commit — with the
//! retries on deadlock, serialization failure and a busy database in one place.

use std::sync::Arc;
use std::time::Duration;

use holdfast_core::RateCard;
use holdfast_core::decide::Timestamp;

use crate::driver::db::{Dialect, Pool, PoolOptions, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::{params, statement};

/// How many times a transaction is tried when it meets a deadlock, a serialization
/// failure or a busy database.
pub const MAX_ATTEMPTS: u32 = 8;

/// How a unit of work's write transaction may fail: the store's error, or a type of the
/// unit's own that adds signals only it acts on (redo the call another way, run the
/// transaction again), so that [`StoreError`] carries only what a caller can act on.
pub(crate) trait TxFailure: From<StoreError> {
    /// Whether the whole transaction may be run again.
    fn is_retryable(&self) -> bool;
}

impl TxFailure for StoreError {
    fn is_retryable(&self) -> bool {
        StoreError::is_retryable(self)
    }
}

/// Runs `$body` (an expression using `$tx: &mut Tx`) in a write transaction, commits on
/// `Ok`, rolls back on `Err`, and retries the whole transaction on contention. The body
/// fails with [`StoreError`], or with a unit's own [`TxFailure`] (`fails Type`).
#[macro_export]
macro_rules! in_write_tx {
    ($store:expr, |$tx:ident| $body:expr) => {
        $crate::in_write_tx!($store, across None, fails $crate::error::StoreError, |$tx| $body)
    };
    ($store:expr, fails $fail:ty, |$tx:ident| $body:expr) => {
        $crate::in_write_tx!($store, across None, fails $fail, |$tx| $body)
    };
    ($store:expr, across $why:expr, |$tx:ident| $body:expr) => {
        $crate::in_write_tx!($store, across $why, fails $crate::error::StoreError, |$tx| $body)
    };
    // `across`: an `Option<CrossAccount>`, the mark of a transaction that changes rows of
    // several accounts by design (see `Pool::begin_write_across`).
    ($store:expr, across $why:expr, fails $fail:ty, |$tx:ident| $body:expr) => {{
        let across: Option<$crate::scope::CrossAccount> = $why;
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let mut tx = match $store.pool().begin_write_across(across).await {
                Ok(tx) => tx,
                Err(e) if e.is_retryable() && attempt < $crate::store::MAX_ATTEMPTS => {
                    $crate::store::backoff(attempt).await;
                    continue;
                }
                Err(e) if e.is_retryable() => {
                    break Err(<$fail>::from($crate::error::StoreError::Contention(attempt)));
                }
                Err(e) => break Err(<$fail>::from(e)),
            };
            let result: Result<_, $fail> = {
                let $tx: &mut $crate::driver::db::Tx = &mut tx;
                $body.await
            };
            match result {
                Ok(value) => match tx.commit().await {
                    Ok(()) => break Ok(value),
                    Err(e) if e.is_retryable() && attempt < $crate::store::MAX_ATTEMPTS => {
                        $crate::store::backoff(attempt).await;
                    }
                    Err(e) => break Err(<$fail>::from(e)),
                },
                Err(e) => {
                    let _ = tx.rollback().await;
                    let retryable = $crate::store::TxFailure::is_retryable(&e);
                    if retryable && attempt < $crate::store::MAX_ATTEMPTS {
                        $crate::store::backoff(attempt).await;
                    } else if retryable {
                        break Err(<$fail>::from($crate::error::StoreError::Contention(attempt)));
                    } else {
                        break Err(e);
                    }
                }
            }
        }
    }};
}

/// Runs `$body` in a read transaction (one snapshot).
#[macro_export]
macro_rules! in_read_tx {
    ($store:expr, |$tx:ident| $body:expr) => {{
        let mut tx = $store.pool().begin_read().await?;
        let result: Result<_, $crate::error::StoreError> = {
            let $tx: &mut $crate::driver::db::Tx = &mut tx;
            $body.await
        };
        let _ = tx.rollback().await;
        result
    }};
}

pub async fn backoff(attempt: u32) {
    let jitter = u64::from(rand::random::<u8>() % 8);
    tokio::time::sleep(Duration::from_millis(u64::from(attempt) * 3 + jitter)).await;
}

/// The store over one database with one rate card.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    card: Arc<RateCard>,
}

static NOW_STATEMENT: Stmt = statement!("now");
static NAMES_IN_USE: Stmt = statement!(shared "names_in_use");

/// The database clock, in the caller's transaction.
pub(crate) async fn now(tx: &mut Tx) -> Result<Timestamp, StoreError> {
    tx.row(&NOW_STATEMENT, params! {}).await?.int("now")
}

impl Store {
    /// Connects by URL, runs the backend's migrations, and checks that the rate card still
    /// covers the live data.
    pub async fn open(url: &str, card: RateCard, opts: &PoolOptions) -> Result<Store, StoreError> {
        let pool = Pool::connect(url, opts).await?;
        pool.migrate().await?;
        let store = Store {
            pool,
            card: Arc::new(card),
        };
        store.check_card_covers_data().await?;
        Ok(store)
    }

    /// Connects by URL to a database that already holds this build's schema, creating
    /// and migrating nothing (a SQLite file that is not there stays not there), and checks
    /// that the rate card covers the live data. A database without the schema, or with
    /// an older or newer one, is [`StoreError::Schema`].
    pub async fn open_existing(
        url: &str,
        card: RateCard,
        opts: &PoolOptions,
    ) -> Result<Store, StoreError> {
        let pool = Pool::connect_existing(url, opts).await?;
        if let Some(mismatch) = pool.schema_mismatch().await? {
            pool.close().await;
            return Err(StoreError::Schema(mismatch));
        }
        let store = Store {
            pool,
            card: Arc::new(card),
        };
        store.check_card_covers_data().await?;
        Ok(store)
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub fn card(&self) -> &RateCard {
        &self.card
    }

    pub fn dialect(&self) -> Dialect {
        self.pool.dialect()
    }

    /// The database clock.
    pub async fn now(&self) -> Result<Timestamp, StoreError> {
        in_read_tx!(self, |tx| now(tx))
    }

    /// A card that no longer covers live data (a plan, kind, pocket or lane in use) is
    /// refused, naming what is missing.
    async fn check_card_covers_data(&self) -> Result<(), StoreError> {
        let card = self.card.clone();
        let rows = in_read_tx!(self, |tx| tx.rows(&NAMES_IN_USE, params! {}))?;
        for row in rows {
            let (what, name) = (row.text("what")?, row.text("name")?);
            let known = match what.as_str() {
                "plan" => card.plans.contains_key(&name),
                "allowance pocket" => card.allowances.contains_key(&name),
                "kind" => card.kinds.contains_key(&name),
                _ => card.is_lane(&name),
            };
            if !known {
                return Err(StoreError::Config(format!(
                    "the rate card no longer covers live data: {what} {name:?} is in use but not in the card"
                )));
            }
        }
        Ok(())
    }
}
