//! A big database for the console workload, written with set-based SQL behind the
//! engine's back (both dialects): account `big` with `--ledger-entries` ledger entries and
//! 1,000 accounts `acct-1000` … `acct-1999` sharing `--queued-jobs` queued jobs in lane
//! `video`, plus finished jobs, events and webhook deliveries, so every console page reads
//! real rows. Everything it writes keeps the invariants `Engine::audit` checks.

use crate::floor::{FloorPool, JOB_HOLD, JOB_MICROS, now_micros};

/// The account with the long ledger.
pub const BIG: &str = "big";
/// Accounts the queued jobs are spread over (besides `big`): `acct-1000` … `acct-1999`.
const OTHERS: i64 = 1000;
/// The id prefix every other account shares (what the accounts page searches for).
pub const OTHERS_PREFIX: &str = "acct-1";
/// The lane of every loaded job.
pub const LANE: &str = "video";
/// Failed, expired and canceled jobs in the last hour (for the overview's charts).
const ENDED_OTHERWISE: i64 = 3000;
/// The endpoint of the loaded webhook deliveries, and how many of the newest events have one.
const ENDPOINT: &str = "https://hooks.example/holdfast";
const DELIVERIES: i64 = 5000;
const SECOND: i64 = 1_000_000;
/// The charge of one of `big`'s video jobs (of its 0.50 hold), micros.
const CHARGE_MICROS: i64 = 400_000;

/// What was loaded, for the requests and the report.
pub struct Loaded {
    pub ledger_entries: i64,
    pub queued_jobs: i64,
    /// An entry id halfway down `big`'s ledger (an older page starts there).
    pub middle_entry: i64,
    /// A queued job in the middle of the lane.
    pub queued_job: String,
    pub rows: i64,
}

/// `WITH RECURSIVE` rows 0..n (BIGINT) named `col`, for both dialects.
fn numbers(name: &str, col: &str, n: i64) -> String {
    format!(
        "{name}({col}) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT {col} + 1 FROM {name} WHERE {col} < {last})",
        last = n - 1
    )
}

/// Loads the database (migrated, empty) `pool` is on, `entries` ledger entries of `big`
/// one second apart ending now, and `queued` queued jobs 50 ms apart ending now.
pub async fn load(pool: &FloorPool, entries: i64, queued: i64) -> anyhow::Result<Loaded> {
    let now = now_micros();
    let start = now - entries * SECOND;
    accounts(pool, start - 86_400 * SECOND, now).await?;
    big_ledger(pool, entries, start).await?;
    other_top_ups(pool, entries, start).await?;
    keys_and_charged_jobs(pool).await?;
    queued_jobs(pool, queued, now - queued * 50_000).await?;
    ended_jobs(pool, now).await?;
    counters(pool).await?;
    events_and_deliveries(pool).await?;
    if let FloorPool::Postgres(_) = pool {
        pool.execute("SELECT setval(pg_get_serial_sequence('ledger', 'entry_id'), (SELECT max(entry_id) FROM ledger))")
            .await?;
    }
    let mut rows = 0;
    for t in [
        "accounts",
        "ledger",
        "idempotency",
        "jobs",
        "events",
        "webhook_deliveries",
    ] {
        rows += pool.scalar(&format!("SELECT count(*) FROM {t}")).await?;
    }
    Ok(Loaded {
        ledger_entries: entries,
        queued_jobs: queued,
        middle_entry: entries / 2,
        queued_job: format!("q-{}", queued / 2),
        rows,
    })
}

/// The columns of a loaded ledger entry (ids given: `big`'s first, the others' after).
/// Every row is written whole, once, in entry (and time) order, as the engine appends
/// the ledger: its keys too (a later UPDATE would move most rows and scatter the table's
/// time order, which the usage reports' BRIN index reads).
const LEDGER_ROWS: &str = "INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, \
     amount_after, available_after, buffer, ref, created_at, actor, idempotency_key, request_hash, \
     meter, seconds)";

fn overriding(pool: &FloorPool) -> &'static str {
    match pool {
        FloorPool::Postgres(_) => "OVERRIDING SYSTEM VALUE",
        FloorPool::Sqlite(_) => "",
    }
}

async fn accounts(pool: &FloorPool, created: i64, now: i64) -> anyhow::Result<()> {
    let series = numbers("other", "a", OTHERS);
    pool.execute(&format!(
        "INSERT INTO accounts (account_id, plan, max_concurrent_jobs, created_at, last_active_at) \
         WITH RECURSIVE {series} \
         SELECT '{BIG}', 'free', 1000000, {created}, {now} \
         UNION ALL SELECT 'acct-' || (1000 + a), 'free', 1000000, {created}, {now} FROM other"
    ))
    .await?;
    Ok(())
}

/// `big`'s ledger: a top-up of 100.00 first, then in every ten entries a top-up of 1.00,
/// seven debits of 0.01 (100 s of `linux-small`; every seventh naming a runner's job) and
/// two captures of 0.40 (each the charge of a video job), each entry's amount after it the
/// running sum.
async fn big_ledger(pool: &FloorPool, entries: i64, start: i64) -> anyhow::Result<()> {
    let series = numbers("position", "i", entries);
    pool.execute(&format!(
        "{LEDGER_ROWS} {over} \
         WITH RECURSIVE {series}, \
         shaped AS ( \
           SELECT i, \
                  CASE WHEN i % 10 = 0 THEN 'top_up' WHEN i % 10 < 8 THEN 'debit' ELSE 'capture' END AS kind, \
                  CASE WHEN i = 0 THEN 100000000 WHEN i % 10 = 0 THEN 1000000 \
                       WHEN i % 10 < 8 THEN -10000 ELSE -{CHARGE_MICROS} END AS delta \
           FROM position), \
         running AS (SELECT i, kind, delta, CAST(SUM(delta) OVER (ORDER BY i) AS BIGINT) AS after FROM shaped) \
         SELECT i + 1, '{BIG}', 'money', delta, kind, after, after, 1000000, \
                CASE WHEN kind = 'capture' THEN 'big-job-' || i WHEN i % 10 = 7 THEN 'run-' || (i / 10) END, \
                {start} + i * {SECOND}, 'library', \
                CASE WHEN kind = 'capture' THEN NULL ELSE 'load-' || (i + 1) END, \
                CASE WHEN kind = 'capture' THEN NULL ELSE 'loaded' END, \
                CASE WHEN kind = 'debit' THEN 'linux-small' END, \
                CASE WHEN kind = 'debit' THEN 100 END \
         FROM running",
        over = overriding(pool)
    ))
    .await?;
    Ok(())
}

/// A top-up of 1,000.00 for each other account, after `big`'s entries.
async fn other_top_ups(pool: &FloorPool, entries: i64, start: i64) -> anyhow::Result<()> {
    let series = numbers("other", "a", OTHERS);
    pool.execute(&format!(
        "{LEDGER_ROWS} {over} \
         WITH RECURSIVE {series} \
         SELECT {entries} + 1 + a, 'acct-' || (1000 + a), 'money', 1000000000, 'top_up', 1000000000, \
                1000000000, 1000000, NULL, {start} + a, 'library', \
                'load-' || ({entries} + 1 + a), 'loaded', NULL, NULL FROM other",
        over = overriding(pool)
    ))
    .await?;
    Ok(())
}

/// The succeeded job each capture
/// charged (submitted 40 s, leased 30 s before it).
async fn keys_and_charged_jobs(pool: &FloorPool) -> anyhow::Result<()> {
    let charged = format!(r#"[{{"pocket":"money","amount":{CHARGE_MICROS}}}]"#);
    pool.execute(&format!(
        "INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, charged, created_at, queued_since, \
                           started_at, finished_at, notice_at, noticed, worker_id, finished_by, \
                           limit_at_submit, open_at_submit, currency, submitted_by_actor, \
                           leased_by_actor, finished_by_actor) \
         SELECT ref, account_id, '{LANE}', '{LANE}', 'succeeded', '{JOB_HOLD}', '{charged}', \
                created_at - 40 * {SECOND}, created_at - 40 * {SECOND}, created_at - 30 * {SECOND}, \
                created_at, created_at - 35 * {SECOND}, 1, 'worker-1', 'complete', 1000000, 0, 'USD', \
                'library', 'library', 'library' \
         FROM ledger WHERE kind = 'capture'"
    ))
    .await?;
    Ok(())
}

/// `queued` jobs in lane `video` from `first` on, 50 ms apart: one in a hundred `big`'s,
/// the rest spread over the other accounts; each waited long enough for its notice.
async fn queued_jobs(pool: &FloorPool, queued: i64, first: i64) -> anyhow::Result<()> {
    let series = numbers("waiting", "k", queued);
    pool.execute(&format!(
        "INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, created_at, queued_since, \
                           notice_at, noticed, limit_at_submit, open_at_submit, currency, \
                           submitted_by_actor) \
         WITH RECURSIVE {series} \
         SELECT 'q-' || k, CASE WHEN k % 100 = 0 THEN '{BIG}' ELSE 'acct-' || (1000 + k % {OTHERS}) END, \
                '{LANE}', '{LANE}', 'queued', '{JOB_HOLD}', {first} + k * 50000, {first} + k * 50000, \
                {first} + k * 50000 + 5 * {SECOND}, 1, 1000000, 0, 'USD', 'library' \
         FROM waiting"
    ))
    .await?;
    Ok(())
}

/// Jobs of the other accounts that failed, expired or were canceled (before a lease) in
/// the last hour, one a second, uncharged.
async fn ended_jobs(pool: &FloorPool, now: i64) -> anyhow::Result<()> {
    let series = numbers("ended", "f", ENDED_OTHERWISE);
    pool.execute(&format!(
        "INSERT INTO jobs (job_id, account_id, kind, lane, status, hold, created_at, queued_since, \
                           started_at, finished_at, notice_at, noticed, finished_by, failure_reason, \
                           limit_at_submit, open_at_submit, currency, submitted_by_actor, \
                           finished_by_actor) \
         WITH RECURSIVE {series}, \
         stamped AS (SELECT f, {now} - ({ENDED_OTHERWISE} - f) * {SECOND} AS at FROM ended) \
         SELECT 'f-' || f, 'acct-' || (1000 + f % {OTHERS}), '{LANE}', '{LANE}', \
                CASE f % 3 WHEN 0 THEN 'failed' WHEN 1 THEN 'expired' ELSE 'canceled' END, '{JOB_HOLD}', \
                at - 60 * {SECOND}, at - 60 * {SECOND}, \
                CASE WHEN f % 3 = 2 THEN NULL ELSE at - 30 * {SECOND} END, at, at - 55 * {SECOND}, 1, \
                CASE f % 3 WHEN 0 THEN 'fail' WHEN 1 THEN 'sweep' ELSE 'cancel' END, \
                CASE WHEN f % 3 = 0 THEN 'loaded: the worker reported a failure' END, \
                1000000, 0, 'USD', 'library', 'library' \
         FROM stamped"
    ))
    .await?;
    Ok(())
}

/// Each account's balance, credited and spent from its ledger, and its held money from its
/// open jobs.
async fn counters(pool: &FloorPool) -> anyhow::Result<()> {
    pool.execute(&format!(
        "UPDATE accounts SET \
           balance = (SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE ledger.account_id = accounts.account_id), \
           total_credited = (SELECT COALESCE(SUM(delta), 0) FROM ledger \
                              WHERE ledger.account_id = accounts.account_id AND kind = 'top_up'), \
           total_spent = (SELECT COALESCE(-SUM(delta), 0) FROM ledger \
                           WHERE ledger.account_id = accounts.account_id AND kind <> 'top_up'), \
           held = {JOB_MICROS} * (SELECT count(*) FROM jobs \
                                   WHERE jobs.account_id = accounts.account_id AND status = 'queued')"
    ))
    .await?;
    Ok(())
}

/// An event for every finished job (`job.<status>`) and every queued one (`job.waiting`,
/// its notice), in time order; a delivery to one endpoint for each of the newest 5,000
/// (the newest 50 pending, one in 97 dead, the rest delivered).
async fn events_and_deliveries(pool: &FloorPool) -> anyhow::Result<()> {
    pool.execute(
        "INSERT INTO events (type, account_id, job_id, data, created_at, actor) \
         SELECT type, account_id, job_id, '{}', at, actor FROM ( \
           SELECT 'job.' || status AS type, account_id, job_id, finished_at AS at, 'library' AS actor \
           FROM jobs WHERE finished_at IS NOT NULL \
           UNION ALL \
           SELECT 'job.waiting', account_id, job_id, notice_at, 'system:notices' \
           FROM jobs WHERE status = 'queued') AS made \
         ORDER BY at",
    )
    .await?;
    let last = pool.scalar("SELECT max(event_id) FROM events").await?;
    pool.execute(&format!(
        "INSERT INTO webhook_deliveries (event_id, endpoint, account_id, status, attempts, \
                                         next_attempt_at, last_error, created_at, finished_at) \
         SELECT event_id, '{ENDPOINT}', account_id, \
                CASE WHEN event_id > {last} - 50 THEN 'pending' WHEN event_id % 97 = 0 THEN 'dead' \
                     ELSE 'delivered' END, \
                CASE WHEN event_id > {last} - 50 THEN 0 WHEN event_id % 97 = 0 THEN 12 ELSE 1 END, \
                created_at, \
                CASE WHEN event_id % 97 = 0 AND event_id <= {last} - 50 THEN 'HTTP 500 from the endpoint' END, \
                created_at, \
                CASE WHEN event_id > {last} - 50 THEN NULL ELSE created_at + 200000 END \
         FROM events WHERE event_id > {last} - {DELIVERIES} ORDER BY event_id"
    ))
    .await?;
    Ok(())
}
