//! SQLite's durability setting: every connection of the pool syncs each commit
//! (`synchronous = FULL`) unless the operator opted into NORMAL. (Whether the OS then
//! keeps its promise is SQLite's and the disk's; what this pins is that holdfast asks.)

use holdfast_store::SqliteSync;
use holdfast_store::driver::db::{Pool, PoolOptions, Sql};

async fn synchronous_of(opts: &PoolOptions) -> Vec<i64> {
    let dir = std::env::temp_dir().join(format!("holdfast-sync-{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", dir.display());
    let pool = Pool::connect(&url, opts).await.unwrap();
    pool.migrate().await.unwrap();
    // Several transactions at once, so more than one pooled connection answers.
    let mut txs = Vec::new();
    for _ in 0..3 {
        txs.push(pool.begin_read().await.unwrap());
    }
    let mut out = Vec::new();
    for tx in &mut txs {
        let row = tx
            .fetch_one(Sql::both("PRAGMA synchronous"), vec![])
            .await
            .unwrap();
        out.push(row.int("synchronous").unwrap());
    }
    drop(txs);
    pool.close().await;
    let _ = std::fs::remove_file(&dir);
    out
}

#[tokio::test]
async fn every_commit_is_synced_by_default_and_normal_is_an_opt_in() {
    // SQLite's codes: 1 = NORMAL, 2 = FULL.
    assert_eq!(synchronous_of(&PoolOptions::default()).await, [2, 2, 2]);
    let normal = PoolOptions {
        sqlite_synchronous: SqliteSync::Normal,
        ..PoolOptions::default()
    };
    assert_eq!(synchronous_of(&normal).await, [1, 1, 1]);
    assert_eq!(SqliteSync::parse("full"), Some(SqliteSync::Full));
    assert_eq!(SqliteSync::parse("off"), None);
}
