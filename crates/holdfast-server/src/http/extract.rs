//! Request extractors that answer in API.md's terms instead of axum's rejections: a body
//! over 64 KiB (1 MiB for a batch ingest) is 413 `payload_too_large`; malformed JSON, a missing Content-Type, an
//! unknown or missing field, a wrong type, a bad path or query value are 422
//! `invalid_request` with a message that names the field.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use holdfast::MAX_PAGE;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The largest body of a batch ingest (`POST /v1/debits`, up to 1,000 debits).
pub const MAX_BATCH_BODY_BYTES: usize = 1024 * 1024;

/// The largest body `path` accepts.
pub fn body_limit(path: &str) -> usize {
    if path == "/v1/debits" {
        MAX_BATCH_BODY_BYTES
    } else {
        MAX_BODY_BYTES
    }
}

/// How much of an oversized body is read and dropped so that the client, still sending,
/// reads its 413 (or 401/403) instead of a reset connection. Past this the connection is
/// simply closed.
pub const DRAIN_BYTES: usize = 2 * MAX_BATCH_BODY_BYTES;

/// Marks a request whose body was over its [`body_limit`] (its body is then empty).
#[derive(Clone, Copy)]
struct Oversized;

/// Reads the whole body before routing to the handler, so that an early answer (401,
/// 403, 413) never races the client's upload. A body over the limit is replaced by an
/// empty one and marked; [`Body`] answers 413 for it after auth has run.
pub async fn buffer_body(req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let limit = body_limit(parts.uri.path());
    let bytes = match axum::body::to_bytes(body, DRAIN_BYTES).await {
        Ok(bytes) if bytes.len() <= limit => bytes,
        // Over the limit, or unreadable (over the drain cap, or the client went away).
        _ => {
            parts.extensions.insert(Oversized);
            Bytes::new()
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// A JSON body of shape `T` (which should `deny_unknown_fields`).
pub struct Body<T>(pub T);

/// As [`Body`], but an empty body counts as `{}`: for endpoints whose body has no
/// required field (`cancel`, `block`, `activity`, admin passes).
pub struct BodyOrEmpty<T>(pub T);

fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The request's headers and whole body (413 past its limit).
pub async fn read_body<S: Send + Sync>(
    req: Request,
    state: &S,
) -> Result<(HeaderMap, Bytes), ApiError> {
    if req.extensions().get::<Oversized>().is_some() {
        return Err(ApiError::PayloadTooLarge);
    }
    let headers = req.headers().clone();
    let bytes = Bytes::from_request(req, state).await.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(f) if f.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge
        }
        other => ApiError::invalid(format!("could not read the request body: {other}")),
    })?;
    Ok((headers, bytes))
}

/// Parses JSON, naming the field a problem is in.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let what = if inner.is_syntax() || inner.is_eof() {
            "malformed JSON"
        } else {
            "invalid request"
        };
        if path == "." {
            ApiError::invalid(format!("{what}: {inner}"))
        } else {
            ApiError::invalid(format!("{path}: {inner}"))
        }
    })
}

/// Parses one part of a body that was read as JSON already, naming the field a problem
/// is in after `at` (e.g. `debits[3].amount: …`).
pub fn parse_value<T: DeserializeOwned>(at: &str, value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ApiError::invalid(format!("{at}: {inner}"))
        } else {
            ApiError::invalid(format!("{at}.{path}: {inner}"))
        }
    })
}

fn parse_typed<T: DeserializeOwned>(headers: &HeaderMap, bytes: &[u8]) -> Result<T, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::invalid("Content-Type must be application/json"));
    }
    // Every body is an object; serde would also take a struct from a JSON array.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::invalid("the body must be a JSON object"));
    }
    parse_json(bytes)
}

/// An integer field as JSON Schema counts integers: `5` or `5.0` (a number with no
/// fraction), within i64.
pub fn whole_number<'de, D: serde::Deserializer<'de>>(de: D) -> Result<i64, D::Error> {
    let n = serde_json::Number::deserialize(de)?;
    whole_of(&n).ok_or_else(|| {
        serde::de::Error::custom(format!("{n}: must be a whole number within ±{MAX_WHOLE}"))
    })
}

/// The largest whole number a request may carry: 9·10^15, below 2^53, so `5` and `5.0`
/// mean the same exactly.
pub const MAX_WHOLE: i64 = 9_000_000_000_000_000;

/// A JSON number as a whole number, if it is one within ±[`MAX_WHOLE`]: `5`, or `5.0`.
pub fn whole_of(n: &serde_json::Number) -> Option<i64> {
    n.as_i64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_WHOLE as f64)
                .map(|f| f as i64)
        })
        .filter(|w| w.abs() <= MAX_WHOLE)
}

/// As [`whole_number`], for an optional field (absent or null is `None`).
pub fn opt_whole_number<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<i64>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Whole(#[serde(deserialize_with = "whole_number")] i64);
    Ok(Option::<Whole>::deserialize(de)?.map(|Whole(n)| n))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let (headers, bytes) = read_body(req, state).await?;
        Ok(Body(parse_typed(&headers, &bytes)?))
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for BodyOrEmpty<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let (headers, bytes) = read_body(req, state).await?;
        // No body at all, or JSON's null, is {}; whitespace alone is not JSON (422).
        if bytes.is_empty() || bytes.trim_ascii() == b"null" {
            return Ok(BodyOrEmpty(T::default()));
        }
        Ok(BodyOrEmpty(parse_typed(&headers, &bytes)?))
    }
}

/// The `{}` body of an endpoint that takes no fields.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// One path parameter, as text; a malformed encoding is 422.
pub struct PathText(pub String);

impl<S: Send + Sync> FromRequestParts<S> for PathText {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(text) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::invalid(format!("path: {e}")))?;
        Ok(PathText(text))
    }
}

/// The query string as decoded pairs; names not in `known` are 422.
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::invalid(format!("query: {e}")))?;
        Ok(QueryPairs(pairs))
    }
}

/// `limit` and `after` of a listing (API.md "Lists").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub limit: i64,
    pub after: Option<i64>,
}

/// The default page size.
pub const DEFAULT_LIMIT: i64 = 100;

impl QueryPairs {
    /// Rejects names outside `known`; returns the value of each known name (last wins).
    pub fn take<const N: usize>(
        &self,
        known: [&'static str; N],
    ) -> Result<[Option<String>; N], ApiError> {
        let mut values = [const { None }; N];
        for (name, value) in &self.0 {
            let Some(i) = known.iter().position(|k| k == name) else {
                return Err(ApiError::invalid(format!(
                    "unknown query parameter {name:?} (known: {})",
                    known.join(", ")
                )));
            };
            values[i] = Some(value.clone());
        }
        Ok(values)
    }
}

/// A page size: 1 to [`MAX_PAGE`], [`DEFAULT_LIMIT`] when absent.
pub fn parse_limit(limit: Option<&str>) -> Result<i64, ApiError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| {
                ApiError::invalid(format!("limit: must be an integer from 1 to {MAX_PAGE}"))
            }),
    }
}

impl Paging {
    pub fn parse(limit: Option<&str>, after: Option<&str>) -> Result<Paging, ApiError> {
        let limit = parse_limit(limit)?;
        let after = match after {
            None | Some("") => None,
            Some(text) => Some(parse_cursor(text)?),
        };
        Ok(Paging { limit, after })
    }
}

/// A cursor is the decimal id of a row previously returned.
fn parse_cursor(text: &str) -> Result<i64, ApiError> {
    parse_row_id(text)
        .ok_or_else(|| ApiError::invalid("after: must be an id returned by an earlier page"))
}

/// A row id as the API writes it (`entry_id`, `event_id`, …): decimal, no sign, no
/// leading zero, at most 18 digits.
pub fn parse_row_id(text: &str) -> Option<i64> {
    let ok = !text.is_empty()
        && text.len() <= 18
        && text.bytes().all(|b| b.is_ascii_digit())
        && !(text.len() > 1 && text.starts_with('0'));
    ok.then(|| text.parse::<i64>().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_follows_the_contract() {
        assert_eq!(
            Paging::parse(None, None).unwrap(),
            Paging {
                limit: 100,
                after: None
            }
        );
        assert_eq!(
            Paging::parse(Some("1000"), Some("42")).unwrap().after,
            Some(42)
        );
        for bad in ["0", "1001", "-1", "abc", "1.5", ""] {
            assert!(Paging::parse(Some(bad), None).is_err(), "{bad}");
        }
        for bad in ["x", "-1", "01", "1e3", "9999999999999999999"] {
            assert!(Paging::parse(None, Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        for (ct, ok) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/merge-patch+json", true),
            ("text/plain", false),
            ("application/jsonx", false),
            ("+json", false),
        ] {
            h.insert(CONTENT_TYPE, ct.parse().unwrap());
            assert_eq!(is_json(&h), ok, "{ct}");
        }
    }
}
