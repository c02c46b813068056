//! `bench/pgbench.sh` works end to end at a tiny size: it creates a database, migrates it
//! with `holdfast migrate`, seeds it with `holdfast-bench seed`, runs pgbench on three
//! floors (`debit`, `debit-hot`, which is `debit.sql` on one account, and `lifecycle`,
//! from `bench/sql/`) and holdfast-bench on the same workloads, prints both, and drops the
//! database. No speed is asserted (speed lives in BENCHMARKS.md);
//! what is asserted is that every step ran and answered: pgbench processed transactions
//! of each script with none failed, and the bench's engine and floor sides ran.
//!
//! PostgreSQL only: pgbench talks to PostgreSQL, and the scripts are its floors. It needs
//! `pgbench` and `psql` (Debian's postgresql-15, which `.ci/run` installs), and the
//! `holdfast` binary (`cargo build -p holdfast-server`; `cargo test --workspace` builds
//! it; or `HOLDFAST_BIN`). Under `CI=true` a missing part fails the test; elsewhere it
//! skips with a loud message. About 10 s.

use std::path::{Path, PathBuf};
use std::process::Command;

fn admin_url() -> String {
    std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// Why the test cannot run here, if it cannot.
fn missing(holdfast: &Path) -> Option<String> {
    for tool in ["pgbench", "psql"] {
        let found = Command::new(tool).arg("--version").output();
        if !found.is_ok_and(|o| o.status.success()) {
            return Some(format!("{tool} is not installed"));
        }
    }
    if !holdfast.is_file() {
        return Some(format!(
            "{} is not built (cargo build -p holdfast-server)",
            holdfast.display()
        ));
    }
    let ready = Command::new("psql")
        .args([&admin_url(), "-Atc", "SELECT 1"])
        .output();
    if !ready.is_ok_and(|o| o.status.success()) {
        return Some(format!("PostgreSQL is unreachable at {}", admin_url()));
    }
    None
}

fn database_exists(name: &str) -> bool {
    let out = Command::new("psql")
        .args([
            &admin_url(),
            "-Atc",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        ])
        .output()
        .expect("psql runs");
    assert!(out.status.success(), "psql: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim() != "0"
}

/// The `ops` figure of the pgbench line of `floor` (`pgbench FLOOR  RATE /s  OPS ops …`).
fn pgbench_ops(stdout: &str, floor: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["pgbench", floor]))
        .unwrap_or_else(|| panic!("no pgbench line for {floor} in:\n{stdout}"));
    assert!(line.contains("failed 0 "), "{line}");
    assert!(line.contains("cpu per op: client "), "{line}");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "ops")
        .expect("an ops figure");
    words[at - 1].parse().expect("ops is a number")
}

#[test]
fn the_pgbench_script_runs_both_sides_and_drops_its_database() {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_holdfast-bench"));
    let bin = bench.parent().expect("a directory").to_path_buf();
    let holdfast = std::env::var_os("HOLDFAST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| bin.join("holdfast"));
    if let Some(why) = missing(&holdfast) {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "the pgbench script test needs its parts under CI: {why}"
        );
        eprintln!("\n*** SKIPPING the pgbench script test: {why}\n");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/pgbench.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("BIN", &bin)
        .env("HOLDFAST_BIN", &holdfast)
        .env("ADMIN_URL", admin_url())
        .env("FLOORS", "debit debit-hot lifecycle")
        .env("CLIENTS", "2")
        .env("SECONDS_PER_SIDE", "1")
        .env("ROUNDS", "1")
        .env("ACCOUNTS", "20")
        .env("BENCH_ARGS", "--warmup 0")
        .output()
        .expect("bash runs the script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pgbench.sh failed:\n{stdout}\n{stderr}"
    );
    // debit-hot: debit.sql on one account (bench/pgbench.sh maps it).
    for floor in ["debit", "debit-hot", "lifecycle"] {
        assert!(pgbench_ops(&stdout, floor) > 0, "{stdout}");
        assert!(
            stdout.contains(&format!("== {floor} on postgres ==")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("cpu per op: engine / floor = "), "{stdout}");
    assert!(!stdout.contains("first error"), "{stdout}");
    let name = stdout
        .split_whitespace()
        .skip_while(|w| *w != "database")
        .nth(1)
        .expect("the script names its database")
        .trim_end_matches(',');
    assert!(name.starts_with("holdfast_pgbench_"), "{name}");
    assert!(!database_exists(name), "{name} was not dropped");
}
