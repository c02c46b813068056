//! Dead webhook deliveries and their redelivery (admin), beside `holdfast events --dead`
//! and `holdfast redeliver`.

use axum::Json;
use axum::extract::State;
use holdfast::DeadDelivery;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::{AdminRead, AdminRole, Auth, Role};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, Paging, QueryPairs, parse_row_id};
use super::state::AppState;
use super::wire::rfc3339;

/// A delivery that failed its last attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadDeliveryBody {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    /// The endpoint's URL, as the rate card gives it.
    pub endpoint: String,
    pub account_id: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    /// When the delivery was queued.
    pub created_at: String,
    pub dead_at: Option<String>,
}

impl From<DeadDelivery> for DeadDeliveryBody {
    fn from(d: DeadDelivery) -> DeadDeliveryBody {
        DeadDeliveryBody {
            delivery_id: d.delivery_id.to_string(),
            event_id: d.event_id.to_string(),
            event_type: d.event_type,
            endpoint: d.endpoint,
            account_id: d.account_id,
            attempts: d.attempts,
            last_error: d.last_error,
            created_at: rfc3339(d.created_at),
            dead_at: d.dead_at.map(rfc3339),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeadDeliveryPage {
    pub deliveries: Vec<DeadDeliveryBody>,
    pub next: Option<String>,
}

/// Dead deliveries, oldest first. A viewer key sees each endpoint's URL without its
/// query values (`?token=***`): only an admin, who may redeliver by URL, sees it whole.
#[utoipa::path(get, path = "/v1/admin/webhooks/dead", tag = "admin",
    params(
        ("endpoint" = Option<String>, Query, description = "Only this endpoint's (its URL)"),
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "1–1000, default 100"),
    ),
    responses(
        (status = 200, description = "A page of dead deliveries", body = DeadDeliveryPage),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn dead(
    who: Auth<AdminRead>,
    State(s): State<AppState>,
    query: QueryPairs,
) -> ApiResult<Json<DeadDeliveryPage>> {
    let [endpoint, after, limit] = query.take(["endpoint", "after", "limit"])?;
    let paging = Paging::parse(limit.as_deref(), after.as_deref())?;
    let endpoint = endpoint.filter(|e| !e.is_empty());
    if let Some(e) = &endpoint {
        endpoint_text(e)?;
    }
    let page = s
        .engine
        .dead_deliveries(endpoint.as_deref(), paging.after, paging.limit)
        .await?;
    let mut deliveries: Vec<DeadDeliveryBody> = page.items.into_iter().map(Into::into).collect();
    if who.role != Role::Admin {
        for d in &mut deliveries {
            d.endpoint = holdfast::redact::webhook_url(&d.endpoint);
        }
    }
    Ok(Json(DeadDeliveryPage {
        deliveries,
        next: page.next.map(|n| n.to_string()),
    }))
}

/// An endpoint's URL as a request names it: 1–2048 characters, no NUL.
fn endpoint_text(text: &str) -> Result<(), ApiError> {
    if text.is_empty() || text.chars().count() > 2048 || text.contains('\0') {
        return Err(ApiError::invalid(
            "endpoint: must be 1 to 2048 characters, no NUL",
        ));
    }
    Ok(())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeliverRequest {
    /// The event, as `GET /v1/events` or a dead delivery names it.
    #[schema(pattern = r"^[1-9][0-9]{0,17}$")]
    pub event_id: String,
    /// The endpoint's URL, as the rate card gives it.
    #[schema(min_length = 1, max_length = 2048, pattern = r"^[^\x00]+$")]
    pub endpoint: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RedeliverBody {
    /// Always true: the delivery is pending again, with fresh attempts.
    pub redelivered: bool,
}

/// Queues a dead (or delivered) delivery again, with fresh attempts.
#[utoipa::path(post, path = "/v1/admin/webhooks/redeliver", tag = "admin",
    request_body = RedeliverRequest,
    responses(
        (status = 200, description = "Queued again", body = RedeliverBody),
        (status = 404, description = "`delivery_not_found`: no dead or delivered delivery of this event to this endpoint (a pending one is already queued)", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn redeliver(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    Body(req): Body<RedeliverRequest>,
) -> ApiResult<Json<RedeliverBody>> {
    let event_id = parse_row_id(&req.event_id)
        .filter(|&id| id > 0)
        .ok_or_else(|| ApiError::invalid("event_id: must be an event id such as \"42\""))?;
    endpoint_text(&req.endpoint)?;
    if !s.engine.redeliver(event_id, &req.endpoint).await? {
        return Err(ApiError::DeliveryNotFound);
    }
    Ok(Json(RedeliverBody { redelivered: true }))
}
