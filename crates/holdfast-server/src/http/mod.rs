//! The HTTP API of docs/API.md: `holdfast serve`.
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
pub mod export;
pub mod extract;
pub mod ingest;
pub mod jobs;
pub mod limits;
pub mod listen;
pub mod metrics;
pub mod money;
pub mod payments;
pub mod refunds;
pub mod schema;
pub mod state;
pub mod usage;
pub mod webhooks;
pub mod wire;
pub mod worker_batch;
pub mod workers;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Router};
use holdfast::Engine;
use holdfast::batch::BatchOptions;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use utoipa::OpenApi;
use utoipa::openapi::path::PathItem;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::DbArgs;
use auth::Role;
use error::ApiError;
pub use state::AppState;
use state::EnvKey;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "HOLDFAST_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Most debits one transaction applies (group commit); 1 turns batching off.
    #[arg(long, env = "HOLDFAST_DEBIT_BATCH_MAX", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub debit_batch_max: u64,
    /// Debit commit streams on PostgreSQL: batch transactions in flight at once (fewer
    /// batch more). The flag keeps its first name; these are not job lanes.
    #[arg(long, env = "HOLDFAST_DEBIT_LANES", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub debit_lanes: u64,
    /// Most submits one transaction applies (group commit, over the same commit streams
    /// as debits); 1 turns batching of submits off.
    #[arg(long, env = "HOLDFAST_SUBMIT_BATCH_MAX", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub submit_batch_max: u64,
    /// The longest a request may take, in seconds, before it is answered 503 (a lease
    /// adds its `wait_ms` on top). Raise it for `GET /v1/admin/audit` on a big database.
    #[arg(long, env = "HOLDFAST_REQUEST_TIMEOUT_SECONDS", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout_seconds: u64,
    /// Requests per second each API key may keep up (a token bucket per key; over it, 429
    /// `rate_limited` with `Retry-After`). 0, the default, turns the limit off.
    #[arg(long, env = "HOLDFAST_RATE_LIMIT_PER_SECOND", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub rate_limit_per_second: u32,
    /// Requests a key may make at once after being idle (default: the per-second rate).
    #[arg(long, env = "HOLDFAST_RATE_LIMIT_BURST",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rate_limit_burst: Option<u32>,
    /// The longest a request waits for the database before it is answered 503 (with
    /// `Retry-After: 1`): for a pool connection, and on SQLite for its turn to write and
    /// for the file's write lock. Load shedding: a database that cannot take more work
    /// now is told to the client at once instead of queueing requests behind it.
    #[arg(long, env = "HOLDFAST_DB_ACQUIRE_TIMEOUT_MS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub db_acquire_timeout_ms: u64,
    /// The longest a client may take to send a request's headers (and the longest an idle
    /// keep-alive connection stays open), in seconds; then the connection is closed.
    #[arg(long, env = "HOLDFAST_HEADER_READ_TIMEOUT_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_read_timeout_seconds: u64,
    /// The longest an answer may wait for its client to read more of it, in seconds; a
    /// client that stops reading that long is disconnected.
    #[arg(long, env = "HOLDFAST_WRITE_STALL_TIMEOUT_SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub write_stall_timeout_seconds: u64,
    /// Failed attempts after which a webhook delivery is dead (retried 1 s, 2 s, 4 s, …
    /// at most 10 minutes apart until then).
    #[arg(long, env = "HOLDFAST_WEBHOOK_MAX_ATTEMPTS", default_value_t = 12,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub webhook_max_attempts: u32,
    /// The longest one webhook POST may take, connect included, in seconds. A delivery
    /// whose sender died mid-attempt is attempted again after twice this plus 5 s.
    #[arg(long, env = "HOLDFAST_WEBHOOK_TIMEOUT_SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=300))]
    pub webhook_timeout_seconds: u64,
    /// Do not serve the operator console at `/console`.
    #[arg(long, env = "HOLDFAST_NO_CONSOLE")]
    pub no_console: bool,
    /// Also serve `GET /metrics` without a key on this address (for Prometheus, on an
    /// address only it reaches); on the main address `/metrics` needs an admin or viewer
    /// key.
    #[arg(long, env = "HOLDFAST_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
    /// The most client connections open at once; more wait in the listen queue until one
    /// closes.
    #[arg(long, env = "HOLDFAST_MAX_CONNECTIONS", default_value_t = listen::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// The most CSV exports (`GET /v1/ledger` with `Accept: text/csv`) streaming at once;
    /// one more is answered 429 `too_many_exports` (with Retry-After: 1).
    #[arg(long, env = "HOLDFAST_MAX_EXPORT_STREAMS", default_value_t = state::DEFAULT_MAX_EXPORT_STREAMS,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_export_streams: u32,
    #[command(flatten)]
    pub db: DbArgs,
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
    /// The per-key request rate limit; `None`: no limit.
    pub rate_limit: Option<limits::RateLimit>,
    /// What a connection may hold the server to (header read timeout).
    pub connection_limits: listen::ConnectionLimits,
    /// Serve the operator console at `/console`.
    pub console: bool,
    /// Failed attempts after which a webhook delivery is dead.
    pub webhook_max_attempts: u32,
    /// The longest one webhook POST may take.
    pub webhook_timeout: Duration,
    /// An address to serve `/metrics` on without a key (`--metrics-listen`).
    pub metrics_listen: Option<String>,
    /// The most CSV exports streaming at once (`--max-export-streams`, 1–1000; 0, for a
    /// program that embeds the server, answers every CSV export 429).
    pub max_export_streams: u32,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            admin_key: None,
            request_timeout: Duration::from_secs(15),
            run_passes: true,
            rate_limit: None,
            connection_limits: listen::ConnectionLimits::default(),
            console: true,
            webhook_max_attempts: holdfast::webhooks::WebhookOptions::default().max_attempts,
            webhook_timeout: holdfast::webhooks::WebhookOptions::default().timeout,
            metrics_listen: None,
            max_export_streams: state::DEFAULT_MAX_EXPORT_STREAMS,
        }
    }
}

/// The whole API in one list: each handler with the path and method of its
/// `#[utoipa::path]` annotation. The router ([`router`]) and the OpenAPI document
/// ([`document`]) are both built from it, so the document lists exactly what is served.
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(docs::ApiDoc::openapi())
        .routes(routes!(accounts::put_account, accounts::get_account))
        .routes(routes!(accounts::list_accounts))
        .routes(routes!(accounts::activity))
        .routes(routes!(accounts::ban))
        .routes(routes!(accounts::unban))
        .routes(routes!(accounts::block))
        .routes(routes!(accounts::unblock))
        .routes(routes!(money::top_up))
        .routes(routes!(money::debit))
        .routes(routes!(ingest::ingest))
        .routes(routes!(money::refund))
        .routes(routes!(money::ledger))
        .routes(routes!(money::statement))
        .routes(routes!(money::balance_at))
        .routes(routes!(money::blocks))
        .routes(routes!(usage::usage))
        .routes(routes!(export::ledger))
        .routes(routes!(refunds::grant))
        .routes(routes!(refunds::refund_job))
        .routes(routes!(jobs::submit))
        .routes(routes!(jobs::get_job))
        .routes(routes!(jobs::cancel))
        .routes(routes!(workers::lease))
        .routes(routes!(workers::heartbeat))
        .routes(routes!(workers::complete))
        .routes(routes!(workers::fail))
        .routes(routes!(worker_batch::complete_many))
        .routes(routes!(worker_batch::fail_many))
        .routes(routes!(events::list))
        .routes(routes!(admin::sweep))
        .routes(routes!(admin::reconcile))
        .routes(routes!(admin::reactivate))
        .routes(routes!(admin::expire))
        .routes(routes!(admin::audit))
        .routes(routes!(webhooks::dead))
        .routes(routes!(webhooks::redeliver))
        .routes(routes!(payments::stripe))
        .routes(routes!(
            payments::put_customer,
            payments::get_customer,
            payments::delete_customer
        ))
        .routes(routes!(admin::healthz))
        .routes(routes!(admin::metrics))
        .routes(routes!(admin::openapi))
}

/// The OpenAPI document without a rate card: what `holdfast openapi` prints and
/// `docs/openapi.json` holds, the same for every deployment. A server serves it with its
/// card's names and bounds added ([`schema::with_card`], in [`router`]).
pub fn document() -> serde_json::Value {
    schema::finish(api().into_openapi())
}

/// The methods a path item documents, each once.
fn methods(item: &PathItem) -> Vec<Method> {
    let ops = [
        (Method::GET, &item.get),
        (Method::PUT, &item.put),
        (Method::POST, &item.post),
        (Method::DELETE, &item.delete),
        (Method::OPTIONS, &item.options),
        (Method::HEAD, &item.head),
        (Method::PATCH, &item.patch),
        (Method::TRACE, &item.trace),
    ];
    ops.into_iter()
        .filter(|(_, op)| op.is_some())
        .map(|(method, _)| method)
        .collect()
}

/// Every (method, path template) the router serves: what [`api`] lists.
pub fn served_routes() -> Vec<(Method, String)> {
    let paths = api().into_openapi().paths.paths;
    paths
        .iter()
        .flat_map(|(path, item)| methods(item).into_iter().map(|m| (m, path.clone())))
        .collect()
}

async fn route_not_found() -> ApiError {
    ApiError::RouteNotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// Ends a request that outlasts its time with 503: a database that does not answer must
/// never hang a client. A lease may wait up to [`workers::MAX_WAIT_MS`] for a job, which
/// its body says and this layer does not read: its route gets that much more here, and
/// the lease handler holds itself to the time limit plus the `wait_ms` it was asked.
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

/// The whole API as a router, with the document built from the same list (served by
/// [`admin::openapi`]).
pub fn router(state: AppState, request_timeout: Duration, console: bool) -> Router {
    let (router, doc) = api().split_for_parts();
    let doc = schema::with_card(schema::finish(doc), state.engine.card());
    let router = if console {
        router.merge(crate::console::routes())
    } else {
        router
    };
    router
        .layer(Extension(Arc::new(doc)))
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(route_not_found)
        .layer(DefaultBodyLimit::max(extract::MAX_BATCH_BODY_BYTES))
        .layer(middleware::from_fn(extract::buffer_body))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::identify,
        ))
        .layer(middleware::from_fn_with_state(request_timeout, time_limit))
        .layer(middleware::from_fn(metrics::track))
        .with_state(state)
}

/// A running server and its scheduled passes.
pub struct Server {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    shutdown: watch::Sender<bool>,
    http: Vec<JoinHandle<std::io::Result<()>>>,
    passes: Vec<JoinHandle<()>>,
}

impl Server {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address of `/metrics` without a key, when asked for
    /// ([`ServerOptions::metrics_listen`]).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Stops accepting, lets in-flight requests finish, stops the passes.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(true);
        let mut served = Ok(());
        for http in self.http {
            let result = http.await.context("server task")?;
            served = served.and(result);
        }
        for pass in self.passes {
            let _ = pass.await;
        }
        served.context("serving HTTP")
    }
}

/// Serves the API on `listener` (and runs the passes when asked) until
/// [`Server::shutdown`]; `/metrics` alone also on the address of
/// [`ServerOptions::metrics_listen`], bound here first.
pub async fn start(
    engine: Engine,
    listener: TcpListener,
    opts: ServerOptions,
) -> anyhow::Result<Server> {
    let metrics_listener = bind_metrics(opts.metrics_listen.as_deref()).await?;
    start_on(engine, listener, metrics_listener, opts).await
}

/// The listener of `--metrics-listen`, when one is asked for.
pub async fn bind_metrics(listen: Option<&str>) -> anyhow::Result<Option<TcpListener>> {
    let Some(listen) = listen else {
        return Ok(None);
    };
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening for metrics on {listen}"))?;
    Ok(Some(listener))
}

/// [`start`] on listeners bound already: the API's, and `/metrics` alone on
/// `metrics_listener` (`opts.metrics_listen` is not read).
pub async fn start_on(
    engine: Engine,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    opts: ServerOptions,
) -> anyhow::Result<Server> {
    metrics::init();
    let addr = listener.local_addr().context("listener address")?;
    let (shutdown, rx) = watch::channel(false);
    let passes = if opts.run_passes {
        holdfast::schedules::open_webhook_cursors(&engine)
            .await
            .context("opening the webhook endpoints' feed cursors")?;
        let webhooks = holdfast::webhooks::WebhookOptions {
            max_attempts: opts.webhook_max_attempts,
            timeout: opts.webhook_timeout,
            ..Default::default()
        };
        holdfast::schedules::spawn_with(&engine, rx.clone(), webhooks)
    } else {
        vec![]
    };
    let state = AppState {
        engine,
        env_key: EnvKey::new(opts.admin_key.as_deref()),
        limiter: opts
            .rate_limit
            .map(|l| Arc::new(limits::KeyLimiter::new(l))),
        shutdown: rx.clone(),
        console: Arc::default(),
        request_timeout: opts.request_timeout,
        gauges: Arc::default(),
        exports: Arc::new(tokio::sync::Semaphore::new(
            opts.max_export_streams as usize,
        )),
    };
    let mut http = Vec::new();
    let mut metrics_addr = None;
    if let Some(listener) = metrics_listener {
        metrics_addr = Some(listener.local_addr().context("metrics listener address")?);
        let app = metrics_router(state.clone());
        let limits = opts.connection_limits;
        http.push(tokio::spawn(listen::serve(
            listener,
            app,
            limits,
            rx.clone(),
        )));
    }
    let app = router(state, opts.request_timeout, opts.console);
    http.push(tokio::spawn(listen::serve(
        listener,
        app,
        opts.connection_limits,
        rx,
    )));
    Ok(Server {
        addr,
        metrics_addr,
        shutdown,
        http,
        passes,
    })
}

/// `GET /metrics` without a key, alone: what `--metrics-listen` serves (on an address
/// only Prometheus reaches).
fn metrics_router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", axum::routing::get(admin::metrics_text))
        .fallback(route_not_found)
        .with_state(state)
}

/// The actor `serve` records for the first admin key it creates.
pub const FIRST_KEY_ACTOR: &str = "serve:first-admin-key";

/// The engine `serve` runs: the database created if missing and migrated, the pool's
/// wait and the batchers as the flags say.
async fn open_engine(args: &ServeArgs) -> anyhow::Result<Engine> {
    let wait = Duration::from_millis(args.db_acquire_timeout_ms);
    let pool = holdfast::PoolOptions {
        acquire_timeout: wait,
        sqlite_busy_timeout: wait,
        ..args.db.pool_options()
    };
    Ok(args
        .db
        .migrated_engine(&pool)
        .await?
        .with_batching(BatchOptions {
            max_batch: usize::try_from(args.debit_batch_max)?,
            postgres_streams: args.debit_lanes,
        })
        .with_submit_batching(BatchOptions {
            max_batch: usize::try_from(args.submit_batch_max)?,
            postgres_streams: args.debit_lanes,
        }))
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

/// The shortest admin key `serve` takes from its environment: a key an attacker may try
/// against the console's sign-in and every route must be too long to guess.
pub const MIN_ENV_KEY_CHARS: usize = 32;

/// The admin key of `HOLDFAST_ADMIN_KEY`, when set (empty counts as unset); a key shorter
/// than [`MIN_ENV_KEY_CHARS`] is refused.
fn env_admin_key() -> anyhow::Result<Option<String>> {
    let Some(key) = std::env::var("HOLDFAST_ADMIN_KEY")
        .ok()
        .filter(|k| !k.is_empty())
    else {
        return Ok(None);
    };
    let chars = key.chars().count();
    if chars < MIN_ENV_KEY_CHARS {
        anyhow::bail!(
            "HOLDFAST_ADMIN_KEY is {chars} characters; it needs at least {MIN_ENV_KEY_CHARS} \
             (make one with `holdfast key create --role admin`, or e.g. `openssl rand -hex 32`)"
        );
    }
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

/// Serves until SIGTERM or SIGINT. The port is bound first and the SQLite lock taken
/// next, so a port in use or a second `serve` on one SQLite file is refused before
/// anything is created, migrated or printed.
pub async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    init_tracing();
    let env_key = env_admin_key()?;
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let metrics_listener = bind_metrics(args.metrics_listen.as_deref()).await?;
    let _one_serve = crate::serve_lock::take(&args.db.database)?;
    let engine = open_engine(&args).await?;
    let first =
        holdfast::actor::acting_as(FIRST_KEY_ACTOR, first_admin_key(&engine, env_key.is_some()));
    if let Some(key) = first.await? {
        println!("holdfast: created the first admin key (shown once, only its hash is stored):");
        println!("{key}");
    }
    let opts = ServerOptions {
        admin_key: env_key,
        request_timeout: Duration::from_secs(args.request_timeout_seconds),
        rate_limit: limits::RateLimit::from_flags(
            args.rate_limit_per_second,
            args.rate_limit_burst,
        ),
        connection_limits: listen::ConnectionLimits {
            header_read_timeout: Duration::from_secs(args.header_read_timeout_seconds),
            max_connections: args.max_connections,
            write_stall_timeout: Duration::from_secs(args.write_stall_timeout_seconds),
        },
        max_export_streams: args.max_export_streams,
        console: !args.no_console,
        webhook_max_attempts: args.webhook_max_attempts,
        webhook_timeout: Duration::from_secs(args.webhook_timeout_seconds),
        ..ServerOptions::default()
    };
    let stop = shutdown_signal()?;
    let server = start_on(engine.clone(), listener, metrics_listener, opts).await?;
    if let Some(metrics) = server.metrics_addr() {
        tracing::info!(listen = %metrics, "serving /metrics without a key on {metrics}");
    }
    tracing::info!(
        listen = %server.addr(),
        database = %crate::config::redact_url(&args.db.database),
        rate_card = %args.db.card_name(),
        "holdfast serve listening on {}", server.addr()
    );
    stop.await;
    tracing::info!("shutting down: finishing in-flight requests");
    server.shutdown().await?;
    close_database(&engine).await?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// After the last request: the database checkpointed (SQLite: the main file alone then
/// holds every commit, and the `-wal` file is gone) and closed.
async fn close_database(engine: &Engine) -> anyhow::Result<()> {
    let checkpointed = engine.close().await.context("closing the database")?;
    if checkpointed {
        tracing::info!("database closed");
    } else {
        tracing::warn!(
            "database closed; another process was using the SQLite file, so its -wal file \
             stays until the next checkpoint"
        );
    }
    Ok(())
}
