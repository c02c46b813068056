//! PostgreSQL's refusals that are the server's state, not a fault of the write, map to
//! the store errors the callers answer 503 to (PostgreSQL only). The server raises each
//! SQLSTATE itself, in a write transaction of a fresh database, as it would when its
//! disk is full (53100) or its connection slots are taken (53300); the store must not
//! call either a database fault (500).

use holdfast::StoreError;
use holdfast::testing::{Backend, engine};
use holdfast_store::driver::db::{Pool, Sql};

/// Raises its argument as the SQLSTATE of an error, as the server raises its own.
const RAISE: &str = "CREATE FUNCTION raise_sqlstate(code text) RETURNS void LANGUAGE plpgsql \
    AS $$ BEGIN RAISE EXCEPTION 'raised for the test' USING ERRCODE = code; END $$";

/// What a write transaction that meets SQLSTATE `code` fails with.
async fn failing_with(pool: &Pool, code: &str) -> StoreError {
    let mut tx = pool.begin_write().await.unwrap();
    let raise = Sql::both("SELECT raise_sqlstate($1)");
    let err = tx
        .execute(raise, holdfast_store::args![code])
        .await
        .unwrap_err();
    tx.rollback().await.unwrap();
    err
}

#[tokio::test]
async fn a_full_disk_and_a_full_server_are_unavailable_not_faults() {
    let Some((db, engine)) = engine(Backend::Postgres).await else {
        return;
    };
    db.execute(RAISE).await;
    let pool = engine.store().pool();

    let full = failing_with(pool, "53100").await;
    assert!(
        matches!(&full, StoreError::DiskFull(why) if why.contains("raised for the test")),
        "{full:?}"
    );
    let busy = failing_with(pool, "53300").await;
    assert!(matches!(&busy, StoreError::Unavailable(_)), "{busy:?}");
    // Anything else of class 53 (out of memory) stays a fault, loudly.
    let other = failing_with(pool, "53200").await;
    assert!(matches!(&other, StoreError::Database(_)), "{other:?}");
}
