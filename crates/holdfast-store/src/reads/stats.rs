//! Numbers for dashboards (`/metrics`), read at scrape time in one snapshot. They take no
//! part in any decision.

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::store::Store;
use crate::{in_read_tx, params, statement};

static JOBS_BY_LANE_AND_STATUS: Stmt = statement!(shared "stats_jobs_by_lane_and_status");
static OPEN_JOBS_HOLDING: Stmt = statement!(shared "stats_open_jobs_holding");
static HELD_MONEY: Stmt = statement!(shared "stats_held_money");
static WEBHOOK_BACKLOG: Stmt = statement!(shared "stats_webhook_backlog");

/// One webhook endpoint's deliveries still to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookBacklog {
    pub endpoint: String,
    /// Deliveries queued and not yet delivered (nor dead).
    pub pending: i64,
    /// Deliveries that failed their last attempt (until redelivered).
    pub dead: i64,
    /// How long the oldest pending delivery has waited since it was queued; 0 when none.
    pub oldest_pending_micros: i64,
}

/// How many jobs are in one lane with one status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneCount {
    pub lane: String,
    pub status: String,
    pub jobs: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Jobs by lane and status (expired jobs are the ones the sweeper released).
    pub jobs: Vec<LaneCount>,
    /// Open jobs that hold something.
    pub open_holds: i64,
    /// Money held across all accounts, in micros.
    pub held_money_micros: i64,
    /// Endpoints with pending or dead deliveries.
    pub webhooks: Vec<WebhookBacklog>,
}

impl Stats {
    /// Jobs in `lane` with `status` (0 when none).
    pub fn count(&self, lane: &str, status: &str) -> i64 {
        self.jobs
            .iter()
            .find(|c| c.lane == lane && c.status == status)
            .map_or(0, |c| c.jobs)
    }
}

impl Store {
    /// Reads the dashboard numbers.
    pub async fn stats(&self) -> Result<Stats, StoreError> {
        in_read_tx!(self, |tx| async {
            let rows = tx.rows(&JOBS_BY_LANE_AND_STATUS, params! {}).await?;
            let jobs = rows
                .iter()
                .map(|r| {
                    Ok(LaneCount {
                        lane: r.text("lane")?,
                        status: r.text("status")?,
                        jobs: r.int("n")?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            Ok(Stats {
                jobs,
                ..holds_and_webhooks(tx).await?
            })
        })
    }

    /// The dashboard numbers but the job counts (`jobs` is empty): what the console's
    /// pages show, without counting every job the database keeps.
    pub async fn stats_of_holds_and_webhooks(&self) -> Result<Stats, StoreError> {
        in_read_tx!(self, |tx| async { holds_and_webhooks(tx).await })
    }
}

/// Open holds, held money and the webhook backlog, in `tx`'s snapshot.
async fn holds_and_webhooks(tx: &mut Tx) -> Result<Stats, StoreError> {
    let open_holds = tx.row(&OPEN_JOBS_HOLDING, params! {}).await?.int("n")?;
    let held_money_micros = tx.row(&HELD_MONEY, params! {}).await?.int("n")?;
    let now = crate::store::now(tx).await?;
    let webhooks = tx
        .rows(&WEBHOOK_BACKLOG, params! { now_micros: now })
        .await?
        .iter()
        .map(|r| {
            Ok(WebhookBacklog {
                endpoint: r.text("endpoint")?,
                pending: r.int("pending")?,
                dead: r.int("dead")?,
                oldest_pending_micros: r.int("oldest_pending_micros")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Stats {
        jobs: Vec::new(),
        open_holds,
        held_money_micros,
        webhooks,
    })
}
