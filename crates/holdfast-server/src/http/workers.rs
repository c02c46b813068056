//! Workers: lease (long-polling), heartbeat, complete, fail.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use holdfast::{Lease, MONEY, Micros, PocketAmount, StoreError, WorkerId};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use utoipa::ToSchema;

use super::auth::{Auth, WorkerRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, PathText, opt_whole_number, whole_of};
use super::jobs::job_id;
use super::schema::{LeaseToken, WorkerIdText};
use super::state::AppState;
use super::wire::{Amount, HeartbeatBody, JobBody, LeaseBody};
use super::worker_batch::MAX_ITEMS;

/// The longest a lease request may wait for work.
pub const MAX_WAIT_MS: i64 = 30_000;

/// How often a waiting lease looks at the database for jobs other processes queued.
const POLL_EVERY: Duration = Duration::from_millis(200);

/// Longest failure reason kept, in characters.
const MAX_REASON: usize = 4096;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    /// The worker's name, for the record.
    #[schema(value_type = WorkerIdText)]
    pub worker_id: String,
    /// 1 … the rate card's `stale_after_seconds`; default its `lease_seconds`.
    #[serde(default, deserialize_with = "opt_whole_number")]
    #[schema(minimum = 1)]
    pub lease_seconds: Option<i64>,
    /// 0 … 30000: how long to wait for a job before answering 204.
    #[serde(default, deserialize_with = "opt_whole_number")]
    #[schema(minimum = 0, maximum = 30_000)]
    pub wait_ms: Option<i64>,
    /// 1 … 100: lease up to this many jobs at once (waiting `wait_ms` for the first
    /// only). With it the answer is `{"jobs": [...]}`, empty when nothing came, never 204.
    #[serde(default, deserialize_with = "opt_whole_number")]
    #[schema(minimum = 1, maximum = 100)]
    pub max_jobs: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatRequest {
    #[schema(value_type = LeaseToken)]
    pub lease_token: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureLine {
    pub pocket: String,
    /// A money string for `money`, an integer for an allowance; 0 allowed.
    #[schema(value_type = Amount)]
    pub amount: serde_json::Value,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteRequest {
    #[schema(value_type = LeaseToken)]
    pub lease_token: String,
    /// Without it the whole hold is captured; with it each listed pocket is captured up
    /// to its hold and the others are released.
    #[serde(default)]
    pub capture: Option<Vec<CaptureLine>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailRequest {
    #[schema(value_type = LeaseToken)]
    pub lease_token: String,
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub reason: Option<String>,
}

struct LeaseAsk {
    worker: WorkerId,
    lease_seconds: i64,
    wait: Duration,
    max_jobs: Option<usize>,
}

fn lease_ask(s: &AppState, req: LeaseRequest) -> Result<LeaseAsk, ApiError> {
    let worker = WorkerId::parse(&req.worker_id)?;
    let t = &s.engine.card().timeouts;
    let lease_seconds = req.lease_seconds.unwrap_or(t.lease_seconds);
    holdfast::core::decide::check_lease_seconds(lease_seconds, t.stale_after_seconds)?;
    let wait_ms = req.wait_ms.unwrap_or(0);
    if !(0..=MAX_WAIT_MS).contains(&wait_ms) {
        return Err(ApiError::invalid(format!(
            "wait_ms: must be 0 to {MAX_WAIT_MS}"
        )));
    }
    let max = MAX_ITEMS as i64;
    if req.max_jobs.is_some_and(|n| !(1..=max).contains(&n)) {
        return Err(ApiError::invalid(format!("max_jobs: must be 1 to {max}")));
    }
    Ok(LeaseAsk {
        worker,
        lease_seconds,
        wait: Duration::from_millis(wait_ms.unsigned_abs()),
        max_jobs: req.max_jobs.map(|n| n.unsigned_abs() as usize),
    })
}

/// Tries `try_lease` until it leases something, `wait` passes or the server shuts down.
/// Wakes at once on a submit to this lane in this process, and polls for other
/// processes' jobs.
async fn lease_waiting<T, F, Fut>(
    s: &AppState,
    lane: &str,
    ask: &LeaseAsk,
    try_lease: F,
) -> ApiResult<Option<T>>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<T>, StoreError>>,
{
    let deadline = Instant::now() + ask.wait;
    let notify = s.engine.lane_notify(lane);
    let mut shutdown = s.shutdown.clone();
    loop {
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(leased) = try_lease().await? {
            return Ok(Some(leased));
        }
        let now = Instant::now();
        if now >= deadline || *shutdown.borrow() {
            return Ok(None);
        }
        let nap = (deadline - now).min(POLL_EVERY);
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(nap) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// Up to `max` jobs of a lane in one statement: waited for as a single lease is until
/// at least one is leasable, then every one leasable at that moment (at most `max`).
async fn lease_many(s: &AppState, lane: &str, ask: &LeaseAsk, max: usize) -> ApiResult<Vec<Lease>> {
    let leased = lease_waiting(s, lane, ask, || async {
        let jobs = s
            .engine
            .lease_many(lane, &ask.worker, ask.lease_seconds, max)
            .await?;
        Ok((!jobs.is_empty()).then_some(jobs))
    });
    Ok(leased.await?.unwrap_or_default())
}

/// One lease, or several when `max_jobs` was given.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum LeaseAnswer {
    One(Box<LeaseBody>),
    Many(LeaseBatchBody),
}

/// The jobs a lease with `max_jobs` handed out, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeaseBatchBody {
    pub jobs: Vec<LeaseBody>,
}

/// Hands the oldest leasable job of a lane to a worker (or up to `max_jobs` of them),
/// waiting up to `wait_ms`.
#[utoipa::path(post, path = "/v1/lanes/{lane}/lease", tag = "workers",
    params(("lane" = String, Path)),
    request_body = LeaseRequest,
    responses(
        (status = 200, description = "A job and its lease; with `max_jobs`, `{\"jobs\": [...]}` \
            (empty when nothing came within `wait_ms`)", body = LeaseAnswer),
        (status = 204, description = "Nothing leasable within `wait_ms` (without `max_jobs`)"),
        (status = 404, description = "`unknown_lane`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn lease(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    PathText(lane): PathText,
    Body(req): Body<LeaseRequest>,
) -> ApiResult<Response> {
    let ask = lease_ask(&s, req)?;
    s.engine.card().check_lane(&lane)?;
    // The time limit plus this lease's own wait: a lease that asked not to wait answers
    // 503 within the same limit as any other request when the database is slow.
    let limit = s.request_timeout + ask.wait;
    tokio::time::timeout(limit, leased(&s, &lane, &ask))
        .await
        .unwrap_or_else(|_| Err(ApiError::Unavailable("request timed out".into())))
}

/// The lease's answer: one job (or 204), or with `max_jobs` a list.
async fn leased(s: &AppState, lane: &str, ask: &LeaseAsk) -> ApiResult<Response> {
    if let Some(max) = ask.max_jobs {
        let jobs = lease_many(s, lane, ask, max).await?;
        let jobs = jobs.into_iter().map(LeaseBody::from).collect();
        return Ok(Json(LeaseAnswer::Many(LeaseBatchBody { jobs })).into_response());
    }
    let one = || s.engine.lease(lane, &ask.worker, ask.lease_seconds);
    Ok(match lease_waiting(s, lane, ask, one).await? {
        Some(lease) => Json(LeaseAnswer::One(Box::new(lease.into()))).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// Extends a valid lease; tells the worker whether a cancel was asked.
#[utoipa::path(post, path = "/v1/jobs/{job_id}/heartbeat", tag = "workers",
    params(("job_id" = String, Path)),
    request_body = HeartbeatRequest,
    responses(
        (status = 200, description = "Extended", body = HeartbeatBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 409, description = "`lease_lost`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn heartbeat(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<HeartbeatRequest>,
) -> ApiResult<Json<HeartbeatBody>> {
    let id = job_id(&id)?;
    let beat = s.engine.heartbeat(&id, &req.lease_token).await?;
    Ok(Json(beat.into()))
}

pub(super) fn capture_lines(lines: Vec<CaptureLine>) -> Result<Vec<PocketAmount>, ApiError> {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let field = format!("capture[{i}].amount");
            let count = l.amount.as_number().and_then(whole_of);
            let amount = match (l.pocket == MONEY, &l.amount, count) {
                (true, serde_json::Value::String(text), _) => {
                    Micros::parse_non_negative(text)
                        .map_err(|e| ApiError::money(&field, e))?
                        .0
                }
                (false, _, Some(n)) if n >= 0 => n,
                (true, _, _) => {
                    return Err(ApiError::invalid(format!(
                        "{field}: money is a decimal string such as \"0.04\""
                    )));
                }
                (false, _, _) => {
                    return Err(ApiError::invalid(format!(
                        "{field}: an allowance amount is a whole number ≥ 0"
                    )));
                }
            };
            Ok(PocketAmount {
                pocket: l.pocket,
                amount,
                blocks: Vec::new(),
            })
        })
        .collect()
}

/// Completes a job: captures the hold (or a partial capture), releases the rest.
#[utoipa::path(post, path = "/v1/jobs/{job_id}/complete", tag = "workers",
    params(("job_id" = String, Path)),
    request_body = CompleteRequest,
    responses(
        (status = 200, description = "`succeeded`, or `canceled` after a cooperative cancel", body = JobBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 409, description = "`lease_lost`, `already_finished`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (a pocket not held, an amount above the hold)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn complete(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<CompleteRequest>,
) -> ApiResult<Json<JobBody>> {
    let capture = req.capture.map(capture_lines).transpose()?;
    let id = job_id(&id)?;
    let job = s
        .engine
        .complete(&id, &req.lease_token, capture.as_deref())
        .await?;
    Ok(Json(job.into()))
}

/// Fails a job: releases the hold, charges nothing.
#[utoipa::path(post, path = "/v1/jobs/{job_id}/fail", tag = "workers",
    params(("job_id" = String, Path)),
    request_body = FailRequest,
    responses(
        (status = 200, description = "`failed`", body = JobBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 409, description = "`lease_lost`, `already_finished`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn fail(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<FailRequest>,
) -> ApiResult<Json<JobBody>> {
    checked_reason(req.reason.as_deref())?;
    let id = job_id(&id)?;
    let job = s
        .engine
        .fail(&id, &req.lease_token, req.reason.as_deref())
        .await?;
    Ok(Json(job.into()))
}

/// A failure reason within [`MAX_REASON`] characters.
pub(super) fn checked_reason(reason: Option<&str>) -> Result<(), ApiError> {
    if reason.is_some_and(|r| r.chars().count() > MAX_REASON) {
        return Err(ApiError::invalid(format!(
            "reason: at most {MAX_REASON} characters"
        )));
    }
    Ok(())
}
