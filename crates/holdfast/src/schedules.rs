//! The scheduled passes `serve` runs: each on its own interval from the rate card's
//! `[schedules]`, each bounded per run, each logging what it did when it did something.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::engine::Engine;

/// Most jobs one run of a pass touches.
pub const MAX_PER_RUN: u64 = 1_000;

/// Starts the sweeper and the notice pass; they stop when `shutdown` turns true.
pub fn spawn(engine: &Engine, shutdown: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let s = &engine.card().schedules;
    vec![
        spawn_pass(
            engine.clone(),
            "sweep",
            s.sweep_every_seconds,
            shutdown.clone(),
            |e| async move { e.store().sweep(MAX_PER_RUN).await },
        ),
        spawn_pass(
            engine.clone(),
            "notices",
            s.notices_every_seconds,
            shutdown,
            |e| async move { e.store().notices(MAX_PER_RUN).await },
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
    Fut: std::future::Future<Output = Result<holdfast_store::PassReport, holdfast_store::StoreError>>
        + Send,
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
            match run(engine.clone()).await {
                Ok(r) if r.processed > 0 => {
                    tracing::info!(pass = name, processed = r.processed, "pass ran")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(pass = name, error = %e, "pass failed"),
            }
        }
    })
}
