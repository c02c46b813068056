//! A disk that fills under `holdfast serve` on SQLite: the database on a small tmpfs this
//! test mounts, four clients writing (top-ups, debits, job submits, leases, completes) until
//! SQLite reports the disk full. Every write then is answered 503 `database_unavailable`
//! with `Retry-After` and a message saying the disk is full — never a 500, never a panic —
//! while reads still answer; `PRAGMA integrity_check` is ok and the audit clean. Then the
//! tmpfs is given more space (`mount -o remount,size=…`) and, without a restart, each
//! client's refused request, retried under the same key, applies (201, not a replay).
//! The disk fills twice: first while the WAL grows (the schema and the first writes are
//! all in it), then, after a checkpoint has moved them to the main file and the WAL is
//! being reused from its start, with little room left, where the next checkpoint cannot
//! grow the main file and the WAL must grow again. At the end every acknowledged write is
//! in the database exactly once, no job is charged or ended twice and the audit is clean.
//!
//! SQLite only: PostgreSQL's full disk would need a cluster of its own on a small
//! filesystem, and PostgreSQL stops (PANIC) when it cannot write its WAL, which is the
//! restart that the PostgreSQL crash tests cover (docs/RELIABILITY.md says more).
//!
//! Needs root (to mount a tmpfs): skipped loudly without it, failed under `CI=true`.
//! Rerun: `cargo test -p holdfast-server --test crash_disk_full -- --nocapture`.

mod http_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use holdfast::testing::{card_file, card_text_with};
use http_support::faults::{
    Answers, CAPTURES_BY_REF, DEBITS_BY_REF, assert_each_once, assert_no_job_ended_twice, counts,
};
use http_support::{Serving, listen_address};
use reqwest::Method;
use reqwest::header::RETRY_AFTER;
use serde_json::{Value, json};
use sqlx::{Connection, SqliteConnection};
use tokio::sync::watch;

const ADMIN: &str = "hf_disk_full_admin_key_0123456789abcdef";
/// The tmpfs before it fills: the schema (about 400 KiB of WAL) and some 40 writes.
const SMALL_KIB: u64 = 2048;
/// The tmpfs once space is given back.
const LARGE_KIB: u64 = 65536;
const CLIENTS: usize = 4;
/// Writes acknowledged after space is back before the disk is made to fill again:
/// enough (about 36 KiB of WAL each) to pass SQLite's automatic checkpoint (1000 pages).
const WRITES_BETWEEN: usize = 150;
/// The second fill leaves this much room: the WAL, reused from its start after the
/// checkpoint, takes the writes until the next checkpoint cannot grow the main file.
const MARGIN_KIB: u64 = 64;
/// `serve --request-timeout-seconds`.
const REQUEST_LIMIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------- the small disk

/// A tmpfs of its own under a temporary directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

impl Tmpfs {
    /// Mounts a tmpfs of `size_kib`, or `None` (loudly) where this process may not mount.
    fn mount(size_kib: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_kib}k"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("run mount");
        if out.status.success() {
            return Some(Tmpfs { dir });
        }
        let why = String::from_utf8_lossy(&out.stderr);
        assert!(!under_ci(), "mounting a tmpfs is required under CI: {why}");
        eprintln!(
            "\n*** cannot mount a tmpfs (root needed): {why}\n*** SKIPPING the full-disk test\n"
        );
        None
    }

    fn resize(&self, size_kib: u64) {
        let out = self.remount(size_kib);
        assert!(out.status.success(), "remount: {out:?}");
    }

    fn remount(&self, size_kib: u64) -> std::process::Output {
        Command::new("mount")
            .args(["-o", &format!("remount,size={size_kib}k")])
            .arg(self.dir.path())
            .output()
            .expect("run mount")
    }

    /// Shrinks to what is in use plus `margin_kib` (tried again if the clients' writes
    /// grew the use past that between reading it and remounting).
    fn shrink_to_used_plus(&self, margin_kib: u64) {
        for _ in 0..10 {
            if self
                .remount(used_kib(self.dir.path()) + margin_kib)
                .status
                .success()
            {
                return;
            }
        }
        panic!("could not shrink the tmpfs to its use plus {margin_kib} KiB");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a process still holding a file (a failed test's) does not keep it.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// `serve`, killed on drop if still running (a failed assertion).
struct Served(Option<Serving>);

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(serving) = self.0.take() {
            serving.kill();
        }
    }
}

/// The size in bytes of each of the database's files (`-wal`, `-shm` included).
fn file_sizes(db: &Path) -> String {
    ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let name = format!("{}{suffix}", db.display());
            let len = std::fs::metadata(&name).map_or(0, |m| m.len());
            format!(
                "{}{suffix} {} KiB",
                db.file_name().unwrap().display(),
                len / 1024
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------- the clients

/// What the clients were told, and who is waiting for space.
#[derive(Default)]
struct Books {
    /// Idempotency keys of writes answered 2xx (top-ups, debits, submits).
    acked: Mutex<BTreeSet<String>>,
    /// Jobs whose complete was answered 200.
    completed: Mutex<BTreeSet<String>>,
    /// Clients whose last request was refused for the full disk.
    waiting: AtomicUsize,
    /// Requests refused for the full disk.
    refused: AtomicUsize,
}

#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    base: String,
    answers: Arc<Answers>,
    books: Arc<Books>,
    /// How many times space was given back.
    space: watch::Receiver<usize>,
    /// Set when the clients should end their rounds.
    stop: Arc<AtomicBool>,
}

impl Client {
    async fn send(&self, method: &Method, path: &str, body: &Value) -> (u16, Value, bool) {
        let started = Instant::now();
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(ADMIN);
        if !body.is_null() {
            request = request.json(body);
        }
        let res = request.send().await.expect("an answer");
        let status = res.status().as_u16();
        let retry_after = res.headers().get(RETRY_AFTER).cloned();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        self.answers.record(started, started.elapsed(), status);
        let full = status == 503;
        if full {
            assert_eq!(body["error"]["code"], "database_unavailable", "{body}");
            let message = body["error"]["message"].as_str().unwrap_or("");
            assert!(message.contains("disk is full"), "{body}");
            assert_eq!(retry_after.as_ref().map(|v| v.to_str().unwrap()), Some("1"));
        }
        (status, body, full)
    }

    /// Sends the request; after the full disk's 503, sends it again every 100 ms (each
    /// answer the same 503 while the disk is full) until space is back. The answer must be
    /// one of `ok`: for a keyed write 201 only, so the retry that got through applied it
    /// (a refused write left nothing behind), not a replay.
    async fn call(&self, method: Method, path: &str, body: Value, ok: &[u16]) -> Value {
        let (mut status, mut answer, mut full) = self.send(&method, path, &body).await;
        if full {
            self.books.waiting.fetch_add(1, Ordering::SeqCst);
            let mut space = self.space.clone();
            let given = *space.borrow();
            while full {
                self.books.refused.fetch_add(1, Ordering::Relaxed);
                let wait = Duration::from_millis(100);
                let _ = tokio::time::timeout(wait, space.wait_for(|g| *g > given)).await;
                let back = *space.borrow() > given;
                (status, answer, full) = self.send(&method, path, &body).await;
                assert!(!(full && back), "{path}: still full after space came back");
            }
            self.books.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        assert!(ok.contains(&status), "{path}: {status} {answer:#}");
        std::mem::take(&mut answer)
    }
}

/// One client's rounds on `account`: top-up, debit, submit, lease, complete; until told
/// to stop (a round whose request is refused for the full disk waits for space in it).
async fn client_rounds(client: Client, account: String) {
    let mut n = 0;
    while !client.stop.load(Ordering::Relaxed) {
        n += 1;
        let key = format!("df-{account}-top-up-{n}");
        let top_up = json!({"amount": "1.00", "idempotency_key": key});
        let path = format!("/v1/accounts/{account}/top-ups");
        client.call(Method::POST, &path, top_up, &[201]).await;
        client.books.acked.lock().unwrap().insert(key);
        let key = format!("df-{account}-debit-{n}");
        let debit = json!({"amount": "0.10", "idempotency_key": key, "job_ref": key});
        let path = format!("/v1/accounts/{account}/debits");
        client.call(Method::POST, &path, debit, &[201]).await;
        client.books.acked.lock().unwrap().insert(key);
        job_round(&client, &account, n).await;
    }
}

/// Submit (with a 2 KB payload), lease from the shared lane (maybe another client's
/// job), complete with the whole hold captured.
async fn job_round(client: &Client, account: &str, n: usize) {
    let key = format!("df-{account}-job-{n}");
    let submit = json!({
        "account_id": account, "kind": "video", "idempotency_key": key,
        "payload": {"prompt": "a cat on a full disk ".repeat(100)},
    });
    client.call(Method::POST, "/v1/jobs", submit, &[201]).await;
    client.books.acked.lock().unwrap().insert(key);
    let lease = json!({"worker_id": account, "lease_seconds": 300});
    let leased = client
        .call(Method::POST, "/v1/lanes/video/lease", lease, &[200, 204])
        .await;
    if leased.is_null() {
        return;
    }
    let job = leased["job"]["job_id"].as_str().unwrap().to_owned();
    let token = json!({"lease_token": leased["lease_token"]});
    let path = format!("/v1/jobs/{job}/complete");
    let done = client.call(Method::POST, &path, token, &[200]).await;
    assert_eq!(done["status"], "succeeded", "{done:#}");
    client.books.completed.lock().unwrap().insert(job);
}

// ---------------------------------------------------------------- the checks

/// `PRAGMA integrity_check` over a connection of its own.
async fn integrity(url: &str) -> String {
    let mut conn = SqliteConnection::connect(url).await.unwrap();
    let rows: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    rows.join("; ")
}

/// Every acknowledged write is in the database once, and nothing else is; every job
/// acknowledged complete was captured and ended once, no job twice.
async fn assert_books(url: &str, books: &Books) {
    let mut conn = SqliteConnection::connect(url).await.unwrap();
    let keys: BTreeSet<String> =
        sqlx::query_scalar("SELECT key FROM idempotency_keys WHERE key LIKE 'df-%'")
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let acked = books.acked.lock().unwrap().clone();
    assert_eq!(keys, acked, "the database's keys are the acknowledged ones");
    let entries = counts(
        url,
        "SELECT k.key, count(*) FROM idempotency_keys k JOIN ledger l ON l.entry_id = k.entry_id \
         WHERE k.key LIKE 'df-%' GROUP BY k.key",
    )
    .await;
    let debits = counts(url, DEBITS_BY_REF).await;
    assert!(
        debits.values().all(|&n| n == 1),
        "a debit applied twice: {debits:?}"
    );
    let money_keys = acked.iter().filter(|k| !k.contains("-job-")).count();
    assert_eq!(
        entries.len(),
        money_keys,
        "each top-up and debit has its ledger entry"
    );
    let completed = books.completed.lock().unwrap().clone();
    assert_each_once(url, CAPTURES_BY_REF, &completed, "a job captured").await;
    assert_no_job_ended_twice(url).await;
    eprintln!(
        "disk full: {} writes and {} completes acknowledged, each applied once",
        acked.len(),
        completed.len()
    );
}

async fn audit(client: &Client) {
    let (status, body, _) = client
        .send(&Method::GET, "/v1/admin/audit", &Value::Null)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], json!(true), "audit: {body:#}");
}

/// Waits until the clients have `n` more writes acknowledged (bounded).
async fn until_acked(books: &Books, n: usize) {
    let want = books.acked.lock().unwrap().len() + n;
    let deadline = Instant::now() + Duration::from_secs(60);
    while books.acked.lock().unwrap().len() < want {
        assert!(Instant::now() < deadline, "fewer than {n} writes in 60 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The KiB in use on the filesystem at `dir`.
fn used_kib(dir: &Path) -> u64 {
    let out = Command::new("df")
        .args(["-k", "--output=used"])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df's used")
}

/// Waits until every client is waiting for space (bounded).
async fn until_all_wait(books: &Books) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while books.waiting.load(Ordering::SeqCst) < CLIENTS {
        assert!(
            Instant::now() < deadline,
            "the disk never filled for every client"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `serve`'s log must hold no panic and no internal error.
fn assert_log_clean(serving: Serving) {
    let (status, lines) = serving.terminate();
    assert!(status.success(), "serve exits cleanly");
    let bad: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("panicked") || l.contains("internal error"))
        .collect();
    assert!(bad.is_empty(), "serve logged: {bad:#?}");
    let closed = lines
        .iter()
        .filter(|l| l.contains("left inside a transaction"))
        .count();
    eprintln!("disk full: {closed} SQLite connections closed after an undone transaction");
}

// ---------------------------------------------------------------- the test

/// Once every client waits for space: reads answer, nothing is half-written
/// (`integrity_check`, the audit), and the clients' retries meet the same 503 for half a
/// second. What the files looked like.
async fn while_full(client: &Client, url: &str, db: &Path) -> String {
    until_all_wait(&client.books).await;
    let sizes = file_sizes(db);
    let (status, account, _) = client
        .send(&Method::GET, "/v1/accounts/acct0", &Value::Null)
        .await;
    assert_eq!(status, 200, "{account}");
    let (status, ..) = client.send(&Method::GET, "/healthz", &Value::Null).await;
    assert_eq!(status, 200);
    assert_eq!(integrity(url).await, "ok");
    audit(client).await;
    let acked = client.books.acked.lock().unwrap().len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    format!("after {acked} acknowledged writes ({sizes})")
}

async fn seeded_client(base: String, space: watch::Receiver<usize>) -> Client {
    let client = Client {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        base,
        answers: Arc::default(),
        books: Arc::default(),
        space,
        stop: Arc::default(),
    };
    for i in 0..CLIENTS {
        let path = format!("/v1/accounts/acct{i}");
        client
            .call(Method::PUT, &path, json!({"plan": "free"}), &[201])
            .await;
    }
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_disk_is_a_clear_503_and_service_returns_with_space() {
    let started = Instant::now();
    let Some(disk) = Tmpfs::mount(SMALL_KIB) else {
        return;
    };
    let db = disk.path("holdfast.db");
    let url = format!("sqlite://{}", db.display());
    let card = card_file(&card_text_with(&[(
        "max_concurrent_jobs = 1\npriority = false",
        "max_concurrent_jobs = 100\npriority = false",
    )]));
    let limit = REQUEST_LIMIT.as_secs().to_string();
    let args = [
        "--rate-card",
        card.path().to_str().unwrap(),
        "--request-timeout-seconds",
        &limit,
    ];
    let mut serving = Served(Some(Serving::spawn(&url, &args, Some(ADMIN))));
    let listening = serving.0.as_ref().unwrap().until("listening on");
    let base = format!("http://{}", listen_address(&listening));
    let (give_space, space) = watch::channel(0);
    let client = seeded_client(base, space).await;
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|i| tokio::spawn(client_rounds(client.clone(), format!("acct{i}"))))
        .collect();

    // First fill: the WAL grows until the tmpfs is full.
    let first = while_full(&client, &url, &db).await;
    disk.resize(LARGE_KIB);
    give_space.send_replace(1);
    until_acked(&client.books, WRITES_BETWEEN).await;
    // Second fill, after a checkpoint: little room beyond what is used now.
    disk.shrink_to_used_plus(MARGIN_KIB);
    let second = while_full(&client, &url, &db).await;
    disk.resize(LARGE_KIB);
    give_space.send_replace(2);
    until_acked(&client.books, 40).await;
    client.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(integrity(&url).await, "ok");
    audit(&client).await;
    assert_books(&url, &client.books).await;
    let statuses: BTreeMap<u16, usize> =
        client
            .answers
            .seen
            .lock()
            .unwrap()
            .iter()
            .fold(BTreeMap::new(), |mut m, (_, _, s)| {
                *m.entry(*s).or_default() += 1;
                m
            });
    let slowest = client.answers.slowest();
    assert!(slowest < REQUEST_LIMIT, "an answer took {slowest:?}");
    let running_at = file_sizes(&db);
    assert_log_clean(serving.0.take().unwrap());
    eprintln!(
        "disk full: first fill {first}; second fill {second}; \
         {} requests refused for the full disk, all applied on retry; answers {statuses:?}; \
         slowest {slowest:.1?}; at the end {running_at}; total {:.1?}",
        client.books.refused.load(Ordering::Relaxed),
        started.elapsed()
    );
}
