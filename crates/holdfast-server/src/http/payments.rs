//! Payments in: Stripe's webhook (no API key: its `Stripe-Signature` is the credential)
//! and the customer → account map an operator sets for payments that name no account.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use holdfast::stripe::{self, EventError, SignatureError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::accounts::account_id;
use super::auth::{AdminRead, AdminRole, Auth};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Body, PathText, read_body};
use super::schema::AccountIdText;
use super::state::AppState;
use super::wire::rfc3339;

/// The path Stripe posts to: the one `/v1/` route without an API key.
pub const STRIPE_PATH: &str = "/v1/integrations/stripe";

/// A Stripe event as Stripe sends it; the engine reads `type` and `data.object`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct StripeEvent {
    /// `evt_…`
    id: String,
    /// `checkout.session.completed`, `payment_intent.succeeded`, `charge.refunded`,
    /// `charge.dispute.created`, `charge.dispute.closed`, …
    #[schema(rename = "type")]
    kind: String,
    /// `{"object": {…}}`: the Checkout Session, PaymentIntent, Charge or Dispute.
    data: serde_json::Value,
}

/// What an event did.
#[derive(Debug, Serialize, ToSchema)]
pub struct StripeAnswer {
    /// `credited`, `refunded`, `already_applied`, `dispute_recorded`, `refused` (another
    /// currency than the card's: event `payment.refused`) or `ignored`.
    pub outcome: String,
    /// The account the event applied to, when it applied to one.
    pub account_id: Option<String>,
    /// The ledger entry of the top-up or refund, when it wrote or found one.
    pub entry_id: Option<i64>,
}

fn signature_error(e: SignatureError) -> ApiError {
    ApiError::InvalidSignature(e.to_string())
}

/// Stripe's webhook: a checkout or payment tops the account up (once per payment),
/// a refund refunds that top-up, a dispute blocks the account until won. Authenticated by
/// `Stripe-Signature` alone (no API key); see docs/payments.md.
#[utoipa::path(post, path = "/v1/integrations/stripe", tag = "payments",
    params(("Stripe-Signature" = String, Header,
        description = "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">`, as Stripe signs")),
    request_body(content = StripeEvent, description = "The event, byte for byte as Stripe sent it"),
    responses(
        (status = 200, description = "Applied, already applied, refused or ignored", body = StripeAnswer),
        (status = 400, description = "`invalid_signature` (missing, malformed, old or not matching; or no secret configured), `invalid_event` (signed, but not an event of its type's shape)", body = ErrorBody),
        (status = 404, description = "`account_not_found` (the payment names no known account), `top_up_not_found` (a refund or dispute before its payment): Stripe's retry applies it later", body = ErrorBody),
        (status = 413, description = "`payload_too_large`", body = ErrorBody),
        (status = 503, description = "`database_unavailable`", body = ErrorBody),
    ))]
pub async fn stripe(State(s): State<AppState>, req: Request) -> ApiResult<Json<StripeAnswer>> {
    let (headers, payload) = read_body(req, &s).await?;
    let secret = stripe::signing_secret(s.engine.card())
        .ok_or_else(|| signature_error(SignatureError::NotConfigured))?;
    let header = headers
        .get("stripe-signature")
        .ok_or_else(|| signature_error(SignatureError::Missing))?
        .to_str()
        .map_err(|_| signature_error(SignatureError::Malformed("not text")))?;
    stripe::verify(
        header,
        &payload,
        secret.as_bytes(),
        holdfast::webhooks::unix_seconds(),
    )
    .map_err(signature_error)?;
    let work = s.engine.apply_stripe_event(&payload);
    let applied = holdfast::actor::acting_as("integration:stripe", work).await;
    let outcome = applied.as_ref().map_or("error", |a| a.outcome.as_str());
    super::metrics::stripe_event(outcome);
    let applied = applied.map_err(|e| match e {
        EventError::Malformed(m) => ApiError::InvalidEvent(m),
        EventError::NoAccount(m) => ApiError::NotYet {
            code: "account_not_found",
            message: m,
        },
        EventError::PaymentNotSeen(m) => ApiError::NotYet {
            code: "top_up_not_found",
            message: m,
        },
        EventError::Store(e) => e.into(),
    })?;
    Ok(Json(StripeAnswer {
        outcome: applied.outcome.as_str().to_owned(),
        account_id: applied.account.map(|a| a.as_str().to_owned()),
        entry_id: applied.entry_id,
    }))
}

/// The body of a customer's map.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerRequest {
    /// The account the customer's payments top up (it must exist).
    #[schema(value_type = AccountIdText)]
    pub account_id: String,
}

/// A Stripe customer and the account it pays for.
#[derive(Debug, Serialize, ToSchema)]
pub struct CustomerBody {
    pub customer_id: String,
    pub account_id: String,
    /// RFC 3339: when the map was last set.
    pub updated_at: String,
}

/// A Stripe customer id: `cus_…`, 1–255 characters of `[A-Za-z0-9_]`.
fn customer_id(text: &str) -> Result<String, ApiError> {
    let fits = (1..=255).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !fits {
        return Err(ApiError::invalid(
            "customer_id: 1-255 characters of [A-Za-z0-9_] (a Stripe customer id, cus_...)",
        ));
    }
    Ok(text.to_owned())
}

fn customer_body(customer: String, mapped: holdfast::CustomerAccount) -> CustomerBody {
    CustomerBody {
        customer_id: customer,
        account_id: mapped.account.as_str().to_owned(),
        updated_at: rfc3339(mapped.updated_at),
    }
}

/// Maps a Stripe customer to an account: a payment of that customer without
/// `metadata.account_id` tops that account up. Replaces an earlier map.
#[utoipa::path(put, path = "/v1/integrations/stripe/customers/{customer_id}", tag = "payments",
    params(("customer_id" = String, Path, description = "A Stripe customer id (`cus_…`)")),
    request_body = CustomerRequest,
    responses(
        (status = 200, description = "The map", body = CustomerBody),
        (status = 404, description = "`account_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn put_customer(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(customer): PathText,
    Body(req): Body<CustomerRequest>,
) -> ApiResult<Json<CustomerBody>> {
    let customer = customer_id(&customer)?;
    let account = account_id(&req.account_id)?;
    let mapped = s.engine.map_stripe_customer(&customer, &account).await?;
    Ok(Json(customer_body(customer, mapped)))
}

/// The account a Stripe customer is mapped to.
#[utoipa::path(get, path = "/v1/integrations/stripe/customers/{customer_id}", tag = "payments",
    params(("customer_id" = String, Path)),
    responses(
        (status = 200, description = "The map", body = CustomerBody),
        (status = 404, description = "`customer_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn get_customer(
    _: Auth<AdminRead>,
    State(s): State<AppState>,
    PathText(customer): PathText,
) -> ApiResult<Json<CustomerBody>> {
    let customer = customer_id(&customer)?;
    let mapped = s.engine.stripe_customer(&customer).await?;
    let mapped = mapped.ok_or(ApiError::CustomerNotFound)?;
    Ok(Json(customer_body(customer, mapped)))
}

/// Removes a Stripe customer's map.
#[utoipa::path(delete, path = "/v1/integrations/stripe/customers/{customer_id}", tag = "payments",
    params(("customer_id" = String, Path)),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "`customer_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn delete_customer(
    _: Auth<AdminRole>,
    State(s): State<AppState>,
    PathText(customer): PathText,
) -> ApiResult<StatusCode> {
    let customer = customer_id(&customer)?;
    if s.engine.unmap_stripe_customer(&customer).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::CustomerNotFound)
    }
}
