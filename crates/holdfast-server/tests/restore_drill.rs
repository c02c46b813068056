//! Restore drills (issue #44): a backup taken while clients write through `serve`
//! restores to a database whose audit is clean and which holds every write acknowledged
//! before the backup began, each once. The steps are the ones docs/OPERATIONS.md
//! ("Backups") gives operators.
//!
//! - SQLite: `holdfast backup --output FILE` while the load runs; `serve` SIGKILLed
//!   under the load; `serve` started on the copy alone (a new directory, no `-wal`).
//! - PostgreSQL: a private cluster (initdb, http_support::cluster), the same load
//!   through `serve` on it, `pg_basebackup -X stream` while it runs (checked with
//!   `pg_verifybackup`); `serve` SIGKILLed under the load and the cluster stopped
//!   `-m immediate`; a new cluster started from the backup, `serve` on it. Needs
//!   PostgreSQL's server binaries under /usr/lib/postgresql (skipped loudly without them,
//!   failed under `CI=true`).
//!
//! The load: 8 clients, one account each, debit 0.01 after 0.01 (the key is also the
//! `job_ref`), and every fourth round submit a job, lease one and complete it (a
//! capture). On the restored database: `GET /v1/admin/audit` is clean; every debit and
//! capture acknowledged before the backup began is in the ledger, each once; no debit is
//! there that no client sent, nor one first sent after the backup ended (the copy is a
//! snapshot of its moment, not of the live database later).

mod http_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use holdfast::testing::{Backend, TestDb, card_file, card_text_with};
use http_support::cluster::Cluster;
use http_support::faults::{
    Acknowledged, CAPTURES_BY_REF, Client, DEBITS_BY_REF, Load, counts, seeded_accounts,
    submit_and_lease,
};
use http_support::{Serving, serve_with_card};
use reqwest::Method;
use serde_json::{Value, json};

const ADMIN: &str = "hf_restore_drill_admin_key_0123456789abcdef";
const ACCOUNTS: usize = 8;
/// How long the clients may take for the successes awaited around the backup.
const SUCCESSES_WITHIN: Duration = Duration::from_secs(60);

/// The default card with room for many open jobs per account.
fn card() -> tempfile::NamedTempFile {
    card_file(&card_text_with(&[(
        "max_concurrent_jobs = 1\npriority = false",
        "max_concurrent_jobs = 100\npriority = false",
    )]))
}

/// `serve` on `url`, and its base URL.
fn start_serve(url: &str, card: &Path) -> (Serving, String) {
    serve_with_card(url, card, ADMIN, &[])
}

// ---------------------------------------------------------------- the load

/// What the clients sent, and what they were told had happened.
#[derive(Default)]
struct Writes {
    /// The key of every debit sent (recorded before it is sent).
    sent: Mutex<BTreeSet<String>>,
    acked: Acknowledged,
}

/// The writes of one moment.
struct Moment {
    sent: BTreeSet<String>,
    debits: BTreeSet<String>,
    completed: BTreeSet<String>,
}

impl Writes {
    fn now(&self) -> Moment {
        Moment {
            sent: self.sent.lock().unwrap().clone(),
            debits: self.acked.debits.lock().unwrap().clone(),
            completed: self.acked.completed.lock().unwrap().clone(),
        }
    }
}

fn account(i: usize) -> String {
    format!("drill{i}")
}

/// One client: a debit of 0.01 each round; every fourth round also a job submitted,
/// leased (from the shared lane: maybe another client's job) and completed.
async fn client_rounds(client: Client, account: String, stop: Arc<AtomicBool>, w: Arc<Writes>) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("{account}-debit-{n}");
        w.sent.lock().unwrap().insert(key.clone());
        let body = json!({"amount": "0.01", "idempotency_key": key, "job_ref": key});
        let path = format!("/v1/accounts/{account}/debits");
        client.expect(Method::POST, &path, body, &[200, 201]).await;
        w.acked.debits.lock().unwrap().insert(key);
        if n % 4 == 3 {
            let key = format!("{account}-job-{n}");
            if let Some((job, token)) = submit_and_lease(&client, &account, &key, 30).await {
                let path = format!("/v1/jobs/{job}/complete");
                client.expect(Method::POST, &path, token, &[200]).await;
                w.acked.completed.lock().unwrap().insert(job);
            }
        }
        n += 1;
    }
}

fn start_load(client: &Client, writes: &Arc<Writes>) -> Load {
    let mut load = Load::default();
    for i in 0..ACCOUNTS {
        let (c, s, w) = (client.clone(), load.stop(), writes.clone());
        load.spawn(client_rounds(c, account(i), s, w));
    }
    load
}

// ---------------------------------------------------------------- the drill

/// How a backend is backed up and restored.
enum Procedure {
    /// `holdfast backup --output copy`, then `serve` on the copy.
    Sqlite { source: String, copy: PathBuf },
    /// `pg_basebackup` of `source`, then a cluster started from it.
    Postgres { source: Cluster },
}

/// A backup taken.
enum Backup {
    /// What `holdfast backup --json` printed.
    Sqlite(Value),
    /// The cluster made from the base backup, not started.
    Postgres(Cluster),
}

impl Procedure {
    /// The database `serve` runs on first.
    fn url(&self) -> String {
        match self {
            Procedure::Sqlite { source, .. } => source.clone(),
            Procedure::Postgres { source } => source.url("holdfast"),
        }
    }

    /// Takes the backup (blocks until it is done).
    fn backup(&self) -> Backup {
        match self {
            Procedure::Sqlite { source, copy } => Backup::Sqlite(holdfast_backup(source, copy)),
            Procedure::Postgres { source } => Backup::Postgres(source.base_backup()),
        }
    }

    /// After `serve` was killed: the source's server killed too (PostgreSQL), the backup
    /// made live; its URL, and the cluster to keep running until the test ends.
    fn restore(&self, backup: Backup) -> (String, Option<Cluster>) {
        match (self, backup) {
            (Procedure::Sqlite { copy, .. }, Backup::Sqlite(printed)) => {
                assert_eq!(printed["output"], json!(copy.display().to_string()));
                assert_eq!(printed["accounts"], json!(ACCOUNTS));
                assert!(printed["bytes"].as_u64().unwrap() > 0, "{printed:#}");
                let wal = copy.with_file_name("holdfast.db-wal");
                assert!(!wal.exists(), "the copy is one file, no -wal beside it");
                (format!("sqlite://{}", copy.display()), None)
            }
            (Procedure::Postgres { source }, Backup::Postgres(copy)) => {
                source.stop_immediately();
                copy.start();
                (copy.url("holdfast"), Some(copy))
            }
            _ => unreachable!("a backup of the procedure's own backend"),
        }
    }
}

/// Load through `serve`, the backup under it, `serve` killed under it, the restore,
/// `serve` on the restored database, the checks; prints the figures.
async fn drill(procedure: Procedure, label: &str) {
    let card = card();
    let (serving, base) = start_serve(&procedure.url(), card.path());
    let client = Client::new(&base, ADMIN, Duration::from_secs(10));
    seeded_accounts(&client, (0..ACCOUNTS).map(account)).await;
    let writes = Arc::new(Writes::default());
    let load = start_load(&client, &writes);
    let answers = client.answers.clone();
    answers
        .wait_successes(Instant::now(), 200, SUCCESSES_WITHIN)
        .await;
    let before = writes.now();
    let started = Instant::now();
    let backup = tokio::task::block_in_place(|| procedure.backup());
    let took = started.elapsed();
    let after = writes.now();
    // The load goes on after the backup, and `serve` dies under it.
    answers
        .wait_successes(Instant::now(), 100, SUCCESSES_WITHIN)
        .await;
    serving.kill();
    load.abandon().await;
    let end = writes.now();
    let (restored, _cluster) = procedure.restore(backup);
    let (serving, base) = start_serve(&restored, card.path());
    let client = Client::new(&base, ADMIN, Duration::from_secs(60));
    let in_copy = assert_restored(&restored, &client, &before, &after, &end).await;
    let (status, _) = serving.terminate();
    assert!(
        status.success(),
        "serve on the restored database exits cleanly"
    );
    eprintln!(
        "{label}: backup took {took:.1?} under load; acknowledged before it: {} debits, {} \
         captures; in the copy: {in_copy} debits; sent in all {} debits ({} acknowledged) \
         before serve was killed; audit of the restored database clean",
        before.debits.len(),
        before.completed.len(),
        end.sent.len(),
        end.debits.len(),
    );
}

/// The restored database: audit clean; every debit and capture acknowledged `before` the
/// backup there once; each debit there sent by a client, none first sent `after` the
/// backup ended (`end`: when `serve` was killed). The number of debits in it.
async fn assert_restored(
    url: &str,
    client: &Client,
    before: &Moment,
    after: &Moment,
    end: &Moment,
) -> usize {
    let audit = client
        .expect(Method::GET, "/v1/admin/audit", Value::Null, &[200])
        .await;
    assert_eq!(audit["ok"], json!(true), "audit: {audit:#}");
    let debits = once_each(url, DEBITS_BY_REF, "a debit").await;
    let missing: Vec<&String> = before.debits.difference(&debits).collect();
    assert!(
        missing.is_empty(),
        "acknowledged, not restored: {missing:?}"
    );
    let unsent: Vec<&String> = debits.difference(&end.sent).collect();
    assert!(unsent.is_empty(), "restored, never sent: {unsent:?}");
    let later: Vec<&String> = debits.difference(&after.sent).collect();
    assert!(
        later.is_empty(),
        "sent after the backup, yet in it: {later:?}"
    );
    let captures = once_each(url, CAPTURES_BY_REF, "a capture").await;
    let missing: Vec<&String> = before.completed.difference(&captures).collect();
    assert!(
        missing.is_empty(),
        "completed, capture not restored: {missing:?}"
    );
    debits.len()
}

/// The refs of `sql`'s `(ref, count)` rows, each required to count one.
async fn once_each(url: &str, sql: &str, what: &str) -> BTreeSet<String> {
    let rows = counts(url, sql).await;
    assert!(rows.values().all(|&n| n == 1), "{what} twice: {rows:?}");
    rows.into_keys().collect()
}

// ---------------------------------------------------------------- SQLite

/// `holdfast backup --json` of `url` into `output`: what it printed.
fn holdfast_backup(url: &str, output: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(["backup", "--json", "--output"])
        .arg(output)
        .arg("--database")
        .arg(url)
        .env_remove("HOLDFAST_DATABASE_URL")
        .output()
        .expect("run holdfast backup");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "holdfast backup: {stderr}");
    serde_json::from_slice(&out.stdout).expect("backup --json prints JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_backup_under_load_restores_every_acknowledged_write() {
    let Some(db) = TestDb::empty(Backend::Sqlite).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let procedure = Procedure::Sqlite {
        source: db.url.clone(),
        copy: dir.path().join("holdfast.db"),
    };
    drill(procedure, "restore drill, SQLite").await;
}

// ---------------------------------------------------------------- PostgreSQL

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_base_backup_under_load_restores_every_acknowledged_write() {
    let Some(source) = Cluster::new().await else {
        return;
    };
    drill(Procedure::Postgres { source }, "restore drill, PostgreSQL").await;
}
