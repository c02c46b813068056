//! Whether a database holds holdfast's schema at this build's version: what opening a
//! database without migrating it ([`crate::store::Store::open_existing`]) requires, so
//! that only `migrate` and `serve` ever create or upgrade a schema.

use std::collections::BTreeSet;
use std::fmt;

use crate::driver::db::{Pool, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::{params, statement};

static SCHEMA_RECORDED: Stmt = statement!("schema_recorded");
static APPLIED_MIGRATIONS: Stmt = statement!(shared "applied_migrations");

/// How a database's schema differs from this build's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaMismatch {
    /// No holdfast schema at all (an empty database, or a SQLite file that is not there).
    Missing,
    /// Migrations of this build not yet applied: the newest applied and this build's.
    Older { applied: i64, latest: i64 },
    /// Migrations applied that this build does not know: a newer holdfast migrated it.
    Newer { applied: i64, latest: i64 },
}

impl fmt::Display for SchemaMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaMismatch::Missing => f.write_str("no holdfast schema"),
            SchemaMismatch::Older { applied, latest } => write!(
                f,
                "the schema is older than this holdfast's (migration {applied}, this holdfast has {latest})"
            ),
            SchemaMismatch::Newer { applied, latest } => write!(
                f,
                "the schema is newer than this holdfast's (migration {applied}, this holdfast knows up to {latest})"
            ),
        }
    }
}

/// The schema's difference from `known` (this build's migration versions), if any.
pub async fn mismatch(
    pool: &Pool,
    known: &BTreeSet<i64>,
) -> Result<Option<SchemaMismatch>, StoreError> {
    let mut tx = pool.begin_read().await?;
    let applied = applied_versions(&mut tx).await;
    let _ = tx.rollback().await;
    let Some(applied) = applied? else {
        return Ok(Some(SchemaMismatch::Missing));
    };
    let newest = |set: &BTreeSet<i64>| set.last().copied().unwrap_or(0);
    let (applied_top, latest) = (newest(&applied), newest(known));
    Ok(if !applied.is_subset(known) {
        Some(SchemaMismatch::Newer {
            applied: applied_top,
            latest,
        })
    } else if applied != *known {
        Some(SchemaMismatch::Older {
            applied: applied_top,
            latest,
        })
    } else {
        None
    })
}

/// The versions applied, or `None` when the database records no migrations at all.
async fn applied_versions(tx: &mut Tx) -> Result<Option<BTreeSet<i64>>, StoreError> {
    if tx
        .row(&SCHEMA_RECORDED, params! {})
        .await?
        .int("recorded")?
        == 0
    {
        return Ok(None);
    }
    let rows = tx.rows(&APPLIED_MIGRATIONS, params! {}).await?;
    let versions = rows
        .iter()
        .map(|r| r.int("version"))
        .collect::<Result<_, _>>()?;
    Ok(Some(versions))
}
