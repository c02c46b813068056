//! The operator console at `/console`: pages rendered on the server (maud templates
//! compiled into the binary, charts as SVG, no script), over the same engine as the API.
//!
//! Layout: [`session`] (sign-in, the session cookie, CSRF, the wrong-key pause), [`view`]
//! (the page frame and shared pieces), [`pages`] (what an operator reads: overview,
//! accounts, jobs, webhooks), [`actions`] (what an admin may change, each confirmed first,
//! each idempotent, each recorded under the admin's key). A `viewer` key reads every page
//! and changes nothing. Sessions live in this process's memory: with several `serve`
//! processes behind one address, route a browser to one of them (sticky sessions) or sign
//! in again when it moves.

pub mod actions;
pub mod pages;
pub mod session;
pub mod view;

use std::sync::Mutex;

use axum::Router;
use axum::extract::{ConnectInfo, Form, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use maud::html;
use serde::Deserialize;

use crate::http::AppState;
use crate::http::auth::{Role, role_of_key};
use session::{Sessions, SignedIn};

/// What the console keeps in memory: sessions, the last audit, refusals per minute.
#[derive(Debug, Default)]
pub struct Console {
    pub sessions: Sessions,
    last_audit: Mutex<Option<AuditRun>>,
}

/// When the audit last ran in this process and what it found.
#[derive(Debug, Clone)]
pub struct AuditRun {
    pub at: i64,
    /// Violations found; `Err` when the audit could not run.
    pub violations: Result<usize, String>,
}

impl Console {
    fn note_audit(&self, run: AuditRun) {
        *self.last_audit.lock().expect("last audit") = Some(run);
    }

    /// Runs the audit on `engine` and remembers when and what it found, for the
    /// overview (the API's `GET /v1/admin/audit` and the console's button both run it so).
    pub async fn audit(
        &self,
        engine: &holdfast::Engine,
    ) -> Result<Vec<holdfast::Violation>, holdfast::StoreError> {
        let result = engine.audit().await;
        let at = engine.now().await.unwrap_or_default();
        let violations = result.as_ref().map(Vec::len).map_err(|e| e.to_string());
        self.note_audit(AuditRun { at, violations });
        result
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
            p.muted { "The key is checked once and never stored: the browser keeps only a session cookie." }
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
    if let Some(wait) = sessions.paused(addr) {
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
    match role_of_key(form.key.trim(), &s).await {
        Ok((role @ (Role::Admin | Role::Viewer), actor)) => {
            sessions.right_key(addr);
            tracing::info!(%actor, role = role.as_str(), "console sign-in");
            let id = sessions.open(role, actor);
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
            sessions.wrong_key(addr);
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
