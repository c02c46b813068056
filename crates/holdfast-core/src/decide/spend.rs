//! Spending in a period: the hard limit a plan or an account sets per UTC day or month,
//! and the thresholds whose first crossing in a period is told as
//! `account.spend_threshold`.
//!
//! What counts as spending is what `total_spent` counts: money debits and money
//! captures, less money job refunds (top-up refunds and allowance pockets are not
//! spending). An account's spending in a period is `total_spent` less its value when the
//! period began, the period's *base*. Every write that changes `total_spent` also rolls
//! the marks ([`SpendMarks`]): a period that began since the mark was written starts at
//! `total_spent` as it was before the write, so a base is exact without reading the
//! ledger, for every account, whether or not it has a policy.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{AccountSnapshot, Timestamp};
use crate::money::{MAX_REQUEST_AMOUNT, Micros};
use crate::ratecard::RateCard;
use crate::refusal::Refusal;

/// The length of a spending period: a calendar day or month, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpendPeriod {
    Day,
    #[default]
    Month,
}

const DAY: i64 = 86_400_000_000;

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

    /// When the period `now` falls in began: midnight UTC of its day, or of the first day
    /// of its month.
    pub fn start(self, now: Timestamp) -> Timestamp {
        let day = now - now.rem_euclid(DAY);
        match self {
            SpendPeriod::Day => day,
            SpendPeriod::Month => {
                let date = utc(day).date();
                day - i64::from(date.day() - 1) * DAY
            }
        }
    }

    /// When the period `now` falls in ends: the start of the next.
    pub fn end(self, now: Timestamp) -> Timestamp {
        let start = self.start(now);
        match self {
            SpendPeriod::Day => start + DAY,
            SpendPeriod::Month => {
                let days = utc(start).month().length(utc(start).year());
                start + i64::from(days) * DAY
            }
        }
    }
}

/// `at` (micros since the epoch) as a UTC date and time; times past year 9999 (which no
/// clock reads) are clamped.
fn utc(at: Timestamp) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
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
    /// thresholds as [`SpendThreshold::parse`] reads them; checked ([`SpendPolicy::check`]).
    /// The error names the field (`limit: …`, `alerts[1]: …`).
    pub fn from_text(
        limit: Option<&str>,
        period: Option<&str>,
        alerts: &[String],
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
        let policy = SpendPolicy {
            limit,
            period,
            alerts: alerts.collect::<Result<_, _>>()?,
        };
        policy.check()?;
        Ok(policy)
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

/// Where an account's spending counters stood: `total_spent` when the day and the month
/// of the last write that changed it began (the bases), and the highest threshold told in
/// the period that began at `alerted_start`. `None`: no such write yet.
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
    /// The marks at `now`, for an account at `total_spent`: a period that began since a
    /// mark was written begins at `total_spent` (nothing was spent in it yet, or the mark
    /// would have been rolled), as the writes roll them.
    pub fn rolled(self, now: Timestamp, total_spent: i64) -> SpendMarks {
        let roll = |start: Option<Timestamp>, base: i64, period: SpendPeriod| {
            let current = period.start(now);
            if start == Some(current) {
                (start, base)
            } else {
                (Some(current), total_spent)
            }
        };
        let (day_start, day_base) = roll(self.day_start, self.day_base, SpendPeriod::Day);
        let (month_start, month_base) = roll(self.month_start, self.month_base, SpendPeriod::Month);
        SpendMarks {
            day_start,
            day_base,
            month_start,
            month_base,
            ..self
        }
    }

    /// Spending in `period` of marks [rolled](SpendMarks::rolled) to now.
    pub fn spent(&self, period: SpendPeriod, total_spent: i64) -> i64 {
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
/// its marks, rolled to the snapshot's clock.
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
fn rfc3339(at: Timestamp) -> String {
    let format = time::format_description::well_known::Rfc3339;
    utc(at).format(&format).unwrap_or_default()
}

impl AccountSnapshot {
    /// The policy in force: the account's own, else its effective plan's (`None`: no
    /// rule of spending at all).
    pub fn spend_policy<'a>(&'a self, card: &'a RateCard) -> Option<&'a SpendPolicy> {
        let (_, plan) = self.effective_plan(card);
        self.spend.policy.as_ref().or(plan.spend.as_ref())
    }

    /// Spending in the current period of the policy in force.
    pub fn spend_standing(&self, card: &RateCard) -> Option<SpendStanding> {
        let policy = self.spend_policy(card)?;
        let period = policy.period;
        Some(SpendStanding {
            policy: policy.clone(),
            period_start: period.start(self.now),
            period_end: period.end(self.now),
            spent: self.spend.marks.spent(period, self.total_spent),
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
    fn at(y: i32, m: u8, d: u8, h: i64) -> Timestamp {
        let month = time::Month::try_from(m).unwrap();
        let date = time::Date::from_calendar_date(y, month, d).unwrap();
        let midnight = date.midnight().assume_utc().unix_timestamp() * 1_000_000;
        midnight + h * H
    }

    #[test]
    fn periods_begin_at_utc_midnight_and_on_the_first_of_the_month() {
        let now = at(2026, 12, 7, 13) + 17;
        assert_eq!(SpendPeriod::Day.start(now), at(2026, 12, 7, 0));
        assert_eq!(SpendPeriod::Day.end(now), at(2026, 12, 8, 0));
        assert_eq!(SpendPeriod::Month.start(now), at(2026, 12, 1, 0));
        assert_eq!(SpendPeriod::Month.end(now), at(2027, 1, 1, 0));
        let leap = at(2028, 2, 29, 23);
        assert_eq!(SpendPeriod::Month.start(leap), at(2028, 2, 1, 0));
        assert_eq!(SpendPeriod::Month.end(leap), at(2028, 3, 1, 0));
        assert_eq!(SpendPeriod::Month.end(at(2027, 2, 3, 0)), at(2027, 3, 1, 0));
        // The first microsecond of a period is in it, the last of the one before is not.
        let midnight = at(2026, 12, 1, 0);
        assert_eq!(SpendPeriod::Month.start(midnight), midnight);
        assert_eq!(SpendPeriod::Month.start(midnight - 1), at(2026, 11, 1, 0));
        assert_eq!(SpendPeriod::Day.start(midnight - 1), at(2026, 11, 30, 0));
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
    fn marks_roll_to_a_new_period_at_the_spending_so_far() {
        let day = at(2026, 12, 7, 0);
        let marks = SpendMarks {
            day_start: Some(day),
            day_base: 100,
            month_start: Some(at(2026, 12, 1, 0)),
            month_base: 40,
            alerted_start: Some(day),
            alerted: 7,
        };
        // The same day: the bases stand.
        let same = marks.rolled(day + 5 * H, 150);
        assert_eq!(same, marks);
        assert_eq!(same.spent(SpendPeriod::Day, 150), 50);
        assert_eq!(same.spent(SpendPeriod::Month, 150), 110);
        // The next day: the day begins at what was spent; the month stands.
        let next = marks.rolled(day + 25 * H, 150);
        assert_eq!(next.day_start, Some(at(2026, 12, 8, 0)));
        assert_eq!(next.spent(SpendPeriod::Day, 150), 0);
        assert_eq!(next.spent(SpendPeriod::Month, 150), 110);
        assert_eq!(next.alerted_since(at(2026, 12, 8, 0)), 0);
        assert_eq!(next.alerted_since(day), 7);
        // No mark at all: every period begins now.
        let fresh = SpendMarks::default().rolled(day, 999);
        assert_eq!(fresh.spent(SpendPeriod::Month, 999), 0);
    }

    /// The free plan with a limit of 10.00 a month and thresholds at 4.00, 50 % and 100 %.
    fn limited_card() -> RateCard {
        let spend =
            "[plans.free.spend]\nlimit = \"10.00\"\nalerts = [\"4.00\", \"50%\", \"100%\"]\n";
        RateCard::parse(&format!("{}\n{spend}", crate::ratecard::DEFAULT_RATE_CARD)).unwrap()
    }

    /// A snapshot with `spent` this month and `held` held, its marks rolled.
    fn spending(spent: i64, held: i64) -> AccountSnapshot {
        let mut snap = super::super::tests_support::snapshot(100_000_000);
        snap.now = at(2026, 12, 7, 12);
        snap.held = held;
        snap.total_spent = 1_000 + spent;
        snap.spend.marks = SpendMarks::default().rolled(snap.now, 1_000);
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
        snap.spend.marks = snap.spend.marks.rolled(snap.now, snap.total_spent);
        assert!(snap.take_thresholds(&card).is_empty());
        snap.total_spent += 4_500_000;
        let crossed = snap.take_thresholds(&card);
        assert_eq!(lines(crossed.clone()), vec![4_000_000]);
        assert_eq!(crossed[0].standing.period_start, at(2027, 1, 1, 0));
        assert_eq!(crossed[0].spent, 4_500_000);
    }
}
