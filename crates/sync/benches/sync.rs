//! `just bench`'s figures for aggpay-sync, by the release binary: a
//! 1,000,000-transaction batch from a local mock into SQLite and into a
//! local PostgreSQL (a cluster started for the bench), and ten syncs of a
//! 300,000-row batch through a flaky server. The figures are added to
//! `target/bench.json` (written first by the conformance bench).

use std::process::Command;
use std::time::{Duration, Instant};

use aggpay_mock::{Chaos, MockConfig, MockServer};
use aggpay_testkit::{PgCluster, TempDir};
use serde_json::Value;

/// A figure: its name, value (NaN when not measured) and goal.
type Figure = (&'static str, f64, &'static str);

/// One sync of `server` into `db`: seconds, exit code, summary.
fn sync(server: &MockServer, db: &str) -> (f64, i32, Value) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_aggpay-sync"))
        .args(["--db", db, "--json", "--quiet"])
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
fn million(server: &MockServer, db: &str, names: [&'static str; 3]) -> [Figure; 3] {
    let (seconds, code, summary) = sync(server, db);
    assert_eq!(code, 0, "{summary}");
    let rows = summary["transactions"]["total"].as_f64().unwrap_or(0.0);
    assert!((1_000_000.0..1_000_100.0).contains(&rows), "{summary}");
    [
        (names[0], rows / seconds, ">= 100000"),
        (
            names[1],
            summary["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
            "< 64",
        ),
        (names[2], seconds, "(whole process)"),
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
    let mut figures = million(
        &server,
        &dir.join("bench.db").display().to_string(),
        [
            "sync_1m_rows_per_s",
            "sync_1m_peak_rss_mb",
            "sync_1m_seconds",
        ],
    )
    .to_vec();
    let pg_names = [
        "sync_1m_pg_rows_per_s",
        "sync_1m_pg_peak_rss_mb",
        "sync_1m_pg_seconds",
    ];
    match PgCluster::start() {
        Some(pg) => figures.extend(million(&server, &pg.database("bench"), pg_names)),
        None => figures.extend(pg_names.map(|name| (name, f64::NAN, "(skipped)"))),
    }
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
