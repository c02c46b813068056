//! The events outbox, read by cursor.
//!
//! On PostgreSQL event ids come from an identity sequence at insert, not at commit, so a
//! later id can commit first. Readers therefore see only events whose writing transaction
//! is older than every transaction still in flight (`xid < pg_snapshot_xmin(...)`), and
//! page in `(xid, event_id)` order: that prefix is final, so a cursor never skips an event
//! that commits late. SQLite has one writer at a time, so ids are in commit order.

use crate::args;
use crate::db::{Row, Sql};
use crate::error::StoreError;
use crate::in_read_tx;
use crate::model::{Event, Page};
use crate::store::Store;

/// Filters of an event listing.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub after: Option<i64>,
    pub limit: i64,
    pub account_id: Option<String>,
    pub event_type: Option<String>,
}

const LIST: Sql = Sql {
    postgres: "SELECT e.event_id, e.type, e.account_id, e.job_id, e.data, e.created_at FROM events e \
               WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot()) \
               AND ($1::bigint = 0 OR (e.xid, e.event_id) > (SELECT c.xid, c.event_id FROM events c WHERE c.event_id = $1)) \
               AND ($2::text IS NULL OR e.account_id = $2) AND ($3::text IS NULL OR e.type = $3) \
               ORDER BY e.xid, e.event_id LIMIT $4",
    sqlite: "SELECT event_id, type, account_id, job_id, data, created_at FROM events \
             WHERE event_id > $1 AND ($2 IS NULL OR account_id = $2) AND ($3 IS NULL OR type = $3) \
             ORDER BY event_id LIMIT $4",
};

pub(crate) fn event_from(r: &Row) -> Result<Event, StoreError> {
    Ok(Event {
        event_id: r.int("event_id")?,
        event_type: r.text("type")?,
        account_id: r.text("account_id")?,
        job_id: r.opt_text("job_id")?,
        data: serde_json::from_str(&r.text("data")?)
            .map_err(|e| StoreError::Corrupt(format!("event data: {e}")))?,
        created_at: r.int("created_at")?,
    })
}

impl Store {
    /// Events after the cursor, in the one order every reader sees.
    pub async fn events(&self, f: &EventFilter) -> Result<Page<Event>, StoreError> {
        let limit = f.limit.clamp(1, crate::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let rows = tx
                .fetch_all(
                    LIST,
                    args![
                        f.after.unwrap_or(0),
                        f.account_id.clone(),
                        f.event_type.clone(),
                        limit
                    ],
                )
                .await?;
            let items = rows.iter().map(event_from).collect::<Result<Vec<_>, _>>()?;
            let next = items.last().map(|e| e.event_id).or(f.after);
            Ok(Page { items, next })
        })
    }
}
