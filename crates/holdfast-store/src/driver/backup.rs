//! A consistent copy of a live SQLite database, and the checkpoint that leaves a stopped
//! database's main file whole.
//!
//! In WAL mode a commit is written to `FILE-wal` first and moved into the main file by a
//! later checkpoint, so a copy of the main file alone can miss acknowledged writes: while
//! anything has the database open, and after a process that ended without closing it.
//! [`backup_sqlite`] copies through SQLite instead: `VACUUM INTO`, on a connection of its
//! own, in one read transaction — a snapshot of every commit made before it began, while
//! `serve` goes on reading and writing. [`checkpoint_truncate`] is what a stopping
//! process runs last. PostgreSQL is backed up with its own tools (docs/OPERATIONS.md).
//! Must never: write to the database it copies, or overwrite a file.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use holdfast_core::Refusal;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection as _, Row as _, SqliteConnection};

use crate::error::StoreError;

/// What a backup wrote, read back from the copy.
#[derive(Debug, Clone)]
pub struct SqliteBackup {
    /// The new file: one self-contained database (no `-wal` beside it is needed).
    pub output: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Accounts in the copy.
    pub accounts: i64,
    /// Ledger entries in the copy.
    pub ledger_entries: i64,
}

/// A copy's contents, and SQLite's `quick_check` of it.
const DESCRIBE_COPY: &str = "SELECT (SELECT count(*) FROM accounts) AS accounts, \
     (SELECT count(*) FROM ledger) AS ledger_entries";

/// Copies the SQLite database at `url` into the new file `output`, consistently, while
/// other connections and processes go on using it; waits up to `busy_timeout` for a lock
/// (a checkpoint or recovery in progress). Refused, with nothing written: `output`
/// exists (it is created exclusively, so this holds even against a file that appears
/// meanwhile), the database file is missing, or it has no holdfast schema. The copy is
/// synced to disk and checked (`PRAGMA quick_check`) before this returns.
pub async fn backup_sqlite(
    url: &str,
    output: &Path,
    busy_timeout: Duration,
) -> Result<SqliteBackup, StoreError> {
    let source = source_options(url, busy_timeout)?;
    let mut conn = SqliteConnection::connect_with(&source).await?;
    require_schema(&mut conn, source.get_filename()).await?;
    reserve(output)?;
    let copied = vacuum_into(&mut conn, output).await;
    let _ = conn.close().await;
    if let Err(e) = copied {
        // Only the empty file this call created (or SQLite's partial copy in it) goes.
        let _ = std::fs::remove_file(output);
        return Err(e);
    }
    sync(output)?;
    describe(output).await
}

/// How the source is opened: as it is (never created), with the busy timeout.
fn source_options(url: &str, busy_timeout: Duration) -> Result<SqliteConnectOptions, StoreError> {
    if !url.starts_with("sqlite:") {
        return Err(StoreError::Config(format!(
            "a SQLite backup needs a sqlite:// URL, not {url:?}"
        )));
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Config(format!("bad database URL: {e}")))?
        .create_if_missing(false)
        .busy_timeout(busy_timeout);
    let file = options.get_filename();
    if !file.is_file() {
        return Err(refused(format!(
            "no SQLite database at {}: nothing to back up",
            file.display()
        )));
    }
    Ok(options)
}

/// The database has holdfast's schema (its migrations table), or nothing is copied.
async fn require_schema(conn: &mut SqliteConnection, file: &Path) -> Result<(), StoreError> {
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .fetch_one(&mut *conn)
    .await?;
    if tables == 0 {
        return Err(refused(format!(
            "{} has no holdfast schema: nothing to back up",
            file.display()
        )));
    }
    Ok(())
}

/// Creates `output` empty, only if no file of that name exists (`VACUUM INTO` writes
/// into an empty file, and refuses any other).
fn reserve(output: &Path) -> Result<(), StoreError> {
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(output);
    match created {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(refused(format!(
            "{} exists: a backup never overwrites a file; name a new one",
            output.display()
        ))),
        Err(e) => Err(refused(format!("cannot create {}: {e}", output.display()))),
    }
}

async fn vacuum_into(conn: &mut SqliteConnection, output: &Path) -> Result<(), StoreError> {
    let target = output.to_str().ok_or_else(|| {
        refused(format!(
            "{} is not valid UTF-8: name the backup file in UTF-8",
            output.display()
        ))
    })?;
    sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(conn)
        .await?;
    Ok(())
}

/// `VACUUM INTO` does not sync what it wrote: the file, then its directory (so its name
/// survives a power cut too).
fn sync(output: &Path) -> Result<(), StoreError> {
    let io = |e: std::io::Error| StoreError::Config(format!("syncing {}: {e}", output.display()));
    std::fs::File::open(output)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}

/// Reads the copy back: `quick_check`, its size and what it holds.
async fn describe(output: &Path) -> Result<SqliteBackup, StoreError> {
    let copy = SqliteConnectOptions::new().filename(output).read_only(true);
    let mut conn = SqliteConnection::connect_with(&copy).await?;
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(&mut conn)
        .await?;
    if check != "ok" {
        return Err(StoreError::Corrupt(format!(
            "the copy {} fails quick_check: {check}",
            output.display()
        )));
    }
    let row = sqlx::query(DESCRIBE_COPY).fetch_one(&mut conn).await?;
    let _ = conn.close().await;
    let bytes = std::fs::metadata(output)
        .map_err(|e| StoreError::Config(format!("reading {}: {e}", output.display())))?
        .len();
    Ok(SqliteBackup {
        output: output.to_owned(),
        bytes,
        accounts: row.try_get("accounts")?,
        ledger_entries: row.try_get("ledger_entries")?,
    })
}

/// Moves every commit in the write-ahead log into the main file and truncates the log to
/// zero bytes (`PRAGMA wal_checkpoint(TRUNCATE)`), so the main file alone holds the
/// database. Whether it completed: not while another connection (another process) is
/// reading or writing, which then keeps the log until its own checkpoint. It never waits
/// for that other connection (busy timeout 0 first): a TRUNCATE checkpoint that waited
/// would hold the write lock meanwhile, and a `serve` sharing the file could not write
/// (a CLI command's checkpoint at its end behind a long read of `serve`'s: 10 s of 503s).
pub async fn checkpoint_truncate(conn: &mut SqliteConnection) -> Result<bool, StoreError> {
    sqlx::query("PRAGMA busy_timeout = 0")
        .execute(&mut *conn)
        .await?;
    let row = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(conn)
        .await?;
    let busy: i64 = row.try_get(0)?;
    Ok(busy == 0)
}

fn refused(message: String) -> StoreError {
    StoreError::Refused(Refusal::InvalidRequest(message))
}
