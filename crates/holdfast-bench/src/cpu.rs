//! CPU time per operation, for each side: the bench process's own user + system time
//! and, on PostgreSQL, the local server's, both read from `/proc` at the edges of every
//! measured slice. On a machine whose cores are shared by the clients and the database,
//! a throughput ratio is mostly a ratio of CPU per operation; these figures show it.
//!
//! The server's time is the postmaster's own plus that of each of its children that
//! `pg_stat_activity` lists on the bench's database or on none (backends of the bench's
//! database, its autovacuum workers, and the server's shared processes: walwriter,
//! checkpointer, background writer, launchers). Backends of other databases are left
//! out, so tests running on the same server elsewhere do not count; a backend of the
//! bench's database that exits during a slice is lost (the bench's pools keep their
//! connections for the whole workload).

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use serde::Serialize;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

/// Clock ticks per second of `/proc/<pid>/stat` (Linux's `USER_HZ`, 100 on every
/// architecture Linux runs holdfast on).
pub const TICKS_PER_SECOND: u64 = 100;

/// The fields of one `/proc/<pid>/stat` line the bench uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    /// The executable's name, as the kernel keeps it (up to 15 bytes).
    pub comm: String,
    pub parent_pid: u32,
    /// User plus system time of the process (all its threads), in clock ticks.
    pub own_ticks: u64,
    /// User plus system time of its children it waited for, in clock ticks.
    pub reaped_children_ticks: u64,
}

/// Parses one `/proc/<pid>/stat` line. The name sits in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last `)`.
pub fn parse_stat(line: &str) -> Option<ProcStat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_owned();
    // Field 3 (state) is rest[0], so field n is rest[n - 3].
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { rest.get(n - 3)?.parse().ok() };
    Some(ProcStat {
        pid,
        comm,
        parent_pid: u32::try_from(field(4)?).ok()?,
        own_ticks: field(14)?.checked_add(field(15)?)?,
        reaped_children_ticks: field(16)?.checked_add(field(17)?)?,
    })
}

fn read_stat(pid: &str) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Ticks per process of the server: the postmaster's own, and those of its children
/// whose pid is in `counted` (the processes of the bench's database and the shared ones).
pub fn server_ticks_of(
    postmaster: &ProcStat,
    processes: impl IntoIterator<Item = ProcStat>,
    counted: &HashSet<u32>,
) -> HashMap<u32, u64> {
    let mut ticks: HashMap<u32, u64> = processes
        .into_iter()
        .filter(|p| p.parent_pid == postmaster.pid && counted.contains(&p.pid))
        .map(|p| (p.pid, p.own_ticks))
        .collect();
    ticks.insert(postmaster.pid, postmaster.own_ticks);
    ticks
}

fn server_ticks(postmaster: u32, counted: &HashSet<u32>) -> Option<HashMap<u32, u64>> {
    let head = read_stat(&postmaster.to_string())?;
    let children = counted.iter().filter_map(|pid| read_stat(&pid.to_string()));
    Some(server_ticks_of(&head, children, counted))
}

/// Ticks the server's processes used from `earlier` to `later`, process by process: one
/// that started in between counts whole (all its time is in between), one that exited
/// counts nothing (its last ticks are not known).
pub fn server_ticks_between(earlier: &HashMap<u32, u64>, later: &HashMap<u32, u64>) -> u64 {
    later
        .iter()
        .map(|(pid, t)| t.saturating_sub(earlier.get(pid).copied().unwrap_or(0)))
        .fold(0, u64::saturating_add)
}

/// Microseconds of `ticks` clock ticks.
pub fn ticks_to_us(ticks: u64) -> u64 {
    ticks.saturating_mul(1_000_000 / TICKS_PER_SECOND)
}

/// Where the CPU of a slice is read from.
#[derive(Debug, Clone)]
pub struct CpuProbe {
    /// The local PostgreSQL server's postmaster, when the bench found it, and a
    /// connection to the bench's database to ask which processes are its own.
    server: Option<(u32, PgPool)>,
}

/// The processes of the bench's database and the server's shared ones.
const PROCESSES: &str = "SELECT pid FROM pg_stat_activity \
    WHERE datname = current_database() OR datname IS NULL";

/// CPU counters at one instant, in clock ticks.
#[derive(Debug, Clone)]
pub struct CpuMark {
    client_ticks: u64,
    server_ticks: Option<HashMap<u32, u64>>,
}

/// CPU used by a slice (or a sum of slices), in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// The bench process (clients, engine, in-process server, SQLite).
    pub client_us: u64,
    /// The PostgreSQL server; `None` on SQLite or when its processes are not visible.
    pub server_us: Option<u64>,
}

impl CpuTime {
    pub fn merge(&mut self, other: CpuTime) {
        self.client_us += other.client_us;
        self.server_us = match (self.server_us, other.server_us) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// The figures per operation of `ops` operations over `seconds` of wall time.
    pub fn per_op(&self, ops: u64, seconds: f64) -> CpuPerOp {
        let per_op = |us: u64| if ops > 0 { us as f64 / ops as f64 } else { 0.0 };
        let cores = |us: u64| {
            if seconds > 0.0 {
                us as f64 / 1e6 / seconds
            } else {
                0.0
            }
        };
        let total = self.client_us + self.server_us.unwrap_or(0);
        CpuPerOp {
            client_us_per_op: per_op(self.client_us),
            server_us_per_op: self.server_us.map(per_op),
            total_us_per_op: per_op(total),
            cores_busy: cores(total),
        }
    }
}

/// CPU per operation of one side.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CpuPerOp {
    /// Bench process CPU per operation, µs.
    pub client_us_per_op: f64,
    /// PostgreSQL server CPU per operation, µs (absent on SQLite: there the database
    /// runs inside the bench process and its CPU is in `client_us_per_op`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_us_per_op: Option<f64>,
    /// The two together, µs.
    pub total_us_per_op: f64,
    /// CPU of both per second of wall time: how many cores the side kept busy.
    pub cores_busy: f64,
}

impl CpuProbe {
    /// A probe of the bench process only (SQLite, or a server it cannot see).
    pub fn process_only() -> CpuProbe {
        CpuProbe { server: None }
    }

    /// Finds the server behind `url`: a backend's pid (`pg_backend_pid()`), then its
    /// parent, which must be a process named `postgres` on this machine. `None` (and
    /// the reason) when the server runs elsewhere, in another pid namespace, or /proc
    /// is not readable.
    pub async fn postgres(url: &str) -> (CpuProbe, Option<String>) {
        match find_postmaster(url).await {
            Ok(found) => (
                CpuProbe {
                    server: Some(found),
                },
                None,
            ),
            Err(e) => (
                CpuProbe::process_only(),
                Some(format!("no server CPU: {e:#}")),
            ),
        }
    }

    pub async fn mark(&self) -> CpuMark {
        let client_ticks = read_stat("self").map_or(0, |s| s.own_ticks);
        let server_ticks = match &self.server {
            Some((postmaster, pool)) => {
                let pids: Result<Vec<i32>, _> = sqlx::query_scalar(PROCESSES).fetch_all(pool).await;
                pids.ok().and_then(|pids| {
                    let counted = pids
                        .into_iter()
                        .filter_map(|p| u32::try_from(p).ok())
                        .collect();
                    server_ticks(*postmaster, &counted)
                })
            }
            None => None,
        };
        CpuMark {
            client_ticks,
            server_ticks,
        }
    }
}

impl CpuMark {
    /// The CPU used between `self` and the `later` mark.
    pub fn until(&self, later: &CpuMark) -> CpuTime {
        CpuTime {
            client_us: ticks_to_us(later.client_ticks.saturating_sub(self.client_ticks)),
            server_us: match (&self.server_ticks, &later.server_ticks) {
                (Some(a), Some(b)) => Some(ticks_to_us(server_ticks_between(a, b))),
                _ => None,
            },
        }
    }
}

/// The postmaster's pid (the parent of a backend of ours, both named `postgres` on this
/// machine) and a one-connection pool to ask `pg_stat_activity` with.
async fn find_postmaster(url: &str) -> anyhow::Result<(u32, PgPool)> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(PgConnectOptions::from_str(url)?)
        .await?;
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&pool)
        .await?;
    let stat = read_stat(&backend.to_string())
        .ok_or_else(|| anyhow::anyhow!("backend pid {backend} is not in this machine's /proc"))?;
    let parent = read_stat(&stat.parent_pid.to_string())
        .ok_or_else(|| anyhow::anyhow!("postmaster pid {} not readable", stat.parent_pid))?;
    anyhow::ensure!(
        stat.comm == "postgres" && parent.comm == "postgres",
        "pid {backend} ({}) or its parent ({}) is not a postgres process",
        stat.comm,
        parent.comm
    );
    Ok((parent.pid, pool))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKEND: &str = "2231 (postgres) S 2226 2231 2231 0 -1 4210752 137 0 0 0 \
        25 7 3 4 20 0 1 0 5410 224550912 1871 18446744073709551615 1 1 0 0 0 0 4194304 \
        19935232 536873479 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";

    #[test]
    fn parses_a_backend_line() {
        let s = parse_stat(BACKEND).expect("parses");
        assert_eq!(s.pid, 2231);
        assert_eq!(s.comm, "postgres");
        assert_eq!(s.parent_pid, 2226);
        assert_eq!(s.own_ticks, 25 + 7);
        assert_eq!(s.reaped_children_ticks, 3 + 4);
    }

    #[test]
    fn a_name_with_spaces_and_parentheses_does_not_shift_the_fields() {
        let line = BACKEND.replace("(postgres)", "(a) b (c) d)");
        let s = parse_stat(&line).expect("parses");
        assert_eq!(s.comm, "a) b (c) d");
        assert_eq!(s.parent_pid, 2226);
        assert_eq!(s.own_ticks, 32);
    }

    #[test]
    fn truncated_or_garbled_lines_are_refused() {
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("12 (x) S 1 2 3"), None);
        assert_eq!(parse_stat("x (postgres) S 1"), None);
        assert_eq!(parse_stat(") 12 (postgres"), None);
        let bad_utime = BACKEND.replace(" 25 7 ", " 2x 7 ");
        assert_eq!(parse_stat(&bad_utime), None);
    }

    #[test]
    fn this_process_reads_itself() {
        let s = read_stat("self").expect("/proc/self/stat");
        assert_eq!(s.pid, std::process::id());
    }

    fn process(pid: u32, parent_pid: u32, own_ticks: u64) -> ProcStat {
        ProcStat {
            pid,
            comm: "postgres".into(),
            parent_pid,
            own_ticks,
            reaped_children_ticks: 1_000_000,
        }
    }

    #[test]
    fn the_server_counts_the_postmaster_and_the_listed_children_only() {
        let postmaster = process(10, 1, 5);
        let processes = vec![
            process(11, 10, 100),    // a backend of ours
            process(12, 10, 1_000),  // a backend of another database: not listed
            process(13, 99, 10_000), // listed, but not a child of this postmaster
            process(14, 10, 7),      // the walwriter
        ];
        let counted: HashSet<u32> = [11, 13, 14].into_iter().collect();
        // The postmaster's own 5, not its reaped children's.
        let ticks = server_ticks_of(&postmaster, processes, &counted);
        let want: HashMap<u32, u64> = [(10, 5), (11, 100), (14, 7)].into_iter().collect();
        assert_eq!(ticks, want);
        let alone = server_ticks_of(&postmaster, vec![], &counted);
        assert_eq!(alone, [(10, 5)].into_iter().collect());
    }

    #[test]
    fn processes_that_start_or_exit_between_marks_do_not_skew_the_sum() {
        let before: HashMap<u32, u64> = [(10, 5), (11, 100), (12, 50)].into_iter().collect();
        // 11 ran 30 ticks, 12 exited (nothing known), 13 started and ran 8.
        let after: HashMap<u32, u64> = [(10, 6), (11, 130), (13, 8)].into_iter().collect();
        assert_eq!(server_ticks_between(&before, &after), 1 + 30 + 8);
        assert_eq!(server_ticks_between(&after, &after), 0);
    }

    #[test]
    fn per_op_divides_by_operations_and_cores_by_seconds() {
        let t = CpuTime {
            client_us: 3_000_000,
            server_us: Some(5_000_000),
        };
        let p = t.per_op(20_000, 4.0);
        assert_eq!(p.client_us_per_op, 150.0);
        assert_eq!(p.server_us_per_op, Some(250.0));
        assert_eq!(p.total_us_per_op, 400.0);
        assert_eq!(p.cores_busy, 2.0);
        let none = CpuTime::default().per_op(0, 0.0);
        assert_eq!(none.total_us_per_op, 0.0);
        assert_eq!(none.cores_busy, 0.0);
        assert_eq!(none.server_us_per_op, None);
    }

    #[test]
    fn marks_subtract_into_microseconds_and_slices_add_up() {
        let a = CpuMark {
            client_ticks: 100,
            server_ticks: Some([(1, 1_000)].into_iter().collect()),
        };
        let b = CpuMark {
            client_ticks: 150,
            server_ticks: Some([(1, 1_200)].into_iter().collect()),
        };
        let mut sum = a.until(&b);
        assert_eq!(sum.client_us, 500_000);
        assert_eq!(sum.server_us, Some(2_000_000));
        sum.merge(a.until(&b));
        assert_eq!(sum.client_us, 1_000_000);
        assert_eq!(sum.server_us, Some(4_000_000));
        let lost = CpuMark {
            client_ticks: 150,
            server_ticks: None,
        };
        assert_eq!(a.until(&lost).server_us, None);
        let mut from_default = CpuTime::default();
        from_default.merge(a.until(&b));
        assert_eq!(from_default.server_us, Some(2_000_000));
    }
}
