//! Every write transaction touches the rows of one account, or is one of the marked
//! cross-account operations (`holdfast_store::CrossAccount`, docs/SCALING.md) — what lets
//! the tables be distributed by `account_id` (Citus) with each transaction on one node.
//!
//! Read from the database itself, not from the store's own account: on PostgreSQL a
//! trigger on every table with an `account_id` column logs, per changed row, the
//! transaction id, the account and the transaction's mark (`holdfast.cross_account`, set by
//! the store at the start of a marked transaction). A mixed scenario then runs every write
//! path the engine has — money single and batched, jobs from submit to each end, refunds,
//! grants, blocks and bans, every scheduled pass, webhook dispatch, retention — and every
//! transaction that changed rows of two or more accounts must carry a mark. (SQLite has one
//! writer and no distribution: the property is PostgreSQL's.)

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use holdfast::testing::*;
use holdfast::webhooks::{Dispatcher, WebhookOptions};
use holdfast::{CreditKind, DebitRequest, Engine, Usage};
use holdfast_store::CrossAccount;
use sqlx::Connection;

/// The log and its trigger on every table that has an `account_id`.
const INSTRUMENT: &str = r#"
CREATE TABLE scope_log (txid BIGINT NOT NULL, account_id TEXT, tbl TEXT NOT NULL, mark TEXT);
CREATE FUNCTION scope_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO scope_log VALUES (
    txid_current(),
    CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END,
    TG_TABLE_NAME,
    NULLIF(current_setting('holdfast.cross_account', true), ''));
  RETURN NULL;
END $$;
DO $$
DECLARE t text;
BEGIN
  FOR t IN SELECT c.table_name FROM information_schema.columns c
             JOIN information_schema.tables USING (table_schema, table_name)
           WHERE c.table_schema = current_schema() AND c.column_name = 'account_id'
             AND c.table_name <> 'scope_log' AND table_type = 'BASE TABLE'
  LOOP
    EXECUTE format('CREATE TRIGGER scope_log AFTER INSERT OR UPDATE OR DELETE ON %I
                    FOR EACH ROW EXECUTE FUNCTION scope_log()', t);
  END LOOP;
END $$;
CREATE TABLE extras_log (txid BIGINT NOT NULL, account_id TEXT NOT NULL, tbl TEXT NOT NULL);
CREATE FUNCTION extras_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'allowances' THEN
    INSERT INTO extras_log VALUES (txid_current(),
      CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END, TG_TABLE_NAME);
  ELSIF (CASE WHEN TG_OP = 'INSERT' THEN false ELSE OLD.status IN ('queued', 'in_progress') END)
        IS DISTINCT FROM
        (CASE WHEN TG_OP = 'DELETE' THEN false ELSE NEW.status IN ('queued', 'in_progress') END) THEN
    INSERT INTO extras_log VALUES (txid_current(),
      CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END, TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER extras_log AFTER INSERT OR UPDATE OR DELETE ON allowances
  FOR EACH ROW EXECUTE FUNCTION extras_log();
CREATE TRIGGER extras_log AFTER INSERT OR UPDATE OR DELETE ON jobs
  FOR EACH ROW EXECUTE FUNCTION extras_log();
"#;

/// A webhook endpoint that takes everything.
async fn endpoint() -> String {
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { StatusCode::NO_CONTENT }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// Short clocks: notices at once, refills and retention that the passes act on.
fn card(url: &str) -> holdfast::RateCard {
    let hook = format!(
        "webhooks_every_seconds = 1\n\n[[webhooks]]\nurl = \"{url}\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"\nfrom = \"beginning\"\n"
    );
    card_with(&[
        ("webhooks_every_seconds = 1", &hook),
        ("notice_delay_seconds = 5", "notice_delay_seconds = 1"),
        (
            "[allowances.daily_images]\nrefill_every_seconds = 86400",
            "[allowances.daily_images]\nrefill_every_seconds = 1",
        ),
    ])
}

/// Every write path, over 8 accounts, with some calls racing each other.
async fn mixed_scenario(e: &Engine) {
    let s = e.store();
    let accounts: Vec<String> = (0..8).map(|i| format!("acct_{i}")).collect();
    for a in &accounts {
        put(s, a, "free").await;
        top_up(s, a, "20.00", &format!("t-{a}")).await;
    }
    // Debits racing: the batcher commits several accounts' debits together.
    let e2 = Arc::new(e.clone());
    let mut racing = Vec::new();
    for i in 0..64 {
        let (e, a) = (e2.clone(), accounts[i % 8].clone());
        racing.push(tokio::spawn(async move {
            let usage = Usage::Amount(usd("0.01"));
            e.debit(&acct(&a), &usage, &key(&format!("d-{i}")), None)
                .await
                .unwrap();
        }));
    }
    for r in racing {
        r.await.unwrap();
    }
    // Batch ingest across accounts.
    let batch: Vec<(holdfast::AccountId, DebitRequest)> = accounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (
                acct(a),
                DebitRequest::new(&Usage::Amount(usd("0.02")), &key(&format!("i-{i}")), None),
            )
        })
        .collect();
    e.debit_many(&batch).await.unwrap();
    e.credit(&acct("acct_0"), usd("1.00"), CreditKind::Bonus, &key("b-0"))
        .await
        .unwrap();
    e.refund(&acct("acct_1"), &key("t-acct_1"), usd("2.00"), &key("r-1"))
        .await
        .unwrap();
    // Jobs: submit on every account, then each end.
    let mut jobs = Vec::new();
    for a in &accounts {
        jobs.push(
            e.submit(&submit_req(a, "image", &format!("j-{a}")))
                .await
                .unwrap()
                .job
                .job_id,
        );
    }
    for (i, _) in jobs.iter().enumerate() {
        let lease = e.lease("image", &worker(), 60).await.unwrap().unwrap();
        let id = job_id(&lease.job.job_id);
        match i % 4 {
            0 => drop(e.complete(&id, &lease.lease_token, None).await.unwrap()),
            1 => drop(
                e.fail(&id, &lease.lease_token, Some("provider down"))
                    .await
                    .unwrap(),
            ),
            2 => drop(e.heartbeat(&id, &lease.lease_token).await.unwrap()),
            _ => {} // left in progress
        }
    }
    // Batched worker calls across accounts: one lease statement, one finishing transaction.
    for a in ["acct_0", "acct_1"] {
        e.submit(&submit_req(a, "image", &format!("jb-{a}")))
            .await
            .unwrap();
    }
    let leases = e.lease_many("image", &worker(), 60, 10).await.unwrap();
    assert_eq!(leases.len(), 2);
    let items: Vec<holdfast::CompleteJob> = leases
        .iter()
        .map(|l| holdfast::CompleteJob {
            job: job_id(&l.job.job_id),
            lease_token: l.lease_token.clone(),
            capture: None,
        })
        .collect();
    for answer in e.complete_many(&items).await.unwrap() {
        answer.unwrap();
    }
    // The submit batcher's group commit: two accounts' submits in one transaction.
    let together: Vec<holdfast_store::QueuedSubmit> = ["acct_0", "acct_1"]
        .iter()
        .map(|a| holdfast_store::QueuedSubmit {
            req: submit_req(a, "text", &format!("js-{a}")),
            actor: "library".into(),
        })
        .collect();
    for answer in e.store().submit_many(&together).await.unwrap() {
        answer.unwrap();
    }
    let queued = e
        .submit(&submit_req("acct_5", "image", "j-cancel"))
        .await
        .unwrap();
    e.cancel(&job_id(&queued.job.job_id)).await.unwrap();
    let done = e.get_job(&job_id(&jobs[0])).await.unwrap();
    let whole = holdfast::JobRefund {
        amount: None,
        reason: "support".into(),
        key: key("jr-0"),
    };
    e.refund_job(&job_id(&done.job_id), &whole).await.unwrap();
    e.set_blocked(&acct("acct_2"), true).await.unwrap();
    e.set_blocked(&acct("acct_2"), false).await.unwrap();
    e.ban(&acct("acct_3"), "fraud").await.unwrap();
    e.unban(&acct("acct_3")).await.unwrap();
    // A short lease for the sweeper, then every pass.
    e.submit(&submit_req("acct_4", "image", "j-sweep"))
        .await
        .unwrap();
    let short = e.lease("image", &worker(), 1).await.unwrap().unwrap();
    assert!(!short.lease_token.is_empty());
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    // A grant: a change of a pocket alone, after a refill of it came due.
    let grant = holdfast::Grant {
        pocket: "daily_images".into(),
        amount: 2,
        reason: "apology".into(),
        key: key("g-6"),
    };
    e.grant(&acct("acct_6"), &grant).await.unwrap();
    e.sweep(1_000).await.unwrap();
    e.notices(1_000).await.unwrap();
    e.reconcile(1_000).await.unwrap();
    e.reactivate(1_000).await.unwrap();
    let d = Dispatcher::new(s.clone(), WebhookOptions::default()).unwrap();
    for _ in 0..5 {
        d.run_once(10_000).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_write_transaction_touches_one_account_or_is_marked() {
    let url = endpoint().await;
    let Some((db, e)) = engine_with(Backend::Postgres, card(&url)).await else {
        return;
    };
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql(INSTRUMENT).execute(&mut c).await.unwrap();
    mixed_scenario(&e).await;
    // Age every entry, key's record and finished job past retention (behind the store's back, its
    // own transaction taken out of the log), then prune them.
    let mut aging = c.begin().await.unwrap();
    let txid: i64 = sqlx::query_scalar("SELECT txid_current()")
        .fetch_one(&mut *aging)
        .await
        .unwrap();
    let year = 366_i64 * 86_400_000_000;
    for table in ["idempotency", "ledger"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET created_at = created_at - $1"
        )))
        .bind(year)
        .execute(&mut *aging)
        .await
        .unwrap();
    }
    // The spending marks with the entries they count (invariant 8).
    sqlx::query(
        "UPDATE accounts SET spend_day_start = spend_day_start - $1, \
         spend_month_start = spend_month_start - $1",
    )
    .bind(year)
    .execute(&mut *aging)
    .await
    .unwrap();
    sqlx::query("UPDATE jobs SET finished_at = finished_at - $1 WHERE finished_at IS NOT NULL")
        .bind(year)
        .execute(&mut *aging)
        .await
        .unwrap();
    aging.commit().await.unwrap();
    sqlx::query("DELETE FROM scope_log WHERE txid = $1")
        .bind(txid)
        .execute(&mut c)
        .await
        .unwrap();
    let pruned = e.prune(1_000_000).await.unwrap();
    assert!(pruned.idempotency > 8 && pruned.jobs > 0, "{pruned:?}");

    let transactions = db
        .query_i64("SELECT count(DISTINCT txid) FROM scope_log")
        .await;
    assert!(
        transactions > 50,
        "the scenario wrote in {transactions} transactions"
    );
    let rows = sqlx::query_as::<_, (i64, Vec<String>, Vec<String>, Vec<String>)>(
        "SELECT txid, array_agg(DISTINCT account_id ORDER BY account_id),
                array_agg(DISTINCT coalesce(mark, '(none)')),
                array_agg(DISTINCT tbl ORDER BY tbl)
           FROM scope_log WHERE account_id <> ''
          GROUP BY txid HAVING count(DISTINCT account_id) > 1",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    let known: Vec<&str> = CrossAccount::ALL.iter().map(|c| c.as_str()).collect();
    let unmarked: Vec<_> = rows
        .iter()
        .filter(|(_, _, marks, _)| marks.len() != 1 || !known.contains(&marks[0].as_str()))
        .collect();
    assert!(
        unmarked.is_empty(),
        "transactions across accounts without a mark: {unmarked:#?}"
    );
    let seen: std::collections::BTreeSet<&str> =
        rows.iter().map(|(_, _, m, _)| m[0].as_str()).collect();
    println!(
        "cross-account transactions: {} of {transactions}, marks seen: {seen:?}",
        rows.len()
    );
    assert_eq!(
        seen.len(),
        CrossAccount::ALL.len(),
        "the scenario runs every marked operation: {seen:?}"
    );
    every_change_of_pockets_or_open_jobs_writes_the_account_row(&mut c).await;
    assert_clean(e.store()).await;
}

/// What lets `ingest_lock_accounts` trust the pockets and open jobs of its snapshot
/// where the account's row version did not change while it waited for the lock
/// (docs/DESIGN.md, "Account row versions"): every transaction that changed an
/// account's allowance pockets or its set of open jobs also wrote that account's row.
async fn every_change_of_pockets_or_open_jobs_writes_the_account_row(c: &mut sqlx::PgConnection) {
    let changes = sqlx::query_as::<_, (i64, String, Vec<String>)>(
        "SELECT txid, account_id, array_agg(DISTINCT tbl ORDER BY tbl) FROM extras_log
          GROUP BY txid, account_id",
    )
    .fetch_all(&mut *c)
    .await
    .unwrap();
    let tables: std::collections::BTreeSet<&str> = changes
        .iter()
        .flat_map(|(_, _, t)| t.iter().map(String::as_str))
        .collect();
    assert_eq!(
        tables.into_iter().collect::<Vec<_>>(),
        ["allowances", "jobs"],
        "the scenario changes pockets and open jobs"
    );
    let unwritten = sqlx::query_as::<_, (i64, String, Vec<String>)>(
        "SELECT x.txid, x.account_id, array_agg(DISTINCT x.tbl ORDER BY x.tbl) FROM extras_log x
          WHERE NOT EXISTS (SELECT 1 FROM scope_log s WHERE s.txid = x.txid
                               AND s.account_id = x.account_id AND s.tbl = 'accounts')
          GROUP BY x.txid, x.account_id",
    )
    .fetch_all(&mut *c)
    .await
    .unwrap();
    assert!(
        unwritten.is_empty(),
        "changes of pockets or open jobs without a write of the account's row \
         (txid, account, tables), of {} changes: {unwritten:#?}",
        changes.len()
    );
}
