use holdfast_core::Refusal;
use thiserror::Error;

/// Everything a store operation can return besides its result.
#[derive(Debug, Error)]
pub enum StoreError {
    /// A business refusal: nothing was changed.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The database cannot be reached (connection refused or lost, pool timed out).
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The database could not write: its disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    /// disk_full, 53100). Nothing of the transaction was kept; the write may be retried
    /// under the same key once space is freed.
    #[error("the database's disk is full: {0}")]
    DiskFull(String),
    /// A deadlock, serialization failure or busy database that outlasted the retries.
    #[error("database contention outlasted {0} attempts")]
    Contention(u32),
    #[error("configuration: {0}")]
    Config(String),
    /// The database has no holdfast schema, or not this build's (opened without
    /// migrating: see `Store::open_existing`).
    #[error("{0}")]
    Schema(crate::driver::schema::SchemaMismatch),
    #[error("migration failed: {0}")]
    Migration(String),
    /// A row that breaks what the schema promises.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// A statement bound without a value it names: a bug, caught by the tests.
    #[error("statement {0}")]
    Statement(String),
    #[error("database error: {0}")]
    Database(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        match &e {
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Tls(_) => StoreError::Unavailable(e.to_string()),
            // The server cannot take this write now: a standby (read_only_sql_transaction,
            // 25006, after a failover), a lost connection (class 08), no connection slot
            // left (too_many_connections, 53300), a server shutting down or starting up
            // (57P01-57P03). The client retries under the same key.
            sqlx::Error::Database(db) if db.code().is_some_and(|c| server_unavailable(&c)) => {
                StoreError::Unavailable(e.to_string())
            }
            // SQLITE_FULL (13): the disk (or the file's size limit) is full. SQLite undid
            // the transaction; the write can be retried once there is space. PostgreSQL's
            // disk_full (53100: a table or index file that cannot grow) fails the
            // statement, and with it the transaction, the same way.
            sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("13" | "53100")) => {
                StoreError::DiskFull(e.to_string())
            }
            // PostgreSQL refuses a NUL in text (22021): a client's text, not a fault.
            sqlx::Error::Database(db) if db.code().as_deref() == Some("22021") => {
                StoreError::Refused(Refusal::InvalidRequest(
                    "text fields must not contain NUL characters".into(),
                ))
            }
            _ => StoreError::Database(e),
        }
    }
}

/// PostgreSQL's SQLSTATEs for a server that cannot serve this transaction now.
fn server_unavailable(code: &str) -> bool {
    code == "25006"
        || code.starts_with("08")
        || matches!(code, "53300" | "57P01" | "57P02" | "57P03")
}

impl StoreError {
    /// A deadlock or serialization failure on PostgreSQL (40P01, 40001), or a busy or
    /// locked database on SQLite: the whole transaction may be retried.
    pub fn is_retryable(&self) -> bool {
        let StoreError::Database(sqlx::Error::Database(db)) = self else {
            return false;
        };
        matches!(
            db.code().as_deref(),
            Some("40001" | "40P01" | "5" | "6" | "261" | "517")
        )
    }

    /// A unique-constraint violation, and nothing else.
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, StoreError::Database(sqlx::Error::Database(db)) if db.is_unique_violation())
    }

    /// An integer out of range: PostgreSQL's 22003, or SQLite refusing a REAL in a STRICT
    /// INTEGER column after an overflow.
    pub fn is_out_of_range(&self) -> bool {
        let StoreError::Database(sqlx::Error::Database(db)) = self else {
            return false;
        };
        db.code().as_deref() == Some("22003")
            || db.message().contains("integer overflow")
            || db
                .message()
                .contains("cannot store REAL value in INTEGER column")
    }
}
