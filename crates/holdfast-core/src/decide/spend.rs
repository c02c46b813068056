//! Spending in a period: the hard limit a plan or an account sets per UTC day or month,
//! and the thresholds whose first crossing in a period is told as
//! `account.spend_threshold`.
//!
//! What counts as spending is what `total_spent` counts: money debits and money
//! captures, less money job refunds (top-up refunds and allowance pockets are not
//! spending). An account's spending in a period is `total_spent` less its value when the
//! period began, the period's *base*, a fact about the past that no later write changes.
//! The bases are kept on the account ([`SpendMarks`]) only where a rule is in force: the
//! first write of a period under a rule finds its period unmarked
//! ([`AccountSnapshot::unmarked_spend_period`]) and marks it from the ledger's spending
//! since the period began ([`SpendMarks::mark`]), so a base is exact however the rule
//! came into force, and an account without a rule pays nothing for it.

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp as Instant, Zoned};
use serde::{Deserialize, Serialize};

use super::{AccountSnapshot, Timestamp};
use crate::money::{MAX_REQUEST_AMOUNT, Micros};
use crate::ratecard::RateCard;
use crate::refusal::Refusal;

/// The length of a spending period: a calendar day or month, of a rule's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpendPeriod {
    Day,
    #[default]
    Month,
}

impl SpendPeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            SpendPeriod::Day => "day",
            SpendPeriod::Month => "month",
        }
    }

    pub fn parse(text: &str) -> Option<SpendPeriod> {
        match text {
            "day" => Some(SpendPeriod::Day),
            "month" => Some(SpendPeriod::Month),
            _ => None,
        }
    }

    /// When the period `now` falls in began in `zone`: the first instant of its day, or
    /// of the first day of its month (midnight, or the first time after it that exists
    /// where a change of offset skips midnight).
    pub fn start(self, now: Timestamp, zone: &SpendZone) -> Timestamp {
        let date = zone.local(now).date();
        match self {
            SpendPeriod::Day => zone.first_instant(date),
            SpendPeriod::Month => zone.first_instant(date.first_of_month()),
        }
    }

    /// When the period `now` falls in ends in `zone`: the start of the next.
    pub fn end(self, now: Timestamp, zone: &SpendZone) -> Timestamp {
        let date = zone.local(now).date();
        let last = match self {
            SpendPeriod::Day => date,
            SpendPeriod::Month => date.last_of_month(),
        };
        last.tomorrow()
            .map_or(Timestamp::MAX, |next| zone.first_instant(next))
    }
}

/// The time zone whose days and months a rule of spending counts: an IANA name
/// (`Europe/Berlin`) from the time zone database built into holdfast; UTC by default.
#[derive(Debug, Clone)]
pub struct SpendZone {
    name: String,
    zone: TimeZone,
}

impl SpendZone {
    pub fn utc() -> SpendZone {
        SpendZone {
            name: "UTC".into(),
            zone: TimeZone::UTC,
        }
    }

    /// The zone an IANA name names (`UTC` included); anything else is refused.
    pub fn parse(name: &str) -> Result<SpendZone, String> {
        let zone = TimeZone::get(name).map_err(|_| {
            format!("{name:?} is not a time zone of the IANA database (such as Europe/Berlin)")
        })?;
        Ok(SpendZone {
            name: name.to_owned(),
            zone,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every name [`SpendZone::parse`] takes, sorted.
    pub fn names() -> Vec<String> {
        let mut names: Vec<String> = (jiff::tz::db().available())
            .map(|name| name.to_string())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// `at` (micros since the epoch) in this zone; instants outside what the zone
    /// database reckons with (past year 9999: no clock reads them) are clamped.
    fn local(&self, at: Timestamp) -> Zoned {
        let at = Instant::from_microsecond(at).unwrap_or(if at < 0 {
            Instant::MIN
        } else {
            Instant::MAX
        });
        at.to_zoned(self.zone.clone())
    }

    /// The first instant of `date` in this zone, in micros since the epoch.
    fn first_instant(&self, date: Date) -> Timestamp {
        let first = date
            .to_zoned(self.zone.clone())
            .and_then(|z| z.start_of_day());
        first.map_or(Timestamp::MAX, |z| z.timestamp().as_microsecond())
    }
}

impl Default for SpendZone {
    fn default() -> SpendZone {
        SpendZone::utc()
    }
}

impl PartialEq for SpendZone {
    fn eq(&self, other: &SpendZone) -> bool {
        self.name == other.name
    }
}

impl Eq for SpendZone {}

impl Serialize for SpendZone {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for SpendZone {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        SpendZone::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// A line of spending whose first crossing in a period is told: an amount, or a
/// percentage of the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpendThreshold {
    Amount(Micros),
    Percent(u32),
}

/// The largest percentage a threshold may name.
pub const MAX_THRESHOLD_PERCENT: u32 = 1000;
/// The most thresholds a policy may list.
pub const MAX_THRESHOLDS: usize = 20;

/// What [`SpendThreshold::parse`] accepts: a positive amount
/// ([`POSITIVE_AMOUNT_PATTERN`](crate::money::POSITIVE_AMOUNT_PATTERN)) or a whole
/// percentage from 1 to 1000 with `%`.
pub static THRESHOLD_PATTERN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let amount = crate::money::POSITIVE_AMOUNT_PATTERN;
    let amount = &amount[1..amount.len() - 1];
    format!("^(?:(?:[1-9][0-9]{{0,2}}|1000)%|{amount})$")
});

impl SpendThreshold {
    /// `"80%"` (a whole percentage, 1 to 1000) or an amount (`"40.00"`, more than zero).
    pub fn parse(text: &str) -> Result<SpendThreshold, String> {
        if let Some(digits) = text.strip_suffix('%') {
            let ok = |p: &u32| (1..=MAX_THRESHOLD_PERCENT).contains(p);
            let plain = digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0');
            return match digits.parse::<u32>() {
                Ok(p) if ok(&p) && plain => Ok(SpendThreshold::Percent(p)),
                _ => Err(format!(
                    "{text:?}: a percentage is a whole number from 1 to {MAX_THRESHOLD_PERCENT}, then %"
                )),
            };
        }
        Micros::parse_positive(text)
            .map(SpendThreshold::Amount)
            .map_err(|e| format!("{text:?}: {e}"))
    }

    /// As [`SpendThreshold::parse`] reads it.
    pub fn format(self) -> String {
        match self {
            SpendThreshold::Amount(m) => m.format(),
            SpendThreshold::Percent(p) => format!("{p}%"),
        }
    }

    /// The line in micros: a percentage of `limit`, rounded down (`None` without one).
    pub fn micros(self, limit: Option<Micros>) -> Option<i64> {
        match self {
            SpendThreshold::Amount(m) => Some(m.0),
            SpendThreshold::Percent(p) => {
                let line = i128::from(limit?.0) * i128::from(p) / 100;
                Some(i64::try_from(line).unwrap_or(i64::MAX))
            }
        }
    }
}

impl Serialize for SpendThreshold {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.format())
    }
}

impl<'de> Deserialize<'de> for SpendThreshold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        SpendThreshold::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A rule of spending: a hard limit per period, and thresholds to be told of.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpendPolicy {
    #[serde(default, with = "optional_money")]
    pub limit: Option<Micros>,
    #[serde(default)]
    pub period: SpendPeriod,
    #[serde(default)]
    pub alerts: Vec<SpendThreshold>,
    /// Whose days and months: an IANA time zone (default UTC).
    #[serde(default)]
    pub timezone: SpendZone,
}

impl SpendPolicy {
    /// A policy as it may be set: a limit more than zero (at most the largest request
    /// amount), at most [`MAX_THRESHOLDS`] thresholds, percentages only with a limit.
    pub fn check(&self) -> Result<(), String> {
        if let Some(limit) = self.limit
            && (limit.0 <= 0 || limit > MAX_REQUEST_AMOUNT)
        {
            return Err(format!(
                "limit: must be more than zero and at most {}",
                MAX_REQUEST_AMOUNT.format()
            ));
        }
        if self.alerts.len() > MAX_THRESHOLDS {
            return Err(format!("alerts: at most {MAX_THRESHOLDS} thresholds"));
        }
        let percent = |t: &&SpendThreshold| matches!(t, SpendThreshold::Percent(_));
        if self.limit.is_none()
            && let Some(t) = self.alerts.iter().find(percent)
        {
            return Err(format!(
                "alerts: {} is a percentage of the limit, and there is no limit",
                t.format()
            ));
        }
        Ok(())
    }

    /// A rule from its fields as a client writes them (the API's body, the CLI's flags):
    /// `limit` a positive amount or none, `period` `day` or `month` (none: month), the
    /// thresholds as [`SpendThreshold::parse`] reads them, `timezone` an IANA name (none:
    /// UTC); checked ([`SpendPolicy::check`]). The error names the field (`limit: …`,
    /// `alerts[1]: …`).
    pub fn from_text(
        limit: Option<&str>,
        period: Option<&str>,
        alerts: &[String],
        timezone: Option<&str>,
    ) -> Result<SpendPolicy, String> {
        let limit = limit
            .map(|l| Micros::parse_positive(l).map_err(|e| format!("limit: {e}")))
            .transpose()?;
        let period = match period {
            None => SpendPeriod::default(),
            Some(p) => SpendPeriod::parse(p).ok_or("period: must be day or month")?,
        };
        let alerts = alerts
            .iter()
            .enumerate()
            .map(|(i, a)| SpendThreshold::parse(a).map_err(|e| format!("alerts[{i}]: {e}")));
        let timezone = timezone
            .map(|z| SpendZone::parse(z).map_err(|e| format!("timezone: {e}")))
            .transpose()?;
        let policy = SpendPolicy {
            limit,
            period,
            alerts: alerts.collect::<Result<_, _>>()?,
            timezone: timezone.unwrap_or_default(),
        };
        policy.check()?;
        Ok(policy)
    }

    /// The period in words for a reader: `month`, or `day in Europe/Berlin` where the
    /// zone is not UTC.
    pub fn period_words(&self) -> String {
        let period = self.period.as_str();
        if self.timezone == SpendZone::utc() {
            period.to_owned()
        } else {
            format!("{period} in {}", self.timezone.name())
        }
    }

    /// The thresholds in micros, ascending, each once.
    pub fn lines(&self) -> Vec<i64> {
        let mut lines: Vec<i64> = self
            .alerts
            .iter()
            .filter_map(|t| t.micros(self.limit))
            .filter(|line| *line > 0)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }
}

/// `Option<Micros>` as an amount string or null.
mod optional_money {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::money::Micros;

    pub fn serialize<S: Serializer>(m: &Option<Micros>, s: S) -> Result<S::Ok, S::Error> {
        match m {
            Some(m) => s.serialize_str(&m.format()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Micros>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| Micros::parse(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// Where an account's spending counters stood: `total_spent` when a day and a month
/// began (the bases; `None`: not marked), and the highest threshold told in the period
/// that began at `alerted_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpendMarks {
    pub day_start: Option<Timestamp>,
    pub day_base: i64,
    pub month_start: Option<Timestamp>,
    pub month_base: i64,
    pub alerted_start: Option<Timestamp>,
    pub alerted: i64,
}

impl SpendMarks {
    /// Whether `period` is marked as the one that began at `start`.
    pub fn marks(&self, period: SpendPeriod, start: Timestamp) -> bool {
        let marked = match period {
            SpendPeriod::Day => self.day_start,
            SpendPeriod::Month => self.month_start,
        };
        marked == Some(start)
    }

    /// Marks `period` as the one that began at `start`, for an account at `total_spent`
    /// that spent `spent` since (the ledger's sum).
    pub fn mark(&mut self, period: SpendPeriod, start: Timestamp, total_spent: i64, spent: i64) {
        let (start, base) = (Some(start), total_spent - spent);
        match period {
            SpendPeriod::Day => (self.day_start, self.day_base) = (start, base),
            SpendPeriod::Month => (self.month_start, self.month_base) = (start, base),
        }
    }

    /// Spending in the `period` that began at `start`; nothing where it is not marked
    /// (the store marks the period of the rule in force before deciding).
    pub fn spent(&self, period: SpendPeriod, start: Timestamp, total_spent: i64) -> i64 {
        if !self.marks(period, start) {
            return 0;
        }
        total_spent
            - match period {
                SpendPeriod::Day => self.day_base,
                SpendPeriod::Month => self.month_base,
            }
    }

    /// The highest threshold told in the period that began at `start` (0: none yet).
    pub fn alerted_since(&self, start: Timestamp) -> i64 {
        if self.alerted_start == Some(start) {
            self.alerted
        } else {
            0
        }
    }
}

/// An account's spending as the rules see it: its own policy (`None`: its plan's) and
/// its marks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spend {
    pub policy: Option<SpendPolicy>,
    pub marks: SpendMarks,
}

/// Spending in the period of the policy in force, with its limit and bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendStanding {
    pub policy: SpendPolicy,
    pub period_start: Timestamp,
    pub period_end: Timestamp,
    pub spent: i64,
}

/// A threshold crossed for the first time in its period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdCrossed {
    pub line: i64,
    pub spent: i64,
    pub standing: SpendStanding,
}

impl ThresholdCrossed {
    /// The event it is told as.
    pub const EVENT: &'static str = "account.spend_threshold";

    /// The event's data (API.md "Events").
    pub fn data(&self) -> serde_json::Value {
        let s = &self.standing;
        let limit = s.policy.limit;
        serde_json::json!({
            "threshold": Micros(self.line).format(), "threshold_micros": self.line,
            "spent": Micros(self.spent).format(), "spent_micros": self.spent,
            "limit": limit.map(Micros::format), "limit_micros": limit.map(|l| l.0),
            "period": s.policy.period.as_str(),
            "period_start": rfc3339(s.period_start), "period_end": rfc3339(s.period_end),
        })
    }
}

/// `at` as RFC 3339 in UTC, to the microsecond.
pub fn rfc3339(at: Timestamp) -> String {
    let at = Instant::from_microsecond(at).unwrap_or(Instant::MAX);
    at.to_string()
}

impl AccountSnapshot {
    /// The policy in force: the account's own, else its effective plan's (`None`: no
    /// rule of spending at all).
    pub fn spend_policy<'a>(&'a self, card: &'a RateCard) -> Option<&'a SpendPolicy> {
        let (_, plan) = self.effective_plan(card);
        self.spend.policy.as_ref().or(plan.spend.as_ref())
    }

    /// The period of the rule in force, and when it began, when it is not marked for
    /// now: the store marks it from the ledger before the rules read it.
    pub fn unmarked_spend_period(&self, card: &RateCard) -> Option<(SpendPeriod, Timestamp)> {
        let policy = self.spend_policy(card)?;
        let start = policy.period.start(self.now, &policy.timezone);
        (!self.spend.marks.marks(policy.period, start)).then_some((policy.period, start))
    }

    /// Spending in the current period of the policy in force.
    pub fn spend_standing(&self, card: &RateCard) -> Option<SpendStanding> {
        let policy = self.spend_policy(card)?;
        let (period, zone) = (policy.period, &policy.timezone);
        let period_start = period.start(self.now, zone);
        Some(SpendStanding {
            policy: policy.clone(),
            period_start,
            period_end: period.end(self.now, zone),
            spent: (self.spend.marks).spent(period, period_start, self.total_spent),
        })
    }

    /// May `amount` more be committed (a guarded debit, or a submit's money hold)? Not
    /// when the period's spending, what is held and `amount` would pass the limit.
    /// Exactly at the limit passes.
    pub fn check_spend(&self, card: &RateCard, amount: i64) -> Result<(), Refusal> {
        let Some(s) = self.spend_standing(card) else {
            return Ok(());
        };
        let Some(limit) = s.policy.limit else {
            return Ok(());
        };
        let committed = i128::from(s.spent) + i128::from(self.held) + i128::from(amount);
        if committed > i128::from(limit.0) {
            Err(Refusal::SpendLimitReached)
        } else {
            Ok(())
        }
    }

    /// The thresholds the period's spending has reached that were not told yet in the
    /// period, ascending; marks them told. A threshold is reached at equality, told once
    /// per period whatever falls back below it after.
    pub fn take_thresholds(&mut self, card: &RateCard) -> Vec<ThresholdCrossed> {
        let Some(standing) = self.spend_standing(card) else {
            return Vec::new();
        };
        let told = self.spend.marks.alerted_since(standing.period_start);
        let crossed: Vec<i64> = (standing.policy.lines().into_iter())
            .filter(|line| *line > told && *line <= standing.spent)
            .collect();
        if let Some(highest) = crossed.last() {
            self.spend.marks.alerted_start = Some(standing.period_start);
            self.spend.marks.alerted = *highest;
        }
        let spent = standing.spent;
        let crossed = crossed.into_iter().map(|line| ThresholdCrossed {
            line,
            spent,
            standing: standing.clone(),
        });
        crossed.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000_000;

    /// Micros since the epoch of a UTC date and hour.
    fn at(y: i16, m: i8, d: i8, h: i64) -> Timestamp {
        let midnight = jiff::civil::date(y, m, d).to_zoned(TimeZone::UTC).unwrap();
        midnight.timestamp().as_microsecond() + h * H
    }

    fn zone(name: &str) -> SpendZone {
        SpendZone::parse(name).unwrap()
    }

    #[test]
    fn periods_begin_at_utc_midnight_and_on_the_first_of_the_month() {
        let utc = SpendZone::utc();
        let now = at(2026, 12, 7, 13) + 17;
        assert_eq!(SpendPeriod::Day.start(now, &utc), at(2026, 12, 7, 0));
        assert_eq!(SpendPeriod::Day.end(now, &utc), at(2026, 12, 8, 0));
        assert_eq!(SpendPeriod::Month.start(now, &utc), at(2026, 12, 1, 0));
        assert_eq!(SpendPeriod::Month.end(now, &utc), at(2027, 1, 1, 0));
        let leap = at(2028, 2, 29, 23);
        assert_eq!(SpendPeriod::Month.start(leap, &utc), at(2028, 2, 1, 0));
        assert_eq!(SpendPeriod::Month.end(leap, &utc), at(2028, 3, 1, 0));
        assert_eq!(
            SpendPeriod::Month.end(at(2027, 2, 3, 0), &utc),
            at(2027, 3, 1, 0)
        );
        // The first microsecond of a period is in it, the last of the one before is not.
        let midnight = at(2026, 12, 1, 0);
        assert_eq!(SpendPeriod::Month.start(midnight, &utc), midnight);
        assert_eq!(
            SpendPeriod::Month.start(midnight - 1, &utc),
            at(2026, 11, 1, 0)
        );
        assert_eq!(
            SpendPeriod::Day.start(midnight - 1, &utc),
            at(2026, 11, 30, 0)
        );
    }

    #[test]
    fn periods_follow_the_days_of_the_rules_time_zone() {
        // Berlin in winter is UTC+1: its day began at 23:00 UTC the evening before.
        let berlin = zone("Europe/Berlin");
        let now = at(2026, 12, 7, 13);
        assert_eq!(SpendPeriod::Day.start(now, &berlin), at(2026, 12, 6, 23));
        assert_eq!(SpendPeriod::Month.start(now, &berlin), at(2026, 11, 30, 23));
        assert_eq!(SpendPeriod::Month.end(now, &berlin), at(2026, 12, 31, 23));
        // 23:30 UTC on the 31st is already January in Berlin.
        let new_year = at(2026, 12, 31, 23) + H / 2;
        assert_eq!(
            SpendPeriod::Month.start(new_year, &berlin),
            at(2026, 12, 31, 23)
        );
        // The day the clocks go forward has 23 hours, the day they go back 25.
        let spring = at(2026, 3, 29, 12);
        let day = |now| SpendPeriod::Day.end(now, &berlin) - SpendPeriod::Day.start(now, &berlin);
        assert_eq!(day(spring), 23 * H);
        assert_eq!(day(at(2026, 10, 25, 12)), 25 * H);
        // Where a change of offset skips midnight the day begins at the first instant
        // there is (Sao Paulo, 2018-11-04: 00:00 became 01:00, UTC-3 to UTC-2).
        let sao_paulo = zone("America/Sao_Paulo");
        let start = SpendPeriod::Day.start(at(2018, 11, 4, 15), &sao_paulo);
        assert_eq!(start, at(2018, 11, 4, 3));
        // An IANA name or nothing: UTC itself is one.
        assert_eq!(zone("UTC"), SpendZone::utc());
        let names = SpendZone::names();
        assert!(names.len() > 300, "{}", names.len());
        assert!(names.iter().all(|n| SpendZone::parse(n).is_ok()));
        assert!(names.iter().any(|n| n == "UTC"));
        let refused = SpendZone::parse("Mars/Olympus").unwrap_err();
        assert!(refused.contains("Mars/Olympus"), "{refused}");
        assert!(SpendPolicy::from_text(None, None, &[], Some("Nowhere")).is_err());
        let p = SpendPolicy::from_text(None, Some("day"), &[], Some("Asia/Tokyo")).unwrap();
        assert_eq!(p.timezone.name(), "Asia/Tokyo");
        assert_eq!(p.period_words(), "day in Asia/Tokyo");
        assert_eq!(SpendPolicy::default().period_words(), "month");
        // Stored and read back by name; a rule stored before zones existed is UTC's.
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<SpendPolicy>(&json).unwrap(), p);
        let old: SpendPolicy =
            serde_json::from_str(r#"{"limit":null,"period":"day","alerts":[]}"#).unwrap();
        assert_eq!(old.timezone, SpendZone::utc());
    }

    #[test]
    fn thresholds_parse_as_amounts_or_whole_percentages() {
        let t = SpendThreshold::parse;
        assert_eq!(t("80%"), Ok(SpendThreshold::Percent(80)));
        assert_eq!(t("40.00"), Ok(SpendThreshold::Amount(Micros(40_000_000))));
        for bad in [
            "0%", "1001%", "-5%", "+5%", "8.5%", "%", "0", "-1.00", "x", "",
        ] {
            assert!(t(bad).is_err(), "{bad:?} parsed");
        }
        assert_eq!(
            SpendThreshold::Percent(80).micros(Some(Micros(50))),
            Some(40)
        );
        assert_eq!(SpendThreshold::Percent(80).micros(None), None);
        assert_eq!(t("12.5").unwrap().format(), "12.50");
    }

    #[test]
    fn the_pattern_takes_what_parse_takes() {
        let pattern = regex::Regex::new(&THRESHOLD_PATTERN).unwrap();
        let samples = [
            "1%",
            "80%",
            "100%",
            "999%",
            "1000%",
            "1001%",
            "0%",
            "080%",
            "8.5%",
            "%",
            "12.50",
            "0.000001",
            "0",
            "00.5",
            "1000000000",
            "1000000001",
            "-1",
            "5 %",
            "x",
        ];
        for text in samples {
            assert_eq!(
                pattern.is_match(text),
                SpendThreshold::parse(text).is_ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_policy_needs_a_limit_for_its_percentages() {
        let policy = |limit: Option<i64>, alerts: &[&str]| SpendPolicy {
            limit: limit.map(Micros),
            period: SpendPeriod::Month,
            alerts: alerts
                .iter()
                .map(|a| SpendThreshold::parse(a).unwrap())
                .collect(),
            timezone: SpendZone::utc(),
        };
        assert!(policy(None, &["80%"]).check().is_err());
        assert!(policy(None, &["8.00"]).check().is_ok());
        assert!(policy(Some(0), &[]).check().is_err());
        assert!(policy(Some(MAX_REQUEST_AMOUNT.0 + 1), &[]).check().is_err());
        assert!(policy(Some(10_000_000), &["50%", "100%"]).check().is_ok());
        let many = vec!["1.00"; MAX_THRESHOLDS + 1];
        assert!(policy(None, &many).check().is_err());
        // Lines ascending, each once: 50 % of 10.00 and 5.00 are one line.
        let p = policy(Some(10_000_000), &["100%", "5.00", "50%", "2.00"]);
        assert_eq!(p.lines(), vec![2_000_000, 5_000_000, 10_000_000]);
    }

    #[test]
    fn a_period_is_marked_from_its_spending_and_reads_nothing_unmarked() {
        let (day, month, next_day) = (at(2026, 12, 7, 0), at(2026, 12, 1, 0), at(2026, 12, 8, 0));
        let mut marks = SpendMarks {
            alerted_start: Some(day),
            alerted: 7,
            ..SpendMarks::default()
        };
        // Unmarked: nothing known spent.
        assert!(!marks.marks(SpendPeriod::Day, day));
        assert_eq!(marks.spent(SpendPeriod::Day, day, 150), 0);
        // Marked with 50 spent today, 110 this month: the bases are what was spent before.
        marks.mark(SpendPeriod::Day, day, 150, 50);
        marks.mark(SpendPeriod::Month, month, 150, 110);
        assert_eq!((marks.day_start, marks.day_base), (Some(day), 100));
        assert_eq!((marks.month_start, marks.month_base), (Some(month), 40));
        assert_eq!(marks.spent(SpendPeriod::Day, day, 170), 70);
        assert_eq!(marks.spent(SpendPeriod::Month, month, 170), 130);
        // The next day: the day is unmarked again, the month stands.
        assert!(!marks.marks(SpendPeriod::Day, next_day));
        assert_eq!(marks.spent(SpendPeriod::Day, next_day, 170), 0);
        assert_eq!(marks.alerted_since(next_day), 0);
        assert_eq!(marks.alerted_since(day), 7);
        // Marking keeps what was told.
        assert_eq!(marks.alerted, 7);
    }

    #[test]
    fn only_the_period_of_the_rule_in_force_is_due_a_mark() {
        let card = limited_card();
        let mut snap = spending(0, 0);
        assert_eq!(snap.unmarked_spend_period(&card), None);
        snap.now = at(2027, 1, 3, 5);
        let january = Some((SpendPeriod::Month, at(2027, 1, 1, 0)));
        assert_eq!(snap.unmarked_spend_period(&card), january);
        snap.spend.policy = Some(SpendPolicy {
            period: SpendPeriod::Day,
            ..SpendPolicy::default()
        });
        let third = Some((SpendPeriod::Day, at(2027, 1, 3, 0)));
        assert_eq!(snap.unmarked_spend_period(&card), third);
        // Another zone, another day: its start is not the one marked.
        (snap.spend.marks).mark(SpendPeriod::Day, at(2027, 1, 3, 0), snap.total_spent, 0);
        assert_eq!(snap.unmarked_spend_period(&card), None);
        snap.spend.policy = Some(SpendPolicy {
            period: SpendPeriod::Day,
            timezone: zone("Asia/Tokyo"),
            ..SpendPolicy::default()
        });
        let tokyo = Some((SpendPeriod::Day, at(2027, 1, 2, 15)));
        assert_eq!(snap.unmarked_spend_period(&card), tokyo);
        let plain = RateCard::parse(crate::ratecard::DEFAULT_RATE_CARD).unwrap();
        snap.spend.policy = None;
        assert_eq!(snap.unmarked_spend_period(&plain), None);
    }

    /// The free plan with a limit of 10.00 a month and thresholds at 4.00, 50 % and 100 %.
    fn limited_card() -> RateCard {
        let spend =
            "[plans.free.spend]\nlimit = \"10.00\"\nalerts = [\"4.00\", \"50%\", \"100%\"]\n";
        RateCard::parse(&format!("{}\n{spend}", crate::ratecard::DEFAULT_RATE_CARD)).unwrap()
    }

    /// A snapshot with `spent` this month and `held` held, its month marked.
    fn spending(spent: i64, held: i64) -> AccountSnapshot {
        let mut snap = super::super::tests_support::snapshot(100_000_000);
        snap.now = at(2026, 12, 7, 12);
        snap.held = held;
        snap.total_spent = 1_000 + spent;
        let month = SpendPeriod::Month.start(snap.now, &SpendZone::utc());
        (snap.spend.marks).mark(SpendPeriod::Month, month, snap.total_spent, spent);
        snap
    }

    #[test]
    fn the_limit_counts_what_is_spent_and_held_and_passes_at_equality() {
        let card = limited_card();
        assert_eq!(
            spending(6_000_000, 3_000_000).check_spend(&card, 1_000_000),
            Ok(())
        );
        assert_eq!(
            spending(6_000_000, 3_000_000).check_spend(&card, 1_000_001),
            Err(Refusal::SpendLimitReached)
        );
        assert_eq!(
            spending(10_000_000, 0).check_spend(&card, 1),
            Err(Refusal::SpendLimitReached)
        );
        // No policy: nothing to check.
        let plain = RateCard::parse(crate::ratecard::DEFAULT_RATE_CARD).unwrap();
        assert_eq!(spending(i64::MAX / 4, 0).check_spend(&plain, 1), Ok(()));
        // The account's own policy replaces the plan's.
        let mut own = spending(6_000_000, 0);
        own.spend.policy = Some(SpendPolicy {
            limit: Some(Micros(50_000_000)),
            ..SpendPolicy::default()
        });
        assert_eq!(own.check_spend(&card, 40_000_000), Ok(()));
        own.spend.policy = Some(SpendPolicy::default());
        assert_eq!(own.check_spend(&card, i64::MAX / 4), Ok(()));
    }

    #[test]
    fn thresholds_are_told_once_a_period_in_order_at_equality() {
        let card = limited_card();
        let mut snap = spending(3_999_999, 0);
        assert!(snap.take_thresholds(&card).is_empty());
        // Exactly at 4.00.
        snap.total_spent += 1;
        let lines = |c: Vec<ThresholdCrossed>| c.iter().map(|t| t.line).collect::<Vec<_>>();
        assert_eq!(lines(snap.take_thresholds(&card)), vec![4_000_000]);
        assert!(snap.take_thresholds(&card).is_empty());
        // Past two at once: both, in order.
        snap.total_spent += 7_000_000;
        assert_eq!(
            lines(snap.take_thresholds(&card)),
            vec![5_000_000, 10_000_000]
        );
        // Back below and over again in the same period: nothing more.
        snap.total_spent -= 8_000_000;
        assert!(snap.take_thresholds(&card).is_empty());
        snap.total_spent += 8_000_000;
        assert!(snap.take_thresholds(&card).is_empty());
        // The next month: told again as it is reached.
        snap.now = at(2027, 1, 1, 0);
        (snap.spend.marks).mark(SpendPeriod::Month, at(2027, 1, 1, 0), snap.total_spent, 0);
        assert!(snap.take_thresholds(&card).is_empty());
        snap.total_spent += 4_500_000;
        let crossed = snap.take_thresholds(&card);
        assert_eq!(lines(crossed.clone()), vec![4_000_000]);
        assert_eq!(crossed[0].standing.period_start, at(2027, 1, 1, 0));
        assert_eq!(crossed[0].spent, 4_500_000);
    }
}
