//! Signing in to the console: a session per browser, kept in this process's memory.
//!
//! The browser holds only a random session id, in a cookie that is `HttpOnly`,
//! `SameSite=Strict`, limited to `/console`, expiring with the session, and `Secure` when
//! the request came over TLS (`X-Forwarded-Proto: https` from the proxy that ends it). The
//! API key is checked once at sign-in and never stored, here or in the browser. Every
//! form that changes something carries the session's CSRF token, compared in constant time.
//! Ten wrong keys from one client address pause sign-in from it for a minute.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use subtle::ConstantTimeEq;

use super::Console;
use crate::http::AppState;
use crate::http::auth::Role;

/// The cookie that names a session.
pub const COOKIE_NAME: &str = "holdfast_session";
/// How long a session lasts from sign-in.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// Wrong keys from one address before sign-in from it pauses.
pub const MAX_WRONG_KEYS: u32 = 10;
/// How long sign-in pauses after [`MAX_WRONG_KEYS`].
pub const PAUSE: Duration = Duration::from_secs(60);
/// Sessions one process keeps at most (the oldest go first when more sign in).
const MAX_SESSIONS: usize = 10_000;

/// Who is signed in: the key's role and actor (`key:<key id>`), the session's CSRF token,
/// and a message for the next page (what the last action did).
#[derive(Debug, Clone)]
pub struct Session {
    pub role: Role,
    pub actor: String,
    pub csrf: String,
    expires: Instant,
    flash: Option<String>,
}

impl Session {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// Whether `token` is this session's CSRF token.
    pub fn csrf_matches(&self, token: &str) -> bool {
        bool::from(self.csrf.as_bytes().ct_eq(token.as_bytes()))
    }
}

#[derive(Debug, Default)]
struct Tries {
    wrong: u32,
    paused_until: Option<Instant>,
}

/// The sessions of this process and the sign-in attempts per client address.
#[derive(Debug, Default)]
pub struct Sessions {
    live: Mutex<HashMap<String, Session>>,
    tries: Mutex<HashMap<IpAddr, Tries>>,
}

fn random_token() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

impl Sessions {
    /// A new session for a key of `role`; returns its id.
    pub fn open(&self, role: Role, actor: String) -> String {
        let id = random_token();
        let now = Instant::now();
        let mut live = self.live.lock().expect("sessions");
        live.retain(|_, s| s.expires > now);
        if live.len() >= MAX_SESSIONS
            && let Some(oldest) = live
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| k.clone())
        {
            live.remove(&oldest);
        }
        let session = Session {
            role,
            actor,
            csrf: random_token(),
            expires: now + SESSION_TTL,
            flash: None,
        };
        live.insert(id.clone(), session);
        id
    }

    /// The live session `id` names, taking its message for the page being rendered.
    pub fn get(&self, id: &str) -> Option<Session> {
        let mut live = self.live.lock().expect("sessions");
        let session = live.get_mut(id)?;
        if session.expires <= Instant::now() {
            live.remove(id);
            return None;
        }
        let out = session.clone();
        session.flash = None;
        Some(out)
    }

    /// Leaves a message for the next page of session `id`.
    pub fn flash(&self, id: &str, message: String) {
        if let Some(s) = self.live.lock().expect("sessions").get_mut(id) {
            s.flash = Some(message);
        }
    }

    pub fn close(&self, id: &str) {
        self.live.lock().expect("sessions").remove(id);
    }

    /// How long sign-in from `addr` is paused; `None` when it may try.
    pub fn paused(&self, addr: IpAddr) -> Option<Duration> {
        let tries = self.tries.lock().expect("tries");
        let until = tries.get(&addr)?.paused_until?;
        until.checked_duration_since(Instant::now())
    }

    /// Counts a wrong key from `addr`; the tenth pauses it.
    pub fn wrong_key(&self, addr: IpAddr) {
        let mut tries = self.tries.lock().expect("tries");
        let now = Instant::now();
        tries.retain(|_, t| t.wrong > 0 || t.paused_until.is_some_and(|u| u > now));
        let t = tries.entry(addr).or_default();
        t.wrong += 1;
        if t.wrong >= MAX_WRONG_KEYS {
            t.wrong = 0;
            t.paused_until = Some(now + PAUSE);
        }
    }

    /// A right key from `addr`: its count starts again.
    pub fn right_key(&self, addr: IpAddr) {
        self.tries.lock().expect("tries").remove(&addr);
    }
}

/// The session id a request's cookies carry.
pub fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_owned())
}

/// Whether the request reached the proxy in front of us over TLS.
fn over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// The `Set-Cookie` value that opens (`Some(id)`) or ends (`None`) a session.
pub fn cookie(headers: &HeaderMap, id: Option<&str>) -> HeaderValue {
    let secure = if over_tls(headers) { "; Secure" } else { "" };
    let (value, age) = match id {
        Some(id) => (id, SESSION_TTL.as_secs()),
        None => ("", 0),
    };
    let text = format!(
        "{COOKIE_NAME}={value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={age}{secure}"
    );
    HeaderValue::from_str(&text).expect("a cookie of hex digits is a header value")
}

/// A response that also sets `cookie`.
pub fn with_cookie(cookie: HeaderValue, response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    response.headers_mut().append(SET_COOKIE, cookie);
    response
}

/// A signed-in request: its session and the session's id. Without one, the browser is
/// sent to the sign-in page (and back here after it).
pub struct SignedIn {
    pub id: String,
    pub session: Session,
}

impl SignedIn {
    /// The message the last action left, if any.
    pub fn flash(&self) -> Option<&str> {
        self.session.flash.as_deref()
    }
}

pub fn console_of(state: &AppState) -> &Console {
    &state.console
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let found = session_id(&parts.headers)
            .and_then(|id| console_of(state).sessions.get(&id).map(|s| (id, s)));
        match found {
            Some((id, session)) => Ok(SignedIn { id, session }),
            None => {
                let here = parts
                    .extensions
                    .get::<OriginalUri>()
                    .map_or_else(|| parts.uri.clone(), |u| u.0.clone());
                let next = here
                    .path_and_query()
                    .map_or("/console", |p| p.as_str())
                    .to_owned();
                let to = format!("/console/login?next={}", super::view::url_encode(&next));
                Err(Redirect::to(&to).into_response())
            }
        }
    }
}
