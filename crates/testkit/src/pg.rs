//! A real PostgreSQL server for a test: a new cluster in a temporary
//! folder, on a free loopback port, started with the server binaries of
//! the machine (Debian's `postgresql` package) and stopped when dropped.
//! Never a mock: what the sync tool writes, a real server checks.
//!
//! `initdb` refuses to run as root: as root, the cluster is made and run
//! as the `postgres` user (or `nobody`) through `runuser`.
//!
//! A test binary shares one cluster among its tests ([`PgCluster::shared`]),
//! each test in databases of its own ([`PgCluster::fresh`]): making a
//! cluster costs a second or two of `initdb`, a database a few
//! milliseconds. The shared cluster outlives the statics that hold it, so
//! a small watcher process stops it and removes its folder once the test
//! binary has exited, however it exits.
//!
//! Where the binaries cannot be found or the server does not start, the
//! test fails saying how to install them. `AGGPAY_SKIP_POSTGRES=1` skips
//! the PostgreSQL tests on purpose (and says so on stderr): the one
//! opt-out, documented in the README (Development).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::TempDir;

/// The variable that skips the PostgreSQL tests on purpose.
pub const SKIP_POSTGRES: &str = "AGGPAY_SKIP_POSTGRES";

/// How to get the server when it is missing.
const INSTALL: &str = "install Debian's PostgreSQL server (`apt-get install -y postgresql`), or point AGGPAY_PG_BIN at a folder with initdb and pg_ctl; to skip these tests on purpose, set AGGPAY_SKIP_POSTGRES=1";

/// A running PostgreSQL cluster, stopped and removed when dropped.
#[derive(Debug)]
pub struct PgCluster {
    dir: TempDir,
    data: PathBuf,
    bin: PathBuf,
    port: u16,
    user: Option<String>,
}

/// The folder of the server binaries: `AGGPAY_PG_BIN`, then `pg_config`'s,
/// then the newest `/usr/lib/postgresql/*/bin`, then the `PATH`.
fn bin_dir() -> Option<PathBuf> {
    let has = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Some(dir) = std::env::var_os("AGGPAY_PG_BIN").map(PathBuf::from) {
        return has(&dir).then_some(dir);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has(&dir) {
            return Some(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let dir = e.path().join("bin");
            has(&dir).then_some((version, dir))
        })
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.pop() {
        return Some(dir);
    }
    std::env::var_os("PATH").and_then(|path| std::env::split_paths(&path).find(|d| has(d)))
}

/// The effective user id (`id -u`), without a libc binding.
fn euid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The uid and gid of `user`.
fn ids(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, user]).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
            .flatten()
    };
    Some((id("-u")?, id("-g")?))
}

/// A free loopback port (free when asked; the server takes it next).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Whether the PostgreSQL tests are skipped on purpose; says so on stderr
/// (for every test skipped: nothing skips silently).
fn skipped() -> bool {
    let skip = std::env::var_os(SKIP_POSTGRES).is_some_and(|v| !v.is_empty() && v != "0");
    if skip {
        eprintln!("PostgreSQL test skipped: {SKIP_POSTGRES} is set");
    }
    skip
}

fn shown(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

impl PgCluster {
    /// Starts a cluster; `None` (said on stderr) when `AGGPAY_SKIP_POSTGRES`
    /// is set. Panics, saying how to install the server, when it cannot
    /// be started.
    pub fn start() -> Option<Self> {
        (!skipped()).then(Self::make)
    }

    /// Makes and starts a cluster; panics, saying how to install the
    /// server, when it cannot.
    fn make() -> Self {
        let bin = bin_dir().unwrap_or_else(|| {
            panic!("PostgreSQL server binaries (initdb, pg_ctl) not found: {INSTALL}")
        });
        let dir = TempDir::new("aggpay-pg");
        let data = dir.join("data");
        std::fs::create_dir_all(&data).expect("a data folder");
        // initdb refuses root: the cluster belongs to an unprivileged user.
        let user = (euid() == Some(0)).then(|| {
            ["postgres", "nobody"]
                .into_iter()
                .find(|u| ids(u).is_some())
                .unwrap_or_else(|| panic!("running as root and no `postgres` or `nobody` user to run PostgreSQL as: {INSTALL}"))
                .to_owned()
        });
        if let Some((uid, gid)) = user.as_deref().and_then(ids) {
            for path in [dir.path(), data.as_path()] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown the cluster");
            }
        }
        let mut cluster = Self {
            dir,
            data,
            bin,
            port: 0,
            user,
        };
        let out = cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data.display().to_string(),
                "-U",
                "aggpay",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed ({}): {INSTALL}",
            shown(&out)
        );
        // A port taken between the question and the start: another.
        let mut attempt = 0;
        loop {
            attempt += 1;
            cluster.port = free_port();
            let log = cluster.dir.join("server.log");
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=100",
                cluster.port,
                cluster.data.display()
            );
            let out = cluster.run(
                "pg_ctl",
                &[
                    "-D",
                    &cluster.data.display().to_string(),
                    "-o",
                    &options,
                    "-l",
                    &log.display().to_string(),
                    "-w",
                    "-t",
                    "30",
                    "start",
                ],
            );
            if out.status.success() {
                return cluster;
            }
            let logged = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                attempt < 3,
                "PostgreSQL did not start ({}; its log: {logged}): {INSTALL}",
                shown(&out)
            );
        }
    }

    /// The cluster of this test process: started by the first test that
    /// asks (and asked for again by the next one if that failed), shared
    /// by every test of the process, stopped and removed after the process
    /// exits. `None` when `AGGPAY_SKIP_POSTGRES` is set, as
    /// [`PgCluster::start`].
    pub fn shared() -> Option<&'static PgCluster> {
        static SHARED: OnceLock<PgCluster> = OnceLock::new();
        if skipped() {
            return None;
        }
        Some(SHARED.get_or_init(|| {
            let cluster = Self::make();
            cluster.stop_after_exit();
            cluster
        }))
    }

    /// A database name no other test of this process has: `base_N`. Tests
    /// sharing a cluster each make their databases under such names.
    pub fn fresh(&self, base: &str) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        format!("{base}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// Starts the watcher that stops the cluster (immediately: nothing in
    /// it is kept) and removes its folder once this process has exited:
    /// a static is never dropped. Its output goes nowhere, so that no
    /// reader of this process's output waits for it.
    fn stop_after_exit(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let mut stop: Vec<String> = Vec::new();
        if let Some(user) = &self.user {
            stop.extend(["runuser".into(), "-u".into(), user.clone(), "--".into()]);
        }
        stop.push(pg_ctl.display().to_string());
        stop.extend(["-D".into(), self.data.display().to_string()]);
        stop.extend(["-m", "immediate", "-w", "-t", "30", "stop"].map(String::from));
        let watched = Command::new("sh")
            .arg("-c")
            .arg(
                r#"pid=$1 dir=$2; shift 2
                while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
                "$@"; rm -rf "$dir""#,
            )
            .arg("aggpay-pg-watcher")
            .arg(std::process::id().to_string())
            .arg(self.dir.path())
            .args(&stop)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Err(e) = watched {
            panic!("cannot start the watcher that stops the shared cluster: {e}");
        }
    }

    /// Runs a server binary, as the cluster's user.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut cmd = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}: {INSTALL}", path.display()))
    }

    /// CPU seconds the server has used so far: its postmaster, the
    /// backends that ended (waited for by it) and the processes still
    /// running (backends, checkpointer, writers); `None` where `/proc`
    /// does not tell.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        crate::tree_cpu_seconds(pid.lines().next()?.trim().parse().ok()?)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` (trust authentication: no password).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://aggpay@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates database `name`; its URL.
    pub fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url(name)
    }

    /// Makes database `name` ask for a password (SCRAM) from now on: the
    /// cluster's user gets `password`, and loopback connections to `name`
    /// must give it (the others stay trusted).
    pub fn require_password(&self, name: &str, password: &str) {
        self.sql(
            "postgres",
            &format!(
                "ALTER ROLE aggpay PASSWORD '{}'",
                password.replace('\'', "''")
            ),
        );
        let hba = self.data.join("pg_hba.conf");
        let rules = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        let first = format!("host {name} all 127.0.0.1/32 scram-sha-256\n");
        std::fs::write(&hba, first + &rules).expect("write pg_hba.conf");
        self.sql("postgres", "SELECT pg_reload_conf()");
    }

    /// Runs SQL in database `db` with `psql`; its output (unaligned,
    /// tuples only).
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let started = Instant::now();
        loop {
            let out = Command::new(self.bin.join("psql"))
                .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
                .arg(self.url(db))
                .args(["-c", sql])
                .output()
                .expect("run psql");
            if out.status.success() {
                return String::from_utf8_lossy(&out.stdout).trim().to_owned();
            }
            // The server may still be coming up; other errors are final.
            let text = shown(&out);
            assert!(
                text.contains("starting up") && started.elapsed() < Duration::from_secs(20),
                "psql failed on {sql:?}: {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data.display().to_string(),
                "-m",
                "immediate",
                "-w",
                "-t",
                "30",
                "stop",
            ],
        );
    }
}
