//! A transaction SQLite ends by itself must not leave its pooled connection unusable.
//! SQLite rolls a whole transaction back on its own on some errors (SQLITE_FULL at
//! `COMMIT`, a full disk); sqlx's `ROLLBACK` then fails and sqlx goes on counting the
//! connection as inside a transaction, so every later `BEGIN` on it failed until the
//! process restarted. Here the transaction is ended under sqlx with a `ROLLBACK` of its
//! own, the state a full disk leaves, on a pool of one connection. SQLite only:
//! PostgreSQL never ends a transaction behind the client's back this way (the full-disk
//! test of the same fault is `holdfast-server/tests/crash_disk_full.rs`, which needs root).

use holdfast_store::driver::db::{Pool, PoolOptions, Sql};

#[tokio::test]
async fn a_transaction_sqlite_ended_by_itself_leaves_a_usable_pool() {
    let file = std::env::temp_dir().join(format!("holdfast-undone-{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", file.display());
    let opts = PoolOptions {
        max_connections: 1,
        ..PoolOptions::default()
    };
    let pool = Pool::connect(&url, &opts).await.unwrap();
    pool.migrate().await.unwrap();
    for _ in 0..3 {
        let mut tx = pool.begin_write().await.unwrap();
        tx.execute(Sql::both("ROLLBACK"), vec![]).await.unwrap();
        let committed = tx.commit().await;
        assert!(committed.is_err(), "COMMIT with no transaction open");
        // The next writer gets a connection that can begin (before the fix: "attempted to
        // call begin_with at non-zero transaction depth", on every later try).
        let mut tx = pool.begin_write().await.expect("a usable connection");
        let insert = "INSERT INTO accounts (account_id, plan, created_at) VALUES ($1, 'free', 0)";
        let id = uuid::Uuid::new_v4().to_string();
        tx.execute(Sql::both(insert), vec![id.into()])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    let mut tx = pool.begin_read().await.unwrap();
    let row = tx
        .fetch_one(Sql::both("SELECT count(*) AS n FROM accounts"), vec![])
        .await
        .unwrap();
    assert_eq!(row.int("n").unwrap(), 3);
    drop(tx);
    pool.close().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
