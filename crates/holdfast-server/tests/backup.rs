//! `holdfast backup` and the clean stop of `serve` (issue #44), as the built binary.
//!
//! - `backup` refuses, in one line and writing nothing: an output file that exists, a
//!   SQLite file that does not (it is not created), a file without holdfast's schema, a
//!   PostgreSQL URL (pointing to pg_basebackup and OPERATIONS.md).
//! - `serve` stopped by SIGTERM or SIGINT checkpoints and closes the database: on SQLite
//!   the `-wal` file is gone (or empty) and a copy of the main file alone holds every
//!   write; on both backends it logs `database closed` and exits 0.
//!
//! The backup of a live database under load, and its restore, is restore_drill.rs.

mod http_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use holdfast::testing::{Backend, TestDb};
use http_support::faults::{Client, counts};
use http_support::{Serving, listen_address};
use reqwest::Method;
use serde_json::{Value, json};

const ADMIN: &str = "hf_backup_test_admin_key_0123456789abcdef";

/// `holdfast ARGS --database URL`: success, stdout, stderr.
fn holdfast(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(args)
        .arg("--database")
        .arg(url)
        .env_remove("HOLDFAST_DATABASE_URL")
        .output()
        .expect("run holdfast");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    (out.status.success(), text(out.stdout), text(out.stderr))
}

/// `holdfast backup --output OUTPUT` on `url` must fail with one `invalid_request` line
/// containing `says`; that line.
fn refused(url: &str, output: &Path, says: &str) -> String {
    let (ok, stdout, stderr) = holdfast(url, &["backup", "--output", output.to_str().unwrap()]);
    assert!(!ok, "backup should be refused, printed {stdout}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(
        stderr.starts_with("holdfast: invalid_request: "),
        "{stderr:?}"
    );
    assert!(stderr.contains(says), "{stderr:?} should say {says:?}");
    stderr
}

#[test]
fn backup_refuses_a_postgres_url_and_points_to_pg_basebackup() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("copy.db");
    // No server is asked: the URL's scheme is enough.
    let url = "postgres://postgres@127.0.0.1:1/nowhere";
    let line = refused(url, &output, "pg_basebackup");
    assert!(line.contains("docs/OPERATIONS.md"), "{line}");
    assert!(!output.exists(), "nothing written");
}

#[test]
fn backup_refuses_to_overwrite_and_needs_a_holdfast_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("holdfast.db");
    let url = format!("sqlite://{}", db.display());
    let output = dir.path().join("copy.db");

    refused(&url, &output, "no SQLite database at");
    assert!(!db.exists(), "a missing database is not created");
    assert!(!output.exists(), "nothing written");

    std::fs::write(&db, b"").unwrap();
    refused(&url, &output, "has no holdfast schema");
    assert!(!output.exists(), "nothing written");
    std::fs::remove_file(&db).unwrap();

    let (ok, _, stderr) = holdfast(&url, &["migrate"]);
    assert!(ok, "{stderr}");
    std::fs::write(&output, b"keep me").unwrap();
    refused(&url, &output, "exists: a backup never overwrites a file");
    assert_eq!(std::fs::read(&output).unwrap(), b"keep me");
}

/// `serve` on `url` with a few writes through the API (2 accounts, 3 top-ups each), then
/// `signal` (TERM, INT): it exits 0 and logs `database closed`.
async fn write_then_stop(url: &str, signal: &str) {
    let serving = Serving::spawn(url, &[], Some(ADMIN));
    let base = format!("http://{}", listen_address(&serving.until("listening on")));
    let client = Client::new(&base, ADMIN, Duration::from_secs(10));
    for account in ["kept-a", "kept-b"] {
        let path = format!("/v1/accounts/{account}");
        let plan = json!({"plan": "free"});
        client.expect(Method::PUT, &path, plan, &[201]).await;
        for n in 0..3 {
            let body = json!({"amount": "1.00", "idempotency_key": format!("{account}-{n}")});
            let path = format!("/v1/accounts/{account}/top-ups");
            client.expect(Method::POST, &path, body, &[201]).await;
        }
    }
    let (status, lines) = serving.stop_with(signal);
    assert!(status.success(), "serve exits 0: {lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains("database closed")),
        "{lines:#?}"
    );
}

/// The accounts and top-up entries of the database at `url`.
async fn written(url: &str) -> (i64, i64) {
    let accounts = counts(url, "SELECT 'accounts', count(*) FROM accounts").await;
    let top_ups = counts(
        url,
        "SELECT kind, count(*) FROM ledger WHERE kind = 'top_up' GROUP BY kind",
    )
    .await;
    (
        accounts["accounts"],
        top_ups.get("top_up").copied().unwrap_or(0),
    )
}

holdfast::backend_test!(
    serve_checkpoints_and_closes_the_database_when_stopped,
    |backend| async move {
        let Some(db) = TestDb::empty(backend).await else {
            return;
        };
        write_then_stop(&db.url, "TERM").await;
        if backend == Backend::Sqlite {
            assert_main_file_alone_holds_everything(&db.url).await;
        }
        assert_eq!(written(&db.url).await, (2, 6));
    }
);

/// After the stop: no `-wal` left (or an empty one), and a copy of the main file alone,
/// in a directory of its own, holds every write; `holdfast backup` of the stopped
/// database too.
async fn assert_main_file_alone_holds_everything(url: &str) {
    let file = Path::new(url.strip_prefix("sqlite://").unwrap());
    let wal = file.with_file_name(format!(
        "{}-wal",
        file.file_name().unwrap().to_str().unwrap()
    ));
    let wal_bytes = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert_eq!(wal_bytes, 0, "{} keeps {wal_bytes} bytes", wal.display());

    let elsewhere = tempfile::tempdir().unwrap();
    let copied = elsewhere.path().join("copied.db");
    std::fs::copy(file, &copied).unwrap();
    let copied_url = format!("sqlite://{}", copied.display());
    assert_eq!(written(&copied_url).await, (2, 6), "the main file alone");

    let output = elsewhere.path().join("backup.db");
    let (ok, stdout, stderr) = holdfast(
        url,
        &["backup", "--json", "--output", output.to_str().unwrap()],
    );
    assert!(ok, "{stderr}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["accounts"], json!(2), "{printed:#}");
    let entries = counts(url, "SELECT 'entries', count(*) FROM ledger").await;
    assert_eq!(
        printed["ledger_entries"],
        json!(entries["entries"]),
        "{printed:#}"
    );
    let backup_url = format!("sqlite://{}", output.display());
    assert_eq!(written(&backup_url).await, (2, 6), "the backup");
}

/// Ctrl-C (SIGINT) stops `serve` the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serve_stopped_by_ctrl_c_leaves_the_main_file_whole() {
    let Some(db) = TestDb::empty(Backend::Sqlite).await else {
        return;
    };
    write_then_stop(&db.url, "INT").await;
    assert_main_file_alone_holds_everything(&db.url).await;
}
