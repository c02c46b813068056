//! PostgreSQL failover under load, with pg_auto_failover on this machine: a monitor and
//! two nodes in synchronous replication under a temporary directory, `holdfast serve` on
//! the multi-host URL (`target_session_attrs=read-write`), and clients that debit, run
//! jobs (submit → lease → complete with capture) and receive webhooks while the primary is
//! killed (SIGKILL to its pg_autoctl and its postmaster). The monitor promotes the standby; `serve`
//! answers 503 meanwhile (never past its time limit) and follows the new primary by
//! itself; clients retry under the same idempotency keys. Then every acknowledged debit
//! and capture is in the new primary's ledger exactly once, no job ends twice, every
//! acknowledged job's webhook arrives, and the audit is clean. The old primary is started
//! again and rejoins as a standby, and a switchover under the same load fails back to it.
//!
//! Needs `pg_autoctl` (Debian: `postgresql-15-auto-failover`, `pg-auto-failover-cli`):
//! skipped loudly without it, failed under `CI=true`. As root, PostgreSQL runs as the
//! `postgres` user (through `setpriv`). Rerun: `cargo test -p holdfast-server --test
//! failover -- --nocapture`.

mod http_support;

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use holdfast::testing::{card_file, card_text_with};
use http_support::faults::{
    Acknowledged, Client, Load, as_postgres, connect_within, free_port, job_receiver,
    postgres_bindir, postgres_temp_dir, postmaster, signal, submit_and_lease, wait_delivered,
};
use http_support::{Serving, serve_with_card};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};

const ADMIN: &str = "hf_failover_admin_key_0123456789abcdef";
/// `serve --request-timeout-seconds`: no answer may take longer (plus scheduling slack).
const REQUEST_LIMIT: Duration = Duration::from_secs(5);
const DEBIT_ACCOUNTS: usize = 3;
const JOB_ACCOUNTS: usize = 2;

// ---------------------------------------------------------------- the cluster

/// The monitor and nodes, their processes and their directory; stopped and removed on
/// drop, whatever happened.
struct Cluster {
    dir: tempfile::TempDir,
    pg_autoctl: PathBuf,
    pg_bindir: PathBuf,
    as_postgres: bool,
    monitor_port: u16,
    node_ports: [u16; 2],
    /// Each background `pg_autoctl` (the leader of its own process group) by log name.
    children: Vec<(String, Child)>,
}

/// `pg_autoctl` and the PostgreSQL binaries it drives, or `None` when not installed.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let pg_autoctl = std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("pg_autoctl"))
        .find(|p| p.is_file())?;
    Some((pg_autoctl, postgres_bindir()?))
}

impl Cluster {
    fn new(pg_autoctl: PathBuf, pg_bindir: PathBuf) -> Cluster {
        let (dir, as_postgres) = postgres_temp_dir();
        Cluster {
            dir,
            pg_autoctl,
            pg_bindir,
            as_postgres,
            monitor_port: free_port(),
            node_ports: [free_port(), free_port()],
            children: vec![],
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `pg_autoctl ARGS` as the user PostgreSQL runs as, its configuration under the
    /// temporary directory.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = as_postgres(&self.pg_autoctl, self.as_postgres);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            [self.pg_bindir.clone()]
                .into_iter()
                .chain(std::env::split_paths(&path)),
        )
        .unwrap();
        command
            .args(args)
            .env("PATH", path)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .env("TMPDIR", self.dir.path())
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATA")
            .current_dir(self.dir.path());
        command
    }

    /// Runs `pg_autoctl ARGS` to its end; its output.
    fn run(&self, args: &[&str]) -> String {
        let out = self.command(args).output().expect("pg_autoctl");
        assert!(
            out.status.success(),
            "pg_autoctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts `pg_autoctl ARGS` in the background, its output in `<log>.log`.
    fn spawn(&mut self, log: &str, args: &[&str]) {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(&format!("{log}.log")))
            .unwrap();
        let child = self
            .command(args)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("pg_autoctl");
        self.children.push((log.to_owned(), child));
    }

    /// Kills node `node` with SIGKILL: its `pg_autoctl` processes (the process group of
    /// the one this started) and its postmaster (which `pg_ctl` puts in a session of its
    /// own). Nothing is flushed or shut down; the backends die with the postmaster.
    fn crash(&mut self, node: usize) {
        let name = format!("node{node}");
        for (log, child) in &mut self.children {
            if *log == name {
                signal("KILL", &format!("-{}", child.id()));
                let _ = child.wait();
            }
        }
        // reaped: never signal their (reusable) ids again
        self.children.retain(|(log, _)| *log != name);
        if let Some(pid) = postmaster(&self.pgdata(node)) {
            signal("KILL", &pid);
        }
    }

    fn pgdata(&self, node: usize) -> String {
        self.path(&format!("node{node}")).display().to_string()
    }

    fn monitor_url(&self, user: &str) -> String {
        format!(
            "postgres://{user}@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
            self.monitor_port
        )
    }

    fn node_url(&self, node: usize, db: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{db}?sslmode=disable",
            self.node_ports[node]
        )
    }

    /// The multi-host URL `serve` is given.
    fn serve_url(&self) -> String {
        let [a, b] = self.node_ports;
        format!(
            "postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/holdfast?sslmode=disable&target_session_attrs=read-write"
        )
    }

    /// The monitor, up, with health checks tuned for a test: a node that stops answering
    /// is declared unhealthy after about 2 s, and its demotion is not waited for longer
    /// than 1 s (the defaults take about 35 s to fail over).
    async fn start_monitor(&mut self) {
        let port = self.monitor_port.to_string();
        let pgdata = self.path("monitor").display().to_string();
        self.spawn(
            "monitor",
            &[
                "create",
                "monitor",
                "--pgdata",
                &pgdata,
                "--pgport",
                &port,
                "--hostname",
                "127.0.0.1",
                "--auth",
                "trust",
                "--no-ssl",
                "--run",
            ],
        );
        let mut conn = connect_within(&self.monitor_url("postgres"), Duration::from_secs(60)).await;
        for (name, value) in [
            ("health_check_period", 500),
            ("health_check_timeout", 1000),
            ("health_check_max_retries", 1),
            ("health_check_retry_delay", 200),
            ("node_considered_unhealthy_timeout", 2000),
            ("primary_demote_timeout", 1000),
        ] {
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "ALTER SYSTEM SET pgautofailover.{name} TO {value}"
            )))
            .execute(&mut conn)
            .await
            .unwrap();
        }
        sqlx::query("SELECT pg_reload_conf()")
            .execute(&mut conn)
            .await
            .unwrap();
    }

    /// `pg_autoctl create postgres … --run` for node `node` (0 or 1).
    fn start_node(&mut self, node: usize) {
        let (pgdata, port) = (self.pgdata(node), self.node_ports[node].to_string());
        let (monitor, name) = (self.monitor_url("autoctl_node"), format!("node{node}"));
        self.spawn(
            &name,
            &[
                "create",
                "postgres",
                "--pgdata",
                &pgdata,
                "--pgport",
                &port,
                "--hostname",
                "127.0.0.1",
                "--name",
                &name,
                "--auth",
                "trust",
                "--no-ssl",
                "--monitor",
                &monitor,
                "--run",
            ],
        );
    }

    /// Each node's port with its reported and assigned state, from the monitor.
    async fn states(&self) -> Vec<(u16, String, String)> {
        let Ok(mut conn) = PgConnection::connect(&self.monitor_url("postgres")).await else {
            return vec![];
        };
        let rows: Vec<(i32, String, String)> = sqlx::query_as(
            "SELECT nodeport, reportedstate::text, goalstate::text FROM pgautofailover.node ORDER BY nodeid",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap_or_default();
        let _ = conn.close().await;
        rows.into_iter()
            .map(|(port, reported, goal)| (u16::try_from(port).unwrap(), reported, goal))
            .collect()
    }

    /// Waits until node `node` reports and is assigned one of `states`.
    async fn wait_state(&self, node: usize, states: &[&str], within: Duration) {
        let port = self.node_ports[node];
        let deadline = Instant::now() + within;
        loop {
            let now = self.states().await;
            let there = now
                .iter()
                .any(|(p, r, g)| *p == port && r == g && states.contains(&r.as_str()));
            if there {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "node{node} not {states:?} within {within:?}: {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn show_state(&self) -> String {
        let monitor = self.path("monitor").display().to_string();
        self.run(&["show", "state", "--pgdata", &monitor])
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for log in ["monitor", "node0", "node1"] {
                let text = std::fs::read_to_string(self.path(&format!("{log}.log")));
                let text = text.unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                eprintln!("--- {log}.log (last lines)");
                for line in tail.iter().rev() {
                    eprintln!("{line}");
                }
            }
        }
        let cleaning = Instant::now();
        // `pg_autoctl stop` on every node at once: it stops postgres cleanly, shared memory
        // included (a SIGKILLed postmaster leaves its segments in /dev/shm). Then whatever
        // is still running after 10 s is killed.
        let pgdatas = [
            self.pgdata(0),
            self.pgdata(1),
            self.path("monitor").display().to_string(),
        ];
        let stops: Vec<Child> = pgdatas
            .iter()
            .filter(|d| Path::new(d).exists())
            .filter_map(|d| {
                let mut stop = self.command(&["stop", "--pgdata", d, "--immediate"]);
                stop.stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })
            .collect();
        for mut stop in stops {
            let _ = stop.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        for (_, child) in &mut self.children {
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            signal("KILL", &format!("-{}", child.id()));
            let _ = child.wait();
        }
        for pid in pgdatas.iter().filter_map(|d| postmaster(d)) {
            signal("KILL", &pid);
        }
        eprintln!("failover: cluster stopped in {:.1?}", cleaning.elapsed());
    }
}

/// The primary replicates synchronously: `synchronous_commit` on, a standby named in
/// `synchronous_standby_names`, and that standby streaming as `sync` or `quorum`.
async fn assert_synchronous(primary: &str) {
    let mut conn = connect_within(primary, Duration::from_secs(10)).await;
    let commit: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(commit, "on");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names: String = sqlx::query_scalar("SHOW synchronous_standby_names")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        let states: Vec<String> = sqlx::query_scalar("SELECT sync_state FROM pg_stat_replication")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        if !names.is_empty() && states.iter().any(|s| s == "sync" || s == "quorum") {
            eprintln!("failover: synchronous_standby_names = {names}, standby {states:?}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not synchronous: synchronous_standby_names = {names:?}, standbys {states:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------- the clients

async fn debits(
    client: Client,
    account: String,
    who: String,
    stop: Arc<AtomicBool>,
    acked: Arc<Acknowledged>,
) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("{who}-debit-{n}");
        let body = json!({"amount": "0.01", "idempotency_key": key, "job_ref": key});
        let path = format!("/v1/accounts/{account}/debits");
        client.expect(Method::POST, &path, body, &[200, 201]).await;
        acked.debits.lock().unwrap().insert(key);
        n += 1;
    }
}

/// Submit, lease (from the shared lane: maybe another account's job), complete with the
/// whole hold captured. A lease whose answer was lost leaves its job to the sweeper.
async fn jobs(
    client: Client,
    account: String,
    who: String,
    stop: Arc<AtomicBool>,
    acked: Arc<Acknowledged>,
) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("{who}-job-{n}");
        let leased = submit_and_lease(&client, &account, &key, 120).await;
        n += 1;
        let Some((job, token)) = leased else {
            continue;
        };
        let done = client
            .expect(
                Method::POST,
                &format!("/v1/jobs/{job}/complete"),
                token,
                &[200],
            )
            .await;
        assert_eq!(done["status"], "succeeded", "{done:#}");
        acked.completed.lock().unwrap().insert(job);
    }
}

/// `serve` on the cluster, killed on drop if still running.
struct Server(Option<Serving>);

impl Drop for Server {
    fn drop(&mut self) {
        let Some(serving) = self.0.take() else {
            return;
        };
        if !std::thread::panicking() {
            return serving.kill();
        }
        let (_, lines) = serving.terminate();
        eprintln!("--- serve's log (warnings and errors, last lines)");
        let noted: Vec<&String> = lines
            .iter()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .collect();
        for line in noted.iter().rev().take(30).rev() {
            eprintln!("{line}");
        }
    }
}

fn start_serve(url: &str, card: &Path) -> (Server, String) {
    let (serving, base) = serve_with_card(url, card, ADMIN, &[]);
    (Server(Some(serving)), base)
}

fn card(hook: &str) -> tempfile::NamedTempFile {
    let mut text = card_text_with(&[
        (
            "max_concurrent_jobs = 1\npriority = false",
            "max_concurrent_jobs = 100\npriority = false",
        ),
        ("webhooks_every_seconds = 1", "webhooks_every_seconds = 0.2"),
    ]);
    text.push_str(&format!(
        "\n[[webhooks]]\nurl = \"{hook}\"\nsecret = \"failover\"\nevents = [\"job.succeeded\"]\n"
    ));
    card_file(&text)
}

// ---------------------------------------------------------------- the test

/// A cluster of a monitor and two nodes, node 0 the primary with node 1 its synchronous
/// standby, and a `holdfast` database on it.
async fn cluster() -> Option<Cluster> {
    let Some((pg_autoctl, bindir)) = installed() else {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "pg_autoctl (pg_auto_failover) is required under CI and is not installed"
        );
        eprintln!(
            "\n*** pg_autoctl not installed (apt-get install postgresql-15-auto-failover \
             pg-auto-failover-cli)\n*** SKIPPING the failover test\n"
        );
        return None;
    };
    let mut cluster = Cluster::new(pg_autoctl, bindir);
    cluster.start_monitor().await;
    cluster.start_node(0);
    cluster
        .wait_state(0, &["single"], Duration::from_secs(60))
        .await;
    cluster.start_node(1);
    cluster
        .wait_state(1, &["secondary"], Duration::from_secs(60))
        .await;
    cluster
        .wait_state(0, &["primary"], Duration::from_secs(30))
        .await;
    assert_synchronous(&cluster.node_url(0, "postgres")).await;
    let mut conn = connect_within(&cluster.node_url(0, "postgres"), Duration::from_secs(10)).await;
    sqlx::raw_sql("CREATE DATABASE holdfast")
        .execute(&mut conn)
        .await
        .unwrap();
    Some(cluster)
}

async fn accounts(client: &Client) -> Vec<(String, bool)> {
    let mut accounts = vec![];
    for i in 0..DEBIT_ACCOUNTS {
        accounts.push((format!("debits{i}"), false));
    }
    for i in 0..JOB_ACCOUNTS {
        accounts.push((format!("jobs{i}"), true));
    }
    for (id, _) in &accounts {
        let path = format!("/v1/accounts/{id}");
        let plan = json!({"plan": "free"});
        client.expect(Method::PUT, &path, plan, &[200, 201]).await;
        let top_up = json!({"amount": "100000.00", "idempotency_key": format!("{id}-top-up")});
        let path = format!("/v1/accounts/{id}/top-ups");
        client
            .expect(Method::POST, &path, top_up, &[200, 201])
            .await;
    }
    accounts
}

/// Every acknowledged job's `job.succeeded` webhook arrives (bounded: a delivery whose
/// attempt was under way when the primary died is attempted again once its lease, 25 s,
/// has run out, and the account's later deliveries wait behind it, in order).
async fn assert_webhooks(acked: &Acknowledged, seen: &Mutex<BTreeSet<String>>) -> Duration {
    let completed = acked.completed.lock().unwrap().clone();
    wait_delivered(&completed, seen, Duration::from_secs(45)).await
}

/// Starts one client per account, running until [`Load::finish`]; `phase` keeps this
/// run's keys apart from others'.
fn start_load(
    client: &Client,
    accounts: &[(String, bool)],
    acked: &Arc<Acknowledged>,
    phase: &str,
) -> Load {
    let mut load = Load::default();
    for (account, runs_jobs) in accounts {
        let (c, s, a) = (client.clone(), load.stop(), acked.clone());
        let who = format!("{account}-{phase}");
        match runs_jobs {
            true => load.spawn(jobs(c, account.clone(), who, s, a)),
            false => load.spawn(debits(c, account.clone(), who, s, a)),
        }
    }
    load
}

/// Load through `disrupt` until node `to` is the primary and the clients have had 50
/// more successes; the time without a primary and the failed answers.
async fn through<F: FnOnce(&mut Cluster)>(
    cluster: &mut Cluster,
    client: &Client,
    load: Load,
    to: usize,
    disrupt: F,
) -> (Duration, usize) {
    let answers = &client.answers;
    answers
        .wait_successes(Instant::now(), 50, Duration::from_secs(30))
        .await;
    let began = Instant::now();
    disrupt(cluster);
    let within = Duration::from_secs(60);
    cluster
        .wait_state(to, &["wait_primary", "primary"], within)
        .await;
    eprintln!(
        "failover: node{to} promoted {:.1?} after the disruption",
        began.elapsed()
    );
    answers
        .wait_successes(Instant::now(), 50, Duration::from_secs(30))
        .await;
    load.finish().await;
    answers.outage_after(began)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serve_follows_a_failover_without_losing_or_doubling_a_charge() {
    let started = Instant::now();
    let Some(mut cluster) = cluster().await else {
        return;
    };
    let set_up = started.elapsed();
    let (hook, delivered) = job_receiver().await;
    let card = card(&hook);
    let (mut server, base) = start_serve(&cluster.serve_url(), card.path());
    let client = Client::new(&base, ADMIN, Duration::from_secs(20));
    let answers = client.answers.clone();
    let acked = Arc::new(Acknowledged::default());
    let accounts = accounts(&client).await;

    // The primary is killed (SIGKILL); the monitor promotes the standby; serve follows.
    let load = start_load(&client, &accounts, &acked, "crash");
    let (outage, failed) = through(&mut cluster, &client, load, 1, |c| c.crash(0)).await;
    acked
        .assert_books(&cluster.node_url(1, "holdfast"), "failover")
        .await;

    // The old primary comes back, as a standby of the new one.
    let rejoin = Instant::now();
    let pgdata = cluster.pgdata(0);
    cluster.spawn("node0", &["run", "--pgdata", &pgdata]);
    let within = Duration::from_secs(60);
    cluster.wait_state(0, &["secondary"], within).await;
    cluster.wait_state(1, &["primary"], within).await;
    let rejoined = rejoin.elapsed();
    eprintln!("{}", cluster.show_state());

    // Fail back by a switchover under load: serve follows the primary to the first host.
    let load = start_load(&client, &accounts, &acked, "back");
    let monitor = cluster.path("monitor").display().to_string();
    let switch = [
        "perform",
        "switchover",
        "--pgdata",
        &monitor,
        "--formation",
        "default",
    ];
    let (back, failed_back) = through(&mut cluster, &client, load, 0, |c| {
        c.run(&switch);
    })
    .await;
    cluster.wait_state(1, &["secondary"], within).await;
    acked
        .assert_books(&cluster.node_url(0, "holdfast"), "failover")
        .await;
    let webhooks = assert_webhooks(&acked, &delivered).await;
    let audit = client
        .expect(Method::GET, "/v1/admin/audit", Value::Null, &[200])
        .await;
    assert_eq!(audit["ok"], json!(true), "audit: {audit:#}");
    let slowest = answers.slowest();
    assert!(
        slowest < REQUEST_LIMIT + Duration::from_secs(2),
        "an answer took {slowest:?}, past the request time limit"
    );
    if let Some(serving) = server.0.take() {
        let (status, _) = serving.terminate();
        assert!(status.success(), "serve exits cleanly");
    }
    eprintln!(
        "failover: set up {set_up:.1?}; primary killed: no primary for clients {outage:.1?} \
         ({failed} failed answers, retried); old primary rejoined as standby in \
         {rejoined:.1?}; switchover back: no primary {back:.1?} ({failed_back} failed); \
         slowest answer {slowest:.1?}; webhooks caught up {webhooks:.1?} after the load; \
         total {:.1?}",
        started.elapsed()
    );
}
