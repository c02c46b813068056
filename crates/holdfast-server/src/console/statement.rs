//! An account's statement as a page to read and to print: the period's opening and
//! closing balance with every change between, what was spent by job kind and by meter,
//! what was held at the end — the figures of `GET /v1/accounts/{id}/statement`, for the
//! days an operator picks (UTC). The browser's print makes it a PDF: the print styles
//! leave out the navigation and the form.

use axum::extract::{Path, Query, State};
use holdfast::AccountId;
use maud::{Markup, html};
use serde::Deserialize;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime, Time};

use super::pages::{PageResult, failed};
use super::session::SignedIn;
use super::view;
use crate::http::AppState;
use crate::http::error::ApiError;
use crate::http::wire::StatementBody;

/// The period as the form sends it: whole days, `to` included.
#[derive(Debug, Deserialize)]
pub struct Period {
    from: Option<String>,
    to: Option<String>,
}

const DAY: i64 = 86_400_000_000;

/// The first day of `to`'s month through `to`'s day: the default period.
fn this_month(now: i64) -> Result<(Date, Date), ApiError> {
    let now = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now) * 1000)
        .map_err(|_| ApiError::invalid("the database's clock is out of range"))?;
    let first = now
        .date()
        .replace_day(1)
        .expect("every month has a first day");
    Ok((first, now.date()))
}

fn parse_day(field: &str, text: &str) -> Result<Date, ApiError> {
    Date::parse(text, format_description!("[year]-[month]-[day]"))
        .map_err(|_| ApiError::invalid(format!("{field}: must be a day such as 2026-11-30")))
}

fn day_text(day: Date) -> String {
    day.format(format_description!("[year]-[month]-[day]"))
        .unwrap_or_else(|_| day.to_string())
}

/// Midnight UTC at the start of `day`, in micros.
fn start_of(day: Date) -> i64 {
    let at = day.with_time(Time::MIDNIGHT).assume_utc();
    i64::try_from(at.unix_timestamp_nanos() / 1000).unwrap_or(i64::MAX)
}

/// The statement's `[from, to)` in micros for the days `first` through `last`.
fn period_of(first: Date, last: Date) -> Result<(i64, i64), ApiError> {
    if first > last {
        return Err(ApiError::invalid("from: must not be after to"));
    }
    let end = last
        .checked_add(Duration::days(1))
        .map_or(start_of(last) + DAY, start_of);
    Ok((start_of(first), end))
}

pub async fn statement(
    State(s): State<AppState>,
    who: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<Period>,
) -> PageResult {
    let fail = |e: ApiError| failed(&who, e);
    let account = AccountId::parse(&id).map_err(|e| fail(e.into()))?;
    let now = s.engine.now().await.map_err(|e| fail(e.into()))?;
    let (first, last) = this_month(now).map_err(fail)?;
    let day = |field, text: &Option<String>, default| match text.as_deref() {
        None | Some("") => Ok(default),
        Some(t) => parse_day(field, t),
    };
    let first = day("from", &q.from, first).map_err(fail)?;
    let last = day("to", &q.to, last).map_err(fail)?;
    let (from, to) = period_of(first, last).map_err(fail)?;
    let found = s.engine.statement(&account, from, to).await;
    let statement = found.map_err(|e| fail(e.into()))?;
    let body = StatementBody::new(statement, &s.engine.card().currency);
    let page = html! {
        form.filters.noprint method="get" {
            label { "From " input type="date" name="from" value=(day_text(first)) required; }
            label { "To " input type="date" name="to" value=(day_text(last)) required; }
            button type="submit" { "Show" }
            a href={ "/console/accounts/" (view::url_encode(&id)) } { "Back to the account" }
        }
        p.period {
            (day_text(first)) " to " (day_text(last)) " (UTC, both days included), in "
            (body.currency) "."
        }
        (figures(&body))
        p.muted.noprint { "Print this page (Ctrl+P, or ⌘P) to save it as a PDF." }
    };
    Ok(view::page(&format!("Statement of {id}"), Some(&who), page))
}

/// The statement's tables.
fn figures(b: &StatementBody) -> Markup {
    html! {
        table.statement {
            thead { tr { th { "" } th.num { "Entries" } th.num { "Amount" } } }
            tbody {
                tr.total { th { "Opening balance" } td.num {} td.num { (b.opening_balance) } }
                @for l in &b.changes {
                    tr { td { (l.kind) } td.num { (l.entries) } td.num { (l.amount) } }
                }
                tr.total { th { "Closing balance" } td.num {} td.num { (b.closing_balance) } }
                tr { td { "Held by open jobs at the end" } td.num {} td.num { (b.held_at_end) } }
            }
        }
        h2 { "Spending by job kind" }
        @if b.spending_by_job_kind.is_empty() { p { "None." } } @else {
            table.spending {
                thead { tr { th { "Job kind" } th.num { "Entries" } th.num { "Amount" } } }
                tbody { @for l in &b.spending_by_job_kind {
                    tr { td { (l.job_kind.as_deref().unwrap_or("(no job)")) } td.num { (l.entries) } td.num { (l.amount) } }
                } }
            }
        }
        h2 { "Spending by meter" }
        @if b.spending_by_meter.is_empty() { p { "None." } } @else {
            table.spending {
                thead { tr { th { "Meter" } th.num { "Entries" } th.num { "Seconds" } th.num { "Amount" } } }
                tbody { @for l in &b.spending_by_meter {
                    tr {
                        td { (l.meter.as_deref().unwrap_or("(not metered)")) }
                        td.num { (l.entries) } td.num { (l.seconds) } td.num { (l.amount) }
                    }
                } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Month;

    fn day(y: i32, m: Month, d: u8) -> Date {
        Date::from_calendar_date(y, m, d).unwrap()
    }

    #[test]
    fn a_period_of_days_ends_at_the_midnight_after_its_last_day() {
        let (from, to) = period_of(
            day(2026, Month::November, 1),
            day(2026, Month::November, 30),
        )
        .unwrap();
        assert_eq!(from, 1_793_491_200_000_000); // 2026-11-01T00:00:00Z
        assert_eq!(to - from, 30 * DAY);
        let (from, to) = period_of(day(2026, Month::March, 5), day(2026, Month::March, 5)).unwrap();
        assert_eq!(to - from, DAY, "one day, both ends included");
        assert!(period_of(day(2026, Month::March, 6), day(2026, Month::March, 5)).is_err());
    }

    #[test]
    fn the_default_period_is_this_month_so_far() {
        // 2026-12-06T16:54:27Z
        let now = 1_796_576_067_000_000;
        assert_eq!(
            this_month(now).unwrap(),
            (day(2026, Month::December, 1), day(2026, Month::December, 6))
        );
    }

    #[test]
    fn a_day_is_year_month_day() {
        assert_eq!(
            parse_day("from", "2026-02-28").unwrap(),
            day(2026, Month::February, 28)
        );
        for bad in [
            "2026-02-30",
            "26-02-01",
            "2026-2-1",
            "2026-02-01T00:00:00Z",
            "",
            "x",
        ] {
            assert!(parse_day("from", bad).is_err(), "{bad}");
        }
    }
}
