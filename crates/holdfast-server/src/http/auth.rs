//! API keys and roles. A key is 256 random bits; only its SHA-256 is stored and it is
//! looked up by that hash. The environment's admin key is compared in constant time.
//!
//! Handlers take [`Auth<P>`] as their first argument: axum runs it before the body is
//! parsed, so 401 and 403 always win over 413 and 422 (API.md "Errors"). A request to
//! `/v1/` without a live key is answered 401 before its body is buffered: the body is
//! only read and dropped, for at most a second.

use std::marker::PhantomData;
use std::time::Duration;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use holdfast::key_hash;

use super::error::ApiError;
use super::state::AppState;
pub use super::state::EnvKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Service,
    Worker,
    Admin,
    /// Reads everything an admin may read (the API's GETs, the console); changes nothing.
    Viewer,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Service, Role::Worker, Role::Admin, Role::Viewer];

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "service" => Some(Role::Service),
            "worker" => Some(Role::Worker),
            "admin" => Some(Role::Admin),
            "viewer" => Some(Role::Viewer),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Service => "service",
            Role::Worker => "worker",
            Role::Admin => "admin",
            Role::Viewer => "viewer",
        }
    }
}

/// A fresh API key: `hf_` and 64 hex digits (256 random bits).
pub fn new_key() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("hf_{}", hex::encode(bytes))
}

/// Which roles may call an endpoint.
pub trait Policy {
    const ROLES: &'static [Role];
}

/// Accounts, money, submits, cancels, events.
pub struct ServiceRole;
/// Lease, heartbeat, complete, fail.
pub struct WorkerRole;
/// GET of a job: both sides read it.
pub struct AnyRole;
/// Block/unblock and `/v1/admin/*`.
pub struct AdminRole;
/// A read of what a service key may read (accounts, ledgers, events): also a viewer.
pub struct ServiceRead;
/// A read of what only an admin may read (the books, the audit, dead deliveries): also a
/// viewer.
pub struct AdminRead;

impl Policy for ServiceRole {
    const ROLES: &'static [Role] = &[Role::Service, Role::Admin];
}
impl Policy for WorkerRole {
    const ROLES: &'static [Role] = &[Role::Worker, Role::Admin];
}
impl Policy for AnyRole {
    const ROLES: &'static [Role] = &Role::ALL;
}
impl Policy for AdminRole {
    const ROLES: &'static [Role] = &[Role::Admin];
}
impl Policy for ServiceRead {
    const ROLES: &'static [Role] = &[Role::Service, Role::Admin, Role::Viewer];
}
impl Policy for AdminRead {
    const ROLES: &'static [Role] = &[Role::Admin, Role::Viewer];
}

/// The caller's role, checked against `P`.
pub struct Auth<P: Policy> {
    pub role: Role,
    _policy: PhantomData<P>,
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

/// The role and the actor (`key:<key id>`, `key:env` for the environment's admin key)
/// of the key the request carries.
async fn caller_of(headers: &HeaderMap, state: &AppState) -> Result<(Role, String), ApiError> {
    let key = bearer(headers).ok_or(ApiError::Unauthorized)?;
    role_of_key(key, state).await
}

/// The role and actor of an API key (401 when it is no live key).
pub async fn role_of_key(key: &str, state: &AppState) -> Result<(Role, String), ApiError> {
    role_of_hash(&key_hash(key), state).await
}

/// The role and actor of the key whose SHA-256 is `hash` (401 when it is no live key:
/// never made, or revoked).
pub async fn role_of_hash(hash: &str, state: &AppState) -> Result<(Role, String), ApiError> {
    if state.env_key.matches(hash) {
        return Ok((Role::Admin, "key:env".to_owned()));
    }
    let (role, key_id) = state
        .engine
        .key_of_hash(hash)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    let role = Role::parse(&role).ok_or(ApiError::Unauthorized)?;
    Ok((role, format!("key:{key_id}")))
}

/// The caller of a request, resolved once by [`identify`].
#[derive(Clone)]
struct Caller(Result<(Role, String), ApiError>);

/// Resolves the caller's key once per request, takes the request from that key's rate
/// limit (429 `rate_limited` when it is spent; a request that fails auth counts against no
/// key), and runs the request as its actor: every change it makes records `key:<key id>`
/// (never the key). The handler's [`Auth`] check reads what was resolved here.
pub async fn identify(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let caller = caller_of(req.headers(), &state).await;
    // Stripe's webhook carries its own credential (the signature its handler checks).
    let keyed = req.uri().path() != super::payments::STRIPE_PATH;
    if let Err(ApiError::Unauthorized) = caller
        && keyed
        && req.uri().path().starts_with("/v1/")
    {
        discard(req.into_body()).await;
        return ApiError::Unauthorized.into_response();
    }
    if let (Ok((_, actor)), Some(limiter)) = (&caller, &state.limiter)
        && let Err(retry_after_seconds) = limiter.check(actor)
    {
        return ApiError::RateLimited {
            retry_after_seconds,
        }
        .into_response();
    }
    let actor = match &caller {
        Ok((_, actor)) => actor.clone(),
        Err(_) => "anonymous".to_owned(),
    };
    req.extensions_mut().insert(Caller(caller));
    holdfast::actor::acting_as(&actor, next.run(req)).await
}

/// The longest the body of a request without a live key is read (and dropped) before
/// its 401, so that a client still sending reads the answer instead of a reset connection.
const DISCARD_TIME: Duration = Duration::from_secs(1);

/// Reads and drops the body of a request that will be refused: a chunk at a time (never
/// held whole), at most [`extract::DRAIN_BYTES`](super::extract::DRAIN_BYTES) and for at
/// most [`DISCARD_TIME`].
async fn discard(body: axum::body::Body) {
    let mut chunks = body.into_data_stream();
    let mut read = 0;
    let _ = tokio::time::timeout(DISCARD_TIME, async {
        while let Some(Ok(chunk)) = chunks.next().await {
            read += chunk.len();
            if read > super::extract::DRAIN_BYTES {
                break;
            }
        }
    })
    .await;
}

impl<P: Policy + Send + Sync> FromRequestParts<AppState> for Auth<P> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let (role, _) = match parts.extensions.get::<Caller>() {
            Some(Caller(caller)) => caller.clone()?,
            None => caller_of(&parts.headers, state).await?,
        };
        if !P::ROLES.contains(&role) {
            return Err(ApiError::Forbidden {
                role,
                allowed: P::ROLES,
            });
        }
        Ok(Auth {
            role,
            _policy: PhantomData,
        })
    }
}
