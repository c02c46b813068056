//! The events outbox, read by cursor.
//!
//! On PostgreSQL event ids come from an identity sequence at insert, not at commit, so a
//! later id can commit first. Readers therefore see only events whose writing transaction
//! is older than every transaction still in flight (`xid < pg_snapshot_xmin(...)`), and
//! page in `(xid, event_id)` order: that prefix is final, so a cursor never skips an event
//! that commits late. SQLite has one writer at a time, so ids are in commit order.

use crate::db::Row;
use crate::error::StoreError;
use crate::model::{Event, Page};
use crate::statement::Stmt;
use crate::store::Store;
use crate::{in_read_tx, params, statement};

/// Filters of an event listing.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub after: Option<i64>,
    pub limit: i64,
    pub account_id: Option<String>,
    pub event_type: Option<String>,
    /// Only events this actor caused (`key:<key id>`, `cli:<user>`, `system:<pass>`).
    pub actor: Option<String>,
}

static LIST_EVENTS: Stmt = statement!("list_events");

/// An event row, with the deployment's currency (the card's) beside it.
pub(crate) fn event_from(r: &Row, currency: &str) -> Result<Event, StoreError> {
    Ok(Event {
        currency: currency.to_owned(),
        event_id: r.int("event_id")?,
        event_type: r.text("type")?,
        account_id: r.text("account_id")?,
        job_id: r.opt_text("job_id")?,
        data: serde_json::from_str(&r.text("data")?)
            .map_err(|e| StoreError::Corrupt(format!("event data: {e}")))?,
        created_at: r.int("created_at")?,
        actor: r.opt_text("actor")?,
    })
}

impl Store {
    /// Events after the cursor, in the one order every reader sees.
    pub async fn events(&self, f: &EventFilter) -> Result<Page<Event>, StoreError> {
        let limit = f.limit.clamp(1, crate::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let filter = params! {
                after_event_id: f.after.unwrap_or(0),
                account_id: f.account_id.clone(),
                event_type: f.event_type.clone(),
                actor: f.actor.clone(),
                limit: limit,
            };
            let rows = tx.rows(&LIST_EVENTS, filter).await?;
            let items = rows
                .iter()
                .map(|r| event_from(r, &self.card().currency))
                .collect::<Result<Vec<_>, _>>()?;
            let next = items.last().map(|e| e.event_id).or(f.after);
            Ok(Page { items, next })
        })
    }
}
