//! Batch ingest of usage: `POST /v1/debits`, up to [`MAX_DEBITS`] debits of any accounts
//! in one call, each answered in its place exactly as the single debit would answer it.
//! Not atomic across items: a bad item is refused in its place while the others apply.

use axum::Json;
use axum::extract::State;
use holdfast::{AccountId, DebitRequest, Refusal};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::accounts::account_id;
use super::auth::{Auth, ServiceRole};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody, ErrorDetail};
use super::extract::{Body, parse_value};
use super::money::{DebitBody, UsageRequest, debit_request};
use super::schema::{AccountIdText, JobRefText, KeyText, PositiveAmount};
use super::state::AppState;
use super::wire::{AccountBody, LedgerEntryBody};

/// Most debits one call may carry.
pub const MAX_DEBITS: usize = 1000;

/// `{"debits": [...]}`: 1 to 1,000 debits of any accounts.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DebitBatchRequest {
    /// Each item is checked on its own: a malformed item is answered 422 in its place.
    #[schema(value_type = Vec<DebitItem>, min_items = 1, max_items = 1000)]
    pub debits: Vec<serde_json::Value>,
}

/// One debit of a batch: the single debit's body with the account it is for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DebitItem {
    #[schema(value_type = AccountIdText)]
    pub account_id: String,
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

/// The answers, one per item, in request order.
#[derive(Debug, Serialize, ToSchema)]
pub struct DebitBatchResults {
    pub results: Vec<DebitItemResult>,
}

/// One item's answer: the status and body the single debit would have answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct DebitItemResult {
    /// 201 debited, 200 a replay of the key, or the refusal's status (402, 403, 404, 409,
    /// 422).
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<LedgerEntryBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

impl DebitItemResult {
    fn refused(e: ApiError) -> DebitItemResult {
        DebitItemResult {
            status: e.status().as_u16(),
            entry: None,
            account: None,
            error: Some(ErrorDetail {
                code: e.code().to_owned(),
                message: e.to_string(),
            }),
        }
    }
}

/// The account and debit an item asks for, its shape checked; `at` names the item in
/// messages (`debits[3]`, `line 4`).
pub fn parse_item(
    at: &str,
    item: serde_json::Value,
) -> Result<(AccountId, DebitRequest), ApiError> {
    let item: DebitItem = parse_value(at, item)?;
    let body = DebitBody {
        amount: item.amount,
        usage: item.usage,
        idempotency_key: item.idempotency_key,
        job_ref: item.job_ref,
    };
    let req = debit_request(&body)?;
    Ok((account_id(&item.account_id)?, req))
}

/// Many debits of any accounts in one call (batch ingest).
#[utoipa::path(post, path = "/v1/debits", tag = "money", operation_id = "ingest_debits",
    request_body = DebitBatchRequest,
    responses(
        (status = 200, description = "One answer per item, in request order; each item's \
            `status` is what the single debit would have answered", body = DebitBatchResults),
        (status = 422, description = "`invalid_request`: the envelope is malformed (not \
            JSON, no `debits`, 0 or more than 1000 items); nothing was applied", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn ingest(
    _: Auth<ServiceRole>,
    State(s): State<AppState>,
    Body(req): Body<DebitBatchRequest>,
) -> ApiResult<Json<DebitBatchResults>> {
    let n = req.debits.len();
    if n == 0 || n > MAX_DEBITS {
        return Err(ApiError::invalid(format!(
            "debits: 1 to {MAX_DEBITS} items, got {n}"
        )));
    }
    let mut results: Vec<Option<DebitItemResult>> = Vec::with_capacity(n);
    let mut valid = Vec::with_capacity(n);
    for (at, item) in req.debits.into_iter().enumerate() {
        match parse_item(&format!("debits[{at}]"), item) {
            Ok(debit) => {
                valid.push(debit);
                results.push(None);
            }
            Err(e) => results.push(Some(DebitItemResult::refused(e))),
        }
    }
    let mut answers = s.engine.debit_many(&valid).await?.into_iter();
    let results = results
        .into_iter()
        .map(|r| r.or_else(|| answers.next().map(answer)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ApiError::Internal("a batch answered fewer items than it took".into()))?;
    Ok(Json(DebitBatchResults { results }))
}

fn answer(r: Result<holdfast::MoneyResult, Refusal>) -> DebitItemResult {
    match r {
        Ok(m) => {
            if !m.replay {
                super::metrics::debited(-m.entry.delta);
            }
            DebitItemResult {
                status: if m.replay { 200 } else { 201 },
                entry: Some(m.entry.into()),
                account: Some(m.account.into()),
                error: None,
            }
        }
        Err(refusal) => DebitItemResult::refused(refusal.into()),
    }
}
