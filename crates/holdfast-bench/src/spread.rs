//! `--runs N`: every workload run N times in a row (each on a fresh database unless
//! `--database`), and each of its ratios given across the runs (every run's value, then
//! min, median, max), so that a ratio comes with its spread from one command.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::target::Backend;
use crate::{Outcome, Workload};

/// One ratio of one workload across its runs.
#[derive(Debug, Serialize)]
pub struct Spread {
    pub workload: Workload,
    pub backend: Backend,
    pub ratio: String,
    /// How many times the workload ran.
    pub of_runs: usize,
    /// The ratio's value in each run that gave it, in the order run.
    pub runs: Vec<f64>,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// The spread of every ratio of every workload that ran more than once, in the order the
/// workloads ran.
pub fn spreads(results: &[Outcome]) -> Vec<Spread> {
    let mut out = Vec::new();
    let mut seen: Vec<(Workload, Backend)> = Vec::new();
    for first in results {
        let of = (first.workload, first.backend);
        if seen.contains(&of) {
            continue;
        }
        seen.push(of);
        let runs: Vec<&Outcome> = results
            .iter()
            .filter(|o| (o.workload, o.backend) == of)
            .collect();
        if runs.len() < 2 {
            continue;
        }
        // Every ratio any run gave (a run whose side ran nothing may lack one).
        let names: BTreeSet<&String> = runs.iter().flat_map(|o| o.ratios.keys()).collect();
        for ratio in names {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|o| o.ratios.get(ratio))
                .copied()
                .collect();
            out.push(spread_of(of, ratio, runs.len(), values));
        }
    }
    out
}

/// `ratio` of a workload that ran `of_runs` times, from its value in each run that gave it.
fn spread_of(
    (workload, backend): (Workload, Backend),
    ratio: &str,
    of_runs: usize,
    runs: Vec<f64>,
) -> Spread {
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    };
    Spread {
        workload,
        backend,
        ratio: ratio.to_owned(),
        of_runs,
        min: sorted.first().copied().unwrap_or(f64::NAN),
        max: sorted.last().copied().unwrap_or(f64::NAN),
        median,
        runs,
    }
}

/// The spreads as a table, one per workload.
pub fn print(spreads: &[Spread]) {
    let mut last = None;
    for s in spreads {
        if last != Some((s.workload, s.backend)) {
            last = Some((s.workload, s.backend));
            println!(
                "\n== spread over {} runs: {} on {} ==",
                s.of_runs,
                crate::kebab(&s.workload),
                crate::kebab(&s.backend)
            );
            println!(
                "{:<24} {:>7} {:>7} {:>7}  runs",
                "ratio", "min", "median", "max"
            );
        }
        let runs: Vec<String> = s.runs.iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "{:<24} {:>7.2} {:>7.2} {:>7.2}  {}",
            s.ratio,
            s.min,
            s.median,
            s.max,
            runs.join(" ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let of = (Workload::Ingest, Backend::Sqlite);
        let s = spread_of(of, "r", 4, vec![1.0, 0.25, 0.75, 0.5]);
        assert_eq!((s.min, s.median, s.max), (0.25, 0.625, 1.0));
        assert_eq!(s.runs, vec![1.0, 0.25, 0.75, 0.5], "kept in the order run");
        let s = spread_of(of, "r", 3, vec![0.8, 0.6, 0.7]);
        assert_eq!((s.min, s.median, s.max), (0.6, 0.7, 0.8));
    }
}
