//! Giving back: refunds of a job's charge, and grants of allowance items.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use holdfast::{Grant, Granted, IdempotencyKey, JobRefund, JobRefunded, Micros, MoneyResult};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::accounts::account_id;
use super::auth::{AdminRole, Auth, ServiceRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, PathText, whole_number};
use super::jobs::job_id;
use super::money::{created_unless, created_unless_replay};
use super::schema::{AllowanceName, KeyText, PositiveAmount, ReasonText};
use super::state::AppState;
use super::wire::{AccountBody, JobBody, LedgerEntryBody, MoneyResultBody};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobRefundRequest {
    /// What to give back: absent for all that is left of the charge. Money as a money
    /// string; a job charged from an allowance in whole items (`"1"`).
    #[serde(default)]
    #[schema(value_type = Option<PositiveAmount>)]
    pub amount: Option<String>,
    /// Why, 1–500 characters; recorded on the `job.refunded` event.
    #[schema(value_type = ReasonText)]
    pub reason: String,
    /// 1–255 characters, unique per account (the job's).
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
}

/// The answer to a job refund.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobRefundBody {
    /// One `job_refund` entry per pocket given back to.
    pub entries: Vec<LedgerEntryBody>,
    pub job: JobBody,
    pub account: AccountBody,
}

impl From<JobRefunded> for JobRefundBody {
    fn from(r: JobRefunded) -> JobRefundBody {
        JobRefundBody {
            entries: r.entries.into_iter().map(Into::into).collect(),
            job: r.job.into(),
            account: r.account.into(),
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    /// An allowance pocket the account has.
    #[schema(value_type = AllowanceName)]
    pub pocket: String,
    /// Whole items, 1 to 1000000000.
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    #[serde(deserialize_with = "whole_number")]
    pub amount: i64,
    /// Why, 1–500 characters; recorded on the `allowance.granted` event.
    #[schema(value_type = ReasonText)]
    pub reason: String,
    /// 1–255 characters, unique per account.
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
}

/// Refunds (part of) a succeeded job's charge to the pocket it was taken from.
#[utoipa::path(post, path = "/v1/jobs/{job_id}/refund", tag = "jobs",
    params(("job_id" = String, Path)),
    request_body = JobRefundRequest,
    responses(
        (status = 201, description = "Refunded", body = JobRefundBody),
        (status = 200, description = "A replay of the same idempotency key", body = JobRefundBody),
        (status = 404, description = "`job_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`, `not_refundable`, `refund_exceeds_charge`", body = ErrorBody),
        (status = 422, description = "`invalid_request`, `amount_out_of_range`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn refund_job(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<JobRefundRequest>,
) -> ApiResult<(StatusCode, Json<JobRefundBody>)> {
    let amount = req
        .amount
        .as_deref()
        .map(|a| Micros::parse_positive(a).map_err(|e| ApiError::money("amount", e)))
        .transpose()?;
    let refund = JobRefund {
        amount,
        reason: req.reason,
        key: IdempotencyKey::parse(&req.idempotency_key)?,
    };
    let r = s.engine.refund_job(&job_id(&id)?, &refund).await?;
    Ok((created_unless(r.replay), Json(r.into())))
}

/// Grants allowance items to a pocket of the account, until its next refill.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/grants", tag = "money",
    params(("account_id" = String, Path)),
    request_body = GrantRequest,
    responses(
        (status = 201, description = "Granted", body = MoneyResultBody),
        (status = 200, description = "A replay of the same idempotency key", body = MoneyResultBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (unknown pocket, bad amount or reason)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn grant(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<GrantRequest>,
) -> ApiResult<(StatusCode, Json<MoneyResultBody>)> {
    let grant = Grant {
        pocket: req.pocket,
        amount: req.amount,
        reason: req.reason,
        key: IdempotencyKey::parse(&req.idempotency_key)?,
    };
    let Granted {
        entry,
        account,
        replay,
    } = s.engine.grant(&account_id(&id)?, &grant).await?;
    Ok(created_unless_replay(MoneyResult {
        entry,
        account,
        replay,
    }))
}
