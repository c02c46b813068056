//! The `console` workload (issue #14): the operator console's pages on a big database.
//! Loads it ([`crate::bigdb`], not measured), serves the console in-process on
//! 127.0.0.1:0, signs in with the admin key (the login form, its cookie), then per page a
//! few unmeasured requests and `--page-requests` timed ones, one after another. Any answer
//! but 200 fails the run.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use crate::bigdb::{self, BIG, LANE, Loaded, OTHERS_PREFIX};
use crate::floor::FloorPool;
use crate::target::Target;
use crate::{Args, Outcome, Workload};

/// What the issue allows a page on the big database.
pub const BUDGET_MS: f64 = 300.0;

/// One page's timed requests.
#[derive(Debug, Clone, Serialize)]
pub struct PageTiming {
    pub page: String,
    pub path: String,
    pub requests: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
    /// Size of the page's HTML.
    pub bytes: usize,
}

impl PageTiming {
    /// Whether 95% of the timed requests took under [`BUDGET_MS`].
    pub fn within_budget(&self) -> bool {
        self.p95_ms < BUDGET_MS
    }
}

/// The pages to time, each `(name, path)`.
fn pages(loaded: &Loaded) -> Vec<(&'static str, String)> {
    let middle = loaded.middle_entry;
    vec![
        ("overview", "/console".to_owned()),
        ("account", format!("/console/accounts/{BIG}")),
        (
            "account, older page",
            format!("/console/accounts/{BIG}?before={middle}"),
        ),
        (
            "jobs, lane queued",
            format!("/console/jobs?lane={LANE}&status=queued"),
        ),
        ("jobs, lane", format!("/console/jobs?lane={LANE}")),
        ("jobs, all lanes", "/console/jobs".to_owned()),
        (
            "job (queued)",
            format!("/console/jobs/{}", loaded.queued_job),
        ),
        (
            "accounts, prefix",
            format!("/console/accounts?q={OTHERS_PREFIX}"),
        ),
        ("webhooks", "/console/webhooks".to_owned()),
    ]
}

/// The API reads over the same data, each `(name, path)` (asked with the admin key):
/// statements of the big account and usage reports across accounts (issue #42), the big
/// account's balance now, a day ago and ten days ago (near its first entries; issue #41).
fn api_reads() -> Vec<(&'static str, String)> {
    let days_ago = |days: i64| {
        let micros = crate::floor::now_micros() - days * 86_400_000_000;
        holdfast_server::http::wire::rfc3339(micros)
    };
    let day_ago = days_ago(1);
    vec![
        ("balance of big, now", format!("/v1/accounts/{BIG}/balance")),
        (
            "balance of big, a day ago",
            format!("/v1/accounts/{BIG}/balance?at={day_ago}"),
        ),
        (
            "balance of big, 10 days ago",
            format!("/v1/accounts/{BIG}/balance?at={}", days_ago(10)),
        ),
        ("statement, all", format!("/v1/accounts/{BIG}/statement")),
        (
            "statement, a day",
            format!("/v1/accounts/{BIG}/statement?from={day_ago}"),
        ),
        ("usage by account, all", "/v1/usage".to_owned()),
        ("usage by account, day", format!("/v1/usage?from={day_ago}")),
        ("usage by kind, all", "/v1/usage?group_by=kind".to_owned()),
        (
            "usage by kind, a day",
            format!("/v1/usage?group_by=kind&from={day_ago}"),
        ),
        ("usage by meter, all", "/v1/usage?group_by=meter".to_owned()),
        (
            "usage by meter, a day",
            format!("/v1/usage?group_by=meter&from={day_ago}"),
        ),
        (
            "usage of big, a day",
            format!("/v1/usage?account_id={BIG}&from={day_ago}"),
        ),
    ]
}

pub async fn run(args: &Args, target: &Target) -> anyhow::Result<Outcome> {
    let sync = holdfast::SqliteSync::parse(&args.sqlite_synchronous).unwrap_or_default();
    let engine = crate::open_engine(&target.url, 8, sync).await?;
    let floor = FloorPool::connect(&target.url, 4, sync).await?;
    let loading = Instant::now();
    let loaded = bigdb::load(&floor, args.ledger_entries, args.queued_jobs).await?;
    engine.stamp_events().await?;
    floor.analyze().await?;
    let load_secs = loading.elapsed().as_secs_f64();
    floor.close().await;
    let (server, base, key) = crate::start_server(&engine).await?;
    let timed = time_pages(args, &base, &key, &loaded).await;
    server.shutdown().await?;
    let timings = timed?;
    let auditing = Instant::now();
    let audit = engine.audit().await?;
    let audit_secs = auditing.elapsed().as_secs_f64();
    engine.close().await?;
    let verdict = if audit.is_empty() {
        "clean".to_owned()
    } else {
        format!("{} VIOLATIONS, first: {:?}", audit.len(), audit[0])
    };
    Ok(Outcome {
        workload: Workload::Console,
        backend: target.backend,
        sides: Vec::new(),
        ratio: None,
        cpu_ratio: None,
        note: Some(format!(
            "{} ledger entries of {BIG}, {} queued jobs in lane {LANE}; {} rows loaded in \
             {load_secs:.1} s; {} timed requests per page after {} unmeasured, one at a time; \
             audit after: {verdict} ({audit_secs:.1} s)",
            loaded.ledger_entries,
            loaded.queued_jobs,
            loaded.rows,
            args.page_requests,
            args.page_warmup
        )),
        ratios: std::collections::BTreeMap::new(),
        rss_mb: None,
        pages: timings,
    })
}

/// Signs in, then times each page.
async fn time_pages(
    args: &Args,
    base: &str,
    key: &str,
    loaded: &Loaded,
) -> anyhow::Result<Vec<PageTiming>> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()?;
    let cookie = sign_in(&client, base, key).await?;
    let bearer = format!("Bearer {key}");
    let mut out = Vec::new();
    let console = pages(loaded)
        .into_iter()
        .map(|(name, path)| (name, path, &cookie));
    let api = api_reads()
        .into_iter()
        .map(|(name, path)| (name, path, &bearer));
    for (name, path, credential) in console.chain(api) {
        let header = if credential.starts_with("Bearer ") {
            reqwest::header::AUTHORIZATION
        } else {
            reqwest::header::COOKIE
        };
        let url = format!("{base}{path}");
        let mut bytes = 0;
        for _ in 0..args.page_warmup {
            bytes = get(&client, &url, &header, credential).await?;
        }
        let mut took_ms = Vec::with_capacity(args.page_requests);
        for _ in 0..args.page_requests {
            let t = Instant::now();
            bytes = get(&client, &url, &header, credential).await?;
            took_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        took_ms.sort_by(f64::total_cmp);
        out.push(PageTiming {
            page: name.to_owned(),
            path,
            requests: took_ms.len(),
            p50_ms: percentile(&took_ms, 0.50),
            p95_ms: percentile(&took_ms, 0.95),
            max_ms: took_ms.last().copied().unwrap_or(0.0),
            bytes,
        });
    }
    Ok(out)
}

/// The value at fraction `p` of `sorted` (nearest rank).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Posts the login form with `key`; the session cookie (`name=value`) it sets.
async fn sign_in(client: &reqwest::Client, base: &str, key: &str) -> anyhow::Result<String> {
    let r = client
        .post(format!("{base}/console/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("key={key}&next=%2Fconsole"))
        .send()
        .await
        .context("console sign-in")?;
    if !r.status().is_redirection() {
        bail!(
            "console sign-in: {} {}",
            r.status(),
            r.text().await.unwrap_or_default()
        );
    }
    let set = r
        .headers()
        .get(reqwest::header::SET_COOKIE)
        .context("console sign-in set no cookie")?
        .to_str()?;
    Ok(set.split(';').next().unwrap_or_default().to_owned())
}

/// GETs a page with its credential (the session cookie, or an API key's Authorization);
/// anything but 200 fails. The size of its body.
async fn get(
    client: &reqwest::Client,
    url: &str,
    header: &reqwest::header::HeaderName,
    credential: &str,
) -> anyhow::Result<usize> {
    let r = client
        .get(url)
        .header(header, credential)
        .send()
        .await
        .with_context(|| format!("GET {url}"))?;
    let status = r.status();
    let body = r.text().await.with_context(|| format!("GET {url}: body"))?;
    if status != reqwest::StatusCode::OK {
        let start: String = body.chars().take(300).collect();
        bail!("GET {url}: {status}, not 200: {start}");
    }
    Ok(body.len())
}

/// The table of the pages' timings.
pub fn print_pages(pages: &[PageTiming]) {
    println!(
        "{:<22} {:>8} {:>9} {:>9} {:>9} {:>9}  {:<7}  path",
        "page", "requests", "p50_ms", "p95_ms", "max_ms", "kB", "p95<300"
    );
    for p in pages {
        println!(
            "{:<22} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1}  {:<7}  {}",
            p.page,
            p.requests,
            p.p50_ms,
            p.p95_ms,
            p.max_ms,
            p.bytes as f64 / 1024.0,
            if p.within_budget() { "yes" } else { "NO" },
            p.path
        );
    }
}
