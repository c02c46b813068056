//! The `lifecycle-batched` workload runs end to end at a tiny size on SQLite (always) and
//! PostgreSQL (when reachable; under `CI=true` it must be): every side (engine-batched,
//! http-batched, single) completed operations without an error, and the audit after the
//! run is clean. No speed is asserted (speed lives in BENCHMARKS.md).

use std::process::Command;

fn admin_url() -> String {
    std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The bench's JSON for `lifecycle-batched` on `backend`, or why it could not run.
fn run(backend: &str) -> Result<serde_json::Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_holdfast-bench"))
        .args(["lifecycle-batched", "--backend", backend, "--admin-url"])
        .arg(admin_url())
        .args(["--clients", "2", "--seconds", "1", "--rounds", "1"])
        .args(["--warmup", "0", "--accounts", "10", "--json"])
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_str(&stdout).map_err(|e| format!("{e}: {stdout}"))
}

fn check(report: &serde_json::Value) {
    let outcome = &report["results"][0];
    assert_eq!(outcome["workload"], "lifecycle-batched", "{report:#}");
    let sides: Vec<&str> = outcome["sides"]
        .as_array()
        .expect("sides")
        .iter()
        .map(|s| {
            assert!(s["ops"].as_u64().unwrap() > 0, "{s:#}");
            assert_eq!(s["errors"], 0, "{s:#}");
            s["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(sides, ["engine-batched", "http-batched", "single"]);
    let note = outcome["note"].as_str().expect("a note");
    assert!(note.contains("batched / single = "), "{note}");
    assert!(note.ends_with("audit after: clean"), "{note}");
}

#[test]
fn lifecycle_batched_runs_on_sqlite() {
    check(&run("sqlite").unwrap());
}

#[test]
fn lifecycle_batched_runs_on_postgres() {
    match run("postgres") {
        Ok(report) => check(&report),
        Err(why) if why.contains("connect") || why.contains("Connection refused") => {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "PostgreSQL is needed under CI: {why}"
            );
            eprintln!("\n*** SKIPPING lifecycle-batched on PostgreSQL: {why}\n");
        }
        Err(why) => panic!("{why}"),
    }
}
