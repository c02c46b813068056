//! A private PostgreSQL cluster for the fault and restore tests (crash.rs,
//! restore_drill.rs): `initdb` under a temporary directory, started on a free loopback
//! port with PostgreSQL's own binaries (as the `postgres` OS user when the tests run as
//! root), stopped immediately on drop; and a new cluster made from a base backup of a
//! running one (`pg_basebackup -X stream`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use super::faults::{
    as_postgres, connect_within, free_port, in_ci, postgres_bindir, postgres_temp_dir, postmaster,
    signal,
};

/// A PostgreSQL cluster of its own under a temporary directory, on a free loopback port;
/// stopped (immediately) on drop.
pub struct Cluster {
    dir: tempfile::TempDir,
    bindir: PathBuf,
    as_postgres: bool,
    port: u16,
}

impl Cluster {
    /// `initdb` and start, with a database `holdfast`; or `None` without PostgreSQL's
    /// binaries (outside CI).
    pub async fn new() -> Option<Cluster> {
        let Some(bindir) = postgres_bindir().filter(|b| b.join("initdb").is_file()) else {
            assert!(
                !in_ci(),
                "PostgreSQL's server binaries (initdb, pg_ctl) are required under CI"
            );
            eprintln!(
                "\n*** initdb/pg_ctl not found under /usr/lib/postgresql \
                 (apt-get install postgresql-15)\n*** SKIPPING this PostgreSQL test\n"
            );
            return None;
        };
        let cluster = Cluster::unstarted(bindir);
        let data = cluster.data();
        cluster.run(
            "initdb",
            &["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync"],
        );
        cluster.start();
        let mut conn = connect_within(&cluster.url("postgres"), Duration::from_secs(30)).await;
        sqlx::raw_sql("CREATE DATABASE holdfast")
            .execute(&mut conn)
            .await
            .unwrap();
        Some(cluster)
    }

    /// A new temporary directory and port, nothing in the data directory yet.
    fn unstarted(bindir: PathBuf) -> Cluster {
        let (dir, as_postgres) = postgres_temp_dir();
        Cluster {
            dir,
            bindir,
            as_postgres,
            port: free_port(),
        }
    }

    /// A new cluster (its own directory and port, not started) from a base backup of
    /// this running one: `pg_basebackup -X stream` (the WAL written while it copies is
    /// streamed alongside, so the copy is consistent by itself), checked with
    /// `pg_verifybackup`. Blocks until both are done.
    pub fn base_backup(&self) -> Cluster {
        let copy = Cluster::unstarted(self.bindir.clone());
        let port = self.port.to_string();
        let data = copy.data();
        copy.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &data,
                "-X",
                "stream",
                "-c",
                "fast",
            ],
        );
        copy.run("pg_verifybackup", &[&data]);
        copy
    }

    pub fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{db}?sslmode=disable",
            self.port
        )
    }

    /// Runs a PostgreSQL program (as `postgres` when root) to its end.
    pub fn run(&self, program: &str, args: &[&str]) {
        let out = as_postgres(&self.bindir.join(program), self.as_postgres)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect(program);
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `pg_ctl start`, waiting until it accepts connections (fsync on, as in production).
    pub fn start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=on",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log").display().to_string();
        let data = self.data();
        self.run(
            "pg_ctl",
            &["start", "-D", &data, "-l", &log, "-w", "-o", &options],
        );
    }

    /// `pg_ctl stop -m immediate`: every server process quits at once, no checkpoint;
    /// the next start recovers from the WAL, as after a crash.
    pub fn stop_immediately(&self) {
        let data = self.data();
        self.run("pg_ctl", &["stop", "-D", &data, "-m", "immediate", "-w"]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = as_postgres(&self.bindir.join("pg_ctl"), self.as_postgres)
            .args(["stop", "-D", &data, "-m", "immediate", "-w"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(pid) = postmaster(&data) {
            signal("KILL", &pid);
        }
    }
}
