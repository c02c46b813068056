//! `holdfast-bench`: every engine path against its raw-SQL floor, in the same run, on the
//! same database, interleaved. See the crate README and BENCHMARKS.md.

mod batched;
mod bigdb;
mod console;
mod cpu;
mod driver;
mod floor;
mod spread;
mod target;
mod workloads;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use holdfast::{Engine, PoolOptions, RateCard, SqliteSync};
use serde::Serialize;

use cpu::CpuProbe;

/// The allocator of the `holdfast` binary (see holdfast-server's main.rs), so the engine
/// is measured as it is served.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use driver::{Op, Sample, Summary, closed_loop};
use floor::FloorPool;
use target::{Backend, Target};
use workloads::Names;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Workload {
    /// Metered debits over `--accounts` random accounts.
    Debit,
    /// Metered debits on one account.
    DebitHot,
    /// submit → lease → complete over random accounts.
    Lifecycle,
    /// The same lifecycle through the HTTP server (started in-process) over real sockets.
    HttpLifecycle,
    /// 50 submits at once, then `lease_many` and `complete_many` until 50 jobs are done,
    /// library and HTTP, with the single `lifecycle` (engine) measured beside them.
    LifecycleBatched,
    /// The sweeper over `--sweep-jobs` in-progress jobs whose lease expired.
    Sweep,
    /// Batch ingest: calls of `--ingest-batch` debits over `--ingest-accounts` accounts,
    /// library and HTTP, against a set-based floor and the single debit.
    Ingest,
    /// The operator console's pages on a big database (`--ledger-entries` entries of one
    /// account, `--queued-jobs` queued jobs in one lane): p50/p95/max per page. Not in `all`.
    Console,
    /// All of the above but `console` and `seed`.
    All,
    /// Only the setup of `--accounts` accounts (`b0`…, topped up) and `ANALYZE` on the
    /// `--database` given, nothing measured: for `bench/pgbench.sh`. Not in `all`.
    Seed,
}

/// holdfast bench: each engine path against its raw-SQL floor.
#[derive(Parser, Debug)]
#[command(name = "holdfast-bench")]
struct Args {
    /// Workloads to run, in order.
    #[arg(value_enum, required = true)]
    workloads: Vec<Workload>,
    /// Use this database (created and migrated if needed; never dropped). Default: a fresh
    /// database per workload, dropped after.
    #[arg(long)]
    database: Option<String>,
    /// Backend of the fresh database when `--database` is not given.
    #[arg(long, value_enum, default_value = "postgres")]
    backend: Backend,
    /// PostgreSQL to create fresh databases on (loopback only).
    #[arg(
        long,
        env = "HOLDFAST_TEST_POSTGRES",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    admin_url: String,
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Measured seconds per side (engine, floor) of each workload.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Accounts the random workloads spread over.
    #[arg(long, default_value_t = 1000)]
    accounts: u64,
    /// Slices per side; engine and floor alternate (ABBA) so drift in the machine's load
    /// hits both.
    #[arg(long, default_value_t = 4)]
    rounds: u32,
    /// Unmeasured warm-up per side, in seconds.
    #[arg(long, default_value_t = 1)]
    warmup: u64,
    /// Expired jobs the sweep workload creates for each side.
    #[arg(long, default_value_t = 20_000)]
    sweep_jobs: i64,
    /// Debits per call of the `ingest` workload (1 to 1000).
    #[arg(long, default_value_t = 100)]
    ingest_batch: usize,
    /// Accounts the `ingest` workload spreads its debits over (instead of `--accounts`).
    #[arg(long, default_value_t = 10_000)]
    ingest_accounts: u64,
    /// SQLite only: `full` (the engine's default: every commit synced) or `normal`; the
    /// floor uses the same.
    #[arg(long, default_value = "full", value_parser = ["full", "normal"])]
    sqlite_synchronous: String,
    /// `console`: ledger entries of the big account.
    #[arg(long, default_value_t = 1_000_000)]
    ledger_entries: i64,
    /// `console`: queued jobs in its lane.
    #[arg(long, default_value_t = 100_000)]
    queued_jobs: i64,
    /// `console`: timed requests per page (one at a time).
    #[arg(long, default_value_t = 30)]
    page_requests: usize,
    /// `console`: unmeasured requests per page before the timed ones.
    #[arg(long, default_value_t = 3)]
    page_warmup: usize,
    /// Runs of each workload, one after another (each on a fresh database unless
    /// `--database`); with more than one, every ratio is also given across the runs
    /// (each run's value, min, median, max).
    #[arg(long, default_value_t = 1)]
    runs: u32,
    /// Credit blocks each account gets at setup (priorities 10, 20, …, each expiring a
    /// year later than the one before, each large enough that a run never empties it),
    /// beside its general money: the engine then draws every debit from its blocks.
    #[arg(long, default_value_t = 0)]
    blocks: u64,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Debit commit streams of the engine on PostgreSQL (`BatchOptions::postgres_streams`,
    /// as `holdfast serve --debit-lanes`); default: the engine's (2).
    #[arg(long)]
    debit_streams: Option<u64>,
    /// Most debits one batch applies (`BatchOptions::max_batch`); default 64, 1 turns
    /// debit batching off.
    #[arg(long)]
    debit_batch_max: Option<usize>,
    /// Submit commit streams of the engine on PostgreSQL (its submit batcher's
    /// `BatchOptions::postgres_streams`; `holdfast serve` uses `--debit-lanes`); default 2.
    #[arg(long)]
    submit_streams: Option<u64>,
    /// Most submits one batch applies (`holdfast serve --submit-batch-max`); default 64,
    /// 1 turns submit batching off.
    #[arg(long)]
    submit_batch_max: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Side {
    name: String,
    #[serde(flatten)]
    summary: Summary,
}

#[derive(Debug, Serialize)]
struct Outcome {
    workload: Workload,
    backend: Backend,
    sides: Vec<Side>,
    /// engine / floor throughput.
    ratio: Option<f64>,
    /// engine / floor CPU per operation (bench process + database server).
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_ratio: Option<f64>,
    note: Option<String>,
    /// The ratios the workload gives, by name (`engine / floor`, `library / single`, …):
    /// what `--runs` spreads.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    ratios: BTreeMap<String, f64>,
    /// Resident set of the whole bench process (server + clients) at the end, MB.
    rss_mb: Option<f64>,
    /// `console`: each page's timings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pages: Vec<console::PageTiming>,
}

#[derive(Debug, Serialize)]
struct Report {
    machine: Machine,
    clients: usize,
    seconds: u64,
    accounts: u64,
    rounds: u32,
    runs: u32,
    results: Vec<Outcome>,
    /// With `--runs` over 1: each ratio across the runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    spreads: Vec<spread::Spread>,
}

#[derive(Debug, Serialize)]
struct Machine {
    nproc: usize,
    memory_mb: u64,
    postgres: Option<String>,
    load_before: String,
    load_after: String,
}

fn read_loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn proc_status_kb(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn memory_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb / 1024)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("holdfast-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workloads `args` names, `all` expanded in its order.
fn workloads(args: &Args) -> Vec<Workload> {
    let mut list: Vec<Workload> = Vec::new();
    for w in &args.workloads {
        if *w == Workload::All {
            list.extend([
                Workload::Debit,
                Workload::DebitHot,
                Workload::Lifecycle,
                Workload::HttpLifecycle,
                Workload::LifecycleBatched,
                Workload::Sweep,
                Workload::Ingest,
            ]);
        } else {
            list.push(*w);
        }
    }
    list
}

fn check_ranges(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.clients >= 1 && args.clients <= 256,
        "--clients: 1 to 256"
    );
    anyhow::ensure!(
        args.seconds >= 1 && args.seconds <= 3600,
        "--seconds: 1 to 3600"
    );
    anyhow::ensure!(args.rounds >= 1 && args.rounds <= 100, "--rounds: 1 to 100");
    anyhow::ensure!(args.runs >= 1 && args.runs <= 20, "--runs: 1 to 20");
    anyhow::ensure!(
        args.debit_streams.is_none_or(|n| (1..=64).contains(&n)),
        "--debit-streams: 1 to 64"
    );
    anyhow::ensure!(
        args.accounts >= 1 && args.accounts <= 1_000_000,
        "--accounts: 1 to 1000000"
    );
    anyhow::ensure!(
        args.sweep_jobs >= 1 && args.sweep_jobs <= 1_000_000,
        "--sweep-jobs: 1 to 1000000"
    );
    anyhow::ensure!(
        args.ingest_batch >= 1 && args.ingest_batch <= 1000,
        "--ingest-batch: 1 to 1000"
    );
    anyhow::ensure!(
        args.ingest_accounts >= 1 && args.ingest_accounts <= 1_000_000,
        "--ingest-accounts: 1 to 1000000"
    );
    anyhow::ensure!(
        args.ledger_entries >= 10 && args.ledger_entries <= 10_000_000,
        "--ledger-entries: 10 to 10000000"
    );
    anyhow::ensure!(
        args.queued_jobs >= 2 && args.queued_jobs <= 10_000_000,
        "--queued-jobs: 2 to 10000000"
    );
    anyhow::ensure!(
        args.page_requests >= 1 && args.page_requests <= 10_000 && args.page_warmup <= 1000,
        "--page-requests: 1 to 10000; --page-warmup: 0 to 1000"
    );
    Ok(())
}

async fn run(args: Args) -> anyhow::Result<()> {
    let list = workloads(&args);
    check_ranges(&args)?;
    anyhow::ensure!(
        args.database.is_some() || !list.contains(&Workload::Seed),
        "seed: name the database to seed with --database"
    );
    anyhow::ensure!(
        args.runs == 1 || !list.contains(&Workload::Seed),
        "seed: seeds once (--runs 1)"
    );
    let load_before = read_loadavg();
    let (results, postgres) = run_all(&args, list).await?;
    let spreads = spread::spreads(&results);
    if !args.json {
        spread::print(&spreads);
    }
    let report = Report {
        machine: Machine {
            nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_mb: memory_mb(),
            postgres,
            load_before,
            load_after: read_loadavg(),
        },
        clients: args.clients,
        seconds: args.seconds,
        accounts: args.accounts,
        rounds: args.rounds,
        runs: args.runs,
        results,
        spreads,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "\nnproc {}  memory {} MB  postgres {}  load {} -> {}",
            report.machine.nproc,
            report.machine.memory_mb,
            report.machine.postgres.as_deref().unwrap_or("-"),
            report.machine.load_before,
            report.machine.load_after
        );
    }
    Ok(())
}

/// Runs each workload of `list` `--runs` times in a row, each on its target; the
/// outcomes, with the PostgreSQL server's version where one ran.
async fn run_all(
    args: &Args,
    list: Vec<Workload>,
) -> anyhow::Result<(Vec<Outcome>, Option<String>)> {
    let mut results = Vec::new();
    let mut postgres = None;
    let runs = list
        .into_iter()
        .flat_map(|w| std::iter::repeat_n(w, args.runs as usize));
    for w in runs {
        let target = match &args.database {
            Some(url) => Target::given(url)?,
            None => Target::fresh(args.backend, &args.admin_url).await?,
        };
        if target.backend == Backend::Postgres && postgres.is_none() {
            postgres = server_version(&target.url).await.ok();
        }
        let outcome = run_workload(args, w, &target).await;
        let cleaned = target.cleanup().await;
        let mut outcome = outcome?;
        cleaned.context("dropping the bench database")?;
        if let Some(r) = outcome.ratio {
            outcome.ratios.insert("engine / floor".to_owned(), r);
        }
        if let Some(r) = outcome.cpu_ratio {
            outcome.ratios.insert("cpu: engine / floor".to_owned(), r);
        }
        if !args.json {
            print_outcome(&outcome);
        }
        results.push(outcome);
    }
    Ok((results, postgres))
}

async fn server_version(url: &str) -> anyhow::Result<String> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let v: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&mut conn)
        .await?;
    Ok(v)
}

async fn open_engine(url: &str, clients: usize, sync: SqliteSync) -> anyhow::Result<Engine> {
    let opts = PoolOptions {
        max_connections: u32::try_from(clients + 2)?,
        sqlite_synchronous: sync,
        ..PoolOptions::default()
    };
    Ok(Engine::open_with(url, RateCard::builtin(), &opts).await?)
}

/// Runs the sides of a closed-loop workload in alternating slices (ABBA order).
async fn interleave(args: &Args, probe: &CpuProbe, sides: &[(String, Op)]) -> Vec<Sample> {
    let slice = Duration::from_secs_f64(args.seconds as f64 / f64::from(args.rounds));
    for (_, op) in sides {
        closed_loop(op.clone(), args.clients, Duration::from_secs(args.warmup)).await;
    }
    let mut samples = vec![Sample::default(); sides.len()];
    for round in 0..args.rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..sides.len()).collect()
        } else {
            (0..sides.len()).rev().collect()
        };
        for i in order {
            let before = probe.mark().await;
            let mut s = closed_loop(sides[i].1.clone(), args.clients, slice).await;
            s.cpu = before.until(&probe.mark().await);
            samples[i].merge(s);
        }
    }
    samples
}

fn outcome(
    w: Workload,
    backend: Backend,
    sides: &[(String, Op)],
    samples: Vec<Sample>,
    unit: &'static str,
) -> Outcome {
    let sides: Vec<Side> = sides
        .iter()
        .zip(samples)
        .map(|((name, _), s)| Side {
            name: name.clone(),
            summary: s.summary(unit),
        })
        .collect();
    let floor = sides.last().map_or(0.0, |s| s.summary.per_second);
    let engine = sides.first().map_or(0.0, |s| s.summary.per_second);
    let mut ratios = BTreeMap::new();
    // The engine's own statements without the engine, where a workload runs them.
    if let Some(sql) = sides.iter().find(|s| s.name == "engine-sql") {
        let sql = sql.summary.per_second;
        ratios.insert("engine / engine-sql".to_owned(), over(engine, sql));
        ratios.insert("engine-sql / floor".to_owned(), over(sql, floor));
    }
    Outcome {
        workload: w,
        backend,
        ratio: (floor > 0.0).then(|| engine / floor),
        cpu_ratio: cpu_ratio(&sides),
        sides,
        note: None,
        ratios,
        rss_mb: None,
        pages: Vec::new(),
    }
}

/// `x / y`, or 0 where `y` is not positive (a side that ran nothing).
fn over(x: f64, y: f64) -> f64 {
    if y > 0.0 { x / y } else { 0.0 }
}

/// The first side's CPU per operation over the last's (engine over floor).
fn cpu_ratio(sides: &[Side]) -> Option<f64> {
    let engine = sides.first()?.summary.cpu.total_us_per_op;
    let floor = sides.last()?.summary.cpu.total_us_per_op;
    (engine > 0.0 && floor > 0.0).then(|| engine / floor)
}

async fn run_workload(args: &Args, w: Workload, target: &Target) -> anyhow::Result<Outcome> {
    if w == Workload::Console {
        return console::run(args, target).await;
    }
    let (probe, probe_note) = match target.backend {
        Backend::Postgres => CpuProbe::postgres(&target.url).await,
        Backend::Sqlite => (CpuProbe::process_only(), None),
    };
    let sync = SqliteSync::parse(&args.sqlite_synchronous).unwrap_or_default();
    let engine = with_batching(args, open_engine(&target.url, args.clients, sync).await?);
    let floor = FloorPool::connect(&target.url, u32::try_from(args.clients)?, sync).await?;
    let names = Names::new();
    let accounts = match w {
        Workload::DebitHot => 1,
        Workload::Ingest => args.ingest_accounts,
        _ => args.accounts,
    };
    workloads::create_accounts(&engine, accounts, args.blocks, &names).await?;
    floor.analyze().await?;
    let result = match w {
        Workload::Seed => Ok(seeded(w, target.backend, accounts)),
        Workload::Debit | Workload::DebitHot | Workload::Lifecycle => {
            let (sides, unit) = closed_loop_sides(w, &engine, &floor, accounts, &names);
            let samples = interleave(args, &probe, &sides).await;
            Ok(outcome(w, target.backend, &sides, samples, unit))
        }
        Workload::HttpLifecycle => {
            http_lifecycle(
                args,
                &probe,
                &engine,
                &floor,
                accounts,
                &names,
                target.backend,
            )
            .await
        }
        Workload::LifecycleBatched => {
            lifecycle_batched(args, &probe, &engine, accounts, &names, target.backend).await
        }
        Workload::Sweep => sweep(args, &probe, &engine, &floor, &names, target.backend).await,
        Workload::Ingest => {
            let ctx = (&probe, &engine, &floor, &names);
            ingest(args, ctx, accounts, target.backend).await
        }
        Workload::All | Workload::Console => unreachable!("expanded or run before"),
    };
    floor.close().await;
    engine.close().await?;
    result.map(|mut out| {
        if let Some(why) = probe_note {
            let note = out
                .note
                .take()
                .map_or(why.clone(), |n| format!("{n}; {why}"));
            out.note = Some(note);
        }
        out
    })
}

/// The sides of `debit`, `debit-hot` (engine, engine with a job ref, floor; `debit` on
/// PostgreSQL also the engine's statements without the engine) and `lifecycle` (engine,
/// floor), and the unit of their operations.
fn closed_loop_sides(
    w: Workload,
    engine: &Engine,
    floor: &FloorPool,
    accounts: u64,
    names: &Arc<Names>,
) -> (Vec<(String, Op)>, &'static str) {
    if w == Workload::Lifecycle {
        let sides = vec![
            (
                "engine".to_owned(),
                workloads::engine_lifecycle(engine, accounts, names),
            ),
            (
                "floor".to_owned(),
                workloads::floor_lifecycle(floor, accounts, names),
            ),
        ];
        return (sides, "lifecycles");
    }
    let mut sides = vec![
        (
            "engine".to_owned(),
            workloads::engine_debit(engine, accounts, names, false),
        ),
        (
            "engine-job-ref".to_owned(),
            workloads::engine_debit(engine, accounts, names, true),
        ),
        (
            "floor".to_owned(),
            workloads::floor_debit(floor, accounts, names, false),
        ),
    ];
    if w == Workload::Debit && matches!(floor, FloorPool::Postgres(_)) {
        // The engine's statements without the engine (PostgreSQL only: SQLite's money
        // write is four statements in one call, whose rows the engine reads its own way).
        let sql = workloads::floor_debit(floor, accounts, names, true);
        // Before the floor, which stays last (the ratios divide by the last side).
        sides.insert(sides.len() - 1, ("engine-sql".to_owned(), sql));
    }
    (sides, "debits")
}

fn seeded(w: Workload, backend: Backend, accounts: u64) -> Outcome {
    Outcome {
        workload: w,
        backend,
        sides: Vec::new(),
        ratio: None,
        cpu_ratio: None,
        note: Some(format!("seeded {accounts} accounts b0… and ran ANALYZE")),
        ratios: BTreeMap::new(),
        rss_mb: None,
        pages: Vec::new(),
    }
}

/// The HTTP server on the bench's engine, on 127.0.0.1:0 with an admin key of its own
/// and no passes: the server, its base URL and the key.
async fn start_server(
    engine: &Engine,
) -> anyhow::Result<(holdfast_server::http::Server, String, String)> {
    use holdfast_server::http;
    let key = format!("bench{}", uuid::Uuid::new_v4().simple());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let opts = http::ServerOptions {
        admin_key: Some(key.clone()),
        run_passes: false,
        ..http::ServerOptions::default()
    };
    let server = http::start(engine.clone(), listener, opts).await?;
    let base = format!("http://{}", server.addr());
    Ok((server, base, key))
}

async fn http_lifecycle(
    args: &Args,
    probe: &CpuProbe,
    engine: &Engine,
    floor: &FloorPool,
    accounts: u64,
    names: &Arc<Names>,
    backend: Backend,
) -> anyhow::Result<Outcome> {
    let (server, base, key) = start_server(engine).await?;
    let sides = vec![
        (
            "http".to_owned(),
            workloads::http_lifecycle(&base, &key, accounts, names)?,
        ),
        (
            "engine".to_owned(),
            workloads::engine_lifecycle(engine, accounts, names),
        ),
        (
            "floor".to_owned(),
            workloads::floor_lifecycle(floor, accounts, names),
        ),
    ];
    let samples = interleave(args, probe, &sides).await;
    let rss = proc_status_kb("VmHWM:").map(|kb| kb as f64 / 1024.0);
    server.shutdown().await?;
    let mut out = outcome(
        Workload::HttpLifecycle,
        backend,
        &sides,
        samples,
        "lifecycles",
    );
    let http = over(
        out.sides[0].summary.per_second,
        out.sides[1].summary.per_second,
    );
    out.ratios.insert("http / engine".to_owned(), http);
    out.note = Some(format!(
        "http / engine (library) = {http:.2}; rss = peak of the whole bench process (server + clients)"
    ));
    out.rss_mb = rss;
    Ok(out)
}

/// The engine with the batching settings the flags give (the engine's own by default).
fn with_batching(args: &Args, mut engine: Engine) -> Engine {
    let default = holdfast::batch::BatchOptions::default();
    if args.debit_streams.is_some() || args.debit_batch_max.is_some() {
        engine = engine.with_batching(holdfast::batch::BatchOptions {
            postgres_streams: args.debit_streams.unwrap_or(default.postgres_streams),
            max_batch: args.debit_batch_max.unwrap_or(default.max_batch),
        });
    }
    if args.submit_streams.is_some() || args.submit_batch_max.is_some() {
        engine = engine.with_submit_batching(holdfast::batch::BatchOptions {
            postgres_streams: args.submit_streams.unwrap_or(default.postgres_streams),
            max_batch: args.submit_batch_max.unwrap_or(default.max_batch),
        });
    }
    engine
}

/// `lifecycle-batched`: the library and HTTP batched lifecycles (50 jobs per call) and the
/// single engine lifecycle, interleaved; the note compares them in jobs per second.
async fn lifecycle_batched(
    args: &Args,
    probe: &CpuProbe,
    engine: &Engine,
    accounts: u64,
    names: &Arc<Names>,
    backend: Backend,
) -> anyhow::Result<Outcome> {
    let (server, base, key) = start_server(engine).await?;
    let sides = vec![
        (
            "engine-batched".to_owned(),
            batched::engine_lifecycle_batched(engine, accounts, names),
        ),
        (
            "http-batched".to_owned(),
            batched::http_lifecycle_batched(&base, &key, accounts, names)?,
        ),
        (
            "single".to_owned(),
            workloads::engine_lifecycle(engine, accounts, names),
        ),
    ];
    let samples = interleave(args, probe, &sides).await;
    server.shutdown().await?;
    let audit = engine.audit().await?;
    let unit = "calls (of 50 jobs; single: jobs)";
    let mut out = outcome(Workload::LifecycleBatched, backend, &sides, samples, unit);
    out.ratio = None;
    out.cpu_ratio = None;
    let per_op = batched::JOBS_PER_OP as f64;
    let rate = |i: usize| out.sides[i].summary.per_second;
    let (lib, web, single) = (rate(0) * per_op, rate(1) * per_op, rate(2));
    let (batched, http) = (over(lib, single), over(web, single));
    out.ratios.insert("batched / single".to_owned(), batched);
    out.ratios.insert("http-batched / single".to_owned(), http);
    out.note = Some(format!(
        "jobs/s: engine-batched {lib:.0}, http-batched {web:.0}, single {single:.0}; batched / \
         single = {batched:.2}, http-batched / single = {http:.2}; audit after: {}",
        verdict(&audit)
    ));
    Ok(out)
}

/// Batch ingest: the engine (library) and HTTP calls of `--ingest-batch` debits against
/// the set-based floor, with the single debit path as a fourth side for the speed-up.
async fn ingest(
    args: &Args,
    (probe, engine, floor, names): (&CpuProbe, &Engine, &FloorPool, &Arc<Names>),
    accounts: u64,
    backend: Backend,
) -> anyhow::Result<Outcome> {
    let batch = args.ingest_batch;
    let (server, base, key) = start_server(engine).await?;
    let mut sides = vec![
        (
            "engine".to_owned(),
            workloads::engine_ingest(engine, accounts, batch, names),
        ),
        (
            "http".to_owned(),
            workloads::http_ingest(&base, &key, accounts, batch, names)?,
        ),
        (
            "single".to_owned(),
            workloads::engine_debit(engine, accounts, names, false),
        ),
        (
            "floor".to_owned(),
            workloads::floor_ingest(floor, accounts, batch, names, false),
        ),
    ];
    if matches!(floor, FloorPool::Postgres(_)) {
        // The engine's statements without the engine, before the floor (which stays
        // last: the ratios divide by the last side). PostgreSQL only, as for `debit`.
        let sql = workloads::floor_ingest(floor, accounts, batch, names, true);
        sides.insert(sides.len() - 1, ("engine-sql".to_owned(), sql));
    }
    let samples = interleave(args, probe, &sides).await;
    server.shutdown().await?;
    let audit = engine.audit().await?;
    let unit = "calls (of --ingest-batch debits; single: debits)";
    let mut out = outcome(Workload::Ingest, backend, &sides, samples, unit);
    let rates = ingest_ratios(&mut out, batch, accounts);
    out.note = Some(format!("{rates}; audit after: {}", verdict(&audit)));
    Ok(out)
}

/// The ratios of an ingest (into `out.ratios`), and the note's words for them.
fn ingest_ratios(out: &mut Outcome, batch: usize, accounts: u64) -> String {
    let rate = |i: usize| out.sides[i].summary.per_second;
    let (lib, web, single) = (rate(0) * batch as f64, rate(1) * batch as f64, rate(2));
    let (lib_single, web_single) = (over(lib, single), over(web, single));
    let statements = (
        out.ratios.get("engine / engine-sql"),
        out.ratios.get("engine-sql / floor"),
    );
    let mut note = match statements {
        (Some(engine), Some(sql)) => {
            format!("engine / engine-sql = {engine:.2}, engine-sql / floor = {sql:.2}; ")
        }
        _ => String::new(),
    };
    note += &format!(
        "{batch} debits per call over {accounts} accounts: library {lib:.0} debits/s, http \
         {web:.0} debits/s, single debit {single:.0}/s; library / single = {lib_single:.1}, \
         http / single = {web_single:.1}"
    );
    out.ratios.insert("library / single".to_owned(), lib_single);
    out.ratios.insert("http / single".to_owned(), web_single);
    note
}

/// The audit's verdict as the notes give it.
fn verdict<V>(audit: &[V]) -> String {
    if audit.is_empty() {
        "clean".to_owned()
    } else {
        format!("{} VIOLATIONS", audit.len())
    }
}

async fn sweep(
    args: &Args,
    probe: &CpuProbe,
    engine: &Engine,
    floor: &FloorPool,
    names: &Arc<Names>,
    backend: Backend,
) -> anyhow::Result<Outcome> {
    let per_round = (args.sweep_jobs / i64::from(args.rounds)).max(1);
    let accounts = i64::try_from(args.accounts)?;
    let mut e = Sample::default();
    let mut f = Sample::default();
    for round in 0..args.rounds {
        for side in [round % 2, 1 - round % 2] {
            floor
                .seed_expired_jobs(&names.tag(), per_round, accounts)
                .await?;
            let before = probe.mark().await;
            let mut s = if side == 0 {
                workloads::engine_sweep(engine).await?
            } else {
                workloads::floor_sweep(floor).await?
            };
            s.cpu = before.until(&probe.mark().await);
            if side == 0 { e.merge(s) } else { f.merge(s) }
        }
    }
    let audit = engine.audit().await?;
    let sides = [("engine".to_owned(), e), ("floor".to_owned(), f)];
    let summaries: Vec<Side> = sides
        .into_iter()
        .map(|(name, s)| Side {
            name,
            summary: s.summary("jobs (latency per chunk of 100)"),
        })
        .collect();
    let (engine_rate, floor_rate) = (
        summaries[0].summary.per_second,
        summaries[1].summary.per_second,
    );
    Ok(Outcome {
        workload: Workload::Sweep,
        backend,
        ratio: (floor_rate > 0.0).then(|| engine_rate / floor_rate),
        cpu_ratio: cpu_ratio(&summaries),
        sides: summaries,
        note: Some(format!(
            "{} jobs per side; audit after: {}",
            per_round * i64::from(args.rounds),
            verdict(&audit)
        )),
        ratios: BTreeMap::new(),
        rss_mb: None,
        pages: Vec::new(),
    })
}

/// A workload's or backend's name as the command line spells it.
fn kebab(v: &impl Serialize) -> String {
    let v = serde_json::to_value(v).ok();
    v.as_ref()
        .and_then(|v| v.as_str())
        .unwrap_or("?")
        .to_owned()
}

fn print_outcome(o: &Outcome) {
    println!("\n== {} on {} ==", kebab(&o.workload), kebab(&o.backend));
    if !o.pages.is_empty() {
        console::print_pages(&o.pages);
    }
    if !o.sides.is_empty() {
        print_sides(o);
    }
    if let Some(r) = o.ratio {
        println!("ratio = engine / floor = {r:.2}");
    }
    if let Some(r) = o.cpu_ratio {
        println!("cpu per op: engine / floor = {r:.2}");
    }
    if let Some(n) = &o.note {
        println!("{n}");
    }
    // The named ratios that the lines above do not give (debit's engine-sql ones).
    let said = o.note.as_deref().unwrap_or("");
    let more: Vec<String> = o
        .ratios
        .iter()
        .filter(|(name, _)| !name.ends_with("engine / floor") && !said.contains(name.as_str()))
        .map(|(name, r)| format!("{name} = {r:.2}"))
        .collect();
    if !more.is_empty() {
        println!("{}", more.join(", "));
    }
    if let Some(rss) = o.rss_mb {
        println!("rss peak = {rss:.1} MB");
    }
}

fn print_sides(o: &Outcome) {
    println!(
        "{:<14} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6}  unit",
        "side",
        "ops",
        "errors",
        "per_s",
        "p50_ms",
        "p99_ms",
        "max_ms",
        "cpu_cli",
        "cpu_db",
        "cpu_all",
        "cores"
    );
    for s in &o.sides {
        let m = &s.summary;
        let db = m
            .cpu
            .server_us_per_op
            .map_or_else(|| "-".to_owned(), |us| format!("{us:.0}"));
        println!(
            "{:<14} {:>9} {:>7} {:>8.0} {:>8.2} {:>8.2} {:>8.2} {:>8.0} {:>8} {:>8.0} {:>6.2}  {}",
            s.name,
            m.ops,
            m.errors,
            m.per_second,
            m.p50_ms,
            m.p99_ms,
            m.max_ms,
            m.cpu.client_us_per_op,
            db,
            m.cpu.total_us_per_op,
            m.cpu.cores_busy,
            m.unit
        );
        if let Some(e) = &m.first_error {
            println!("         first error: {e}");
        }
        if m.slices_per_second.len() > 1 {
            let rates: Vec<String> = m
                .slices_per_second
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect();
            println!("{:<14} per slice /s: {}", "", rates.join(" "));
        }
    }
    println!(
        "cpu_cli / cpu_db / cpu_all: µs of CPU per op of the bench process, the PostgreSQL \
         server, both; cores: their CPU seconds per second"
    );
}
