//! Syncs per acknowledged write on SQLite, counted from outside the process (issue #16
//! part 0; docs/DESIGN.md, "Unit of work": answered => synced). `holdfast serve` runs
//! under `strace -f --seccomp-bpf -e trace=fsync,fdatasync -o FILE`: every thread
//! followed, the trace in a file of its own (strace writes each line as the call returns,
//! before the thread goes on, so before the answer), counted after the server answered it
//! was listening and its accounts were made, and again after the writes of the run:
//! - `synchronous = FULL` (the default), sequential top-ups each answered 201 before the
//!   next is sent: at least one sync per acknowledged top-up;
//! - `--sqlite-synchronous normal`, the same: fewer than one sync per four top-ups (the
//!   WAL is synced at checkpoints only);
//! - FULL with 16 concurrent clients: fewer syncs than acknowledged top-ups (queued
//!   writers share a commit), then the audit.
//!
//! strace is Debian's `strace` (installed by `.ci/run`). Without it, or where it cannot
//! trace (ptrace refused in a container), the test fails under `CI=true` and is skipped
//! loudly elsewhere. SQLite only: on PostgreSQL the syncs are the database server's, not
//! this process's.

mod http_support;

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use holdfast::testing::{Backend, TestDb};
use http_support::{Serving, listen_address};
use serde_json::{Value, json};

const ADMIN: &str = "hf_syncs_admin_key_0123456789abcdef";
const TRACE: [&str; 8] = [
    "strace",
    "-f",
    "--seccomp-bpf",
    "-qq",
    "-e",
    "trace=fsync,fdatasync",
    "-e",
    "signal=none",
];

/// Whether strace runs and traces here; under CI it must.
fn strace_usable() -> bool {
    let probe = Command::new(TRACE[0])
        .args(&TRACE[1..])
        .args(["-o", "/dev/null", "--", "true"])
        .output();
    let why = match probe {
        Ok(out) if out.status.success() => return true,
        Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
        Err(e) => e.to_string(),
    };
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !ci,
        "strace is required under CI and cannot trace here: {why}"
    );
    eprintln!("SKIPPED syncs per acknowledged write: strace cannot trace here: {why}");
    false
}

/// `holdfast serve` under strace.
struct Traced {
    serving: Serving,
    client: Arc<Client>,
    _dir: tempfile::TempDir,
}

/// Where the trace goes, and an HTTP client of the server.
struct Client {
    trace: std::path::PathBuf,
    base: String,
    http: reqwest::Client,
}

impl Traced {
    fn start(db: &TestDb, synchronous: &str) -> Traced {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("trace");
        let mut wrapper = TRACE.to_vec();
        wrapper.extend(["-o", trace.to_str().unwrap(), "--"]);
        let args = ["--sqlite-synchronous", synchronous];
        let serving = Serving::spawn_under(&wrapper, &db.url, &args, Some(ADMIN));
        let base = format!("http://{}", listen_address(&serving.until("listening on")));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Traced {
            serving,
            client: Arc::new(Client { trace, base, http }),
            _dir: dir,
        }
    }

    /// SIGTERM to `holdfast serve` itself (strace's child; strace would detach and leave
    /// it running), then strace exits with it.
    fn stop(self) {
        let strace = self.serving.id();
        let holdfast = child_of(strace).expect("holdfast serve under strace");
        let killed = Command::new("kill")
            .args(["-TERM", &holdfast.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        self.serving.wait();
    }
}

impl Client {
    /// fsync and fdatasync calls traced so far (a call another thread interrupted shows
    /// as `fsync(…<unfinished …>` and `<… fsync resumed>`: counted once, by its start).
    fn syncs(&self) -> usize {
        let text = std::fs::read_to_string(&self.trace).unwrap_or_default();
        text.lines()
            .filter(|l| l.contains(" fsync(") || l.contains(" fdatasync("))
            .count()
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(ADMIN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        assert!((200..300).contains(&status), "{path}: {status} {body:#}");
        body
    }

    /// Tops up `account` `n` times in a row, each answered before the next is sent.
    async fn top_ups(&self, account: &str, n: usize, acknowledged: &AtomicUsize) {
        for i in 0..n {
            let body = json!({ "amount": "1.00", "idempotency_key": format!("{account}-{i}") });
            let path = format!("/v1/accounts/{account}/top-ups");
            self.send(reqwest::Method::POST, &path, Some(body)).await;
            acknowledged.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// The process whose parent is `parent`.
fn child_of(parent: u32) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …: comm may hold spaces, so read after its ')'.
        let after_comm = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let ppid = after_comm.split_whitespace().nth(1);
        if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            return Some(pid);
        }
    }
    None
}

/// One traced server: `clients` accounts, each topped up `per_client` times in a row by a
/// client of its own, all clients at once. Answers (syncs during the top-ups, top-ups
/// acknowledged).
async fn traced_run(synchronous: &str, clients: usize, per_client: usize) -> (usize, usize) {
    let db = TestDb::empty(Backend::Sqlite).await.expect("a SQLite file");
    let traced = Traced::start(&db, synchronous);
    let client = traced.client.clone();
    for c in 0..clients {
        let body = json!({ "plan": "free" });
        let path = format!("/v1/accounts/c{c}");
        client.send(reqwest::Method::PUT, &path, Some(body)).await;
    }
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let before = client.syncs();
    let runs: Vec<_> = (0..clients)
        .map(|c| {
            let (client, acknowledged) = (client.clone(), acknowledged.clone());
            tokio::spawn(async move {
                client
                    .top_ups(&format!("c{c}"), per_client, &acknowledged)
                    .await
            })
        })
        .collect();
    for run in runs {
        run.await.unwrap();
    }
    let syncs = client.syncs() - before;
    let audit = client
        .send(reqwest::Method::GET, "/v1/admin/audit", None)
        .await;
    assert_eq!(audit["violations"], json!([]), "audit: {audit:#}");
    let acknowledged = acknowledged.load(Ordering::Acquire);
    eprintln!(
        "synchronous={synchronous} clients={clients}: {syncs} syncs for {acknowledged} acknowledged top-ups"
    );
    traced.stop();
    (syncs, acknowledged)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn syncs_per_acknowledged_write() {
    if !strace_usable() {
        return;
    }
    let (syncs, acknowledged) = traced_run("full", 1, 100).await;
    assert_eq!(acknowledged, 100);
    assert!(
        syncs >= acknowledged,
        "FULL: {syncs} syncs for {acknowledged} acknowledged top-ups in a row"
    );
    let (syncs, acknowledged) = traced_run("normal", 1, 100).await;
    assert!(
        syncs * 4 < acknowledged,
        "NORMAL: {syncs} syncs for {acknowledged} acknowledged top-ups in a row"
    );
    let (syncs, acknowledged) = traced_run("full", 16, 10).await;
    assert_eq!(acknowledged, 160);
    assert!(
        syncs < acknowledged,
        "FULL, 16 clients: {syncs} syncs for {acknowledged} acknowledged top-ups"
    );
}
