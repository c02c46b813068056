//! `lifecycle-batched`: a client op is 50 users submitting a job each at once, then a
//! worker leasing them in batches (`max_jobs`) and completing what it got in one call,
//! until it has finished 50 jobs. Library and HTTP sides; the single `lifecycle` is
//! measured beside them for the speed-up.

use std::sync::Arc;

use anyhow::{Context, bail};
use futures::future::try_join_all;
use holdfast::{AccountId, CompleteJob, Engine, IdempotencyKey, JobId, Submit, WorkerId};
use serde_json::json;

use crate::driver::Op;
use crate::workloads::{KIND, LEASE_TRIES, Names, http_op, random_account};

/// Jobs per client op: submitted together, then leased and completed in batches.
pub const JOBS_PER_OP: usize = 50;

/// The library side: 50 concurrent `Engine::submit`s, then `lease_many` and
/// `complete_many` until 50 jobs are done.
pub fn engine_lifecycle_batched(engine: &Engine, accounts: u64, names: &Arc<Names>) -> Op {
    let engine = engine.clone();
    let names = names.clone();
    Arc::new(move |client, _| {
        let engine = engine.clone();
        let names = names.clone();
        Box::pin(async move {
            let submits = (0..JOBS_PER_OP)
                .map(|_| {
                    Ok(Submit {
                        account: AccountId::parse(&random_account(accounts))?,
                        kind: KIND.into(),
                        payload: None,
                        key: IdempotencyKey::parse(&names.key())?,
                    })
                })
                .collect::<anyhow::Result<Vec<Submit>>>()?;
            try_join_all(submits.iter().map(|s| engine.submit(s))).await?;
            let worker = WorkerId::parse(&format!("w{client}"))?;
            let (mut done, mut empty) = (0, 0);
            while done < JOBS_PER_OP {
                let leases = engine
                    .lease_many(KIND, &worker, 60, JOBS_PER_OP - done)
                    .await?;
                if leases.is_empty() {
                    empty += 1;
                    if empty == LEASE_TRIES {
                        bail!("no job to lease");
                    }
                    continue;
                }
                let items: Vec<CompleteJob> = leases
                    .iter()
                    .map(|l| {
                        Ok(CompleteJob {
                            job: JobId::parse(&l.job.job_id)?,
                            lease_token: l.lease_token.clone(),
                            capture: None,
                        })
                    })
                    .collect::<anyhow::Result<_>>()?;
                for answer in engine.complete_many(&items).await? {
                    answer?;
                }
                done += leases.len();
            }
            Ok(())
        })
    })
}

/// The same through the HTTP API: 50 concurrent `POST /v1/jobs`, then `POST
/// /v1/lanes/{lane}/lease` with `max_jobs` and `POST /v1/jobs/complete` with its items.
pub fn http_lifecycle_batched(
    base: &str,
    key: &str,
    accounts: u64,
    names: &Arc<Names>,
) -> anyhow::Result<Op> {
    let names = names.clone();
    http_op(base, key, move |http, c| {
        let names = names.clone();
        async move {
            let submits = (0..JOBS_PER_OP).map(|_| {
                let body = json!({ "account_id": random_account(accounts), "kind": KIND, "idempotency_key": names.key() });
                http.post("/v1/jobs", body, &[201], "submit")
            });
            try_join_all(submits).await?;
            let (mut done, mut empty) = (0, 0);
            while done < JOBS_PER_OP {
                let body = json!({ "worker_id": format!("w{c}"), "lease_seconds": 60, "wait_ms": 0, "max_jobs": JOBS_PER_OP - done });
                let path = format!("/v1/lanes/{KIND}/lease");
                let r = http.post(&path, body, &[200], "lease").await?;
                let items = lease_items(&r.json().await?)?;
                if items.is_empty() {
                    empty += 1;
                    if empty == LEASE_TRIES {
                        bail!("no job to lease");
                    }
                    continue;
                }
                done += items.len();
                let body = json!({ "items": items });
                let r = http.post("/v1/jobs/complete", body, &[200], "complete");
                check_results(&r.await?.json().await?)?;
            }
            Ok(())
        }
    })
}

/// The complete items of a batched lease's answer: `{job_id, lease_token}` per job.
fn lease_items(answer: &serde_json::Value) -> anyhow::Result<Vec<serde_json::Value>> {
    let jobs = answer["jobs"].as_array().context("lease without jobs")?;
    jobs.iter()
        .map(|l| {
            let job = l["job"]["job_id"]
                .as_str()
                .context("lease without job_id")?;
            let token = l["lease_token"].as_str().context("lease without token")?;
            Ok(json!({ "job_id": job, "lease_token": token }))
        })
        .collect()
}

/// Every item of a batched complete answered 200.
fn check_results(answer: &serde_json::Value) -> anyhow::Result<()> {
    let results = answer["results"].as_array().context("no results")?;
    match results.iter().find(|r| r["status"] != 200) {
        Some(bad) => bail!("complete: an item answered {bad}"),
        None => Ok(()),
    }
}
