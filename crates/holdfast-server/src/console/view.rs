//! The console's page frame and the pieces pages share: money and times as an operator
//! reads them, links, tables, forms with the CSRF token, and charts drawn on the server as
//! SVG (no script: every page reads the same without JavaScript).

use maud::{DOCTYPE, Markup, html};

use super::session::SignedIn;
use crate::cli::fmt;

/// The stylesheet, compiled into the binary and served at `/console/console.css`.
pub const CSS: &str = include_str!("console.css");

/// `text` for a query string.
pub fn url_encode(text: &str) -> String {
    serde_urlencoded::to_string([("", text)])
        .map(|s| s.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

/// A database time as the operator reads it: `2026-12-01 20:31:07 UTC`.
pub fn time(micros: i64) -> String {
    let t = fmt::time(micros);
    match (t.get(..10), t.get(11..19)) {
        (Some(day), Some(clock)) => format!("{day} {clock} UTC"),
        _ => t,
    }
}

pub fn opt_time(micros: Option<i64>) -> String {
    micros.map_or_else(|| "—".to_owned(), time)
}

/// A duration in micros, to the unit that reads best: `45 s`, `12 min`, `3 h`, `2 d`.
pub fn age(micros: i64) -> String {
    let s = micros.max(0) / 1_000_000;
    match s {
        0..120 => format!("{s} s"),
        120..7_200 => format!("{} min", s / 60),
        7_200..172_800 => format!("{} h", s / 3_600),
        _ => format!("{} d", s / 86_400),
    }
}

/// Money in the card's currency, or an allowance's count.
pub fn amount(pocket: &str, micros: i64) -> String {
    fmt::pocket_amount(pocket, micros)
}

pub fn account_link(id: &str) -> Markup {
    html! { a href={ "/console/accounts/" (url_encode(id)) } { code { (id) } } }
}

pub fn job_link(id: &str) -> Markup {
    html! { a href={ "/console/jobs/" (url_encode(id)) } { code { (id) } } }
}

/// The hidden CSRF field every state-changing form carries.
pub fn csrf(s: &SignedIn) -> Markup {
    html! { input type="hidden" name="csrf" value=(s.session.csrf); }
}

/// The whole page: head, navigation, who is signed in, the last action's message, `body`.
pub fn page(title: &str, who: Option<&SignedIn>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · holdfast" }
                link rel="stylesheet" href="/console/console.css";
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header {
                    a.brand href="/console" { "holdfast" }
                    @if let Some(s) = who {
                        nav aria-label="Console" {
                            a href="/console" { "Overview" }
                            a href="/console/accounts" { "Accounts" }
                            a href="/console/jobs" { "Jobs" }
                            a href="/console/webhooks" { "Webhooks" }
                        }
                        form.signout method="post" action="/console/logout" {
                            (csrf(s))
                            span.who { (s.session.actor) " · " (s.session.role.as_str()) }
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main id="main" {
                    @if let Some(message) = who.and_then(SignedIn::flash) {
                        p.flash role="status" { (message) }
                    }
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// A small message page (an error, a refusal), with a way back.
pub fn message(title: &str, who: Option<&SignedIn>, text: &str, back: &str) -> Markup {
    page(
        title,
        who,
        html! {
            p.error role="alert" { (text) }
            p { a href=(back) { "Back" } }
        },
    )
}

const CHART_W: f64 = 600.0;
const CHART_H: f64 = 120.0;

/// One bar per value (oldest first), with the largest value and a text summary for
/// readers that do not see the picture.
pub fn bars(label: &str, values: &[i64]) -> Markup {
    let peak = values.iter().copied().max().unwrap_or(0);
    let max = peak.max(1);
    let total: i64 = values.iter().sum();
    let width = CHART_W / values.len().max(1) as f64;
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (CHART_W) " " (CHART_H) } role="img" aria-label=(label) {
                title { (label) }
                @for (i, v) in values.iter().enumerate() {
                    @let h = CHART_H * (*v as f64) / (max as f64);
                    rect x=(format!("{:.1}", i as f64 * width)) y=(format!("{:.1}", CHART_H - h))
                        width=(format!("{:.1}", (width - 1.0).max(1.0))) height=(format!("{h:.1}")) {}
                }
            }
            figcaption { (label) ": " (total) " in all, at most " (peak) " in a minute" }
        }
    }
}

/// A line through `(time, value)` points, oldest first, scaled to fit.
pub fn line(label: &str, points: &[(i64, i64)], format: impl Fn(i64) -> String) -> Markup {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return html! { p.muted { "No entries to draw." } };
    };
    let lo = points.iter().map(|p| p.1).min().unwrap_or(0).min(0);
    let hi = points.iter().map(|p| p.1).max().unwrap_or(0).max(lo + 1);
    let span_t = (last.0 - first.0).max(1) as f64;
    let x = |t: i64| CHART_W * (t - first.0) as f64 / span_t;
    let y = |v: i64| CHART_H - CHART_H * (v - lo) as f64 / (hi - lo) as f64;
    let path: String = points
        .iter()
        .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (CHART_W) " " (CHART_H) } role="img" aria-label=(label) {
                title { (label) }
                line.zero x1="0" x2=(CHART_W) y1=(format!("{:.1}", y(0))) y2=(format!("{:.1}", y(0))) {}
                polyline points=(path) {}
                circle cx=(format!("{:.1}", x(last.0))) cy=(format!("{:.1}", y(last.1))) r="3" {}
            }
            figcaption {
                (label) ": from " (format(first.1)) " (" (time(first.0)) ") to "
                (format(last.1)) " (" (time(last.0)) "); lowest " (format(lo)) ", highest " (format(hi))
            }
        }
    }
}

/// A definition list of label → value.
pub fn facts(rows: &[(&str, Markup)]) -> Markup {
    html! {
        dl.facts {
            @for (k, v) in rows {
                dt { (k) }
                dd { (v) }
            }
        }
    }
}
