//! The two backends behind one small surface: a pool, a transaction, a row, a handful of
//! argument types. Each operation in this crate is written once, as SQL both engines
//! accept (`$1` placeholders, `RETURNING`, integers for times and flags); where the
//! dialects differ (row locks, `SKIP LOCKED`, the clock, `GREATEST`/`MAX`) the
//! operation gives both texts through [`Sql`]. This keeps the two backends from drifting:
//! the same statement shape, the same behaviour suite.

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{
    AssertSqlSafe, Connection as _, PgPool, Postgres, Row as _, Sqlite, SqliteConnection,
    SqlitePool, Transaction,
};

use crate::driver::failover::{Failover, MultiHost};
use crate::driver::group::Unit;
pub use crate::driver::group::WriteGate;
use crate::driver::schema::SchemaMismatch;
use crate::driver::statement::{Params, Records, Statement};
use crate::error::StoreError;
use crate::scope::CrossAccount;

/// Which engine a statement runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

/// A statement whose text differs between the engines.
#[derive(Debug, Clone, Copy)]
pub struct Sql {
    pub postgres: &'static str,
    pub sqlite: &'static str,
}

impl Sql {
    /// The same text on both engines.
    pub const fn both(text: &'static str) -> Sql {
        Sql {
            postgres: text,
            sqlite: text,
        }
    }

    fn text(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::Postgres => self.postgres,
            Dialect::Sqlite => self.sqlite,
        }
    }
}

/// A bound argument.
#[derive(Debug, Clone)]
pub enum Arg {
    Int(Option<i64>),
    Text(Option<String>),
    /// A column of text for a set-based statement: a `text[]` on PostgreSQL, bound as it
    /// is (nothing for the server to parse); SQLite has no arrays, so there it binds as a
    /// JSON array, for `json_each`.
    Texts(Vec<String>),
    /// Items as one array of a composite type (PostgreSQL only: SQLite binds them as a
    /// JSON array of text; see [`Records`]).
    Records(RecordArray),
}

/// A [`Records`] array, bound as it is (copied only where its [`Arg`] was cloned).
#[derive(Clone)]
pub struct RecordArray(Arc<dyn BindPostgres>);

impl std::fmt::Debug for RecordArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordArray")
    }
}

/// Binds itself to a PostgreSQL query.
trait BindPostgres: Send + Sync {
    fn bind_to<'q>(self: Arc<Self>, q: PgQuery<'q>) -> PgQuery<'q>;
}

type PgQuery<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

impl<T: Records> BindPostgres for Vec<T> {
    fn bind_to<'q>(self: Arc<Self>, q: PgQuery<'q>) -> PgQuery<'q> {
        q.bind(Arc::unwrap_or_clone(self))
    }
}

impl Arg {
    /// A column of text (see [`Arg::Texts`]).
    pub fn texts<'a>(cells: impl IntoIterator<Item = &'a str>) -> Arg {
        Arg::Texts(cells.into_iter().map(str::to_owned).collect())
    }

    /// Items as one PostgreSQL array of their composite type (see [`Records`]; on SQLite
    /// [`Tx::records`] binds them as JSON instead).
    pub fn records<T: Records>(items: Vec<T>) -> Arg {
        Arg::Records(RecordArray(Arc::new(items)))
    }

    /// A column as SQLite binds it: a JSON array.
    fn json_array<T: serde::Serialize>(values: &[T]) -> String {
        // A list of integers or strings always serializes.
        serde_json::to_string(values).unwrap_or_default()
    }
}

impl From<i64> for Arg {
    fn from(v: i64) -> Arg {
        Arg::Int(Some(v))
    }
}
impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Arg {
        Arg::Int(v)
    }
}
impl From<&str> for Arg {
    fn from(v: &str) -> Arg {
        Arg::Text(Some(v.to_owned()))
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Arg {
        Arg::Text(Some(v))
    }
}
impl From<&String> for Arg {
    fn from(v: &String) -> Arg {
        Arg::Text(Some(v.clone()))
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Arg {
        Arg::Text(v)
    }
}
impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Arg {
        Arg::Text(v.map(str::to_owned))
    }
}
impl From<bool> for Arg {
    fn from(v: bool) -> Arg {
        Arg::Int(Some(i64::from(v)))
    }
}

/// Builds an argument list: `args![a, b, c]`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$($crate::driver::db::Arg::from($a)),*] };
}

/// A row from either engine, read by column name.
pub enum Row {
    Postgres(PgRow),
    Sqlite(SqliteRow),
}

impl Row {
    pub fn int(&self, col: &str) -> Result<i64, StoreError> {
        Ok(match self {
            Row::Postgres(r) => r.try_get::<i64, _>(col)?,
            Row::Sqlite(r) => r.try_get::<i64, _>(col)?,
        })
    }

    pub fn opt_int(&self, col: &str) -> Result<Option<i64>, StoreError> {
        Ok(match self {
            Row::Postgres(r) => r.try_get::<Option<i64>, _>(col)?,
            Row::Sqlite(r) => r.try_get::<Option<i64>, _>(col)?,
        })
    }

    pub fn text(&self, col: &str) -> Result<String, StoreError> {
        Ok(match self {
            Row::Postgres(r) => r.try_get::<String, _>(col)?,
            Row::Sqlite(r) => r.try_get::<String, _>(col)?,
        })
    }

    pub fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError> {
        Ok(match self {
            Row::Postgres(r) => r.try_get::<Option<String>, _>(col)?,
            Row::Sqlite(r) => r.try_get::<Option<String>, _>(col)?,
        })
    }

    pub fn flag(&self, col: &str) -> Result<bool, StoreError> {
        Ok(self.int(col)? != 0)
    }
}

/// A connection pool on one of the engines (PostgreSQL with the [`Failover`] that follows
/// the acceptable host when the URL names several; SQLite with this process's
/// [`WriteGate`], where writers take turns and queued units of work share a commit).
#[derive(Clone, Debug)]
pub enum Pool {
    Postgres(PgPool, Option<Arc<Failover>>),
    Sqlite(SqlitePool, WriteGate),
}

/// Whether an idle SQLite connection may serve again: not when sqlx still counts it
/// inside a transaction. SQLite rolls a whole transaction back by itself on some errors
/// (a full disk at `COMMIT`); the `ROLLBACK` sqlx then sends fails ("no transaction is
/// active") and its count stays at 1, so every later `BEGIN` on that connection would
/// fail ("attempted to call begin_with at non-zero transaction depth") until the process
/// restarts. Such a connection is closed instead and the pool takes or opens another.
/// Checked as the pool hands a connection out: by then the rollback a dropped transaction
/// queued on it has run (the pool pings a connection when it is given back, and the
/// connection runs its commands in order), and the check is one counter read.
async fn out_of_transaction(conn: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection as _;
    let clean = !conn.is_in_transaction();
    if !clean {
        tracing::warn!("a SQLite connection left inside a transaction after an error: closed");
    }
    Ok(clean)
}

/// Pool settings, passed explicitly.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub max_connections: u32,
    /// The longest a caller waits for a connection (and on SQLite for this process's turn
    /// to write) before it is told the database is unavailable.
    pub acquire_timeout: Duration,
    pub sqlite_busy_timeout: Duration,
    /// When SQLite syncs the write-ahead log: every commit by default.
    pub sqlite_synchronous: SqliteSync,
}

/// SQLite's `synchronous` setting in WAL mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SqliteSync {
    /// Every commit is synced before it is answered: an acknowledged write survives a
    /// power cut or an OS crash. The default.
    #[default]
    Full,
    /// The WAL is synced only at checkpoints: faster, and a commit answered before a
    /// power cut or an OS crash may be lost (a process crash loses nothing). Opt-in.
    Normal,
}

impl SqliteSync {
    pub fn parse(text: &str) -> Option<SqliteSync> {
        match text {
            "full" => Some(SqliteSync::Full),
            "normal" => Some(SqliteSync::Normal),
            _ => None,
        }
    }

    /// sqlx's name for it (the engine's pool and any pool that must match it).
    pub fn setting(self) -> SqliteSynchronous {
        match self {
            SqliteSync::Full => SqliteSynchronous::Full,
            SqliteSync::Normal => SqliteSynchronous::Normal,
        }
    }
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(5),
            sqlite_busy_timeout: Duration::from_secs(10),
            sqlite_synchronous: SqliteSync::Full,
        }
    }
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

impl Pool {
    /// Connects by URL scheme: `sqlite://…` (file created if missing) or `postgres://…`
    /// (one host, or several as libpq reads them: see [`crate::driver::failover`]).
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<Pool, StoreError> {
        Pool::connect_as(url, opts, Create::IfMissing).await
    }

    /// As [`Pool::connect`], creating nothing: a SQLite file that is not there is
    /// [`SchemaMismatch::Missing`], not a new empty database.
    pub async fn connect_existing(url: &str, opts: &PoolOptions) -> Result<Pool, StoreError> {
        Pool::connect_as(url, opts, Create::Never).await
    }

    async fn connect_as(url: &str, opts: &PoolOptions, create: Create) -> Result<Pool, StoreError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::connect_postgres(url, opts).await
        } else if url.starts_with("sqlite:") {
            Pool::connect_sqlite(url, opts, create).await
        } else {
            Err(StoreError::Config(format!(
                "unsupported database URL {:?}: use sqlite://FILE or postgres://…",
                holdfast_core::redact::database_url(url)
            )))
        }
    }

    async fn connect_postgres(url: &str, opts: &PoolOptions) -> Result<Pool, StoreError> {
        if let Some(multi) = MultiHost::parse(url)? {
            return Pool::connect_hosts(multi, opts).await;
        }
        let connect = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("bad database URL: {e}")))?;
        probe_server(&connect, opts.acquire_timeout).await?;
        let pool = ping_when_idle(PgPoolOptions::new())
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout)
            .connect_with(connect)
            .await
            .map_err(StoreError::from)?;
        Ok(Pool::Postgres(pool, None))
    }

    async fn connect_sqlite(
        url: &str,
        opts: &PoolOptions,
        create: Create,
    ) -> Result<Pool, StoreError> {
        let connect = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(format!("bad database URL: {e}")))?
            .create_if_missing(create == Create::IfMissing)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(opts.sqlite_synchronous.setting())
            .busy_timeout(opts.sqlite_busy_timeout)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout)
            .before_acquire(|conn, _meta| Box::pin(out_of_transaction(conn)))
            .connect_with(connect)
            .await
            .map_err(|e| match e {
                // SQLITE_CANTOPEN (14) when nothing may be created: no such file to open.
                // (Where the file may be created, it is a folder that is missing or closed
                // to us, and said as such.)
                sqlx::Error::Database(db)
                    if create == Create::Never && db.code().as_deref() == Some("14") =>
                {
                    StoreError::Schema(SchemaMismatch::Missing)
                }
                e => StoreError::from(e),
            })?;
        Ok(Pool::Sqlite(pool, WriteGate::new(opts.acquire_timeout)))
    }

    /// PostgreSQL on the first acceptable of several hosts, following it afterwards.
    async fn connect_hosts(multi: MultiHost, opts: &PoolOptions) -> Result<Pool, StoreError> {
        let failover = Arc::new(Failover::new(multi, opts.acquire_timeout));
        let first = failover.first().await?;
        let pool = failover
            .hook(PgPoolOptions::new())
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout)
            .connect_with(first)
            .await
            .map_err(StoreError::from)?;
        Ok(Pool::Postgres(pool, Some(failover)))
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Pool::Postgres(..) => Dialect::Postgres,
            Pool::Sqlite(..) => Dialect::Sqlite,
        }
    }

    /// The most connections the pool opens.
    pub fn max_connections(&self) -> u32 {
        match self {
            Pool::Postgres(pool, _) => pool.options().get_max_connections(),
            Pool::Sqlite(pool, _) => pool.options().get_max_connections(),
        }
    }

    /// This backend's migrations, as this build has them.
    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        match self {
            Pool::Postgres(..) => &POSTGRES_MIGRATIONS,
            Pool::Sqlite(..) => &SQLITE_MIGRATIONS,
        }
    }

    /// How the database's schema differs from this build's, if it does.
    pub async fn schema_mismatch(&self) -> Result<Option<SchemaMismatch>, StoreError> {
        let known = self
            .migrator()
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .map(|m| m.version)
            .collect();
        crate::driver::schema::mismatch(self, &known).await
    }

    /// Runs this backend's migrations.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            Pool::Postgres(p, _) => POSTGRES_MIGRATIONS.run(p).await,
            Pool::Sqlite(p, _) => SQLITE_MIGRATIONS.run(p).await,
        }
        .map_err(|e| StoreError::Migration(e.to_string()))
    }

    /// A transaction that will write: on SQLite `BEGIN IMMEDIATE`, so the write lock is
    /// taken before the first read.
    pub async fn begin_write(&self) -> Result<Tx, StoreError> {
        self.begin_write_across(None).await
    }

    /// [`Pool::begin_write`], marked with `across` as one that changes rows of several
    /// accounts by design (see [`crate::scope`]): on PostgreSQL the transaction-local
    /// `holdfast.cross_account` names why, set in the same round trip as `BEGIN` (the
    /// mark costs no statement of its own); on SQLite nothing (one writer, nothing to
    /// distribute).
    pub async fn begin_write_across(&self, across: Option<CrossAccount>) -> Result<Tx, StoreError> {
        Ok(match self {
            Pool::Postgres(p, failover) => {
                let begin = across.map(|why| {
                    let mark = why.as_str();
                    Cow::Owned(format!(
                        "BEGIN; SET LOCAL holdfast.cross_account = '{mark}'"
                    ))
                });
                Tx::Postgres(pg_begin(p, failover, begin).await?)
            }
            Pool::Sqlite(p, gate) => Tx::Sqlite(SqliteTx::Write(gate.begin(p).await?)),
        })
    }

    /// SQLite writers of this process queued for their turn now (0 on PostgreSQL).
    pub fn writers_queued(&self) -> usize {
        match self {
            Pool::Postgres(..) => 0,
            Pool::Sqlite(_, gate) => gate.queued(),
        }
    }

    /// SQLite group commits of this pool so far (`None` on PostgreSQL).
    pub fn group_commits(&self) -> Option<u64> {
        match self {
            Pool::Postgres(..) => None,
            Pool::Sqlite(_, gate) => Some(gate.commits()),
        }
    }

    /// A read-only transaction (one consistent snapshot).
    pub async fn begin_read(&self) -> Result<Tx, StoreError> {
        Ok(match self {
            Pool::Postgres(p, failover) => Tx::Postgres(
                pg_begin(
                    p,
                    failover,
                    Some(Cow::Borrowed(
                        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                    )),
                )
                .await?,
            ),
            Pool::Sqlite(p, _) => Tx::Sqlite(SqliteTx::Read(p.begin().await?)),
        })
    }

    pub async fn close(&self) {
        match self {
            Pool::Postgres(p, _) => p.close().await,
            Pool::Sqlite(p, _) => p.close().await,
        }
    }

    /// Ends this pool's use of the database, for a process that stops: on SQLite the
    /// write-ahead log is first checkpointed into the main file and truncated
    /// ([`crate::driver::backup::checkpoint_truncate`]), so the main file alone holds every
    /// commit; then every connection closes, on both backends (waiting for any still in
    /// use). Whether the checkpoint completed (on PostgreSQL there is none: true).
    pub async fn checkpoint_and_close(&self) -> Result<bool, StoreError> {
        let checkpointed = match self {
            Pool::Postgres(..) => Ok(true),
            Pool::Sqlite(p, _) => match p.acquire().await {
                Ok(mut conn) => crate::driver::backup::checkpoint_truncate(&mut conn).await,
                Err(e) => Err(StoreError::from(e)),
            },
        };
        self.close().await;
        checkpointed
    }
}

/// `begin` on PostgreSQL; with several hosts, the acceptable one followed first, and a
/// failure to begin marks the host suspect.
async fn pg_begin(
    pool: &PgPool,
    failover: &Option<Arc<Failover>>,
    begin: Option<Cow<'static, str>>,
) -> Result<Transaction<'static, Postgres>, StoreError> {
    // A custom BEGIN goes as a simple query: it may be several statements, one round trip.
    let begun = || async {
        match &begin {
            None => pool.begin().await,
            Some(statement) => pool.begin_with(AssertSqlSafe(statement.clone())).await,
        }
    };
    let Some(failover) = failover else {
        // A connection handed out unpinged (`ping_when_idle`) may have lost its server
        // session since its last use (a restart): its BEGIN fails before anything is
        // done, and the connection is closed as it goes back, so begin again. Each such
        // failure removes one dead connection: at most the pool's size of them.
        let mut lost = 0;
        return loop {
            match begun().await {
                Err(e) if session_lost(&e) && lost < pool.options().get_max_connections() => {
                    lost += 1;
                }
                other => break Ok(other?),
            }
        };
    };
    failover.follow(pool).await?;
    begun().await.map_err(|e| {
        failover.suspect();
        StoreError::from(e)
    })
}

/// Whether this error says the connection's server session is gone: ended by the
/// server (57P01, as in a restart or `pg_terminate_backend`), or the socket closed under
/// it. Not a refused connection: a server that is down is not retried here.
fn session_lost(e: &sqlx::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        sqlx::Error::Database(db) => db.code().as_deref() == Some("57P01"),
        sqlx::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::UnexpectedEof
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
        ),
        _ => false,
    }
}

/// How long a pooled PostgreSQL connection may have been idle and still be handed out
/// without a ping first.
const TRUSTED_IDLE: Duration = Duration::from_secs(1);

/// The file of a `sqlite:` URL (`None` for another scheme or an in-memory database).
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    if !url.starts_with("sqlite:") {
        return None;
    }
    let options = SqliteConnectOptions::from_str(url).ok()?;
    let file = options.get_filename();
    let in_memory = file.as_os_str().is_empty() || file.to_str() == Some(":memory:");
    (!in_memory).then(|| file.to_path_buf())
}

/// Whether [`Pool::connect`] may create a SQLite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Create {
    IfMissing,
    Never,
}

/// One connection to the server before the pool is made, so that a server that refuses
/// connections (or a wrong host, port or password) is reported at once, naming the
/// host and port: the pool would retry a refused connection until its acquire timeout
/// and then say only that it timed out.
async fn probe_server(connect: &PgConnectOptions, wait: Duration) -> Result<(), StoreError> {
    let address = format!("{}:{}", connect.get_host(), connect.get_port());
    let Ok(connected) = tokio::time::timeout(wait, sqlx::PgConnection::connect_with(connect)).await
    else {
        return Err(StoreError::Unavailable(format!(
            "cannot connect to PostgreSQL at {address}: no answer within {wait:?}"
        )));
    };
    match connected {
        Ok(conn) => {
            let _ = conn.close().await;
            Ok(())
        }
        Err(sqlx::Error::Io(e)) => Err(StoreError::Unavailable(format!(
            "cannot connect to PostgreSQL at {address}: {e}"
        ))),
        Err(e) => Err(StoreError::from(e)),
    }
}

/// Pings a pooled connection before handing it out only when it has been idle for more
/// than [`TRUSTED_IDLE`], instead of on every acquire (sqlx's default, a round trip per
/// transaction). sqlx pings every connection as it is released, so one handed out soon
/// after was alive then; one idle longer may have lost its server meanwhile (a restart),
/// and is replaced rather than handed out broken. One that lost it in between fails its
/// BEGIN, and the transaction begins again on another (`pg_begin`).
pub fn ping_when_idle(options: PgPoolOptions) -> PgPoolOptions {
    options
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > TRUSTED_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

/// An open transaction on one of the engines.
pub enum Tx {
    Postgres(Transaction<'static, Postgres>),
    Sqlite(SqliteTx),
}

/// A SQLite reader's own transaction, or a writer's unit of work in the group holding
/// this process's turn at the [`WriteGate`] (see [`crate::driver::group`]).
pub enum SqliteTx {
    Read(Transaction<'static, Sqlite>),
    Write(Unit),
}

impl SqliteTx {
    fn conn(&mut self) -> Result<&mut SqliteConnection, StoreError> {
        match self {
            SqliteTx::Read(tx) => Ok(&mut **tx),
            SqliteTx::Write(unit) => unit.conn(),
        }
    }
}

/// Binds `args` in order to a PostgreSQL query (also for holdfast-bench's floors, which
/// run the engine's statements as plain sqlx queries).
pub fn bind_postgres<'q>(mut q: PgQuery<'q>, args: Vec<Arg>) -> PgQuery<'q> {
    for a in args {
        q = match a {
            Arg::Int(v) => q.bind(v),
            Arg::Text(v) => q.bind(v),
            Arg::Texts(v) => q.bind(v),
            Arg::Records(RecordArray(records)) => records.bind_to(q),
        };
    }
    q
}

/// Binds `args` in order to a SQLite query: a column as its JSON array.
fn bind_sqlite<'q>(
    mut q: sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments>,
    args: Vec<Arg>,
) -> sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments> {
    for a in args {
        q = match a {
            Arg::Int(v) => q.bind(v),
            Arg::Text(v) => q.bind(v),
            Arg::Texts(v) => q.bind(Arg::json_array(&v)),
            // Never built for SQLite (Tx::records binds a JSON array of text there); were
            // it, the statement would read no items and its counts come short: an error,
            // nothing written.
            Arg::Records(_) => q.bind(None::<String>),
        };
    }
    q
}

/// PostgreSQL cannot store a NUL in text and SQLite can: refuse it on both, before the
/// statement runs, as the client's mistake it is.
fn refuse_nul(args: &[Arg]) -> Result<(), StoreError> {
    let text = |t: &Option<String>| refuse_nul_in(t.as_deref().unwrap_or(""));
    args.iter().try_for_each(|a| match a {
        Arg::Text(t) => text(t),
        Arg::Texts(column) => column.iter().try_for_each(|t| refuse_nul_in(t)),
        // Tx::records checked its texts.
        Arg::Int(_) | Arg::Records(_) => Ok(()),
    })
}

/// [`refuse_nul`] for a text a unit of work compares itself instead of binding it.
pub(crate) fn refuse_nul_in(text: &str) -> Result<(), StoreError> {
    if text.contains('\0') {
        return Err(holdfast_core::Refusal::InvalidRequest(
            "text fields must not contain NUL characters".into(),
        )
        .into());
    }
    Ok(())
}

/// Items as SQLite takes a set-based write's: one JSON array under `name`, for
/// `json_each` ([`Tx::records`]).
fn json_items<T: serde::Serialize>(name: &'static str, items: &[T]) -> Result<Params, StoreError> {
    let json =
        serde_json::to_string(items).map_err(|e| StoreError::Corrupt(format!("{name}: {e}")))?;
    Ok(Params(vec![(name, Arg::from(json))]))
}

impl Tx {
    pub fn dialect(&self) -> Dialect {
        match self {
            Tx::Postgres(_) => Dialect::Postgres,
            Tx::Sqlite(_) => Dialect::Sqlite,
        }
    }

    /// A set-based write's items as the parameter `name` (see [`Records`]): on
    /// PostgreSQL one array of their composite type, on SQLite one JSON array.
    pub fn records<T: Records>(
        &self,
        name: &'static str,
        items: Vec<T>,
    ) -> Result<Params, StoreError> {
        Ok(match self.dialect() {
            Dialect::Postgres => {
                items
                    .iter()
                    .flat_map(Records::texts)
                    .try_for_each(refuse_nul_in)?;
                Params(vec![(name, Arg::records(items))])
            }
            Dialect::Sqlite => json_items(name, &items)?,
        })
    }

    /// Runs a statement; returns the number of rows it changed.
    pub async fn execute(&mut self, sql: Sql, args: Vec<Arg>) -> Result<u64, StoreError> {
        refuse_nul(&args)?;
        let text = sql.text(self.dialect());
        Ok(match self {
            Tx::Postgres(tx) => bind_postgres(sqlx::query::<Postgres>(text), args)
                .execute(&mut **tx)
                .await?
                .rows_affected(),
            Tx::Sqlite(tx) => bind_sqlite(sqlx::query::<Sqlite>(text), args)
                .execute(tx.conn()?)
                .await?
                .rows_affected(),
        })
    }

    pub async fn fetch_all(&mut self, sql: Sql, args: Vec<Arg>) -> Result<Vec<Row>, StoreError> {
        refuse_nul(&args)?;
        let text = sql.text(self.dialect());
        Ok(match self {
            Tx::Postgres(tx) => bind_postgres(sqlx::query::<Postgres>(text), args)
                .fetch_all(&mut **tx)
                .await?
                .into_iter()
                .map(Row::Postgres)
                .collect(),
            Tx::Sqlite(tx) => bind_sqlite(sqlx::query::<Sqlite>(text), args)
                .fetch_all(tx.conn()?)
                .await?
                .into_iter()
                .map(Row::Sqlite)
                .collect(),
        })
    }

    pub async fn fetch_optional(
        &mut self,
        sql: Sql,
        args: Vec<Arg>,
    ) -> Result<Option<Row>, StoreError> {
        refuse_nul(&args)?;
        let text = sql.text(self.dialect());
        Ok(match self {
            Tx::Postgres(tx) => bind_postgres(sqlx::query::<Postgres>(text), args)
                .fetch_optional(&mut **tx)
                .await?
                .map(Row::Postgres),
            Tx::Sqlite(tx) => bind_sqlite(sqlx::query::<Sqlite>(text), args)
                .fetch_optional(tx.conn()?)
                .await?
                .map(Row::Sqlite),
        })
    }

    pub async fn fetch_one(&mut self, sql: Sql, args: Vec<Arg>) -> Result<Row, StoreError> {
        self.fetch_optional(sql, args).await?.ok_or_else(|| {
            StoreError::Corrupt("a statement that returns a row returned none".into())
        })
    }

    /// Runs a statement from its file with its parameters bound by name; returns the
    /// number of rows it changed.
    pub async fn exec(
        &mut self,
        stmt: &'static Statement,
        params: Params,
    ) -> Result<u64, StoreError> {
        let (text, args) = self.bind(stmt, params)?;
        self.execute(Sql::both(text), args).await
    }

    /// Every row a statement from its file returns.
    pub async fn rows(
        &mut self,
        stmt: &'static Statement,
        params: Params,
    ) -> Result<Vec<Row>, StoreError> {
        let (text, args) = self.bind(stmt, params)?;
        self.fetch_all(Sql::both(text), args).await
    }

    /// The row a statement from its file returns, if any.
    pub async fn maybe_row(
        &mut self,
        stmt: &'static Statement,
        params: Params,
    ) -> Result<Option<Row>, StoreError> {
        let (text, args) = self.bind(stmt, params)?;
        self.fetch_optional(Sql::both(text), args).await
    }

    /// The one row a statement from its file must return.
    pub async fn row(
        &mut self,
        stmt: &'static Statement,
        params: Params,
    ) -> Result<Row, StoreError> {
        self.maybe_row(stmt, params)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("statement {} returned no row", stmt.name)))
    }

    fn bind(
        &self,
        stmt: &'static Statement,
        params: Params,
    ) -> Result<(&'static str, Vec<Arg>), StoreError> {
        stmt.bind(self.dialect(), params)
    }

    /// Commits; on SQLite a writer's unit is answered once the group holding it has
    /// committed (see [`crate::driver::group`]).
    pub async fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => Ok(tx.commit().await?),
            Tx::Sqlite(SqliteTx::Read(tx)) => Ok(tx.commit().await?),
            Tx::Sqlite(SqliteTx::Write(unit)) => unit.commit().await,
        }
    }

    /// Rolls back; on SQLite a writer's unit alone, to its savepoint.
    pub async fn rollback(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => Ok(tx.rollback().await?),
            Tx::Sqlite(SqliteTx::Read(tx)) => Ok(tx.rollback().await?),
            Tx::Sqlite(SqliteTx::Write(unit)) => unit.rollback().await,
        }
    }
}
