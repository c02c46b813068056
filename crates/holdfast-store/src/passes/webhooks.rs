//! Webhook deliveries: one row per (event, endpoint), at least once, in order per account.
//!
//! The dispatcher (in the engine crate; this module does no HTTP) works in three steps,
//! each safe to run from several processes at once:
//! 1. [`Store::enqueue_deliveries`] turns outbox events after the endpoint's cursor into
//!    deliveries, in the outbox's one order (the feed's positions, as the cursor of
//!    `GET /v1/events`), under the cursor row's lock; so `delivery_id` order is outbox
//!    order per endpoint.
//! 2. [`Store::claim_deliveries`] leases due deliveries that are the head of their
//!    (endpoint, account) queue — no earlier delivery of that account to that endpoint is
//!    still pending — with `FOR UPDATE SKIP LOCKED` on PostgreSQL.
//!    A failing event therefore holds back the account's later events until it is
//!    delivered or dead.
//! 3. [`Store::delivery_succeeded`] / [`Store::delivery_failed`] record the outcome if the
//!    lease is still the caller's, and only then count the attempt: a dispatcher that dies
//!    between sending and recording costs no attempt (its lease runs out and the delivery
//!    is sent again: at least once) and can never push a delivery past its last; a failure either schedules the next attempt or, after
//!    the last one, marks the delivery dead, visible in [`Store::dead_deliveries`] until
//!    [`Store::redeliver`] queues it again.
//!
//! Must never: write a balance or an event, or drop a delivery without marking it.

use holdfast_core::decide::Timestamp;
use holdfast_core::ratecard::FeedStart;
use serde::Serialize;

use crate::driver::db::Tx;
use crate::driver::statement::{BindByName, Stmt};
use crate::error::StoreError;
use crate::model::{Event, Page};
use crate::reads::events::event_from;
use crate::scope::CrossAccount;
use crate::store::Store;
use crate::{bind_by_name, in_read_tx, in_write_tx, params, statement};

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

static CREATE_CURSOR: Stmt = statement!("webhook_create_cursor");
static LOCK_CURSOR: Stmt = statement!("webhook_lock_cursor");
static EVENTS_AFTER_CURSOR: Stmt = statement!("webhook_events_after_cursor");
static ENQUEUE_DELIVERY: Stmt = statement!(shared "webhook_enqueue_delivery");
static ADVANCE_CURSOR: Stmt = statement!(shared "webhook_advance_cursor");
static CLAIM_DUE_DELIVERIES: Stmt = statement!("webhook_claim_due_deliveries");
static READ_EVENT: Stmt = statement!(shared "read_event");
static MARK_DELIVERED: Stmt = statement!(shared "webhook_mark_delivered");
static RECORD_FAILED_ATTEMPT: Stmt = statement!(shared "webhook_record_failed_attempt");
static DEAD_DELIVERIES: Stmt = statement!("webhook_dead_deliveries");
static REDELIVER: Stmt = statement!(shared "webhook_redeliver");

/// The parameters of [`RECORD_FAILED_ATTEMPT`].
struct FailedAttempt<'a> {
    delivery_id: i64,
    lease_token: &'a str,
    max_attempts: i64,
    now_micros: i64,
    next_attempt_at_micros: i64,
    last_error: &'a str,
}

bind_by_name!(FailedAttempt<'_> {
    delivery_id,
    lease_token,
    max_attempts,
    now_micros,
    next_attempt_at_micros,
    last_error,
});

/// Gives an endpoint new to this database its cursor at `from`; keeps one it has.
async fn create_cursor(tx: &mut Tx, endpoint: &str, from: FeedStart) -> Result<(), StoreError> {
    let from_beginning = i64::from(from == FeedStart::Beginning);
    let cursor = params! { endpoint: endpoint, from_beginning: from_beginning };
    tx.exec(&CREATE_CURSOR, cursor).await?;
    Ok(())
}

impl Store {
    /// Gives an endpoint new to this database its cursor, at `from` (the end of the feed
    /// as it is now, or its beginning); an endpoint with a cursor keeps it. `serve` opens
    /// every card endpoint's before it answers a request, so that "the end" is the end at
    /// start and no event of the first requests is missed; the first enqueue would too.
    pub async fn open_webhook_cursor(
        &self,
        endpoint: &str,
        from: FeedStart,
    ) -> Result<(), StoreError> {
        self.stamp_events().await?;
        in_write_tx!(self, |tx| async { create_cursor(tx, endpoint, from).await })
    }

    /// Turns up to `max_events` outbox events after the endpoint's cursor into pending
    /// deliveries (those whose type passes `types`, when given) and moves the cursor past
    /// them. An endpoint seen for the first time starts at `from`: the end of the feed as
    /// it is now, or its beginning. Returns how many events it read (fewer than
    /// `max_events`: caught up).
    pub async fn enqueue_deliveries(
        &self,
        endpoint: &str,
        types: Option<&[String]>,
        from: FeedStart,
        max_events: i64,
    ) -> Result<u64, StoreError> {
        let limit = max_events.clamp(1, crate::units::accounts::MAX_PAGE);
        self.stamp_events().await?;
        in_write_tx!(self, across Some(CrossAccount::QueueDeliveries), |tx| async {
            create_cursor(tx, endpoint, from).await?;
            let cursor = tx
                .row(&LOCK_CURSOR, params! { endpoint: endpoint })
                .await?
                .int("last_event_id")?;
            let now = crate::store::now(tx).await?;
            let rows = tx
                .rows(
                    &EVENTS_AFTER_CURSOR,
                    params! { after_event_id: cursor, limit: limit },
                )
                .await?;
            let mut last = cursor;
            for r in &rows {
                let e = event_from(r, &self.card().currency)?;
                last = e.event_id;
                if types.is_some_and(|t| !t.contains(&e.event_type)) {
                    continue;
                }
                let delivery = params! {
                    event_id: e.event_id,
                    endpoint: endpoint,
                    account_id: e.account_id.as_str(),
                    now_micros: now,
                };
                tx.exec(&ENQUEUE_DELIVERY, delivery).await?;
            }
            if last != cursor {
                tx.exec(
                    &ADVANCE_CURSOR,
                    params! { endpoint: endpoint, last_event_id: last },
                )
                .await?;
            }
            Ok(rows.len() as u64)
        })
    }

    /// Leases up to `limit` due deliveries to `endpoint` for `lease_micros`, at most one
    /// per account (the head of its queue). The attempt counts when its outcome is
    /// recorded.
    pub async fn claim_deliveries(
        &self,
        endpoint: &str,
        limit: i64,
        lease_micros: i64,
    ) -> Result<Vec<Delivery>, StoreError> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        in_write_tx!(self, across Some(CrossAccount::ClaimDeliveries), |tx| async {
            let now = crate::store::now(tx).await?;
            let claim = params! {
                endpoint: endpoint,
                now_micros: now,
                lease_token: token.as_str(),
                lease_until_micros: now + lease_micros,
                limit: limit,
            };
            let claimed = tx.rows(&CLAIM_DUE_DELIVERIES, claim).await?;
            let mut out = Vec::with_capacity(claimed.len());
            for c in claimed {
                let row = tx
                    .row(&READ_EVENT, params! { event_id: c.int("event_id")? })
                    .await?;
                out.push(Delivery {
                    delivery_id: c.int("delivery_id")?,
                    endpoint: endpoint.to_owned(),
                    // The attempts recorded so far, and this one.
                    attempts: c.int("attempts")? + 1,
                    event: event_from(&row, &self.card().currency)?,
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
            let now = crate::store::now(tx).await?;
            let delivered = params! {
                delivery_id: d.delivery_id,
                lease_token: d.lease_token.as_str(),
                now_micros: now,
            };
            let n = tx.exec(&MARK_DELIVERED, delivered).await?;
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
            let now = crate::store::now(tx).await?;
            let failed = FailedAttempt {
                delivery_id: d.delivery_id,
                lease_token: d.lease_token.as_str(),
                max_attempts,
                now_micros: now,
                next_attempt_at_micros: now + retry_micros,
                last_error: error.as_str(),
            };
            let row = tx
                .maybe_row(&RECORD_FAILED_ATTEMPT, failed.params())
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
        let limit = limit.clamp(1, crate::units::accounts::MAX_PAGE);
        in_read_tx!(self, |tx| async {
            let page = params! {
                after_delivery_id: after.unwrap_or(0),
                endpoint: endpoint,
                limit: limit,
            };
            let rows = tx.rows(&DEAD_DELIVERIES, page).await?;
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
            let now = crate::store::now(tx).await?;
            let again = params! {
                event_id: event_id,
                endpoint: endpoint,
                now_micros: now,
            };
            let n = tx.exec(&REDELIVER, again).await?;
            Ok(n == 1)
        })
    }
}
