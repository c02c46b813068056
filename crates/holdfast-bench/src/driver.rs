//! The closed-loop driver: N clients each issue one operation after another for a bounded
//! time (and a bounded count), recording the latency of each and the errors.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cpu::{CpuPerOp, CpuTime};

/// An operation a client issues: `(client, iteration) -> Result`.
pub type Op = Arc<
    dyn Fn(usize, u64) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>> + Send + Sync,
>;

/// Most operations one client issues in one slice, whatever the time says.
pub const MAX_OPS_PER_CLIENT: u64 = 5_000_000;

/// What a set of slices measured.
#[derive(Debug, Default, Clone)]
pub struct Sample {
    pub ops: u64,
    pub errors: u64,
    pub elapsed: Duration,
    /// Latency of each successful operation, in microseconds.
    pub latencies_us: Vec<u32>,
    pub first_error: Option<String>,
    /// CPU used by the bench process and the database server during the slices.
    pub cpu: CpuTime,
    /// Operations per second of each closed-loop slice, in the order run.
    pub slice_rates: Vec<f64>,
}

impl Sample {
    pub fn merge(&mut self, other: Sample) {
        self.ops += other.ops;
        self.errors += other.errors;
        self.elapsed += other.elapsed;
        self.latencies_us.extend(other.latencies_us);
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.cpu.merge(other.cpu);
        self.slice_rates.extend(other.slice_rates);
    }

    /// One timed operation (used by passes that are not closed loops, like the sweeper).
    pub fn record(&mut self, took: Duration, ops: u64) {
        self.ops += ops;
        self.elapsed += took;
        self.latencies_us
            .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
    }

    pub fn summary(&self, unit: &'static str) -> Summary {
        let mut l = self.latencies_us.clone();
        l.sort_unstable();
        let pct = |p: f64| -> f64 {
            if l.is_empty() {
                return 0.0;
            }
            let i = ((l.len() as f64 - 1.0) * p).round() as usize;
            f64::from(l[i]) / 1000.0
        };
        let secs = self.elapsed.as_secs_f64();
        Summary {
            unit,
            ops: self.ops,
            errors: self.errors,
            seconds: secs,
            per_second: if secs > 0.0 {
                self.ops as f64 / secs
            } else {
                0.0
            },
            p50_ms: pct(0.50),
            p99_ms: pct(0.99),
            max_ms: l.last().map_or(0.0, |m| f64::from(*m) / 1000.0),
            first_error: self.first_error.clone(),
            cpu: self.cpu.per_op(self.ops, secs),
            slices_per_second: self.slice_rates.clone(),
        }
    }
}

/// The figures one side of a workload prints.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub unit: &'static str,
    pub ops: u64,
    pub errors: u64,
    pub seconds: f64,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// CPU per operation: the bench process, the database server, both.
    pub cpu: CpuPerOp,
    /// The rate of each slice (closed-loop workloads), in the order run: a side whose
    /// slices differ much more than the others' moved during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slices_per_second: Vec<f64>,
}

/// Runs `op` from `clients` concurrent clients for `duration`.
pub async fn closed_loop(op: Op, clients: usize, duration: Duration) -> Sample {
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let op = op.clone();
            tokio::spawn(async move {
                let mut s = Sample::default();
                let mut i = 0;
                while i < MAX_OPS_PER_CLIENT && Instant::now() < deadline {
                    let t = Instant::now();
                    match op(client, i).await {
                        Ok(()) => {
                            s.ops += 1;
                            s.latencies_us
                                .push(u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX));
                        }
                        Err(e) => {
                            s.errors += 1;
                            if s.first_error.is_none() {
                                s.first_error = Some(format!("{e:#}"));
                            }
                        }
                    }
                    i += 1;
                }
                s
            })
        })
        .collect();
    let mut total = Sample::default();
    for t in tasks {
        match t.await {
            Ok(s) => total.merge(s),
            Err(e) => {
                total.errors += 1;
                total
                    .first_error
                    .get_or_insert_with(|| format!("client panicked: {e}"));
            }
        }
    }
    total.elapsed = start.elapsed();
    let secs = total.elapsed.as_secs_f64();
    if secs > 0.0 {
        total.slice_rates = vec![total.ops as f64 / secs];
    }
    total
}
