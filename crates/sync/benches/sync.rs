//! `just bench`'s figures for aggpay-sync: a 1,000,000-transaction batch
//! from a local mock into SQLite, by the release binary. The figures are
//! added to `target/bench.json` (written first by the conformance bench).

use std::process::Command;
use std::time::Instant;

use aggpay_mock::{MockConfig, MockServer};
use serde_json::Value;

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
    let dir = std::env::temp_dir().join(format!("aggpay-sync-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.join("bench.db");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_aggpay-sync"))
        .args(["--db", &db.display().to_string(), "--json", "--quiet"])
        .env("AGGPAY_BASE_URL", server.url())
        .env("AGGPAY_SECRET_KEY", server.secret_key().expose())
        .env("AGGPAY_AGGREGATOR_ID", server.aggregator_id().as_str())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("summary: {e}"));
    let rows = summary["transactions"]["total"].as_f64().unwrap_or(0.0);
    assert!((1_000_000.0..1_000_100.0).contains(&rows), "{summary}");
    let figures = [
        ("sync_1m_rows_per_s", rows / seconds, ">= 100000"),
        (
            "sync_1m_peak_rss_mb",
            summary["peak_rss_mb"].as_f64().unwrap_or(f64::NAN),
            "< 64",
        ),
        ("sync_1m_seconds", seconds, "(whole process)"),
    ];
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
