//! The operator console at `/console`: pages rendered on the server (maud templates
//! compiled into the binary, charts as SVG, no script), over the same engine as the API.
//!
//! Layout: [`session`] (sign-in, the session cookie, CSRF, the wrong-key pause), [`view`]
//! (the page frame and shared pieces), [`pages`] (what an operator reads: overview,
//! accounts, jobs, webhooks), [`statement`] (an account's statement, to print),
//! [`actions`] (what an admin may change, each confirmed first, each idempotent, each
//! recorded under the admin's key). A `viewer` key reads every page and changes nothing.
//! Sessions live in this process's memory: with several `serve` processes behind one
//! address, route a browser to one of them (sticky sessions) or sign in again when it
//! moves.

pub mod actions;
pub mod pages;
pub mod session;
pub mod statement;
pub mod view;

use std::sync::Mutex;
use std::time::Instant;

use axum::Router;
use axum::extract::{ConnectInfo, Form, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use maud::html;
use serde::Deserialize;

use crate::http::AppState;
use crate::http::auth::{Role, role_of_hash};
use session::{Sessions, SignedIn};

/// What the console keeps in memory: sessions, the last audit, refusals per minute.
#[derive(Debug, Default)]
pub struct Console {
    pub sessions: Sessions,
    last_audit: Mutex<Option<AuditRun>>,
    /// Held while an audit runs: one at a time per process.
    audit_turn: tokio::sync::Mutex<()>,
}

/// When the audit last ran in this process and what it found.
#[derive(Debug, Clone)]
pub struct AuditRun {
    /// When it started (database time, micros).
    pub at: i64,
    /// The violations found; `Err` when the audit could not run.
    pub found: Result<Vec<holdfast::Violation>, String>,
    finished: Instant,
}

impl AuditRun {
    /// How many violations it found; `Err` when it could not run.
    pub fn violations(&self) -> Result<usize, &str> {
        self.found.as_ref().map(Vec::len).map_err(String::as_str)
    }
}

impl Console {
    /// Runs the audit on `engine`, one at a time: a caller that comes while one runs
    /// waits for it and gets its result instead of starting another (the audit reads
    /// every row; on a big database it takes seconds). The result is remembered, with
    /// when it started, for the overview. The API's `GET /v1/admin/audit` and the
    /// console's button both run it so.
    pub async fn audit(&self, engine: &holdfast::Engine) -> Result<AuditRun, holdfast::StoreError> {
        let asked = Instant::now();
        let _turn = self.audit_turn.lock().await;
        if let Some(run) = self.last_audit().filter(|run| run.finished > asked) {
            return Ok(run);
        }
        let at = engine.now().await?;
        let result = engine.audit().await;
        let found = result
            .as_ref()
            .map(Clone::clone)
            .map_err(ToString::to_string);
        let run = AuditRun {
            at,
            found,
            finished: Instant::now(),
        };
        *self.last_audit.lock().expect("last audit") = Some(run.clone());
        result.map(|_| run)
    }

    pub fn last_audit(&self) -> Option<AuditRun> {
        self.last_audit.lock().expect("last audit").clone()
    }
}

/// Refusals answered per minute by this process over the last hour (money, limits and
/// states that said no: the `Refused` answers of the API), for the overview's chart.
static REFUSALS: Mutex<[(i64, i64); 60]> = Mutex::new([(0, 0); 60]);

fn minute_now() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i64::try_from(secs / 60).unwrap_or(0)
}

/// Counts one refusal in the current minute.
pub fn note_refusal() {
    let minute = minute_now();
    let mut slots = REFUSALS.lock().expect("refusals");
    let slot = &mut slots[minute.rem_euclid(60) as usize];
    if slot.0 != minute {
        *slot = (minute, 0);
    }
    slot.1 += 1;
}

/// Refusals in each of the last 60 minutes, oldest first (this one last).
pub fn refusals_per_minute() -> Vec<i64> {
    let now = minute_now();
    let slots = REFUSALS.lock().expect("refusals");
    (now - 59..=now)
        .map(|m| {
            let slot = slots[m.rem_euclid(60) as usize];
            if slot.0 == m { slot.1 } else { 0 }
        })
        .collect()
}

/// The console's routes (merged into the API's router unless `--no-console`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console", get(pages::overview))
        .route(
            "/console/",
            get(|| async { Redirect::permanent("/console") }),
        )
        .route("/console/console.css", get(stylesheet))
        .route("/console/login", get(login_page).post(login))
        .route("/console/logout", post(logout))
        .route("/console/accounts", get(pages::accounts))
        .route("/console/accounts/{account_id}", get(pages::account))
        .route(
            "/console/accounts/{account_id}/statement",
            get(statement::statement),
        )
        .route("/console/jobs", get(pages::jobs))
        .route("/console/jobs/{job_id}", get(pages::job))
        .route("/console/webhooks", get(pages::webhooks))
        .route(
            "/console/accounts/{account_id}/credit",
            post(actions::credit),
        )
        .route("/console/accounts/{account_id}/block", post(actions::block))
        .route("/console/run/{pass}", post(actions::run_pass))
        .route("/console/webhooks/redeliver", post(actions::redeliver))
        .layer(axum::middleware::from_fn(security_headers))
}

/// What every console answer tells the browser: load nothing from elsewhere and run no
/// script (the console has none), never be framed, never guess a content type, send no
/// referrer off the site; and keep no page in any cache (they show balances).
async fn security_headers(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use axum::http::HeaderValue;
    use axum::http::header;
    let mut response = next.run(req).await;
    let no_store = response.status().is_redirection()
        || response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"text/html"));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if no_store {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

async fn stylesheet() -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/css; charset=utf-8")], view::CSS)
}

#[derive(Debug, Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// Only a path inside the console: never send a signed-in browser elsewhere.
fn safe_next(next: Option<&str>) -> &str {
    next.filter(|n| n.starts_with("/console") && !n.starts_with("//"))
        .unwrap_or("/console")
}

fn login_form(next: &str, error: Option<&str>) -> maud::Markup {
    view::page(
        "Sign in",
        None,
        html! {
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form.login method="post" action="/console/login" {
                input type="hidden" name="next" value=(next);
                label for="key" { "API key (admin or viewer)" }
                input #key type="password" name="key" autocomplete="off" required autofocus;
                button type="submit" { "Sign in" }
            }
            p.muted { "The key is never stored: the browser keeps only a session cookie, and the key is checked again on every page." }
        },
    )
}

async fn login_page(Query(q): Query<Next>) -> maud::Markup {
    login_form(safe_next(q.next.as_deref()), None)
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    key: String,
    next: Option<String>,
}

async fn login(
    State(s): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let sessions = &s.console.sessions;
    let next = safe_next(form.next.as_deref()).to_owned();
    let addr = peer.ip();
    if let Some(wait) = sessions.attempt(addr) {
        let text = format!(
            "Too many wrong keys from this address: try again in {} s.",
            wait.as_secs().max(1)
        );
        return (
            StatusCode::TOO_MANY_REQUESTS,
            login_form(&next, Some(&text)),
        )
            .into_response();
    }
    let refused = |status, text: &str| (status, login_form(&next, Some(text))).into_response();
    let key_hash = holdfast::key_hash(form.key.trim());
    match role_of_hash(&key_hash, &s).await {
        Ok((role @ (Role::Admin | Role::Viewer), actor)) => {
            sessions.right_key(addr);
            tracing::info!(%actor, role = role.as_str(), "console sign-in");
            let id = sessions.open(role, actor, key_hash);
            session::with_cookie(session::cookie(&headers, Some(&id)), Redirect::to(&next))
        }
        Ok((role, _)) => refused(
            StatusCode::FORBIDDEN,
            &format!(
                "A {} key cannot sign in to the console: use an admin or viewer key.",
                role.as_str()
            ),
        ),
        Err(crate::http::error::ApiError::Unauthorized) => {
            refused(StatusCode::UNAUTHORIZED, "That key is not a live API key.")
        }
        Err(e) => refused(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("Could not check the key now ({}); try again.", e.code()),
        ),
    }
}

#[derive(Debug, Deserialize)]
pub struct CsrfOnly {
    csrf: String,
}

async fn logout(
    State(s): State<AppState>,
    who: SignedIn,
    headers: HeaderMap,
    Form(form): Form<CsrfOnly>,
) -> Response {
    if !who.session.csrf_matches(&form.csrf) {
        return actions::forged(&who);
    }
    s.console.sessions.close(&who.id);
    session::with_cookie(
        session::cookie(&headers, None),
        Redirect::to("/console/login"),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use holdfast::testing::{Backend, engine};

    use super::Console;

    /// Two audits asked while a third runs share one run: the second caller waits for the
    /// running one and gets its answer; a caller after it has finished runs a new one.
    #[tokio::test]
    async fn an_audit_asked_while_one_runs_shares_its_answer() {
        let (_db, engine) = engine(Backend::Sqlite).await.expect("sqlite");
        let console = Arc::new(Console::default());
        let running = console.audit_turn.lock().await; // an audit "runs"
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let (console, engine) = (console.clone(), engine.clone());
                tokio::spawn(async move { console.audit(&engine).await.unwrap() })
            })
            .collect();
        // Both callers have asked and wait for the turn (a current-thread runtime polls
        // them while this task yields).
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        drop(running);
        let mut runs = Vec::new();
        for caller in callers {
            runs.push(caller.await.unwrap());
        }
        assert_eq!(runs[0].finished, runs[1].finished, "one run, two answers");
        assert_eq!(runs[0].violations(), Ok(0));
        let later = console.audit(&engine).await.unwrap();
        assert!(later.finished > runs[0].finished, "a new call runs anew");
    }
}
