//! The floor: the statements each path must issue, as plain sqlx calls with no engine
//! logic (no snapshot, no decision, no dialect layer, no retry loop). Same transactions,
//! same tables, same database as the engine run. What each floor issues is listed in
//! BENCHMARKS.md.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use holdfast_store::units::ingest::{AccountChange, DebitItem};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{PgPool, Row as _, SqlitePool};

/// A debit's price in the bench (1 second of `linux-small`), micros.
pub const DEBIT_MICROS: i64 = 100;
/// The overdraft buffer of the bench plan (`free`), micros.
pub const BUFFER_MICROS: i64 = 1_000_000;
/// The hold of one `video` job, micros.
pub const JOB_MICROS: i64 = 500_000;
/// The hold of one `video` job as the engine writes it.
pub const JOB_HOLD: &str = r#"[{"pocket":"money","amount":500000}]"#;
const HASH: &str = "0000000000000000";

/// One of holdfast-store's PostgreSQL statements, loaded as the store loads it.
macro_rules! engine_statement {
    ($name:ident, $file:literal) => {
        static $name: holdfast_store::driver::statement::Stmt = std::sync::LazyLock::new(|| {
            let text = include_str!(concat!("../../holdfast-store/sql/postgres/", $file, ".sql"));
            holdfast_store::driver::statement::Statement::load($file, text, text)
        });
    };
}

// The engine's two statements of a debit: of a call of one, or of a batch ingest.
engine_statement!(ENGINE_INGEST_LOCK, "ingest_lock_accounts");
engine_statement!(ENGINE_INGEST_WRITE, "ingest_write");

/// The distinct accounts of a batch in the order every batch locks them.
fn lock_order(accounts: &[String]) -> Vec<&str> {
    let mut ids: Vec<&str> = accounts.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// One of the engine's statements, its arguments bound in order, as a plain sqlx query.
fn engine_query(
    stmt: &'static holdfast_store::driver::statement::Statement,
    params: holdfast_store::driver::statement::Params,
) -> anyhow::Result<sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments>> {
    use holdfast_store::driver::db::{Dialect, bind_postgres};
    let (text, args) = stmt.bind(Dialect::Postgres, params)?;
    Ok(bind_postgres(sqlx::query(text), args))
}

#[derive(Clone)]
pub enum FloorPool {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

pub fn now_micros() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// Begins a write transaction (SQLite: `BEGIN IMMEDIATE`), runs `$body` with `$tx`, commits.
macro_rules! write_tx {
    ($pool:expr, |$tx:ident| $body:block) => {
        match $pool {
            FloorPool::Postgres(p) => {
                let mut $tx = p.begin().await?;
                let out = $body;
                $tx.commit().await?;
                out
            }
            FloorPool::Sqlite(p) => {
                let mut $tx = p.begin_with("BEGIN IMMEDIATE").await?;
                let out = $body;
                $tx.commit().await?;
                out
            }
        }
    };
}

impl FloorPool {
    /// Its own pool on the engine's database, with the engine's connection settings.
    pub async fn connect(
        url: &str,
        max_connections: u32,
        sync: holdfast::SqliteSync,
    ) -> anyhow::Result<FloorPool> {
        if url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(url)?
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(sync.setting())
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(5))
                .connect_with(opts)
                .await?;
            Ok(FloorPool::Sqlite(pool))
        } else {
            let pool = holdfast_store::driver::db::ping_when_idle(PgPoolOptions::new())
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(5))
                .connect_with(PgConnectOptions::from_str(url)?)
                .await?;
            Ok(FloorPool::Postgres(pool))
        }
    }

    /// Gathers PostgreSQL's planner statistics after setup, as autovacuum would on a
    /// database that has been running: without them it plans a freshly filled table as if
    /// it were empty (seq scans where an index lookup is right), for both sides alike.
    /// SQLite is left as holdfast leaves it (no `ANALYZE`).
    pub async fn analyze(&self) -> anyhow::Result<()> {
        if let FloorPool::Postgres(p) = self {
            sqlx::query("ANALYZE").execute(p).await?;
            // What autovacuum does for the ledger's BRIN index (autosummarize) once the
            // ranges a load filled are complete: without it a fresh range reads as "any".
            sqlx::query("SELECT brin_summarize_new_values('ledger_by_time')")
                .execute(p)
                .await?;
        }
        Ok(())
    }

    /// Runs one statement of the bench's own (setup, never measured); rows it changed.
    pub async fn execute(&self, sql: &str) -> anyhow::Result<u64> {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        Ok(match self {
            FloorPool::Postgres(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
            FloorPool::Sqlite(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
        })
    }

    /// The one integer a query of the bench's own answers.
    pub async fn scalar(&self, sql: &str) -> anyhow::Result<i64> {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        Ok(match self {
            FloorPool::Postgres(p) => sqlx::query_scalar(sql).fetch_one(p).await?,
            FloorPool::Sqlite(p) => sqlx::query_scalar(sql).fetch_one(p).await?,
        })
    }

    pub async fn close(&self) {
        match self {
            FloorPool::Postgres(p) => p.close().await,
            FloorPool::Sqlite(p) => p.close().await,
        }
    }

    /// A metered debit: the guarded UPDATE … RETURNING and the ledger entry carrying its
    /// key, in one transaction.
    pub async fn debit(&self, account: &str, key: &str) -> anyhow::Result<()> {
        const UPDATE: &str = "UPDATE accounts SET balance = balance - $2, total_spent = total_spent + $2 \
             WHERE account_id = $1 AND balance - held - $2 >= -$3 RETURNING balance, held";
        const LEDGER: &str = "INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, \
             created_at, idempotency_key, request_hash, meter, seconds) \
             VALUES ($1, 'money', $2, 'debit', $3, $4, $5, NULL, $6, $7, $8, 'linux-small', 1)";
        let now = now_micros();
        write_tx!(self, |tx| {
            let row = sqlx::query(UPDATE)
                .bind(account)
                .bind(DEBIT_MICROS)
                .bind(BUFFER_MICROS)
                .fetch_optional(&mut *tx)
                .await?
                .context("insufficient funds")?;
            let balance: i64 = row.try_get("balance")?;
            let held: i64 = row.try_get("held")?;
            sqlx::query(LEDGER)
                .bind(account)
                .bind(-DEBIT_MICROS)
                .bind(balance)
                .bind(balance - held)
                .bind(BUFFER_MICROS)
                .bind(now)
                .bind(key)
                .bind(HASH)
                .execute(&mut *tx)
                .await?;
        });
        Ok(())
    }

    /// The engine's own statements of a debit on PostgreSQL: a call of one through the
    /// statements of a batch ingest, as the engine runs a single debit
    /// ([`FloorPool::ingest_engine_sql`]). Beside the engine and the floor it tells what
    /// the engine's SQL costs from what the engine's path around it costs.
    pub async fn debit_engine_sql(&self, account: &str, key: &str) -> anyhow::Result<()> {
        self.ingest_engine_sql(&[account.to_owned()], &[key.to_owned()])
            .await
    }

    /// The engine's own statements of a batch ingest on PostgreSQL, driven by plain
    /// sqlx: its `BEGIN` with the cross-account mark, `ingest_lock_accounts` (with the
    /// pockets and open jobs the answers need), the balance arithmetic of each debit in
    /// order, `ingest_write` (no account stale), `COMMIT`. No pricing, no request hash, no replay check, no
    /// decision beyond the arithmetic, no answer built: beside the engine and the floor
    /// it tells what the engine's SQL costs from what the engine's code around it costs.
    pub async fn ingest_engine_sql(
        &self,
        accounts: &[String],
        keys: &[String],
    ) -> anyhow::Result<()> {
        use holdfast_store::driver::db::Arg;
        use holdfast_store::params;
        let FloorPool::Postgres(pool) = self else {
            bail!("the engine's ingest statements are measured on PostgreSQL only");
        };
        let ids = lock_order(accounts);
        // The cross-account mark only where the call spans accounts, as the engine's.
        let begin = match ids.len() {
            1 => "BEGIN",
            _ => "BEGIN; SET LOCAL holdfast.cross_account = 'ingest'",
        };
        let mut tx = pool.begin_with(begin).await?;
        let lock = params! {
            account_ids: Arg::texts(ids.iter().copied()),
        };
        let rows = engine_query(&ENGINE_INGEST_LOCK, lock)?
            .fetch_all(&mut *tx)
            .await?;
        let (mut state, now) = ingest_locked(&rows)?;
        let (items, changes) = engine_debits(accounts, keys, &mut state, now)?;
        let n = items.len();
        let write = params! {
            items: Arg::records(items),
            changes: Arg::records(changes),
            answered: Arg::texts([]),
            blocks: "[]",
        };
        let accounts = state.len() as i64;
        let row = engine_query(&ENGINE_INGEST_WRITE, write)?
            .fetch_one(&mut *tx)
            .await?;
        let changed: i64 = row.try_get("accounts_changed")?;
        if changed != accounts {
            bail!(
                "the engine's ingest write changed {changed} of {accounts} accounts ({n} debits)"
            );
        }
        tx.commit().await?;
        Ok(())
    }

    /// Submit: the guarded hold UPDATE, the job INSERT, the idempotency record.
    pub async fn submit(&self, account: &str, key: &str) -> anyhow::Result<String> {
        const HOLD: &str = "UPDATE accounts SET held = held + $2, last_active_at = $3 \
             WHERE account_id = $1 AND balance - held >= $2 AND suspended_at IS NULL AND blocked_at IS NULL \
             RETURNING held";
        const JOB: &str = "INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at, \
             limit_at_submit, open_at_submit) VALUES ($1, $2, 'video', 'video', 'queued', NULL, $3, $4, $5, 1000000, 1)";
        const IDEM: &str = "INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at) \
             VALUES ($1, $2, 'submit', $3, NULL, $4, $5)";
        let now = now_micros();
        let job = uuid::Uuid::now_v7().to_string();
        write_tx!(self, |tx| {
            sqlx::query(HOLD)
                .bind(account)
                .bind(JOB_MICROS)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .context("insufficient funds")?;
            sqlx::query(JOB)
                .bind(&job)
                .bind(account)
                .bind(JOB_HOLD)
                .bind(now)
                .bind(now + 5_000_000)
                .execute(&mut *tx)
                .await?;
            sqlx::query(IDEM)
                .bind(account)
                .bind(key)
                .bind(HASH)
                .bind(&job)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        });
        Ok(job)
    }

    /// Lease: the engine's own lease statement (one guarded UPDATE … RETURNING).
    /// Returns (job, account, token).
    pub async fn lease(&self, worker: &str) -> anyhow::Result<Option<(String, String, String)>> {
        const LEASE_PG: &str = "UPDATE jobs SET status = 'in_progress', lease_token = $2, lease_seconds = $3, worker_id = $4, \
             started_at = COALESCE(started_at, (extract(epoch from clock_timestamp()) * 1000000)::bigint), \
             lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + $3 * 1000000 \
             WHERE status = 'queued' AND job_id = (SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id \
             WHERE j.lane = $1 AND j.status = 'queued' AND a.suspended_at IS NULL AND a.blocked_at IS NULL \
             ORDER BY j.created_at, j.job_id LIMIT 1 FOR UPDATE OF j SKIP LOCKED) RETURNING job_id, account_id";
        const LEASE_LITE: &str = "UPDATE jobs SET status = 'in_progress', lease_token = $2, lease_seconds = $3, worker_id = $4, \
             started_at = COALESCE(started_at, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)), \
             lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + $3 * 1000000 \
             WHERE status = 'queued' AND job_id = (SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id \
             WHERE j.lane = $1 AND j.status = 'queued' AND a.suspended_at IS NULL AND a.blocked_at IS NULL \
             ORDER BY j.created_at, j.job_id LIMIT 1) RETURNING job_id, account_id";
        let token = uuid::Uuid::new_v4().simple().to_string();
        let text = match self {
            FloorPool::Postgres(_) => LEASE_PG,
            FloorPool::Sqlite(_) => LEASE_LITE,
        };
        let row = write_tx!(self, |tx| {
            sqlx::query(text)
                .bind("video")
                .bind(&token)
                .bind(60_i64)
                .bind(worker)
                .fetch_optional(&mut *tx)
                .await?
                .map(|r| -> anyhow::Result<(String, String)> {
                    Ok((r.try_get("job_id")?, r.try_get("account_id")?))
                })
                .transpose()?
        });
        Ok(row.map(|(job, account)| (job, account, token)))
    }

    /// Complete: finish the job under its lease, capture the hold from the money pocket,
    /// the ledger entry, the outbox event.
    pub async fn complete(&self, job: &str, account: &str, token: &str) -> anyhow::Result<()> {
        const FINISH: &str = "UPDATE jobs SET status = 'succeeded', charged = hold, finished_at = $3, finished_by = 'complete' \
             WHERE job_id = $1 AND lease_token = $2 AND status = 'in_progress' RETURNING job_id";
        const CAPTURE: &str = "UPDATE accounts SET balance = balance - $2, held = held - $2, total_spent = total_spent + $2 \
             WHERE account_id = $1 RETURNING balance, held";
        const LEDGER: &str = "INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at) \
             VALUES ($1, 'money', $2, 'capture', $3, $4, $5, $6, $7)";
        const EVENT: &str = "INSERT INTO events (type, account_id, job_id, data, created_at) VALUES ('job.succeeded', $1, $2, $3, $4)";
        let now = now_micros();
        write_tx!(self, |tx| {
            if sqlx::query(FINISH)
                .bind(job)
                .bind(token)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .is_none()
            {
                bail!("lease lost");
            }
            let row = sqlx::query(CAPTURE)
                .bind(account)
                .bind(JOB_MICROS)
                .fetch_one(&mut *tx)
                .await?;
            let balance: i64 = row.try_get("balance")?;
            let held: i64 = row.try_get("held")?;
            sqlx::query(LEDGER)
                .bind(account)
                .bind(-JOB_MICROS)
                .bind(balance)
                .bind(balance - held)
                .bind(BUFFER_MICROS)
                .bind(job)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            sqlx::query(EVENT)
                .bind(account)
                .bind(job)
                .bind(r#"{"kind":"video","lane":"video","status":"succeeded"}"#)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        });
        Ok(())
    }

    /// The sweeper's candidates: in-progress jobs whose lease passed, oldest first.
    pub async fn sweep_candidates(&self, limit: i64) -> anyhow::Result<Vec<(String, String)>> {
        const FIND: &str = "SELECT job_id, account_id FROM jobs WHERE status = 'in_progress' AND lease_expires_at <= $1 \
             ORDER BY lease_expires_at LIMIT $2";
        let now = now_micros();
        let rows: Vec<(String, String)> = match self {
            FloorPool::Postgres(p) => {
                sqlx::query_as(FIND)
                    .bind(now)
                    .bind(limit)
                    .fetch_all(p)
                    .await?
            }
            FloorPool::Sqlite(p) => {
                sqlx::query_as(FIND)
                    .bind(now)
                    .bind(limit)
                    .fetch_all(p)
                    .await?
            }
        };
        Ok(rows)
    }

    /// Expires one job: lock the account (lock order: account, then its jobs), mark the
    /// job expired if its lease passed, release its hold, the outbox event.
    pub async fn expire(&self, job: &str, account: &str) -> anyhow::Result<bool> {
        const LOCK_PG: &str = "SELECT balance FROM accounts WHERE account_id = $1 FOR UPDATE";
        const LOCK_LITE: &str = "SELECT balance FROM accounts WHERE account_id = $1";
        const EXPIRE: &str = "UPDATE jobs SET status = 'expired', charged = '[]', finished_at = $2, finished_by = 'sweep', \
             failure_reason = 'lease expired', lease_token = NULL \
             WHERE job_id = $1 AND status = 'in_progress' AND lease_expires_at <= $2 RETURNING hold";
        const RELEASE: &str = "UPDATE accounts SET held = held - $2 WHERE account_id = $1";
        const EVENT: &str = "INSERT INTO events (type, account_id, job_id, data, created_at) VALUES ('job.expired', $1, $2, $3, $4)";
        let lock = match self {
            FloorPool::Postgres(_) => LOCK_PG,
            FloorPool::Sqlite(_) => LOCK_LITE,
        };
        let now = now_micros();
        let done = write_tx!(self, |tx| {
            sqlx::query(lock).bind(account).fetch_one(&mut *tx).await?;
            let expired = sqlx::query(EXPIRE)
                .bind(job)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .is_some();
            if expired {
                sqlx::query(RELEASE)
                    .bind(account)
                    .bind(JOB_MICROS)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(EVENT)
                    .bind(account)
                    .bind(job)
                    .bind(r#"{"kind":"video","lane":"video","status":"expired","charged":[]}"#)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
            }
            expired
        });
        Ok(done)
    }

    /// Setup, not measured: `n` in-progress `video` jobs whose lease expired, spread over
    /// `accounts` accounts (`b0`…), with the accounts' `held` raised to match.
    pub async fn seed_expired_jobs(&self, tag: &str, n: i64, accounts: i64) -> anyhow::Result<()> {
        let now = now_micros();
        const SERIES_PG: &str = "SELECT g AS i FROM generate_series(0, $1 - 1) g";
        const SERIES_LITE: &str = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < $1) SELECT i FROM s";
        let (series, cast) = match self {
            FloorPool::Postgres(_) => (SERIES_PG, "CAST(i AS TEXT)"),
            FloorPool::Sqlite(_) => (SERIES_LITE, "CAST(i AS TEXT)"),
        };
        let insert = format!(
            "INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, created_at, started_at, notice_at, noticed, \
             lease_token, lease_expires_at, lease_seconds, worker_id, limit_at_submit, open_at_submit) \
             SELECT $2 || {cast}, 'b' || CAST(i % $3 AS TEXT), 'video', 'video', 'in_progress', $4, $5, $5, $5, 1, \
             'dead-' || {cast}, $6 + i, 1, 'dead-worker', 1000000, 1 FROM ({series}) AS s"
        );
        let raise = "UPDATE accounts SET held = held + $2 * (SELECT COUNT(*) FROM jobs j \
             WHERE j.account_id = accounts.account_id AND j.status = 'in_progress' AND j.job_id LIKE $1)";
        let prefix = format!("{tag}-");
        let like = format!("{tag}-%");
        write_tx!(self, |tx| {
            sqlx::query(sqlx::AssertSqlSafe(insert.clone()))
                .bind(n)
                .bind(&prefix)
                .bind(accounts)
                .bind(JOB_HOLD)
                .bind(now - 10_000_000)
                .bind(now - 5_000_000 - n)
                .execute(&mut *tx)
                .await?;
            sqlx::query(raise)
                .bind(&like)
                .bind(JOB_MICROS)
                .execute(&mut *tx)
                .await?;
        });
        Ok(())
    }
}

/// One account of an engine-sql ingest, as its debits so far left it.
struct SoFar {
    balance: i64,
    held: i64,
    debits: i64,
    suspended_at: Option<i64>,
}

/// The engine's items of a batch of debits (one per account named, in order) and its
/// account changes, each debit's balance arithmetic applied to `state` as it goes.
fn engine_debits(
    accounts: &[String],
    keys: &[String],
    state: &mut BTreeMap<String, SoFar>,
    now: i64,
) -> anyhow::Result<(Vec<DebitItem>, Vec<AccountChange>)> {
    let mut items = Vec::with_capacity(accounts.len());
    for (account, key) in accounts.iter().zip(keys) {
        let s = state
            .get_mut(account)
            .context("an account of the batch was not locked")?;
        s.balance -= DEBIT_MICROS;
        s.debits += 1;
        items.push(DebitItem {
            account_id: account.clone(),
            key: key.clone(),
            request_hash: HASH.to_owned(),
            delta: -DEBIT_MICROS,
            amount_after: s.balance,
            available_after: s.balance - s.held,
            buffer: BUFFER_MICROS,
            reference: None,
            now,
            actor: "library".to_owned(),
            meter: Some("linux-small".to_owned()),
            seconds: Some(1),
            blocks: None,
        });
    }
    let changes = state
        .iter()
        .map(|(account, s)| AccountChange {
            account_id: account.clone(),
            delta: -s.debits * DEBIT_MICROS,
            spent: s.debits * DEBIT_MICROS,
            suspended_at: s.suspended_at,
            balance_after: s.balance,
            buffer: BUFFER_MICROS,
            live_blocks: None,
        })
        .collect();
    Ok((items, changes))
}

/// What the engine's `ingest_lock_accounts` answered: each account's row, and the
/// clock.
fn ingest_locked(rows: &[sqlx::postgres::PgRow]) -> anyhow::Result<(BTreeMap<String, SoFar>, i64)> {
    let mut state = BTreeMap::new();
    let mut now = 0;
    for row in rows {
        now = row.try_get("now")?;
        let account = SoFar {
            balance: row.try_get("balance")?,
            held: row.try_get("held")?,
            debits: 0,
            suspended_at: row.try_get("suspended_at")?,
        };
        state.insert(row.try_get::<String, _>("account_id")?, account);
    }
    Ok((state, now))
}

/// The set-based ingest floor on PostgreSQL: the accounts locked in sorted order, then
/// ONE statement that aggregates the debits per account, guards and updates each account
/// row once, writes every ledger entry and every idempotency record (ids from the
/// ledger's sequence). No read of the accounts, no decision, no replay check. The debits
/// come as two arrays (accounts, keys), bound as arrays as the engine binds its columns.
const INGEST_PG: &str = "WITH item AS (\
        SELECT t.account_id, t.key, nextval('ledger_entry_id_seq') AS entry_id \
          FROM unnest($1::text[], $6::text[]) AS t(account_id, key)), \
    per_account AS (\
        SELECT account_id, COUNT(*) * $2::bigint AS amount FROM item GROUP BY account_id), \
    changed AS (\
        UPDATE accounts a SET balance = a.balance - p.amount, total_spent = a.total_spent + p.amount \
          FROM per_account p WHERE a.account_id = p.account_id \
           AND a.account_id = ANY (ARRAY(SELECT account_id FROM per_account)) \
           AND a.balance - a.held - p.amount >= -$3::bigint \
        RETURNING a.account_id, a.balance, a.held), \
    entries AS (\
        INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, \
                            created_at, idempotency_key, request_hash, meter, seconds) \
        OVERRIDING SYSTEM VALUE \
        SELECT i.entry_id, i.account_id, 'money', -$2::bigint, 'debit', c.balance, c.balance - c.held, $3::bigint, NULL, \
               $4::bigint, i.key, $5, 'linux-small', 1 \
          FROM item i JOIN changed c ON c.account_id = i.account_id RETURNING 1) \
    SELECT (SELECT COUNT(*) FROM entries) AS entries";
const LOCK_PG: &str = "SELECT account_id FROM accounts \
    WHERE account_id = ANY ($1::text[]) ORDER BY account_id FOR UPDATE";
/// The same on SQLite, as one multi-statement call under `BEGIN IMMEDIATE`.
const INGEST_LITE: &str = "\
    UPDATE accounts SET balance = balance - p.amount, total_spent = total_spent + p.amount \
      FROM (SELECT json_extract(value, '$.account_id') AS account_id, COUNT(*) * $2 AS amount \
              FROM json_each($1) GROUP BY 1) AS p \
     WHERE accounts.account_id = p.account_id AND balance - held - p.amount >= -$3; \
    INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, \
                        created_at, idempotency_key, request_hash, meter, seconds) \
    SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ledger'), 0) + 1 + j.key, \
           json_extract(j.value, '$.account_id'), 'money', -$2, 'debit', a.balance, a.balance - a.held, $3, NULL, $4, \
           json_extract(j.value, '$.key'), $5, 'linux-small', 1 \
      FROM json_each($1) AS j JOIN accounts a ON a.account_id = json_extract(j.value, '$.account_id')";

impl FloorPool {
    /// A batch of debits (one [`DEBIT_MICROS`] each) over `accounts`, keyed by `keys`,
    /// set-based in one transaction. Every account must have the money (the bench tops
    /// them up far past what a run takes): the floor checks nothing per debit.
    pub async fn ingest(&self, accounts: &[String], keys: &[String]) -> anyhow::Result<()> {
        let now = now_micros();
        match self {
            FloorPool::Postgres(p) => {
                let ids = lock_order(accounts);
                let mut tx = p.begin().await?;
                sqlx::query(LOCK_PG).bind(ids).fetch_all(&mut *tx).await?;
                let row = sqlx::query(INGEST_PG)
                    .bind(accounts)
                    .bind(DEBIT_MICROS)
                    .bind(BUFFER_MICROS)
                    .bind(now)
                    .bind(HASH)
                    .bind(keys)
                    .fetch_one(&mut *tx)
                    .await?;
                let written: i64 = row.try_get("entries")?;
                if written != accounts.len() as i64 {
                    bail!(
                        "the floor ingest wrote {written} of {} entries",
                        accounts.len()
                    );
                }
                tx.commit().await?;
            }
            FloorPool::Sqlite(p) => {
                let items: Vec<serde_json::Value> = accounts
                    .iter()
                    .zip(keys)
                    .map(|(a, k)| serde_json::json!({ "account_id": a, "key": k }))
                    .collect();
                let items = serde_json::Value::from(items).to_string();
                let mut tx = p.begin_with("BEGIN IMMEDIATE").await?;
                let done = sqlx::query(INGEST_LITE)
                    .bind(&items)
                    .bind(DEBIT_MICROS)
                    .bind(BUFFER_MICROS)
                    .bind(now)
                    .bind(HASH)
                    .execute(&mut *tx)
                    .await?;
                // The accounts' rows (one at least), then an entry per debit.
                if done.rows_affected() <= accounts.len() as u64 {
                    bail!("the floor ingest wrote {} rows", done.rows_affected());
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }
}
