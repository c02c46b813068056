//! API keys and roles. A key is 256 random bits; only its SHA-256 is stored and it is
//! looked up by that hash. The environment's admin key is compared in constant time.
//!
//! Handlers take [`Auth<P>`] as their first argument: axum runs it before the body is
//! read, so 401 and 403 always win over 413 and 422 (API.md "Errors").

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use holdfast::key_hash;

use super::error::ApiError;
use super::state::AppState;
pub use super::state::EnvKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Service,
    Worker,
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Service, Role::Worker, Role::Admin];

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "service" => Some(Role::Service),
            "worker" => Some(Role::Worker),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Service => "service",
            Role::Worker => "worker",
            Role::Admin => "admin",
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

/// The caller's role, checked against `P`.
pub struct Auth<P: Policy> {
    pub role: Role,
    _policy: PhantomData<P>,
}

fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

/// The role of the key the request carries.
async fn role_of(parts: &Parts, state: &AppState) -> Result<Role, ApiError> {
    let key = bearer(parts).ok_or(ApiError::Unauthorized)?;
    let hash = key_hash(key);
    if state.env_key.matches(&hash) {
        return Ok(Role::Admin);
    }
    let role = state.engine.role_of_key_hash(&hash).await?;
    role.as_deref()
        .and_then(Role::parse)
        .ok_or(ApiError::Unauthorized)
}

impl<P: Policy + Send + Sync> FromRequestParts<AppState> for Auth<P> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let role = role_of(parts, state).await?;
        if !P::ROLES.contains(&role) {
            return Err(ApiError::Forbidden);
        }
        Ok(Auth {
            role,
            _policy: PhantomData,
        })
    }
}
