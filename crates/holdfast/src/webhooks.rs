//! Webhook dispatch: POSTs outbox events to the rate card's `[[webhooks]]` endpoints,
//! signed, at least once, in order per account (the store's `webhooks` module keeps the
//! deliveries and their order; this module does the HTTP).
//!
//! Body: the event as `GET /v1/events` lists it. Signed twice with the endpoint's key:
//! to the Standard Webhooks specification (`webhook-id` = the event id, `webhook-timestamp`
//! = unix seconds of the attempt, `webhook-signature: v1,<base64 HMAC-SHA256 of
//! "<id>.<timestamp>.<body>">`), which its libraries verify; and, for receivers written
//! before it, `holdfast-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
//! The key is the secret's bytes, or for a Standard Webhooks secret `whsec_<base64>` the
//! decoded bytes. A non-2xx answer, a timeout or a connection error is a failed
//! attempt: retried after an exponential backoff with a cap, dead after `max_attempts`.
//! Several processes may dispatch against one database.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures::future::join_all;
use hmac::{Hmac, Mac};
use holdfast_core::RateCard;
use holdfast_core::ratecard::{FeedStart, Webhook};
use holdfast_store::passes::webhooks::{AfterFailure, Delivery};
use holdfast_store::{Event, PassReport, Store, StoreError};
use sha2::Sha256;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Most outbox batches one run queues per endpoint.
const MAX_ENQUEUE_BATCHES: usize = 10;

/// The signature header's name (holdfast's own scheme, kept for existing receivers).
pub const SIGNATURE_HEADER: &str = "holdfast-signature";

/// The prefix of a Standard Webhooks secret: the key follows in base64.
const WHSEC: &str = "whsec_";

/// How deliveries are attempted. Passed explicitly; tests shorten the backoff.
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    /// How long one POST may take, connect included.
    pub timeout: Duration,
    /// The wait after the first failed attempt; doubled after each further one.
    pub backoff_base: Duration,
    /// The longest wait between attempts.
    pub backoff_cap: Duration,
    /// Attempts before a delivery is marked dead.
    pub max_attempts: u32,
    /// How many deliveries one dispatcher has in flight at once.
    pub concurrency: usize,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        WebhookOptions {
            timeout: Duration::from_secs(10),
            backoff_base: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(600),
            max_attempts: 12,
            concurrency: 16,
        }
    }
}

impl WebhookOptions {
    /// The wait after failed attempt number `attempts` (1-based): base × 2^(attempts−1),
    /// at most the cap.
    pub fn backoff(&self, attempts: i64) -> Duration {
        let shift = attempts.saturating_sub(1).clamp(0, 30) as u32;
        self.backoff_base
            .saturating_mul(1u32 << shift)
            .min(self.backoff_cap)
    }

    /// A lease outlives the attempt, so a crashed dispatcher's deliveries come back.
    fn lease(&self) -> Duration {
        self.timeout * 2 + Duration::from_secs(5)
    }
}

/// Why the webhooks cannot be dispatched.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// `url` is the endpoint's URL without its query values.
    #[error("webhook {url}: environment variable {name} (secret_env) is not set")]
    MissingSecret { url: String, name: String },
    /// `url` is the endpoint's URL without its query values.
    #[error("webhook {url}: a secret that starts with whsec_ must be base64 after it")]
    BadSecret { url: String },
    #[error("webhook HTTP client: {0}")]
    Client(String),
}

/// One configured endpoint with its secret resolved.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    secret: Vec<u8>,
    pub events: Option<Vec<String>>,
    pub from: FeedStart,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &holdfast_core::redact::webhook_url(&self.url))
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Resolves the secret: inline, or the environment variable `secret_env` names (read
    /// through `env`).
    pub fn resolve(
        w: &Webhook,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, WebhookError> {
        let secret = match (&w.secret, &w.secret_env) {
            (Some(s), _) => s.clone(),
            (None, Some(name)) => env(name).ok_or_else(|| WebhookError::MissingSecret {
                url: holdfast_core::redact::webhook_url(&w.url),
                name: name.clone(),
            })?,
            (None, None) => unreachable!("the rate card requires a secret or secret_env"),
        };
        let secret = match secret.strip_prefix(WHSEC) {
            Some(encoded) => BASE64
                .decode(encoded)
                .map_err(|_| WebhookError::BadSecret {
                    url: holdfast_core::redact::webhook_url(&w.url),
                })?,
            None => secret.into_bytes(),
        };
        Ok(Endpoint {
            url: w.url.clone(),
            secret,
            events: w.events.clone(),
            from: w.from,
        })
    }
}

/// The endpoints of a card, secrets read from the process environment.
pub fn endpoints(card: &RateCard) -> Result<Vec<Endpoint>, WebhookError> {
    card.webhooks
        .iter()
        .map(|w| Endpoint::resolve(w, |name| std::env::var(name).ok()))
        .collect()
}

/// The clock as a signature's timestamp reads it: whole seconds since the Unix epoch.
pub fn unix_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `hex(HMAC-SHA256(secret, "<t>.<body>"))`.
pub fn signature(secret: &[u8], t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// The Standard Webhooks `webhook-signature` value: `v1,<base64 HMAC-SHA256 of
/// "<id>.<t>.<body>">`.
pub fn standard_signature(key: &[u8], id: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(format!("{id}.{t}.").as_bytes());
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

/// The signature header's value for a body sent at `t` (unix seconds).
pub fn signature_header(secret: &[u8], t: i64, body: &[u8]) -> String {
    format!("t={t},v1={}", signature(secret, t, body))
}

/// A time in microseconds since the epoch as RFC 3339 UTC.
pub fn rfc3339(micros: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| micros.to_string())
}

/// The event as `GET /v1/events` lists it.
pub fn event_json(e: &Event) -> serde_json::Value {
    serde_json::json!({
        "event_id": e.event_id.to_string(),
        "type": e.event_type,
        "account_id": e.account_id,
        "job_id": e.job_id,
        "data": e.data,
        "created_at": rfc3339(e.created_at),
        "currency": e.currency,
        "actor": e.actor,
    })
}

/// Delivers outbox events to the card's endpoints.
#[derive(Clone)]
pub struct Dispatcher {
    store: Store,
    client: reqwest::Client,
    endpoints: Vec<Endpoint>,
    opts: WebhookOptions,
}

impl Dispatcher {
    /// A dispatcher for the store's card, secrets from the process environment.
    pub fn new(store: Store, opts: WebhookOptions) -> Result<Dispatcher, WebhookError> {
        let endpoints = endpoints(store.card())?;
        Self::with_endpoints(store, endpoints, opts)
    }

    pub fn with_endpoints(
        store: Store,
        endpoints: Vec<Endpoint>,
        opts: WebhookOptions,
    ) -> Result<Dispatcher, WebhookError> {
        let client = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("holdfast/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| WebhookError::Client(e.to_string()))?;
        Ok(Dispatcher {
            store,
            client,
            endpoints,
            opts,
        })
    }

    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// One run: queues new outbox events for every endpoint, then attempts due deliveries
    /// until none is left or `max_attempts_per_run` attempts were made. `processed` counts
    /// the attempts.
    pub async fn run_once(&self, max_attempts_per_run: u64) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        let batch = max_attempts_per_run.clamp(1, 1000) as i64;
        for ep in &self.endpoints {
            for _ in 0..MAX_ENQUEUE_BATCHES {
                let read = self
                    .store
                    .enqueue_deliveries(&ep.url, ep.events.as_deref(), ep.from, batch)
                    .await?;
                if (read as i64) < batch {
                    break;
                }
            }
        }
        loop {
            let mut attempted = 0;
            for ep in &self.endpoints {
                let left = max_attempts_per_run.saturating_sub(report.processed);
                let limit = left.min(self.opts.concurrency as u64) as i64;
                if limit == 0 {
                    return Ok(report);
                }
                let lease = self.opts.lease().as_micros() as i64;
                let batch = self.store.claim_deliveries(&ep.url, limit, lease).await?;
                attempted += batch.len();
                report.processed += batch.len() as u64;
                let outcomes = join_all(batch.iter().map(|d| self.attempt(ep, d))).await;
                for r in outcomes {
                    r?;
                }
            }
            if attempted == 0 {
                return Ok(report);
            }
        }
    }

    /// One attempt of one delivery, its outcome recorded.
    async fn attempt(&self, ep: &Endpoint, d: &Delivery) -> Result<(), StoreError> {
        match self.post(ep, &d.event).await {
            Ok(()) => {
                self.store.delivery_succeeded(d).await?;
                metrics::counter!("holdfast_webhook_deliveries_total", "outcome" => "delivered")
                    .increment(1);
            }
            Err(error) => {
                let retry = self.opts.backoff(d.attempts).as_micros() as i64;
                let max = i64::from(self.opts.max_attempts);
                let after = self.store.delivery_failed(d, &error, retry, max).await?;
                let outcome = match after {
                    AfterFailure::Dead => {
                        tracing::warn!(endpoint = %holdfast_core::redact::webhook_url(&ep.url), event_id = d.event.event_id, attempts = d.attempts, %error,
                            "webhook delivery is dead after its last attempt");
                        "dead"
                    }
                    AfterFailure::Retry(_) => {
                        tracing::info!(endpoint = %holdfast_core::redact::webhook_url(&ep.url), event_id = d.event.event_id, attempts = d.attempts, %error,
                            "webhook delivery failed; will retry");
                        "retry"
                    }
                    AfterFailure::LeaseLost => "lease_lost",
                };
                metrics::counter!("holdfast_webhook_deliveries_total", "outcome" => outcome)
                    .increment(1);
            }
        }
        Ok(())
    }

    /// POSTs the event; `Err` with a reason for anything but a 2xx answer.
    async fn post(&self, ep: &Endpoint, e: &Event) -> Result<(), String> {
        let body = event_json(e).to_string();
        let id = e.event_id.to_string();
        let t = unix_seconds();
        let response = self
            .client
            .post(&ep.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                SIGNATURE_HEADER,
                signature_header(&ep.secret, t, body.as_bytes()),
            )
            .header("webhook-id", &id)
            .header("webhook-timestamp", t.to_string())
            .header(
                "webhook-signature",
                standard_signature(&ep.secret, &id, t, body.as_bytes()),
            )
            .body(body)
            .send()
            .await
            // Without the URL: a receiver's token in its query must not reach the logs or
            // the deliveries' `last_error`.
            .map_err(|e| format!("request failed: {}", e.without_url()))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("answered {status}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(secret: Option<&str>, env: Option<&str>) -> Webhook {
        Webhook {
            url: "http://127.0.0.1:1/h".into(),
            secret: secret.map(str::to_owned),
            secret_env: env.map(str::to_owned),
            events: None,
            from: Default::default(),
        }
    }

    #[test]
    fn secret_from_env_or_inline() {
        let ep = Endpoint::resolve(&hook(None, Some("HOOK_SECRET")), |n| {
            (n == "HOOK_SECRET").then(|| "s3".to_owned())
        })
        .unwrap();
        assert_eq!(ep.secret, b"s3");
        let ep = Endpoint::resolve(&hook(Some("inline"), None), |_| None).unwrap();
        assert_eq!(ep.secret, b"inline");
        assert!(matches!(
            Endpoint::resolve(&hook(None, Some("MISSING")), |_| None),
            Err(WebhookError::MissingSecret { .. })
        ));
    }

    #[test]
    fn signature_is_hmac_sha256_of_t_dot_body() {
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"1700000000.{\"a\":1}");
        let expected = hex::encode(mac.finalize().into_bytes());
        assert_eq!(signature(b"Jefe", 1_700_000_000, b"{\"a\":1}"), expected);
        assert_eq!(
            signature_header(b"Jefe", 1_700_000_000, b"{\"a\":1}"),
            format!("t=1700000000,v1={expected}")
        );
    }

    /// The example of the Standard Webhooks specification (the same answer its Python
    /// library's `Webhook.sign` gives), through a card secret as an operator writes it.
    #[test]
    fn standard_signature_matches_the_specification() {
        let card_entry = Webhook {
            url: "https://example.com/hook".into(),
            secret: Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into()),
            secret_env: None,
            events: None,
            from: Default::default(),
        };
        let ep = Endpoint::resolve(&card_entry, |_| None).unwrap();
        assert_eq!(
            standard_signature(
                &ep.secret,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        let bad = Webhook {
            secret: Some("whsec_not base64!".into()),
            ..card_entry
        };
        assert!(matches!(
            Endpoint::resolve(&bad, |_| None),
            Err(WebhookError::BadSecret { .. })
        ));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let o = WebhookOptions {
            backoff_base: Duration::from_millis(20),
            backoff_cap: Duration::from_millis(100),
            ..WebhookOptions::default()
        };
        assert_eq!(o.backoff(1), Duration::from_millis(20));
        assert_eq!(o.backoff(2), Duration::from_millis(40));
        assert_eq!(o.backoff(3), Duration::from_millis(80));
        assert_eq!(o.backoff(4), Duration::from_millis(100));
        assert_eq!(o.backoff(60), Duration::from_millis(100));
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(1_700_000_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(1_700_000_000_250_000), "2023-11-14T22:13:20.25Z");
    }
}
