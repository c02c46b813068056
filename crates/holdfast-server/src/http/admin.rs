//! Operations: run a pass now, audit the books, health, metrics, the OpenAPI document.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use holdfast::schedules::{MAX_ACCOUNTS_PER_RUN, MAX_PER_RUN};

use super::auth::{AdminRead, AdminRole, Auth};
use super::error::ApiError;
use super::error::{ApiResult, AuthErrors, ErrorBody};
use super::extract::{BodyOrEmpty, Empty};
use super::state::AppState;
use super::wire::{AuditBody, HealthBody, PassBody, rfc3339};

/// Runs the sweeper now: expired leases and stale jobs release their holds.
#[utoipa::path(post, path = "/v1/admin/sweep", tag = "admin",
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "What the pass did", body = PassBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn sweep(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<PassBody>> {
    let report = s.engine.sweep(MAX_PER_RUN).await?;
    super::metrics::swept(report.processed);
    Ok(Json(report.into()))
}

/// Runs reconciliation now: every pocket checked against its ledger; a difference is
/// explained by one `adjustment` entry.
#[utoipa::path(post, path = "/v1/admin/reconcile", tag = "admin",
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "What the pass did", body = PassBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn reconcile(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<PassBody>> {
    let report = s.engine.reconcile(MAX_ACCOUNTS_PER_RUN).await?;
    Ok(Json(report.into()))
}

/// Runs reactivation now: idle accounts below quota whose window passed are refilled.
#[utoipa::path(post, path = "/v1/admin/reactivate", tag = "admin",
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "What the pass did", body = PassBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn reactivate(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<PassBody>> {
    let report = s.engine.reactivate(MAX_ACCOUNTS_PER_RUN).await?;
    Ok(Json(report.into()))
}

/// Runs the expiry pass now: `credit.expiring` for credit blocks that expire within the
/// card's notice, then what is free of expired blocks written off (`credit.expired`).
#[utoipa::path(post, path = "/v1/admin/expire", tag = "admin",
    request_body(content = Option<Empty>, description = "`{}` or no body at all"),
    responses(
        (status = 200, description = "What the pass did: blocks told or written off", body = PassBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn expire(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    BodyOrEmpty(Empty {}): BodyOrEmpty<Empty>,
) -> ApiResult<Json<PassBody>> {
    let report = s.engine.expire_blocks(MAX_ACCOUNTS_PER_RUN).await?;
    Ok(Json(report.into()))
}

/// Checks the invariants of DESIGN.md over the whole database. Admin keys only; one
/// audit runs at a time per server: a call that comes while one runs gets that run's
/// answer (its `checked_at` says when it started).
#[utoipa::path(get, path = "/v1/admin/audit", tag = "admin",
    responses(
        (status = 200, description = "`ok` when no invariant is broken", body = AuditBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn audit(_: Auth<AdminRole>, State(s): State<AppState>) -> ApiResult<Json<AuditBody>> {
    let run = s.console.audit(&s.engine).await?;
    let violations = run
        .found
        .map_err(|e| ApiError::Unavailable(format!("the audit could not run: {e}")))?;
    Ok(Json(AuditBody {
        ok: violations.is_empty(),
        checked_at: rfc3339(run.at),
        violations: violations.into_iter().map(Into::into).collect(),
    }))
}

/// 200 when the database answers, 503 otherwise. No key needed.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses(
        (status = 200, description = "The database answers", body = HealthBody),
        (status = 503, description = "The database does not answer", body = HealthBody),
    ))]
pub async fn healthz(State(s): State<AppState>) -> (StatusCode, Json<HealthBody>) {
    match s.engine.now().await {
        Ok(_) => (
            StatusCode::OK,
            Json(HealthBody {
                status: "ok".into(),
            }),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "health check: database unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(HealthBody {
                    status: "unavailable".into(),
                }),
            )
        }
    }
}

/// Prometheus text: an admin or viewer key (or no key on the address of
/// `serve --metrics-listen`). Gauges read from the database are at most 5 s old.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses(
        (status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn metrics(_: Auth<AdminRead>, State(s): State<AppState>) -> impl IntoResponse {
    metrics_text(State(s)).await
}

/// The metrics without a key: what `serve --metrics-listen` serves on its own address.
pub async fn metrics_text(State(s): State<AppState>) -> impl IntoResponse {
    let text = super::metrics::render(&s).await;
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], text)
}

/// This document. No key needed.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json", body = Object)))]
pub async fn openapi(Extension(doc): Extension<Arc<serde_json::Value>>) -> Response {
    // The document the router was built with (see `super::router`).
    Json(doc.as_ref()).into_response()
}
