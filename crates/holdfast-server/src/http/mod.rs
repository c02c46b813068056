//! The HTTP API of shared/API.md. (Being written.)

use std::process::ExitCode;

use crate::config::DbArgs;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "HOLDFAST_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    #[command(flatten)]
    pub db: DbArgs,
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let _engine = args.db.engine().await?;
    anyhow::bail!("serve is not written yet (listen {})", args.listen)
}
