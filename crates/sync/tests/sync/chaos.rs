//! Patience: a large batch synced through a flaky server (5% 503, 5% 429,
//! 2% resets) ends with exit 0 and the mirror a clean sync makes. 40,000
//! rows are walked from both ends (as every batch of 5,000 rows or more)
//! through some fifty mishaps, each end's walk stopped and resumed many
//! times: what the scenario proves, at a tenth of the bench's size
//! (`just bench` syncs 300,000 rows so ten times: `sync_chaos_clean_exits`).

use std::time::Duration;

use aggpay_mock::{Chaos, MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{Db, sync};

fn config() -> MockConfig {
    MockConfig::new()
        .seed(44)
        .batches(4)
        .max_batch_transactions(10)
        .large_batch_transactions(40_000)
}

#[test]
fn a_large_batch_through_a_flaky_server_is_mirrored_whole() {
    let dir = TempDir::new("aggpay-sync-chaos");
    let clean = Db::sqlite(dir.join("clean.db"));
    let (code, _, err) = sync(&MockServer::start(config()).unwrap(), &clean);
    assert_eq!(code, 0, "{err}");
    // Retry-After 0: the test does not wait out a second per 429.
    let chaos: Chaos = "503=0.05,429=0.05,reset=0.02".parse().unwrap();
    let flaky = MockServer::start(config().chaos(chaos.retry_after(Duration::ZERO))).unwrap();
    let db = Db::sqlite(dir.join("flaky.db"));
    let (code, summary, err) = sync(&flaky, &db);
    assert_eq!(code, 0, "{err}\n{summary}");
    assert!(summary["retries"].as_u64().unwrap() > 20, "{summary}");
    assert_eq!(
        summary["transactions"]["total"].as_u64().unwrap() as i64,
        clean.scalar("SELECT count(*) FROM transactions")
    );
    assert_eq!(db.dump(), clean.dump());
}
