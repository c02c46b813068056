//! API keys and roles. A key is 256 random bits; only its SHA-256 is stored and it is
//! looked up by that hash. The environment's admin key is compared in constant time.
//!
//! Handlers take [`Auth<P>`] as their first argument: axum runs it before the body is
//! read, so 401 and 403 always win over 413 and 422 (API.md "Errors").

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
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
    let hash = key_hash(key);
    if state.env_key.matches(&hash) {
        return Ok((Role::Admin, "key:env".to_owned()));
    }
    let (role, key_id) = state
        .engine
        .key_of_hash(&hash)
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
