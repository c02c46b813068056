//! A PostgreSQL that becomes very slow, then stops answering, under `holdfast serve`: a
//! TCP proxy in this test sits between `serve` and PostgreSQL and, switched at run time,
//! delays every packet or holds them all back. Five clients debit and run jobs (submit →
//! lease → complete with capture) through it, retrying unanswered and 503 requests under
//! the same keys. While the database is slow or stalled every answer is either correct or
//! 503 `database_unavailable` with `Retry-After`, within the request time limit
//! (`--request-timeout-seconds`; never a 500, never a hang); when the delay is removed the
//! service resumes by itself. Then the ledger holds each acknowledged debit and capture
//! exactly once (a write whose answer was lost to the time limit was retried under its
//! key), no job ended twice, and the audit (held against open holds among its checks) is
//! clean.
//!
//! PostgreSQL only. SQLite has no connection to slow down: its slow cases are another
//! process holding the file's write lock, which `http_limits.rs` covers (503 within the
//! acquire timeout, then recovery), and slow storage, which needs a block device with a
//! delay target (dm-delay) rather than a proxy (docs/RELIABILITY.md).
//!
//! `HOLDFAST_SLOW_DB_CYCLES=N` repeats the slow-then-stalled cycle N times (default 1).
//! Rerun: `cargo test -p holdfast-server --test crash_slow_db -- --nocapture`.

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use holdfast::testing::{Backend, TestDb, card_file, card_text_with};
use http_support::faults::{Acknowledged, Answers, Load};
use http_support::{Serving, listen_address};
use reqwest::Method;
use reqwest::header::RETRY_AFTER;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

const ADMIN: &str = "hf_slow_db_admin_key_0123456789abcdef";
/// `serve --request-timeout-seconds`.
const REQUEST_LIMIT: Duration = Duration::from_secs(2);
/// `serve --db-acquire-timeout-ms`: long enough for the probe's delay to pass the
/// pool's check of a connection (one round trip) and meet the request limit instead.
const ACQUIRE_MS: u64 = 1500;
/// The probe's delay a packet: a round trip (1 s) within [`ACQUIRE_MS`], a lease's
/// transaction (several round trips) well past [`REQUEST_LIMIT`].
const PROBE_PACKET: Duration = Duration::from_millis(500);
/// How long the clients may take for the successes awaited (at the start, and after the
/// database is back to normal).
const SUCCESSES_WITHIN: Duration = Duration::from_secs(30);
const DEBIT_ACCOUNTS: usize = 3;
const JOB_ACCOUNTS: usize = 2;

// ---------------------------------------------------------------- the proxy

/// What the proxy does to each packet now.
#[derive(Debug, Clone, Copy, Default)]
struct Mode {
    delay: Duration,
    stalled: bool,
}

/// A TCP proxy to PostgreSQL on 127.0.0.1:0 whose [`Mode`] is switched at run time.
struct Proxy {
    port: u16,
    mode: watch::Sender<Mode>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (mode, watching) = watch::channel(Mode::default());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pump(client_read, server_write, watching.clone()));
                tokio::spawn(pump(server_read, client_write, watching.clone()));
            }
        });
        Proxy { port, mode }
    }

    fn set(&self, delay: Duration, stalled: bool) {
        self.mode.send_replace(Mode { delay, stalled });
    }
}

/// Copies one direction, each read held while the proxy is stalled, then delayed.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut mode: watch::Receiver<Mode>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if mode.wait_for(|m| !m.stalled).await.is_err() {
            break;
        }
        let delay = mode.borrow().delay;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

// ---------------------------------------------------------------- the clients

/// A client that retries a 503 under the same body (so the same idempotency key) until
/// it gets another answer. Any other failure, a 500 or no answer at all, fails the test.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    base: String,
    answers: Arc<Answers>,
    /// Keyed writes answered 503 and then, retried, 200: the write had committed and
    /// its answer was lost to the time limit; the retry replayed it.
    replayed: Arc<AtomicUsize>,
}

impl Client {
    async fn once(&self, method: &Method, path: &str, body: &Value) -> (u16, Value) {
        let at = Instant::now();
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(ADMIN);
        if !body.is_null() {
            request = request.json(body);
        }
        let res = request.send().await;
        let took = at.elapsed();
        let res = res.unwrap_or_else(|e| panic!("{path}: no answer after {took:?}: {e}"));
        let status = res.status().as_u16();
        let retry_after = res.headers().get(RETRY_AFTER).cloned();
        let answer: Value = res.json().await.unwrap_or(Value::Null);
        self.answers.record(at, took, status);
        if status == 503 {
            assert_eq!(answer["error"]["code"], "database_unavailable", "{answer}");
            assert!(retry_after.is_some(), "503 without Retry-After");
        }
        (status, answer)
    }

    async fn call(&self, method: Method, path: &str, body: Value, ok: &[u16]) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        let keyed = path.ends_with("/debits") || path == "/v1/jobs";
        let mut retried = false;
        loop {
            let (status, answer) = self.once(&method, path, &body).await;
            if status != 503 {
                assert!(ok.contains(&status), "{path}: {status} {answer:#}");
                if keyed && retried && status == 200 {
                    self.replayed.fetch_add(1, Ordering::Relaxed);
                }
                return answer;
            }
            assert!(Instant::now() < deadline, "{path}: 503 for 60 s");
            retried = true;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn debits(client: Client, account: String, stop: Arc<AtomicBool>, acked: Arc<Acknowledged>) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let key = format!("{account}-debit-{n}");
        let body = json!({"amount": "0.01", "idempotency_key": key, "job_ref": key});
        let path = format!("/v1/accounts/{account}/debits");
        client.call(Method::POST, &path, body, &[200, 201]).await;
        acked.debits.lock().unwrap().insert(key);
    }
}

/// Submit, lease (from the shared lane: maybe another account's job), complete with the
/// whole hold captured. A lease whose answer was lost leaves its job leased to nobody
/// until its lease runs out; the books only count what was acknowledged.
async fn jobs(client: Client, account: String, stop: Arc<AtomicBool>, acked: Arc<Acknowledged>) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let key = format!("{account}-job-{n}");
        let body = json!({"account_id": account, "kind": "video", "idempotency_key": key});
        client
            .call(Method::POST, "/v1/jobs", body, &[200, 201])
            .await;
        let lease = json!({"worker_id": account, "lease_seconds": 300});
        let leased = client
            .call(Method::POST, "/v1/lanes/video/lease", lease, &[200, 204])
            .await;
        if leased.is_null() {
            continue;
        }
        let job = leased["job"]["job_id"].as_str().unwrap().to_owned();
        let token = json!({"lease_token": leased["lease_token"]});
        let path = format!("/v1/jobs/{job}/complete");
        let done = client.call(Method::POST, &path, token, &[200]).await;
        assert_eq!(done["status"], "succeeded", "{done:#}");
        acked.completed.lock().unwrap().insert(job);
    }
}

/// The clients' tasks, running until [`Load::finish`].
fn start_load(client: &Client, acked: &Arc<Acknowledged>) -> Load {
    let mut load = Load::default();
    for i in 0..DEBIT_ACCOUNTS {
        let (c, s, a) = (client.clone(), load.stop(), acked.clone());
        load.spawn(debits(c, format!("debits{i}"), s, a));
    }
    for i in 0..JOB_ACCOUNTS {
        let (c, s, a) = (client.clone(), load.stop(), acked.clone());
        load.spawn(jobs(c, format!("jobs{i}"), s, a));
    }
    load
}

// ---------------------------------------------------------------- the checks

// ---------------------------------------------------------------- the test

/// `serve` through `proxy`, killed on drop if still running (a failed assertion).
struct Served(Option<Serving>);

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(serving) = self.0.take() {
            serving.kill();
        }
    }
}

fn serve(url: &str, card: &std::path::Path) -> (Served, String) {
    let limit = REQUEST_LIMIT.as_secs().to_string();
    let acquire = ACQUIRE_MS.to_string();
    let args = [
        "--rate-card",
        card.to_str().unwrap(),
        "--request-timeout-seconds",
        &limit,
        "--db-acquire-timeout-ms",
        &acquire,
    ];
    let serving = Serving::spawn(url, &args, Some(ADMIN));
    let base = format!("http://{}", listen_address(&serving.until("listening on")));
    (Served(Some(serving)), base)
}

async fn accounts(client: &Client) {
    let ids = (0..DEBIT_ACCOUNTS)
        .map(|i| format!("debits{i}"))
        .chain((0..JOB_ACCOUNTS).map(|i| format!("jobs{i}")));
    for id in ids {
        let path = format!("/v1/accounts/{id}");
        client
            .call(Method::PUT, &path, json!({"plan": "free"}), &[201])
            .await;
        let top_up = json!({"amount": "100000.00", "idempotency_key": format!("{id}-top-up")});
        let path = format!("/v1/accounts/{id}/top-ups");
        client.call(Method::POST, &path, top_up, &[201]).await;
    }
}

/// Phases of the run: (name, when it began); each ends where the next begins.
type Phases = Vec<(String, Instant)>;

/// One cycle: slow (40 ms a packet each way, then 150 ms) for 3 s each, stalled for
/// twice the request limit, then normal until the clients have 30 more successes.
async fn cycle(proxy: &Proxy, answers: &Answers, phases: &mut Phases) {
    for delay_ms in [40, 150] {
        phases.push((format!("slow, {delay_ms} ms a packet"), Instant::now()));
        proxy.set(Duration::from_millis(delay_ms), false);
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    phases.push(("stalled".into(), Instant::now()));
    proxy.set(Duration::ZERO, true);
    tokio::time::sleep(2 * REQUEST_LIMIT).await;
    let back = Instant::now();
    phases.push(("normal again".into(), back));
    proxy.set(Duration::ZERO, false);
    answers.wait_successes(back, 30, SUCCESSES_WITHIN).await;
}

/// With the load stopped and the database [`PROBE_PACKET`] away each way, a debit and a
/// lease that asked not to wait: each answered 503 at the time limit (a lease used to get
/// the 30 s a lease may wait for a job on top, and answered when its transaction ended).
/// The debit is retried under its key afterwards: applied once, whether or not the first
/// try had committed before its answer was given up.
async fn probe(proxy: &Proxy, client: &Client, acked: &Acknowledged) -> String {
    proxy.set(PROBE_PACKET, false);
    let key = "probe-debit".to_owned();
    let debit = json!({"amount": "0.01", "idempotency_key": key, "job_ref": key});
    let lease = json!({"worker_id": "probe", "lease_seconds": 300, "wait_ms": 0});
    let ((debit_status, _), (lease_status, _)) = tokio::join!(
        client.once(&Method::POST, "/v1/accounts/debits0/debits", &debit),
        client.once(&Method::POST, "/v1/lanes/video/lease", &lease),
    );
    assert_eq!(
        (debit_status, lease_status),
        (503, 503),
        "{PROBE_PACKET:?} a packet"
    );
    proxy.set(Duration::ZERO, false);
    let path = "/v1/accounts/debits0/debits";
    let status = loop {
        match client.once(&Method::POST, path, &debit).await {
            (503, _) => tokio::time::sleep(Duration::from_millis(100)).await,
            (status, answer) => break (status, answer),
        }
    };
    assert!([200, 201].contains(&status.0), "{status:?}");
    let status = status.0;
    acked.debits.lock().unwrap().insert(key);
    format!("the probe's debit, retried: {status}")
}

/// Each phase's answers (by when the request was sent): 2xx, 503 and the slowest.
fn report(answers: &Answers, phases: &Phases) {
    let seen = answers.seen.lock().unwrap();
    for (i, (name, began)) in phases.iter().enumerate() {
        let ended = phases.get(i + 1).map(|p| p.1);
        let mine: Vec<_> = seen
            .iter()
            .filter(|(at, ..)| at >= began && ended.is_none_or(|end| *at < end))
            .collect();
        let ok = mine.iter().filter(|a| (200..300).contains(&a.2)).count();
        let unavailable = mine.iter().filter(|a| a.2 == 503).count();
        let slowest = mine.iter().map(|a| a.1).max().unwrap_or_default();
        eprintln!("slow db: {name}: {ok} 2xx, {unavailable} 503, slowest {slowest:.2?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_then_stalled_database_is_503_within_the_limit_and_nothing_doubles() {
    let started = Instant::now();
    let Some(db) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    let upstream = db.url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let proxy = Proxy::start(upstream.to_owned()).await;
    let through = db
        .url
        .replace(upstream, &format!("127.0.0.1:{}", proxy.port));
    let card = card_file(&card_text_with(&[(
        "max_concurrent_jobs = 1\npriority = false",
        "max_concurrent_jobs = 100\npriority = false",
    )]));
    let (mut served, base) = serve(&through, card.path());
    let http = reqwest::Client::builder()
        .timeout(REQUEST_LIMIT + Duration::from_secs(30 + 5))
        .build()
        .unwrap();
    let answers = Arc::new(Answers::default());
    let client = Client {
        http,
        base,
        answers: answers.clone(),
        replayed: Arc::default(),
    };
    accounts(&client).await;
    let acked = Arc::new(Acknowledged::default());
    let load = start_load(&client, &acked);
    let loaded = Instant::now();
    answers.wait_successes(started, 30, SUCCESSES_WITHIN).await;
    let cycles: usize = std::env::var("HOLDFAST_SLOW_DB_CYCLES")
        .map_or(1, |v| v.parse().expect("HOLDFAST_SLOW_DB_CYCLES: a number"));
    let mut phases = vec![("normal".to_owned(), loaded)];
    for _ in 0..cycles {
        cycle(&proxy, &answers, &mut phases).await;
    }
    load.finish().await;
    phases.push(("probe".into(), Instant::now()));
    let probed = probe(&proxy, &client, &acked).await;
    report(&answers, &phases);
    // Straight from PostgreSQL, not through the proxy.
    acked.assert_books(&db.url, "slow db").await;
    let audit = client
        .call(Method::GET, "/v1/admin/audit", Value::Null, &[200])
        .await;
    assert_eq!(audit["ok"], json!(true), "audit: {audit:#}");
    let (ok, unavailable, slowest) = answers.tally_since(loaded);
    let (status, lines) = served.0.take().unwrap().terminate();
    assert!(status.success(), "serve exits cleanly");
    let bad: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("panicked") || l.contains("internal error"))
        .collect();
    assert!(bad.is_empty(), "serve logged: {bad:#?}");
    assert!(
        slowest < REQUEST_LIMIT + Duration::from_secs(2),
        "an answer took {slowest:?}, past the request time limit"
    );
    eprintln!(
        "slow db: {cycles} cycle(s): {ok} answers 2xx, {unavailable} 503, slowest \
         {slowest:.2?} (limit {REQUEST_LIMIT:?}); {} writes answered 503 had committed \
         (their retry replayed them); {probed}; total {:.1?}",
        client.replayed.load(Ordering::Relaxed),
        started.elapsed()
    );
}
