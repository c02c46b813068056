//! Lane isolation, shown by the planner rather than a stopwatch: with 10,000 jobs queued
//! in one lane, the lease statement for another lane reads only its own lane's queue (an
//! index search on `jobs_queue` by lane), on SQLite and PostgreSQL. Speed itself lives in
//! the bench; this pins the reason it cannot depend on another lane's backlog.

use holdfast_store::driver::db::{Dialect, Pool, PoolOptions};
use holdfast_store::driver::statement::Statement;
use holdfast_store::params;
use sqlx::{Connection, Executor, Row};

const LEASE_POSTGRES: &str = include_str!("../sql/postgres/lease_jobs.sql");
const LEASE_SQLITE: &str = include_str!("../sql/sqlite/lease_jobs.sql");

/// An account with 10,000 queued video jobs and one queued text job.
fn flood_sql(series: &str) -> String {
    format!(
        "INSERT INTO accounts (account_id, plan, created_at) VALUES ('flood', 'free', 0);
         INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, created_at, notice_at,
                           limit_at_submit, open_at_submit, queued_since)
         SELECT 'v' || i, 'flood', 'video', 'video', 'queued', '[]', i, i, 100000, 0, i FROM {series};
         INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, created_at, notice_at,
                           limit_at_submit, open_at_submit, queued_since)
         VALUES ('t1', 'flood', 'text', 'text', 'queued', '[]', 5, 5, 100000, 0, 5);"
    )
}

/// The lease statement for lane `text`, with its arguments inlined as literals.
fn lease_text(dialect: Dialect) -> String {
    let stmt = Statement::load("lease_jobs", LEASE_POSTGRES, LEASE_SQLITE);
    let params = params! {
        lane: "text", max_jobs: 1, lease_seconds: 60, worker_id: "w", actor: "key:w",
    };
    let (text, _) = stmt.bind(dialect, params).unwrap();
    let mut sql = text.to_owned();
    // Markers are numbered in the order of the statement's names; replace from the last
    // so that `$1` never eats the start of a `$10`.
    for (i, name) in stmt.names(dialect).iter().enumerate().rev() {
        let value = match *name {
            "lane" => "'text'",
            "max_jobs" => "1",
            "lease_seconds" => "60",
            "worker_id" => "'w'",
            "actor" => "'key:w'",
            other => panic!("lease_jobs has a parameter {other}"),
        };
        sql = sql.replace(&format!("${}", i + 1), value);
    }
    sql
}

#[tokio::test]
async fn a_lease_reads_only_its_own_lane_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("holdfast-lanes-{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", dir.display());
    let pool = Pool::connect(&url, &PoolOptions::default()).await.unwrap();
    pool.migrate().await.unwrap();
    pool.close().await;
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let series = "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10000) SELECT i FROM s)";
    conn.execute(sqlx::AssertSqlSafe(flood_sql(series)))
        .await
        .unwrap();
    conn.execute("ANALYZE").await.unwrap();
    let sql = lease_text(Dialect::Sqlite);
    let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>("detail"))
        .collect();
    assert!(
        plan.iter()
            .any(|l| l.contains("USING INDEX jobs_queue (lane=?)")),
        "the queue is searched by lane: {plan:#?}"
    );
    assert!(
        !plan.iter().any(|l| l.starts_with("SCAN job")),
        "no scan of the jobs: {plan:#?}"
    );
    conn.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
    let leased: String = sqlx::query_scalar("SELECT status FROM jobs WHERE job_id = 't1'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        leased, "in_progress",
        "the text job, not one of the 10,000 videos"
    );
    conn.close().await.unwrap();
    let _ = std::fs::remove_file(&dir);
}

#[tokio::test]
async fn a_lease_reads_only_its_own_lane_on_postgres() {
    let admin = std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("holdfast_lanes_{}", uuid::Uuid::new_v4().simple());
    let mut admin_conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    admin_conn
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    let url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
    let pool = Pool::connect(&url, &PoolOptions::default()).await.unwrap();
    pool.migrate().await.unwrap();
    pool.close().await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    conn.execute(sqlx::AssertSqlSafe(flood_sql(
        "generate_series(1, 10000) AS i",
    )))
    .await
    .unwrap();
    conn.execute("ANALYZE").await.unwrap();
    let sql = lease_text(Dialect::Postgres);
    let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {sql}"
    )))
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .iter()
    .map(|r| r.get::<String, _>(0))
    .collect();
    let text = plan.join("\n");
    assert!(
        text.contains("Index Scan using jobs_queue on jobs job"),
        "{text}"
    );
    assert!(
        !text.contains("Seq Scan on jobs"),
        "no scan of the jobs: {text}"
    );
    // The queue search found the text job at once: one row, none of the 10,000 read.
    let queue_line = plan
        .iter()
        .find(|l| l.contains("Index Scan using jobs_queue"))
        .unwrap();
    assert!(queue_line.contains("actual rows=1 "), "{queue_line}");
    let leased: String = sqlx::query_scalar("SELECT status FROM jobs WHERE job_id = 't1'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(leased, "in_progress", "EXPLAIN ANALYZE ran the lease");
    conn.close().await.unwrap();
    admin_conn
        .execute(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE {name} WITH (FORCE)"
        )))
        .await
        .unwrap();
}
