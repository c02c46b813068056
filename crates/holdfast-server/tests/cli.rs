//! The operator CLI, run as the built `holdfast` binary against a fresh database per test,
//! on SQLite and PostgreSQL. Only `audit_finds_a_corrupted_balance` touches the database
//! with SQL of its own, to break an invariant on purpose.

mod http_support;

use std::process::Command;

use holdfast::RateCard;
use holdfast::testing::{
    Backend, TestDb, behind_the_back, card_file, card_text_with, job_id, submit_req, worker,
};
use holdfast_server::config::redact_url;
use http_support::Serving;
use serde_json::Value;

/// One run of the binary.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// The binary against one database (and optionally a rate card file).
struct Cli {
    url: String,
    card: Option<std::path::PathBuf>,
}

impl Cli {
    async fn new(backend: Backend) -> Option<(TestDb, Cli)> {
        Some(Cli::on(TestDb::new(backend).await?))
    }

    /// As [`Cli::new`], on a database without any schema yet.
    async fn empty(backend: Backend) -> Option<(TestDb, Cli)> {
        Some(Cli::on(TestDb::empty(backend).await?))
    }

    fn on(db: TestDb) -> (TestDb, Cli) {
        let cli = Cli {
            url: db.url.clone(),
            card: None,
        };
        (db, cli)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_as(args, Some("ops-ada"))
    }

    /// [`Cli::run`] with `$USER` set to `user` (`None`: neither `$USER` nor `$LOGNAME`
    /// set).
    fn run_as(&self, args: &[&str], user: Option<&str>) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_holdfast"));
        cmd.args(args)
            .arg("--database")
            .arg(&self.url)
            .env_remove("HOLDFAST_DATABASE_URL")
            .env_remove("HOLDFAST_RATE_CARD")
            .env_remove("LOGNAME");
        match user {
            Some(user) => cmd.env("USER", user),
            None => cmd.env_remove("USER"),
        };
        if let Some(card) = &self.card {
            cmd.arg("--rate-card").arg(card);
        }
        finished(&mut cmd)
    }

    /// Runs and requires success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let r = self.run(args);
        assert!(r.ok, "holdfast {args:?} failed: {}", r.stderr);
        r.stdout
    }

    /// Runs with `--json`, requires success, parses stdout.
    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        let out = self.ok(&args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
    }

    /// Runs and requires a refusal: non-zero exit, one line on stderr with the code.
    fn refused(&self, args: &[&str], code: &str) -> String {
        let r = self.run(args);
        assert!(!r.ok, "holdfast {args:?} should fail, printed {}", r.stdout);
        assert_eq!(r.stderr.lines().count(), 1, "one line: {:?}", r.stderr);
        let prefix = format!("holdfast: {code}: ");
        assert!(r.stderr.starts_with(&prefix), "{args:?}: {:?}", r.stderr);
        r.stderr
    }

    /// `events` with `--json`, polled until it lists `n` events. On PostgreSQL an event
    /// shows only once every transaction older than it has ended, cluster-wide (the
    /// cursor must never skip a late commit), so a busy server makes readers wait.
    async fn events(&self, args: &[&str], n: usize) -> Value {
        let mut all = vec!["events"];
        all.extend_from_slice(args);
        for _ in 0..100 {
            let page = self.json(&all);
            if page["events"].as_array().unwrap().len() >= n {
                return page;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("{args:?} never listed {n} event(s)");
    }

    /// What a refusal must not change: the account and its ledger.
    fn snapshot(&self, account: &str) -> (Value, Value) {
        (
            self.json(&["account", "show", account]),
            self.json(&["ledger", account]),
        )
    }
}

/// Runs `cmd` to its end.
fn finished(cmd: &mut Command) -> Run {
    Run::of(cmd.output().expect("run holdfast"))
}

impl Run {
    fn of(out: std::process::Output) -> Run {
        Run {
            ok: out.status.success(),
            stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
        }
    }
}

/// The name of the OS account the tests run as, by `id -un` (not by the code under test).
fn os_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("run id -un");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn kinds(ledger: &Value) -> Vec<&str> {
    ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect()
}

holdfast::backend_test!(walk_through, |backend| async move {
    // The walk-through starts as an operator would, by migrating a new database.
    let Some((_db, cli)) = Cli::empty(backend).await else {
        return;
    };
    assert!(cli.ok(&["migrate"]).starts_with("migrated "));
    assert!(
        cli.ok(&["account", "put", "acme", "--plan", "free"])
            .starts_with("created account")
    );
    let out = cli.ok(&["top-up", "acme", "10", "--key", "t1"]);
    assert!(
        out.starts_with("top_up #") && out.contains("+10.00 on acme"),
        "{out}"
    );
    let out = cli.ok(&["debit", "acme", "2.5", "--key", "d1", "--job-ref", "run-7"]);
    assert!(
        out.contains("-2.50 on acme") && out.contains("balance 7.50"),
        "{out}"
    );
    // 30 s of linux-small at 0.0001/s = 0.003
    let out = cli.ok(&[
        "debit",
        "acme",
        "--meter",
        "linux-small",
        "--seconds",
        "30",
        "--key",
        "d2",
    ]);
    assert!(
        out.contains("-0.003") && out.contains("balance 7.497"),
        "{out}"
    );
    let out = cli.ok(&["refund", "acme", "--top-up-key", "t1", "5", "--key", "r1"]);
    assert!(
        out.starts_with("refund #") && out.contains("balance 2.497"),
        "{out}"
    );

    let ledger = cli.ok(&["ledger", "acme"]);
    assert!(ledger.starts_with("ENTRY"), "{ledger}");
    for needle in ["top_up", "+10.00", "run-7", "-0.003", "refund", "-5.00"] {
        assert!(ledger.contains(needle), "ledger lacks {needle}: {ledger}");
    }
    let page = cli.json(&["ledger", "acme"]);
    assert_eq!(
        kinds(&page),
        ["refill", "refill", "top_up", "debit", "debit", "refund"]
    );
    let last = &page["entries"][5];
    assert_eq!(last["amount_after"], "2.497");
    assert_eq!(last["delta_micros"], -5_000_000);
    assert_eq!(page["next"], last["entry_id"]);
    let after = last["entry_id"].as_i64().unwrap().to_string();
    assert_eq!(
        kinds(&cli.json(&["ledger", "acme", "--after", &after])).len(),
        0
    );
    let two = cli.json(&["ledger", "acme", "--limit", "2"]);
    assert_eq!(kinds(&two), ["refill", "refill"]);

    let account = cli.json(&["account", "show", "acme"]);
    assert_eq!(account["balance"], "2.497");
    assert_eq!(account["balance_micros"], 2_497_000);
    assert_eq!(account["total_credited"], "10.00");
    assert_eq!(account["total_spent"], "2.503");
    assert!(
        cli.ok(&["account", "show", "acme"])
            .contains("balance         2.497")
    );

    // As it stood: after the first top-up's entry, before everything since.
    let top_up = &page["entries"][2];
    let at = top_up["created_at"].as_str().unwrap();
    let then = cli.json(&["account", "show", "acme", "--at", at]);
    assert_eq!(
        (&then["balance"], &then["last_entry_id"]),
        (&top_up["amount_after"], &top_up["entry_id"]),
        "{then:#}"
    );
    assert_eq!(then["held"], "0.00");
    let text = cli.ok(&["account", "show", "acme", "--at", at]);
    let balance = text
        .lines()
        .map(str::split_whitespace)
        .find_map(|mut words| (words.next() == Some("balance")).then(|| words.next()));
    assert_eq!(balance, Some(Some("10.00")), "{text}");
    cli.refused(
        &["account", "show", "acme", "--at", "soon"],
        "invalid_request",
    );

    let statement = cli.json(&["statement", "acme"]);
    assert_eq!(statement["opening_balance"], "0.00");
    assert_eq!(statement["closing_balance"], "2.497");
    let changes: Vec<(&str, &str)> = (statement["changes"].as_array().unwrap().iter())
        .map(|l| (l["kind"].as_str().unwrap(), l["amount"].as_str().unwrap()))
        .collect();
    assert_eq!(
        changes,
        [
            ("debit", "-2.503"),
            ("refund", "-5.00"),
            ("top_up", "10.00")
        ]
    );
    let text = cli.ok(&["statement", "acme"]);
    assert!(text.contains("closing") && text.contains("2.497"), "{text}");
    assert_eq!(
        statement["spending_by_meter"][0],
        serde_json::json!({ "meter": "linux-small", "entries": 1, "seconds": 30,
                            "amount": "0.003", "amount_micros": 3000 })
    );
    assert!(
        text.contains("spent by meter") && text.contains("linux-small"),
        "{text}"
    );
    let csv = cli.ok(&["statement", "acme", "--csv"]);
    assert!(
        csv.starts_with("section,name,entries,amount,amount_micros,seconds\n"),
        "{csv}"
    );
    assert!(csv.contains("\nclosing,,,2.497,2497000,\n"), "{csv}");
    let later = cli.json(&[
        "statement",
        "acme",
        "--from",
        "2999-01-01T00:00:00Z",
        "--to",
        "2999-02-01T00:00:00Z",
    ]);
    assert_eq!(later["opening_balance"], "2.497");
    assert_eq!(later["changes"], serde_json::json!([]));
    cli.refused(
        &[
            "statement",
            "acme",
            "--from",
            "2999-01-01T00:00:00Z",
            "--to",
            "2000-01-01T00:00:00Z",
        ],
        "invalid_request",
    );
    cli.refused(&["statement", "nobody"], "account_not_found");

    let put = ["account", "put", "acme", "--plan", "free"];
    let with = [
        &put[..],
        &["--recharge-below", "1", "--recharge-amount", "5"],
    ]
    .concat();
    assert_eq!(cli.json(&with)["account"]["recharge"]["amount"], "5.00");
    assert!(
        cli.ok(&["account", "show", "acme"])
            .contains("5.00 below 1.00")
    );
    assert_eq!(
        cli.json(&put)["account"]["recharge"]["below_micros"],
        1_000_000,
        "kept"
    );
    let without = [&put[..], &["--no-recharge"]].concat();
    assert_eq!(cli.json(&without)["account"]["recharge"], Value::Null);

    let rule = [
        "--spend-limit",
        "50",
        "--spend-alert",
        "80%",
        "--spend-alert",
        "2.00",
    ];
    let spend = cli.json(&[&put[..], &rule[..]].concat())["account"]["spend"].clone();
    assert_eq!(spend["limit"], "50.00");
    assert_eq!(spend["alerts"], serde_json::json!(["80%", "2.00"]));
    assert_eq!(spend["period"], "month");
    let shown = cli.ok(&["account", "show", "acme"]);
    assert!(shown.contains("this month of limit 50.00"), "{shown}");
    assert!(shown.contains("alerts 80%, 2.00; its own"), "{shown}");
    cli.refused(
        &[&put[..], &["--spend-alert", "80%"]].concat(),
        "invalid_request",
    );
    cli.refused(
        &[&put[..], &["--spend-period", "week"]].concat(),
        "invalid_request",
    );
    cli.refused(
        &[&put[..], &["--spend-timezone", "Mars/Olympus"]].concat(),
        "invalid_request",
    );
    let zoned = [&put[..], &rule[..], &["--spend-timezone", "Europe/Berlin"]].concat();
    let zoned = cli.json(&zoned)["account"]["spend"].clone();
    assert_eq!(zoned["timezone"], "Europe/Berlin");
    let shown = cli.ok(&["account", "show", "acme"]);
    assert!(
        shown.contains("this month in Europe/Berlin of limit"),
        "{shown}"
    );
    let dropped = cli.json(&[&put[..], &["--no-spend"]].concat());
    assert_eq!(dropped["account"]["spend"], Value::Null);

    let audit = cli.run(&["audit"]);
    assert!(audit.ok, "audit: {} {}", audit.stdout, audit.stderr);
    assert!(audit.stdout.contains("clean"), "{}", audit.stdout);
});

holdfast::backend_test!(refusals_change_nothing, |backend| async move {
    let Some((_db, cli)) = Cli::new(backend).await else {
        return;
    };
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    cli.ok(&["top-up", "acme", "10", "--key", "t1"]);
    let before = cli.snapshot("acme");

    let e = cli.refused(
        &["debit", "acme", "1.0000001", "--key", "d1"],
        "invalid_request",
    );
    assert!(
        e.contains("\"1.0000001\"") && e.contains("more than 6 decimal places"),
        "{e}"
    );
    let e = cli.refused(&["top-up", "acme", "-5", "--key", "d1"], "invalid_request");
    assert!(e.contains("plain decimal"), "{e}");
    cli.refused(
        &["top-up", "nobody", "5", "--key", "t9"],
        "account_not_found",
    );
    cli.refused(&["account", "show", "nobody"], "account_not_found");
    cli.refused(
        &["account", "put", "bad id", "--plan", "free"],
        "invalid_request",
    );
    cli.refused(
        &["account", "put", "acme", "--plan", "gold"],
        "unknown_plan",
    );
    let e = cli.refused(
        &[
            "account",
            "put",
            "acme",
            "--plan",
            "free",
            "--plan-until",
            "soon",
        ],
        "invalid_request",
    );
    assert!(e.contains("--plan-until") && e.contains("RFC 3339"), "{e}");
    let e = cli.refused(
        &[
            "debit",
            "acme",
            "--meter",
            "nope",
            "--seconds",
            "3",
            "--key",
            "d1",
        ],
        "unknown_meter",
    );
    assert!(e.contains("\"nope\""), "{e}");
    cli.refused(
        &[
            "debit",
            "acme",
            "--meter",
            "linux-small",
            "--seconds",
            "0",
            "--key",
            "d1",
        ],
        "invalid_request",
    );
    cli.refused(
        &["top-up", "acme", "11", "--key", "t1"],
        "idempotency_mismatch",
    );
    cli.refused(
        &["debit", "acme", "1", "--key", "t1"],
        "idempotency_mismatch",
    );
    cli.refused(
        &["debit", "acme", "11.000001", "--key", "d1"],
        "insufficient_funds",
    );
    cli.refused(
        &["refund", "acme", "--top-up-key", "nope", "1", "--key", "r1"],
        "top_up_not_found",
    );
    cli.refused(
        &[
            "refund",
            "acme",
            "--top-up-key",
            "t1",
            "10.01",
            "--key",
            "r1",
        ],
        "refund_exceeds_top_up",
    );
    cli.refused(&["jobs", "--lane", "nope"], "unknown_lane");
    assert_eq!(cli.snapshot("acme"), before, "a refusal changed something");

    // A repeat of the same top-up is a replay: success, nothing changes.
    let replay = cli.json(&["top-up", "acme", "10", "--key", "t1"]);
    assert_eq!(replay["replay"], true);
    assert!(
        cli.ok(&["top-up", "acme", "10", "--key", "t1"])
            .contains("replay")
    );
    assert_eq!(cli.snapshot("acme"), before, "a replay changed something");

    // A usage error is clap's: non-zero, nothing changed.
    assert!(
        !cli.run(&[
            "debit",
            "acme",
            "1",
            "--meter",
            "linux-small",
            "--seconds",
            "3",
            "--key",
            "x"
        ])
        .ok
    );
    assert!(!cli.run(&["ledger", "acme", "--limit", "1001"]).ok);
    assert_eq!(cli.snapshot("acme"), before);
});

holdfast::backend_test!(json_output_parses, |backend| async move {
    let Some((_db, cli)) = Cli::new(backend).await else {
        return;
    };
    assert_eq!(cli.json(&["migrate"])["migrated"], true);
    let put = cli.json(&[
        "account",
        "put",
        "acme",
        "--plan",
        "premium",
        "--plan-until",
        "2999-01-01T00:00:00Z",
        "--max-concurrent-jobs",
        "3",
    ]);
    assert_eq!(put["created"], true);
    assert_eq!(put["account"]["plan_until"], "2999-01-01T00:00:00.000000Z");
    assert_eq!(put["account"]["max_concurrent_jobs"], 3);
    assert_eq!(
        put["account"]["allowances"]["daily_images"]["remaining"],
        10
    );
    let put = cli.json(&["account", "put", "acme", "--plan", "free"]);
    assert_eq!(put["created"], false);
    assert_eq!(put["account"]["plan_until"], Value::Null);

    let bonus = cli.json(&["top-up", "acme", "0.000250", "--key", "b1", "--bonus"]);
    assert_eq!(bonus["entry"]["kind"], "bonus");
    assert_eq!(bonus["entry"]["delta"], "0.00025");
    assert_eq!(bonus["account"]["balance_micros"], 250);
    cli.refused(
        &[
            "refund",
            "acme",
            "--top-up-key",
            "b1",
            "0.0001",
            "--key",
            "r1",
        ],
        "not_refundable",
    );
    let debit = cli.json(&["debit", "acme", "1.00025", "--key", "d1"]);
    assert_eq!(debit["account"]["balance"], "-1.00");
    assert!(
        debit["account"]["suspended_at"].is_string(),
        "went negative: suspended"
    );

    let blocked = cli.json(&["account", "block", "acme"]);
    assert!(blocked["blocked_at"].as_str().unwrap().ends_with('Z'));
    assert!(
        cli.ok(&["account", "show", "acme"])
            .contains("blocked since")
    );
    assert_eq!(
        cli.json(&["account", "unblock", "acme"])["blocked_at"],
        Value::Null
    );

    let events = cli
        .events(&["--account", "acme", "--type", "account.suspended"], 1)
        .await;
    assert_eq!(events["events"].as_array().unwrap().len(), 1);
    assert_eq!(events["events"][0]["data"]["balance_micros"], -1_000_000);
    assert_eq!(events["next"], events["events"][0]["event_id"]);
    assert!(cli.ok(&["events"]).contains("account.suspended"));
    assert_eq!(cli.json(&["jobs"])["jobs"], Value::Array(vec![]));
    assert_eq!(cli.json(&["sweep"])["processed"], 0);
    assert_eq!(cli.json(&["notices"])["processed"], 0);
    let audit = cli.json(&["audit"]);
    assert_eq!(audit["ok"], true);
    assert_eq!(audit["violations"], Value::Array(vec![]));
});

holdfast::backend_test!(audit_finds_a_corrupted_balance, |backend| async move {
    let Some((db, cli)) = Cli::new(backend).await else {
        return;
    };
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    cli.ok(&["top-up", "acme", "10", "--key", "t1"]);
    assert!(cli.run(&["audit"]).ok);
    corrupt_balance(&db, "acme").await;

    let r = cli.run(&["audit"]);
    assert!(
        !r.ok,
        "audit must fail on a corrupted balance: {}",
        r.stdout
    );
    assert!(r.stdout.starts_with("INVARIANT"), "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("1 ") && l.contains("acme")),
        "{}",
        r.stdout
    );
    let last = r.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("holdfast: audit: ") && last.contains("violation"),
        "{}",
        r.stderr
    );

    let r = cli.run(&["audit", "--json"]);
    assert!(!r.ok);
    let audit: Value = serde_json::from_str(&r.stdout).expect("audit --json parses");
    assert_eq!(audit["ok"], false);
    let violations = audit["violations"].as_array().unwrap();
    assert!(
        violations
            .iter()
            .any(|v| v["invariant"] == 1 && v["account_id"] == "acme"),
        "{violations:?}"
    );
    // Money as money, no Rust debug text (was `stored 11000000, … Some(10000000)`).
    let message = "pocket money: stored 11.00, ledger sum 10.00, last entry's amount_after 10.00";
    assert!(
        violations.iter().any(|v| v["message"] == message),
        "{violations:?}"
    );
    assert!(r.stdout.contains(message), "{}", r.stdout);
});

/// The one place a test writes SQL: a balance that no ledger entry explains.
async fn corrupt_balance(db: &TestDb, account: &str) {
    let sql =
        format!("UPDATE accounts SET balance = balance + 1000000 WHERE account_id = '{account}'");
    behind_the_back(db, &sql).await;
}

holdfast::backend_test!(jobs_and_passes, |backend| async move {
    let Some((db, mut cli)) = Cli::new(backend).await else {
        return;
    };
    // A card whose notice is due at once, shared by the binary and the store.
    let text = card_text_with(&[("notice_delay_seconds = 5 ", "notice_delay_seconds = 0 ")]);
    let file = card_file(&text);
    cli.card = Some(file.path().to_owned());
    let store = db.store(RateCard::parse(&text).unwrap()).await;

    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    let job = store
        .submit(&submit_req("acme", "image", "j1"))
        .await
        .unwrap()
        .job;

    let listed = cli.json(&["jobs", "--status", "queued", "--lane", "image"]);
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(listed["jobs"][0]["job_id"], job.job_id.as_str());
    assert_eq!(listed["jobs"][0]["hold"][0]["pocket"], "daily_images");
    assert_eq!(
        cli.json(&["jobs", "--status", "succeeded"])["jobs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        cli.json(&["jobs", "--lane", "text"])["jobs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert!(cli.ok(&["jobs", "--account", "acme"]).contains(&job.job_id));

    assert_eq!(cli.json(&["notices"])["processed"], 1);
    let waiting = cli.events(&["--type", "job.waiting"], 1).await;
    assert_eq!(waiting["events"][0]["job_id"], job.job_id.as_str());
    assert_eq!(
        cli.json(&["notices"])["processed"],
        0,
        "a notice is said once"
    );

    store
        .lease("image", &worker(), 1)
        .await
        .unwrap()
        .expect("a lease");
    tokio::time::sleep(std::time::Duration::from_millis(1_300)).await;
    let r = cli.run(&["sweep"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stdout.contains("sweep: 1 job(s) expired"), "{}", r.stdout);
    assert!(
        r.stderr.contains("sweep: 1 processed"),
        "plain progress off a terminal: {}",
        r.stderr
    );
    let expired = cli.json(&["jobs", "--status", "expired"]);
    assert_eq!(expired["jobs"][0]["job_id"], job.job_id.as_str());
    assert_eq!(expired["jobs"][0]["charged"], Value::Array(vec![]));
    let account = cli.json(&["account", "show", "acme"]);
    assert_eq!(
        account["allowances"]["daily_images"]["held"], 0,
        "hold released"
    );
    assert_eq!(
        account["allowances"]["daily_images"]["remaining"], 3,
        "nothing charged"
    );
    let expired = cli.events(&["--type", "job.expired"], 1).await;
    assert_eq!(expired["events"][0]["job_id"], job.job_id.as_str());
    assert_eq!(expired["events"].as_array().unwrap().len(), 1);
    assert!(cli.run(&["audit"]).ok);
});

holdfast::backend_test!(prune_by_hand, |backend| async move {
    let Some((db, cli)) = Cli::new(backend).await else {
        return;
    };
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    for k in ["t1", "t2", "t3"] {
        cli.ok(&["top-up", "acme", "1.00", "--key", k]);
    }
    // Two submits' key records 31 days old, past the default 30-day window (the jobs
    // themselves long gone); the top-ups' keys are on their entries, kept for good.
    let month = 31 * 86_400_000_000i64;
    db.execute(
        "INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
         VALUES ('acme', 's1', 'submit', 'h', NULL, 'job-s1', 1000000), \
                ('acme', 's2', 'submit', 'h', NULL, 'job-s2', 1000000)",
    )
    .await;
    db.execute(&format!(
        "UPDATE ledger SET created_at = created_at - {month} WHERE idempotency_key IN ('t1', 't2')"
    ))
    .await;
    let ledger = cli.json(&["ledger", "acme"]);
    let r = cli.run(&["prune"]);
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("prune: 2 idempotency record(s), 0 finished job(s)"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("prune: 2 processed"), "{}", r.stderr);
    let again = cli.json(&["prune"]);
    assert_eq!(
        again,
        serde_json::json!({"idempotency": 0, "jobs": 0, "webhook_deliveries": 0, "events": 0})
    );
    assert_eq!(cli.json(&["ledger", "acme"]), ledger, "the ledger is whole");
    assert!(cli.run(&["audit"]).ok, "the audit stays clean");
    // t1, a month old, still replays, as t3 does.
    let t1 = cli.json(&["top-up", "acme", "1.00", "--key", "t1"]);
    let t3 = cli.json(&["top-up", "acme", "1.00", "--key", "t3"]);
    assert_eq!(t1["account"]["balance"], "3.00");
    assert_eq!(t3["account"]["balance"], "3.00");
    assert_eq!(t1["replay"], true);
    let refused = cli.run(&["prune", "--max", "0"]);
    assert!(!refused.ok, "--max 0 is refused");
});

holdfast::backend_test!(
    ingest_a_file_refused_lines_kept_and_a_rerun_replays,
    |backend| async move {
        let Some((_db, cli)) = Cli::new(backend).await else {
            return;
        };
        cli.ok(&["account", "put", "a", "--plan", "free"]);
        cli.ok(&["top-up", "a", "1.00", "--key", "t"]);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("usage.jsonl");
        let mut lines: Vec<String> = (0..25)
            .map(|i| {
                format!(r#"{{"account_id": "a", "amount": "0.10", "idempotency_key": "d{i}"}}"#)
            })
            .collect();
        lines.insert(
            3,
            r#"{"account_id": "nobody", "amount": "0.10", "idempotency_key": "x"}"#.into(),
        );
        lines.insert(5, "not json".into());
        lines.insert(7, String::new());
        lines.push(r#"{"account_id": "a", "usage": {"meter": "nope", "seconds": 1}, "idempotency_key": "m"}"#.into());
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let path = file.to_str().unwrap();
        // Batches of 4: 1.00 of balance and 1.00 of buffer take 20 of the 25 debits.
        let r = cli.run(&["ingest", path, "--batch", "4", "--json"]);
        assert!(!r.ok, "refused lines make the exit non-zero");
        let out: Value = serde_json::from_str(&r.stdout).expect(&r.stdout);
        assert_eq!(out["lines"], 28);
        assert_eq!(out["applied"], 20);
        assert_eq!(out["replayed"], 0);
        assert_eq!(out["refused"], 8);
        assert_eq!(out["refused_by_code"]["insufficient_funds"], 5);
        assert_eq!(out["refused_by_code"]["account_not_found"], 1);
        assert_eq!(out["refused_by_code"]["invalid_request"], 1);
        assert_eq!(out["refused_by_code"]["unknown_meter"], 1);
        assert!(
            r.stderr.contains("line 6: invalid_request: "),
            "{}",
            r.stderr
        );
        let refused_file = dir.path().join("usage.refused.jsonl");
        assert_eq!(out["refused_file"], refused_file.to_str().unwrap());
        let refused = std::fs::read_to_string(&refused_file).unwrap();
        let refused: Vec<&str> = refused.lines().collect();
        assert_eq!(refused.len(), 8);
        assert_eq!(
            refused[1], "not json",
            "lines are kept as they were, in order"
        );
        assert_eq!(
            kinds(&cli.json(&["ledger", "a"]))
                .iter()
                .filter(|k| **k == "debit")
                .count(),
            20
        );
        // Run again: the applied lines replay, nothing is charged twice.
        let r = cli.run(&[
            "ingest",
            path,
            "--batch",
            "10",
            "--json",
            "--refused",
            dir.path().join("again.jsonl").to_str().unwrap(),
        ]);
        let again: Value = serde_json::from_str(&r.stdout).expect(&r.stdout);
        assert_eq!(
            (again["applied"].as_u64(), again["replayed"].as_u64()),
            (Some(0), Some(20))
        );
        assert_eq!(cli.json(&["account", "show", "a"])["balance"], "-1.00");
        let out = cli.ok(&["audit"]);
        assert!(out.contains("clean"), "{out}");
        // A file that is all good exits 0 and writes no refused file.
        let good = dir.path().join("good.jsonl");
        std::fs::write(
            &good,
            r#"{"account_id": "a", "amount": "0.10", "idempotency_key": "d0"}"#,
        )
        .unwrap();
        let out = cli.ok(&["ingest", good.to_str().unwrap()]);
        assert!(
            out.starts_with("ingest: 1 line(s): 0 applied, 1 replayed, 0 refused"),
            "{out}"
        );
        assert!(!dir.path().join("good.refused.jsonl").exists());
    }
);

holdfast::backend_test!(refund_a_job_and_grant_allowance, |backend| async move {
    let Some((db, cli)) = Cli::new(backend).await else {
        return;
    };
    let store = db.store(RateCard::builtin()).await;
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    let job = store
        .submit(&submit_req("acme", "image", "j1"))
        .await
        .unwrap()
        .job;
    let l = store.lease("image", &worker(), 60).await.unwrap().unwrap();
    store
        .complete(&job_id(&job.job_id), &l.lease_token, None)
        .await
        .unwrap();
    let id = job.job_id.as_str();
    cli.refused(
        &["refund-job", id, "0.5", "--reason", "blank", "--key", "r"],
        "invalid_request",
    );
    cli.refused(
        &["refund-job", "nope", "--reason", "blank", "--key", "r"],
        "job_not_found",
    );
    let r = cli.json(&["refund-job", id, "--reason", "blank", "--key", "r"]);
    assert_eq!(r["entries"][0]["kind"], "job_refund");
    assert_eq!(
        r["entries"][0]["actor"],
        format!("cli:{}", os_user()),
        "the OS user who ran it"
    );
    assert_eq!(r["job"]["refunded"][0]["amount"], 1);
    assert_eq!(r["account"]["allowances"]["daily_images"]["remaining"], 3);
    let again = cli.ok(&["refund-job", id, "--reason", "blank", "--key", "r"]);
    assert!(again.contains("a replay"), "{again}");
    cli.refused(
        &["refund-job", id, "--reason", "blank", "--key", "r2"],
        "refund_exceeds_charge",
    );

    cli.refused(
        &[
            "grant",
            "acme",
            "daily_images",
            "two",
            "--reason",
            "x",
            "--key",
            "g",
        ],
        "invalid_request",
    );
    let text = cli.ok(&[
        "grant",
        "acme",
        "daily_images",
        "2",
        "--reason",
        "outage",
        "--key",
        "g",
    ]);
    assert!(
        text.contains("grant #") && text.contains("+2 on acme"),
        "{text}"
    );
    let a = cli.json(&["account", "show", "acme"]);
    assert_eq!(a["allowances"]["daily_images"]["remaining"], 5);
    assert!(cli.run(&["audit"]).ok);
});

holdfast::backend_test!(list_accounts_and_ban_one, |backend| async move {
    let Some((_db, cli)) = Cli::new(backend).await else {
        return;
    };
    for id in ["acme-1", "acme-2", "zeta"] {
        cli.ok(&["account", "put", id, "--plan", "free"]);
    }
    let page = cli.json(&["accounts", "--prefix", "acme", "--limit", "1"]);
    assert_eq!(page["accounts"][0]["account_id"], "acme-1");
    assert_eq!(page["next"], "acme-1");
    let text = cli.ok(&["accounts", "--after", "acme-1"]);
    assert!(
        text.contains("acme-2") && text.contains("zeta") && !text.contains("acme-1 "),
        "{text}"
    );
    let banned = cli.ok(&["account", "ban", "zeta", "--reason", "abuse"]);
    assert!(
        banned.contains("banned; 0 queued job(s) canceled"),
        "{banned}"
    );
    let listed = cli.json(&["accounts", "--status", "banned"]);
    assert_eq!(listed["accounts"].as_array().unwrap().len(), 1);
    assert_eq!(listed["accounts"][0]["account_id"], "zeta");
    cli.refused(&["debit", "zeta", "0.10", "--key", "d"], "account_banned");
    cli.ok(&["account", "unban", "zeta"]);
    assert_eq!(
        cli.json(&["accounts", "--status", "banned"])["accounts"],
        Value::Array(vec![])
    );
    assert!(cli.run(&["audit"]).ok);
});

holdfast::backend_test!(export_the_books_to_a_file, |backend| async move {
    let Some((_db, cli)) = Cli::new(backend).await else {
        return;
    };
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    cli.ok(&["top-up", "acme", "10.00", "--key", "t"]);
    for i in 0..5 {
        cli.ok(&[
            "debit",
            "acme",
            "0.25",
            "--key",
            &format!("d{i}"),
            "--job-ref",
            "run, \"9\"",
        ]);
    }
    let metered = ["--meter", "linux-small", "--seconds", "30", "--key", "m"];
    let m = cli.json(&[&["debit", "acme"][..], &metered].concat());
    let entry = &m["entry"];
    let metered_entry = (&entry["meter"], &entry["seconds"]);
    assert_eq!(
        metered_entry,
        (&serde_json::json!("linux-small"), &serde_json::json!(30))
    );
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("books.csv");
    let csv_file = csv_path.to_str().unwrap();
    let done = cli.json(&["export", "--kind", "debit", "--output", csv_file]);
    assert_eq!(done["exported"], 6);
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "a header and six rows: {text}");
    assert!(lines[0].starts_with("entry_id,created_at,account_id"));
    assert!(
        lines[0].ends_with(",ref,actor,meter,seconds"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(",money,debit,-0.25,-250000,")
            && lines[1].ends_with(&format!(r#""run, ""9""",cli:{},,"#, os_user())),
        "{}",
        lines[1]
    );
    assert!(lines[6].ends_with(",linux-small,30"), "{}", lines[6]);
    let jsonl = cli.run(&["export", "--format", "jsonl", "--account", "acme"]);
    assert!(jsonl.ok, "{}", jsonl.stderr);
    let entries: Vec<Value> = jsonl
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ledger = cli.json(&["ledger", "acme"]);
    assert_eq!(entries.len(), ledger["entries"].as_array().unwrap().len());
    assert_eq!(
        entries[entries.len() - 1],
        ledger["entries"][entries.len() - 1]
    );
    cli.refused(&["export", "--kind", "gift"], "invalid_request");
    cli.refused(&["export", "--since", "yesterday"], "invalid_request");
});

// ---------------------------------------------------------------- safety for people

/// What `holdfast migrate` makes: the tables of the database (SQLite: whether its file
/// is there at all).
async fn has_tables(db: &TestDb) -> bool {
    match db.backend {
        Backend::Sqlite => std::path::Path::new(db.url.trim_start_matches("sqlite://")).exists(),
        Backend::Postgres => {
            let sql = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()";
            db.query_i64(sql).await > 0
        }
    }
}

/// Requires a failure of one line on stderr, and returns that line.
#[track_caller]
fn one_line_failure(r: &Run) -> &str {
    assert!(!r.ok, "should fail, printed {}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "one line: {:?}", r.stderr);
    r.stderr.trim_end()
}

holdfast::backend_test!(
    commands_refuse_a_database_without_the_schema,
    |backend| async move {
        let Some((db, cli)) = Cli::empty(backend).await else {
            return;
        };
        let expected = format!(
            "holdfast: no holdfast database at {}; run `holdfast migrate`",
            redact_url(&db.url)
        );
        for args in [
            &["accounts"][..],
            &["key", "create", "--role", "admin"],
            &["key", "list"],
            &["ledger", "acme"],
            &["top-up", "acme", "5", "--key", "t1"],
            &["audit"],
        ] {
            let r = cli.run(args);
            assert_eq!(one_line_failure(&r), expected, "{args:?}");
            assert!(r.stdout.is_empty(), "{args:?} printed {}", r.stdout);
        }
        assert!(
            !has_tables(&db).await,
            "a refused command created the schema"
        );

        assert!(cli.ok(&["migrate"]).starts_with("migrated "));
        let r = cli.run(&["key", "create", "--role", "admin"]);
        assert!(r.ok, "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!(" in {} (shown once", redact_url(&db.url))),
            "key create names the database it wrote to: {}",
            r.stderr
        );
        cli.ok(&["accounts"]);

        // A schema older than the binary's is refused too, until `holdfast migrate`.
        let newest = "DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)";
        behind_the_back(&db, newest).await;
        let r = cli.run(&["accounts"]);
        let line = one_line_failure(&r);
        assert!(
            line.starts_with(&format!(
                "holdfast: the holdfast database at {}: the schema is older",
                redact_url(&db.url)
            )) && line.ends_with("; run `holdfast migrate`"),
            "{line}"
        );
        // A newer one (a migration this binary does not know) is refused, not migrated.
        let checksum = match backend {
            Backend::Sqlite => "X'00'",
            Backend::Postgres => "'\\x00'::bytea",
        };
        let future = format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99990101000000, 'future', true, {checksum}, 0)"
        );
        behind_the_back(&db, &future).await;
        let r = cli.run(&["accounts"]);
        let line = one_line_failure(&r);
        assert!(
            line.contains(": the schema is newer than this holdfast's (migration 99990101000000, ")
                && line.ends_with("; use the holdfast that migrated it"),
            "{line}"
        );
    }
);

#[test]
fn a_refused_postgres_connection_is_named_at_once() {
    // Nothing listens on port 1: the connection is refused. Said so, naming the host and
    // port, not "pool timed out" after the acquire timeout; the password never printed.
    let cli = Cli {
        url: "postgres://holdfast:s3cret@127.0.0.1:1/holdfast".into(),
        card: None,
    };
    let r = cli.run(&["accounts"]);
    let line = one_line_failure(&r);
    assert!(
        line.contains("cannot connect to PostgreSQL at 127.0.0.1:1: Connection refused"),
        "{line}"
    );
    assert!(!line.contains("s3cret"), "{line}");
    assert!(
        line.contains("postgres://holdfast:***@127.0.0.1:1/holdfast"),
        "{line}"
    );
}

holdfast::backend_test!(the_actor_is_the_os_account, |backend| async move {
    let Some((_db, cli)) = Cli::new(backend).await else {
        return;
    };
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    let os = format!("cli:{}", os_user());
    for (n, user) in [None, Some("someone-else")].into_iter().enumerate() {
        let key = format!("t{n}");
        let r = cli.run_as(&["top-up", "acme", "1", "--key", &key, "--json"], user);
        assert!(r.ok, "{}", r.stderr);
        let answer: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(answer["entry"]["actor"], os.as_str(), "$USER = {user:?}");
    }
});

holdfast::backend_test!(
    a_next_page_is_offered_only_when_there_is_one,
    |backend| async move {
        let Some((_db, cli)) = Cli::new(backend).await else {
            return;
        };
        cli.ok(&["account", "put", "acme", "--plan", "free"]);
        cli.ok(&["account", "put", "beta", "--plan", "free"]);
        cli.ok(&["top-up", "acme", "1", "--key", "t1"]);
        cli.ok(&["top-up", "acme", "2", "--key", "t2"]);
        let entries = cli.json(&["ledger", "acme"])["entries"]
            .as_array()
            .unwrap()
            .len();
        let (all, fewer) = (entries.to_string(), (entries - 1).to_string());
        let last_page = cli.ok(&["ledger", "acme", "--limit", &all]);
        assert!(!last_page.contains("next page"), "{last_page}");
        let first_page = cli.ok(&["ledger", "acme", "--limit", &fewer]);
        assert!(first_page.contains("; next page: --after "), "{first_page}");

        let last_page = cli.ok(&["accounts", "--limit", "2"]);
        assert!(!last_page.contains("next page"), "{last_page}");
        let first_page = cli.ok(&["accounts", "--limit", "1"]);
        assert!(
            first_page.ends_with("(1 shown; next page: --after acme)\n"),
            "{first_page}"
        );
        let after = cli.ok(&["accounts", "--limit", "1", "--after", "acme"]);
        assert!(after.ends_with("(1 shown)\n"), "{after}");
    }
);

#[test]
fn usage_and_rate_card_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut cli = Cli {
        url: format!("sqlite://{}", dir.path().join("none.db").display()),
        card: None,
    };
    for (args, says) in [
        (&["key", "create"][..], "--role <ROLE>"),
        (&["acounts"], "'acounts'"),
        (&["accounts", "--limit", "x"], "'x'"),
    ] {
        let r = cli.run(args);
        let line = one_line_failure(&r);
        assert!(
            line.starts_with("holdfast: ") && line.contains(says),
            "{line}"
        );
    }
    // Valid TOML with a key the card does not have: named, with its line.
    let card = card_file(&card_text_with(&[(
        "default_plan",
        "colour = 'blue'\ndefault_plan",
    )]));
    cli.card = Some(card.path().to_owned());
    let r = cli.run(&["accounts"]);
    let line = one_line_failure(&r);
    assert!(
        line.contains("rate card line 6, column 1 (`colour = 'blue'`): unknown field `colour`"),
        "{line}"
    );
}

/// `holdfast serve` on `url`, which must refuse to start: run to its end, or killed
/// (and the test failed) when a minute later it is still running.
fn serve_refused(url: &str, listen: &str) -> Run {
    serve_refused_with(url, listen, &[])
}

/// [`serve_refused`] with more flags.
fn serve_refused_with(url: &str, listen: &str, more: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(["serve", "--listen", listen, "--database", url])
        .args(more)
        .env_remove("HOLDFAST_DATABASE_URL")
        .env_remove("HOLDFAST_ADMIN_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start holdfast serve");
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return Run::of(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("serve on {url} started instead of refusing");
}

holdfast::backend_test!(
    serve_on_a_busy_port_creates_and_prints_nothing,
    |backend| async move {
        let Some(db) = TestDb::empty(backend).await else {
            return;
        };
        let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = busy.local_addr().unwrap().to_string();
        let r = serve_refused(&db.url, &listen);
        assert!(!r.ok);
        assert!(
            r.stderr.contains(&format!("listening on {listen}")),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "no first key printed: {}", r.stdout);
        assert!(!has_tables(&db).await, "the database was created");
        // The same for a busy --metrics-listen address.
        let r = serve_refused_with(&db.url, "127.0.0.1:0", &["--metrics-listen", &listen]);
        assert!(
            r.stderr
                .contains(&format!("listening for metrics on {listen}")),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "no first key printed: {}", r.stdout);
        assert!(!has_tables(&db).await, "the database was created");
    }
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_serve_on_one_sqlite_file_is_refused() {
    let db = TestDb::new(Backend::Sqlite).await.unwrap();
    let first = Serving::start(&db.url);
    first.until("listening on");
    let r = serve_refused(&db.url, "127.0.0.1:0");
    let line = one_line_failure(&r);
    let file = db.url.trim_start_matches("sqlite://");
    assert!(
        line.starts_with(&format!(
            "holdfast: another holdfast serve (pid {}) is running on {file}: one serve per SQLite database",
            first.id()
        )),
        "{line}"
    );
    // The lock ends with its process, however it ends.
    first.kill();
    let again = Serving::start(&db.url);
    again.until("listening on");
    let (status, _) = again.terminate();
    assert!(status.success());
}

holdfast::backend_test!(the_first_admin_key_is_made_by_serve, |backend| async move {
    let Some((_db, cli)) = Cli::empty(backend).await else {
        return;
    };
    let serving = Serving::start(&cli.url);
    let lines = serving.until("listening on");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("created the first admin key")),
        "{lines:#?}"
    );
    let page = cli.events(&["--type", "operator.key_created"], 1).await;
    assert_eq!(page["events"][0]["actor"], "serve:first-admin-key");
    let (status, _) = serving.terminate();
    assert!(status.success());
});

/// A command closes the database when it ends: on SQLite its commits are checkpointed
/// into the main file, so a copy of that file alone holds them (while another connection
/// — the test's own — keeps the database open, as a running `serve` would).
#[tokio::test]
async fn a_command_leaves_its_commits_in_the_main_sqlite_file() {
    let Some((db, cli)) = Cli::new(Backend::Sqlite).await else {
        return;
    };
    assert_eq!(db.query_i64("SELECT count(*) FROM accounts").await, 0);
    cli.ok(&["account", "put", "acme", "--plan", "free"]);
    cli.ok(&["top-up", "acme", "7", "--key", "t1"]);
    let file = db.url.trim_start_matches("sqlite://").to_owned();
    let wal = std::fs::metadata(format!("{file}-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "commits left in {file}-wal");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    std::fs::copy(&file, &copy).unwrap();
    let copied = Cli {
        url: format!("sqlite://{}", copy.display()),
        card: None,
    };
    let account = copied.json(&["account", "show", "acme"]);
    assert_eq!(account["balance"], "7.00", "{account}");
}

holdfast::backend_test!(
    dead_deliveries_are_listed_with_the_id_to_page_by,
    |backend| async move {
        let Some((db, cli)) = Cli::new(backend).await else {
            return;
        };
        for id in ["acme", "bolt"] {
            cli.ok(&["account", "put", id, "--plan", "free"]);
            cli.ok(&["account", "ban", id, "--reason", "chargeback"]);
        }
        let store = db.store(RateCard::builtin()).await;
        let url = "http://127.0.0.1:9/hook";
        let types = ["account.banned".to_owned()];
        let from = holdfast::core::ratecard::FeedStart::Beginning;
        store
            .enqueue_deliveries(url, Some(&types), from, 100)
            .await
            .unwrap();
        let claimed = store.claim_deliveries(url, 10, 60_000_000).await.unwrap();
        assert_eq!(claimed.len(), 2, "one per account: {claimed:?}");
        for d in &claimed {
            store.delivery_failed(d, "refused", 1_000, 1).await.unwrap();
        }
        let all = cli.json(&["events", "--dead"]);
        assert_eq!(all["dead_deliveries"].as_array().unwrap().len(), 2, "{all}");
        let page = cli.json(&["events", "--dead", "--limit", "1"]);
        let first = page["dead_deliveries"][0]["delivery_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let out = cli.ok(&["events", "--dead", "--limit", "1"]);
        assert!(out.starts_with("DELIVERY"), "{out}");
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{first} "))),
            "the row shows its delivery id: {out}"
        );
        assert!(
            out.contains(&format!("next page: --after {first})")),
            "{out}"
        );
        let rest = cli.ok(&["events", "--dead", "--limit", "1", "--after", &first]);
        assert!(
            !rest.lines().any(|l| l.starts_with(&format!("{first} "))),
            "{rest}"
        );
        assert!(!rest.contains("next page"), "the last page: {rest}");
    }
);

/// `migrate` into a folder that does not exist says it cannot open the file, not that
/// the database needs `holdfast migrate`.
#[test]
fn migrate_into_a_missing_folder_says_so() {
    let cli = Cli {
        url: "sqlite:///no/such/folder/holdfast.db".to_owned(),
        card: None,
    };
    let r = cli.run(&["migrate"]);
    assert!(!r.ok, "{}", r.stdout);
    assert!(!r.stderr.contains("run `holdfast migrate`"), "{}", r.stderr);
    assert!(
        r.stderr.contains("/no/such/folder/holdfast.db"),
        "{}",
        r.stderr
    );
    assert!(!std::path::Path::new("/no/such/folder").exists());
}
