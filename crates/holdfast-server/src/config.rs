//! Options every command shares: where the database is and which rate card applies.

use std::path::PathBuf;

use anyhow::Context;
use holdfast::{Engine, RateCard};

#[derive(clap::Args, Debug, Clone)]
pub struct DbArgs {
    /// Database URL: sqlite://FILE (created if missing) or postgres://…
    #[arg(
        long,
        env = "HOLDFAST_DATABASE_URL",
        default_value = "sqlite://holdfast.db",
        global = true
    )]
    pub database: String,
    /// Rate card TOML file (default: the built-in examples/default.toml).
    #[arg(long, env = "HOLDFAST_RATE_CARD", global = true)]
    pub rate_card: Option<PathBuf>,
    /// SQLite only: `full` (default) syncs every commit before answering; `normal` syncs
    /// at checkpoints only — faster, but a write answered just before a power cut or an
    /// OS crash may be lost.
    #[arg(long, env = "HOLDFAST_SQLITE_SYNCHRONOUS", default_value = "full",
          value_parser = ["full", "normal"], global = true)]
    pub sqlite_synchronous: String,
}

impl DbArgs {
    /// Loads the rate card: the file given, or the built-in default.
    pub fn card(&self) -> anyhow::Result<RateCard> {
        match &self.rate_card {
            None => Ok(RateCard::builtin()),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading rate card {}", path.display()))?;
                RateCard::parse(&text).with_context(|| format!("rate card {}", path.display()))
            }
        }
    }

    /// The name of the rate card in force, for logs.
    pub fn card_name(&self) -> String {
        self.rate_card.as_ref().map_or_else(
            || "built-in default".to_owned(),
            |p| p.display().to_string(),
        )
    }

    /// The pool settings these options give (the CLI's: 5 s to get a connection, a
    /// SQLite busy timeout of 10 s).
    pub fn pool_options(&self) -> holdfast::PoolOptions {
        holdfast::PoolOptions {
            sqlite_synchronous: holdfast::SqliteSync::parse(&self.sqlite_synchronous)
                .unwrap_or_default(),
            ..holdfast::PoolOptions::default()
        }
    }

    /// Opens (and migrates) the database with the card.
    pub async fn engine(&self) -> anyhow::Result<Engine> {
        self.engine_with(&self.pool_options()).await
    }

    /// As [`DbArgs::engine`], with these pool settings.
    pub async fn engine_with(&self, opts: &holdfast::PoolOptions) -> anyhow::Result<Engine> {
        let card = self.card()?;
        Engine::open_with(&self.database, card, opts)
            .await
            .with_context(|| format!("opening {}", redact_url(&self.database)))
    }
}

/// Hides the password of a database URL: `postgres://u:***@host/db`, `?password=***`.
pub fn redact_url(url: &str) -> String {
    holdfast::redact::database_url(url)
}
