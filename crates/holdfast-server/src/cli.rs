//! The operator CLI. (Being written.)

use std::process::ExitCode;

use crate::config::DbArgs;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create or upgrade the database schema.
    Migrate {
        #[command(flatten)]
        db: DbArgs,
    },
}

pub async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Migrate { db } => {
            db.engine().await?;
            println!("migrated {}", db.database);
            Ok(ExitCode::SUCCESS)
        }
    }
}
