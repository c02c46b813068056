//! The HTTP API of shared/API.md: `holdfast serve`.
//!
//! [`start`] runs the server on a listener the caller bound (tests use port 0) together
//! with the scheduled passes, and returns a [`Server`] handle to stop both gracefully.
//! [`serve`] is the binary's entry: open and migrate the database, make sure some admin
//! key exists, log where it listens, and stop on SIGTERM or SIGINT.

pub mod accounts;
pub mod admin;
pub mod auth;
pub mod docs;
pub mod error;
pub mod events;
pub mod extract;
pub mod jobs;
pub mod metrics;
pub mod money;
pub mod wire;
pub mod workers;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use holdfast::Engine;
use holdfast::batch::BatchOptions;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::DbArgs;
use auth::{EnvKey, Role};
use error::ApiError;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "HOLDFAST_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Most debits one transaction applies (group commit); 1 turns batching off.
    #[arg(long, env = "HOLDFAST_DEBIT_BATCH_MAX", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub debit_batch_max: u64,
    /// Debit batch transactions in flight at once on PostgreSQL (fewer batch more).
    #[arg(long, env = "HOLDFAST_DEBIT_LANES", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub debit_lanes: u64,
    #[command(flatten)]
    pub db: DbArgs,
}

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub engine: Engine,
    pub env_key: EnvKey,
    /// Turns true when the server is shutting down (long-polls answer at once).
    pub shutdown: watch::Receiver<bool>,
}

/// How a server runs.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// An admin key from the environment (`HOLDFAST_ADMIN_KEY`).
    pub admin_key: Option<String>,
    /// The longest any request may take (a lease adds its `wait_ms` on top).
    pub request_timeout: Duration,
    /// Run the scheduled passes (sweeper, notices) in this process.
    pub run_passes: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            admin_key: None,
            request_timeout: Duration::from_secs(15),
            run_passes: true,
        }
    }
}

/// One route of the API: path, method, handler. The router is built from this table
/// only, so [`served_routes`] is exactly what it serves.
type RouteEntry = (&'static str, Method, MethodRouter<AppState>);

fn table() -> Vec<RouteEntry> {
    let acct = "/v1/accounts/{account_id}";
    vec![
        (acct, Method::PUT, put(accounts::put_account)),
        (acct, Method::GET, get(accounts::get_account)),
        (
            "/v1/accounts/{account_id}/activity",
            Method::POST,
            post(accounts::activity),
        ),
        (
            "/v1/accounts/{account_id}/block",
            Method::POST,
            post(accounts::block),
        ),
        (
            "/v1/accounts/{account_id}/unblock",
            Method::POST,
            post(accounts::unblock),
        ),
        (
            "/v1/accounts/{account_id}/top-ups",
            Method::POST,
            post(money::top_up),
        ),
        (
            "/v1/accounts/{account_id}/debits",
            Method::POST,
            post(money::debit),
        ),
        (
            "/v1/accounts/{account_id}/refunds",
            Method::POST,
            post(money::refund),
        ),
        (
            "/v1/accounts/{account_id}/ledger",
            Method::GET,
            get(money::ledger),
        ),
        ("/v1/jobs", Method::POST, post(jobs::submit)),
        ("/v1/jobs/{job_id}", Method::GET, get(jobs::get_job)),
        ("/v1/jobs/{job_id}/cancel", Method::POST, post(jobs::cancel)),
        ("/v1/lanes/{lane}/lease", Method::POST, post(workers::lease)),
        (
            "/v1/jobs/{job_id}/heartbeat",
            Method::POST,
            post(workers::heartbeat),
        ),
        (
            "/v1/jobs/{job_id}/complete",
            Method::POST,
            post(workers::complete),
        ),
        ("/v1/jobs/{job_id}/fail", Method::POST, post(workers::fail)),
        ("/v1/events", Method::GET, get(events::list)),
        ("/v1/admin/sweep", Method::POST, post(admin::sweep)),
        ("/v1/admin/reconcile", Method::POST, post(admin::reconcile)),
        (
            "/v1/admin/reactivate",
            Method::POST,
            post(admin::reactivate),
        ),
        ("/v1/admin/audit", Method::GET, get(admin::audit)),
        ("/healthz", Method::GET, get(admin::healthz)),
        ("/metrics", Method::GET, get(admin::metrics)),
        ("/openapi.json", Method::GET, get(admin::openapi)),
    ]
}

/// Every (method, path template) the router serves.
pub fn served_routes() -> Vec<(Method, &'static str)> {
    table().into_iter().map(|(p, m, _)| (m, p)).collect()
}

async fn route_not_found() -> ApiError {
    ApiError::RouteNotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// Ends a request that outlasts its time with 503: a database that does not answer must
/// never hang a client.
async fn time_limit(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    let limit = if req.uri().path().starts_with("/v1/lanes/") {
        limit + Duration::from_millis(workers::MAX_WAIT_MS.unsigned_abs())
    } else {
        limit
    };
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::Unavailable("request timed out".into()).into_response(),
    }
}

/// The whole API as a router.
pub fn router(state: AppState, request_timeout: Duration) -> Router {
    let mut router = Router::new();
    for (path, _, handler) in table() {
        router = router.route(path, handler);
    }
    router
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(route_not_found)
        .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
        .layer(middleware::from_fn(extract::buffer_body))
        .layer(middleware::from_fn_with_state(request_timeout, time_limit))
        .layer(middleware::from_fn(metrics::track))
        .with_state(state)
}

/// A running server and its scheduled passes.
pub struct Server {
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    http: JoinHandle<std::io::Result<()>>,
    passes: Vec<JoinHandle<()>>,
}

impl Server {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets in-flight requests finish, stops the passes.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(true);
        let served = self.http.await.context("server task")?;
        for pass in self.passes {
            let _ = pass.await;
        }
        served.context("serving HTTP")
    }
}

/// Serves the API on `listener` (and runs the passes when asked) until
/// [`Server::shutdown`].
pub async fn start(
    engine: Engine,
    listener: TcpListener,
    opts: ServerOptions,
) -> anyhow::Result<Server> {
    metrics::init();
    let addr = listener.local_addr().context("listener address")?;
    let (shutdown, rx) = watch::channel(false);
    let passes = if opts.run_passes {
        holdfast::schedules::spawn(&engine, rx.clone())
    } else {
        vec![]
    };
    let state = AppState {
        engine,
        env_key: EnvKey::new(opts.admin_key.as_deref()),
        shutdown: rx.clone(),
    };
    let app = router(state, opts.request_timeout);
    let mut stop = rx;
    let http = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|down| *down).await;
            })
            .await
    });
    Ok(Server {
        addr,
        shutdown,
        http,
        passes,
    })
}

/// With no key configured at all — none in the environment, none live in the database —
/// creates an admin key and returns it (to be shown once). Otherwise `None`.
pub async fn first_admin_key(engine: &Engine, env_key_set: bool) -> anyhow::Result<Option<String>> {
    if env_key_set || engine.live_key_count().await? > 0 {
        return Ok(None);
    }
    let key = auth::new_key();
    engine
        .create_key(Role::Admin.as_str(), &key)
        .await
        .context("creating the first admin key")?;
    Ok(Some(key))
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// SIGTERM or SIGINT, listened for from the moment this returns (so a signal that comes
/// right after the "listening" log line is not missed).
#[cfg(unix)]
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    init_tracing();
    let engine = args.db.engine().await?.with_batching(BatchOptions {
        max_batch: usize::try_from(args.debit_batch_max)?,
        postgres_lanes: args.debit_lanes,
    });
    let env_key = std::env::var("HOLDFAST_ADMIN_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    if let Some(key) = first_admin_key(&engine, env_key.is_some()).await? {
        println!("holdfast: created the first admin key (shown once, only its hash is stored):");
        println!("{key}");
    }
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let opts = ServerOptions {
        admin_key: env_key,
        ..ServerOptions::default()
    };
    let stop = shutdown_signal()?;
    let server = start(engine, listener, opts).await?;
    tracing::info!(
        listen = %server.addr(),
        database = %crate::config::redact_url(&args.db.database),
        rate_card = %args.db.card_name(),
        "holdfast serve listening on {}", server.addr()
    );
    stop.await;
    tracing::info!("shutting down: finishing in-flight requests");
    server.shutdown().await?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}
