//! The scheduled passes `serve` runs (sweep, notices, reconcile, reactivate, expire,
//! prune, webhooks): each on its own interval from the rate card's
//! `[schedules]`, each bounded per run, each logging what it did when it did something and
//! exporting `holdfast_pass_last_run_timestamp_seconds`, `holdfast_pass_items_total` and
//! `holdfast_pass_errors_total` (label `pass`).

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::engine::Engine;
use holdfast_store::StoreError;

/// Most jobs one run of a pass touches.
pub const MAX_PER_RUN: u64 = 1_000;

/// Most accounts one run of reconciliation or reactivation touches.
pub const MAX_ACCOUNTS_PER_RUN: u64 = 1_000;

/// Most webhook delivery attempts one run of the dispatcher makes.
pub const MAX_DELIVERIES_PER_RUN: u64 = 1_000;

/// Most rows one scheduled run of the prune pass deletes (it runs hourly by default:
/// 24 million rows a day, ahead of a few million debits a day).
pub const MAX_PRUNED_PER_RUN: u64 = 1_000_000;

/// Opens the feed cursor of every `[[webhooks]]` endpoint new to the database (at the
/// end of the feed, or its beginning with `from = "beginning"`): run before serving, so
/// that the events of the first requests are delivered.
pub async fn open_webhook_cursors(engine: &Engine) -> Result<(), StoreError> {
    for w in &engine.card().webhooks {
        engine.store.open_webhook_cursor(&w.url, w.from).await?;
    }
    Ok(())
}

/// Starts the sweeper, the notice pass, reconciliation, reactivation, pruning and (when
/// the card has `[[webhooks]]`) webhook dispatch; they stop when `shutdown` turns true.
pub fn spawn(engine: &Engine, shutdown: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    spawn_with(engine, shutdown, crate::webhooks::WebhookOptions::default())
}

/// [`spawn`], with webhook deliveries made as `webhooks` says.
pub fn spawn_with(
    engine: &Engine,
    shutdown: watch::Receiver<bool>,
    webhooks: crate::webhooks::WebhookOptions,
) -> Vec<JoinHandle<()>> {
    let s = &engine.card().schedules;
    let mut passes = account_passes(engine, &shutdown);
    passes.push(spawn_pass(
        engine.clone(),
        "prune",
        s.prune_every_seconds,
        shutdown.clone(),
        |e| async move {
            let r = e.prune(MAX_PRUNED_PER_RUN).await?;
            Ok(crate::PassReport {
                processed: r.total(),
                ..Default::default()
            })
        },
    ));
    if !engine.card().webhooks.is_empty() {
        match crate::webhooks::Dispatcher::new(engine.store.clone(), webhooks) {
            Ok(dispatcher) => passes.push(spawn_pass(
                engine.clone(),
                "webhooks",
                s.webhooks_every_seconds,
                shutdown,
                move |_| {
                    let d = dispatcher.clone();
                    async move { d.run_once(MAX_DELIVERIES_PER_RUN).await }
                },
            )),
            Err(e) => {
                tracing::error!(error = %e, "webhooks are configured but cannot be dispatched")
            }
        }
    }
    passes
}

/// The passes over jobs and accounts: sweep, notices, reconcile, reactivate, expire.
fn account_passes(engine: &Engine, shutdown: &watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let s = &engine.card().schedules;
    vec![
        spawn_pass(
            engine.clone(),
            "sweep",
            s.sweep_every_seconds,
            shutdown.clone(),
            |e| async move { e.sweep(MAX_PER_RUN).await },
        ),
        spawn_pass(
            engine.clone(),
            "notices",
            s.notices_every_seconds,
            shutdown.clone(),
            |e| async move { e.notices(MAX_PER_RUN).await },
        ),
        spawn_pass(
            engine.clone(),
            "reconcile",
            s.reconcile_every_seconds,
            shutdown.clone(),
            |e| async move { e.reconcile(MAX_ACCOUNTS_PER_RUN).await },
        ),
        spawn_pass(
            engine.clone(),
            "reactivate",
            s.reactivate_every_seconds,
            shutdown.clone(),
            |e| async move { e.reactivate(MAX_ACCOUNTS_PER_RUN).await },
        ),
        spawn_pass(
            engine.clone(),
            "expire",
            s.expire_every_seconds,
            shutdown.clone(),
            |e| async move { e.expire_blocks(MAX_ACCOUNTS_PER_RUN).await },
        ),
    ]
}

fn spawn_pass<F, Fut>(
    engine: Engine,
    name: &'static str,
    every_seconds: f64,
    mut shutdown: watch::Receiver<bool>,
    run: F,
) -> JoinHandle<()>
where
    F: Fn(Engine) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<crate::PassReport, crate::StoreError>> + Send,
{
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs_f64(every_seconds));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                break;
            }
            let actor = format!("system:{name}");
            let result = crate::actor::acting_as(&actor, run(engine.clone())).await;
            record_metrics(name, &result);
            match result {
                Ok(r) if r.processed > 0 => {
                    tracing::info!(pass = name, processed = r.processed, "pass ran")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(pass = name, error = %e, "pass failed"),
            }
        }
    })
}

/// Per-pass metrics: when it last ran, the items it processed, the runs that failed.
fn record_metrics(name: &'static str, result: &Result<crate::PassReport, crate::StoreError>) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    metrics::gauge!("holdfast_pass_last_run_timestamp_seconds", "pass" => name).set(now);
    match result {
        Ok(r) => {
            metrics::counter!("holdfast_pass_items_total", "pass" => name).increment(r.processed);
            if r.adjusted > 0 {
                metrics::counter!("holdfast_pass_adjusted_total", "pass" => name)
                    .increment(r.adjusted);
            }
        }
        Err(_) => metrics::counter!("holdfast_pass_errors_total", "pass" => name).increment(1),
    }
}
