//! What every handler can reach: the engine, the environment's admin key, the per-key
//! rate limit, and whether the server is stopping.

use std::sync::Arc;
use std::time::Duration;

use holdfast::{Engine, key_hash};
use subtle::ConstantTimeEq;
use tokio::sync::watch;

use super::limits::KeyLimiter;
use super::metrics::GaugeRefresh;
use crate::console::Console;

/// The engine, the environment's admin key, the rate limit, and whether the server is
/// stopping.
#[derive(Clone)]
pub struct AppState {
    pub engine: Engine,
    pub env_key: EnvKey,
    /// The per-key request rate limit, when there is one.
    pub limiter: Option<Arc<KeyLimiter>>,
    /// Turns true when the server is shutting down (long-polls answer at once).
    pub shutdown: watch::Receiver<bool>,
    /// The console's sessions and what it remembers (the last audit).
    pub console: Arc<Console>,
    /// The longest a request may take (`--request-timeout-seconds`); a lease adds its
    /// own `wait_ms`.
    pub request_timeout: Duration,
    /// When `/metrics` last read its gauges from the database.
    pub gauges: Arc<GaugeRefresh>,
    /// A place for each CSV export that may stream at once (`--max-export-streams`).
    pub exports: Arc<tokio::sync::Semaphore>,
}

/// The most CSV exports one server streams at once unless `--max-export-streams` says
/// otherwise (each reads the ledger a page at a time for as long as its client reads);
/// one more is answered 429 `too_many_exports`.
pub const DEFAULT_MAX_EXPORT_STREAMS: u32 = 4;

/// The admin key given in the environment, kept as its hash.
#[derive(Clone, Default)]
pub struct EnvKey {
    hash: Option<String>,
}

impl EnvKey {
    pub fn new(key: Option<&str>) -> EnvKey {
        EnvKey {
            hash: key.filter(|k| !k.is_empty()).map(key_hash),
        }
    }

    pub fn is_set(&self) -> bool {
        self.hash.is_some()
    }

    /// Whether `hash` is this key's hash (in constant time).
    pub fn matches(&self, hash: &str) -> bool {
        self.hash
            .as_deref()
            .is_some_and(|h| bool::from(h.as_bytes().ct_eq(hash.as_bytes())))
    }
}
