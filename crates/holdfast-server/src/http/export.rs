//! The books across accounts: `GET /v1/ledger`, a JSON page or, with `Accept: text/csv`,
//! the whole range streamed as CSV a page at a time (memory stays one page whatever the
//! range).

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::{StreamExt, stream};
use holdfast::{Engine, LedgerFilter, MAX_PAGE};

use super::accounts::account_id;
use super::auth::{AdminRead, Auth};
use super::error::{ApiError, ApiResult, AuthErrors, ErrorBody};
use super::extract::{Paging, QueryPairs};
use super::state::AppState;
use super::wire::{LedgerPage, parse_time};
use crate::books::csv_chunk;

/// Whether the client asked for CSV.
pub fn wants_csv(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            range
                .split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/csv"))
        })
}

fn ledger_filter(query: &QueryPairs, csv: bool) -> Result<LedgerFilter, ApiError> {
    let [since, until, account, kind, after, limit] =
        query.take(["since", "until", "account_id", "kind", "after", "limit"])?;
    if csv && limit.is_some() {
        return Err(ApiError::invalid(
            "limit: a CSV export streams the whole range (resume with after)",
        ));
    }
    let paging = Paging::parse(limit.as_deref(), after.as_deref())?;
    Ok(LedgerFilter {
        since: since
            .as_deref()
            .map(|t| parse_time("since", t))
            .transpose()?,
        until: until
            .as_deref()
            .map(|t| parse_time("until", t))
            .transpose()?,
        account_id: account.as_deref().map(account_id).transpose()?,
        kind,
        after: paging.after,
        limit: if csv { MAX_PAGE } else { paging.limit },
    })
}

/// Ledger entries of every account in entry order, by time range, account and kind.
#[utoipa::path(get, path = "/v1/ledger", tag = "money", operation_id = "export_ledger",
    params(
        ("since" = Option<String>, Query, description = "RFC 3339: entries written at or after this"),
        ("until" = Option<String>, Query, description = "RFC 3339: entries written before this"),
        ("account_id" = Option<String>, Query, description = "Only this account's entries"),
        ("kind" = Option<String>, Query, description = "Only entries of this kind"),
        ("after" = Option<String>, Query, description = "The `next` of the previous page"),
        ("limit" = Option<i64>, Query, description = "1–1000, default 100 (JSON only)"),
    ),
    responses(
        (status = 200, description = "A page of entries; with `Accept: text/csv` the whole range as CSV",
         content((LedgerPage = "application/json"), (String = "text/csv"))),
        (status = 422, description = "`invalid_request`", body = ErrorBody),
        AuthErrors,
    ),
    security(("bearer" = [])))]
pub async fn ledger(
    _: Auth<AdminRead>,
    State(s): State<AppState>,
    headers: HeaderMap,
    query: QueryPairs,
) -> ApiResult<Response> {
    let csv = wants_csv(&headers);
    let filter = ledger_filter(&query, csv)?;
    let place = csv
        .then(|| s.exports.clone().try_acquire_owned())
        .transpose()
        .map_err(|_| ApiError::TooManyExports)?;
    // The first page is read before answering, so a bad filter or a database that is
    // down is an error status, not a broken stream.
    let first = s.engine.export_ledger(&filter).await?;
    if !csv {
        let page = LedgerPage {
            entries: first.items.into_iter().map(Into::into).collect(),
            currency: s.engine.card().currency.clone(),
            next: first.next.map(|n| n.to_string()),
        };
        return Ok(Json(page).into_response());
    }
    let head = csv_chunk(&first.items, true).map_err(|e| ApiError::Internal(e.to_string()))?;
    let more = first.items.len() as i64 == filter.limit;
    let after = LedgerFilter {
        after: first.next,
        ..filter
    };
    let rest = stream::unfold(more.then_some((s.engine.clone(), after)), next_chunk);
    // The stream owns the export's place: it is given back when the stream is dropped
    // (sent to its end, or its client gone).
    let body = stream::once(async move { Ok(Bytes::from(head)) })
        .chain(rest)
        .map(move |chunk| {
            let _holds = &place;
            chunk
        });
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"holdfast-ledger.csv\""),
    );
    Ok(response)
}

type ChunkState = Option<(Engine, LedgerFilter)>;

/// The next page of a CSV export as a chunk; a database error mid-stream ends the body
/// with an error (the client sees a cut response, never a silently short file).
async fn next_chunk(state: ChunkState) -> Option<(std::io::Result<Bytes>, ChunkState)> {
    let (engine, filter) = state?;
    let page = match engine.export_ledger(&filter).await {
        Ok(page) => page,
        Err(e) => {
            tracing::warn!(error = %e, "ledger export stopped mid-stream");
            return Some((Err(std::io::Error::other(e.to_string())), None));
        }
    };
    if page.items.is_empty() {
        return None;
    }
    let more = page.items.len() as i64 == filter.limit;
    let chunk = csv_chunk(&page.items, false).map(Bytes::from);
    let next = LedgerFilter {
        after: page.next,
        ..filter
    };
    Some((chunk, more.then_some((engine, next))))
}
