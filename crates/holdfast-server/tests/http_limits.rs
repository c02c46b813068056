//! Load shedding and limits on both backends: the per-key request rate limit (429
//! `rate_limited` with `Retry-After`), 503 with `Retry-After` when the database cannot
//! take a request, and the bounds on request headers and on slow clients.

mod http_support;

use std::time::{Duration, Instant};

use holdfast::testing::{Backend, TestDb};
use holdfast::{Engine, PoolOptions, RateCard, backend_test};
use holdfast_server::http::ServerOptions;
use holdfast_server::http::limits::RateLimit;
use holdfast_server::http::listen::{ConnectionLimits, MAX_HEADER_BYTES, MAX_HEADERS};
use holdfast_store::Store;
use http_support::*;
use reqwest::header::RETRY_AFTER;
use serde_json::{Value, json};
use sqlx::{AssertSqlSafe, Connection, PgConnection, SqliteConnection};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One GET with `key`: its status, its `Retry-After` in seconds (if any) and its body.
async fn get_with(api: &Api, key: &str, path: &str) -> (u16, Option<u64>, Value) {
    let res = api
        .client
        .get(api.url(path))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get(RETRY_AFTER)
        .map(|v| v.to_str().unwrap().parse::<u64>().expect("whole seconds"));
    let body = res.json().await.unwrap_or(Value::Null);
    (status, retry_after, body)
}

backend_test!(
    a_flood_from_one_key_is_answered_429_while_another_key_is_served,
    |b| async move {
        let opts = ServerOptions {
            rate_limit: RateLimit::from_flags(1, Some(5)),
            ..test_options()
        };
        let Some(api) = api_served(b, opts).await else {
            return;
        };
        let other = holdfast_server::http::auth::new_key();
        api.engine
            .store()
            .create_key("service", &other)
            .await
            .unwrap();
        let flood: Vec<_> = (0..30)
            .map(|_| get_with(&api, &api.service, "/v1/accounts"))
            .collect();
        let answers = futures::future::join_all(flood).await;
        let served = answers.iter().filter(|(s, ..)| *s == 200).count();
        // The burst of 5, and at most a token or two that refilled during the flood.
        assert!((5..=7).contains(&served), "{served} served");
        let limited: Vec<_> = answers.iter().filter(|(s, ..)| *s == 429).collect();
        assert_eq!(served + limited.len(), answers.len(), "{answers:?}");
        for (_, retry_after, body) in &limited {
            assert!(retry_after.is_some_and(|s| s >= 1), "{retry_after:?}");
            assert_eq!(body["error"]["code"], "rate_limited", "{body}");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
        // In the same window: another key is served, and so is the admin key.
        let (status, retry_after, _) = get_with(&api, &other, "/v1/accounts").await;
        assert_eq!((status, retry_after), (200, None));
        let (status, ..) = get_with(&api, &api.admin, "/v1/accounts").await;
        assert_eq!(status, 200);
        // A request that fails auth is 401, never 429, and counts against no key.
        for _ in 0..10 {
            let (status, ..) = get_with(&api, "hf_no_such_key", "/v1/accounts").await;
            assert_eq!(status, 401);
        }
        let (status, ..) = get_with(&api, &other, "/v1/accounts").await;
        assert_eq!(status, 200);
        // The flooded key is served again once its bucket refills.
        let wait = limited.iter().filter_map(|(_, r, _)| *r).max().unwrap();
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        let (status, ..) = get_with(&api, &api.service, "/v1/accounts").await;
        assert_eq!(status, 200);
        api.stop().await;
    }
);

/// A server whose pool has 4 connections, each waited for at most 500 ms, and whose
/// SQLite writers wait at most 500 ms for the file's lock.
async fn api_with_small_pool(b: Backend) -> Option<Api> {
    let db = TestDb::new(b).await?;
    let opts = PoolOptions {
        max_connections: 4,
        acquire_timeout: Duration::from_millis(500),
        sqlite_busy_timeout: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    let store = Store::open(&db.url, RateCard::builtin(), &opts)
        .await
        .unwrap();
    Some(serve_api(db, Engine::new(store), test_options()).await)
}

/// Holds what the engine's writes need, from a connection of its own: on PostgreSQL the
/// row lock of `account`, on SQLite the file's write lock.
enum Blocker {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

impl Blocker {
    async fn hold(db: &TestDb, account: &str) -> Blocker {
        match db.backend {
            Backend::Postgres => {
                let mut c = PgConnection::connect(&db.url).await.unwrap();
                sqlx::query("BEGIN").execute(&mut c).await.unwrap();
                let lock =
                    format!("SELECT 1 FROM accounts WHERE account_id = '{account}' FOR UPDATE");
                sqlx::query(AssertSqlSafe(lock))
                    .execute(&mut c)
                    .await
                    .unwrap();
                Blocker::Postgres(c)
            }
            Backend::Sqlite => {
                let mut c = SqliteConnection::connect(&db.url).await.unwrap();
                sqlx::query("BEGIN IMMEDIATE")
                    .execute(&mut c)
                    .await
                    .unwrap();
                Blocker::Sqlite(c)
            }
        }
    }

    async fn release(self) {
        match self {
            Blocker::Postgres(mut c) => sqlx::query("ROLLBACK").execute(&mut c).await.map(drop),
            Blocker::Sqlite(mut c) => sqlx::query("ROLLBACK").execute(&mut c).await.map(drop),
        }
        .unwrap();
    }
}

/// On PostgreSQL, waits (boundedly) until `n` statements of the test database wait for
/// a lock: the pool's connections are all taken by writes stuck behind the blocker.
async fn until_waiting_for_locks(db: &TestDb, n: i64) {
    if db.backend != Backend::Postgres {
        return;
    }
    let sql = "SELECT count(*) FROM pg_stat_activity \
               WHERE datname = current_database() AND wait_event_type = 'Lock'";
    for _ in 0..200 {
        if db.query_i64(sql).await >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("fewer than {n} statements wait for the blocker's lock");
}

/// A POST with the service key: its status, its `Retry-After` and its body.
async fn post_with(api: &Api, path: &str, body: Value) -> (u16, Option<u64>, Value) {
    let res = api
        .client
        .post(api.url(path))
        .bearer_auth(&api.service)
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get(RETRY_AFTER)
        .map(|v| v.to_str().unwrap().parse::<u64>().expect("whole seconds"));
    (status, retry_after, res.json().await.unwrap_or(Value::Null))
}

fn top_up_of(key: &str) -> Value {
    json!({"amount": "1.00", "idempotency_key": key})
}

backend_test!(
    a_database_that_cannot_take_a_request_answers_503_at_once_and_recovers,
    |b| async move {
        let Some(api) = api_with_small_pool(b).await else {
            return;
        };
        api.account("slow", "free").await;
        api.account("fast", "free").await;
        api.top_up("fast", "5.00", "seed").await;
        let blocker = Blocker::hold(&api.db, "slow").await;
        // Four writes stuck behind the blocker: on PostgreSQL they hold every connection
        // of the pool; on SQLite each waits for the file's lock, at most 500 ms.
        let stuck: Vec<_> = (0..4)
            .map(|i| {
                let (client, url, key) = (
                    api.client.clone(),
                    api.url("/v1/accounts/slow/top-ups"),
                    api.service.clone(),
                );
                tokio::spawn(async move {
                    let res = client
                        .post(url)
                        .bearer_auth(key)
                        .json(&top_up_of(&format!("t{i}")))
                        .send()
                        .await
                        .unwrap();
                    res.status().as_u16()
                })
            })
            .collect();
        until_waiting_for_locks(&api.db, 4).await;
        let debit = json!({"amount": "0.25", "idempotency_key": "d1"});
        let asked = Instant::now();
        let (status, retry_after, body) =
            post_with(&api, "/v1/accounts/fast/debits", debit.clone()).await;
        let took = asked.elapsed();
        eprintln!("{b:?}: 503 after {took:?}");
        assert_eq!((status, retry_after), (503, Some(1)), "{body}");
        assert_eq!(body["error"]["code"], "database_unavailable");
        // Well under the request time limit (20 s here): the wait for the database is
        // bounded by the pool's acquire timeout (and SQLite's busy timeout).
        assert!(took < Duration::from_secs(3), "503 after {took:?}");
        blocker.release().await;
        let firsts: Vec<u16> = futures::future::join_all(stuck)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        for status in &firsts {
            // PostgreSQL: the writes waited for the lock and applied once it went away;
            // SQLite: they were answered 503 after the busy timeout.
            assert!([201, 503].contains(status), "{firsts:?}");
        }
        // Recovered by itself: the refused debit, retried with its key, applies once.
        let (status, ..) = post_with(&api, "/v1/accounts/fast/debits", debit.clone()).await;
        assert_eq!(status, 201);
        let (status, _, replay) = post_with(&api, "/v1/accounts/fast/debits", debit).await;
        assert_eq!(status, 200, "{replay}");
        for (i, first) in firsts.iter().enumerate() {
            let (status, ..) = post_with(
                &api,
                "/v1/accounts/slow/top-ups",
                top_up_of(&format!("t{i}")),
            )
            .await;
            let want = if *first == 201 { 200 } else { 201 };
            assert_eq!(status, want, "top-up t{i} first answered {first}");
        }
        assert_eq!(api.get_account("fast").await["balance"], "4.75");
        assert_eq!(api.get_account("slow").await["balance"], "4.00");
        api.assert_clean().await;
        api.stop().await;
    }
);

/// A server whose clients must send their header section within 2 seconds.
async fn api_with_header_timeout(b: Backend) -> Option<Api> {
    let opts = ServerOptions {
        connection_limits: ConnectionLimits {
            header_read_timeout: Duration::from_secs(2),
            ..ConnectionLimits::default()
        },
        ..test_options()
    };
    api_served(b, opts).await
}

/// Whether the server closed `stream` within `wait` (read end or reset); panics on an
/// answer.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 512];
    match tokio::time::timeout(wait, stream.read(&mut buf)).await {
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(n)) => panic!("answered: {:?}", String::from_utf8_lossy(&buf[..n])),
        Err(_) => false,
    }
}

backend_test!(
    a_client_that_sends_its_headers_one_byte_a_second_is_disconnected,
    |b| async move {
        let Some(api) = api_with_header_timeout(b).await else {
            return;
        };
        let addr = api.base.trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        let request =
            b"GET /healthz HTTP/1.1\r\nHost: holdfast\r\nX-Slow: one byte a second\r\n\r\n";
        let started = Instant::now();
        let mut sent = 0;
        let closed = loop {
            if sent == request.len() {
                break false;
            }
            if stream.write_all(&request[sent..=sent]).await.is_err() {
                break true;
            }
            sent += 1;
            if closed_within(&mut stream, Duration::from_secs(1)).await {
                break true;
            }
        };
        let took = started.elapsed();
        eprintln!("{b:?}: closed after {sent} bytes, {took:?}");
        assert!(closed, "all {sent} bytes went through at one a second");
        assert!(sent < request.len() / 2, "closed only after {sent} bytes");
        assert!(took < Duration::from_secs(10), "closed after {took:?}");
        // A connection that sends nothing at all is closed too.
        let mut idle = TcpStream::connect(&addr).await.unwrap();
        assert!(closed_within(&mut idle, Duration::from_secs(10)).await);
        // And the server goes on serving everyone else.
        api.get("", "/healthz").await.expect(200, "");
        api.stop().await;
    }
);

backend_test!(
    oversized_headers_are_answered_431_and_the_server_keeps_serving,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let big = "x".repeat(MAX_HEADER_BYTES);
        let res = api
            .client
            .get(api.url("/healthz"))
            .header("x-big", &big)
            .send()
            .await;
        // hyper answers 431 and closes; a client may see the close before the answer.
        match res {
            Ok(res) => assert_eq!(res.status().as_u16(), 431),
            Err(e) => assert!(!e.is_timeout(), "{e}"),
        }
        let mut many = api.client.get(api.url("/healthz"));
        for i in 0..=MAX_HEADERS {
            many = many.header(format!("x-h{i}"), "1");
        }
        match many.send().await {
            Ok(res) => assert_eq!(res.status().as_u16(), 431),
            Err(e) => assert!(!e.is_timeout(), "{e}"),
        }
        // Just under both bounds is served.
        let mut fits = api
            .client
            .get(api.url("/healthz"))
            .header("x-big", "x".repeat(MAX_HEADER_BYTES / 2));
        for i in 0..MAX_HEADERS - 10 {
            fits = fits.header(format!("x-h{i}"), "1");
        }
        assert_eq!(fits.send().await.unwrap().status().as_u16(), 200);
        api.get("", "/healthz").await.expect(200, "");
        api.stop().await;
    }
);

/// Sends a keep-alive `GET /healthz` on `stream` and waits up to `wait` for its answer's
/// status line; `None` when no answer came in that time.
async fn health_on(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: holdfast\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 1024];
    let read = tokio::time::timeout(wait, stream.read(&mut buf))
        .await
        .ok()?;
    let n = read.unwrap();
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    Some(text.lines().next().unwrap_or("").to_owned())
}

backend_test!(
    connections_past_the_cap_wait_until_one_closes,
    |b| async move {
        let opts = ServerOptions {
            connection_limits: ConnectionLimits {
                header_read_timeout: Duration::from_secs(60),
                max_connections: 2,
                ..ConnectionLimits::default()
            },
            ..test_options()
        };
        let Some(api) = api_served(b, opts).await else {
            return;
        };
        let addr = api.base.trim_start_matches("http://").to_owned();
        let wait = Duration::from_secs(10);
        let mut first = TcpStream::connect(&addr).await.unwrap();
        let mut second = TcpStream::connect(&addr).await.unwrap();
        for stream in [&mut first, &mut second] {
            let status = health_on(stream, wait).await.expect("served");
            assert_eq!(status, "HTTP/1.1 200 OK");
        }
        // Both stay open (keep-alive): a third connection waits in the listen queue.
        let mut third = TcpStream::connect(&addr).await.unwrap();
        let mut third_answer = tokio::spawn(async move { health_on(&mut third, wait * 3).await });
        let early = tokio::time::timeout(Duration::from_millis(500), &mut third_answer).await;
        assert!(early.is_err(), "a third connection was served: {early:?}");
        drop(first);
        let status = third_answer.await.unwrap().expect("served once one closed");
        assert_eq!(status, "HTTP/1.1 200 OK");
        drop(second);
        api.stop().await;
    }
);

backend_test!(
    a_request_without_a_key_is_refused_before_its_body_arrives,
    |b| async move {
        let Some(api) = api(b).await else { return };
        let addr = api.base.trim_start_matches("http://").to_owned();
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        // A body of 1 MiB announced, none of it sent: the answer comes anyway.
        stream
            .write_all(
                b"POST /v1/debits HTTP/1.1\r\nHost: holdfast\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n",
            )
            .await
            .unwrap();
        let mut buf = vec![0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("answered without the body")
            .unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.starts_with("HTTP/1.1 401"), "{text}");
        assert!(text.contains("unauthorized"), "{text}");
        // With a key the same request waits for its body (the handler needs it).
        let mut keyed = TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST /v1/debits HTTP/1.1\r\nHost: holdfast\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n",
            api.service
        );
        keyed.write_all(head.as_bytes()).await.unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(1500), keyed.read(&mut buf)).await;
        assert!(waited.is_err(), "answered before the body: {waited:?}");
        drop(keyed);
        api.stop().await;
    }
);

backend_test!(
    a_client_that_stops_reading_its_answer_is_disconnected_and_frees_its_place,
    |b| async move {
        let opts = ServerOptions {
            connection_limits: ConnectionLimits {
                max_connections: 1,
                write_stall_timeout: Duration::from_secs(1),
                ..ConnectionLimits::default()
            },
            ..test_options()
        };
        let Some(api) = api_served(b, opts).await else {
            return;
        };
        let addr: std::net::SocketAddr = api.base.trim_start_matches("http://").parse().unwrap();
        // A client with a small receive window that asks for the OpenAPI document many
        // times over one connection (pipelined) and reads nothing: the server's writes
        // stall.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stalled = socket.connect(addr).await.unwrap();
        let ask = b"GET /openapi.json HTTP/1.1\r\nHost: holdfast\r\n\r\n".repeat(64);
        stalled.write_all(&ask).await.unwrap();
        // The only place is taken: another client is served only once the stalled one
        // is disconnected, a second or so later.
        let mut next = TcpStream::connect(addr).await.unwrap();
        let status = health_on(&mut next, Duration::from_secs(20)).await;
        assert_eq!(status.as_deref(), Some("HTTP/1.1 200 OK"));
        // The stalled client finds its connection ended: what it reads ends before the
        // 64 answers it asked for.
        let mut got = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(20), stalled.read_to_end(&mut got)).await;
        let answers = String::from_utf8_lossy(&got)
            .matches("HTTP/1.1 200 OK")
            .count();
        assert!(read.is_ok(), "the stalled connection stayed open");
        assert!(answers < 64, "all {answers} answers were sent");
        api.stop().await;
    }
);
