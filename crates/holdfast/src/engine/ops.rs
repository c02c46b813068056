//! Operations: the passes run on demand, the audit, the database clock, the numbers behind
//! the metrics.

use holdfast_core::Timestamp;
use holdfast_store::reads::stats::Stats;
use holdfast_store::{PassReport, PruneReport, StoreError, Violation};

use super::Engine;

impl Engine {
    /// The sweeper: expires in-progress jobs whose lease passed and open jobs older than
    /// the card's `stale_after_seconds`, releasing their holds; at most `max_jobs`.
    pub async fn sweep(&self, max_jobs: u64) -> Result<PassReport, StoreError> {
        self.store.sweep(max_jobs).await
    }

    /// The event feed's sequencer, run now: on PostgreSQL every committed event without a
    /// position gets the next positions of the feed (the passes run it on their own);
    /// on SQLite there is nothing to do. Returns how many.
    pub async fn stamp_events(&self) -> Result<u64, StoreError> {
        self.store.stamp_events().await
    }

    /// The notice pass: `job.waiting` once for each open job whose notice time passed; at
    /// most `max_jobs`.
    pub async fn notices(&self, max_jobs: u64) -> Result<PassReport, StoreError> {
        self.store.notices(max_jobs).await
    }

    /// Reconciliation: every pocket of up to `max_accounts` accounts against its ledger,
    /// going on from where the previous run stopped; a difference is explained by one
    /// `adjustment` entry, drift in `held` or the counters is reported.
    pub async fn reconcile(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        self.store.reconcile(max_accounts).await
    }

    /// Reactivation: refills up to `max_accounts` idle accounts below quota whose window
    /// has passed, emitting `allowance.refilled` for each.
    pub async fn reactivate(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        self.store.reactivate(max_accounts).await
    }

    /// Expiry: writes off what is left of the credit blocks past their expiry, on up to
    /// `max_accounts` accounts, with `credit.expired` for each block.
    pub async fn expire_blocks(&self, max_accounts: u64) -> Result<PassReport, StoreError> {
        self.store.expire_blocks(max_accounts).await
    }

    /// Retention: deletes up to `max_rows` idempotency records, finished jobs, ended
    /// webhook deliveries and events past the card's `[retention]` windows, oldest first,
    /// in short transactions. Never the ledger. Less than `max_rows`: nothing is left.
    pub async fn prune(&self, max_rows: u64) -> Result<PruneReport, StoreError> {
        self.store.prune(max_rows).await
    }

    /// Checks the invariants of DESIGN.md over the whole database; empty when all hold.
    pub async fn audit(&self) -> Result<Vec<Violation>, StoreError> {
        self.store.audit().await
    }

    /// The database clock. Also the health check: an error means the database does not
    /// answer.
    pub async fn now(&self) -> Result<Timestamp, StoreError> {
        self.store.now().await
    }

    /// The end of a `[from, to)` report period asked "up to now": one microsecond past
    /// the database clock's reading, so every entry written before the request is in
    /// it — SQLite's clock counts milliseconds, and an entry written just before the
    /// reading may carry the very same one.
    pub async fn period_end_now(&self) -> Result<Timestamp, StoreError> {
        Ok(self.store.now().await? + 1)
    }

    /// The numbers behind the gauges: jobs per lane and status, open holds, money held.
    pub async fn stats(&self) -> Result<Stats, StoreError> {
        self.store.stats().await
    }

    /// Ends the engine's use of the database, for a process that stops after its last
    /// operation: on SQLite the write-ahead log is checkpointed into the main file and
    /// truncated, so the file alone holds every commit (a copy of it is whole), then every
    /// connection closes. Whether the checkpoint completed: not while another process is
    /// using the file (it then keeps the log until its own checkpoint).
    pub async fn close(&self) -> Result<bool, StoreError> {
        self.store.pool().checkpoint_and_close().await
    }
}
