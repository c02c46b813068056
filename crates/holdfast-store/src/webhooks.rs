//! Webhook deliveries: one row per (event, endpoint), at least once, in order per account.
//!
//! The dispatcher (in the engine crate; this module does no HTTP) works in three steps,
//! each safe to run from several processes at once:
//! 1. [`Store::enqueue_deliveries`] turns outbox events after the endpoint's cursor into
//!    deliveries, in the outbox's one order (the same visibility rule as the cursor of
//!    `GET /v1/events`), under the cursor row's lock; so `delivery_id` order is outbox
//!    order per endpoint.
//! 2. [`Store::claim_deliveries`] leases due deliveries that are the head of their
//!    (endpoint, account) queue — no earlier delivery of that account to that endpoint is
//!    still pending — with `FOR UPDATE SKIP LOCKED` on PostgreSQL, and counts the attempt.
//!    A failing event therefore holds back the account's later events until it is
//!    delivered or dead.
//! 3. [`Store::delivery_succeeded`] / [`Store::delivery_failed`] record the outcome if the
//!    lease is still the caller's; a failure either schedules the next attempt or, after
//!    the last one, marks the delivery dead, visible in [`Store::dead_deliveries`] until
//!    [`Store::redeliver`] queues it again.
//!
//! Must never: write a balance or an event, or drop a delivery without marking it.

use holdfast_core::decide::Timestamp;
use serde::Serialize;

use crate::args;
use crate::db::Sql;
use crate::error::StoreError;
use crate::events::event_from;
use crate::model::{Event, Page};
use crate::store::{NOW, Store};
use crate::{in_read_tx, in_write_tx};

/// A leased delivery: the event to POST and the lease that records its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    pub delivery_id: i64,
    pub endpoint: String,
    /// Attempts so far, this one included.
    pub attempts: i64,
    pub event: Event,
    #[serde(skip)]
    pub lease_token: String,
}

/// A delivery that failed its last attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadDelivery {
    pub delivery_id: i64,
    pub event_id: i64,
    pub event_type: String,
    pub endpoint: String,
    pub account_id: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub dead_at: Option<Timestamp>,
}

/// What a failed attempt led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AfterFailure {
    /// Another attempt is due at this time.
    Retry(Timestamp),
    /// That was the last attempt.
    Dead,
    /// The lease had passed to someone else; nothing recorded.
    LeaseLost,
}

/// Outbox events after `$1` (0 = from the start), in the one order every reader sees.
const EVENTS_AFTER: Sql = Sql {
    postgres: "SELECT e.event_id, e.type, e.account_id, e.job_id, e.data, e.created_at FROM events e \
               WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot()) \
               AND ($1::bigint = 0 OR (e.xid, e.event_id) > (SELECT c.xid, c.event_id FROM events c WHERE c.event_id = $1)) \
               ORDER BY e.xid, e.event_id LIMIT $2",
    sqlite: "SELECT event_id, type, account_id, job_id, data, created_at FROM events \
             WHERE event_id > $1 ORDER BY event_id LIMIT $2",
};

const LOCK_CURSOR: Sql = Sql {
    postgres: "SELECT last_event_id FROM webhook_cursors WHERE endpoint = $1 FOR UPDATE",
    sqlite: "SELECT last_event_id FROM webhook_cursors WHERE endpoint = $1",
};

/// Leases the due heads of the endpoint's per-account queues. `$1` endpoint, `$2` now,
/// `$3` lease token, `$4` lease until, `$5` limit.
const CLAIM: Sql = Sql {
    postgres: "UPDATE webhook_deliveries SET lease_token = $3, lease_until = $4, attempts = attempts + 1 \
               WHERE delivery_id IN (SELECT d.delivery_id FROM webhook_deliveries d \
               WHERE d.endpoint = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2 \
               AND (d.lease_until IS NULL OR d.lease_until <= $2) \
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint = d.endpoint \
               AND p.account_id = d.account_id AND p.status = 'pending' AND p.delivery_id < d.delivery_id) \
               ORDER BY d.delivery_id LIMIT $5 FOR UPDATE SKIP LOCKED) \
               RETURNING delivery_id, event_id, attempts",
    sqlite: "UPDATE webhook_deliveries SET lease_token = $3, lease_until = $4, attempts = attempts + 1 \
             WHERE delivery_id IN (SELECT d.delivery_id FROM webhook_deliveries d \
             WHERE d.endpoint = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2 \
             AND (d.lease_until IS NULL OR d.lease_until <= $2) \
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint = d.endpoint \
             AND p.account_id = d.account_id AND p.status = 'pending' AND p.delivery_id < d.delivery_id) \
             ORDER BY d.delivery_id LIMIT $5) \
             RETURNING delivery_id, event_id, attempts",
};

impl Store {
    /// Turns up to `max_events` outbox events after the endpoint's cursor into pending
    /// deliveries (those whose type passes `types`, when given) and moves the cursor past
    /// them. Returns how many events it read (fewer than `max_events`: caught up).
    pub async fn enqueue_deliveries(
        &self,
        endpoint: &str,
        types: Option<&[String]>,
        max_events: i64,
    ) -> Result<u64, StoreError> {
        let limit = max_events.clamp(1, crate::accounts::MAX_PAGE);
        in_write_tx!(self, |tx| async {
            tx.execute(
                Sql::both(
                    "INSERT INTO webhook_cursors (endpoint, last_event_id) VALUES ($1, 0) \
                     ON CONFLICT (endpoint) DO NOTHING",
                ),
                args![endpoint],
            )
            .await?;
            let cursor = tx
                .fetch_one(LOCK_CURSOR, args![endpoint])
                .await?
                .int("last_event_id")?;
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let rows = tx.fetch_all(EVENTS_AFTER, args![cursor, limit]).await?;
            let mut last = cursor;
            for r in &rows {
                let e = event_from(r)?;
                last = e.event_id;
                if types.is_some_and(|t| !t.contains(&e.event_type)) {
                    continue;
                }
                tx.execute(
                        Sql::both(
                            "INSERT INTO webhook_deliveries (event_id, endpoint, account_id, status, next_attempt_at, created_at) \
                             VALUES ($1, $2, $3, 'pending', $4, $4) ON CONFLICT (event_id, endpoint) DO NOTHING",
                        ),
                        args![e.event_id, endpoint, e.account_id.as_str(), now],
                    )
                    .await?;
            }
            if last != cursor {
                tx.execute(
                    Sql::both("UPDATE webhook_cursors SET last_event_id = $2 WHERE endpoint = $1"),
                    args![endpoint, last],
                )
                .await?;
            }
            Ok(rows.len() as u64)
        })
    }

    /// Leases up to `limit` due deliveries to `endpoint` for `lease_micros`, at most one
    /// per account (the head of its queue), and counts the attempt.
    pub async fn claim_deliveries(
        &self,
        endpoint: &str,
        limit: i64,
        lease_micros: i64,
    ) -> Result<Vec<Delivery>, StoreError> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        in_write_tx!(self, |tx| async {
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let claimed = tx
                .fetch_all(
                    CLAIM,
                    args![endpoint, now, token.as_str(), now + lease_micros, limit],
                )
                .await?;
            let mut out = Vec::with_capacity(claimed.len());
            for c in claimed {
                let row = tx
                    .fetch_one(
                        Sql::both(
                            "SELECT event_id, type, account_id, job_id, data, created_at FROM events WHERE event_id = $1",
                        ),
                        args![c.int("event_id")?],
                    )
                    .await?;
                out.push(Delivery {
                    delivery_id: c.int("delivery_id")?,
                    endpoint: endpoint.to_owned(),
                    attempts: c.int("attempts")?,
                    event: event_from(&row)?,
                    lease_token: token.clone(),
                });
            }
            out.sort_by_key(|d| d.delivery_id);
            Ok(out)
        })
    }

    /// Records a delivered event. False when the lease had passed to someone else.
    pub async fn delivery_succeeded(&self, d: &Delivery) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let n = tx
                .execute(
                    Sql::both(
                        "UPDATE webhook_deliveries SET status = 'delivered', finished_at = $3, lease_token = NULL, \
                         lease_until = NULL, last_error = NULL \
                         WHERE delivery_id = $1 AND lease_token = $2 AND status = 'pending'",
                    ),
                    args![d.delivery_id, d.lease_token.as_str(), now],
                )
                .await?;
            Ok(n == 1)
        })
    }

    /// Records a failed attempt: the next attempt after `retry_micros`, or dead when this
    /// was attempt `max_attempts`.
    pub async fn delivery_failed(
        &self,
        d: &Delivery,
        error: &str,
        retry_micros: i64,
        max_attempts: i64,
    ) -> Result<AfterFailure, StoreError> {
        let error: String = error.chars().take(500).collect();
        in_write_tx!(self, |tx| async {
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let row = tx
                .fetch_optional(
                    Sql::both(
                        "UPDATE webhook_deliveries SET \
                         status = CASE WHEN attempts >= $3 THEN 'dead' ELSE 'pending' END, \
                         finished_at = CASE WHEN attempts >= $3 THEN $4 ELSE NULL END, \
                         next_attempt_at = $5, lease_token = NULL, lease_until = NULL, last_error = $6 \
                         WHERE delivery_id = $1 AND lease_token = $2 AND status = 'pending' \
                         RETURNING status, next_attempt_at",
                    ),
                    args![d.delivery_id, d.lease_token.as_str(), max_attempts, now, now + retry_micros, error.as_str()],
                )
                .await?;
            Ok(match row {
                None => AfterFailure::LeaseLost,
                Some(r) if r.text("status")? == "dead" => AfterFailure::Dead,
                Some(r) => AfterFailure::Retry(r.int("next_attempt_at")?),
            })
        })
    }

    /// Dead deliveries, oldest first, after the `after` delivery id, optionally of one
    /// endpoint.
    pub async fn dead_deliveries(
        &self,
        endpoint: Option<&str>,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Page<DeadDelivery>, StoreError> {
        let limit = limit.clamp(1, crate::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let rows = tx
                .fetch_all(
                    Sql {
                        postgres: "SELECT d.delivery_id, d.event_id, e.type, d.endpoint, d.account_id, d.attempts, \
                                   d.last_error, d.created_at, d.finished_at FROM webhook_deliveries d \
                                   JOIN events e ON e.event_id = d.event_id \
                                   WHERE d.status = 'dead' AND d.delivery_id > $1 AND ($2::text IS NULL OR d.endpoint = $2) \
                                   ORDER BY d.delivery_id LIMIT $3",
                        sqlite: "SELECT d.delivery_id, d.event_id, e.type, d.endpoint, d.account_id, d.attempts, \
                                 d.last_error, d.created_at, d.finished_at FROM webhook_deliveries d \
                                 JOIN events e ON e.event_id = d.event_id \
                                 WHERE d.status = 'dead' AND d.delivery_id > $1 AND ($2 IS NULL OR d.endpoint = $2) \
                                 ORDER BY d.delivery_id LIMIT $3",
                    },
                    args![after.unwrap_or(0), endpoint, limit],
                )
                .await?;
            let items = rows
                .iter()
                .map(|r| {
                    Ok(DeadDelivery {
                        delivery_id: r.int("delivery_id")?,
                        event_id: r.int("event_id")?,
                        event_type: r.text("type")?,
                        endpoint: r.text("endpoint")?,
                        account_id: r.text("account_id")?,
                        attempts: r.int("attempts")?,
                        last_error: r.opt_text("last_error")?,
                        created_at: r.int("created_at")?,
                        dead_at: r.opt_int("finished_at")?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let next = items.last().map(|d| d.delivery_id).or(after);
            Ok(Page { items, next })
        })
    }

    /// Queues a dead (or already delivered) delivery again with fresh attempts. False when
    /// there is no such delivery or it is still pending.
    pub async fn redeliver(&self, event_id: i64, endpoint: &str) -> Result<bool, StoreError> {
        in_write_tx!(self, |tx| async {
            let now = tx.fetch_one(NOW, args![]).await?.int("now")?;
            let n = tx
                .execute(
                    Sql::both(
                        "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3, \
                         lease_token = NULL, lease_until = NULL, finished_at = NULL \
                         WHERE event_id = $1 AND endpoint = $2 AND status IN ('dead', 'delivered')",
                    ),
                    args![event_id, endpoint, now],
                )
                .await?;
            Ok(n == 1)
        })
    }
}
