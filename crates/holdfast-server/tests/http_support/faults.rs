//! Shared by the fault tests (crash.rs, crash_disk_full.rs, crash_slow_db.rs,
//! failover.rs): a client that retries an unanswered or 503 request under the same body
//! (so the same idempotency key) and records every answer, the clients' tasks as one
//! [`Load`], a webhook receiver of `job.succeeded`, the books' checks (each acknowledged
//! write in the ledger once), and helpers for PostgreSQL servers the tests run themselves
//! (as the `postgres` OS user when the tests run as root).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::{AssertSqlSafe, Connection, PgConnection, SqliteConnection};

// ---------------------------------------------------------------- the clients

/// Every answer the clients got: when, how long it took, and its status (0: no answer).
#[derive(Default)]
pub struct Answers {
    pub seen: Mutex<Vec<(Instant, Duration, u16)>>,
    /// The error code of each 503 answer, counted.
    pub unavailable: Mutex<BTreeMap<String, usize>>,
}

impl Answers {
    pub fn record(&self, at: Instant, took: Duration, status: u16) {
        self.seen.lock().unwrap().push((at, took, status));
    }

    fn unavailable(&self, body: &Value) {
        let code = body["error"]["code"].as_str().unwrap_or("(no code)");
        *self
            .unavailable
            .lock()
            .unwrap()
            .entry(code.to_owned())
            .or_default() += 1;
    }

    pub fn successes_since(&self, since: Instant) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(at, _, s)| *at >= since && (200..300).contains(s))
            .count()
    }

    /// Waits until the clients have had `n` successes since `since` (bounded by `within`).
    pub async fn wait_successes(&self, since: Instant, n: usize, within: Duration) {
        let deadline = Instant::now() + within;
        while self.successes_since(since) < n {
            assert!(
                Instant::now() < deadline,
                "fewer than {n} successes in {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// (2xx, 503, slowest) among the answers to requests sent at or after `since`.
    pub fn tally_since(&self, since: Instant) -> (usize, usize, Duration) {
        let seen = self.seen.lock().unwrap();
        let mine = seen.iter().filter(|(at, ..)| *at >= since);
        let ok = mine.clone().filter(|a| (200..300).contains(&a.2)).count();
        let unavailable = mine.clone().filter(|a| a.2 == 503).count();
        let slowest = mine.map(|a| a.1).max().unwrap_or_default();
        (ok, unavailable, slowest)
    }

    /// The outage as the clients saw it: from the first failed answer after `since` to
    /// the first success of a request sent after that failure (a request sent before it
    /// may still have committed before the fault); and how many answers failed.
    pub fn outage_after(&self, since: Instant) -> (Duration, usize) {
        let seen = self.seen.lock().unwrap().clone();
        let ok = |status: u16| (200..300).contains(&status);
        let failures: Vec<Instant> = seen
            .iter()
            .filter(|(at, took, status)| *at + *took >= since && !ok(*status))
            .map(|(at, took, _)| *at + *took)
            .collect();
        let Some(&first_failure) = failures.iter().min() else {
            return (Duration::ZERO, 0);
        };
        let recovered = seen
            .iter()
            .filter(|(at, _, status)| *at >= first_failure && ok(*status))
            .map(|(at, took, _)| *at + *took)
            .min()
            .expect("a success after the fault");
        (recovered - first_failure, failures.len())
    }

    /// Answers with a status of 500 or above other than 503 (there must be none).
    pub fn server_errors(&self) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(_, _, s)| *s >= 500 && *s != 503)
            .count()
    }

    /// The slowest answer.
    pub fn slowest(&self) -> Duration {
        let seen = self.seen.lock().unwrap();
        seen.iter().map(|a| a.1).max().unwrap_or_default()
    }
}

/// A request's final answer and how many attempts it took (more than one: retried
/// after no answer or a 503).
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub attempts: u32,
}

/// A client of `serve` that retries an unanswered or 503 request under the same body
/// (so the same idempotency key) until it gets another answer (bounded: 60 s). The base
/// URL can change (a `serve` restarted on another port).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Arc<Mutex<String>>,
    key: String,
    pub answers: Arc<Answers>,
}

impl Client {
    /// A client of `base` with bearer `key`; each attempt may take `timeout`.
    pub fn new(base: &str, key: &str, timeout: Duration) -> Client {
        let http = reqwest::Client::builder().timeout(timeout).build().unwrap();
        Client {
            http,
            base: Arc::new(Mutex::new(base.to_owned())),
            key: key.to_owned(),
            answers: Arc::default(),
        }
    }

    /// Sends later attempts (of every clone) to `base`.
    pub fn set_base(&self, base: &str) {
        *self.base.lock().unwrap() = base.to_owned();
    }

    /// The request until it is answered with something other than 503.
    pub async fn send(&self, method: Method, path: &str, body: &Value) -> Answer {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let at = Instant::now();
            let base = self.base.lock().unwrap().clone();
            let mut request = self
                .http
                .request(method.clone(), format!("{base}{path}"))
                .bearer_auth(&self.key);
            if !body.is_null() {
                request = request.json(body);
            }
            let answer = match request.send().await {
                Ok(res) => Some((res.status().as_u16(), res.json::<Value>().await)),
                Err(_) => None,
            };
            let status = answer.as_ref().map_or(0, |(s, _)| *s);
            self.answers.record(at, at.elapsed(), status);
            match answer {
                Some((503, body)) => self.answers.unavailable(&body.unwrap_or_default()),
                Some((status, body)) => {
                    let body = body.unwrap_or(Value::Null);
                    return Answer {
                        status,
                        body,
                        attempts,
                    };
                }
                None => {}
            }
            assert!(Instant::now() < deadline, "{path}: no answer for 60 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn call(&self, method: Method, path: &str, body: Value) -> (u16, Value) {
        let answer = self.send(method, path, &body).await;
        (answer.status, answer.body)
    }

    /// As [`Client::call`], the answer required to be one of `ok`.
    pub async fn expect(&self, method: Method, path: &str, body: Value, ok: &[u16]) -> Value {
        let (status, answer) = self.call(method, path, body).await;
        assert!(ok.contains(&status), "{path}: {status} {answer:#}");
        answer
    }
}

/// Opens each account on the `free` plan and seeds it with a top-up of 100,000.00 (key
/// `<id>-seed`).
pub async fn seeded_accounts(client: &Client, ids: impl Iterator<Item = String>) {
    for id in ids {
        let path = format!("/v1/accounts/{id}");
        let plan = json!({"plan": "free"});
        client.expect(Method::PUT, &path, plan, &[200, 201]).await;
        let seed = json!({"amount": "100000.00", "idempotency_key": format!("{id}-seed")});
        let path = format!("/v1/accounts/{id}/top-ups");
        client.expect(Method::POST, &path, seed, &[200, 201]).await;
    }
}

/// Submits a `video` job for `account` under `key`, then leases one from the shared lane
/// as worker `account` (maybe another account's job): its id and lease token, or `None`
/// when the lane had no job (204).
pub async fn submit_and_lease(
    client: &Client,
    account: &str,
    key: &str,
    lease_seconds: u64,
) -> Option<(String, Value)> {
    let body = json!({"account_id": account, "kind": "video", "idempotency_key": key});
    client
        .expect(Method::POST, "/v1/jobs", body, &[200, 201])
        .await;
    let lease = json!({"worker_id": account, "lease_seconds": lease_seconds});
    let (status, leased) = client
        .call(Method::POST, "/v1/lanes/video/lease", lease)
        .await;
    if status == 204 {
        return None;
    }
    assert_eq!(status, 200, "lease: {leased:#}");
    let job = leased["job"]["job_id"].as_str().unwrap().to_owned();
    Some((job, json!({"lease_token": leased["lease_token"]})))
}

// ---------------------------------------------------------------- the load

/// The clients' tasks, each running until [`Load::stop`] is set, then [`Load::finish`].
#[derive(Default)]
pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    /// The flag a task watches: set, it ends its round and returns.
    pub fn stop(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    pub fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(tokio::spawn(task));
    }

    /// Stops the tasks where they stand, requests in flight and all (their server was
    /// killed under them); a task that had panicked fails the test here.
    pub async fn abandon(self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.abort();
            if let Err(e) = task.await
                && e.is_panic()
            {
                std::panic::resume_unwind(e.into_panic());
            }
        }
    }

    /// Tells the tasks to stop and waits for them (a task's panic fails the test here).
    pub async fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.unwrap();
        }
    }
}

// ---------------------------------------------------------------- the webhooks

/// Receives webhook deliveries; records the job of each delivery that names one.
pub async fn job_receiver() -> (String, Arc<Mutex<BTreeSet<String>>>) {
    let seen: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let record = seen.clone();
    let app = Router::new().route(
        "/hook",
        post(move |body: axum::Json<Value>| {
            let record = record.clone();
            async move {
                if let Some(job) = body["job_id"].as_str() {
                    record.lock().unwrap().insert(job.to_owned());
                }
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// Waits until every job of `jobs` is in `seen` (bounded by `within`); how long it took.
pub async fn wait_delivered(
    jobs: &BTreeSet<String>,
    seen: &Mutex<BTreeSet<String>>,
    within: Duration,
) -> Duration {
    let started = Instant::now();
    loop {
        let missing: Vec<String> = jobs.difference(&seen.lock().unwrap()).cloned().collect();
        if missing.is_empty() {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "webhooks never came for {missing:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------- the databases

/// `(text, count)` rows of `sql` on the database at `url` (SQLite or PostgreSQL), as a map.
pub async fn counts(url: &str, sql: &str) -> BTreeMap<String, i64> {
    let sql_safe = || AssertSqlSafe(sql.to_owned());
    let rows: Result<Vec<(String, i64)>, sqlx::Error> = if url.starts_with("sqlite:") {
        let mut conn = SqliteConnection::connect(url).await.expect("connect");
        sqlx::query_as(sql_safe()).fetch_all(&mut conn).await
    } else {
        let mut conn = connect_within(url, Duration::from_secs(30)).await;
        sqlx::query_as(sql_safe()).fetch_all(&mut conn).await
    };
    rows.unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .collect()
}

/// `(ref, count)` of the debits in the ledger.
pub const DEBITS_BY_REF: &str =
    "SELECT ref, count(*) FROM ledger WHERE kind = 'debit' GROUP BY ref";
/// `(ref, count)` of the captures in the ledger (a capture's ref is its job).
pub const CAPTURES_BY_REF: &str =
    "SELECT ref, count(*) FROM ledger WHERE kind = 'capture' GROUP BY ref";
/// `(job_id, count)` of the events that end a job.
pub const ENDS_BY_JOB: &str = "SELECT job_id, count(*) FROM events WHERE type IN \
     ('job.succeeded', 'job.failed', 'job.canceled', 'job.expired') GROUP BY job_id";

/// The `(key, count)` rows of `sql` on `url`: no key twice (`what`, e.g. "a debit
/// applied", twice), and the keys exactly `acked`.
pub async fn assert_each_once(url: &str, sql: &str, acked: &BTreeSet<String>, what: &str) {
    let rows = counts(url, sql).await;
    assert!(rows.values().all(|&n| n == 1), "{what} twice: {rows:?}");
    let keys: BTreeSet<String> = rows.into_keys().collect();
    assert_eq!(&keys, acked, "{what}: the acknowledged ones and no other");
}

/// No job has two ends (succeeded, failed, canceled, expired).
pub async fn assert_no_job_ended_twice(url: &str) {
    let ends = counts(url, ENDS_BY_JOB).await;
    assert!(
        ends.values().all(|&n| n == 1),
        "a job ended twice: {ends:?}"
    );
}

/// What clients that debit and run jobs were told had happened (crash.rs keeps a larger
/// record of its own: top-ups, retries, jobs left behind).
#[derive(Default)]
pub struct Acknowledged {
    pub debits: Mutex<BTreeSet<String>>,
    pub completed: Mutex<BTreeSet<String>>,
}

impl Acknowledged {
    /// Every acknowledged debit and capture is in the ledger at `url` exactly once (and
    /// nothing unacknowledged is); no job ended twice. Prints the counts after `label`.
    pub async fn assert_books(&self, url: &str, label: &str) {
        let debits = self.debits.lock().unwrap().clone();
        let completed = self.completed.lock().unwrap().clone();
        assert_each_once(url, DEBITS_BY_REF, &debits, "a debit applied").await;
        assert_each_once(url, CAPTURES_BY_REF, &completed, "a job captured").await;
        assert_no_job_ended_twice(url).await;
        eprintln!(
            "{label}: {} debits and {} captures acknowledged, each in the ledger once",
            debits.len(),
            completed.len()
        );
    }
}

/// A connection to `url`, retried until it succeeds and answers (bounded).
pub async fn connect_within(url: &str, within: Duration) -> PgConnection {
    let deadline = Instant::now() + within;
    loop {
        let why = match PgConnection::connect(url).await {
            Ok(mut c) => match sqlx::query("SELECT 1").execute(&mut c).await {
                Ok(_) => return c,
                Err(e) => e,
            },
            Err(e) => e,
        };
        assert!(
            Instant::now() < deadline,
            "{url} not answering within {within:?}: {why}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The `bin` directory of the newest PostgreSQL under /usr/lib/postgresql, if any.
pub fn postgres_bindir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    Some(versions.pop()?.1)
}

/// `kill -SIGNAL -- TARGET` (a pid, or `-pgid` for a process group).
pub fn signal(signal: &str, target: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), "--", target])
        .stderr(Stdio::null())
        .status();
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

pub fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// A temporary directory for a PostgreSQL cluster: in memory where there is a tmpfs (the
/// clusters fsync a lot, and deleting them from a busy disk takes seconds; a process
/// killed loses nothing either way), owned by `postgres` when the tests run as root.
/// Also whether PostgreSQL must run as `postgres` ([`as_postgres`]).
pub fn postgres_temp_dir() -> (tempfile::TempDir, bool) {
    let shm = Path::new("/dev/shm");
    let dir = match shm.is_dir() {
        true => tempfile::tempdir_in(shm).or_else(|_| tempfile::tempdir()),
        false => tempfile::tempdir(),
    }
    .expect("temp dir");
    let root = is_root();
    if root {
        let owned = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(owned.success(), "chown the temp dir to postgres");
    }
    (dir, root)
}

/// `program` as a command, run as the `postgres` user (through `setpriv`) when
/// `as_postgres`.
pub fn as_postgres(program: &Path, as_postgres: bool) -> Command {
    if !as_postgres {
        return Command::new(program);
    }
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=postgres",
        "--regid=postgres",
        "--init-groups",
        "--",
    ]);
    c.arg(program);
    c
}

/// The pid of the postmaster of `pgdata`, if its pid file names a live postgres process
/// (a stale file's pid may belong to another process by now).
pub fn postmaster(pgdata: &str) -> Option<String> {
    let pid_file = Path::new(pgdata).join("postmaster.pid");
    let text = std::fs::read_to_string(pid_file).ok()?;
    let pid = text.lines().next()?.trim().to_owned();
    pid.parse::<u32>().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    String::from_utf8_lossy(&cmdline)
        .contains("postgres")
        .then_some(pid)
}
