//! Prometheus metrics: requests by route and status, a latency histogram, debits and
//! sweeper releases counted as they happen here, and gauges (open holds, jobs per lane and
//! status) read from the database at scrape time, so they cover every process — at most
//! once per [`GAUGE_REFRESH`], however often `/metrics` is asked (the gauges' queries read
//! every account and every job).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use super::state::AppState;

const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The process-wide recorder, installed on first use. `None` when another recorder was
/// installed first (then `/metrics` shows only the scrape-time gauges' absence).
fn handle() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new().set_buckets(LATENCY_BUCKETS).ok()?;
            match builder.install_recorder() {
                Ok(h) => Some(h),
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            }
        })
        .as_ref()
}

/// Installs the recorder (idempotent).
pub fn init() {
    let _ = handle();
}

/// Counts and times every request by its route template.
pub async fn track(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = req.method().as_str().to_owned();
    let start = Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!("holdfast_http_requests_total", "route" => route.clone(), "method" => method, "status" => status)
        .increment(1);
    metrics::histogram!("holdfast_http_request_duration_seconds", "route" => route)
        .record(start.elapsed().as_secs_f64());
    response
}

/// A debit passed.
pub fn debited(micros: i64) {
    metrics::counter!("holdfast_debits_total").increment(1);
    metrics::counter!("holdfast_debited_micros_total").increment(micros.unsigned_abs());
}

/// The sweeper released `n` jobs from a run this process asked for.
/// One Stripe webhook event answered, by what it did (`error` when it was not applied).
pub fn stripe_event(outcome: &'static str) {
    metrics::counter!("holdfast_stripe_events_total", "outcome" => outcome).increment(1);
}

pub fn swept(n: u64) {
    metrics::counter!("holdfast_sweeper_released_total").increment(n);
}

async fn set_gauges(s: &AppState) {
    let stats = match s.engine.stats().await {
        Ok(stats) => stats,
        Err(e) => {
            tracing::warn!(error = %e, "metrics: database unavailable");
            metrics::gauge!("holdfast_database_up").set(0.0);
            return;
        }
    };
    metrics::gauge!("holdfast_database_up").set(1.0);
    metrics::gauge!("holdfast_open_holds").set(stats.open_holds as f64);
    metrics::gauge!("holdfast_held_money_micros").set(stats.held_money_micros as f64);
    for lane in s.engine.card().lanes() {
        let queued = stats.count(&lane, "queued");
        metrics::gauge!("holdfast_jobs_queued", "lane" => lane.clone()).set(queued as f64);
        let running = stats.count(&lane, "in_progress");
        metrics::gauge!("holdfast_jobs_in_progress", "lane" => lane.clone()).set(running as f64);
        let expired = stats.count(&lane, "expired");
        metrics::gauge!("holdfast_jobs_expired", "lane" => lane).set(expired as f64);
    }
    // Endpoints by their place in the card, not their URL: a webhook URL often carries a
    // token, and /metrics needs no key.
    for (i, hook) in s.engine.card().webhooks.iter().enumerate() {
        let backlog = stats.webhooks.iter().find(|w| w.endpoint == hook.url);
        let endpoint = i.to_string();
        let (pending, dead, age) =
            backlog.map_or((0, 0, 0), |w| (w.pending, w.dead, w.oldest_pending_micros));
        metrics::gauge!("holdfast_webhook_backlog", "endpoint" => endpoint.clone())
            .set(pending as f64);
        metrics::gauge!("holdfast_webhook_dead", "endpoint" => endpoint.clone()).set(dead as f64);
        metrics::gauge!("holdfast_webhook_oldest_pending_seconds", "endpoint" => endpoint)
            .set(age as f64 / 1e6);
    }
}

/// The least time between two reads of the gauges from the database.
pub const GAUGE_REFRESH: Duration = Duration::from_secs(5);

/// When the gauges were last read; a scrape reads them again only once this is
/// [`GAUGE_REFRESH`] old.
#[derive(Debug, Default)]
pub struct GaugeRefresh {
    last: Mutex<Option<Instant>>,
}

impl GaugeRefresh {
    /// Whether the gauges are due at `now`; when they are, `now` is taken as their read
    /// (so of many scrapes at once, one reads the database).
    fn due(&self, now: Instant) -> bool {
        let mut last = self.last.lock().expect("gauge refresh");
        let due = last.is_none_or(|at| now.duration_since(at) >= GAUGE_REFRESH);
        if due {
            *last = Some(now);
        }
        due
    }
}

/// The Prometheus text, with the gauges read now when they are due.
pub async fn render(s: &AppState) -> String {
    if s.gauges.due(Instant::now()) {
        set_gauges(s).await;
    }
    match handle() {
        Some(h) => {
            h.run_upkeep();
            h.render()
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_are_read_at_most_once_per_refresh() {
        let refresh = GaugeRefresh::default();
        let t0 = Instant::now();
        assert!(refresh.due(t0), "the first scrape reads them");
        assert!(!refresh.due(t0));
        assert!(!refresh.due(t0 + GAUGE_REFRESH - Duration::from_millis(1)));
        assert!(refresh.due(t0 + GAUGE_REFRESH));
        assert!(!refresh.due(t0 + GAUGE_REFRESH + Duration::from_secs(1)));
    }
}
