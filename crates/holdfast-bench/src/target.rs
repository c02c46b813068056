//! The database a run talks to: a fresh one (PostgreSQL `CREATE DATABASE` with a random
//! name, dropped after; SQLite a temporary file, deleted after), or the one `--database`
//! names. Only loopback addresses are accepted.

use std::str::FromStr;

use anyhow::{Context, bail};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// A database for one workload.
pub struct Target {
    pub url: String,
    pub backend: Backend,
    cleanup: Cleanup,
}

enum Cleanup {
    None,
    DropDatabase { admin: String, name: String },
    RemoveFile(std::path::PathBuf),
}

/// Refuses any PostgreSQL host but the loopback interface or a local socket.
pub fn check_loopback(url: &str) -> anyhow::Result<()> {
    if url.starts_with("sqlite:") {
        return Ok(());
    }
    let opts = PgConnectOptions::from_str(url).context("bad PostgreSQL URL")?;
    let host = opts.get_host();
    if !(host == "127.0.0.1" || host == "localhost" || host == "::1" || host.starts_with('/')) {
        bail!("bench traffic goes only to 127.0.0.1; refusing host {host:?}");
    }
    Ok(())
}

pub fn backend_of(url: &str) -> anyhow::Result<Backend> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Backend::Postgres)
    } else if url.starts_with("sqlite:") {
        Ok(Backend::Sqlite)
    } else {
        bail!("unsupported database URL {url:?}: use sqlite://FILE or postgres://…")
    }
}

impl Target {
    /// The database `--database` names: used as it is, never dropped.
    pub fn given(url: &str) -> anyhow::Result<Target> {
        check_loopback(url)?;
        Ok(Target {
            url: url.to_owned(),
            backend: backend_of(url)?,
            cleanup: Cleanup::None,
        })
    }

    /// A fresh, empty database.
    pub async fn fresh(backend: Backend, admin: &str) -> anyhow::Result<Target> {
        let name = format!("holdfast_bench_{}", uuid::Uuid::new_v4().simple());
        match backend {
            Backend::Sqlite => {
                let path = std::env::temp_dir().join(format!("{name}.db"));
                Ok(Target {
                    url: format!("sqlite://{}", path.display()),
                    backend,
                    cleanup: Cleanup::RemoveFile(path),
                })
            }
            Backend::Postgres => {
                check_loopback(admin)?;
                let mut conn = PgConnection::connect(admin)
                    .await
                    .with_context(|| format!("connecting to PostgreSQL at {admin}"))?;
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut conn)
                    .await
                    .context("CREATE DATABASE")?;
                let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
                Ok(Target {
                    url: format!("{base}/{name}"),
                    backend,
                    cleanup: Cleanup::DropDatabase {
                        admin: admin.to_owned(),
                        name,
                    },
                })
            }
        }
    }

    /// Drops what [`Target::fresh`] created.
    pub async fn cleanup(self) -> anyhow::Result<()> {
        match self.cleanup {
            Cleanup::None => Ok(()),
            Cleanup::RemoveFile(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
                Ok(())
            }
            Cleanup::DropDatabase { admin, name } => {
                let mut conn = PgConnection::connect(&admin).await?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await?;
                Ok(())
            }
        }
    }
}
