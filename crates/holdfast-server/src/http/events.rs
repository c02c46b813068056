//! The events outbox by cursor.

use axum::Json;
use axum::extract::State;
use holdfast::EventFilter;
use holdfast::core::ratecard::EVENT_TYPES;

use super::accounts::account_id;
use super::auth::{Auth, ServiceRead};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Paging, QueryPairs};
use super::state::AppState;
use super::wire::EventPage;

fn event_type(text: &str) -> Result<String, ApiError> {
    if EVENT_TYPES.contains(&text) {
        Ok(text.to_owned())
    } else {
        Err(ApiError::invalid(format!(
            "type: must be one of {}",
            EVENT_TYPES.join(", ")
        )))
    }
}

/// Events after the cursor, in the one order every reader sees.
#[utoipa::path(get, path = "/v1/events", tag = "events", operation_id = "list_events",
    params(
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "1–1000, default 100"),
        ("account_id" = Option<String>, Query, description = "Only this account's events"),
        ("type" = Option<String>, Query, description = "Only events of this type"),
        ("actor" = Option<String>, Query, description = "Only events this actor caused: `key:<key id>`, `cli:<user>`, `system:<pass>`, `serve:first-admin-key`, `library`"),
    ),
    responses(
        (status = 200, description = "A page of events", body = EventPage),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn list(
    _: Auth<ServiceRead>,
    State(s): State<AppState>,
    query: QueryPairs,
) -> ApiResult<Json<EventPage>> {
    let [limit, after, account, kind, actor] =
        query.take(["limit", "after", "account_id", "type", "actor"])?;
    if actor
        .as_ref()
        .is_some_and(|a| a.is_empty() || a.len() > 300 || a.contains('\0'))
    {
        return Err(ApiError::invalid("actor: must be 1 to 300 characters"));
    }
    let paging = Paging::parse(limit.as_deref(), after.as_deref())?;
    let filter = EventFilter {
        after: paging.after,
        limit: paging.limit,
        account_id: account
            .as_deref()
            .map(account_id)
            .transpose()?
            .map(|a| a.to_string()),
        event_type: kind.as_deref().map(event_type).transpose()?,
        actor,
    };
    let page = s.engine.events(&filter).await?;
    Ok(Json(EventPage {
        events: page.items.into_iter().map(Into::into).collect(),
        next: page.next.map(|n| n.to_string()),
    }))
}
