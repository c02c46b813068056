//! Defense in depth: the money write carries the debit's buffer check in SQL too, so a
//! debit the decision wrongly allowed writes no balance and no ledger entry. The
//! statement is run here as a broken decision would run it, on both dialects.

use holdfast_store::driver::db::{Dialect, Pool, PoolOptions};
use holdfast_store::driver::statement::Statement;
use holdfast_store::params;
use sqlx::{Connection, Executor};

fn write_money(dialect: &str) -> &'static Statement {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
    let text: &'static str = std::fs::read_to_string(format!("{dir}/{dialect}/write_money.sql"))
        .unwrap()
        .leak();
    Box::leak(Box::new(Statement::load("write_money", text, text)))
}

/// What the write answered and what the books then held.
struct Outcome {
    guard_passed: bool,
    entry_id: Option<i64>,
    entries: i64,
    balance: i64,
}

/// A debit of 10.00 on an account with 0 balance and a 5.00 buffer, guarded (or not).
async fn debit_past_the_buffer(pool: &Pool, guarded: bool) -> Outcome {
    let dialect = match pool.dialect() {
        Dialect::Postgres => "postgres",
        Dialect::Sqlite => "sqlite",
    };
    let stmt = write_money(dialect);
    let mut tx = pool.begin_write().await.unwrap();
    let account = format!("acct-{guarded}");
    let insert = "INSERT INTO accounts (account_id, plan, created_at) VALUES ($1, 'free', 0)";
    tx.execute(
        holdfast_store::driver::db::Sql::both(insert),
        holdfast_store::args![account.as_str()],
    )
    .await
    .unwrap();
    let params = params! {
        account_id: account.as_str(), key: "k1", kind: "debit", request_hash: "h",
        delta_micros: -10_000_000_i64, credited_micros: 0_i64, spent_micros: 10_000_000_i64,
        suspended_at: None::<i64>, guard_micros: guarded.then_some(5_000_000_i64),
        amount_after: -10_000_000_i64, available_after: Some(-10_000_000_i64),
        buffer_micros: 5_000_000_i64, reference: None::<String>, now: 1_i64, actor: "library",
        meter: None::<String>, seconds: None::<i64>,
    };
    // Both dialects answer one row (tests/statements.rs pins the columns).
    let row = tx.row(stmt, params).await.unwrap();
    let guard_passed = row.flag("guard_passed").unwrap();
    let entry_id = row.opt_int("entry_id").unwrap();
    let count = "SELECT COUNT(*) AS n FROM ledger WHERE account_id = $1";
    let entries = tx
        .fetch_one(
            holdfast_store::driver::db::Sql::both(count),
            holdfast_store::args![account.as_str()],
        )
        .await
        .unwrap()
        .int("n")
        .unwrap();
    let balance = "SELECT balance FROM accounts WHERE account_id = $1";
    let balance = tx
        .fetch_one(
            holdfast_store::driver::db::Sql::both(balance),
            holdfast_store::args![account.as_str()],
        )
        .await
        .unwrap()
        .int("balance")
        .unwrap();
    tx.commit().await.unwrap();
    Outcome {
        guard_passed,
        entry_id,
        entries,
        balance,
    }
}

async fn check(pool: &Pool) {
    let refused = debit_past_the_buffer(pool, true).await;
    assert!(!refused.guard_passed, "the guard said it passed");
    assert_eq!(
        refused.entry_id, None,
        "the guarded write answered an entry"
    );
    assert_eq!(
        (refused.entries, refused.balance),
        (0, 0),
        "the guarded write changed the books"
    );
    // The same write without the guard does write: the guard is what stopped it.
    let written = debit_past_the_buffer(pool, false).await;
    assert!(written.guard_passed);
    assert!(written.entry_id.is_some());
    assert_eq!((written.entries, written.balance), (1, -10_000_000));
}

#[tokio::test]
async fn sqlite_guarded_debit_past_the_buffer_writes_nothing() {
    let file = std::env::temp_dir().join(format!("holdfast-guard-{}", uuid::Uuid::new_v4()));
    let pool = Pool::connect(
        &format!("sqlite://{}", file.display()),
        &PoolOptions::default(),
    )
    .await
    .unwrap();
    pool.migrate().await.unwrap();
    check(&pool).await;
    pool.close().await;
    let _ = std::fs::remove_file(file);
}

#[tokio::test]
async fn postgres_guarded_debit_past_the_buffer_writes_nothing() {
    let admin = std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("holdfast_guard_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    conn.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    let pool = Pool::connect(&format!("{base}/{name}"), &PoolOptions::default())
        .await
        .unwrap();
    pool.migrate().await.unwrap();
    check(&pool).await;
    pool.close().await;
    conn.execute(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {name} WITH (FORCE)"
    )))
    .await
    .unwrap();
}
