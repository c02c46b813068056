//! The HTTP layer's one error type: every way a request can end in an error, each mapped to
//! exactly one status and one stable code of API.md. Internal causes are logged here and
//! never sent to the client.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use holdfast::{IdError, MoneyError, Refusal, StoreError};
use serde::Serialize;
use thiserror::Error;
use utoipa::{IntoResponses, ToSchema};

use super::auth::Role;

#[derive(Debug, Clone, Error)]
pub enum ApiError {
    #[error("a valid API key is required: Authorization: Bearer <key>")]
    Unauthorized,
    /// The key's role is not one of the roles the endpoint allows: the message names both.
    #[error(
        "this endpoint needs role {} (this key's role is {})",
        one_of(allowed),
        role.as_str()
    )]
    Forbidden {
        role: Role,
        allowed: &'static [Role],
    },
    #[error("the request body is larger than its limit (64 KiB; 1 MiB for POST /v1/debits)")]
    PayloadTooLarge,
    #[error("{0}")]
    InvalidRequest(String),
    #[error("no such route")]
    RouteNotFound,
    #[error("this route does not accept that method")]
    MethodNotAllowed,
    #[error("no dead or delivered delivery of this event to this endpoint")]
    DeliveryNotFound,
    #[error("no map of this customer")]
    CustomerNotFound,
    /// A payment provider's webhook without a valid signature (400 `invalid_signature`).
    #[error("{0}")]
    InvalidSignature(String),
    /// A signed provider event that is not of its type's shape (400 `invalid_event`).
    #[error("{0}")]
    InvalidEvent(String),
    /// A provider event that names what is not here yet (an account, a payment): 404 with
    /// `code`; the provider's retry applies it once it is.
    #[error("{message}")]
    NotYet { code: &'static str, message: String },
    /// This key made more requests than its rate limit allows (`--rate-limit-per-second`).
    #[error("this key is over its request rate limit; try again after Retry-After seconds")]
    RateLimited { retry_after_seconds: u64 },
    /// As many CSV exports as one server streams at once are streaming now.
    #[error(
        "as many CSV exports as this server streams at once are running; try again when one ends"
    )]
    TooManyExports,
    /// A business refusal from the engine: its own status and code.
    #[error(transparent)]
    Refused(Refusal),
    /// The database cannot answer (down, pool exhausted, timed out, contention).
    #[error("the database is unavailable; try again")]
    Unavailable(String),
    /// The database's disk is full (SQLite): nothing was written; reads still answer.
    #[error(
        "the database's disk is full: nothing was written; try again with the same idempotency key once space is freed"
    )]
    DiskFull(String),
    /// A bug or broken data: logged with its cause, answered without it.
    #[error("internal error")]
    Internal(String),
}

/// `a`, `a or b`, `a, b or c`: the roles an endpoint allows, for a 403's message.
fn one_of(roles: &[Role]) -> String {
    let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "no".to_owned(),
    }
}

/// `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable code of API.md, e.g. `invalid_request`, `insufficient_funds`.
    pub code: String,
    /// Human text; may change between versions.
    pub message: String,
}

/// The errors any keyed endpoint can answer, for the handlers' documentation (never built).
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum AuthErrors {
    /// `unauthorized`: no key, or not a live key.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// `forbidden`: the key's role may not call this; or `account_blocked` /
    /// `account_suspended` where a submit is refused.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// `payload_too_large`: the body is over 64 KiB (1 MiB for `POST /v1/debits`).
    #[response(status = 413)]
    PayloadTooLarge(ErrorBody),
    /// `rate_limited`: this key is over its request rate limit (when the server has one);
    /// `too_many_exports` (`GET /v1/ledger` as CSV): as many exports as the server streams
    /// at once are running. `Retry-After` gives the whole seconds to wait.
    #[response(status = 429, headers(("Retry-After" = u64, description = "Whole seconds to wait, at least 1")))]
    RateLimited(ErrorBody),
    /// `database_unavailable`: the database did not answer in time, or (SQLite) its disk
    /// is full; `Retry-After: 1`.
    #[response(status = 503, headers(("Retry-After" = u64, description = "Seconds to wait: 1")))]
    Unavailable(ErrorBody),
}

impl ApiError {
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::InvalidRequest(message.into())
    }

    /// A malformed amount in `field`.
    pub fn money(field: &str, e: MoneyError) -> ApiError {
        ApiError::InvalidRequest(format!("{field}: {e}"))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::InvalidRequest(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RouteNotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::DeliveryNotFound | ApiError::CustomerNotFound | ApiError::NotYet { .. } => {
                StatusCode::NOT_FOUND
            }
            ApiError::InvalidSignature(_) | ApiError::InvalidEvent(_) => StatusCode::BAD_REQUEST,
            ApiError::RateLimited { .. } | ApiError::TooManyExports => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Refused(r) => {
                StatusCode::from_u16(r.http_status()).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY)
            }
            ApiError::Unavailable(_) | ApiError::DiskFull(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden { .. } => "forbidden",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::InvalidRequest(_) => "invalid_request",
            ApiError::RouteNotFound => "route_not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::DeliveryNotFound => "delivery_not_found",
            ApiError::CustomerNotFound => "customer_not_found",
            ApiError::InvalidSignature(_) => "invalid_signature",
            ApiError::InvalidEvent(_) => "invalid_event",
            ApiError::NotYet { code, .. } => code,
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::TooManyExports => "too_many_exports",
            ApiError::Refused(r) => r.code(),
            ApiError::Unavailable(_) | ApiError::DiskFull(_) => "database_unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError::Refused(r)
    }
}

impl From<IdError> for ApiError {
    fn from(e: IdError) -> ApiError {
        ApiError::InvalidRequest(e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        if e.is_out_of_range() {
            return ApiError::Refused(Refusal::AmountOutOfRange);
        }
        match e {
            StoreError::Refused(r) => ApiError::Refused(r),
            StoreError::Unavailable(cause) => ApiError::Unavailable(cause),
            StoreError::DiskFull(cause) => ApiError::DiskFull(cause),
            StoreError::Contention(n) => {
                ApiError::Unavailable(format!("contention outlasted {n} attempts"))
            }
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Unavailable(cause) => tracing::warn!(%cause, "database unavailable"),
            ApiError::DiskFull(cause) => tracing::error!(%cause, "database disk full"),
            ApiError::Internal(cause) => tracing::error!(%cause, "internal error"),
            ApiError::Refused(_) => crate::console::note_refusal(),
            _ => {}
        }
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code().to_owned(),
                message: self.to_string(),
            },
        };
        let mut response = (self.status(), Json(body)).into_response();
        let retry_after = match self {
            // The database did not answer in time: worth trying again shortly. A full disk
            // too: the retry costs little (refused at once) and space may come back any time.
            ApiError::Unavailable(_) | ApiError::DiskFull(_) | ApiError::TooManyExports => Some(1),
            ApiError::RateLimited {
                retry_after_seconds,
            } => Some(retry_after_seconds.max(1)),
            _ => None,
        };
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(seconds),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
