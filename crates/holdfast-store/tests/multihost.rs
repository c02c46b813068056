//! A multi-host PostgreSQL URL against the test server (PostgreSQL only; skipped loudly
//! when it is unreachable, failed under `CI=true`): a dead first host is skipped; a host
//! that turns read-only is left (writes are unavailable, not errors) and followed again
//! once it is writable; and on a single-host URL a write refused as read-only (25006) is
//! unavailable too, and a pooled connection whose server session ended while it was idle
//! is replaced, the write never seeing it. The failover itself, with a real standby, is in holdfast-server's
//! `tests/failover.rs`.

use std::time::{Duration, Instant};

use holdfast_store::StoreError;
use holdfast_store::driver::db::{Pool, PoolOptions, Sql};
use sqlx::{Connection, Executor, PgConnection};

async fn write(pool: &Pool, account: &str) -> Result<(), StoreError> {
    let mut tx = pool.begin_write().await?;
    let insert = "INSERT INTO accounts (account_id, plan, created_at) VALUES ($1, 'free', 0)";
    tx.execute(Sql::both(insert), holdfast_store::args![account])
        .await?;
    tx.commit().await
}

/// The admin URL with `host:port` put first in its host list, and another database.
fn with_first_host(admin: &str, first: &str, db: &str, query: &str) -> String {
    let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
    let (scheme, rest) = base.split_once("://").expect("a URL");
    let hosts = match rest.rsplit_once('@') {
        Some((user, hosts)) => format!("{user}@{first},{hosts}"),
        None => format!("{first},{rest}"),
    };
    format!("{scheme}://{hosts}/{db}{query}")
}

async fn run(conn: &mut PgConnection, sql: String) {
    conn.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
}

/// Keeps writing until `done` says the answer is the one awaited (bounded).
async fn until<F: Fn(&Result<(), StoreError>) -> bool>(pool: &Pool, done: F, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    loop {
        n += 1;
        let answer = write(pool, &format!("acct-{what}-{n}")).await;
        if done(&answer) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A fresh, empty database named `prefix` and a random suffix: the admin URL, a
/// connection to it (to drop the database at the end) and the database's name; or
/// `None` (skipped loudly) when PostgreSQL is unreachable outside CI.
async fn fresh_database(prefix: &str) -> Option<(String, PgConnection, String)> {
    let admin = std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let mut conn = match PgConnection::connect(&admin).await {
        Ok(c) => c,
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("PostgreSQL is required under CI: {admin}: {e}")
        }
        Err(e) => {
            eprintln!("\n*** PostgreSQL unreachable at {admin}: {e}\n*** SKIPPING\n");
            return None;
        }
    };
    let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    run(&mut conn, format!("CREATE DATABASE {name}")).await;
    Some((admin, conn, name))
}

/// The admin URL with another database, on its one host.
fn single_host(admin: &str, db: &str) -> String {
    format!("{}/{db}", admin.rsplit_once('/').map_or(admin, |(b, _)| b))
}

#[tokio::test]
async fn a_connection_whose_server_session_ended_while_idle_is_replaced() {
    let Some((admin, mut conn, name)) = fresh_database("holdfast_idle").await else {
        return;
    };
    let opts = PoolOptions {
        max_connections: 3,
        acquire_timeout: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    let pool = Pool::connect(&single_host(&admin, &name), &opts)
        .await
        .unwrap();
    pool.migrate().await.unwrap();
    // Three transactions at once: three pooled connections, all idle afterwards.
    let mut txs = Vec::new();
    for _ in 0..3 {
        txs.push(pool.begin_write().await.unwrap());
    }
    for tx in txs {
        tx.commit().await.unwrap();
    }
    // Their server sessions end (as in a restart) while they sit idle: at once, so each
    // is handed out unpinged, fails its BEGIN and is replaced (the retry in `pg_begin`);
    // then again after more than a second of idleness, where the ping before use finds
    // each dead first (the retry would replace them too, so this half does not tell the
    // two apart).
    let terminate =
        format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'");
    run(&mut conn, terminate.clone()).await;
    for n in 0..3 {
        let answer = write(&pool, &format!("at-once-{n}")).await;
        assert!(
            answer.is_ok(),
            "write {n} right after the sessions ended: {answer:?}"
        );
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    run(&mut conn, terminate).await;
    for n in 0..3 {
        let answer = write(&pool, &format!("after-{n}")).await;
        assert!(
            answer.is_ok(),
            "write {n} after the sessions ended: {answer:?}"
        );
    }
    pool.close().await;
    run(&mut conn, format!("DROP DATABASE {name} WITH (FORCE)")).await;
}

#[tokio::test]
async fn a_multi_host_pool_skips_dead_and_read_only_hosts_and_comes_back() {
    let Some((admin, mut conn, name)) = fresh_database("holdfast_multihost").await else {
        return;
    };
    let opts = PoolOptions {
        max_connections: 2,
        acquire_timeout: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    // Port 1 refuses connections: the pool starts on the second host.
    let query = "?target_session_attrs=read-write";
    let multi = with_first_host(&admin, "127.0.0.1:1", &name, query);
    let pool = Pool::connect(&multi, &opts).await.unwrap();
    pool.migrate().await.unwrap();
    write(&pool, "first").await.unwrap();

    // The host turns read-only (as an old primary back as a standby) and drops its
    // sessions: writes are unavailable, never another error, until it is writable again.
    run(
        &mut conn,
        format!("ALTER DATABASE {name} SET default_transaction_read_only = on"),
    )
    .await;
    let terminate =
        format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'");
    run(&mut conn, terminate).await;
    let no_host = |a: &Result<(), StoreError>| {
        assert!(matches!(a, Err(StoreError::Unavailable(_))), "{a:?}");
        matches!(a, Err(StoreError::Unavailable(why)) if why.contains("no host is acceptable"))
    };
    until(&pool, no_host, "read-only").await;

    // One host: the write reaches the read-only server, which refuses it (25006).
    let one = Pool::connect(&single_host(&admin, &name), &opts)
        .await
        .unwrap();
    let refused = write(&one, "single").await;
    assert!(
        matches!(&refused, Err(StoreError::Unavailable(why)) if why.contains("read-only")),
        "{refused:?}"
    );
    one.close().await;

    run(
        &mut conn,
        format!("ALTER DATABASE {name} RESET default_transaction_read_only"),
    )
    .await;
    until(&pool, Result::is_ok, "writable again").await;
    pool.close().await;
    run(&mut conn, format!("DROP DATABASE {name} WITH (FORCE)")).await;
}
