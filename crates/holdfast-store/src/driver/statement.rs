//! Statements kept as files: `sql/postgres/NAME.sql` and `sql/sqlite/NAME.sql` (or one
//! `sql/shared/NAME.sql` that both dialects run as written), each with a header naming
//! its parameters, pasteable into `psql` (`\set name value`) or `sqlite3`
//! (`.param set :name value`) as it is.
//!
//! Parameters are named in the text (`:account_id`), bound by name from Rust
//! ([`params!`]), and numbered (`$1`, `$2`, … in order of first use) once, when the
//! statement is first used. A name the statement uses and the caller did not give is an
//! error naming both, never a silently shifted argument.

use std::sync::LazyLock;

use crate::driver::db::{Arg, Dialect};
use crate::error::StoreError;

/// A statement loaded from its file(s), with named parameters numbered for the driver.
#[derive(Debug)]
pub struct Statement {
    pub name: &'static str,
    postgres: Numbered,
    sqlite: Numbered,
}

/// A statement's text with `:name` replaced by `$N`, and the names in `N` order.
#[derive(Debug)]
struct Numbered {
    text: String,
    names: Vec<&'static str>,
}

/// A statement from `sql/postgres/NAME.sql` and `sql/sqlite/NAME.sql`, loaded and
/// numbered at first use: `static FINISH: Stmt = statement!("finish");`, or
/// `statement!(shared "read_job")` for `sql/shared/read_job.sql`.
#[macro_export]
macro_rules! statement {
    (shared $name:literal) => {
        std::sync::LazyLock::new(|| {
            let text = include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/sql/shared/",
                $name,
                ".sql"
            ));
            $crate::driver::statement::Statement::load($name, text, text)
        })
    };
    ($name:literal) => {
        std::sync::LazyLock::new(|| {
            $crate::driver::statement::Statement::load(
                $name,
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/sql/postgres/",
                    $name,
                    ".sql"
                )),
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/sql/sqlite/",
                    $name,
                    ".sql"
                )),
            )
        })
    };
}

/// A statement as a `static`.
pub type Stmt = LazyLock<Statement>;

impl Statement {
    pub fn load(name: &'static str, postgres: &'static str, sqlite: &'static str) -> Statement {
        Statement {
            name,
            postgres: number(postgres),
            sqlite: number(sqlite),
        }
    }

    /// The text the driver runs on `dialect`, with its arguments in `$N` order.
    pub fn bind(&self, dialect: Dialect, params: Params) -> Result<(&str, Vec<Arg>), StoreError> {
        let numbered = match dialect {
            Dialect::Postgres => &self.postgres,
            Dialect::Sqlite => &self.sqlite,
        };
        let mut given = params.0;
        let args = numbered
            .names
            .iter()
            .map(|name| {
                let at = given.iter().position(|(n, _)| n == name).ok_or_else(|| {
                    StoreError::Statement(format!("{}: no value for :{name}", self.name))
                })?;
                Ok(given.swap_remove(at).1)
            })
            .collect::<Result<Vec<Arg>, StoreError>>()?;
        Ok((numbered.text.as_str(), args))
    }

    /// The parameter names of `dialect`'s text, in `$N` order.
    pub fn names(&self, dialect: Dialect) -> &[&'static str] {
        match dialect {
            Dialect::Postgres => &self.postgres.names,
            Dialect::Sqlite => &self.sqlite.names,
        }
    }

    /// The numbered text of `dialect`.
    pub fn text(&self, dialect: Dialect) -> &str {
        match dialect {
            Dialect::Postgres => &self.postgres.text,
            Dialect::Sqlite => &self.sqlite.text,
        }
    }
}

/// Values bound by name: `params! { account_id: id.as_str(), delta_micros: -5 }`.
#[derive(Debug, Default)]
pub struct Params(pub Vec<(&'static str, Arg)>);

#[macro_export]
macro_rules! params {
    ($($name:ident : $value:expr),* $(,)?) => {
        $crate::driver::statement::Params(vec![$((stringify!($name), $crate::driver::db::Arg::from($value))),*])
    };
}

impl Params {
    /// These parameters and those of `more`.
    pub fn and(mut self, more: Params) -> Params {
        self.0.extend(more.0);
        self
    }
}

/// The items of a set-based write bound as ONE PostgreSQL array of a composite type (a
/// migration creates the type, named by `#[sqlx(type_name = …)]` on the item struct,
/// whose fields are the type's attributes in order; [`crate::driver::db::Tx::records`]);
/// on SQLite, which has no such types, as one JSON array of the items, serialized as
/// they are (fewer allocations than a `serde_json::Value` per item). One array is one sub-select and
/// one `unnest` in the statement, however many fields an item has: what lets a call of
/// one item cost about what a statement of scalars costs (docs/bench-history.md, #43).
pub trait Records:
    serde::Serialize
    + Clone
    + Send
    + Sync
    + 'static
    + for<'q> sqlx::Encode<'q, sqlx::Postgres>
    + sqlx::Type<sqlx::Postgres>
    + sqlx::postgres::PgHasArrayType
{
    /// The item's texts, checked for NUL before they are bound (as every bound text is).
    fn texts(&self) -> impl Iterator<Item = &str>;
}

/// A parameter struct: its fields bound by their names.
pub trait BindByName {
    fn params(&self) -> Params;
}

/// Implements [`BindByName`] for a struct whose fields are the statement's parameters:
/// `bind_by_name!(Finish<'_> { account_id, capture_micros, … })`.
#[macro_export]
macro_rules! bind_by_name {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl $crate::driver::statement::BindByName for $ty {
            fn params(&self) -> $crate::driver::statement::Params {
                $crate::params! { $($field: self.$field.clone()),* }
            }
        }
    };
}

/// Replaces each `:name` outside quotes and comments with `$N`, numbering names in order
/// of first use. `::type` casts are left alone.
fn number(text: &'static str) -> Numbered {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut names: Vec<&'static str> = Vec::new();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => i = skip_quoted(bytes, i),
            b'-' if bytes.get(i + 1) == Some(&b'-') => i = skip_until(bytes, i, b"\n"),
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_until(bytes, i, b"*/"),
            b':' if is_param_start(bytes, i) => {
                let end = (i + 1..bytes.len())
                    .find(|&j| !is_name_byte(bytes[j]))
                    .unwrap_or(bytes.len());
                let name = &text[i + 1..end];
                let n = match names.iter().position(|&k| k == name) {
                    Some(at) => at + 1,
                    None => {
                        names.push(name);
                        names.len()
                    }
                };
                out.push_str(&text[copied..i]);
                out.push_str(&format!("${n}"));
                copied = end;
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Numbered { text: out, names }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_param_start(bytes: &[u8], i: usize) -> bool {
    let after = bytes.get(i + 1).copied().unwrap_or(b' ');
    let before = if i == 0 { b' ' } else { bytes[i - 1] };
    (after.is_ascii_lowercase() || after == b'_') && before != b':'
}

/// The index just past the quoted text starting at `start` (a doubled quote escapes).
fn skip_quoted(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

fn skip_until(bytes: &[u8], start: usize, end: &[u8]) -> usize {
    (start + 2..bytes.len())
        .find(|&j| bytes[j..].starts_with(end))
        .map_or(bytes.len(), |j| j + end.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_numbers_in_order_of_first_use() {
        let n = number("SELECT :b, :a::bigint, :b FROM t WHERE x = ':c' -- :d\n AND y = :a_2");
        assert_eq!(
            n.text,
            "SELECT $1, $2::bigint, $1 FROM t WHERE x = ':c' -- :d\n AND y = $3"
        );
        assert_eq!(n.names, vec!["b", "a", "a_2"]);
    }

    #[test]
    fn block_comments_and_doubled_quotes_are_skipped() {
        let n = number("/* :x */ SELECT 'it''s :y', \"col:z\", :w");
        assert_eq!(n.text, "/* :x */ SELECT 'it''s :y', \"col:z\", $1");
        assert_eq!(n.names, vec!["w"]);
    }

    #[test]
    fn binding_orders_by_name_and_names_what_is_missing() {
        let s = Statement::load("t", "SELECT :b, :a", "SELECT :a");
        let (text, args) = s
            .bind(Dialect::Postgres, params! { a: 1_i64, b: "x" })
            .unwrap();
        assert_eq!(text, "SELECT $1, $2");
        assert!(matches!(&args[..], [Arg::Text(Some(b)), Arg::Int(Some(1))] if b == "x"));
        let (_, args) = s
            .bind(Dialect::Sqlite, params! { a: 1_i64, b: "x" })
            .unwrap();
        assert_eq!(args.len(), 1);
        let err = s.bind(Dialect::Postgres, params! { a: 1_i64 }).unwrap_err();
        assert_eq!(err.to_string(), "statement t: no value for :b");
    }
}
