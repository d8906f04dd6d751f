//! `just bench`'s figures for aggpay-sync, by the release binary: a
//! 1,000,000-transaction batch from a local mock into SQLite and into a
//! local PostgreSQL (a cluster started for the bench), each held to its
//! two ceilings measured in the same run (`aggpay_sync::ceiling`: the
//! same walks with the rows dropped, the same rows written with no
//! network); 40 batches behind a 50 ms round trip walked side by side
//! and one by one; and ten syncs of a 300,000-row batch through a flaky
//! server. The figures are added to `target/bench.json` (written first by
//! the conformance bench).

use std::process::Command;
use std::time::{Duration, Instant};

use aggpay::{BatchQuery, Client, Direction, TransactionQuery};
use aggpay_mock::{Chaos, Latency, MockConfig, MockServer};
use aggpay_sync::Target;
use aggpay_testkit::{PgCluster, TempDir};
use serde_json::Value;

/// A figure: its name, value (NaN when not measured) and goal.
type Figure = (&'static str, f64, &'static str);

/// CPU seconds used so far by this process (the mock serves from it), its
/// waited-for children (the syncs) and, given one, a PostgreSQL server;
/// NaN where `/proc` does not tell.
fn cpu_seconds(pg: Option<&PgCluster>) -> f64 {
    let server = pg.map_or(Some(0.0), PgCluster::cpu_seconds);
    match (aggpay_testkit::cpu_seconds(std::process::id()), server) {
        (Some(ours), Some(server)) => ours + server,
        _ => f64::NAN,
    }
}

/// Runs `work`: what it returns, and the CPU seconds it cost this process,
/// its children and the PostgreSQL server `pg`.
fn with_cpu<T>(pg: Option<&PgCluster>, work: impl FnOnce() -> T) -> (T, f64) {
    let before = cpu_seconds(pg);
    let value = work();
    (value, cpu_seconds(pg) - before)
}

/// One sync of `server` into `db`: seconds, exit code, summary.
fn sync(server: &MockServer, db: &str) -> (f64, i32, Value) {
    sync_with(server, db, &[])
}

/// One sync of `server` into `db` with more arguments.
fn sync_with(server: &MockServer, db: &str, more: &[&str]) -> (f64, i32, Value) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_aggpay-sync"))
        .args(["--db", db, "--json", "--quiet"])
        .args(more)
        .env("AGGPAY_BASE_URL", server.url())
        .env("AGGPAY_SECRET_KEY", server.secret_key().expose())
        .env("AGGPAY_AGGREGATOR_ID", server.aggregator_id().as_str())
        .env_remove("AGGPAY_SYNC_DB")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let seconds = started.elapsed().as_secs_f64();
    let summary = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let code = out.status.code().unwrap_or(-1);
    if code != 0 {
        eprintln!(
            "exit {code}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    (seconds, code, summary)
}

/// The 1,000,000-row batch into `db`: rows per second, peak RSS, seconds.
fn million(server: &MockServer, db: &str, names: [&'static str; 3]) -> ([Figure; 3], f64) {
    let (seconds, code, summary) = sync(server, db);
    assert_eq!(code, 0, "{summary}");
    let rows = summary["transactions"]["total"].as_f64().unwrap_or(0.0);
    assert!((1_000_000.0..1_000_100.0).contains(&rows), "{summary}");
    let rate = rows / seconds;
    (
        [
            (names[0], rate, "(info; held to its ceilings below)"),
            (
                names[1],
                summary["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
                "< 64",
            ),
            (names[2], seconds, "(whole process)"),
        ],
        rate,
    )
}

/// A client of `server` with the sync's patience.
fn client(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().clone(),
        server.secret_key().expose(),
    )
    .retry(aggpay_sync::retry_policy(Duration::from_secs(1800)))
    .build()
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The network ceiling: the sync's run with the rows dropped; rows a
/// second over the whole run.
fn network_ceiling(server: &MockServer) -> f64 {
    let summary =
        aggpay_sync::ceiling::network(&client(server), usize::from(aggpay_sync::DEFAULT_JOBS))
            .unwrap_or_else(|e| panic!("{e}"));
    summary.transactions_total as f64 / summary.seconds
}

/// The store ceiling of `target`: the large batch's row count, made from
/// its first page, written with no network; rows a second.
fn store_ceiling(server: &MockServer, target: &Target, rows: u64) -> f64 {
    let client = client(server);
    let batch = client
        .list_settlement_batches(&BatchQuery::new().direction(Direction::Asc).limit(1))
        .unwrap_or_else(|e| panic!("{e}"))
        .items
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no batch"));
    let page = client
        .batch_transactions(&batch.token, &TransactionQuery::new().limit(100))
        .next_page()
        .unwrap_or_else(|| panic!("no page"))
        .unwrap_or_else(|e| panic!("{e}"))
        .items;
    let took = aggpay_sync::ceiling::store(target, server.aggregator_id(), &batch, &page, rows)
        .unwrap_or_else(|e| panic!("{e}"));
    rows as f64 / took.as_secs_f64()
}

/// The same 40 batches behind a 50 ms round trip, synced with the default
/// `--jobs` and with `--jobs 1`, each into a new file: how much faster
/// side by side is.
fn side_by_side(dir: &TempDir) -> Vec<Figure> {
    let server = MockServer::start(
        // Ordinary batches of 1 to 4,000 rows (2,000 on average, one end
        // each); the round trip is the mock's latency.
        MockConfig::new()
            .seed(5)
            .batches(40)
            .max_batch_transactions(4_000)
            .latency(Latency::fixed(Duration::from_millis(50))),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = |name: &str, more: &[&str]| {
        let db = dir.join(name).display().to_string();
        let (seconds, code, summary) = sync_with(&server, &db, more);
        assert_eq!(code, 0, "{summary}");
        (
            seconds,
            summary["transactions"]["total"].as_f64().unwrap_or(0.0),
        )
    };
    let (parallel, rows) = run("jobs-default.db", &[]);
    let (serial, rows_serial) = run("jobs-1.db", &["--jobs", "1"]);
    assert_eq!(rows, rows_serial);
    vec![
        ("sync_batches_50ms_speedup", serial / parallel, ">= 4"),
        ("sync_batches_50ms_seconds", parallel, "(default --jobs)"),
        ("sync_batches_50ms_jobs1_seconds", serial, "(--jobs 1)"),
        ("sync_batches_50ms_rows", rows, "(info)"),
    ]
}

/// Ten syncs of a 300,000-row batch through 5% 503, 5% 429 and 2% resets,
/// each into a new file: how many exit 0 with every row of a clean sync.
/// Retry-After is 0 so that the figure is the retrying's, not the
/// server's asked waits (honouring them is a test of the client).
fn chaos(dir: &TempDir) -> Vec<Figure> {
    let config = || {
        MockConfig::new()
            .seed(44)
            .batches(4)
            .max_batch_transactions(10)
            .large_batch_transactions(300_000)
    };
    let clean = dir.join("clean.db").display().to_string();
    let (_, code, summary) = sync(
        &MockServer::start(config()).unwrap_or_else(|e| panic!("{e}")),
        &clean,
    );
    assert_eq!(code, 0, "{summary}");
    let rows = summary["transactions"]["total"].as_u64();
    let flaky: Chaos = "503=0.05,429=0.05,reset=0.02"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let server = MockServer::start(config().chaos(flaky.retry_after(Duration::ZERO)))
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut clean_exits, mut seconds, mut retries) = (0.0, 0.0, 0.0);
    for run in 0..10 {
        let db = dir.join(&format!("chaos-{run}.db")).display().to_string();
        let (took, code, summary) = sync(&server, &db);
        seconds += took;
        retries += summary["retries"].as_f64().unwrap_or(0.0);
        if code == 0 && summary["transactions"]["total"].as_u64() == rows {
            clean_exits += 1.0;
        }
        let _ = std::fs::remove_file(&db);
    }
    vec![
        ("sync_chaos_clean_exits", clean_exits, "= 10 (of 10)"),
        ("sync_chaos_mean_seconds", seconds / 10.0, "(300,000 rows)"),
        ("sync_chaos_mean_retries", retries / 10.0, "(per run)"),
    ]
}

/// What the machine's cores allow the SQLite sync: its CPU seconds (its
/// process and the mock's serving), the two ceilings' together, and the
/// best `sync_1m_ratio` these cores permit. A sync does the work of both
/// ceilings at once, so even with the two halves overlapping perfectly
/// it takes at least the lower ceiling's time and at least their CPU
/// seconds spread over every core.
/// A sync held to what the cores allow: it does the work of both its
/// ceilings at once, so it can take no less than the lower ceiling's time
/// nor less than their CPU seconds spread over every core. The bound is
/// the best ratio that leaves; the last figure, how much of it the sync
/// reached.
struct Bound {
    names: [&'static str; 4],
    /// The sync's ratio to its lower ceiling.
    ratio: f64,
    /// CPU seconds of the sync (with the mock's and the server's).
    sync_cpu: f64,
    /// CPU seconds of the two ceilings.
    ceilings_cpu: [f64; 2],
    /// The two ceilings, rows per second.
    ceilings: [f64; 2],
}

impl Bound {
    fn figures(&self) -> Vec<Figure> {
        let rows = 1_000_000.0;
        let cores = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
        let both = self.ceilings_cpu[0] + self.ceilings_cpu[1];
        let lower_seconds = rows / self.ceilings[0].min(self.ceilings[1]);
        let bound = lower_seconds / lower_seconds.max(both / cores);
        vec![
            (self.names[0], self.sync_cpu, "(sync, mock and server)"),
            (self.names[1], both, "(the two ceilings')"),
            (self.names[2], bound, "(best ratio these cores allow)"),
            (self.names[3], self.ratio / bound, ">= 0.9"),
        ]
    }
}

/// The 1,000,000-row batch into SQLite, held to its ceilings and its
/// bound; the figures, and the network ceiling with its CPU seconds (the
/// PostgreSQL figures share it).
fn sqlite(server: &MockServer, dir: &TempDir) -> (Vec<Figure>, (f64, f64)) {
    let ((sqlite, sqlite_rate), sqlite_cpu) = with_cpu(None, || {
        million(
            server,
            &dir.join("bench.db").display().to_string(),
            [
                "sync_1m_rows_per_s",
                "sync_1m_peak_rss_mb",
                "sync_1m_seconds",
            ],
        )
    });
    let mut figures = sqlite.to_vec();
    let (network, network_cpu) = with_cpu(None, || network_ceiling(server));
    let (store, store_cpu) = with_cpu(None, || {
        store_ceiling(server, &Target::Sqlite(dir.join("ceiling.db")), 1_000_000)
    });
    let ratio = sqlite_rate / network.min(store);
    figures.extend([
        (
            "sync_1m_network_ceiling_rows_per_s",
            network,
            "(same walks, rows dropped)",
        ),
        (
            "sync_1m_store_ceiling_rows_per_s",
            store,
            "(same rows, no network)",
        ),
        ("sync_1m_ratio", ratio, "(to the lower ceiling)"),
    ]);
    figures.extend(
        Bound {
            names: [
                "sync_1m_cpu_seconds",
                "sync_1m_ceilings_cpu_seconds",
                "sync_1m_ratio_bound",
                "sync_1m_of_bound",
            ],
            ratio,
            sync_cpu: sqlite_cpu,
            ceilings_cpu: [network_cpu, store_cpu],
            ceilings: [network, store],
        }
        .figures(),
    );
    (figures, (network, network_cpu))
}

/// The same batch into a local PostgreSQL (a cluster started here), held
/// to its store ceiling and its bound; NaN figures without PostgreSQL.
fn postgres(server: &MockServer, (network, network_cpu): (f64, f64)) -> Vec<Figure> {
    let mut figures = Vec::new();
    let pg_names = [
        "sync_1m_pg_rows_per_s",
        "sync_1m_pg_peak_rss_mb",
        "sync_1m_pg_seconds",
    ];
    let pg_bound_names = [
        "sync_1m_pg_cpu_seconds",
        "sync_1m_pg_ceilings_cpu_seconds",
        "sync_1m_pg_ratio_bound",
        "sync_1m_pg_of_bound",
    ];
    match PgCluster::start() {
        Some(pg) => {
            let ((figs, pg_rate), pg_cpu) = with_cpu(Some(&pg), || {
                million(server, &pg.database("bench"), pg_names)
            });
            figures.extend(figs);
            let target = Target::parse(&pg.database("ceiling"));
            let (store, store_cpu) =
                with_cpu(Some(&pg), || store_ceiling(server, &target, 1_000_000));
            let ratio = pg_rate / network.min(store);
            figures.extend([
                (
                    "sync_1m_pg_store_ceiling_rows_per_s",
                    store,
                    "(same rows, no network)",
                ),
                ("sync_1m_pg_ratio", ratio, "(to the lower ceiling)"),
            ]);
            figures.extend(
                Bound {
                    names: pg_bound_names,
                    ratio,
                    sync_cpu: pg_cpu,
                    ceilings_cpu: [network_cpu, store_cpu],
                    ceilings: [network, store],
                }
                .figures(),
            );
        }
        None => figures.extend(
            pg_names
                .into_iter()
                .chain(["sync_1m_pg_store_ceiling_rows_per_s", "sync_1m_pg_ratio"])
                .chain(pg_bound_names)
                .map(|name| (name, f64::NAN, "(skipped: no PostgreSQL)")),
        ),
    }
    figures
}

fn main() {
    let server = MockServer::start(
        // The large batch is the oldest completed one; the others are
        // kept tiny so that the figure is the large batch's.
        MockConfig::new()
            .batches(4)
            .max_batch_transactions(10)
            .large_batch_transactions(1_000_000),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = TempDir::new("aggpay-sync-bench");
    let (mut figures, network) = sqlite(&server, &dir);
    figures.extend(postgres(&server, network));
    figures.extend(side_by_side(&dir));
    figures.extend(chaos(&dir));
    for (name, value, target) in &figures {
        println!("{name:<38} {value:>14.3}  {target}");
    }
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/bench.json"
    ));
    let mut all: serde_json::Map<String, Value> = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    for (name, value, _) in figures {
        all.insert(
            name.to_owned(),
            serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number),
        );
    }
    match std::fs::write(
        path,
        serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default() + "\n",
    ) {
        Ok(()) => println!("\nadded to {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
