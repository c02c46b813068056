//! Signing in to the console: a session per browser, kept in this process's memory.
//!
//! The browser holds only a random session id, in a cookie that is `HttpOnly`,
//! `SameSite=Strict`, limited to `/console`, expiring with the session, and `Secure` when
//! the request came over TLS (`X-Forwarded-Proto: https` from the proxy that ends it). The
//! API key itself is never stored, here or in the browser: the session keeps the key's
//! SHA-256 (as the database does) and looks it up again on every page and action, so a
//! session ends at its first request after its key is revoked or its role changes. Every
//! form that changes something carries the session's CSRF token, compared in constant time.
//! Ten sign-in attempts from one client address within ten minutes without a right key
//! pause sign-in from it for a minute (each attempt is counted before its key is checked,
//! so a burst sent at once is held to ten).

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
use crate::http::auth::{Role, role_of_hash};
use crate::http::error::ApiError;

/// The cookie that names a session.
pub const COOKIE_NAME: &str = "holdfast_session";
/// How long a session lasts from sign-in.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// Sign-in attempts from one address without a right key before sign-in from it pauses.
pub const MAX_WRONG_KEYS: u32 = 10;
/// How long sign-in pauses after [`MAX_WRONG_KEYS`].
pub const PAUSE: Duration = Duration::from_secs(60);
/// How long an attempt counts: the count of an address starts again this long after its
/// first attempt.
pub const WRONG_KEY_WINDOW: Duration = Duration::from_secs(600);
/// Addresses whose attempts one process counts at most (the oldest count goes first).
const MAX_TRACKED_ADDRESSES: usize = 10_000;
/// Sessions one process keeps at most (the oldest go first when more sign in).
const MAX_SESSIONS: usize = 10_000;

/// Who is signed in: the key's role and actor (`key:<key id>`) at sign-in, the key's hash
/// (to check it again on every request), the session's CSRF token, and a message for the
/// next page (what the last action did).
#[derive(Debug, Clone)]
pub struct Session {
    pub role: Role,
    pub actor: String,
    pub csrf: String,
    key_hash: String,
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

/// The sign-in attempts of one address since `since` (none with a right key), and the
/// pause they led to.
#[derive(Debug)]
struct Tries {
    attempts: u32,
    since: Instant,
    paused_until: Option<Instant>,
}

impl Tries {
    /// Whether this count still matters at `now`: its window is open or its pause runs.
    fn live(&self, now: Instant) -> bool {
        now.duration_since(self.since) < WRONG_KEY_WINDOW
            || self.paused_until.is_some_and(|u| u > now)
    }
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
    /// A new session for the key whose hash is `key_hash`, of `role`; returns its id.
    pub fn open(&self, role: Role, actor: String, key_hash: String) -> String {
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
            key_hash,
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

    /// A sign-in attempt from `addr`: how long sign-in from it is paused (`Some`: refuse
    /// it), else the attempt is counted (`None`: check the key) — in one step, so that
    /// attempts sent all at once cannot all pass before any is counted. The tenth within
    /// [`WRONG_KEY_WINDOW`] pauses the address; a right key ([`Sessions::right_key`])
    /// clears its count. Counts that no longer matter are dropped, and at most
    /// [`MAX_TRACKED_ADDRESSES`] addresses are kept (the oldest count goes first).
    pub fn attempt(&self, addr: IpAddr) -> Option<Duration> {
        self.attempt_at(addr, Instant::now())
    }

    fn attempt_at(&self, addr: IpAddr, now: Instant) -> Option<Duration> {
        let mut tries = self.tries.lock().expect("tries");
        let paused = tries
            .get(&addr)
            .and_then(|t| t.paused_until)
            .and_then(|until| until.checked_duration_since(now))
            .filter(|wait| !wait.is_zero());
        if paused.is_some() {
            return paused;
        }
        tries.retain(|_, t| t.live(now));
        if tries.len() >= MAX_TRACKED_ADDRESSES
            && !tries.contains_key(&addr)
            && let Some(oldest) = tries.iter().min_by_key(|(_, t)| t.since).map(|(a, _)| *a)
        {
            tries.remove(&oldest);
        }
        let t = tries.entry(addr).or_insert(Tries {
            attempts: 0,
            since: now,
            paused_until: None,
        });
        if now.duration_since(t.since) >= WRONG_KEY_WINDOW {
            (t.attempts, t.since) = (0, now);
        }
        t.attempts += 1;
        if t.attempts >= MAX_WRONG_KEYS {
            (t.attempts, t.since) = (0, now);
            t.paused_until = Some(now + PAUSE);
        }
        None
    }

    /// How many addresses have attempts counted now.
    #[cfg(test)]
    fn tracked_addresses(&self) -> usize {
        self.tries.lock().expect("tries").len()
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

/// Where a browser without a live session goes: the sign-in page, and back here after it.
fn to_sign_in(parts: &Parts) -> Response {
    let here = parts
        .extensions
        .get::<OriginalUri>()
        .map_or_else(|| parts.uri.clone(), |u| u.0.clone());
    let next = here
        .path_and_query()
        .map_or("/console", |p| p.as_str())
        .to_owned();
    let to = format!("/console/login?next={}", super::view::url_encode(&next));
    Redirect::to(&to).into_response()
}

/// Whether the session's key is still live with the role it signed in with. A revoked
/// key or a changed role ends the session (`Ok(false)`); a database that cannot answer
/// now is an error page, and the session stays.
async fn key_still_holds(session: &Session, state: &AppState) -> Result<bool, Response> {
    match role_of_hash(&session.key_hash, state).await {
        Ok((role, _)) => Ok(role == session.role),
        Err(ApiError::Unauthorized) => Ok(false),
        Err(e) => Err(e.into_response()),
    }
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let sessions = &console_of(state).sessions;
        let Some((id, session)) =
            session_id(&parts.headers).and_then(|id| sessions.get(&id).map(|s| (id, s)))
        else {
            return Err(to_sign_in(parts));
        };
        if !key_still_holds(&session, state).await? {
            tracing::info!(actor = %session.actor, "console session ended: its key was revoked or its role changed");
            sessions.close(&id);
            return Err(to_sign_in(parts));
        }
        Ok(SignedIn { id, session })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    #[test]
    fn ten_attempts_in_the_window_pause_sign_in() {
        let sessions = Sessions::default();
        let t0 = Instant::now();
        for i in 0..MAX_WRONG_KEYS {
            assert_eq!(sessions.attempt_at(addr(1), t0), None, "attempt {}", i + 1);
        }
        assert_eq!(sessions.attempt_at(addr(1), t0), Some(PAUSE));
        assert_eq!(
            sessions.attempt_at(addr(1), t0 + Duration::from_secs(20)),
            Some(PAUSE - Duration::from_secs(20))
        );
        assert_eq!(sessions.attempt_at(addr(2), t0), None, "per address");
        assert_eq!(
            sessions.attempt_at(addr(1), t0 + PAUSE),
            None,
            "the pause ends"
        );
    }

    #[test]
    fn a_right_key_clears_the_count() {
        let sessions = Sessions::default();
        let t0 = Instant::now();
        for _ in 0..MAX_WRONG_KEYS - 1 {
            assert_eq!(sessions.attempt_at(addr(1), t0), None);
        }
        sessions.right_key(addr(1));
        for _ in 0..MAX_WRONG_KEYS {
            assert_eq!(sessions.attempt_at(addr(1), t0), None);
        }
        assert_eq!(sessions.attempt_at(addr(1), t0), Some(PAUSE));
    }

    #[test]
    fn attempts_older_than_the_window_stop_counting() {
        let sessions = Sessions::default();
        let t0 = Instant::now();
        for _ in 0..MAX_WRONG_KEYS - 1 {
            sessions.attempt_at(addr(1), t0);
        }
        // The window has passed: the count starts again with this attempt.
        let later = t0 + WRONG_KEY_WINDOW;
        for _ in 0..MAX_WRONG_KEYS {
            assert_eq!(sessions.attempt_at(addr(1), later), None);
        }
        assert_eq!(sessions.attempt_at(addr(1), later), Some(PAUSE));
    }

    #[test]
    fn the_counts_kept_are_bounded_and_expire() {
        let sessions = Sessions::default();
        let t0 = Instant::now();
        let many = u32::try_from(MAX_TRACKED_ADDRESSES).unwrap() + 50;
        for n in 0..many {
            sessions.attempt_at(addr(n), t0 + Duration::from_millis(u64::from(n)));
        }
        assert_eq!(sessions.tracked_addresses(), MAX_TRACKED_ADDRESSES);
        sessions.attempt_at(addr(many - 1), t0 + Duration::from_secs(20));
        assert_eq!(sessions.tracked_addresses(), MAX_TRACKED_ADDRESSES);
        sessions.attempt_at(addr(0), t0 + WRONG_KEY_WINDOW + Duration::from_secs(60));
        assert_eq!(
            sessions.tracked_addresses(),
            1,
            "expired counts are dropped"
        );
    }
}
