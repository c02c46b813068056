//! Every SQL file prepares against a freshly migrated database of its dialect, so a
//! broken statement fails here by name; and every file is used by the code.

use std::path::{Path, PathBuf};

use holdfast_store::driver::db::{Arg, Dialect, Pool, PoolOptions};
use holdfast_store::driver::statement::Statement;
use sqlx::{Connection, Executor};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");

/// The statement files a dialect runs: its own folder and the shared one.
fn files(dialect: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in [dialect, "shared"] {
        let dir = Path::new(DIR).join(folder);
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir:?}: {e}")) {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sql") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn load(path: &Path) -> Statement {
    let text: &'static str = std::fs::read_to_string(path).unwrap().leak();
    let name: &'static str = path
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
        .leak();
    Statement::load(name, text, text)
}

/// A freshly migrated SQLite file of its own: its path (remove it after) and its URL.
async fn fresh_sqlite(prefix: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("{prefix}{}", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}", dir.display());
    let pool = Pool::connect(&url, &PoolOptions::default()).await.unwrap();
    pool.migrate().await.unwrap();
    pool.close().await;
    (dir, url)
}

/// A freshly migrated PostgreSQL database of its own: its URL and its name (drop it with
/// [`drop_postgres`]).
async fn fresh_postgres(prefix: &str) -> (String, String) {
    let admin = postgres_admin_url();
    let name = format!("{prefix}{}", uuid::Uuid::new_v4().simple());
    let mut admin_conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    admin_conn
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    admin_conn.close().await.unwrap();
    let url = with_database(&admin, &name);
    let pool = Pool::connect(&url, &PoolOptions::default()).await.unwrap();
    pool.migrate().await.unwrap();
    pool.close().await;
    (url, name)
}

async fn drop_postgres(name: &str) {
    let mut admin_conn = sqlx::PgConnection::connect(&postgres_admin_url())
        .await
        .unwrap();
    admin_conn
        .execute(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE {name} WITH (FORCE)"
        )))
        .await
        .unwrap();
}

/// The statements of a SQLite file: one per `;` that ends a line.
fn sqlite_statements(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.lines() {
        let last = out.last_mut().unwrap();
        last.push_str(line);
        last.push('\n');
        if line.trim_end().ends_with(';') {
            out.push(String::new());
        }
    }
    out.retain(|s| {
        s.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("--"))
    });
    out
}

#[tokio::test]
async fn every_sqlite_statement_prepares() {
    let (dir, url) = fresh_sqlite("holdfast-stmts-").await;
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let mut failures = Vec::new();
    for path in files("sqlite") {
        let stmt = load(&path);
        for part in sqlite_statements(stmt.text(Dialect::Sqlite)) {
            if let Err(e) = conn
                .prepare(sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(part)))
                .await
            {
                failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    conn.close().await.unwrap();
    let _ = std::fs::remove_file(&dir);
    assert!(
        failures.is_empty(),
        "statements that do not prepare:\n{}",
        failures.join("\n")
    );
}

/// The statements of the write path that read keys find each key by an index, in both
/// places a key lives (idempotency, ledger_by_key): SQLite reads the view
/// `idempotency_keys` whole when a list of keys is joined to it (it pushes an `IN` list
/// in, not a join), and a scan of the ledger per call would slow every debit as the
/// ledger grows.
#[tokio::test]
async fn sqlite_key_reads_scan_no_table() {
    let (dir, url) = fresh_sqlite("holdfast-plans-").await;
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let mut scans = Vec::new();
    for name in [
        "lock_account",
        "read_account_extras",
        "ingest_read_accounts",
        "ingest_write",
        "write_money",
        "submit_jobs",
    ] {
        let path = Path::new(DIR).join("sqlite").join(format!("{name}.sql"));
        let stmt = load(&path);
        for part in sqlite_statements(stmt.text(Dialect::Sqlite)) {
            let explain = format!("EXPLAIN QUERY PLAN {part}");
            let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(explain))
                .fetch_all(&mut conn)
                .await
                .unwrap();
            for (_, _, _, step) in rows {
                // A step on either place (or its alias) must look up one key.
                let table = step.split(' ').nth(1).unwrap_or("");
                let keyed = ["idempotency", "ledger", "i", "l"].contains(&table);
                let one_key = step.ends_with("key=?)");
                if keyed && !one_key {
                    scans.push(format!("{name}: {step}"));
                }
            }
        }
    }
    conn.close().await.unwrap();
    let _ = std::fs::remove_file(&dir);
    assert!(
        scans.is_empty(),
        "key reads that scan:\n{}",
        scans.join("\n")
    );
}

#[tokio::test]
async fn every_postgres_statement_prepares() {
    let (url, name) = fresh_postgres("holdfast_stmts_").await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut failures = Vec::new();
    for path in files("postgres") {
        let stmt = load(&path);
        if let Err(e) = conn
            .prepare(sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(
                stmt.text(Dialect::Postgres).to_owned(),
            )))
            .await
        {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    conn.close().await.unwrap();
    drop_postgres(&name).await;
    assert!(
        failures.is_empty(),
        "statements that do not prepare:\n{}",
        failures.join("\n")
    );
}

/// A column of text (`Arg::texts`) reads back in order, quotes and all: on PostgreSQL as
/// a bound array through `unnest`, on SQLite as the JSON array it binds as, through
/// `json_each`.
async fn columns_read_back_in_order(url: &str) {
    let names = ["a", "x'y", "b\"c", "é", ""];
    let postgres = "SELECT name FROM unnest(:names::text[]) WITH ORDINALITY AS t(name, n) \
        ORDER BY n";
    let sqlite = "SELECT value AS name FROM json_each(:names) ORDER BY key";
    let stmt: &'static Statement =
        Box::leak(Box::new(Statement::load("columns", postgres, sqlite)));
    let pool = Pool::connect(url, &PoolOptions::default()).await.unwrap();
    let mut tx = pool.begin_read().await.unwrap();
    let params = holdfast_store::params! { names: Arg::texts(names) };
    let rows = tx.rows(stmt, params).await.unwrap();
    let got: Vec<String> = rows.iter().map(|r| r.text("name").unwrap()).collect();
    assert_eq!(got, names);
    // A NUL inside a column is refused before the statement runs, as in a single value.
    let params = holdfast_store::params! { names: Arg::texts(["a", "a\0b"]) };
    let refused = tx.rows(stmt, params).await.err().map(|e| e.to_string());
    assert!(
        refused.as_deref().is_some_and(|e| e.contains("NUL")),
        "{refused:?}"
    );
    tx.rollback().await.unwrap();
    pool.close().await;
}

#[tokio::test]
async fn columns_read_back_in_order_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("holdfast-cols-{}", uuid::Uuid::new_v4()));
    columns_read_back_in_order(&format!("sqlite://{}", dir.display())).await;
    let _ = std::fs::remove_file(&dir);
}

#[tokio::test]
async fn columns_read_back_in_order_on_postgres() {
    columns_read_back_in_order(&postgres_admin_url()).await;
}

#[test]
fn every_statement_file_is_used_by_the_code() {
    let mut code = String::new();
    let mut folders = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                code.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    // Each dialect's listing includes the shared folder: every file once.
    let all: std::collections::BTreeSet<PathBuf> =
        ["postgres", "sqlite"].into_iter().flat_map(files).collect();
    let mut unused = Vec::new();
    for path in all {
        let name = path.file_stem().unwrap().to_str().unwrap();
        if !code.contains(&format!("\"{name}\")")) {
            unused.push(path.display().to_string());
        }
    }
    assert!(
        unused.is_empty(),
        "statement files no code loads: {unused:?}"
    );
}

/// `HOLDFAST_TEST_POSTGRES`, or the local server the README names.
fn postgres_admin_url() -> String {
    std::env::var("HOLDFAST_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

fn with_database(url: &str, db: &str) -> String {
    let base = url.rsplit_once('/').map_or(url, |(base, _)| base);
    format!("{base}/{db}")
}

/// The indexes each PostgreSQL statement's generic plan reads (the plan a prepared
/// statement settles on), by `EXPLAIN EXECUTE` with every parameter NULL under
/// `plan_cache_mode = force_generic_plan`, on a migrated database with a little data
/// of every kind (an empty table plans as a guess).
async fn indexes_by_statement(conn: &mut sqlx::PgConnection) -> Vec<(String, Vec<String>)> {
    conn.execute("SET plan_cache_mode = force_generic_plan")
        .await
        .unwrap();
    let mut out = Vec::new();
    for path in files("postgres") {
        let stmt = load(&path);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let prepare = format!("PREPARE probe AS {}", stmt.text(Dialect::Postgres));
        conn.execute(sqlx::AssertSqlSafe(prepare)).await.unwrap();
        let params: i32 = sqlx::query_scalar(
            "SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = 'probe'",
        )
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        let nulls = vec!["NULL"; params as usize].join(", ");
        let explain = if params == 0 {
            "EXPLAIN (FORMAT JSON) EXECUTE probe".to_owned()
        } else {
            format!("EXPLAIN (FORMAT JSON) EXECUTE probe({nulls})")
        };
        let plan: serde_json::Value = sqlx::query_scalar(sqlx::AssertSqlSafe(explain))
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        conn.execute("DEALLOCATE probe").await.unwrap();
        let mut used = Vec::new();
        index_names(&plan, &mut used);
        used.sort();
        used.dedup();
        out.push((name, used));
    }
    out
}

fn index_names(plan: &serde_json::Value, out: &mut Vec<String>) {
    match plan {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(name)) = map.get("Index Name") {
                out.push(name.clone());
            }
            map.values().for_each(|v| index_names(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| index_names(v, out)),
        _ => {}
    }
}

/// Every index that no constraint needs is read by some statement's generic plan, but
/// for the few that only a filter's custom plan reads (docs/DESIGN.md "Indexes" says which
/// and why): an index no query reads costs every write its entry for nothing (issue #43
/// dropped `ledger_by_pocket` for that). The mapping is printed (`--nocapture`) for the
/// table in DESIGN.md.
#[tokio::test]
async fn every_postgres_index_is_read_by_a_statement() {
    let (url, name) = fresh_postgres("holdfast_idx_").await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let by_statement = indexes_by_statement(&mut conn).await;
    let indexes: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT i.relname::text, t.relname::text, x.indisunique FROM pg_index x \
           JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid \
           JOIN pg_namespace n ON n.oid = t.relnamespace \
          WHERE n.nspname = current_schema() AND t.relname NOT LIKE '\\_sqlx%' \
          ORDER BY t.relname, i.relname",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    drop_postgres(&name).await;
    let mut unread = Vec::new();
    for (index, table, unique) in &indexes {
        let readers: Vec<&str> = by_statement
            .iter()
            .filter(|(_, used)| used.contains(index))
            .map(|(s, _)| s.as_str())
            .collect();
        println!(
            "| `{table}` | `{index}`{} | {} |",
            if *unique { " (unique)" } else { "" },
            readers.join(", ")
        );
        if readers.is_empty() && !unique {
            unread.push(index.clone());
        }
    }
    // list_events reads these when its optional filter is given (a custom plan: the
    // generic one, with the filter NULL, walks the feed by position); the webhook
    // claim's plan reads its queue index, not the due one (see DESIGN.md "Indexes").
    // The usage reports read the ledger's BRIN index on a ledger big enough to prefer it
    // (an empty one is read whole).
    let by_custom_plan = [
        "events_by_account_position",
        "events_by_actor",
        "ledger_by_time",
        "webhook_deliveries_due",
    ];
    assert_eq!(unread, by_custom_plan, "indexes no generic plan reads");
}

fn sorted_names<C: sqlx::Column>(columns: &[C]) -> Vec<String> {
    let mut out: Vec<String> = columns.iter().map(|c| c.name().to_owned()).collect();
    out.sort();
    out
}

/// The columns a statement answers with: on SQLite a file may hold several statements,
/// of which one answers (the others write, returning nothing).
async fn answered_columns(
    sqlite: &mut sqlx::SqliteConnection,
    postgres: &mut sqlx::PgConnection,
    name: &str,
) -> Result<(Vec<String>, Vec<String>), String> {
    use sqlx::Statement as _;
    let path = |dialect: &str| Path::new(DIR).join(dialect).join(format!("{name}.sql"));
    let pg = load(&path("postgres"));
    let pg_columns = {
        let text = sqlx::AssertSqlSafe(pg.text(Dialect::Postgres).to_owned());
        let prepared = postgres.prepare(sqlx::SqlSafeStr::into_sql_str(text)).await;
        let prepared = prepared.map_err(|e| format!("{name} (postgres): {e}"))?;
        sorted_names(prepared.columns())
    };
    let lite = load(&path("sqlite"));
    let parts = sqlite_statements(lite.text(Dialect::Sqlite));
    let mut answering = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let text = sqlx::AssertSqlSafe(part.clone());
        let prepared = sqlite.prepare(sqlx::SqlSafeStr::into_sql_str(text)).await;
        let prepared = prepared.map_err(|e| format!("{name} (sqlite): {e}"))?;
        if !prepared.columns().is_empty() {
            answering.push((i, sorted_names(prepared.columns())));
        }
    }
    match answering.as_slice() {
        [] => Ok((pg_columns, Vec::new())),
        [(_, columns)] => Ok((pg_columns, columns.clone())),
        _ => Err(format!(
            "{name} (sqlite): statements {:?} of {} answer; only one may",
            answering.iter().map(|(i, _)| i + 1).collect::<Vec<_>>(),
            parts.len()
        )),
    }
}

/// A statement written once per dialect answers with the same columns in both, so the
/// code that reads its rows never learns which dialect ran it (issue #43: the dialect
/// showed as row shape). What one dialect reads elsewhere the other answers NULL; and a
/// statement that reads an account's extras answers all three of them (NULL: not read).
#[tokio::test]
async fn each_statement_answers_with_the_same_columns_in_both_dialects() {
    let (dir, lite_url) = fresh_sqlite("holdfast-shape-").await;
    let (pg_url, pg_name) = fresh_postgres("holdfast_shape_").await;
    let mut sqlite = sqlx::SqliteConnection::connect(&lite_url).await.unwrap();
    let mut postgres = sqlx::PgConnection::connect(&pg_url).await.unwrap();
    let mut differ = Vec::new();
    for path in files("postgres") {
        if path.parent().unwrap().ends_with("shared") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap();
        let extras = ["allowances", "keys", "open_jobs"].map(str::to_owned);
        match answered_columns(&mut sqlite, &mut postgres, name).await {
            Ok((pg, _)) if pg.contains(&extras[0]) && !extras.iter().all(|c| pg.contains(c)) => {
                differ.push(format!(
                    "{name}: reads an account's extras, not all of {extras:?}"
                ))
            }
            Ok((pg, lite)) if pg == lite => {}
            Ok((pg, lite)) => differ.push(format!("{name}: postgres {pg:?}, sqlite {lite:?}")),
            Err(e) => differ.push(e),
        }
    }
    sqlite.close().await.unwrap();
    postgres.close().await.unwrap();
    let _ = std::fs::remove_file(&dir);
    drop_postgres(&pg_name).await;
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
