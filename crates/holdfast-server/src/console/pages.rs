//! What an operator reads: the overview, accounts, an account, jobs, a job, webhooks.
//! Every list is bounded and read by an index, so a page costs the same on a big database.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use holdfast::redact::webhook_url;
use holdfast::{
    AccountFilter, AccountId, AccountStatus, AccountView, FinishedInMinute, JobFilter, JobId,
    JobStatus, LedgerEntry,
};
use maud::{Markup, html};
use serde::Deserialize;

use super::actions;
use super::session::SignedIn;
use super::view::{self, account_link, age, amount, job_link, opt_time, time};
use crate::cli::fmt;
use crate::http::AppState;
use crate::http::error::ApiError;

/// Rows a list page shows at once.
const PAGE: i64 = 50;
/// Ledger entries the balance chart draws.
const CHART_ENTRIES: i64 = 500;

/// A page, or the message of why it could not be read (404 for what does not exist, 503
/// when the database does not answer).
pub type PageResult = Result<Markup, Response>;

/// What a failed read shows.
pub fn failed(who: &SignedIn, e: impl Into<ApiError>) -> Response {
    let e = e.into();
    let status = e.status();
    let text = match &e {
        ApiError::Refused(r) => r.to_string(),
        ApiError::Unavailable(_) => {
            "The database did not answer in time; reload to try again.".into()
        }
        ApiError::DiskFull(_) => "The database's disk is full; free space, then reload.".into(),
        ApiError::Internal(_) => format!("Something went wrong on our side ({}).", e.code()),
        other => format!("{other} ({})", other.code()),
    };
    (
        status,
        view::message("Not shown", Some(who), &text, "/console"),
    )
        .into_response()
}

pub async fn overview(State(s): State<AppState>, who: SignedIn) -> PageResult {
    let engine = &s.engine;
    let fail = |e| failed(&who, e);
    let now = s.engine.now().await.map_err(fail)?;
    let counts = engine.account_counts().await.map_err(fail)?;
    let stats = engine.stats_of_holds_and_webhooks().await.map_err(fail)?;
    let lanes = engine.open_lanes().await.map_err(fail)?;
    let finished = engine
        .finished_per_minute(now - 3_600_000_000)
        .await
        .map_err(fail)?;
    let statuses = [
        ("active", counts.active),
        ("suspended", counts.suspended),
        ("blocked", counts.blocked),
        ("banned", counts.banned),
    ];
    let body = html! {
        section aria-labelledby="accounts-h" {
            h2 #accounts-h { "Accounts" }
            ul.tiles {
                li { a href="/console/accounts" { strong { (counts.accounts) } " accounts" } }
                @for (status, n) in statuses {
                    li { a href={ "/console/accounts?status=" (status) } { strong { (n) } " " (status) } }
                }
                li { strong { (fmt::money(stats.held_money_micros)) } " held by " (stats.open_holds) " open jobs" }
            }
        }
        section aria-labelledby="lanes-h" {
            h2 #lanes-h { "Lanes" }
            @if lanes.is_empty() { p.muted { "No job is queued or in progress." } }
            @else {
                table {
                    thead { tr { th { "Lane" } th { "Queued" } th { "In progress" } th { "Oldest queued" } } }
                    tbody {
                        @for l in &lanes {
                            tr {
                                td { a href={ "/console/jobs?lane=" (view::url_encode(&l.lane)) } { (l.lane) } }
                                td { (l.queued) }
                                td { (l.in_progress) }
                                td { (l.oldest_queued_at.map_or_else(|| "—".to_owned(), |t| age(now - t))) }
                            }
                        }
                    }
                }
            }
            (view::bars("Jobs finished per minute, last hour", &per_minute(&finished, now, |_| true)))
            (view::bars("Jobs failed, expired or canceled per minute, last hour",
                        &per_minute(&finished, now, |status| status != JobStatus::Succeeded.as_str())))
            (view::bars("Refusals per minute, last hour (this process)", &super::refusals_per_minute()))
        }
        (webhooks_and_audit(&s, &who, &stats))
    };
    Ok(view::page("Overview", Some(&who), body))
}

/// The overview's webhook backlog and the last audit (with the buttons that run passes).
fn webhooks_and_audit(s: &AppState, who: &SignedIn, stats: &holdfast::Stats) -> Markup {
    html! {
        section aria-labelledby="webhooks-h" {
            h2 #webhooks-h { "Webhooks" }
            @if stats.webhooks.is_empty() { p { "No delivery is pending or dead." } }
            @else {
                table {
                    thead { tr { th { "Endpoint" } th { "Pending" } th { "Oldest pending" } th { "Dead" } } }
                    tbody {
                        @for w in &stats.webhooks {
                            tr { td { code { (webhook_url(&w.endpoint)) } } td { (w.pending) } td { (age(w.oldest_pending_micros)) }
                                 td { a href="/console/webhooks#dead" { (w.dead) } } }
                        }
                    }
                }
            }
        }
        section aria-labelledby="audit-h" {
            h2 #audit-h { "Audit" }
            @match s.console.last_audit() {
                None => p { "Not run since this server started." },
                Some(run) => p {
                    @match run.violations() {
                        Ok(0) => { strong.ok { "Clean" } }
                        Ok(n) => { strong.bad { (n) " violations" } }
                        Err(e) => { strong.bad { "Could not run: " (e) } }
                    }
                    ", at " (time(run.at)) "."
                },
            }
            @if who.session.is_admin() { (actions::pass_buttons(who)) }
        }
    }
}

/// Jobs finished in each of the last 60 minutes (oldest first) whose status passes `keep`.
fn per_minute(rows: &[FinishedInMinute], now: i64, keep: impl Fn(&str) -> bool) -> Vec<i64> {
    let this = now / 60_000_000;
    let mut out = vec![0; 60];
    for r in rows.iter().filter(|r| keep(&r.status)) {
        if let Ok(back) = usize::try_from(this - r.minute)
            && back < 60
        {
            out[59 - back] += r.jobs;
        }
    }
    out
}

#[derive(Debug, Deserialize)]
pub struct AccountQuery {
    q: Option<String>,
    plan: Option<String>,
    status: Option<String>,
    after: Option<String>,
}

fn non_empty(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

pub async fn accounts(
    State(s): State<AppState>,
    who: SignedIn,
    Query(q): Query<AccountQuery>,
) -> PageResult {
    let status = non_empty(&q.status);
    let filter = AccountFilter {
        plan: non_empty(&q.plan),
        status: status.as_deref().and_then(AccountStatus::parse),
        prefix: non_empty(&q.q),
        after: non_empty(&q.after).and_then(|a| AccountId::parse(&a).ok()),
        limit: PAGE,
    };
    let page = s
        .engine
        .list_accounts(&filter)
        .await
        .map_err(|e| failed(&who, e))?;
    let plans: Vec<&String> = s.engine.card().plans.keys().collect();
    let same = |after: &str| {
        format!(
            "/console/accounts?q={}&plan={}&status={}&after={}",
            view::url_encode(filter.prefix.as_deref().unwrap_or("")),
            view::url_encode(filter.plan.as_deref().unwrap_or("")),
            view::url_encode(status.as_deref().unwrap_or("")),
            view::url_encode(after)
        )
    };
    let body = html! {
        form.filters method="get" action="/console/accounts" role="search" {
            label { "Id starts with " input type="search" name="q" value=[filter.prefix.as_deref()]; }
            label { "Plan " select name="plan" {
                option value="" { "any" }
                @for p in &plans { option value=(p) selected[filter.plan.as_deref() == Some(p.as_str())] { (p) } }
            } }
            label { "Status " select name="status" {
                option value="" { "any" }
                @for st in ["active", "suspended", "blocked", "banned"] {
                    option value=(st) selected[status.as_deref() == Some(st)] { (st) }
                }
            } }
            button type="submit" { "Find" }
        }
        @if page.accounts.is_empty() { p { "No account matches." } }
        @else {
            table {
                thead { tr { th { "Account" } th { "Plan" } th { "Status" } th.num { "Balance" }
                             th.num { "Held" } th.num { "Available" } th.num { "Open jobs" } } }
                tbody {
                    @for a in &page.accounts {
                        tr {
                            td { (account_link(&a.account_id)) }
                            td { (a.effective_plan) }
                            td { (fmt::account_status(a)) }
                            td.num { (fmt::money(a.balance)) }
                            td.num { (fmt::money(a.held)) }
                            td.num { (fmt::money(a.available)) }
                            td.num { (a.open_jobs) }
                        }
                    }
                }
            }
            @if let Some(next) = &page.next { p { a href=(same(next)) rel="next" { "Next page" } } }
        }
    };
    Ok(view::page("Accounts", Some(&who), body))
}

#[derive(Debug, Deserialize)]
pub struct LedgerQuery {
    before: Option<i64>,
}

/// What a metered debit used, then the page an entry's `ref` leads to: its job, or the
/// top-up a refund returned.
fn explain(account: &str, e: &LedgerEntry) -> Markup {
    html! {
        @if let (Some(meter), Some(seconds)) = (&e.meter, e.seconds) {
            (seconds) " s of " code { (meter) } " "
        }
        (explain_ref(account, e))
    }
}

fn explain_ref(account: &str, e: &LedgerEntry) -> Markup {
    let Some(r) = e.reference.as_deref() else {
        return html! {};
    };
    match e.kind.as_str() {
        "capture" | "job_refund" => html! { "job " (job_link(r)) },
        "refund" => match r.parse::<i64>() {
            Ok(top_up) => html! {
                a href={ "/console/accounts/" (view::url_encode(account)) "?before=" (top_up + 1) "#entry-" (top_up) } {
                    "top-up #" (top_up)
                }
            },
            Err(_) => html! { code { (r) } },
        },
        "debit" => html! { "job ref " code { (r) } },
        _ => html! { code { (r) } },
    }
}

/// Ledger entries as a table; each entry explains itself.
pub fn ledger_table(account: &str, entries: &[LedgerEntry]) -> Markup {
    html! {
        table.ledger {
            thead { tr { th { "#" } th { "When" } th { "Kind" } th { "Pocket" } th.num { "Change" }
                         th.num { "After" } th { "For" } th { "By" } } }
            tbody {
                @for e in entries {
                    tr id={ "entry-" (e.entry_id) } {
                        td { (e.entry_id) }
                        td { (time(e.created_at)) }
                        td { (e.kind) }
                        td { (e.pocket) }
                        td.num { (fmt::signed(&e.pocket, e.delta)) }
                        td.num { (amount(&e.pocket, e.amount_after)) }
                        td { (explain(account, e)) }
                        td { (e.actor.as_deref().unwrap_or("—")) }
                    }
                }
            }
        }
    }
}

/// An account's numbers and states.
fn account_facts(a: &AccountView) -> Markup {
    let facts = [
        ("Status", html! { (fmt::account_status(a)) }),
        (
            "Plan",
            html! { (a.effective_plan) @if a.effective_plan != a.plan { " (" (a.plan) " after " (opt_time(a.plan_until)) ")" } },
        ),
        ("Balance", html! { (fmt::money(a.balance)) }),
        ("Held", html! { (fmt::money(a.held)) }),
        ("Available", html! { (fmt::money(a.available)) }),
        ("Overdraft buffer", html! { (fmt::money(a.buffer)) }),
        ("Credited in all", html! { (fmt::money(a.total_credited)) }),
        ("Spent in all", html! { (fmt::money(a.total_spent)) }),
        (
            "Open jobs",
            html! { (a.open_jobs) " of at most " (a.max_concurrent_jobs) },
        ),
        ("Created", html! { (time(a.created_at)) }),
        ("Last active", html! { (opt_time(a.last_active_at)) }),
    ];
    let spend = a.spend.as_ref().map(|s| {
        let label = format!("Spent this {}", s.policy.period_words());
        (label, spend_fact(s))
    });
    let spend = spend
        .iter()
        .map(|(label, fact)| (label.as_str(), fact.clone()));
    view::facts(&facts.into_iter().chain(spend).collect::<Vec<_>>())
}

/// The period's spending under the rule in force: `2.50 of 10.00 (7.50 left), its own
/// rule; told at 80%, 100%`.
fn spend_fact(s: &holdfast::SpendView) -> Markup {
    let alerts: Vec<String> = s.policy.alerts.iter().map(|t| t.format()).collect();
    let whose = if s.own {
        "its own rule"
    } else {
        "its plan's rule"
    };
    html! {
        (fmt::money(s.spent))
        @if let (Some(limit), Some(left)) = (s.policy.limit, s.left) {
            " of " (fmt::money(limit.0)) " (" (fmt::money(left)) " left)"
        }
        ", " (whose)
        @if !alerts.is_empty() { "; told at " (alerts.join(", ")) }
    }
}

pub async fn account(
    State(s): State<AppState>,
    who: SignedIn,
    Path(id): Path<String>,
    Query(q): Query<LedgerQuery>,
) -> PageResult {
    let fail = |e| failed(&who, e);
    let account = AccountId::parse(&id).map_err(|e| failed(&who, ApiError::from(e)))?;
    let engine = &s.engine;
    let a = s.engine.get_account(&account).await.map_err(fail)?;
    let entries = engine
        .recent_ledger(&id, q.before, PAGE)
        .await
        .map_err(fail)?;
    let recent = engine
        .recent_ledger(&id, None, CHART_ENTRIES)
        .await
        .map_err(fail)?;
    let mut points: Vec<(i64, i64)> = recent
        .iter()
        .filter(|e| e.pocket == holdfast::MONEY)
        .map(|e| (e.created_at, e.amount_after))
        .collect();
    points.reverse();
    let jobs = s
        .engine
        .list_jobs(&JobFilter {
            lane: None,
            status: None,
            account_id: Some(id.clone()),
            limit: 20,
        })
        .await
        .map_err(fail)?;
    let events = engine.recent_account_events(&id, 20).await.map_err(fail)?;
    let older = entries
        .last()
        .map(|e| e.entry_id)
        .filter(|_| entries.len() as i64 == PAGE);
    let body = html! {
        (account_facts(&a))
        @if !a.allowances.is_empty() {
            h2 { "Pockets" }
            table {
                thead { tr { th { "Pocket" } th.num { "Remaining" } th.num { "Held" } th.num { "Quota" } th { "Next refill" } } }
                tbody { @for (name, p) in &a.allowances {
                    tr { td { (name) } td.num { (p.remaining) } td.num { (p.held) } td.num { (p.quota) } td { (opt_time(p.refills_at)) } }
                } }
            }
        }
        (blocks_table(&a.blocks))
        p { a href={ "/console/accounts/" (view::url_encode(&id)) "/statement" } { "Statement of this month" } }
        @if who.session.is_admin() { (actions::account_forms(&who, &a)) }
        h2 { "Balance" }
        (view::line(&format!("Balance over the last {} money entries", points.len()), &points, fmt::money))
        h2 #ledger { "Ledger" }
        @if entries.is_empty() { p { "No entries." } } @else { (ledger_table(&id, &entries)) }
        p.pager {
            @if q.before.is_some() { a href={ "/console/accounts/" (view::url_encode(&id)) "#ledger" } { "Newest" } " " }
            @if let Some(o) = older { a href={ "/console/accounts/" (view::url_encode(&id)) "?before=" (o) "#ledger" } rel="next" { "Older entries" } }
        }
        h2 { "Jobs" }
        (job_table(&jobs))
        h2 { "Events" }
        (event_table(&events))
    };
    Ok(view::page(&format!("Account {id}"), Some(&who), body))
}

/// The account's credit blocks, in the order they are drawn (nothing without any).
fn blocks_table(blocks: &[holdfast::BlockView]) -> Markup {
    html! {
        @if !blocks.is_empty() {
            h2 { "Credit blocks" }
            table {
                thead { tr { th { "Block" } th { "Category" } th.num { "Priority" } th { "Expires" } th.num { "Remaining" } th.num { "Held" } th.num { "Granted" } } }
                tbody { @for b in blocks {
                    tr {
                        td { (b.block_id) @if b.expired { " (expired)" } }
                        td { (b.category.as_str()) } td.num { (b.priority) }
                        td { (opt_time(b.expires_at)) }
                        td.num { (fmt::money(b.remaining)) } td.num { (fmt::money(b.held)) } td.num { (fmt::money(b.granted)) }
                    }
                } }
            }
        }
    }
}

fn job_table(jobs: &[holdfast::Job]) -> Markup {
    html! {
        @if jobs.is_empty() { p { "No jobs." } }
        @else {
            table {
                thead { tr { th { "Job" } th { "Account" } th { "Kind" } th { "Lane" } th { "Status" } th { "Submitted" } th { "Hold" } th { "Charged" } } }
                tbody { @for j in jobs {
                    tr { td { (job_link(&j.job_id)) } td { (account_link(&j.account_id)) } td { (j.kind) } td { (j.lane) }
                         td { (j.status.as_str()) } td { (time(j.created_at)) }
                         td { (fmt::lines_text(&j.hold)) } td { (fmt::lines_text(&j.charged)) } }
                } }
            }
        }
    }
}

fn event_table(events: &[holdfast::Event]) -> Markup {
    html! {
        @if events.is_empty() { p { "No events." } }
        @else {
            table {
                thead { tr { th { "#" } th { "When" } th { "Type" } th { "Job" } th { "By" } th { "Data" } } }
                tbody { @for e in events {
                    tr { td { (e.event_id) } td { (time(e.created_at)) } td { (e.event_type) }
                         td { @if let Some(j) = &e.job_id { (job_link(j)) } }
                         td { (e.actor.as_deref().unwrap_or("—")) }
                         td { code.data { (e.data) } } }
                } }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct JobQuery {
    lane: Option<String>,
    status: Option<String>,
}

pub async fn jobs(
    State(s): State<AppState>,
    who: SignedIn,
    Query(q): Query<JobQuery>,
) -> PageResult {
    let lane = non_empty(&q.lane);
    let status = non_empty(&q.status).and_then(|t| JobStatus::parse(&t));
    let filter = JobFilter {
        lane: lane.clone(),
        status,
        account_id: None,
        limit: PAGE,
    };
    let jobs = s
        .engine
        .list_jobs(&filter)
        .await
        .map_err(|e| failed(&who, e))?;
    let mut lanes: Vec<&str> = s
        .engine
        .card()
        .kinds
        .values()
        .map(|k| k.lane.as_str())
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    let statuses = JobStatus::ALL.map(JobStatus::as_str);
    let body = html! {
        form.filters method="get" action="/console/jobs" {
            label { "Lane " select name="lane" {
                option value="" { "any" }
                @for l in &lanes { option value=(l) selected[lane.as_deref() == Some(*l)] { (l) } }
            } }
            label { "Status " select name="status" {
                option value="" { "any" }
                @for st in statuses { option value=(st) selected[status.map(JobStatus::as_str) == Some(st)] { (st) } }
            } }
            button type="submit" { "Show" }
        }
        p.muted { "The newest " (PAGE) " jobs that match." }
        (job_table(&jobs))
    };
    Ok(view::page("Jobs", Some(&who), body))
}

/// A job's life, step by step, from what its row and its events record.
fn timeline(j: &holdfast::Job, events: &[holdfast::Event]) -> Markup {
    let by = |a: &Option<String>| a.clone().unwrap_or_else(|| "—".into());
    html! {
        ol.timeline {
            li { strong { "Submitted" } " " (time(j.created_at)) " by " (by(&j.actors.submitted))
                 ", holding " (fmt::lines_text(&j.hold)) }
            @if let Some(t) = j.started_at {
                li { strong { "Leased" } " " (time(t)) " by worker " code { (j.worker_id.as_deref().unwrap_or("—")) }
                     " (" (by(&j.actors.leased)) ")" }
            }
            @if let (Some(t), true) = (j.lease_expires_at, j.status == JobStatus::InProgress) {
                li { strong { "Lease" } " runs to " (time(t)) " (each heartbeat moves it on)" }
            }
            @if j.cancel_requested { li { strong { "Cancel requested" } } }
            @for e in events {
                li { (time(e.created_at)) " " code { (e.event_type) } " by " (e.actor.as_deref().unwrap_or("—")) }
            }
            @if let Some(t) = j.finished_at {
                li { strong { "Finished: " (j.status.as_str()) } " " (time(t)) " by " (by(&j.actors.finished))
                     ", charged " (fmt::lines_text(&j.charged))
                     @if let Some(r) = &j.failure_reason { " — " (r) } }
            }
        }
    }
}

pub async fn job(State(s): State<AppState>, who: SignedIn, Path(id): Path<String>) -> PageResult {
    let fail = |e| failed(&who, e);
    let job_id = JobId::parse(&id).map_err(|e| failed(&who, ApiError::from(e)))?;
    let j = s.engine.get_job(&job_id).await.map_err(fail)?;
    let engine = &s.engine;
    let events = engine
        .job_events(&j.account_id, &j.job_id, 100)
        .await
        .map_err(fail)?;
    let entries = engine
        .entries_of_ref(&j.account_id, &j.job_id, 100)
        .await
        .map_err(fail)?;
    let facts = [
        ("Account", account_link(&j.account_id)),
        ("Kind", html! { (j.kind) }),
        (
            "Lane",
            html! { a href={ "/console/jobs?lane=" (view::url_encode(&j.lane)) } { (j.lane) } },
        ),
        ("Status", html! { (j.status.as_str()) }),
        ("Hold", html! { (fmt::lines_text(&j.hold)) }),
        ("Charged", html! { (fmt::lines_text(&j.charged)) }),
        ("Refunded", html! { (fmt::lines_text(&j.refunded)) }),
    ];
    let body = html! {
        (view::facts(&facts))
        h2 { "Timeline" }
        (timeline(&j, &events))
        h2 { "Ledger entries of this job" }
        @if entries.is_empty() { p { "None: a job is charged only when it completes." } }
        @else { (ledger_table(&j.account_id, &entries)) }
    };
    Ok(view::page(&format!("Job {}", j.job_id), Some(&who), body))
}

pub async fn webhooks(State(s): State<AppState>, who: SignedIn) -> PageResult {
    let fail = |e| failed(&who, e);
    let recent = s.engine.recent_deliveries(PAGE).await.map_err(fail)?;
    let dead = s
        .engine
        .dead_deliveries(None, None, PAGE)
        .await
        .map_err(fail)?;
    let stats = s.engine.stats_of_holds_and_webhooks().await.map_err(fail)?;
    let body = html! {
        h2 { "Endpoints" }
        @if s.engine.card().webhooks.is_empty() { p { "The rate card names no webhook endpoint." } }
        @else {
            table {
                thead { tr { th { "URL" } th { "Events" } th.num { "Pending" } th.num { "Dead" } } }
                tbody { @for w in &s.engine.card().webhooks {
                    @let backlog = stats.webhooks.iter().find(|b| b.endpoint == w.url);
                    tr { td { code { (webhook_url(&w.url)) } }
                         td { (w.events.as_ref().map_or_else(|| "all".to_owned(), |e| e.join(", "))) }
                         td.num { (backlog.map_or(0, |b| b.pending)) } td.num { (backlog.map_or(0, |b| b.dead)) } }
                } }
            }
        }
        h2 #dead { "Dead deliveries" }
        @if dead.items.is_empty() { p { "None." } }
        @else {
            table {
                thead { tr { th { "Delivery" } th { "Event" } th { "Endpoint" } th { "Account" } th.num { "Attempts" } th { "Last error" } th { "Dead since" } th {} } }
                tbody { @for d in &dead.items {
                    tr { td { (d.delivery_id) } td { (d.event_id) " " code { (d.event_type) } } td { code { (webhook_url(&d.endpoint)) } }
                         td { (account_link(&d.account_id)) } td.num { (d.attempts) }
                         td { (d.last_error.as_deref().unwrap_or("—")) } td { (opt_time(d.dead_at)) }
                         td { @if who.session.is_admin() { (actions::redeliver_form(&who, s.engine.card(), d.event_id, &d.endpoint)) } } }
                } }
            }
        }
        h2 { "Recent deliveries" }
        @if recent.is_empty() { p { "None yet." } }
        @else {
            table {
                thead { tr { th { "Delivery" } th { "Event" } th { "Endpoint" } th { "Status" } th.num { "Attempts" } th { "Queued" } th { "Ended" } } }
                tbody { @for d in &recent {
                    tr { td { (d.delivery_id) } td { (d.event_id) " " code { (d.event_type.as_deref().unwrap_or("(pruned)")) } }
                         td { code { (webhook_url(&d.endpoint)) } } td { (d.status) } td.num { (d.attempts) }
                         td { (time(d.created_at)) } td { (opt_time(d.finished_at)) } }
                } }
            }
        }
    };
    Ok(view::page("Webhooks", Some(&who), body))
}
