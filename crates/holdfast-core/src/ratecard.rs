//! The rate card: one TOML file that describes a deployment (format:
//! `examples/default.toml`). Parsed into raw serde structs, then validated into
//! [`RateCard`], whose every error names the offending key.

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;

use crate::money::Micros;
use crate::refusal::{Known, Refusal};

/// The money pocket's name in `take` lists, ledger entries and holds.
pub const MONEY: &str = "money";

/// The built-in default deployment.
pub const DEFAULT_RATE_CARD: &str = include_str!("../../../examples/default.toml");

#[derive(Debug, Error)]
pub enum RateCardError {
    /// Text that is not TOML: where and why, in one line.
    #[error("rate card is not valid TOML: {0}")]
    Syntax(String),
    /// Valid TOML that is not a rate card: a key the card does not have (named), a value
    /// of the wrong type, a key missing. Where and why, in one line.
    #[error("rate card {0}")]
    Shape(String),
    #[error("rate card key `{key}`: {reason}")]
    Invalid { key: String, reason: String },
}

/// A TOML error in one line, ``line L, column C (`the line`): message`` (toml's own
/// text spans lines, quoting the source; the line quoted names the key of a value of the
/// wrong type): [`RateCardError::Syntax`] when the text is not TOML at all, else
/// [`RateCardError::Shape`].
fn toml_error(text: &str, e: &toml::de::Error) -> RateCardError {
    let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    let place = e.span().map_or_else(String::new, |span| {
        let start = span.start.min(text.len());
        let (before, after) = text.split_at(start);
        let line_start = before.rsplit('\n').next().unwrap_or("");
        let source = format!("{line_start}{}", after.split('\n').next().unwrap_or(""));
        let quoted: String = source.trim().chars().take(80).collect();
        let line = before.matches('\n').count() + 1;
        let column = line_start.chars().count() + 1;
        format!("line {line}, column {column} (`{quoted}`): ")
    });
    let one_line = format!("{place}{message}");
    if text.parse::<toml::Table>().is_err() {
        RateCardError::Syntax(one_line)
    } else {
        RateCardError::Shape(one_line)
    }
}

fn invalid(key: impl Into<String>, reason: impl Into<String>) -> RateCardError {
    RateCardError::Invalid {
        key: key.into(),
        reason: reason.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CancelInProgress {
    #[default]
    Refuse,
    Cooperative,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    pub notice_delay_seconds: i64,
    pub lease_seconds: i64,
    pub stale_after_seconds: i64,
    pub reactivate_after_seconds: i64,
    /// Metered usage for a job of this engine that ended normally is still accepted this
    /// long after it ended (a runner's last report), then refused `already_finished`.
    pub late_usage_grace_seconds: i64,
    /// `credit.expiring` is told this many days before a credit block's expiry (0: never).
    pub credit_expiring_notice_days: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub buffer: Micros,
    pub max_concurrent_jobs: i64,
    pub priority: bool,
    /// Allowance pocket → quota.
    pub allowances: BTreeMap<String, i64>,
    /// When a change takes available money below this, `account.low_balance`; back to
    /// or above it, `account.balance_recovered`. `None`: no warning.
    pub low_balance: Option<Micros>,
    /// The plan's rule of spending (`[plans.NAME.spend]`), which an account's own
    /// replaces. `None`: no limit, no thresholds.
    pub spend: Option<crate::decide::SpendPolicy>,
}

/// One line of a kind's `take` list: a pocket and the amount to hold from it (micros for
/// money, items for an allowance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakeLine {
    pub pocket: String,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    pub lane: String,
    pub take: Vec<TakeLine>,
    pub free_for: Vec<String>,
    pub cancel_in_progress: CancelInProgress,
    pub timeouts: KindTimeouts,
}

/// A kind's own clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindTimeouts {
    /// The longest a job of this kind legitimately runs: the card is refused when the
    /// stale deadline is shorter than three times this (the first seed's rule).
    pub max_run_seconds: Option<i64>,
    /// An open job of this kind older than this is swept: the card's
    /// `timeouts.stale_after_seconds` unless the kind sets its own.
    pub stale_after_seconds: i64,
    /// A queued job that waited this long expires; time its account spent suspended does
    /// not count (the queue of a suspended account waits). `None`: only the stale
    /// deadline applies.
    pub queued_expires_after_seconds: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Schedules {
    pub sweep_every_seconds: f64,
    pub notices_every_seconds: f64,
    pub reconcile_every_seconds: f64,
    pub reactivate_every_seconds: f64,
    pub webhooks_every_seconds: f64,
    pub prune_every_seconds: f64,
    /// How often the expiry pass writes off credit blocks past their expiry.
    pub expire_every_seconds: f64,
}

/// How long what is not the ledger is kept (docs/OPERATIONS.md "Retention"), in days.
/// The ledger is never pruned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Idempotency records: a key replayed after its record was pruned is a new request.
    pub idempotency_days: i64,
    /// Finished jobs (with their submit keys' records, which go first).
    pub jobs_days: i64,
    /// Events of the feed (an event some webhook delivery still names is kept).
    pub events_days: i64,
    /// Webhook deliveries that ended (delivered or dead); pending ones are kept.
    pub webhook_deliveries_days: i64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            idempotency_days: 30,
            jobs_days: 90,
            events_days: 90,
            webhook_deliveries_days: 90,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub url: String,
    pub secret: Option<String>,
    pub secret_env: Option<String>,
    pub events: Option<Vec<String>>,
    /// Where a new endpoint starts in the feed: `End` (the default: only events after it
    /// was first seen) or `Beginning` (the whole history). An endpoint already known keeps
    /// its place.
    pub from: FeedStart,
}

/// Where a webhook endpoint new to the database starts reading the events feed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedStart {
    /// The first event after the endpoint is first seen by a dispatcher.
    #[default]
    End,
    /// The first event ever written.
    Beginning,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RateCard {
    pub currency: String,
    pub default_plan: String,
    pub timeouts: Timeouts,
    /// Allowance pocket → refill interval in seconds.
    pub allowances: BTreeMap<String, i64>,
    pub plans: BTreeMap<String, Plan>,
    pub kinds: BTreeMap<String, Kind>,
    /// Meter → price per second.
    pub meters: BTreeMap<String, Micros>,
    pub schedules: Schedules,
    pub retention: Retention,
    pub webhooks: Vec<Webhook>,
    /// Payment providers whose webhooks top accounts up (`[payments.stripe]`).
    pub payments: Payments,
}

/// The payment providers a card connects (`[payments]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Payments {
    pub stripe: Option<PaymentEndpoint>,
}

/// A provider's webhook endpoint: its signing secret, given in the card or (better) named
/// as an environment variable. Exactly one of the two.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentEndpoint {
    pub secret: Option<String>,
    pub secret_env: Option<String>,
}

impl std::fmt::Debug for PaymentEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentEndpoint")
            .field("secret", &self.secret.as_ref().map(|_| "<hidden>"))
            .field("secret_env", &self.secret_env)
            .finish()
    }
}

impl PaymentEndpoint {
    /// The signing secret: the card's, or the named variable's as `env` reads it.
    pub fn resolve(&self, env: impl Fn(&str) -> Option<String>) -> Option<String> {
        match (&self.secret, &self.secret_env) {
            (Some(secret), _) => Some(secret.clone()),
            (None, Some(name)) => env(name).filter(|s| !s.is_empty()),
            (None, None) => None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPayments {
    stripe: Option<PaymentEndpoint>,
}

// ---- raw file shape ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCard {
    #[serde(default = "default_currency")]
    currency: String,
    default_plan: String,
    #[serde(default)]
    timeouts: RawTimeouts,
    #[serde(default)]
    allowances: BTreeMap<String, RawAllowance>,
    plans: BTreeMap<String, RawPlan>,
    #[serde(default)]
    kinds: BTreeMap<String, RawKind>,
    #[serde(default)]
    meters: BTreeMap<String, RawMeter>,
    #[serde(default)]
    schedules: RawSchedules,
    #[serde(default)]
    retention: RawRetention,
    #[serde(default)]
    webhooks: Vec<RawWebhook>,
    #[serde(default)]
    payments: RawPayments,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRetention {
    idempotency_days: Option<i64>,
    jobs_days: Option<i64>,
    events_days: Option<i64>,
    webhook_deliveries_days: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    notice_delay_seconds: Option<i64>,
    lease_seconds: Option<i64>,
    stale_after_seconds: Option<i64>,
    reactivate_after_seconds: Option<i64>,
    late_usage_grace_seconds: Option<i64>,
    credit_expiring_notice_days: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAllowance {
    refill_every_seconds: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    buffer: String,
    max_concurrent_jobs: i64,
    #[serde(default)]
    priority: bool,
    #[serde(default)]
    allowances: BTreeMap<String, i64>,
    #[serde(default)]
    low_balance: Option<String>,
    #[serde(default)]
    spend: Option<crate::decide::SpendPolicy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTake {
    pocket: String,
    amount: toml::Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKind {
    lane: String,
    take: Vec<RawTake>,
    #[serde(default)]
    free_for: Vec<String>,
    #[serde(default)]
    cancel_in_progress: CancelInProgress,
    #[serde(default)]
    max_run_seconds: Option<i64>,
    #[serde(default)]
    stale_after_seconds: Option<i64>,
    #[serde(default)]
    queued_expires_after_seconds: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeter {
    per_second: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSchedules {
    sweep_every_seconds: Option<f64>,
    notices_every_seconds: Option<f64>,
    reconcile_every_seconds: Option<f64>,
    reactivate_every_seconds: Option<f64>,
    webhooks_every_seconds: Option<f64>,
    prune_every_seconds: Option<f64>,
    expire_every_seconds: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWebhook {
    url: String,
    secret: Option<String>,
    secret_env: Option<String>,
    events: Option<Vec<String>>,
    #[serde(default)]
    from: FeedStart,
}

fn payments(raw: RawPayments) -> Result<Payments, RateCardError> {
    if let Some(stripe) = &raw.stripe
        && stripe.secret.is_some() == stripe.secret_env.is_some()
    {
        return Err(invalid(
            "payments.stripe",
            "give exactly one of `secret` and `secret_env`",
        ));
    }
    Ok(Payments { stripe: raw.stripe })
}

/// The event types holdfast emits (API.md "Events").
pub const EVENT_TYPES: &[&str] = &[
    "job.waiting",
    "job.succeeded",
    "job.failed",
    "job.canceled",
    "job.expired",
    "job.refunded",
    "account.suspended",
    "account.unsuspended",
    "account.banned",
    "account.unbanned",
    "payment.refused",
    "account.low_balance",
    "account.balance_recovered",
    "account.recharge_requested",
    "account.spend_threshold",
    "allowance.refilled",
    "allowance.granted",
    "credit.expiring",
    "credit.expired",
    "ledger.adjusted",
    "operator.blocked",
    "operator.unblocked",
    "operator.banned",
    "operator.unbanned",
    "operator.plan_changed",
    "operator.spend_rule_changed",
    "operator.granted",
    "operator.key_created",
    "operator.key_revoked",
    "operator.adjusted",
];

/// One line of a kind's `take` list: money as a decimal string, an allowance of the card
/// as a positive whole number.
fn take_line(
    key: &str,
    t: RawTake,
    allowances: &BTreeMap<String, i64>,
) -> Result<TakeLine, RateCardError> {
    let amount = if t.pocket == MONEY {
        match &t.amount {
            toml::Value::String(s) => money(format!("{key}.amount"), s)?.0,
            _ => {
                return Err(invalid(
                    format!("{key}.amount"),
                    "money amounts are decimal strings such as \"0.04\"",
                ));
            }
        }
    } else if allowances.contains_key(&t.pocket) {
        match t.amount {
            toml::Value::Integer(n) if n > 0 => n,
            _ => {
                return Err(invalid(
                    format!("{key}.amount"),
                    "an allowance amount is a positive whole number",
                ));
            }
        }
    } else {
        return Err(invalid(
            format!("{key}.pocket"),
            format!("unknown pocket {:?}", t.pocket),
        ));
    };
    Ok(TakeLine {
        pocket: t.pocket,
        amount,
    })
}

/// A kind's clocks, each positive; its stale deadline at least three times its longest
/// legitimate run.
fn kind_timeouts(name: &str, k: &RawKind, card: &Timeouts) -> Result<KindTimeouts, RateCardError> {
    let key = |field: &str| format!("kinds.{name}.{field}");
    let optional = |field: &str, value: Option<i64>| match value {
        None => Ok(None),
        Some(v) => positive(key(field), Some(v), v).map(Some),
    };
    let t = KindTimeouts {
        max_run_seconds: optional("max_run_seconds", k.max_run_seconds)?,
        stale_after_seconds: positive(
            key("stale_after_seconds"),
            k.stale_after_seconds,
            card.stale_after_seconds,
        )?,
        queued_expires_after_seconds: optional(
            "queued_expires_after_seconds",
            k.queued_expires_after_seconds,
        )?,
    };
    if let Some(run) = t.max_run_seconds
        && t.stale_after_seconds < run.saturating_mul(3)
    {
        return Err(invalid(
            key("stale_after_seconds"),
            format!(
                "the stale deadline ({} s) is shorter than 3 × max_run_seconds ({run} s): a \
                 job that runs its full length would be swept while it works",
                t.stale_after_seconds
            ),
        ));
    }
    Ok(t)
}

fn positive(key: String, value: Option<i64>, default: i64) -> Result<i64, RateCardError> {
    match value {
        None => Ok(default),
        Some(v) if v > 0 => Ok(v),
        Some(_) => Err(invalid(key, "must be a positive whole number of seconds")),
    }
}

/// A whole number that may be 0 (`default` when absent).
fn not_negative(key: &str, value: Option<i64>, default: i64) -> Result<i64, RateCardError> {
    match value {
        Some(v) if v < 0 => Err(invalid(key, "must not be negative")),
        v => Ok(v.unwrap_or(default)),
    }
}

/// The longest notice before a credit block expires, in days.
const MAX_EXPIRING_NOTICE_DAYS: i64 = 3650;

/// The `[retention]` section: positive whole days, and a finished job kept at least as
/// long as idempotency records (its submit key's record goes first, so a replayed submit
/// never names a job that is gone).
fn retention(raw: RawRetention) -> Result<Retention, RateCardError> {
    let d = Retention::default();
    let days = |key: &str, value: Option<i64>, default: i64| match value {
        None => Ok(default),
        Some(v) if (1..=36_600).contains(&v) => Ok(v),
        Some(_) => Err(invalid(
            format!("retention.{key}"),
            "must be a whole number of days from 1 to 36600",
        )),
    };
    let r = Retention {
        idempotency_days: days("idempotency_days", raw.idempotency_days, d.idempotency_days)?,
        jobs_days: days("jobs_days", raw.jobs_days, d.jobs_days)?,
        events_days: days("events_days", raw.events_days, d.events_days)?,
        webhook_deliveries_days: days(
            "webhook_deliveries_days",
            raw.webhook_deliveries_days,
            d.webhook_deliveries_days,
        )?,
    };
    if r.jobs_days < r.idempotency_days {
        return Err(invalid(
            "retention.jobs_days",
            format!(
                "must be at least retention.idempotency_days ({}): a finished job is kept as \
                 long as the record of the key that submitted it",
                r.idempotency_days
            ),
        ));
    }
    Ok(r)
}

fn interval(key: &str, value: Option<f64>, default: f64) -> Result<f64, RateCardError> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v > 0.0 => Ok(v),
        Some(_) => Err(invalid(
            format!("schedules.{key}"),
            "must be a positive number of seconds",
        )),
    }
}

fn money(key: String, text: &str) -> Result<Micros, RateCardError> {
    Micros::parse(text).map_err(|e| invalid(key, format!("{e} (got {text:?})")))
}

fn default_currency() -> String {
    "USD".to_owned()
}

/// An ISO 4217 code: three capital letters.
fn currency(code: String) -> Result<String, RateCardError> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code)
    } else {
        Err(invalid(
            "currency",
            format!(
                "must be an ISO 4217 code of three capital letters, such as \"USD\" (got {code:?})"
            ),
        ))
    }
}

impl RateCard {
    /// The built-in default deployment (`examples/default.toml`).
    pub fn builtin() -> RateCard {
        RateCard::parse(DEFAULT_RATE_CARD).expect("the built-in rate card is valid")
    }

    /// A kind's clocks; a kind the card does not have (it cannot: a card that drops a
    /// kind in use is refused at start) gets the card's stale deadline.
    pub fn kind_timeouts(&self, kind: &str) -> KindTimeouts {
        self.kinds.get(kind).map_or(
            KindTimeouts {
                max_run_seconds: None,
                stale_after_seconds: self.timeouts.stale_after_seconds,
                queued_expires_after_seconds: None,
            },
            |k| k.timeouts,
        )
    }

    /// Parses and validates a rate card. Every error names the offending key.
    pub fn parse(text: &str) -> Result<RateCard, RateCardError> {
        let raw: RawCard = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let timeouts = Self::timeouts(raw.timeouts)?;
        let allowances = Self::allowances(raw.allowances)?;
        let plans = Self::plans(raw.plans, &allowances)?;
        if !plans.contains_key(&raw.default_plan) {
            return Err(invalid(
                "default_plan",
                format!("unknown plan {:?}", raw.default_plan),
            ));
        }
        let kinds = Self::kinds(raw.kinds, &allowances, &plans, &timeouts)?;
        let meters = Self::meters(raw.meters)?;
        let schedules = Self::schedules(raw.schedules)?;
        let retention = retention(raw.retention)?;
        let webhooks = Self::webhooks(raw.webhooks)?;
        let payments = payments(raw.payments)?;
        Ok(RateCard {
            currency: currency(raw.currency)?,
            default_plan: raw.default_plan,
            timeouts,
            allowances,
            plans,
            kinds,
            meters,
            schedules,
            retention,
            webhooks,
            payments,
        })
    }

    fn timeouts(raw: RawTimeouts) -> Result<Timeouts, RateCardError> {
        let timeouts = Timeouts {
            notice_delay_seconds: not_negative(
                "timeouts.notice_delay_seconds",
                raw.notice_delay_seconds,
                5,
            )?,
            lease_seconds: positive("timeouts.lease_seconds".into(), raw.lease_seconds, 60)?,
            stale_after_seconds: positive(
                "timeouts.stale_after_seconds".into(),
                raw.stale_after_seconds,
                1800,
            )?,
            reactivate_after_seconds: positive(
                "timeouts.reactivate_after_seconds".into(),
                raw.reactivate_after_seconds,
                86_400,
            )?,
            late_usage_grace_seconds: positive(
                "timeouts.late_usage_grace_seconds".into(),
                raw.late_usage_grace_seconds,
                60,
            )?,
            credit_expiring_notice_days: not_negative(
                "timeouts.credit_expiring_notice_days",
                raw.credit_expiring_notice_days,
                7,
            )?,
        };
        if timeouts.credit_expiring_notice_days > MAX_EXPIRING_NOTICE_DAYS {
            return Err(invalid(
                "timeouts.credit_expiring_notice_days",
                "must be at most 3650 (ten years)",
            ));
        }
        if timeouts.lease_seconds > timeouts.stale_after_seconds {
            return Err(invalid(
                "timeouts.lease_seconds",
                "must not exceed timeouts.stale_after_seconds",
            ));
        }
        Ok(timeouts)
    }

    fn allowances(
        raw: BTreeMap<String, RawAllowance>,
    ) -> Result<BTreeMap<String, i64>, RateCardError> {
        let mut allowances = BTreeMap::new();
        for (name, a) in raw {
            if name == MONEY {
                return Err(invalid(
                    format!("allowances.{name}"),
                    "`money` is the money pocket's name",
                ));
            }
            let every = positive(
                format!("allowances.{name}.refill_every_seconds"),
                Some(a.refill_every_seconds),
                0,
            )?;
            allowances.insert(name, every);
        }
        Ok(allowances)
    }

    fn meters(raw: BTreeMap<String, RawMeter>) -> Result<BTreeMap<String, Micros>, RateCardError> {
        let mut meters = BTreeMap::new();
        for (name, m) in raw {
            let price = money(format!("meters.{name}.per_second"), &m.per_second)?;
            meters.insert(name, price);
        }
        Ok(meters)
    }

    fn schedules(s: RawSchedules) -> Result<Schedules, RateCardError> {
        Ok(Schedules {
            sweep_every_seconds: interval("sweep_every_seconds", s.sweep_every_seconds, 5.0)?,
            notices_every_seconds: interval("notices_every_seconds", s.notices_every_seconds, 1.0)?,
            reconcile_every_seconds: interval(
                "reconcile_every_seconds",
                s.reconcile_every_seconds,
                300.0,
            )?,
            reactivate_every_seconds: interval(
                "reactivate_every_seconds",
                s.reactivate_every_seconds,
                600.0,
            )?,
            webhooks_every_seconds: interval(
                "webhooks_every_seconds",
                s.webhooks_every_seconds,
                1.0,
            )?,
            prune_every_seconds: interval("prune_every_seconds", s.prune_every_seconds, 3600.0)?,
            expire_every_seconds: interval("expire_every_seconds", s.expire_every_seconds, 60.0)?,
        })
    }

    fn plans(
        raw: BTreeMap<String, RawPlan>,
        allowances: &BTreeMap<String, i64>,
    ) -> Result<BTreeMap<String, Plan>, RateCardError> {
        let mut plans = BTreeMap::new();
        for (name, p) in raw {
            let buffer = money(format!("plans.{name}.buffer"), &p.buffer)?;
            if p.max_concurrent_jobs < 1 {
                return Err(invalid(
                    format!("plans.{name}.max_concurrent_jobs"),
                    "must be at least 1",
                ));
            }
            for (pocket, quota) in &p.allowances {
                if !allowances.contains_key(pocket) {
                    return Err(invalid(
                        format!("plans.{name}.allowances.{pocket}"),
                        format!("unknown pocket {pocket:?}"),
                    ));
                }
                if *quota < 0 {
                    return Err(invalid(
                        format!("plans.{name}.allowances.{pocket}"),
                        "quota must not be negative",
                    ));
                }
            }
            let low_balance = p
                .low_balance
                .as_deref()
                .map(|t| money(format!("plans.{name}.low_balance"), t))
                .transpose()?;
            if let Some(spend) = &p.spend {
                spend
                    .check()
                    .map_err(|e| invalid(format!("plans.{name}.spend"), e))?;
            }
            plans.insert(
                name,
                Plan {
                    buffer,
                    max_concurrent_jobs: p.max_concurrent_jobs,
                    priority: p.priority,
                    allowances: p.allowances,
                    low_balance,
                    spend: p.spend,
                },
            );
        }
        Ok(plans)
    }

    fn kinds(
        raw: BTreeMap<String, RawKind>,
        allowances: &BTreeMap<String, i64>,
        plans: &BTreeMap<String, Plan>,
        card_timeouts: &Timeouts,
    ) -> Result<BTreeMap<String, Kind>, RateCardError> {
        let mut kinds = BTreeMap::new();
        for (name, k) in raw {
            let timeouts = kind_timeouts(&name, &k, card_timeouts)?;
            if k.lane.is_empty() || k.lane.ends_with("_priority") {
                return Err(invalid(
                    format!("kinds.{name}.lane"),
                    "must be a non-empty name not ending in _priority",
                ));
            }
            let mut take: Vec<TakeLine> = Vec::with_capacity(k.take.len());
            for (i, t) in k.take.into_iter().enumerate() {
                let key = format!("kinds.{name}.take[{i}]");
                if take.iter().any(|l| l.pocket == t.pocket) {
                    return Err(invalid(format!("{key}.pocket"), "pocket listed twice"));
                }
                take.push(take_line(&key, t, allowances)?);
            }
            for plan in &k.free_for {
                if !plans.contains_key(plan) {
                    return Err(invalid(
                        format!("kinds.{name}.free_for"),
                        format!("unknown plan {plan:?}"),
                    ));
                }
            }
            kinds.insert(
                name,
                Kind {
                    lane: k.lane,
                    take,
                    free_for: k.free_for,
                    cancel_in_progress: k.cancel_in_progress,
                    timeouts,
                },
            );
        }
        Ok(kinds)
    }

    fn webhooks(raw: Vec<RawWebhook>) -> Result<Vec<Webhook>, RateCardError> {
        raw.into_iter()
            .enumerate()
            .map(|(i, w)| {
                if !(w.url.starts_with("http://") || w.url.starts_with("https://")) {
                    return Err(invalid(
                        format!("webhooks[{i}].url"),
                        "must be an http(s) URL",
                    ));
                }
                if w.secret.is_some() == w.secret_env.is_some() {
                    return Err(invalid(
                        format!("webhooks[{i}]"),
                        "give exactly one of `secret` and `secret_env`",
                    ));
                }
                for e in w.events.iter().flatten() {
                    if !EVENT_TYPES.contains(&e.as_str()) {
                        return Err(invalid(
                            format!("webhooks[{i}].events"),
                            format!("unknown event type {e:?}"),
                        ));
                    }
                }
                Ok(Webhook {
                    url: w.url,
                    secret: w.secret,
                    secret_env: w.secret_env,
                    events: w.events,
                    from: w.from,
                })
            })
            .collect()
    }

    /// The lane a job of `kind` goes to for an account on `plan`.
    pub fn lane_for(&self, kind: &Kind, plan: &Plan) -> String {
        if plan.priority {
            format!("{}_priority", kind.lane)
        } else {
            kind.lane.clone()
        }
    }

    /// The kind called `name`, else `unknown_kind` with the card's kinds.
    pub fn kind(&self, name: &str) -> Result<&Kind, Refusal> {
        self.kinds
            .get(name)
            .ok_or_else(|| Refusal::UnknownKind(name.to_owned(), Known::of(self.kinds.keys())))
    }

    /// The price per second of the meter called `name`, else `unknown_meter` with the
    /// card's meters.
    pub fn meter(&self, name: &str) -> Result<Micros, Refusal> {
        self.meters
            .get(name)
            .copied()
            .ok_or_else(|| Refusal::UnknownMeter(name.to_owned(), Known::of(self.meters.keys())))
    }

    /// `unknown_plan` with the card's plans when it has no plan called `name`.
    pub fn check_plan(&self, name: &str) -> Result<(), Refusal> {
        if self.plans.contains_key(name) {
            return Ok(());
        }
        Err(Refusal::UnknownPlan(
            name.to_owned(),
            Known::of(self.plans.keys()),
        ))
    }

    /// `unknown_lane` with the card's lanes when no kind uses `lane`.
    pub fn check_lane(&self, lane: &str) -> Result<(), Refusal> {
        if self.is_lane(lane) {
            return Ok(());
        }
        Err(Refusal::UnknownLane(lane.to_owned(), Known(self.lanes())))
    }

    /// Every lane some kind can put a job in.
    pub fn lanes(&self) -> Vec<String> {
        let mut lanes: Vec<String> = self
            .kinds
            .values()
            .flat_map(|k| [k.lane.clone(), format!("{}_priority", k.lane)])
            .collect();
        lanes.sort();
        lanes.dedup();
        lanes
    }

    pub fn is_lane(&self, lane: &str) -> bool {
        self.kinds
            .values()
            .any(|k| k.lane == lane || lane.strip_suffix("_priority") == Some(k.lane.as_str()))
    }

    /// Every pocket name the card knows: `money` and the allowances.
    pub fn is_pocket(&self, pocket: &str) -> bool {
        pocket == MONEY || self.allowances.contains_key(pocket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(find: &str, replace: &str) -> Result<RateCard, RateCardError> {
        assert!(DEFAULT_RATE_CARD.contains(find), "{find}");
        RateCard::parse(&DEFAULT_RATE_CARD.replacen(find, replace, 1))
    }

    fn key_of(err: RateCardError) -> String {
        match err {
            RateCardError::Invalid { key, .. } => key,
            RateCardError::Syntax(s) | RateCardError::Shape(s) => panic!("not a card: {s}"),
        }
    }

    #[test]
    fn the_default_card_loads() {
        let card = RateCard::builtin();
        assert_eq!(card.default_plan, "free");
        assert_eq!(card.kinds["image"].take[1].amount, 40_000);
        assert_eq!(card.meters["linux-small"], Micros(100));
        assert!(card.kinds["ci"].take.is_empty());
        assert!(card.is_lane("image_priority"));
        assert!(!card.is_lane("nope"));
        assert_eq!(card.schedules.sweep_every_seconds, 5.0);
    }

    #[test]
    fn stripe_takes_exactly_one_secret_and_reads_its_variable() {
        let card = |section: &str| RateCard::parse(&format!("{DEFAULT_RATE_CARD}\n{section}"));
        assert!(RateCard::builtin().payments.stripe.is_none());
        let both = card("[payments.stripe]\nsecret = \"a\"\nsecret_env = \"B\"\n");
        assert_eq!(key_of(both.unwrap_err()), "payments.stripe");
        let neither = card("[payments.stripe]\n");
        assert_eq!(key_of(neither.unwrap_err()), "payments.stripe");
        let named = card("[payments.stripe]\nsecret_env = \"STRIPE_SECRET\"\n").unwrap();
        let stripe = named.payments.stripe.unwrap();
        let env = |name: &str| (name == "STRIPE_SECRET").then(|| "whsec_x".to_owned());
        assert_eq!(stripe.resolve(env).as_deref(), Some("whsec_x"));
        assert_eq!(
            stripe.resolve(|_| Some(String::new())),
            None,
            "empty is unset"
        );
        assert!(
            !format!(
                "{:?}",
                card("[payments.stripe]\nsecret = \"whsec_s\"\n").unwrap()
            )
            .contains("whsec_s"),
            "the secret never shows in a debug print"
        );
    }

    #[test]
    fn the_ci_runner_card_loads() {
        let card = RateCard::parse(include_str!("../../../examples/ci-runners.toml")).unwrap();
        assert_eq!(card.plans.len(), 1);
        assert!(card.allowances.is_empty());
    }

    #[test]
    fn errors_name_the_offending_key() {
        let e = with(r#"pocket = "daily_messages""#, r#"pocket = "weekly""#).unwrap_err();
        assert_eq!(key_of(e), "kinds.text.take[0].pocket");
        let e = with(r#"free_for = ["premium"]"#, r#"free_for = ["gold"]"#).unwrap_err();
        assert_eq!(key_of(e), "kinds.text.free_for");
        let e = with(r#"default_plan = "free""#, r#"default_plan = "gold""#).unwrap_err();
        assert_eq!(key_of(e), "default_plan");
        let e = with(r#"amount = "0.04""#, r#"amount = "-0.04""#).unwrap_err();
        assert_eq!(key_of(e), "kinds.image.take[1].amount");
        let e = with(r#"amount = "0.50""#, r#"amount = "0.5000001""#).unwrap_err();
        assert_eq!(key_of(e), "kinds.video.take[0].amount");
        let e = with(r#"per_second = "0.0001""#, r#"per_second = "abc""#).unwrap_err();
        assert_eq!(key_of(e), "meters.linux-small.per_second");
        let e = with(
            r#"allowances = { daily_images = 10 }"#,
            r#"allowances = { weekly = 10 }"#,
        )
        .unwrap_err();
        assert_eq!(key_of(e), "plans.premium.allowances.weekly");
        let e = with(r#"buffer = "1.00""#, r#"buffer = 1"#).unwrap_err();
        assert!(matches!(e, RateCardError::Shape(s) if s.contains("buffer")));
    }

    #[test]
    fn empty_take_is_metered_work() {
        let card = with(
            r#"take = [{ pocket = "money", amount = "0.50" }]"#,
            "take = []",
        )
        .unwrap();
        assert!(card.kinds["video"].take.is_empty());
    }
}
