//! The events outbox, read by cursor.
//!
//! On PostgreSQL event ids come from an identity sequence at insert, not at commit, so a
//! later id can commit first. The feed's order is therefore stamped after commit: one
//! sequencer at a time ([`Store::stamp_events`], under an advisory lock) gives every
//! committed event without one the next `position`, and readers page by position. A
//! cursor never skips an event that commits late (it gets a later position) nor repeats
//! one, and only an event's own writing transaction can hold it back — not, as with the
//! `xid < pg_snapshot_xmin` rule this replaced, any long transaction on the cluster.
//! Readers stamp before they read, so an event is listed as soon as it is committed.
//! SQLite has one writer at a time, so its ids are in commit order and need no stamp.

use crate::driver::db::Dialect;
use crate::driver::db::Row;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{Event, Page};
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::{in_read_tx, in_write_tx, params, statement};

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
static LOCK_EVENT_SEQUENCER: Stmt = statement!("lock_event_sequencer");
static STAMP_EVENTS: Stmt = statement!("stamp_events");

/// Most events one sequencer transaction stamps.
const STAMP_CHUNK: i64 = 5_000;

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
    /// PostgreSQL: gives every committed event without a position the next positions of
    /// the feed, a chunk per short transaction, and returns how many. SQLite: nothing to
    /// do. Safe from any number of processes at once (they take turns).
    pub async fn stamp_events(&self) -> Result<u64, StoreError> {
        if self.dialect() != Dialect::Postgres {
            return Ok(0);
        }
        let mut stamped = 0;
        loop {
            let n = in_write_tx!(self, across Some(CrossAccount::StampEvents), |tx| async {
                tx.exec(&LOCK_EVENT_SEQUENCER, params! {}).await?;
                tx.exec(&STAMP_EVENTS, params! { limit: STAMP_CHUNK }).await
            })?;
            stamped += n;
            if n < STAMP_CHUNK as u64 {
                return Ok(stamped);
            }
        }
    }

    /// Events after the cursor, in the one order every reader sees (stamped first, so
    /// every event committed before the call is there).
    pub async fn events(&self, f: &EventFilter) -> Result<Page<Event>, StoreError> {
        self.stamp_events().await?;
        let limit = f.limit.clamp(1, crate::units::accounts::MAX_PAGE);
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
