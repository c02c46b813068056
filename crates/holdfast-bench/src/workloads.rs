//! The workloads: setup, the engine side and the floor side of each.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holdfast::decide::{BlockTerms, CreditCategory};
use holdfast::{
    AccountId, CreditKind, Engine, IdempotencyKey, JobId, Micros, PutAccount, Submit, Usage,
    WorkerId,
};
use serde_json::json;

use crate::driver::{Op, Sample};
use crate::floor::FloorPool;

/// The job kind every lifecycle uses: holds 0.50 from the money pocket.
pub const KIND: &str = "video";
const METER: &str = "linux-small";

/// Names unique within a run: idempotency keys, workers.
pub struct Names {
    run: String,
    next: AtomicU64,
}

impl Names {
    pub fn new() -> Arc<Names> {
        Arc::new(Names {
            run: uuid::Uuid::new_v4().simple().to_string()[..8].to_owned(),
            next: AtomicU64::new(0),
        })
    }

    pub fn key(&self) -> String {
        format!("{}-{}", self.run, self.next.fetch_add(1, Ordering::Relaxed))
    }

    pub fn tag(&self) -> String {
        format!(
            "sweep{}x{}",
            self.run,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }
}

pub fn account_name(i: u64) -> String {
    format!("b{i}")
}

/// The terms of the `n`-th block of a bench account: priority 10, 20, …; expiring a year
/// apart, the first a year from now (the bench runs for minutes).
fn block_terms(n: u64) -> BlockTerms {
    const YEAR: i64 = 365 * 86_400 * 1_000_000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let n = i64::try_from(n).unwrap_or(0);
    BlockTerms {
        category: CreditCategory::Promotional,
        priority: (10 * (n + 1)).min(100),
        expires_at: Some(now + YEAR * (n + 1)),
    }
}

pub(crate) fn random_account(accounts: u64) -> String {
    account_name(rand::random_range(0..accounts.max(1)))
}

/// Creates accounts `b0`…`b{n-1}` on the free plan with no concurrency limit to speak of,
/// each with a large top-up and `blocks` large credit blocks. Setup, not measured.
pub async fn create_accounts(
    engine: &Engine,
    n: u64,
    blocks: u64,
    names: &Arc<Names>,
) -> anyhow::Result<()> {
    let workers: u64 = 8;
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let store = engine.clone();
            let names = names.clone();
            tokio::spawn(async move {
                for i in (w..n).step_by(workers as usize) {
                    let account = AccountId::parse(&account_name(i))?;
                    let put = PutAccount {
                        plan: "free".into(),
                        plan_until: None,
                        max_concurrent_jobs: Some(1_000_000),
                        recharge: None,
                        spend: None,
                    };
                    store.put_account(&account, &put).await?;
                    let key = IdempotencyKey::parse(&names.key())?;
                    let amount = Micros(1_000_000 * 1_000_000);
                    store
                        .credit(&account, amount, CreditKind::TopUp, &key)
                        .await?;
                    for b in 0..blocks {
                        let key = IdempotencyKey::parse(&names.key())?;
                        let terms = block_terms(b);
                        (store.credit_on_terms(&account, amount, CreditKind::Bonus, terms, &key))
                            .await?;
                    }
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// The engine's debit path (`Engine::debit`): concurrent debits of one account share a
/// transaction (batching for hot accounts); over many accounts batches are mostly of one.
/// With `job_ref` each debit names a job id (a UUID, as the engine's job ids are, that
/// no job has), so the engine also looks up the jobs a batch names, as it does for a
/// runner reporting usage of its job.
pub fn engine_debit(engine: &Engine, accounts: u64, names: &Arc<Names>, job_ref: bool) -> Op {
    let engine = engine.clone();
    let names = names.clone();
    Arc::new(move |_, _| {
        let engine = engine.clone();
        let names = names.clone();
        Box::pin(async move {
            let account = AccountId::parse(&random_account(accounts))?;
            let key = IdempotencyKey::parse(&names.key())?;
            let usage = Usage::Metered {
                meter: METER.into(),
                seconds: 1,
            };
            let run = job_ref.then(|| uuid::Uuid::now_v7().to_string());
            engine.debit(&account, &usage, &key, run.as_deref()).await?;
            Ok(())
        })
    })
}

/// The floor's debit; with `engine_sql` the engine's own debit statements without the
/// engine instead ([`FloorPool::debit_engine_sql`], PostgreSQL).
pub fn floor_debit(floor: &FloorPool, accounts: u64, names: &Arc<Names>, engine_sql: bool) -> Op {
    let floor = floor.clone();
    let names = names.clone();
    Arc::new(move |_, _| {
        let floor = floor.clone();
        let names = names.clone();
        Box::pin(async move {
            let (account, key) = (random_account(accounts), names.key());
            match engine_sql {
                false => floor.debit(&account, &key).await,
                true => floor.debit_engine_sql(&account, &key).await,
            }
        })
    })
}

/// How many times a lifecycle asks for a job before it counts as an error: a lease can
/// find nothing when another client holds the only queued job's row lock.
pub(crate) const LEASE_TRIES: u32 = 5;

pub fn engine_lifecycle(engine: &Engine, accounts: u64, names: &Arc<Names>) -> Op {
    let engine = engine.clone();
    let names = names.clone();
    Arc::new(move |client, _| {
        let engine = engine.clone();
        let names = names.clone();
        Box::pin(async move {
            let submit = Submit {
                account: AccountId::parse(&random_account(accounts))?,
                kind: KIND.into(),
                payload: None,
                key: IdempotencyKey::parse(&names.key())?,
            };
            engine.submit(&submit).await?;
            let worker = WorkerId::parse(&format!("w{client}"))?;
            for _ in 0..LEASE_TRIES {
                if let Some(lease) = engine.lease(KIND, &worker, 60).await? {
                    let job = JobId::parse(&lease.job.job_id)?;
                    engine.complete(&job, &lease.lease_token, None).await?;
                    return Ok(());
                }
            }
            bail!("no job to lease")
        })
    })
}

pub fn floor_lifecycle(floor: &FloorPool, accounts: u64, names: &Arc<Names>) -> Op {
    let floor = floor.clone();
    let names = names.clone();
    Arc::new(move |client, _| {
        let floor = floor.clone();
        let names = names.clone();
        Box::pin(async move {
            floor
                .submit(&random_account(accounts), &names.key())
                .await?;
            let worker = format!("w{client}");
            for _ in 0..LEASE_TRIES {
                if let Some((job, account, token)) = floor.lease(&worker).await? {
                    return floor.complete(&job, &account, &token).await;
                }
            }
            bail!("no job to lease")
        })
    })
}

/// The same lifecycle as [`engine_lifecycle`], through the HTTP API over real sockets.
pub fn http_lifecycle(
    base: &str,
    key: &str,
    accounts: u64,
    names: &Arc<Names>,
) -> anyhow::Result<Op> {
    let names = names.clone();
    http_op(base, key, move |http, c| {
        let names = names.clone();
        async move {
            let body = json!({ "account_id": random_account(accounts), "kind": KIND, "idempotency_key": names.key() });
            http.post("/v1/jobs", body, &[201], "submit").await?;
            for _ in 0..LEASE_TRIES {
                let body =
                    json!({ "worker_id": format!("w{c}"), "lease_seconds": 60, "wait_ms": 0 });
                let path = format!("/v1/lanes/{KIND}/lease");
                let r = http.post(&path, body, &[200, 204], "lease").await?;
                if r.status().as_u16() == 204 {
                    continue;
                }
                let lease: serde_json::Value = r.json().await?;
                let job = lease["job"]["job_id"]
                    .as_str()
                    .context("lease without job_id")?;
                let token = lease["lease_token"]
                    .as_str()
                    .context("lease without token")?;
                let body = json!({ "lease_token": token });
                let path = format!("/v1/jobs/{job}/complete");
                http.post(&path, body, &[200], "complete").await?;
                return Ok(());
            }
            bail!("no job to lease")
        }
    })
}

/// What a client of an HTTP workload needs: the keep-alive client, the server's base URL
/// and the key.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    base: String,
    auth: String,
}

impl Http {
    fn new(base: &str, key: &str) -> anyhow::Result<Http> {
        Ok(Http {
            client: http_client()?,
            base: base.to_owned(),
            auth: format!("Bearer {key}"),
        })
    }

    /// POSTs `body` to `path` of the server (see [`post`]).
    pub async fn post(
        &self,
        path: &str,
        body: serde_json::Value,
        ok: &[u16],
        what: &str,
    ) -> anyhow::Result<reqwest::Response> {
        let url = format!("{}{path}", self.base);
        post(&self.client, url, &self.auth, body, ok, what).await
    }
}

/// An operation over HTTP: `run` gets the connection and the client's index on each call.
pub fn http_op<F, Fut>(base: &str, key: &str, run: F) -> anyhow::Result<Op>
where
    F: Fn(Http, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let http = Http::new(base, key)?;
    Ok(Arc::new(
        move |c, _| -> std::pin::Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>> {
            Box::pin(run(http.clone(), c))
        },
    ))
}

/// The keep-alive client of the HTTP workloads.
fn http_client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// POSTs `body`; an answer whose status is not in `ok` fails, naming `what` with the
/// status and body.
async fn post(
    client: &reqwest::Client,
    url: String,
    auth: &str,
    body: serde_json::Value,
    ok: &[u16],
    what: &str,
) -> anyhow::Result<reqwest::Response> {
    let r = client
        .post(url)
        .header("authorization", auth)
        .json(&body)
        .send()
        .await?;
    if !ok.contains(&r.status().as_u16()) {
        bail!(
            "{what}: {} {}",
            r.status(),
            r.text().await.unwrap_or_default()
        );
    }
    Ok(r)
}

/// Most chunks a sweep runs before it stops, whatever is left.
const MAX_SWEEP_CHUNKS: u64 = 100_000;
const SWEEP_CHUNK: i64 = 100;

/// Times the engine's sweeper chunk by chunk until nothing is left to expire.
pub async fn engine_sweep(engine: &Engine) -> anyhow::Result<Sample> {
    let mut s = Sample::default();
    for _ in 0..MAX_SWEEP_CHUNKS {
        let t = Instant::now();
        let report = engine.sweep(SWEEP_CHUNK as u64).await?;
        if report.processed == 0 {
            break;
        }
        s.record(t.elapsed(), report.processed);
    }
    Ok(s)
}

/// The floor sweeper: the same candidate query, then one short transaction per job.
pub async fn floor_sweep(floor: &FloorPool) -> anyhow::Result<Sample> {
    let mut s = Sample::default();
    for _ in 0..MAX_SWEEP_CHUNKS {
        let t = Instant::now();
        let candidates = floor.sweep_candidates(SWEEP_CHUNK).await?;
        let mut n = 0;
        for (job, account) in &candidates {
            if floor.expire(job, account).await? {
                n += 1;
            }
        }
        if n == 0 {
            break;
        }
        s.record(t.elapsed(), n);
    }
    Ok(s)
}

/// `batch` debits (1 s of `linux-small` each) over random accounts, with fresh keys.
fn ingest_batch(accounts: u64, batch: usize, names: &Names) -> (Vec<String>, Vec<String>) {
    (0..batch)
        .map(|_| (random_account(accounts), names.key()))
        .unzip()
}

/// The engine's batch ingest (`Engine::debit_many`): one call per `batch` debits. Every
/// debit must apply (the bench accounts have far more money than a run takes).
pub fn engine_ingest(engine: &Engine, accounts: u64, batch: usize, names: &Arc<Names>) -> Op {
    let engine = engine.clone();
    let names = names.clone();
    Arc::new(move |_, _| {
        let (engine, names) = (engine.clone(), names.clone());
        Box::pin(async move {
            let (ids, keys) = ingest_batch(accounts, batch, &names);
            let usage = Usage::Metered {
                meter: METER.into(),
                seconds: 1,
            };
            let items = ids
                .iter()
                .zip(&keys)
                .map(|(a, k)| {
                    let (a, k) = (AccountId::parse(a)?, IdempotencyKey::parse(k)?);
                    Ok((a, holdfast::DebitRequest::new(&usage, &k, None)))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            for r in engine.debit_many(&items).await? {
                r.context("an ingested debit was refused")?;
            }
            Ok(())
        })
    })
}

/// The same over HTTP: `POST /v1/debits` with `batch` debits.
pub fn http_ingest(
    base: &str,
    key: &str,
    accounts: u64,
    batch: usize,
    names: &Arc<Names>,
) -> anyhow::Result<Op> {
    let client = http_client()?;
    let url = format!("{base}/v1/debits");
    let auth = format!("Bearer {key}");
    let names = names.clone();
    Ok(Arc::new(move |_, _| {
        let (client, url, auth, names) = (client.clone(), url.clone(), auth.clone(), names.clone());
        Box::pin(async move {
            let (ids, keys) = ingest_batch(accounts, batch, &names);
            let debits: Vec<serde_json::Value> = ids
                .iter()
                .zip(&keys)
                .map(|(a, k)| json!({ "account_id": a, "usage": { "meter": METER, "seconds": 1 }, "idempotency_key": k }))
                .collect();
            let body = json!({ "debits": debits });
            let r = post(&client, url, &auth, body, &[200], "ingest").await?;
            let answer: serde_json::Value = r.json().await?;
            let results = answer["results"].as_array().context("no results")?;
            if results.len() != batch || results.iter().any(|r| r["status"] != 201) {
                bail!("ingest: not every debit applied: {answer}");
            }
            Ok(())
        })
    }))
}

/// The set-based floor of an ingest: one transaction per `batch` debits; with
/// `engine_sql` the engine's own ingest statements without the engine instead
/// ([`FloorPool::ingest_engine_sql`], PostgreSQL).
pub fn floor_ingest(
    floor: &FloorPool,
    accounts: u64,
    batch: usize,
    names: &Arc<Names>,
    engine_sql: bool,
) -> Op {
    let floor = floor.clone();
    let names = names.clone();
    Arc::new(move |_, _| {
        let (floor, names) = (floor.clone(), names.clone());
        Box::pin(async move {
            let (ids, keys) = ingest_batch(accounts, batch, &names);
            match engine_sql {
                true => floor.ingest_engine_sql(&ids, &keys).await,
                false => floor.ingest(&ids, &keys).await,
            }
        })
    })
}
