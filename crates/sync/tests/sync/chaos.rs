//! Patience: a 300,000-row batch synced through a flaky server (5% 503,
//! 5% 429, 2% resets) ends with exit 0 and the mirror a clean sync makes.
//! (`just bench` runs it ten times: `sync_chaos_clean_exits`.)

use std::time::Duration;

use aggpay_mock::{Chaos, MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{Db, sync};

fn config() -> MockConfig {
    MockConfig::new()
        .seed(44)
        .batches(4)
        .max_batch_transactions(10)
        .large_batch_transactions(300_000)
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
    assert!(summary["retries"].as_u64().unwrap() > 100, "{summary}");
    assert_eq!(
        summary["transactions"]["total"].as_u64().unwrap() as i64,
        clean.scalar("SELECT count(*) FROM transactions")
    );
    assert_eq!(db.dump(), clean.dump());
}
