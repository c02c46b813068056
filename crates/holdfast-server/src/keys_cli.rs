//! `holdfast key create --role R | list | revoke ID`: API keys for `holdfast serve`. A new
//! key is printed once; only its SHA-256 is stored.

use std::process::ExitCode;

use anyhow::Context;

use crate::config::DbArgs;
use crate::http::auth::{Role, new_key};
use crate::http::wire::rfc3339;

#[derive(clap::Args, Debug)]
pub struct KeyArgs {
    #[command(subcommand)]
    pub command: KeyCommand,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum KeyCommand {
    /// Create a key and print it once.
    Create {
        /// service, worker, admin or viewer (reads everything, changes nothing).
        #[arg(long, value_parser = ["service", "worker", "admin", "viewer"])]
        role: String,
    },
    /// List keys (ids and roles, never the keys).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key's id, as `holdfast key list` shows it.
        id: String,
    },
}

pub async fn run(args: KeyArgs) -> anyhow::Result<ExitCode> {
    let engine = args.db.engine().await?;
    match args.command {
        KeyCommand::Create { role } => {
            let role =
                Role::parse(&role).context("role must be service, worker, admin or viewer")?;
            let key = new_key();
            let id = engine.create_key(role.as_str(), &key).await?;
            eprintln!(
                "created {} key {id} in {} (shown once; only its hash is stored):",
                role.as_str(),
                args.db.database_name()
            );
            println!("{key}");
            Ok(ExitCode::SUCCESS)
        }
        KeyCommand::List => {
            println!(
                "{:<40} {:<8} {:<28} revoked_at",
                "key_id", "role", "created_at"
            );
            for k in engine.list_keys().await? {
                let revoked = k.revoked_at.map_or_else(|| "-".to_owned(), rfc3339);
                println!(
                    "{:<40} {:<8} {:<28} {revoked}",
                    k.key_id,
                    k.role,
                    rfc3339(k.created_at)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        KeyCommand::Revoke { id } => {
            if engine.revoke_key(&id).await? {
                println!("revoked {id}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("holdfast: no live key with id {id}");
                Ok(ExitCode::FAILURE)
            }
        }
    }
}
