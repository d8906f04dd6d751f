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

/// CPU seconds (user and system) used so far by this process (the mock
/// serves from it) and by its waited-for children (the syncs), from
/// `/proc/self/stat` in clock ticks of 1/100 s (Linux's `USER_HZ`); NaN
/// where there is no such file.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // The fields after the command name, which is in parentheses and may
    // hold spaces: utime, stime, cutime and cstime are fields 14 to 17.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|t| t.parse::<f64>().unwrap_or(f64::NAN))
        .sum::<f64>()
        / 100.0
}

/// Runs `work`: what it returns, and the CPU seconds it cost this process
/// and its children.
fn with_cpu<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let before = cpu_seconds();
    let value = work();
    (value, cpu_seconds() - before)
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
fn cpu_bound(sync_cpu: f64, ceilings_cpu: [f64; 2], ceilings: [f64; 2]) -> Vec<Figure> {
    let rows = 1_000_000.0;
    let cores = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
    let both = ceilings_cpu[0] + ceilings_cpu[1];
    let lower = rows / ceilings[0].min(ceilings[1]);
    vec![
        ("sync_1m_cpu_seconds", sync_cpu, "(sync and mock)"),
        ("sync_1m_ceilings_cpu_seconds", both, "(the two ceilings')"),
        (
            "sync_1m_ratio_bound",
            lower / lower.max(both / cores),
            "(best ratio these cores allow)",
        ),
    ]
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
    let ((sqlite, sqlite_rate), sqlite_cpu) = with_cpu(|| {
        million(
            &server,
            &dir.join("bench.db").display().to_string(),
            [
                "sync_1m_rows_per_s",
                "sync_1m_peak_rss_mb",
                "sync_1m_seconds",
            ],
        )
    });
    let mut figures = sqlite.to_vec();
    let (network, network_cpu) = with_cpu(|| network_ceiling(&server));
    let (store, store_cpu) =
        with_cpu(|| store_ceiling(&server, &Target::Sqlite(dir.join("ceiling.db")), 1_000_000));
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
        ("sync_1m_ratio", sqlite_rate / network.min(store), ">= 0.9"),
    ]);
    figures.extend(cpu_bound(
        sqlite_cpu,
        [network_cpu, store_cpu],
        [network, store],
    ));
    let pg_names = [
        "sync_1m_pg_rows_per_s",
        "sync_1m_pg_peak_rss_mb",
        "sync_1m_pg_seconds",
    ];
    match PgCluster::start() {
        Some(pg) => {
            let (figs, pg_rate) = million(&server, &pg.database("bench"), pg_names);
            figures.extend(figs);
            let store = store_ceiling(&server, &Target::parse(&pg.database("ceiling")), 1_000_000);
            figures.extend([
                (
                    "sync_1m_pg_store_ceiling_rows_per_s",
                    store,
                    "(same rows, no network)",
                ),
                ("sync_1m_pg_ratio", pg_rate / network.min(store), ">= 0.85"),
            ]);
        }
        None => figures.extend(
            pg_names
                .into_iter()
                .chain(["sync_1m_pg_store_ceiling_rows_per_s", "sync_1m_pg_ratio"])
                .map(|name| (name, f64::NAN, "(skipped: no PostgreSQL)")),
        ),
    }
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
