//! Batched worker calls: `POST /v1/jobs/complete` and `POST /v1/jobs/fail` with up to
//! [`MAX_ITEMS`] jobs each, so a pool that handles many small jobs pays one round trip
//! per batch. Each item is exactly the single call (same fencing by lease token, same
//! charges, same events), answered in its place; a bad item never stops the others.
//! The well-formed items are finished in one transaction when they can be
//! (`holdfast_store::Store::complete_many`); a malformed item is its own 422.

use axum::Json;
use axum::extract::State;
use holdfast::{CompleteJob, FailJob, JobAnswers, StoreError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{Auth, WorkerRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody, ErrorDetail};
use super::extract::{Body, parse_value};
use super::jobs::job_id;
use super::schema::{JobIdText, LeaseToken};
use super::state::AppState;
use super::wire::JobBody;
use super::workers::{CaptureLine, capture_lines, checked_reason};

/// Most jobs one batched call may carry (and one lease may hand out).
pub const MAX_ITEMS: usize = holdfast::MAX_JOB_BATCH;

/// `{"items": [...]}`: 1 to 100 jobs to complete.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteBatchRequest {
    /// Each item is checked on its own: a malformed item is answered 422 in its place.
    #[schema(value_type = Vec<CompleteItem>, min_items = 1, max_items = 100)]
    pub items: Vec<serde_json::Value>,
}

/// One job to complete: the single complete's body with the job it is for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteItem {
    #[schema(value_type = JobIdText)]
    pub job_id: String,
    #[schema(value_type = LeaseToken)]
    pub lease_token: String,
    #[serde(default)]
    pub capture: Option<Vec<CaptureLine>>,
}

/// `{"items": [...]}`: 1 to 100 jobs to fail.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailBatchRequest {
    /// Each item is checked on its own: a malformed item is answered 422 in its place.
    #[schema(value_type = Vec<FailItem>, min_items = 1, max_items = 100)]
    pub items: Vec<serde_json::Value>,
}

/// One job to fail: the single fail's body with the job it is for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailItem {
    #[schema(value_type = JobIdText)]
    pub job_id: String,
    #[schema(value_type = LeaseToken)]
    pub lease_token: String,
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub reason: Option<String>,
}

/// The answers, one per item, in request order.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobBatchResults {
    pub results: Vec<JobItemResult>,
}

/// One item's answer: the status and body the single call would have answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobItemResult {
    /// 200, or the refusal's status (404, 409, 422).
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

impl From<Result<holdfast::Job, ApiError>> for JobItemResult {
    fn from(r: Result<holdfast::Job, ApiError>) -> JobItemResult {
        match r {
            Ok(job) => JobItemResult {
                status: 200,
                job: Some(job.into()),
                error: None,
            },
            Err(e) => JobItemResult {
                status: e.status().as_u16(),
                job: None,
                error: Some(ErrorDetail {
                    code: e.code().to_owned(),
                    message: e.to_string(),
                }),
            },
        }
    }
}

/// The items of a batch, 1 to [`MAX_ITEMS`] of them.
fn items_in_range(items: &[serde_json::Value]) -> Result<(), ApiError> {
    let n = items.len();
    if n == 0 || n > MAX_ITEMS {
        return Err(ApiError::invalid(format!(
            "items: 1 to {MAX_ITEMS} items, got {n}"
        )));
    }
    Ok(())
}

/// Parses each item in order (1 to [`MAX_ITEMS`] of them): a malformed one is answered
/// in its place, the well-formed ones go to `run` together, and each answer comes back
/// to its place; a database outage ends the call (see [`item_result`]).
async fn each_item<T, P, R, Fut>(
    items: Vec<serde_json::Value>,
    parse: P,
    run: R,
) -> ApiResult<Json<JobBatchResults>>
where
    P: Fn(usize, serde_json::Value) -> ApiResult<T>,
    R: FnOnce(Vec<T>) -> Fut,
    Fut: Future<Output = Result<JobAnswers, StoreError>>,
{
    items_in_range(&items)?;
    let mut answers: Vec<Option<ApiResult<holdfast::Job>>> = Vec::with_capacity(items.len());
    let (mut parsed, mut places) = (Vec::new(), Vec::new());
    for (at, item) in items.into_iter().enumerate() {
        match parse(at, item) {
            Ok(item) => {
                parsed.push(item);
                places.push(at);
                answers.push(None);
            }
            Err(e) => answers.push(Some(Err(e))),
        }
    }
    if !parsed.is_empty() {
        let done = run(parsed).await?;
        for (at, answer) in places.into_iter().zip(done) {
            answers[at] = Some(answer.map_err(ApiError::from));
        }
    }
    let results = answers
        .into_iter()
        .map(|a| {
            let a =
                a.ok_or_else(|| ApiError::from(StoreError::Corrupt("an item unanswered".into())))?;
            item_result(a)
        })
        .collect::<ApiResult<Vec<_>>>()?;
    Ok(Json(JobBatchResults { results }))
}

/// A database outage or a full disk ends the whole call (503: retry it; each item is idempotent by
/// nature: a job completed already answers `already_finished`); anything else is the
/// item's own answer.
fn item_result(r: Result<holdfast::Job, ApiError>) -> ApiResult<JobItemResult> {
    match r {
        Err(e @ (ApiError::Unavailable(_) | ApiError::DiskFull(_))) => Err(e),
        other => Ok(other.into()),
    }
}

fn complete_item(at: usize, item: serde_json::Value) -> ApiResult<CompleteJob> {
    let item: CompleteItem = parse_value(&format!("items[{at}]"), item)?;
    let capture = item.capture.map(capture_lines).transpose()?;
    Ok(CompleteJob {
        job: job_id(&item.job_id)?,
        lease_token: item.lease_token,
        capture,
    })
}

fn fail_item(at: usize, item: serde_json::Value) -> ApiResult<FailJob> {
    let item: FailItem = parse_value(&format!("items[{at}]"), item)?;
    checked_reason(item.reason.as_deref())?;
    Ok(FailJob {
        job: job_id(&item.job_id)?,
        lease_token: item.lease_token,
        reason: item.reason,
    })
}

/// Completes many jobs in one call, each as `POST /v1/jobs/{job_id}/complete`.
///
/// The well-formed items are finished in one transaction when they can be (one commit for
/// the batch); each still answers exactly as its single call would.
#[utoipa::path(post, path = "/v1/jobs/complete", tag = "workers",
    request_body = CompleteBatchRequest,
    responses(
        (status = 200, description = "One answer per item, in request order", body = JobBatchResults),
        (status = 422, description = "`invalid_request`: the envelope is malformed (no `items`, \
            0 or more than 100 items); nothing was done", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn complete_many(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    Body(req): Body<CompleteBatchRequest>,
) -> ApiResult<Json<JobBatchResults>> {
    let run = |items: Vec<CompleteJob>| async move { s.engine.complete_many(&items).await };
    each_item(req.items, complete_item, run).await
}

/// Fails many jobs in one call, each as `POST /v1/jobs/{job_id}/fail`.
///
/// The well-formed items are finished in one transaction when they can be (one commit for
/// the batch); each still answers exactly as its single call would.
#[utoipa::path(post, path = "/v1/jobs/fail", tag = "workers",
    request_body = FailBatchRequest,
    responses(
        (status = 200, description = "One answer per item, in request order", body = JobBatchResults),
        (status = 422, description = "`invalid_request`: the envelope is malformed (no `items`, \
            0 or more than 100 items); nothing was done", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn fail_many(
    _: Auth<WorkerRole>,
    State(s): State<AppState>,
    Body(req): Body<FailBatchRequest>,
) -> ApiResult<Json<JobBatchResults>> {
    let run = |items: Vec<FailJob>| async move { s.engine.fail_many(&items).await };
    each_item(req.items, fail_item, run).await
}
