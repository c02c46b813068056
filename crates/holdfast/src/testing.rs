//! Test support, compiled only with the `testing` feature (the test crates enable it in
//! their dev-dependencies): a fresh database per test on each backend, and the fixtures
//! that the suites of holdfast and holdfast-server share. Not for production use.
//!
//! PostgreSQL is found at `HOLDFAST_TEST_POSTGRES` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`). Each test gets a database of its own with
//! a random name, dropped afterwards. It is cloned (`CREATE DATABASE … TEMPLATE`) from a
//! template that holds the migrated schema, `holdfast_tmpl_<hash>`, named after the
//! PostgreSQL migrations' checksums so that a changed schema gets a new template. The first
//! test of a process that finds the template missing makes it (one process at a time,
//! under an advisory lock); later tests and runs reuse it, and nothing assumes it
//! survives. When PostgreSQL cannot be reached, the PostgreSQL half of each test fails
//! under CI (`CI=true`) and is skipped loudly elsewhere.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use sqlx::{AssertSqlSafe, Connection, PgConnection, SqliteConnection};

use crate::{
    AccountId, CreditKind, Engine, Event, EventFilter, IdempotencyKey, JobId, Micros, PoolOptions,
    PutAccount, RateCard, Refusal, StoreError, Submit, WorkerId,
};
use holdfast_store::Store;

// ---------------------------------------------------------------- databases

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub fn admin_url() -> String {
    std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The admin URL with another database's name.
fn database_url(admin: &str, name: &str) -> String {
    let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
    format!("{base}/{name}")
}

/// A fresh database, dropped (PostgreSQL) or deleted (SQLite) afterwards.
pub struct TestDb {
    pub url: String,
    pub backend: Backend,
    name: String,
    _dir: Option<tempfile::TempDir>,
}

static PG_WARNED: OnceLock<()> = OnceLock::new();

/// Creates the SQLite file `url` names with the current schema (the operator CLI opens
/// only a migrated database).
async fn migrate_sqlite(url: &str) {
    let pool = holdfast_store::driver::db::Pool::connect(url, &PoolOptions::default())
        .await
        .expect("create the SQLite file");
    pool.migrate().await.expect("migrate the SQLite file");
    pool.close().await;
}

/// `$body` with `$c` a new connection to the test database `$db`, of its backend's type.
macro_rules! on_own_connection {
    ($db:expr, |$c:ident| $body:expr) => {
        match $db.backend {
            Backend::Sqlite => {
                let mut $c = SqliteConnection::connect(&$db.url).await.expect("connect");
                $body
            }
            Backend::Postgres => {
                let mut $c = PgConnection::connect(&$db.url).await.expect("connect");
                $body
            }
        }
    };
}

impl TestDb {
    /// A fresh database with the current schema (PostgreSQL: a clone of the template;
    /// SQLite: a new file, migrated), or `None` when PostgreSQL is unreachable outside CI.
    pub async fn new(backend: Backend) -> Option<TestDb> {
        TestDb::create(backend, true).await
    }

    /// A fresh database without any schema, for a test of migrating itself.
    pub async fn empty(backend: Backend) -> Option<TestDb> {
        TestDb::create(backend, false).await
    }

    async fn create(backend: Backend, migrated: bool) -> Option<TestDb> {
        let name = format!("holdfast_test_{}", uuid::Uuid::new_v4().simple());
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("test.db").display());
                if migrated {
                    migrate_sqlite(&url).await;
                }
                Some(TestDb {
                    url,
                    backend,
                    name,
                    _dir: Some(dir),
                })
            }
            Backend::Postgres => {
                let admin = admin_url();
                let mut conn = match PgConnection::connect(&admin).await {
                    Ok(c) => c,
                    Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                        panic!(
                            "PostgreSQL is required under CI and cannot be reached at {admin}: {e}"
                        )
                    }
                    Err(e) => {
                        PG_WARNED.get_or_init(|| {
                            eprintln!("\n*** PostgreSQL unreachable at {admin}: {e}\n*** SKIPPING the PostgreSQL half of the suite\n");
                        });
                        return None;
                    }
                };
                if migrated {
                    clone_template(&mut conn, &admin, &name).await;
                } else {
                    run(&mut conn, &format!("CREATE DATABASE {name}")).await;
                }
                let _ = conn.close().await;
                Some(TestDb {
                    url: database_url(&admin, &name),
                    backend,
                    name,
                    _dir: None,
                })
            }
        }
    }

    /// Opens a store on this database with the given card.
    pub async fn store(&self, card: RateCard) -> Store {
        let opts = PoolOptions {
            max_connections: 24,
            ..PoolOptions::default()
        };
        Store::open(&self.url, card, &opts)
            .await
            .expect("open store")
    }

    /// Sets credit blocks' expiry (`expires_at`: an SQL expression over the row, e.g.
    /// `1` or `expires_at - 60`) behind the engine's back, for a test that cannot wait
    /// for a clock: in both places a block's terms are kept, its row and its account's
    /// live blocks (`accounts.live_blocks`, rebuilt from the rows as migration 0019 does).
    pub async fn set_block_expiry(&self, blocks: &[i64], expires_at: &str) {
        let ids = (blocks.iter().map(i64::to_string))
            .collect::<Vec<_>>()
            .join(", ");
        let set =
            format!("UPDATE credit_blocks SET expires_at = {expires_at} WHERE block_id IN ({ids})");
        self.execute(&set).await;
        let live = match self.backend {
            Backend::Postgres => {
                "(SELECT COALESCE(json_agg(json_build_array(block_id, category, priority, \
                 expires_at, created_at, granted, remaining, held) ORDER BY block_id), '[]')::text \
                 FROM credit_blocks WHERE credit_blocks.account_id = accounts.account_id \
                 AND remaining > 0)"
            }
            Backend::Sqlite => {
                "(SELECT json_group_array(json_array(block_id, category, priority, expires_at, \
                 created_at, granted, remaining, held)) FROM (SELECT * FROM credit_blocks \
                 WHERE credit_blocks.account_id = accounts.account_id AND remaining > 0 \
                 ORDER BY block_id))"
            }
        };
        let accounts = format!("SELECT account_id FROM credit_blocks WHERE block_id IN ({ids})");
        let rebuild =
            format!("UPDATE accounts SET live_blocks = {live} WHERE account_id IN ({accounts})");
        self.execute(&rebuild).await;
    }

    /// Runs one statement on this database over a connection of its own, behind any
    /// store's back; answers how many rows it changed.
    pub async fn execute(&self, sql: &str) -> u64 {
        let safe = || AssertSqlSafe(sql.to_owned());
        let changed = on_own_connection!(self, |c| {
            sqlx::query(safe())
                .execute(&mut c)
                .await
                .map(|done| done.rows_affected())
        });
        changed.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The one integer a query answers, read over a connection of its own.
    pub async fn query_i64(&self, sql: &str) -> i64 {
        let safe = || AssertSqlSafe(sql.to_owned());
        let answer = on_own_connection!(self, |c| {
            sqlx::query_scalar(safe()).fetch_one(&mut c).await
        });
        answer.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if self.backend != Backend::Postgres {
            return;
        }
        let name = self.name.clone();
        // Best effort, on a thread of its own: Drop cannot await.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut conn = PgConnection::connect(&admin_url()).await.ok()?;
                sqlx::query(AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await
                .ok()
            })
        })
        .join();
    }
}

/// Runs one statement on an admin connection; a failure fails the test.
async fn run(conn: &mut PgConnection, sql: &str) {
    sqlx::query(AssertSqlSafe(sql.to_owned()))
        .execute(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

// ---------------------------------------------------------------- the PostgreSQL template

/// The PostgreSQL migrations, the same files `holdfast-store` embeds: here only to name
/// the template after them (the template itself is migrated by [`Store::open`]).
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator =
    sqlx::migrate!("../holdfast-store/migrations/postgres");

/// The advisory lock (taken on the admin database) under which a process looks for the
/// template and makes it when missing, so that two test processes never make it at once.
const TEMPLATE_LOCK: i64 = 0x686f_6c64_6661_7374; // "holdfast"

/// This process's template, once found or made.
static TEMPLATE: tokio::sync::Mutex<Option<String>> = tokio::sync::Mutex::const_new(None);

/// `holdfast_tmpl_` and the start of a SHA-256 over every migration's version,
/// description and checksum.
fn template_name() -> String {
    let mut hash = Sha256::new();
    for m in POSTGRES_MIGRATIONS.iter() {
        hash.update(m.version.to_le_bytes());
        hash.update(m.description.as_bytes());
        hash.update([0]);
        hash.update(&*m.checksum);
    }
    format!("holdfast_tmpl_{}", &hex::encode(hash.finalize())[..16])
}

/// The template's name, the template made first when this process has not seen it yet.
async fn template(admin: &str) -> String {
    let mut known = TEMPLATE.lock().await;
    if let Some(name) = &*known {
        return name.clone();
    }
    let name = template_name();
    make_template(admin, &name).await;
    *known = Some(name.clone());
    name
}

/// Makes the migrated template `name` unless it exists. It is built under another name
/// and renamed when complete, so a database of this name is always whole (a process that
/// died half-way leaves a `_building` database, which the next one drops). No one may
/// connect to it afterwards: `CREATE DATABASE … TEMPLATE` refuses a template anyone is
/// connected to.
async fn make_template(admin: &str, name: &str) {
    let mut conn = PgConnection::connect(admin)
        .await
        .unwrap_or_else(|e| panic!("connect to {admin}: {e}"));
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(TEMPLATE_LOCK)
        .execute(&mut conn)
        .await
        .expect("take the template lock");
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(name)
            .fetch_one(&mut conn)
            .await
            .expect("look for the template");
    if !exists {
        let building = format!("{name}_building");
        run(
            &mut conn,
            &format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"),
        )
        .await;
        run(&mut conn, &format!("CREATE DATABASE {building}")).await;
        let opts = PoolOptions {
            max_connections: 1,
            ..PoolOptions::default()
        };
        let store = Store::open(&database_url(admin, &building), RateCard::builtin(), &opts)
            .await
            .unwrap_or_else(|e| panic!("migrate the template {building}: {e}"));
        store.pool().close().await;
        run(
            &mut conn,
            &format!("ALTER DATABASE {building} WITH ALLOW_CONNECTIONS false"),
        )
        .await;
        run(
            &mut conn,
            &format!("ALTER DATABASE {building} RENAME TO {name}"),
        )
        .await;
    }
    // Ending the session releases the lock (as it would if this process died).
    let _ = conn.close().await;
}

/// `CREATE DATABASE name TEMPLATE <the template>` on an admin connection. A template that
/// has vanished since this process saw it (dropped by hand or by a clean-up) is made again.
async fn clone_template(conn: &mut PgConnection, admin: &str, name: &str) {
    let mut again = true;
    loop {
        let template = template(admin).await;
        let sql = format!("CREATE DATABASE {name} TEMPLATE {template}");
        match sqlx::query(AssertSqlSafe(sql)).execute(&mut *conn).await {
            Ok(_) => return,
            Err(e) if again && is_missing_database(&e) => {
                again = false;
                let mut known = TEMPLATE.lock().await;
                if known.as_deref() == Some(template.as_str()) {
                    *known = None;
                }
            }
            Err(e) => panic!("create test database {name} from {template}: {e}"),
        }
    }
}

/// SQLSTATE 3D000 `invalid_catalog_name`: no database of that name.
fn is_missing_database(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|code| code == "3D000")
}

// ---------------------------------------------------------------- fixtures

/// A reading of the database's clock later than every write before it: a boundary
/// between what was written before and what is written after. SQLite's clock counts
/// milliseconds, so a write and the reading right after it can share one; a period
/// `[from, to)` that such a reading ends would leave that write out.
pub async fn mark(e: &crate::Engine) -> i64 {
    let written = e.now().await.unwrap();
    loop {
        let now = e.now().await.unwrap();
        if now > written {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_micros(200)).await;
    }
}

pub fn acct(s: &str) -> AccountId {
    AccountId::parse(s).unwrap()
}

pub fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::parse(s).unwrap()
}

pub fn usd(s: &str) -> Micros {
    Micros::parse(s).unwrap()
}

pub fn job_id(s: &str) -> JobId {
    JobId::parse(s).unwrap()
}

/// The worker `w1`.
pub fn worker() -> WorkerId {
    WorkerId::parse("w1").unwrap()
}

/// A runtime for a model test, whose proptest cases run synchronously and block on it.
pub fn model_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh database with the given card and an engine on it, or `None` when PostgreSQL is
/// unavailable locally.
pub async fn engine_with(backend: Backend, card: RateCard) -> Option<(TestDb, Engine)> {
    let db = TestDb::new(backend).await?;
    let store = db.store(card).await;
    Some((db, Engine::new(store)))
}

/// As [`engine_with`], with the built-in card.
pub async fn engine(backend: Backend) -> Option<(TestDb, Engine)> {
    engine_with(backend, RateCard::builtin()).await
}

/// Creates (or moves) account `id` on `plan`.
pub async fn put(store: &Store, id: &str, plan: &str) {
    put_limited(store, id, plan, None).await;
}

/// As [`put`], with the account's own limit of concurrent jobs.
pub async fn put_limited(store: &Store, id: &str, plan: &str, max_concurrent_jobs: Option<i64>) {
    store
        .put_account(
            &acct(id),
            &PutAccount {
                plan: plan.into(),
                plan_until: None,
                max_concurrent_jobs,
                recharge: None,
                spend: None,
            },
        )
        .await
        .unwrap();
}

pub async fn top_up(store: &Store, id: &str, amount: &str, k: &str) {
    store
        .credit(&acct(id), usd(amount), CreditKind::TopUp, &key(k))
        .await
        .unwrap();
}

/// A submit of `kind` for `account` under key `k`, with a small payload.
pub fn submit_req(account: &str, kind: &str, k: &str) -> Submit {
    Submit {
        account: acct(account),
        kind: kind.into(),
        payload: Some(serde_json::json!({"prompt": "a cat"})),
        key: key(k),
    }
}

/// The refusal a call must have answered.
#[track_caller]
pub fn refused<T: std::fmt::Debug>(r: Result<T, StoreError>) -> Refusal {
    match r {
        Err(StoreError::Refused(x)) => x,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The audit must find nothing.
pub async fn assert_clean(store: &Store) {
    let violations = store.audit().await.unwrap();
    assert!(violations.is_empty(), "audit violations: {violations:#?}");
}

/// Runs one statement behind the store's back, the way a bug or a hand edit would write a
/// stored amount: it must change exactly one row.
pub async fn behind_the_back(db: &TestDb, sql: &str) {
    assert_eq!(db.execute(sql).await, 1, "{sql}");
}

/// The text of the default rate card with each `(from, to)` replaced once (each `from`
/// must be there).
pub fn card_text_with(pairs: &[(&str, &str)]) -> String {
    let mut text = holdfast_core::ratecard::DEFAULT_RATE_CARD.to_owned();
    for (from, to) in pairs {
        assert!(text.contains(from), "card has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

/// A rate card derived from the default by text replacement ([`card_text_with`]).
pub fn card_with(pairs: &[(&str, &str)]) -> RateCard {
    RateCard::parse(&card_text_with(pairs)).unwrap()
}

/// A rate card's text in a temporary file (deleted when dropped), for `--rate-card`.
pub fn card_file(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

/// PostgreSQL: a connection inside a transaction that holds a transaction id, as any
/// writer does, so that while it is open every snapshot of the cluster has its xmin at or
/// before it. End it with `ROLLBACK` (or drop it). For tests of what a long transaction
/// elsewhere must not hold back.
pub async fn open_xid_holder(url: &str) -> PgConnection {
    let mut c = PgConnection::connect(url).await.expect("connect");
    run(&mut c, "BEGIN").await;
    run(&mut c, "SELECT pg_current_xact_id()").await;
    c
}

/// Events of one type, waiting (up to 10 s) until at least `at_least` are listed (an
/// event written by another task may still be committing).
pub async fn events_of(store: &Store, event_type: &str, at_least: usize) -> Vec<Event> {
    let filter = EventFilter {
        limit: 1000,
        event_type: Some(event_type.into()),
        ..Default::default()
    };
    for _ in 0..200 {
        let items = store.events(&filter).await.unwrap().items;
        if items.len() >= at_least {
            return items;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    store.events(&filter).await.unwrap().items
}

/// Declares one async test per backend: `name::sqlite` and `name::postgres`. The body gets
/// a `Backend` and runs on a multi-threaded runtime.
#[macro_export]
macro_rules! backend_test {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                ($body)($crate::testing::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                ($body)($crate::testing::Backend::Postgres).await
            }
        }
    };
}
