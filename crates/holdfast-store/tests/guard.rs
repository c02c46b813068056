//! Defense in depth: the debit write carries the buffer check in SQL too, so a debit
//! the decision wrongly allowed leaves the write's count of changed accounts short, and
//! the unit of work rolls the transaction back as corrupt (units/ingest.rs `apply`):
//! no balance, no entry. The statement is run here as a broken decision would run it,
//! on both dialects.

use holdfast_store::driver::db::{Arg, Dialect, Pool, PoolOptions, Sql};
use holdfast_store::driver::statement::Statement;
use holdfast_store::units::ingest::{AccountChange, DebitItem};
use holdfast_store::{args, params};
use sqlx::{Connection, Executor};

fn ingest_write(dialect: &str) -> &'static Statement {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
    let text: &'static str = std::fs::read_to_string(format!("{dir}/{dialect}/ingest_write.sql"))
        .unwrap()
        .leak();
    Box::leak(Box::new(Statement::load("ingest_write", text, text)))
}

/// What the write counted, and the balance it left (before any rollback).
struct Outcome {
    entries_written: i64,
    accounts_changed: i64,
    balance: i64,
}

/// A debit of 10.00 on an account with 0 balance, as a decision allowed it against
/// `buffer` (a buffer of 5.00 should have refused it).
async fn debit_of_ten(pool: &Pool, buffer: i64) -> Outcome {
    let dialect = match pool.dialect() {
        Dialect::Postgres => "postgres",
        Dialect::Sqlite => "sqlite",
    };
    let mut tx = pool.begin_write().await.unwrap();
    let account = format!("acct-{buffer}");
    let insert = "INSERT INTO accounts (account_id, plan, created_at) VALUES ($1, 'free', 0)";
    tx.execute(Sql::both(insert), args![account.as_str()])
        .await
        .unwrap();
    let item = DebitItem {
        account_id: account.clone(),
        key: "k1".into(),
        request_hash: "h".into(),
        delta: -10_000_000,
        amount_after: -10_000_000,
        available_after: -10_000_000,
        buffer,
        reference: None,
        now: 1,
        actor: "library".into(),
        meter: None,
        seconds: None,
        blocks: None,
    };
    let change = AccountChange {
        account_id: account.clone(),
        delta: -10_000_000,
        spent: 10_000_000,
        suspended_at: None,
        balance_after: -10_000_000,
        buffer,
        live_blocks: None,
    };
    let params = tx
        .records("items", vec![item])
        .unwrap()
        .and(tx.records("changes", vec![change]).unwrap())
        .and(params! { answered: Arg::texts([account.as_str()]), blocks: "[]" });
    let row = tx.row(ingest_write(dialect), params).await.unwrap();
    let balance = "SELECT balance FROM accounts WHERE account_id = $1";
    let balance = tx
        .fetch_one(Sql::both(balance), args![account.as_str()])
        .await
        .unwrap()
        .int("balance")
        .unwrap();
    let outcome = Outcome {
        entries_written: row.text("entry_ids").unwrap().split(',').count() as i64,
        accounts_changed: row.int("accounts_changed").unwrap(),
        balance,
    };
    tx.rollback().await.unwrap();
    outcome
}

async fn check(pool: &Pool) {
    let refused = debit_of_ten(pool, 5_000_000).await;
    assert_eq!(
        (
            refused.entries_written,
            refused.accounts_changed,
            refused.balance
        ),
        (1, 0, 0),
        "past the buffer, the account must be left as it was and counted as not changed"
    );
    // The same write within a larger buffer does change the account: the guard is what
    // stopped it.
    let written = debit_of_ten(pool, 20_000_000).await;
    assert_eq!(
        (
            written.entries_written,
            written.accounts_changed,
            written.balance
        ),
        (1, 1, -10_000_000)
    );
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
