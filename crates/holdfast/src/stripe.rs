//! Payments in from Stripe: a webhook event, verified by its signature, becomes a top-up,
//! a refund of one, or a dispute's block, each keyed by what Stripe names, so that an
//! event Stripe sends twice, or both events of one payment, change the books once.
//!
//! - `checkout.session.completed` / `checkout.session.async_payment_succeeded` (when
//!   paid) and `payment_intent.succeeded`: a top-up of the amount received, keyed
//!   `stripe:<payment intent id>`, to the account in the object's `metadata.account_id`
//!   or the one its customer is mapped to.
//! - `charge.refunded`: the top-up's refunds brought to the charge's `amount_refunded`.
//! - `charge.dispute.created`: the account blocked while the dispute is open;
//!   `charge.dispute.closed`: won (or closed as a warning) lifts the block a dispute made,
//!   lost takes the disputed amount back from the top-up and leaves the account blocked.
//! - Any other type: answered, ignored.
//!
//! Stripe retries an answer other than 2xx for three days: an event that names an
//! account holdfast does not know, or a refund that comes before its payment, is answered
//! 404 and applies on a later try.

use hmac::{Hmac, Mac};
use holdfast_core::decide::RefundAsk;
use holdfast_core::payments::{micros_of_minor_units, same_currency};
use holdfast_core::{AccountId, IdempotencyKey, Micros};
use holdfast_store::{CreditKind, CustomerAccount, Dispute, DisputeStatus, StoreError};
use serde::Deserialize;
use sha2::Sha256;
use subtle::{Choice, ConstantTimeEq};

use crate::Engine;
use crate::core::model::MoneyResult;

/// The provider's name in the store's payment records.
pub const PROVIDER: &str = "stripe";

/// The oldest (or most future) signature timestamp accepted, in seconds from now.
pub const TOLERANCE_SECONDS: i64 = 300;

/// Why a request is not an event Stripe signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("no Stripe signing secret is configured ([payments.stripe] in the rate card)")]
    NotConfigured,
    #[error("the Stripe-Signature header is missing")]
    Missing,
    #[error("the Stripe-Signature header is malformed: {0}")]
    Malformed(&'static str),
    #[error("the signature's timestamp is more than {TOLERANCE_SECONDS} s from now")]
    OutOfTolerance,
    #[error("no v1 signature matches the payload")]
    Mismatch,
}

/// Checks `header` (`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`) against `payload`: one `v1`
/// must be the HMAC-SHA256 of `<t>.<payload>` under `secret` (compared in constant time;
/// during a secret roll Stripe sends one per secret), and `t` within
/// [`TOLERANCE_SECONDS`] of `now` (unix seconds).
pub fn verify(header: &str, payload: &[u8], secret: &[u8], now: i64) -> Result<(), SignatureError> {
    let mut t = None;
    let mut signatures = Vec::new();
    for item in header.split(',') {
        let (name, value) = item
            .trim()
            .split_once('=')
            .ok_or(SignatureError::Malformed("an item without `=`"))?;
        match name {
            "t" if t.is_some() => return Err(SignatureError::Malformed("two timestamps")),
            "t" => {
                let seconds = value.parse::<i64>();
                t = Some(seconds.map_err(|_| SignatureError::Malformed("t is not an integer"))?);
            }
            // A malformed v1 matches nothing; other schemes (v0, test) are not ours.
            "v1" => signatures.extend(hex::decode(value).ok()),
            _ => {}
        }
    }
    let t = t.ok_or(SignatureError::Malformed("no timestamp"))?;
    if signatures.is_empty() {
        return Err(SignatureError::Malformed("no v1 signature"));
    }
    if now.abs_diff(t) > TOLERANCE_SECONDS.unsigned_abs() {
        return Err(SignatureError::OutOfTolerance);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(payload);
    let expected = mac.finalize().into_bytes();
    let matched = signatures
        .iter()
        .fold(Choice::from(0), |any, s| any | s.ct_eq(&expected[..]));
    if bool::from(matched) {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

/// What an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A top-up was written.
    Credited,
    /// A refund of a top-up was written.
    Refunded,
    /// The event's money change was made before (the same payment, refund or dispute).
    AlreadyApplied,
    /// A dispute was recorded (the account blocked or unblocked as it says).
    DisputeRecorded,
    /// The payment is in another currency than the card's: nothing written but the
    /// `payment.refused` event.
    Refused,
    /// An event type or state the engine does not act on.
    Ignored,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Credited => "credited",
            Outcome::Refunded => "refunded",
            Outcome::AlreadyApplied => "already_applied",
            Outcome::DisputeRecorded => "dispute_recorded",
            Outcome::Refused => "refused",
            Outcome::Ignored => "ignored",
        }
    }
}

/// An event's answer: what it did, to which account, with which ledger entry.
#[derive(Debug, Clone)]
pub struct Applied {
    pub outcome: Outcome,
    pub account: Option<AccountId>,
    pub entry_id: Option<i64>,
}

impl Applied {
    fn ignored() -> Applied {
        Applied {
            outcome: Outcome::Ignored,
            account: None,
            entry_id: None,
        }
    }

    fn refused(account: &AccountId) -> Applied {
        Applied {
            outcome: Outcome::Refused,
            account: Some(account.clone()),
            entry_id: None,
        }
    }

    /// A money change's answer: `outcome` when it wrote, else [`Outcome::AlreadyApplied`]
    /// (a replay, or a refund that found nothing left to bring to its total).
    fn money(account: &AccountId, made: Option<MoneyResult>, outcome: Outcome) -> Applied {
        let outcome = match &made {
            Some(m) if !m.replay => outcome,
            _ => Outcome::AlreadyApplied,
        };
        Applied {
            outcome,
            account: Some(account.clone()),
            entry_id: made.map(|m| m.entry.entry_id),
        }
    }
}

/// Why an event was not applied.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// Signed, but not an event of the shape its type has.
    #[error("{0}")]
    Malformed(String),
    /// It names no account holdfast knows (yet): Stripe's retry applies it once the
    /// account or the customer's map exists.
    #[error("{0}")]
    NoAccount(String),
    /// A refund or dispute of a payment not seen yet: Stripe's retry applies it after.
    #[error("{0}")]
    PaymentNotSeen(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Deserialize)]
struct EventData {
    object: serde_json::Value,
}

/// The fields of a Checkout Session, a PaymentIntent, a Charge or a Dispute that the
/// engine reads (each type has some of them).
#[derive(Deserialize)]
struct StripeObject {
    id: String,
    currency: Option<String>,
    amount: Option<i64>,
    amount_total: Option<i64>,
    amount_received: Option<i64>,
    amount_refunded: Option<i64>,
    payment_status: Option<String>,
    payment_intent: Option<String>,
    charge: Option<String>,
    customer: Option<String>,
    status: Option<String>,
    reason: Option<String>,
    #[serde(default)]
    metadata: std::collections::BTreeMap<String, String>,
}

impl StripeObject {
    /// The payment this object is or belongs to: its PaymentIntent's id, else (a dispute
    /// of a charge made without one) its charge's, else its own.
    fn payment_id(&self) -> &str {
        self.payment_intent
            .as_deref()
            .or(self.charge.as_deref())
            .unwrap_or(&self.id)
    }

    fn field(value: Option<i64>, name: &str) -> Result<i64, EventError> {
        value.ok_or_else(|| EventError::Malformed(format!("data.object.{name} is missing")))
    }
}

fn parse_key(text: String) -> Result<IdempotencyKey, EventError> {
    IdempotencyKey::parse(&text).map_err(|e| EventError::Malformed(format!("{text:?}: {e}")))
}

/// The key of a payment's top-up, which its refunds name.
pub fn top_up_key(payment_id: &str) -> String {
    format!("{PROVIDER}:{payment_id}")
}

/// The card's Stripe signing secret, its variable read from the process environment.
pub fn signing_secret(card: &holdfast_core::RateCard) -> Option<String> {
    let endpoint = card.payments.stripe.as_ref()?;
    endpoint.resolve(|name| std::env::var(name).ok())
}

impl Engine {
    /// Maps a Stripe customer to an account (which must exist): a payment of that
    /// customer without `metadata.account_id` tops that account up.
    pub async fn map_stripe_customer(
        &self,
        customer: &str,
        account: &AccountId,
    ) -> Result<CustomerAccount, StoreError> {
        self.store.put_customer(PROVIDER, customer, account).await
    }

    /// The account a Stripe customer is mapped to, if any.
    pub async fn stripe_customer(
        &self,
        customer: &str,
    ) -> Result<Option<CustomerAccount>, StoreError> {
        self.store.customer_account(PROVIDER, customer).await
    }

    /// Removes a Stripe customer's map; whether there was one.
    pub async fn unmap_stripe_customer(&self, customer: &str) -> Result<bool, StoreError> {
        self.store.delete_customer(PROVIDER, customer).await
    }

    /// Applies one verified Stripe event (the raw body, after [`verify`]). Safe to apply
    /// any number of times, in any order, concurrently.
    pub async fn apply_stripe_event(&self, payload: &[u8]) -> Result<Applied, EventError> {
        let event: Event = serde_json::from_slice(payload)
            .map_err(|e| EventError::Malformed(format!("not a Stripe event: {e}")))?;
        let object = || {
            serde_json::from_value::<StripeObject>(event.data.object.clone())
                .map_err(|e| EventError::Malformed(format!("data.object: {e}")))
        };
        match event.kind.as_str() {
            "checkout.session.completed" | "checkout.session.async_payment_succeeded" => {
                let session = object()?;
                if session.payment_status.as_deref() != Some("paid") {
                    return Ok(Applied::ignored());
                }
                let amount = StripeObject::field(session.amount_total, "amount_total")?;
                self.stripe_payment(&session, amount).await
            }
            "payment_intent.succeeded" => {
                let intent = object()?;
                let amount = StripeObject::field(intent.amount_received, "amount_received")?;
                self.stripe_payment(&intent, amount).await
            }
            "charge.refunded" => self.stripe_refund(&object()?).await,
            "charge.dispute.created" | "charge.dispute.closed" => {
                self.stripe_dispute(&object()?).await
            }
            _ => Ok(Applied::ignored()),
        }
    }

    /// The money of `object` in micros, or `None` (and a `payment.refused` event) when it
    /// is not in the card's currency.
    async fn stripe_money(
        &self,
        object: &StripeObject,
        account: &AccountId,
        minor_units: i64,
    ) -> Result<Option<Micros>, EventError> {
        let currency = object.currency.as_deref().unwrap_or_default();
        if !same_currency(currency, &self.card().currency) {
            let payment = object.payment_id();
            let data = serde_json::json!({
                "provider": PROVIDER, "payment_id": payment, "object_id": object.id,
                "currency": currency, "amount_minor_units": minor_units,
                "reason": format!("the card's currency is {}", self.card().currency),
            });
            let first = (self.store)
                .payment_refused(PROVIDER, payment, account, data)
                .await?;
            if first {
                tracing::warn!(payment, currency, account = %account,
                    "a Stripe payment in another currency than the card's: refused");
            }
            return Ok(None);
        }
        micros_of_minor_units(currency, minor_units)
            .map(Some)
            .ok_or_else(|| EventError::Malformed(format!("amount {minor_units} is not money")))
    }

    /// The account a payment names: `metadata.account_id`, else its customer's map.
    async fn stripe_account(&self, object: &StripeObject) -> Result<AccountId, EventError> {
        if let Some(id) = object.metadata.get("account_id") {
            return AccountId::parse(id)
                .map_err(|e| EventError::NoAccount(format!("metadata.account_id: {e}")));
        }
        if let Some(customer) = &object.customer
            && let Some(mapped) = self.store.customer_account(PROVIDER, customer).await?
        {
            return Ok(mapped.account);
        }
        Err(EventError::NoAccount(format!(
            "payment {} names no account: give it metadata.account_id, or map its customer \
             (PUT /v1/integrations/stripe/customers/{{customer_id}})",
            object.payment_id()
        )))
    }

    async fn stripe_payment(
        &self,
        object: &StripeObject,
        amount: i64,
    ) -> Result<Applied, EventError> {
        let named = self.stripe_account(object).await?;
        let account = match self
            .store
            .record_payment(PROVIDER, object.payment_id(), &named)
            .await
        {
            Err(StoreError::Refused(holdfast_core::Refusal::AccountNotFound)) => {
                return Err(EventError::NoAccount(format!("no account {named}")));
            }
            recorded => recorded?,
        };
        let Some(micros) = self.stripe_money(object, &account, amount).await? else {
            return Ok(Applied::refused(&account));
        };
        let key = parse_key(top_up_key(object.payment_id()))?;
        let made = self
            .store
            .credit(&account, micros, CreditKind::TopUp, &key)
            .await?;
        Ok(Applied::money(&account, Some(made), Outcome::Credited))
    }

    /// The account of a payment seen before, else [`EventError::PaymentNotSeen`].
    async fn paid_account(&self, object: &StripeObject) -> Result<AccountId, EventError> {
        self.store
            .payment_account(PROVIDER, object.payment_id())
            .await?
            .ok_or_else(|| {
                EventError::PaymentNotSeen(format!(
                    "payment {} has not been seen yet; a later retry applies this event",
                    object.payment_id()
                ))
            })
    }

    async fn stripe_refund(&self, charge: &StripeObject) -> Result<Applied, EventError> {
        let account = self.paid_account(charge).await?;
        let total = StripeObject::field(charge.amount_refunded, "amount_refunded")?;
        let Some(total) = self.stripe_money(charge, &account, total).await? else {
            return Ok(Applied::refused(&account));
        };
        let key = parse_key(format!("{}:refunded:{}", top_up_key(&charge.id), total.0))?;
        self.refund_top_up(charge, &account, RefundAsk::ToTotal(total), &key)
            .await
    }

    async fn refund_top_up(
        &self,
        object: &StripeObject,
        account: &AccountId,
        ask: RefundAsk,
        key: &IdempotencyKey,
    ) -> Result<Applied, EventError> {
        let top_up = parse_key(top_up_key(object.payment_id()))?;
        let made = match self.store.refund_as_asked(account, &top_up, ask, key).await {
            Err(StoreError::Refused(holdfast_core::Refusal::TopUpNotFound)) => {
                return Err(EventError::PaymentNotSeen(format!(
                    "the top-up of payment {} is not written yet; a later retry applies this event",
                    object.payment_id()
                )));
            }
            made => made?,
        };
        Ok(Applied::money(account, made, Outcome::Refunded))
    }

    async fn stripe_dispute(&self, dispute: &StripeObject) -> Result<Applied, EventError> {
        let account = self.paid_account(dispute).await?;
        let status = match dispute.status.as_deref() {
            Some("won" | "warning_closed") => DisputeStatus::Won,
            Some("lost") => DisputeStatus::Lost,
            _ => DisputeStatus::Open,
        };
        let reason = format!(
            "stripe dispute {} of payment {} ({}): {}",
            dispute.id,
            dispute.payment_id(),
            dispute.reason.as_deref().unwrap_or("no reason given"),
            status.as_str(),
        );
        let recorded = Dispute {
            provider: PROVIDER,
            dispute_id: &dispute.id,
            status,
            reason: &reason,
        };
        self.store.record_dispute(&account, recorded).await?;
        if status != DisputeStatus::Lost {
            return Ok(Applied {
                outcome: Outcome::DisputeRecorded,
                account: Some(account),
                entry_id: None,
            });
        }
        let amount = StripeObject::field(dispute.amount, "amount")?;
        let Some(amount) = self.stripe_money(dispute, &account, amount).await? else {
            return Ok(Applied::refused(&account));
        };
        let key = parse_key(format!("{}:lost", top_up_key(&dispute.id)))?;
        self.refund_top_up(dispute, &account, RefundAsk::AtMost(amount), &key)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(secret: &[u8], t: i64, payload: &[u8]) -> String {
        crate::webhooks::signature_header(secret, t, payload)
    }

    #[test]
    fn a_signature_of_the_payload_within_tolerance_passes() {
        let body = br#"{"type":"x"}"#;
        assert_eq!(
            verify(&header(b"whsec_a", 1_000, body), body, b"whsec_a", 1_000),
            Ok(())
        );
        assert_eq!(
            verify(&header(b"whsec_a", 1_000, body), body, b"whsec_a", 1_300),
            Ok(())
        );
        assert_eq!(
            verify(&header(b"whsec_a", 1_000, body), body, b"whsec_a", 1_301),
            Err(SignatureError::OutOfTolerance)
        );
        assert_eq!(
            verify(&header(b"whsec_a", 1_000, body), body, b"whsec_a", 699),
            Err(SignatureError::OutOfTolerance)
        );
    }

    #[test]
    fn another_secret_payload_or_shape_fails() {
        let body = br#"{"type":"x"}"#;
        let good = header(b"whsec_a", 1_000, body);
        assert_eq!(
            verify(&good, body, b"whsec_b", 1_000),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(&good, b"{}", b"whsec_a", 1_000),
            Err(SignatureError::Mismatch)
        );
        for bad in [
            "",
            "t=1000",
            "v1=00",
            "t=x,v1=00",
            "t=1,t=1,v1=00",
            "garbage",
        ] {
            assert!(
                matches!(
                    verify(bad, body, b"whsec_a", 1_000),
                    Err(SignatureError::Malformed(_))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn during_a_roll_any_v1_may_match() {
        let body = br#"{"type":"x"}"#;
        let new = crate::webhooks::signature(b"whsec_new", 1_000, body);
        let old = crate::webhooks::signature(b"whsec_old", 1_000, body);
        let both = format!("t=1000,v1={old},v1={new},v0=ignored");
        assert_eq!(verify(&both, body, b"whsec_new", 1_000), Ok(()));
        assert_eq!(verify(&both, body, b"whsec_old", 1_000), Ok(()));
        assert_eq!(
            verify(&both, body, b"whsec_x", 1_000),
            Err(SignatureError::Mismatch)
        );
    }
}
