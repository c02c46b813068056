//! Accounts: PUT, GET, the listing, activity, block and unblock, ban and unban.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use holdfast::decide::{Recharge, SpendPolicy};
use holdfast::{AccountFilter, AccountId, AccountStatus, Micros, PutAccount};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{AdminRole, Auth, ServiceRead, ServiceRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{
    Body, BodyOrEmpty, Empty, PathText, QueryPairs, opt_whole_number, parse_limit,
};
use super::schema::{
    MoneyAmount, PlanName, PositiveAmount, ReasonText, SpendThresholdText, TimeZoneName, Timestamp,
};
use super::state::AppState;
use super::wire::{AccountBody, SpendPeriodName, parse_time};

/// The highest `max_concurrent_jobs` an account may set.
const MAX_CONCURRENCY: i64 = 1_000_000;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutAccountRequest {
    /// A plan of the rate card.
    #[schema(value_type = PlanName)]
    pub plan: String,
    /// RFC 3339; absent or null means no expiry.
    #[serde(default)]
    #[schema(value_type = Option<Timestamp>)]
    pub plan_until: Option<String>,
    /// 1 to 1000000; absent or null means the plan's.
    #[serde(default, deserialize_with = "opt_whole_number")]
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub max_concurrent_jobs: Option<i64>,
    /// The auto-recharge: absent leaves it as it is, `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<RechargeRequest>, nullable)]
    pub recharge: Option<Option<RechargeRequest>>,
    /// The account's own rule of spending, in place of its plan's: absent leaves it as
    /// it is, `null` removes it (the plan's applies again).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<SpendRequest>, nullable)]
    pub spend: Option<Option<SpendRequest>>,
}

/// A rule of spending per UTC day or month: a hard limit (a debit or a submit's money
/// hold that would take the period's spending and what is held past it is refused 402
/// `spend_limit_reached`) and thresholds, each told once a period as
/// `account.spend_threshold` (API.md "Accounts").
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SpendRequest {
    /// Absent or null: no limit (thresholds only).
    #[serde(default)]
    #[schema(value_type = Option<PositiveAmount>)]
    pub limit: Option<String>,
    /// `day` or `month` (the default), of `timezone`.
    #[serde(default)]
    #[schema(value_type = Option<SpendPeriodName>)]
    pub period: Option<String>,
    /// The IANA time zone whose days and months count (`Europe/Berlin`); `UTC` when
    /// absent.
    #[serde(default)]
    #[schema(value_type = Option<TimeZoneName>)]
    pub timezone: Option<String>,
    /// Up to 20 amounts (`"40.00"`) or whole percentages of the limit (`"80%"`).
    #[serde(default)]
    #[schema(value_type = Vec<SpendThresholdText>, max_items = 20)]
    pub alerts: Vec<String>,
}

fn spend(req: Option<SpendRequest>) -> Result<Option<SpendPolicy>, ApiError> {
    let Some(req) = req else { return Ok(None) };
    let (limit, period, zone) = (
        req.limit.as_deref(),
        req.period.as_deref(),
        req.timezone.as_deref(),
    );
    SpendPolicy::from_text(limit, period, &req.alerts, zone)
        .map(Some)
        .map_err(|e| ApiError::invalid(format!("spend.{e}")))
}

/// An auto-recharge: when available money falls below `below`, the event
/// `account.recharge_requested` asks the operator to charge `amount` (API.md "Accounts").
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RechargeRequest {
    #[schema(value_type = MoneyAmount)]
    pub below: String,
    #[schema(value_type = PositiveAmount)]
    pub amount: String,
}

/// A field that may be absent (`None`), `null` (`Some(None)`) or an object (a struct's
/// fields as an array, which serde would take too, is refused).
fn present<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    use serde::de::Error;
    let Some(map) = Option::<serde_json::Map<String, serde_json::Value>>::deserialize(d)? else {
        return Ok(Some(None));
    };
    T::deserialize(serde_json::Value::Object(map))
        .map(|v| Some(Some(v)))
        .map_err(D::Error::custom)
}

fn recharge(req: Option<RechargeRequest>) -> Result<Option<Recharge>, ApiError> {
    let Some(req) = req else { return Ok(None) };
    let below =
        Micros::parse_non_negative(&req.below).map_err(|e| ApiError::money("recharge.below", e))?;
    let amount =
        Micros::parse_positive(&req.amount).map_err(|e| ApiError::money("recharge.amount", e))?;
    Ok(Some(Recharge { below, amount }))
}

pub fn account_id(text: &str) -> Result<AccountId, ApiError> {
    Ok(AccountId::parse(text)?)
}

fn put_request(req: PutAccountRequest) -> Result<PutAccount, ApiError> {
    let plan_until = req
        .plan_until
        .as_deref()
        .map(|t| parse_time("plan_until", t))
        .transpose()?;
    if req
        .max_concurrent_jobs
        .is_some_and(|n| !(1..=MAX_CONCURRENCY).contains(&n))
    {
        return Err(ApiError::invalid(format!(
            "max_concurrent_jobs: must be 1 to {MAX_CONCURRENCY}"
        )));
    }
    Ok(PutAccount {
        plan: req.plan,
        plan_until,
        max_concurrent_jobs: req.max_concurrent_jobs,
        recharge: req.recharge.map(recharge).transpose()?,
        spend: req.spend.map(spend).transpose()?,
    })
}

/// Creates or updates an account.
#[utoipa::path(put, path = "/v1/accounts/{account_id}", tag = "accounts",
    params(("account_id" = String, Path, description = "1–128 characters of [A-Za-z0-9._:-]")),
    request_body = PutAccountRequest,
    responses(
        (status = 201, description = "Created", body = AccountBody),
        (status = 200, description = "Updated", body = AccountBody),
        (status = 422, description = "`invalid_request`, `unknown_plan`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn put_account(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<PutAccountRequest>,
) -> ApiResult<(StatusCode, Json<AccountBody>)> {
    let id = account_id(&id)?;
    let req = put_request(req)?;
    let (view, created) = s.engine.put_account(&id, &req).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view.into())))
}

/// An account with every pocket as it is effective now.
#[utoipa::path(get, path = "/v1/accounts/{account_id}", tag = "accounts",
    params(("account_id" = String, Path)),
    responses(
        (status = 200, description = "The account", body = AccountBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request` (bad account id)", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn get_account(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    PathText(id): PathText,
) -> ApiResult<Json<AccountBody>> {
    let id = account_id(&id)?;
    Ok(Json(s.engine.get_account(&id).await?.into()))
}

/// Records activity and refills allowances whose window has passed.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/activity", tag = "accounts",
    params(("account_id" = String, Path)),
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "The account", body = AccountBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn activity(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<AccountBody>> {
    let id = account_id(&id)?;
    Ok(Json(s.engine.activity(&id).await?.into()))
}

/// A block's or an unblock's body: optionally why (recorded on `operator.blocked`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockRequest {
    /// Why, 1–500 characters.
    #[serde(default)]
    #[schema(value_type = Option<ReasonText>)]
    pub reason: Option<String>,
}

async fn set_blocked(
    s: &AppState,
    id: &str,
    blocked: bool,
    req: BlockRequest,
) -> ApiResult<Json<AccountBody>> {
    let id = account_id(id)?;
    let view = s
        .engine
        .set_blocked_because(&id, blocked, req.reason.as_deref())
        .await?;
    Ok(Json(view.into()))
}

/// Blocks an account: submits refused, queued jobs not leased; money still applies.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/block", tag = "accounts",
    params(("account_id" = String, Path)),
    request_body(content = Option<BlockRequest>, description = "Optional: no body is `{}`"),
    responses(
        (status = 200, description = "The account", body = AccountBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn block(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    BodyOrEmpty(req): BodyOrEmpty<BlockRequest>,
) -> ApiResult<Json<AccountBody>> {
    set_blocked(&s, &id, true, req).await
}

/// Unblocks an account.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/unblock", tag = "accounts",
    params(("account_id" = String, Path)),
    request_body(content = Option<BlockRequest>, description = "Optional: no body is `{}`"),
    responses(
        (status = 200, description = "The account", body = AccountBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn unblock(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    BodyOrEmpty(req): BodyOrEmpty<BlockRequest>,
) -> ApiResult<Json<AccountBody>> {
    set_blocked(&s, &id, false, req).await
}

/// A page of accounts.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountPageBody {
    pub accounts: Vec<AccountBody>,
    /// The last id returned, or the given `after` when the page is empty.
    pub next: Option<String>,
}

fn account_filter(query: &QueryPairs) -> Result<AccountFilter, ApiError> {
    let [plan, status, prefix, after, limit] =
        query.take(["plan", "status", "prefix", "after", "limit"])?;
    let status = status
        .map(|s| {
            AccountStatus::parse(&s).ok_or_else(|| {
                ApiError::invalid("status: must be active, suspended, blocked or banned")
            })
        })
        .transpose()?;
    let after = after
        .filter(|a| !a.is_empty())
        .map(|a| account_id(&a).map_err(|_| ApiError::invalid("after: must be an account id")))
        .transpose()?;
    let prefix = prefix.filter(|p| !p.is_empty());
    if let Some(p) = &prefix {
        account_id(p)
            .map_err(|_| ApiError::invalid("prefix: must be the start of an account id"))?;
    }
    Ok(AccountFilter {
        plan,
        status,
        prefix,
        after,
        limit: parse_limit(limit.as_deref())?,
    })
}

/// Accounts in id order, by id prefix, plan and status.
#[utoipa::path(get, path = "/v1/accounts", tag = "accounts",
    params(
        ("prefix" = Option<String>, Query, description = "Only ids that start with this"),
        ("plan" = Option<String>, Query, description = "A plan of the rate card"),
        ("status" = Option<String>, Query, description = "`active`, `suspended`, `blocked` or `banned`"),
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "1–1000, default 100"),
    ),
    responses(
        (status = 200, description = "A page of accounts", body = AccountPageBody),
        (status = 422, description = "`invalid_request`, `unknown_plan`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn list_accounts(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    query: QueryPairs,
) -> ApiResult<Json<AccountPageBody>> {
    let page = s.engine.list_accounts(&account_filter(&query)?).await?;
    Ok(Json(AccountPageBody {
        accounts: page.accounts.into_iter().map(Into::into).collect(),
        next: page.next,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BanRequest {
    /// Why, 1–500 characters; recorded on the `account.banned` event.
    #[schema(value_type = ReasonText)]
    pub reason: String,
}

/// The answer to a ban: the account and the queued jobs it canceled.
#[derive(Debug, Serialize, ToSchema)]
pub struct BanBody {
    pub account: AccountBody,
    pub canceled: Vec<super::wire::JobBody>,
}

/// Bans an account: queued jobs canceled, new submits and debits refused.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/ban", tag = "accounts",
    params(("account_id" = String, Path)),
    request_body = BanRequest,
    responses(
        (status = 200, description = "Banned (or already banned: nothing changed)", body = BanBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn ban(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    Body(req): Body<BanRequest>,
) -> ApiResult<Json<BanBody>> {
    let banned = s.engine.ban(&account_id(&id)?, &req.reason).await?;
    Ok(Json(BanBody {
        account: banned.account.into(),
        canceled: banned.canceled.into_iter().map(Into::into).collect(),
    }))
}

/// Lifts a ban.
#[utoipa::path(post, path = "/v1/accounts/{account_id}/unban", tag = "accounts",
    params(("account_id" = String, Path)),
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "The account", body = AccountBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn unban(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(id): PathText,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<AccountBody>> {
    Ok(Json(s.engine.unban(&account_id(&id)?).await?.into()))
}
