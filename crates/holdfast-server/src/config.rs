//! Options every command shares: where the database is and which rate card applies.

use std::path::PathBuf;

use anyhow::Context;
use holdfast::{Engine, RateCard, SchemaMismatch, StoreError};

#[derive(clap::Args, Debug, Clone)]
pub struct DbArgs {
    /// Database URL: sqlite://FILE or postgres://… Only `migrate` and `serve` create
    /// and migrate it; every other command needs it migrated already.
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
                RateCard::parse(&text).with_context(|| path.display().to_string())
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

    /// Opens the database with the card. It must hold this build's schema already:
    /// nothing is created or migrated (only `migrate` and `serve` do that), so a typo in
    /// `--database` is refused, naming the database, instead of answering from a new
    /// empty one.
    pub async fn engine(&self) -> anyhow::Result<Engine> {
        let card = self.card()?;
        let engine = Engine::open_existing(&self.database, card, &self.pool_options())
            .await
            .map_err(|e| self.opening_error(e))?;
        Ok(opened(engine))
    }

    /// Opens the database with the card and these pool settings, creating it if missing
    /// and migrating it: `migrate` and `serve` only.
    pub async fn migrated_engine(&self, opts: &holdfast::PoolOptions) -> anyhow::Result<Engine> {
        let card = self.card()?;
        let engine = Engine::open_with(&self.database, card, opts)
            .await
            .map_err(|e| self.opening_error(e))?;
        Ok(opened(engine))
    }

    /// The database's name without its password, for messages and logs.
    pub fn database_name(&self) -> String {
        redact_url(&self.database)
    }

    /// An error of opening the database, in one line that names it.
    fn opening_error(&self, e: StoreError) -> anyhow::Error {
        let db = self.database_name();
        match e {
            StoreError::Schema(SchemaMismatch::Missing) => {
                anyhow::anyhow!("no holdfast database at {db}; run `holdfast migrate`")
            }
            StoreError::Schema(m @ SchemaMismatch::Older { .. }) => {
                anyhow::anyhow!("the holdfast database at {db}: {m}; run `holdfast migrate`")
            }
            StoreError::Schema(m) => {
                anyhow::anyhow!(
                    "the holdfast database at {db}: {m}; use the holdfast that migrated it"
                )
            }
            e => anyhow::Error::new(e).context(format!("opening {db}")),
        }
    }
}

/// The engines this process opened through [`DbArgs`], for [`close_opened`].
static OPENED: std::sync::Mutex<Vec<Engine>> = std::sync::Mutex::new(Vec::new());

/// `engine`, remembered for [`close_opened`].
fn opened(engine: Engine) -> Engine {
    OPENED.lock().expect("opened engines").push(engine.clone());
    engine
}

/// Closes every engine this process opened through [`DbArgs`]: a CLI command leaves no
/// commit of its own in a SQLite database's `-wal` file when it ends (the main file alone
/// then holds them, unless a `serve` is using the database and checkpoints it itself).
pub async fn close_opened() {
    let opened = std::mem::take(&mut *OPENED.lock().expect("opened engines"));
    for engine in opened {
        if let Err(e) = engine.close().await {
            tracing::warn!(error = %e, "closing the database");
        }
    }
}

/// Hides the password of a database URL: `postgres://u:***@host/db`, `?password=***`.
pub fn redact_url(url: &str) -> String {
    holdfast::redact::database_url(url)
}
