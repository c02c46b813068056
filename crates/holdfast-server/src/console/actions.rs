//! What an admin may change from the console: top-up or bonus, block or unblock, run a
//! pass (sweep, reconcile, audit), redeliver a dead webhook delivery.
//!
//! Every action is a form that carries the session's CSRF token; a form without it (or
//! from a viewer) changes nothing. The first submit only shows what would happen; the
//! change is made by the confirming submit, run as the admin's key (`key:<key id>`), so
//! the ledger and the events record who did it. Each is idempotent: a credit form carries
//! its idempotency key from the moment it is drawn (sent twice, it is applied once),
//! blocking a blocked account keeps it blocked, a pass run twice finds nothing more to do.

use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use holdfast::{AccountId, AccountView, CreditKind, IdempotencyKey, Micros, RateCard};
use maud::{Markup, html};

use super::pages::failed;
use super::session::SignedIn;
use super::view::{self, csrf};
use crate::cli::fmt;
use crate::http::AppState;
use crate::http::error::ApiError;

/// A submitted form, fields in the order sent.
type Fields = Vec<(String, String)>;

fn field<'f>(form: &'f Fields, name: &str) -> Option<&'f str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A form without this session's CSRF token: 403, nothing changed.
pub fn forged(who: &SignedIn) -> Response {
    let text = "This form does not carry this session's token (it is stale or was sent from \
                elsewhere): nothing was changed.";
    (
        StatusCode::FORBIDDEN,
        view::message("Refused", Some(who), text, "/console"),
    )
        .into_response()
}

/// The answer to give instead of the action, unless the form is an admin's genuine one:
/// 403 (forged, or a viewer), before anything else of the form is read.
fn refused(who: &SignedIn, form: &Fields) -> Option<Response> {
    if !field(form, "csrf").is_some_and(|t| who.session.csrf_matches(t)) {
        return Some(forged(who));
    }
    if !who.session.is_admin() {
        let text = "A viewer reads and changes nothing: sign in with an admin key to do this.";
        return Some(
            (
                StatusCode::FORBIDDEN,
                view::message("Refused", Some(who), text, "/console"),
            )
                .into_response(),
        );
    }
    None
}

/// Unless the form was confirmed, the page that asks to confirm `what` (with the form's
/// fields to send again), to answer instead of the action.
fn unconfirmed(who: &SignedIn, form: &Fields, action: &str, what: &str) -> Option<Response> {
    if field(form, "confirmed") == Some("yes") {
        return None;
    }
    let page = view::page(
        "Confirm",
        Some(who),
        html! {
            p.confirm { (what) }
            form method="post" action=(action) {
                @for (k, v) in form.iter().filter(|(k, _)| k != "confirmed") {
                    input type="hidden" name=(k) value=(v);
                }
                input type="hidden" name="confirmed" value="yes";
                button type="submit" autofocus { "Confirm" }
                " "
                a href=(field(form, "back").filter(|b| b.starts_with("/console")).unwrap_or("/console")) { "Cancel" }
            }
        },
    );
    Some(page.into_response())
}

/// Back to `to` with `message` shown there.
fn done(s: &AppState, who: &SignedIn, to: &str, message: String) -> Response {
    tracing::info!(actor = %who.session.actor, %message, "console action");
    s.console.sessions.flash(&who.id, message);
    Redirect::to(to).into_response()
}

/// Runs `work` as the signed-in key (so the ledger and events record who did it), then
/// back to `to` with what `said` makes of its result, or the refusal shown.
async fn run_as<T, E: Into<ApiError>>(
    s: &AppState,
    who: &SignedIn,
    to: &str,
    work: impl Future<Output = Result<T, E>>,
    said: impl FnOnce(T) -> String,
) -> Response {
    match holdfast::actor::acting_as(&who.session.actor, work).await {
        Ok(value) => done(s, who, to, said(value)),
        Err(e) => failed(who, e),
    }
}

fn account_page(id: &str) -> String {
    format!("/console/accounts/{}", view::url_encode(id))
}

/// The top-up / bonus and block / unblock forms of an account page.
pub fn account_forms(who: &SignedIn, a: &AccountView) -> Markup {
    let key = format!("console-{}", hex::encode(rand::random::<[u8; 16]>()));
    let page = account_page(&a.account_id);
    let blocked = a.blocked_at.is_some();
    html! {
        section.actions aria-label="Actions" {
            form method="post" action={ (page) "/credit" } {
                (csrf(who))
                input type="hidden" name="idempotency_key" value=(key);
                input type="hidden" name="back" value=(page);
                label { "Credit " select name="kind" { option value="top_up" { "top-up" } option value="bonus" { "bonus" } } }
                label { "Amount " input type="text" name="amount" inputmode="decimal" placeholder="10.00" required; }
                button type="submit" { "Credit…" }
            }
            form method="post" action={ (page) "/block" } {
                (csrf(who))
                input type="hidden" name="back" value=(page);
                input type="hidden" name="blocked" value=(if blocked { "false" } else { "true" });
                label { "Reason " input type="text" name="reason" maxlength="200"; }
                button type="submit" { (if blocked { "Unblock…" } else { "Block…" }) }
            }
        }
    }
}

pub async fn credit(
    State(s): State<AppState>,
    who: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<Fields>,
) -> Response {
    if let Some(answer) = refused(&who, &form) {
        return answer;
    }
    let kind = match field(&form, "kind") {
        Some("bonus") => CreditKind::Bonus,
        _ => CreditKind::TopUp,
    };
    let word = if kind == CreditKind::Bonus {
        "bonus"
    } else {
        "top-up"
    };
    let parsed = (|| {
        let account = AccountId::parse(&id)?;
        let amount = Micros::parse_positive(field(&form, "amount").unwrap_or("").trim())
            .map_err(|e| ApiError::money("amount", e))?;
        let key = IdempotencyKey::parse(field(&form, "idempotency_key").unwrap_or(""))?;
        Ok::<_, ApiError>((account, amount, key))
    })();
    let (account, amount, key) = match parsed {
        Ok(p) => p,
        Err(e) => return failed(&who, e),
    };
    let what = format!(
        "Credit {} to account {id} as a {word}.",
        fmt::money(amount.0)
    );
    if let Some(answer) = unconfirmed(&who, &form, &format!("{}/credit", account_page(&id)), &what)
    {
        return answer;
    }
    let run = s.engine.credit(&account, amount, kind, &key);
    run_as(&s, &who, &account_page(&id), run, |r| {
        let how = if r.replay {
            "already applied (the same form sent again)"
        } else {
            "applied"
        };
        format!(
            "{word} of {} {how}: entry #{}, balance {}.",
            fmt::money(amount.0),
            r.entry.entry_id,
            fmt::money(r.account.balance)
        )
    })
    .await
}

pub async fn block(
    State(s): State<AppState>,
    who: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<Fields>,
) -> Response {
    if let Some(answer) = refused(&who, &form) {
        return answer;
    }
    let account = match AccountId::parse(&id) {
        Ok(a) => a,
        Err(e) => return failed(&who, ApiError::from(e)),
    };
    let blocked = field(&form, "blocked") != Some("false");
    let reason = field(&form, "reason")
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let verb = if blocked { "Block" } else { "Unblock" };
    let what = format!(
        "{verb} account {id}{}.",
        reason.map_or(String::new(), |r| format!(" ({r})"))
    );
    if let Some(answer) = unconfirmed(&who, &form, &format!("{}/block", account_page(&id)), &what) {
        return answer;
    }
    let run = s.engine.set_blocked_because(&account, blocked, reason);
    run_as(&s, &who, &account_page(&id), run, |a| {
        let now = if a.blocked_at.is_some() {
            "blocked"
        } else {
            "not blocked"
        };
        format!("Account {id} is {now}.")
    })
    .await
}

/// The buttons that run a pass now.
pub fn pass_buttons(who: &SignedIn) -> Markup {
    html! {
        div.actions {
            @for (pass, label) in [("sweep", "Run sweep…"), ("reconcile", "Run reconcile…"), ("audit", "Run audit…")] {
                form method="post" action={ "/console/run/" (pass) } {
                    (csrf(who))
                    button type="submit" { (label) }
                }
            }
        }
    }
}

pub async fn run_pass(
    State(s): State<AppState>,
    who: SignedIn,
    Path(pass): Path<String>,
    Form(form): Form<Fields>,
) -> Response {
    if let Some(answer) = refused(&who, &form) {
        return answer;
    }
    if !["sweep", "reconcile", "audit"].contains(&pass.as_str()) {
        return failed(&who, ApiError::RouteNotFound);
    }
    let what = format!("Run the {pass} pass now, over the whole database.");
    if let Some(answer) = unconfirmed(&who, &form, &format!("/console/run/{pass}"), &what) {
        return answer;
    }
    let work = async {
        match pass.as_str() {
            "sweep" => s
                .engine
                .sweep(holdfast::schedules::MAX_PER_RUN)
                .await
                .map(|r| format!("Sweep released {} expired jobs.", r.processed))
                .map_err(ApiError::from),
            "reconcile" => s
                .engine
                .reconcile(holdfast::schedules::MAX_ACCOUNTS_PER_RUN)
                .await
                .map(|r| {
                    format!(
                        "Reconcile checked {} accounts, adjusted {}.",
                        r.processed, r.adjusted
                    )
                })
                .map_err(ApiError::from),
            _ => s
                .console
                .audit(&s.engine)
                .await
                .map_err(ApiError::from)
                .map(|run| match run.violations() {
                    Ok(0) => "Audit: clean.".to_owned(),
                    Ok(n) => format!("Audit: {n} violations."),
                    Err(e) => format!("Audit: could not run ({e})."),
                }),
        }
    };
    run_as(&s, &who, "/console", work, |text| text).await
}

/// The redeliver button of a dead delivery to an endpoint of the card in force (none for
/// an endpoint the card no longer names). The form names the endpoint by its place in
/// the card, so that its URL, which may carry a token, is never in the page.
pub fn redeliver_form(who: &SignedIn, card: &RateCard, event_id: i64, endpoint: &str) -> Markup {
    let Some(place) = card.webhooks.iter().position(|w| w.url == endpoint) else {
        return html! { "(not in the card)" };
    };
    html! {
        form method="post" action="/console/webhooks/redeliver" {
            (csrf(who))
            input type="hidden" name="event_id" value=(event_id);
            input type="hidden" name="endpoint" value=(place);
            input type="hidden" name="back" value="/console/webhooks";
            button type="submit" { "Redeliver…" }
        }
    }
}

pub async fn redeliver(
    State(s): State<AppState>,
    who: SignedIn,
    Form(form): Form<Fields>,
) -> Response {
    if let Some(answer) = refused(&who, &form) {
        return answer;
    }
    let Some(event_id) = field(&form, "event_id").and_then(|e| e.parse::<i64>().ok()) else {
        return failed(&who, ApiError::invalid("event_id: must be a whole number"));
    };
    let hooks = &s.engine.card().webhooks;
    let Some(endpoint) = field(&form, "endpoint")
        .and_then(|place| place.parse::<usize>().ok())
        .and_then(|place| hooks.get(place))
        .map(|hook| hook.url.clone())
    else {
        return failed(
            &who,
            ApiError::invalid("endpoint: not an endpoint of the rate card"),
        );
    };
    let shown = holdfast::redact::webhook_url(&endpoint);
    let what = format!("Deliver event {event_id} to {shown} again, with fresh attempts.");
    if let Some(answer) = unconfirmed(&who, &form, "/console/webhooks/redeliver", &what) {
        return answer;
    }
    let run = s.engine.redeliver(event_id, &endpoint);
    run_as(&s, &who, "/console/webhooks", run, |queued| {
        if queued {
            format!("Event {event_id} is queued for {shown} again.")
        } else {
            format!("Event {event_id} has no ended delivery to {shown} (already queued again?).")
        }
    })
    .await
}
