//! Retention: the prune pass deletes what outlived the card's `[retention]` windows —
//! idempotency records, finished jobs, ended webhook deliveries and the head of the event
//! feed — oldest first, a chunk per short write transaction. The ledger is never pruned.
//!
//! Order matters and is kept within a run: idempotency records before jobs (the card keeps
//! a job at least as long as keys, so a replayed submit never names a job that is gone),
//! deliveries before events (an event a delivery names stays). Each chunk raises its
//! table's mark in `retention_marks` in the same transaction, so the audit and the feed can
//! tell a pruned row from a missing one.
//! Must never: delete a ledger entry, an open job, a pending delivery, or an event in the
//! middle of the feed (only its head goes, so a cursor never lands in a hole).

use holdfast_core::decide::{MICROS_PER_SECOND, Timestamp};
use serde::Serialize;

use crate::driver::db::Arg;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::{in_write_tx, params, statement};

/// Most rows one prune transaction deletes: short enough that writers queued behind it
/// (SQLite's one writer) wait milliseconds.
pub const PRUNE_CHUNK: u64 = 2_000;

const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

static PRUNE_IDEMPOTENCY: Stmt = statement!("prune_idempotency");
static PRUNE_JOBS_LOCK: Stmt = statement!("prune_jobs_lock");
static PRUNE_JOBS: Stmt = statement!("prune_jobs");
static PRUNE_DELIVERIES: Stmt = statement!("prune_webhook_deliveries");
static PRUNE_EVENTS_HEAD: Stmt = statement!("prune_events_head");
static PRUNE_EVENTS: Stmt = statement!("prune_events");
static RAISE_MARK: Stmt = statement!(shared "raise_retention_mark");

/// Rows one prune deleted, per table.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    pub idempotency: u64,
    pub jobs: u64,
    pub webhook_deliveries: u64,
    pub events: u64,
}

impl PruneReport {
    pub fn total(&self) -> u64 {
        self.idempotency + self.jobs + self.webhook_deliveries + self.events
    }

    /// Both reports' counts added.
    pub fn plus(self, other: PruneReport) -> PruneReport {
        PruneReport {
            idempotency: self.idempotency + other.idempotency,
            jobs: self.jobs + other.jobs,
            webhook_deliveries: self.webhook_deliveries + other.webhook_deliveries,
            events: self.events + other.events,
        }
    }
}

/// The tables pruned, in the order a run takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Idempotency,
    Jobs,
    WebhookDeliveries,
    Events,
}

impl Table {
    const IN_ORDER: [Table; 4] = [
        Table::Idempotency,
        Table::Jobs,
        Table::WebhookDeliveries,
        Table::Events,
    ];

    fn name(self) -> &'static str {
        match self {
            Table::Idempotency => "idempotency",
            Table::Jobs => "jobs",
            Table::WebhookDeliveries => "webhook_deliveries",
            Table::Events => "events",
        }
    }

    fn report(self, n: u64) -> PruneReport {
        let mut r = PruneReport::default();
        *match self {
            Table::Idempotency => &mut r.idempotency,
            Table::Jobs => &mut r.jobs,
            Table::WebhookDeliveries => &mut r.webhook_deliveries,
            Table::Events => &mut r.events,
        } = n;
        r
    }
}

impl Store {
    /// Deletes up to `max_rows` rows past their windows (at the database clock), a chunk
    /// of at most [`PRUNE_CHUNK`] per transaction, table by table in order; a table is
    /// left only when nothing of it is past its window. Less than `max_rows` deleted means
    /// nothing is left to prune. Safe to run from several processes at once.
    pub async fn prune(&self, max_rows: u64) -> Result<PruneReport, StoreError> {
        let now = self.now().await?;
        let mut report = PruneReport::default();
        for table in Table::IN_ORDER {
            let cutoff = self.cutoff(table, now);
            loop {
                let budget = (max_rows - report.total()).min(PRUNE_CHUNK);
                if budget == 0 {
                    return Ok(report);
                }
                let n = self.prune_chunk(table, cutoff, budget).await?;
                report = report.plus(table.report(n));
                if n < budget {
                    break;
                }
            }
        }
        Ok(report)
    }

    /// Rows of `table` made (or, for jobs and deliveries, ended) before this go.
    fn cutoff(&self, table: Table, now: Timestamp) -> Timestamp {
        let r = &self.card().retention;
        let days = match table {
            Table::Idempotency => r.idempotency_days,
            Table::Jobs => r.jobs_days,
            Table::WebhookDeliveries => r.webhook_deliveries_days,
            Table::Events => r.events_days,
        };
        now - days * MICROS_PER_DAY
    }

    /// One chunk of one table in one transaction, with its mark raised when it deleted.
    async fn prune_chunk(&self, table: Table, cutoff: i64, limit: u64) -> Result<u64, StoreError> {
        let limit = limit as i64;
        in_write_tx!(self, across Some(CrossAccount::Prune), |tx| async {
            let (deleted, last_position) = match table {
                Table::Events => {
                    let head = tx
                        .row(&PRUNE_EVENTS_HEAD, params! { cutoff: cutoff, limit: limit })
                        .await?;
                    let through = head.int("through")?;
                    let n = tx.exec(&PRUNE_EVENTS, params! { through: through }).await?;
                    (n, Some(through))
                }
                // Locked, then deleted by a statement of its own that looks again for a
                // refund that committed while the locks were taken (prune_jobs.sql).
                Table::Jobs => {
                    let locked = tx
                        .rows(&PRUNE_JOBS_LOCK, params! { cutoff: cutoff, limit: limit })
                        .await?;
                    let ids = (locked.iter().map(|r| r.text("job_id")))
                        .collect::<Result<Vec<String>, StoreError>>()?;
                    let mut n = 0;
                    if !ids.is_empty() {
                        let job_ids = Arg::texts(ids.iter().map(String::as_str));
                        let params = params! { cutoff: cutoff, job_ids: job_ids };
                        n = tx.exec(&PRUNE_JOBS, params).await?;
                    }
                    (n, None)
                }
                _ => {
                    let stmt = match table {
                        Table::Idempotency => &PRUNE_IDEMPOTENCY,
                        _ => &PRUNE_DELIVERIES,
                    };
                    let n = tx
                        .exec(stmt, params! { cutoff: cutoff, limit: limit })
                        .await?;
                    (n, None)
                }
            };
            if deleted > 0 {
                let mark = params! {
                    what: table.name(),
                    pruned_before: cutoff,
                    last_position: last_position,
                };
                tx.exec(&RAISE_MARK, mark).await?;
            }
            Ok(deleted)
        })
    }
}
