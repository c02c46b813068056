//! Defense in depth: the debit write carries each account's buffer check in SQL too, so a
//! debit the decision wrongly allowed changes no balance, and the count of accounts
//! changed comes back short (the unit of work then reports corruption and rolls back).
//! The statement is run here as a broken decision would run it, on both dialects.

use holdfast_store::db::{Arg, Dialect, Pool, PoolOptions};
use holdfast_store::params;
use holdfast_store::statement::{Params, Statement};
use sqlx::{Connection, Executor};

fn ingest_write(dialect: &str) -> &'static Statement {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
    let text: &'static str = std::fs::read_to_string(format!("{dir}/{dialect}/ingest_write.sql"))
        .unwrap()
        .leak();
    Box::leak(Box::new(Statement::load("ingest_write", text, text)))
}

const AMOUNT: i64 = 10_000_000;

/// One debit of `AMOUNT` on `account`, decided as if its buffer were `buffer`.
fn one_debit(dialect: Dialect, account: &str, buffer: i64) -> Params {
    let texts = |s: &str| Arg::Texts(vec![Some(s.to_owned())]);
    let ints = |i: i64| Arg::Ints(vec![Some(i)]);
    match dialect {
        Dialect::Postgres => params! {
            account_ids: texts(account), keys: texts("k1"), request_hashes: texts("h"),
            entry_ids: ints(1), deltas: ints(-AMOUNT), amounts_after: ints(-AMOUNT),
            availables_after: ints(-AMOUNT), buffers: ints(buffer),
            refs: Arg::Texts(vec![None]), nows: ints(1), actors: texts("library"),
            change_accounts: texts(account), change_deltas: ints(-AMOUNT),
            change_spent: ints(AMOUNT), change_suspended_at: Arg::Ints(vec![None]),
            change_balances_after: ints(-AMOUNT), change_buffers: ints(buffer),
            stale_accounts: Arg::Texts(vec![]),
        },
        Dialect::Sqlite => params! {
            items: serde_json::json!([{
                "account_id": account, "key": "k1", "request_hash": "h", "entry_id": 1,
                "delta": -AMOUNT, "amount_after": -AMOUNT, "available_after": -AMOUNT,
                "buffer": buffer, "ref": null, "now": 1, "actor": "library",
            }])
            .to_string(),
            changes: serde_json::json!([{
                "account_id": account, "delta": -AMOUNT, "spent": AMOUNT,
                "suspended_at": null, "balance_after": -AMOUNT, "buffer": buffer,
            }])
            .to_string(),
        },
    }
}

/// A debit of 10.00 on an account with 0 balance under `buffer`: the accounts the write
/// changed and the balance it left.
async fn debit_of_ten(pool: &Pool, buffer: i64) -> (i64, i64) {
    let dialect = match pool.dialect() {
        Dialect::Postgres => "postgres",
        Dialect::Sqlite => "sqlite",
    };
    let mut tx = pool.begin_write().await.unwrap();
    let account = format!("acct-{buffer}");
    let insert = "INSERT INTO accounts (account_id, plan, created_at) VALUES ($1, 'free', 0)";
    tx.execute(
        holdfast_store::db::Sql::both(insert),
        holdfast_store::args![account.as_str()],
    )
    .await
    .unwrap();
    let params = one_debit(pool.dialect(), &account, buffer);
    let rows = tx.rows(ingest_write(dialect), params).await.unwrap();
    let changed = rows[0].int("accounts_changed").unwrap();
    let balance = "SELECT balance FROM accounts WHERE account_id = $1";
    let balance = tx
        .fetch_one(
            holdfast_store::db::Sql::both(balance),
            holdfast_store::args![account.as_str()],
        )
        .await
        .unwrap()
        .int("balance")
        .unwrap();
    tx.rollback().await.unwrap();
    (changed, balance)
}

async fn check(pool: &Pool) {
    assert_eq!(
        debit_of_ten(pool, 5_000_000).await,
        (0, 0),
        "the write changed a balance past its buffer"
    );
    // The same write within the buffer does change it: the guard is what stopped it.
    assert_eq!(debit_of_ten(pool, 20_000_000).await, (1, -AMOUNT));
}

#[tokio::test]
async fn sqlite_debit_past_the_buffer_changes_no_balance() {
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
async fn postgres_debit_past_the_buffer_changes_no_balance() {
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
