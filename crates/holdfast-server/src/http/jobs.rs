//! Jobs as the service sees them: submit (hold), read, cancel.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use holdfast::{CancelOutcome, IdempotencyKey, JobId, Submit};
use serde::Deserialize;
use utoipa::ToSchema;

use super::accounts::account_id;
use super::auth::{AnyRole, Auth, ServiceRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, BodyOrEmpty, Empty, PathText};
use super::schema::{AccountIdText, KeyText, KindName};
use super::state::AppState;
use super::wire::JobBody;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    #[schema(value_type = AccountIdText)]
    pub account_id: String,
    /// A kind of the rate card.
    #[schema(value_type = KindName)]
    pub kind: String,
    /// Anything the worker needs; stored and handed back as given.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub payload: Option<serde_json::Value>,
    /// 1–255 characters, unique per account.
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
}

/// Whether a JSON value holds U+0000 in any string or key.
fn has_nul(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(has_nul),
        serde_json::Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

pub fn job_id(text: &str) -> Result<JobId, ApiError> {
    Ok(JobId::parse(text)?)
}

/// Submits a job: holds its price and queues it.
#[utoipa::path(post, path = "/v1/jobs", tag = "jobs",
    request_body = SubmitRequest,
    responses(
        (status = 201, description = "Queued", body = JobBody),
        (status = 200, description = "A replay of the same idempotency key: the job as it is now", body = JobBody),
        (status = 402, description = "`insufficient_funds`, `insufficient_allowance`, `spend_limit_reached`", body = ErrorBody),
        (status = 403, description = "`forbidden` (role), `account_blocked`, `account_suspended`", body = ErrorBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`, `busy`", body = ErrorBody),
        (status = 422, description = "`invalid_request`, `unknown_kind`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn submit(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    Body(req): Body<SubmitRequest>,
) -> ApiResult<(StatusCode, Json<JobBody>)> {
    if req.payload.as_ref().is_some_and(has_nul) {
        // PostgreSQL's jsonb cannot hold U+0000; refused on SQLite too, so both agree.
        return Err(ApiError::invalid(
            "payload: must not contain NUL characters (\\u0000)",
        ));
    }
    let submit = Submit {
        account: account_id(&req.account_id)?,
        key: IdempotencyKey::parse(&req.idempotency_key)?,
        kind: req.kind,
        payload: req.payload.filter(|p| !p.is_null()),
    };
    let r = s.engine.submit(&submit).await?;
    let status = super::money::created_unless(r.replay);
    Ok((status, Json(r.job.into())))
}

/// A job as it is now.
#[utoipa::path(get, path = "/v1/jobs/{job_id}", tag = "jobs",
    params(("job_id" = String, Path)),
    responses(
        (status = 200, description = "The job", body = JobBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (bad job id)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn get_job(
    _: Auth<AnyRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
) -> ApiResult<Json<JobBody>> {
    let id = job_id(&id)?;
    Ok(Json(s.engine.get_job(&id).await?.into()))
}

/// Cancels a queued job (200), or asks a running cooperative one to stop (202).
#[utoipa::path(post, path = "/v1/jobs/{job_id}/cancel", tag = "jobs",
    params(("job_id" = String, Path)),
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "Canceled (now or already)", body = JobBody),
        (status = 202, description = "Cancel requested: the worker finishes the job", body = JobBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 409, description = "`already_started`, `already_finished`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn cancel(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<(StatusCode, Json<JobBody>)> {
    let id = job_id(&id)?;
    let (job, outcome) = s.engine.cancel(&id).await?;
    let status = match outcome {
        CancelOutcome::Canceled => StatusCode::OK,
        CancelOutcome::Requested => StatusCode::ACCEPTED,
    };
    Ok((status, Json(job.into())))
}
