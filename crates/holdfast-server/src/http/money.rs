//! The money pocket: top-ups and bonuses, debits, refunds, and the ledger by cursor.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use holdfast::{CreditKind, IdempotencyKey, Micros, MoneyResult, Usage};
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::accounts::account_id;
use super::auth::{Auth, ServiceRole};
use super::docs::AuthErrors;
use super::error::{ApiError, ApiResult, ErrorBody};
use super::extract::{Body, Paging, PathText, QueryPairs};
use super::wire::{LedgerPage, MoneyResultBody};

/// Longest `job_ref` a debit may carry.
const MAX_JOB_REF: usize = 255;

#[derive(Debug, Clone, Copy, Default, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopUpKind {
    #[default]
    TopUp,
    Bonus,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopUpRequest {
    /// A positive money string, e.g. `"10.00"`.
    #[schema(pattern = r"^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$")]
    pub amount: String,
    /// 1–255 characters, unique per account.
    pub idempotency_key: String,
    /// `top_up` (default) or `bonus`.
    #[serde(default)]
    pub kind: Option<TopUpKind>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageRequest {
    /// A meter of the rate card.
    pub meter: String,
    /// A positive whole number of seconds.
    pub seconds: i64,
}

/// Exactly one of `amount` and `usage`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DebitRequest {
    #[schema(pattern = r"^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$")]
    #[serde(default)]
    pub amount: Option<String>,
    #[serde(default)]
    pub usage: Option<UsageRequest>,
    pub idempotency_key: String,
    #[serde(default)]
    pub job_ref: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefundRequest {
    /// The idempotency key of the top-up to refund.
    pub top_up_idempotency_key: String,
    #[schema(pattern = r"^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$")]
    pub amount: String,
    pub idempotency_key: String,
}

fn positive(field: &str, text: &str) -> Result<Micros, ApiError> {
    Micros::parse_positive(text).map_err(|e| ApiError::money(field, e))
}

/// 201 for a new entry, 200 for a replay.
fn answer(r: MoneyResult) -> (StatusCode, Json<MoneyResultBody>) {
    let status = if r.replay {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    (status, Json(r.into()))
}

/// A top-up or a bonus.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/top-ups", tag = "money",
    params(("account_id" = String, Path)),
    request_body = TopUpRequest,
    responses(
        (status = 201, description = "Credited", body = MoneyResultBody),
        (status = 200, description = "A replay of the same idempotency key", body = MoneyResultBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`", body = ErrorBody),
        (status = 422, description = "`invalid_request`, `amount_out_of_range`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn top_up(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<TopUpRequest>,
) -> ApiResult<(StatusCode, Json<MoneyResultBody>)> {
    let amount = positive("amount", &req.amount)?;
    let key = IdempotencyKey::parse(&req.idempotency_key)?;
    let id = account_id(&id)?;
    let kind = match req.kind.unwrap_or_default() {
        TopUpKind::TopUp => CreditKind::TopUp,
        TopUpKind::Bonus => CreditKind::Bonus,
    };
    let r = s.engine.credit(&id, amount, kind, &key).await?;
    Ok(answer(r))
}

fn usage_of(req: &DebitRequest) -> Result<Usage, ApiError> {
    match (&req.amount, &req.usage) {
        (Some(amount), None) => Ok(Usage::Amount(positive("amount", amount)?)),
        (None, Some(u)) if u.seconds > 0 => Ok(Usage::Metered {
            meter: u.meter.clone(),
            seconds: u.seconds,
        }),
        (None, Some(_)) => Err(ApiError::invalid(
            "usage.seconds: must be a positive integer",
        )),
        _ => Err(ApiError::invalid(
            "give exactly one of `amount` and `usage`",
        )),
    }
}

/// Metered usage, as money or meter seconds; may dip into the overdraft buffer.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/debits", tag = "money",
    params(("account_id" = String, Path)),
    request_body = DebitRequest,
    responses(
        (status = 201, description = "Debited", body = MoneyResultBody),
        (status = 200, description = "A replay of the same idempotency key", body = MoneyResultBody),
        (status = 402, description = "`insufficient_funds`", body = ErrorBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`", body = ErrorBody),
        (status = 422, description = "`invalid_request`, `unknown_meter`, `amount_out_of_range`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn debit(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<DebitRequest>,
) -> ApiResult<(StatusCode, Json<MoneyResultBody>)> {
    let usage = usage_of(&req)?;
    let key = IdempotencyKey::parse(&req.idempotency_key)?;
    if req
        .job_ref
        .as_ref()
        .is_some_and(|r| r.is_empty() || r.len() > MAX_JOB_REF)
    {
        return Err(ApiError::invalid(format!(
            "job_ref: must be 1 to {MAX_JOB_REF} characters"
        )));
    }
    let id = account_id(&id)?;
    // Through the engine: concurrent debits of one account share a transaction.
    let r = s
        .engine
        .debit(&id, &usage, &key, req.job_ref.as_deref())
        .await?;
    if !r.replay {
        super::metrics::debited(-r.entry.delta);
    }
    Ok(answer(r))
}

/// A forced debit refunding (part of) a top-up.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/refunds", tag = "money",
    params(("account_id" = String, Path)),
    request_body = RefundRequest,
    responses(
        (status = 201, description = "Refunded", body = MoneyResultBody),
        (status = 200, description = "A replay of the same idempotency key", body = MoneyResultBody),
        (status = 404, description = "`account_not_found`, `top_up_not_found`", body = ErrorBody),
        (status = 409, description = "`idempotency_mismatch`, `not_refundable`, `refund_exceeds_top_up`", body = ErrorBody),
        (status = 422, description = "`invalid_request`, `amount_out_of_range`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn refund(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<RefundRequest>,
) -> ApiResult<(StatusCode, Json<MoneyResultBody>)> {
    let amount = positive("amount", &req.amount)?;
    let top_up = IdempotencyKey::parse(&req.top_up_idempotency_key)
        .map_err(|e| ApiError::invalid(format!("top_up_idempotency_key: {}", e.reason)))?;
    let key = IdempotencyKey::parse(&req.idempotency_key)?;
    let id = account_id(&id)?;
    let r = s.engine.refund(&id, &top_up, amount, &key).await?;
    Ok(answer(r))
}

/// The account's ledger, oldest first, by cursor.
#[utoipa::path(get, path = "/v1/accounts/{account_id}/ledger", tag = "money",
    params(
        ("account_id" = String, Path),
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "1–1000, default 100"),
    ),
    responses(
        (status = 200, description = "A page of entries", body = LedgerPage),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn ledger(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    query: QueryPairs,
) -> ApiResult<Json<LedgerPage>> {
    let [limit, after] = query.take(["limit", "after"])?;
    let paging = Paging::parse(limit.as_deref(), after.as_deref())?;
    let id = account_id(&id)?;
    let page = s.engine.ledger(&id, paging.after, paging.limit).await?;
    Ok(Json(LedgerPage {
        entries: page.items.into_iter().map(Into::into).collect(),
        next: page.next.map(|n| n.to_string()),
    }))
}
