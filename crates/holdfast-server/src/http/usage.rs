//! `GET /v1/usage`: what accounts, job kinds or meters spent in a period, for an operator's own
//! invoices and dashboards.

use axum::Json;
use axum::extract::State;
use holdfast::{AccountId, UsageGrouping, UsageQuery};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::{AdminRead, Auth};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{QueryPairs, parse_limit};
use super::state::AppState;
use super::wire::{AskedPeriod, money, rfc3339};

/// What one group spent in the period.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageGroupBody {
    /// The account id (`group_by=account`), the job kind (`group_by=kind`; `null`: a
    /// debit that names no job of this engine, or one retention pruned) or the meter
    /// (`group_by=meter`; `null`: spending not metered, and job refunds).
    pub key: Option<String>,
    /// Debits and captures of money.
    pub entries: i64,
    /// What they took.
    pub spent: String,
    pub spent_micros: i64,
    /// The seconds of the metered debits among them.
    pub seconds: i64,
    /// What job refunds gave back.
    pub refunded: String,
    pub refunded_micros: i64,
    /// `spent` − `refunded`.
    pub net: String,
    pub net_micros: i64,
}

/// A usage report.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageBody {
    pub from: String,
    pub to: String,
    /// `account`, `kind` or `meter`.
    pub group_by: String,
    pub currency: String,
    pub groups: Vec<UsageGroupBody>,
    /// `group_by=account`: the `after` of the next page (`null`: this was the last).
    pub next: Option<String>,
}

fn grouping(text: Option<&str>) -> Result<UsageGrouping, ApiError> {
    let Some(text) = text else {
        return Ok(UsageGrouping::Account);
    };
    (UsageGrouping::ALL.into_iter())
        .find(|g| g.name() == text)
        .ok_or_else(|| {
            ApiError::invalid(format!("group_by: {text:?} is not account, kind or meter"))
        })
}

/// What each account (`group_by=account`, by page in account id order), job kind
/// (`group_by=kind`) or meter (`group_by=meter`) spent in `[from, to)`: debits and
/// captures of money with the seconds of the metered ones, and what job refunds gave
/// back; `account_id` narrows it to one account.
#[utoipa::path(get, path = "/v1/usage", tag = "money",
    params(
        ("from" = Option<String>, Query, description = "RFC 3339, inclusive (default: the beginning)"),
        ("to" = Option<String>, Query, description = "RFC 3339, exclusive (default: now)"),
        ("group_by" = Option<String>, Query, description = "`account` (default), `kind` or `meter`"),
        ("account_id" = Option<String>, Query, description = "Only this account's usage"),
        ("after" = Option<String>, Query, description = "`group_by=account`: the `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "`group_by=account`: 1–1000, default 100"),
    ),
    responses(
        (status = 200, description = "The report", body = UsageBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn usage(
    _: Auth<AdminRead>,
    State(s): State<AppState>,
    query: QueryPairs,
) -> ApiResult<Json<UsageBody>> {
    let names = ["from", "to", "group_by", "account_id", "after", "limit"];
    let [from, to, group_by, account, after, limit] = query.take(names)?;
    let period = AskedPeriod::parse(from.as_deref(), to.as_deref())?;
    let group_by = grouping(group_by.as_deref())?;
    let account_id = account.as_deref().map(AccountId::parse).transpose()?;
    // The cursor is the last account id listed (empty: the first page).
    let after = after.filter(|a| !a.is_empty());
    if let Some(a) = &after {
        AccountId::parse(a).map_err(|_| ApiError::invalid("after: must be an account id"))?;
    }
    let limit = parse_limit(limit.as_deref())?;
    let (from, to) = period.resolve(&s.engine).await?;
    let q = UsageQuery {
        from,
        to,
        group_by,
        account_id,
        after: after.unwrap_or_default(),
        limit,
    };
    let report = s.engine.usage(&q).await?;
    Ok(Json(UsageBody {
        from: rfc3339(q.from),
        to: rfc3339(q.to),
        group_by: group_by.name().to_owned(),
        currency: s.engine.card().currency.clone(),
        groups: (report.groups.into_iter())
            .map(|g| UsageGroupBody {
                key: g.key,
                entries: g.entries,
                spent: money(g.spent),
                spent_micros: g.spent,
                seconds: g.seconds,
                refunded: money(g.refunded),
                refunded_micros: g.refunded,
                net: money(g.spent - g.refunded),
                net_micros: g.spent - g.refunded,
            })
            .collect(),
        next: report.next,
    }))
}
