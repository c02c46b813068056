//! The money pocket: top-ups and bonuses, debits, refunds, and the ledger by cursor.

use axum::Json;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use holdfast::decide::{BlockTerms, CreditCategory, DEFAULT_PRIORITY};
use holdfast::{CreditKind, DebitRequest, IdempotencyKey, Micros, MoneyResult, Usage};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::accounts::account_id;
use super::auth::{Auth, ServiceRead, ServiceRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, Paging, PathText, QueryPairs, opt_whole_number, whole_number};
use super::schema::{JobRefText, KeyText, MAX_JOB_REF, MeterName, PositiveAmount, Timestamp};
use super::state::AppState;
use super::wire::{
    AskedPeriod, BalanceAtBody, BlockBody, LedgerPage, MoneyResultBody, StatementBody, money,
    parse_time,
};

// The wire names of the library's `CreditKind`: deserializes straight into it (serde's
// remote derive) and gives the document its schema, which it names `TopUpKind`. (Plain
// comments: a doc comment would become the schema's description.)
#[derive(Deserialize, ToSchema)]
#[serde(remote = "CreditKind", rename_all = "snake_case")]
#[schema(as = TopUpKind)]
enum CreditKindName {
    TopUp,
    Bonus,
}

// The wire names of core's `CreditCategory`, as `CreditKindName` is `CreditKind`'s.
#[derive(Deserialize, ToSchema)]
#[serde(remote = "CreditCategory", rename_all = "snake_case")]
#[schema(as = CreditCategory)]
pub(super) enum CreditCategoryName {
    Paid,
    Promotional,
}

/// An optional [`CreditCategory`] by its wire name; absent or null is `None`.
fn credit_category<'de, D: Deserializer<'de>>(de: D) -> Result<Option<CreditCategory>, D::Error> {
    #[derive(Deserialize)]
    struct Named(#[serde(with = "CreditCategoryName")] CreditCategory);
    Ok(Option::<Named>::deserialize(de)?.map(|Named(c)| c))
}

/// An optional [`CreditKind`] by its wire name; absent or null is `None`.
fn credit_kind<'de, D: Deserializer<'de>>(de: D) -> Result<Option<CreditKind>, D::Error> {
    #[derive(Deserialize)]
    struct Named(#[serde(with = "CreditKindName")] CreditKind);
    Ok(Option::<Named>::deserialize(de)?.map(|Named(kind)| kind))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopUpRequest {
    /// A positive money string, e.g. `"10.00"`.
    #[schema(value_type = PositiveAmount)]
    pub amount: String,
    /// 1–255 characters, unique per account.
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
    /// `top_up` (default) or `bonus`.
    #[serde(default, deserialize_with = "credit_kind")]
    #[schema(value_type = Option<CreditKindName>)]
    pub kind: Option<CreditKind>,
    /// RFC 3339: the credit is a block that expires then (what is left of it is
    /// written off; one at or before now makes a block expired from the start).
    /// `expires_at`, `priority` or `category` make a credit block; without them the
    /// credit is general money (paid, priority 50, no expiry).
    #[serde(default)]
    #[schema(value_type = Option<Timestamp>)]
    pub expires_at: Option<String>,
    /// 0 to 100 (default 50): lower is drawn first.
    #[serde(default, deserialize_with = "opt_whole_number")]
    #[schema(minimum = 0, maximum = 100)]
    pub priority: Option<i64>,
    /// `paid` (default) or `promotional`.
    #[serde(default, deserialize_with = "credit_category")]
    #[schema(value_type = Option<CreditCategoryName>)]
    pub category: Option<CreditCategory>,
}

impl TopUpRequest {
    /// The terms the request gives its credit (general money when it names none).
    fn terms(&self) -> Result<BlockTerms, ApiError> {
        let expires_at = (self.expires_at.as_deref())
            .map(|t| parse_time("expires_at", t))
            .transpose()?;
        Ok(BlockTerms {
            category: self.category.unwrap_or_default(),
            priority: self.priority.unwrap_or(DEFAULT_PRIORITY),
            expires_at,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageRequest {
    /// A meter of the rate card.
    #[schema(value_type = MeterName)]
    pub meter: String,
    /// A positive whole number of seconds.
    // 1 … a year: the document's maximum is MAX_USAGE_SECONDS, set in schema.rs.
    #[schema(minimum = 1)]
    #[serde(deserialize_with = "whole_number")]
    pub seconds: i64,
}

// The JSON body of a debit. Not `DebitRequest`: that is the library's type, the debit this
// body becomes. The document still calls it `DebitRequest`, like the other request bodies.
/// Exactly one of `amount` and `usage`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = DebitRequest)]
pub struct DebitBody {
    #[serde(default)]
    #[schema(value_type = Option<PositiveAmount>)]
    pub amount: Option<String>,
    #[serde(default)]
    pub usage: Option<UsageRequest>,
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
    #[serde(default)]
    #[schema(value_type = Option<JobRefText>)]
    pub job_ref: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefundRequest {
    /// The idempotency key of the top-up to refund.
    #[schema(value_type = KeyText)]
    pub top_up_idempotency_key: String,
    #[schema(value_type = PositiveAmount)]
    pub amount: String,
    #[schema(value_type = KeyText)]
    pub idempotency_key: String,
}

fn positive(field: &str, text: &str) -> Result<Micros, ApiError> {
    Micros::parse_positive(text).map_err(|e| ApiError::money(field, e))
}

/// 201 for something new, 200 for a replay of an idempotency key.
pub(super) fn created_unless(replay: bool) -> StatusCode {
    if replay {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    }
}

/// The money result with 201 for a new entry, 200 for a replay.
pub(super) fn created_unless_replay(r: MoneyResult) -> (StatusCode, Json<MoneyResultBody>) {
    (created_unless(r.replay), Json(r.into()))
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
    let kind = req.kind.unwrap_or(CreditKind::TopUp);
    let terms = req.terms()?;
    let r = (s.engine.credit_on_terms(&id, amount, kind, terms, &key)).await?;
    Ok(created_unless_replay(r))
}

/// The most seconds one metered debit may carry: a year (366 days). A runner reports
/// far more often; the bound keeps every card's price of it within the request limit.
pub(super) const MAX_USAGE_SECONDS: i64 = 31_622_400;

fn usage_of(req: &DebitBody) -> Result<Usage, ApiError> {
    match (&req.amount, &req.usage) {
        (Some(amount), None) => Ok(Usage::Amount(positive("amount", amount)?)),
        (None, Some(u)) if (1..=MAX_USAGE_SECONDS).contains(&u.seconds) => Ok(Usage::Metered {
            meter: u.meter.clone(),
            seconds: u.seconds,
        }),
        (None, Some(_)) => Err(ApiError::invalid(format!(
            "usage.seconds: must be a whole number from 1 to {MAX_USAGE_SECONDS} (a year)"
        ))),
        _ => Err(ApiError::invalid(
            "give exactly one of `amount` and `usage`",
        )),
    }
}

/// Metered usage, as money or meter seconds; may dip into the overdraft buffer.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/debits", tag = "money",
    params(("account_id" = String, Path)),
    request_body = DebitBody,
    responses(
        (status = 201, description = "Debited", body = MoneyResultBody),
        (status = 200, description = "A replay of the same idempotency key", body = MoneyResultBody),
        (status = 402, description = "`insufficient_funds`, `spend_limit_reached`", body = ErrorBody),
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
    Body(req): Body<DebitBody>,
) -> ApiResult<(StatusCode, Json<MoneyResultBody>)> {
    let debit = debit_request(&req)?;
    let id = account_id(&id)?;
    // Through the engine: concurrent debits of one account share a transaction.
    let r = s
        .engine
        .debit(&id, &debit.usage, &debit.key, debit.job_ref.as_deref())
        .await?;
    if !r.replay {
        super::metrics::debited(-r.entry.delta);
    }
    Ok(created_unless_replay(r))
}

/// The debit a body asks for, its shape checked (the account is checked after it).
pub(super) fn debit_request(req: &DebitBody) -> Result<DebitRequest, ApiError> {
    let usage = usage_of(req)?;
    let key = IdempotencyKey::parse(&req.idempotency_key)?;
    if req
        .job_ref
        .as_ref()
        .is_some_and(|r| r.is_empty() || r.chars().count() > MAX_JOB_REF)
    {
        return Err(ApiError::invalid(format!(
            "job_ref: must be 1 to {MAX_JOB_REF} characters"
        )));
    }
    Ok(DebitRequest::new(&usage, &key, req.job_ref.as_deref()))
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
    Ok(created_unless_replay(r))
}

/// The account's ledger, oldest first, by cursor.
#[utoipa::path(get, path = "/v1/accounts/{account_id}/ledger", tag = "money", operation_id = "account_ledger",
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
    _: Auth<ServiceRead>,
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
        currency: s.engine.card().currency.clone(),
        next: page.next.map(|n| n.to_string()),
    }))
}

/// The account's statement for a period: opening and closing balance, the changes between
/// by kind, spending by job kind, what its jobs held at the end. JSON, or with
/// `Accept: text/csv` one row per figure.
#[utoipa::path(get, path = "/v1/accounts/{account_id}/statement", tag = "money",
    params(
        ("account_id" = String, Path),
        ("from" = Option<String>, Query, description = "RFC 3339, inclusive (default: the beginning)"),
        ("to" = Option<String>, Query, description = "RFC 3339, exclusive (default: now)"),
    ),
    responses(
        (status = 200, description = "The statement; with `Accept: text/csv` as CSV",
         content((StatementBody = "application/json"), (String = "text/csv"))),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (a bad time, `from` after `to`)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn statement(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    PathText(id): PathText,
    headers: HeaderMap,
    query: QueryPairs,
) -> ApiResult<Response> {
    let [from, to] = query.take(["from", "to"])?;
    let period = AskedPeriod::parse(from.as_deref(), to.as_deref())?;
    let id = account_id(&id)?;
    let (from, to) = period.resolve(&s.engine).await?;
    let statement = s.engine.statement(&id, from, to).await?;
    let body = StatementBody::new(statement, &s.engine.card().currency);
    if !super::export::wants_csv(&headers) {
        return Ok(Json(body).into_response());
    }
    let csv = crate::books::statement_csv(&body).map_err(|e| ApiError::Internal(e.to_string()))?;
    let disposition = format!("attachment; filename=\"statement-{}.csv\"", body.account_id);
    let headers = [
        (
            CONTENT_TYPE,
            HeaderValue::from_static("text/csv; charset=utf-8"),
        ),
        (
            CONTENT_DISPOSITION,
            HeaderValue::from_str(&disposition).map_err(|e| ApiError::Internal(e.to_string()))?,
        ),
    ];
    Ok((headers, csv).into_response())
}

/// An account's money by credit block: the blocks that hold money, in the order debits
/// and holds draw them, and the general money outside them.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlocksBody {
    pub account_id: String,
    pub balance: String,
    pub balance_micros: i64,
    /// The balance less the blocks' remaining: money credited without terms; below zero,
    /// the account's debt (the next credit pays it first).
    pub general: String,
    pub general_micros: i64,
    pub blocks: Vec<BlockBody>,
}

/// An account's credit blocks that hold money, in the order they are drawn, and its
/// general money.
#[utoipa::path(get, path = "/v1/accounts/{account_id}/blocks", tag = "money",
    params(("account_id" = String, Path)),
    responses(
        (status = 200, description = "The account's blocks", body = BlocksBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (bad account id)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn blocks(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    PathText(id): PathText,
) -> ApiResult<Json<BlocksBody>> {
    let id = account_id(&id)?;
    let view = s.engine.get_account(&id).await?;
    let general = view.balance - view.blocks.iter().map(|b| b.remaining).sum::<i64>();
    Ok(Json(BlocksBody {
        account_id: view.account_id,
        balance: money(view.balance),
        balance_micros: view.balance,
        general: money(general),
        general_micros: general,
        blocks: view.blocks.into_iter().map(BlockBody::from).collect(),
    }))
}

/// The account's money and allowance pockets as they were at a time, from its ledger:
/// every entry written at or before `at` counts.
#[utoipa::path(get, path = "/v1/accounts/{account_id}/balance", tag = "money",
    params(
        ("account_id" = String, Path),
        ("at" = Option<String>, Query, description = "RFC 3339, inclusive (default: now)"),
    ),
    responses(
        (status = 200, description = "The pockets at `at`", body = BalanceAtBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (a bad time)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn balance_at(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    PathText(id): PathText,
    query: QueryPairs,
) -> ApiResult<Json<BalanceAtBody>> {
    let [at] = query.take(["at"])?;
    let at = at.map(|t| parse_time("at", &t)).transpose()?;
    let id = account_id(&id)?;
    let at = match at {
        Some(at) => at,
        None => s.engine.period_end_now().await? - 1,
    };
    let balance = s.engine.balance_at(&id, at).await?;
    Ok(Json(BalanceAtBody::new(balance, &s.engine.card().currency)))
}

#[cfg(test)]
mod tests {
    use super::super::extract::parse_json;
    use super::*;

    fn kind_of(body: &str) -> Result<Option<CreditKind>, String> {
        parse_json::<TopUpRequest>(body.as_bytes())
            .map(|t| t.kind)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_top_up_kind_is_read_by_its_wire_name() {
        let body = |kind: &str| format!(r#"{{"amount":"1","idempotency_key":"k"{kind}}}"#);
        assert_eq!(
            kind_of(&body(r#","kind":"bonus""#)),
            Ok(Some(CreditKind::Bonus))
        );
        assert_eq!(
            kind_of(&body(r#","kind":"top_up""#)),
            Ok(Some(CreditKind::TopUp))
        );
        assert_eq!(kind_of(&body(r#","kind":null"#)), Ok(None));
        assert_eq!(kind_of(&body("")), Ok(None));
        let e = kind_of(&body(r#","kind":"gift""#)).unwrap_err();
        assert!(
            e.starts_with("kind: unknown variant `gift`, expected `top_up` or `bonus`"),
            "{e}"
        );
    }
}
