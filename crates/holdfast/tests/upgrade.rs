//! Upgrading a database written by the previous release (the fixtures: a SQLite and a
//! PostgreSQL database made by the release at 7337edb through its CLI and HTTP API, rows
//! in every table; `scripts/make-upgrade-fixture` makes them). Migration 0011 moves the
//! key of every money change onto its ledger entry: after it, every key the old database
//! knew answers as it did (a replay of the same request, a mismatch for another), the
//! pruned key stays a new request, and the audit is clean.

use std::collections::BTreeSet;

use holdfast::testing::*;
use holdfast::{
    CreditKind, Engine, Grant, JobRefund, RateCard, Refusal, Submit, Usage, backend_test,
};
use sqlx::{Connection, PgConnection, SqliteConnection};

/// The fixture's database, loaded into a fresh empty one.
async fn load_fixture(db: &TestDb) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let (file, backend) = match db.backend {
        Backend::Sqlite => ("v0-sqlite.sql", "sqlite"),
        Backend::Postgres => ("v0-postgres.sql", "postgres"),
    };
    let dump = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
    let dump = sqlx::AssertSqlSafe(dump);
    match backend {
        "sqlite" => {
            let url = format!("{}?mode=rwc", db.url);
            let mut c = SqliteConnection::connect(&url).await.unwrap();
            sqlx::raw_sql(dump).execute(&mut c).await.unwrap();
            c.close().await.unwrap();
        }
        _ => {
            let mut c = PgConnection::connect(&db.url).await.unwrap();
            sqlx::raw_sql(dump).execute(&mut c).await.unwrap();
            c.close().await.unwrap();
        }
    }
}

/// (account, key, operation, entry) of every idempotency record the old database kept.
async fn old_records(db: &TestDb) -> BTreeSet<(String, String, String, i64)> {
    let sql = "SELECT account_id || ' ' || key || ' ' || operation || ' ' || \
               CAST(COALESCE(entry_id, 0) AS TEXT) FROM idempotency";
    let mut out = BTreeSet::new();
    for line in query_texts(db, sql).await {
        let f: Vec<&str> = line.split(' ').collect();
        out.insert((f[0].into(), f[1].into(), f[2].into(), f[3].parse().unwrap()));
    }
    out
}

async fn query_texts(db: &TestDb, sql: &str) -> Vec<String> {
    let sql = sqlx::AssertSqlSafe(sql.to_owned());
    match db.backend {
        Backend::Sqlite => {
            let mut c = SqliteConnection::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sql).fetch_all(&mut c).await.unwrap()
        }
        Backend::Postgres => {
            let mut c = PgConnection::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sql).fetch_all(&mut c).await.unwrap()
        }
    }
}

async fn upgraded(
    backend: Backend,
) -> Option<(TestDb, Engine, BTreeSet<(String, String, String, i64)>)> {
    let db = TestDb::empty(backend).await?;
    load_fixture(&db).await;
    let before = old_records(&db).await;
    let e = Engine::open(&db.url, RateCard::builtin()).await.unwrap();
    Some((db, e, before))
}

/// A submit as the fixture made it: a video, no payload.
fn fixture_submit(account: &str, k: &str) -> Submit {
    Submit {
        payload: None,
        ..submit_req(account, "video", k)
    }
}

fn amount(s: &str) -> Usage {
    Usage::Amount(usd(s))
}

backend_test!(
    every_key_of_the_previous_release_answers_as_it_did,
    |backend| async move {
        let Some((db, e, before)) = upgraded(backend).await else {
            return;
        };
        assert!(e.audit().await.unwrap().is_empty(), "{:?}", e.audit().await);
        let money_ops = ["top_up", "bonus", "debit", "refund", "job_refund", "grant"];
        let moved: Vec<_> = before
            .iter()
            .filter(|(_, _, op, _)| money_ops.contains(&op.as_str()))
            .collect();
        assert_eq!(moved.len(), 10, "the fixture's money keys: {before:?}");
        // Each money key is now on its own entry, and gone from the idempotency table.
        for (account, key, op, entry) in &moved {
            let on_entry = query_texts(
                &db,
                &format!(
                    "SELECT account_id || ' ' || idempotency_key || ' ' || kind FROM ledger \
                 WHERE entry_id = {entry}"
                ),
            )
            .await;
            assert_eq!(on_entry, [format!("{account} {key} {op}")]);
        }
        let left = old_records(&db).await;
        assert!(left.iter().all(|(_, _, op, _)| op == "submit"), "{left:?}");
        assert_eq!(left.len(), before.len() - moved.len());

        // Replays answer the original entries; another request under a key is refused.
        let acme = acct("acme");
        let entry_of = |k: &str| {
            moved
                .iter()
                .find(|(_, key, _, _)| key == k)
                .map(|(_, _, _, e)| *e)
                .unwrap()
        };
        let t = e
            .credit(&acme, usd("10.00"), CreditKind::TopUp, &key("topup-1"))
            .await
            .unwrap();
        assert!(t.replay);
        assert_eq!(t.entry.entry_id, entry_of("topup-1"));
        let d = e
            .debit(&acme, &amount("0.25"), &key("debit-1"), None)
            .await
            .unwrap();
        assert!(d.replay);
        assert_eq!(d.entry.entry_id, entry_of("debit-1"));
        let other = e.debit(&acme, &amount("0.26"), &key("debit-1"), None).await;
        assert_eq!(refused(other), Refusal::IdempotencyMismatch);
        let r = e
            .refund(&acme, &key("topup-1"), usd("1.00"), &key("refund-1"))
            .await
            .unwrap();
        assert!(r.replay);
        let grant = Grant {
            pocket: "daily_images".into(),
            amount: 2,
            reason: "welcome".into(),
            key: key("grant-1"),
        };
        assert!(e.grant(&acme, &grant).await.unwrap().replay);
        let ingested = e
            .debit(&acct("bob"), &amount("0.20"), &key("ingest-2"), None)
            .await;
        assert_eq!(ingested.unwrap().entry.entry_id, entry_of("ingest-2"));
        // A money key cannot name a job now, nor a job's key a debit.
        let submit = e.submit(&submit_req("acme", "video", "topup-1")).await;
        assert_eq!(refused(submit), Refusal::IdempotencyMismatch);
        let queued = e.submit(&fixture_submit("acme", "click-3")).await.unwrap();
        assert!(queued.replay, "a kept submit key replays its job");
        let debit = e.debit(&acme, &amount("0.01"), &key("click-3"), None).await;
        assert_eq!(refused(debit), Refusal::IdempotencyMismatch);
        // The job refund replays; the finished job it refunded is the one click-1 made.
        let job = queued.job.job_id.clone();
        let first = query_texts(
            &db,
            "SELECT job_id FROM jobs WHERE status = 'succeeded' AND account_id = 'acme'",
        )
        .await;
        let refund = JobRefund {
            amount: Some(usd("0.10")),
            reason: "blurry".into(),
            key: key("jrefund-1"),
        };
        let again = e.refund_job(&job_id(&first[0]), &refund).await.unwrap();
        assert!(again.replay);
        assert_eq!(again.entries[0].entry_id, entry_of("jrefund-1"));
        assert_ne!(first[0], job);
        assert!(e.audit().await.unwrap().is_empty());
    }
);

backend_test!(
    the_upgraded_database_takes_new_writes_and_keeps_its_marks,
    |backend| async move {
        let Some((db, e, _)) = upgraded(backend).await else {
            return;
        };
        // click-2's record was pruned by the old release: a new request now.
        let bob = acct("bob");
        e.set_blocked(&bob, false).await.unwrap();
        e.credit(&bob, usd("5.00"), CreditKind::TopUp, &key("topup-b2"))
            .await
            .unwrap();
        let resubmitted = e
            .submit(&submit_req("bob", "image", "click-2"))
            .await
            .unwrap();
        assert!(!resubmitted.replay);
        let marks = query_texts(
            &db,
            "SELECT what || ' ' || CAST(pruned_before AS TEXT) FROM retention_marks ORDER BY what",
        )
        .await;
        assert_eq!(marks.len(), 2, "{marks:?}");
        let value = |m: &str| m.split(' ').nth(1).unwrap().to_owned();
        assert!(marks[0].starts_with("idempotency ") && marks[1].starts_with("ledger_keys "));
        assert_eq!(
            value(&marks[0]),
            value(&marks[1]),
            "money keys kept from the old mark on"
        );
        // A new debit carries its key on its entry, and the books stay explained.
        let d = e
            .debit(&acct("acme"), &amount("0.05"), &key("after-upgrade"), None)
            .await
            .unwrap();
        let carried = query_texts(
            &db,
            &format!(
                "SELECT idempotency_key FROM ledger WHERE entry_id = {}",
                d.entry.entry_id
            ),
        )
        .await;
        assert_eq!(carried, ["after-upgrade"]);
        let again = Engine::open(&db.url, RateCard::builtin()).await;
        assert!(again.is_ok(), "a second open finds nothing to migrate");
        assert!(e.audit().await.unwrap().is_empty());
    }
);

backend_test!(
    the_spending_of_the_current_period_counts_what_was_spent_before_the_upgrade,
    |backend| async move {
        let Some(db) = TestDb::empty(backend).await else {
            return;
        };
        load_fixture(&db).await;
        // The fixture's entries as if written an hour ago: they fall in this day and
        // this month, which a rule reads from the ledger when it comes into force.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        let utc = holdfast::decide::SpendZone::utc();
        let day_start = holdfast::decide::SpendPeriod::Day.start(now, &utc);
        let written = (now - 3_600_000_000).max(day_start);
        db.execute(&format!("UPDATE ledger SET created_at = {written}"))
            .await;
        let e = Engine::open(&db.url, RateCard::builtin()).await.unwrap();
        // Migration 0017 forgot the marks 0016 set: no account has a rule yet.
        let marked = "SELECT COUNT(*) FROM accounts WHERE spend_day_start IS NOT NULL \
                      OR spend_month_start IS NOT NULL";
        assert_eq!(db.query_i64(marked).await, 0);
        let accounts =
            query_texts(&db, "SELECT account_id FROM accounts ORDER BY account_id").await;
        assert!(accounts.len() >= 2, "{accounts:?}");
        let mut spenders = 0;
        for id in accounts {
            for period in ["day", "month"] {
                let rule = holdfast::decide::SpendPolicy {
                    period: holdfast::decide::SpendPeriod::parse(period).unwrap(),
                    ..Default::default()
                };
                let put = holdfast::PutAccount {
                    plan: "free".into(),
                    plan_until: None,
                    max_concurrent_jobs: None,
                    recharge: None,
                    spend: Some(Some(rule)),
                };
                let view = e.put_account(&acct(&id), &put).await.unwrap().0;
                let spend = view.spend.unwrap();
                assert_eq!(spend.spent, view.total_spent, "{id} this {period}");
                spenders += usize::from(view.total_spent > 0);
            }
        }
        assert!(spenders > 0, "the fixture spent nothing");
        assert!(e.audit().await.unwrap().is_empty());
    }
);
