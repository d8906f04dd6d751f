//! Live data: between runs a batch arrives, others move on and fill. Each
//! incremental run ends with the mirror a fresh full sync would make,
//! and its summary counts exactly what changed.

use std::collections::BTreeMap;
use std::path::Path;

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::TempDir;
use rusqlite::Connection;

use crate::support::{dump, scalar, sync};

fn statuses(db: &Path) -> BTreeMap<String, String> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT token, status FROM batches").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn incremental_runs_pick_up_exactly_the_new_and_changed_rows() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(13)
            .batches(8)
            .max_batch_transactions(150)
            .live(true),
    )
    .unwrap();
    let dir = TempDir::new("aggpay-sync-live");
    let db = dir.join("incremental.db");
    let mut previous: Option<(BTreeMap<String, String>, i64)> = None;
    for step in 0..6 {
        if step > 0 {
            server.advance(1);
        }
        let (code, summary, err) = sync(&server, &db);
        assert_eq!(code, 0, "step {step}: {err}");
        let fresh = dir.join(&format!("fresh-{step}.db"));
        let (code, _, err) = sync(&server, &fresh);
        assert_eq!(code, 0, "step {step}: {err}");
        assert_eq!(dump(&db), dump(&fresh), "step {step}");

        let now = statuses(&fresh);
        let transactions = scalar(&fresh, "SELECT count(*) FROM transactions");
        if let Some((before, before_transactions)) = &previous {
            let new = now.keys().filter(|t| !before.contains_key(*t)).count();
            let changed = now
                .iter()
                .filter(|(t, s)| before.get(*t).is_some_and(|b| b != *s))
                .count();
            assert_eq!(new, 1, "one batch arrives a step");
            assert_eq!(summary["batches"]["new"], new as u64, "step {step}");
            assert_eq!(summary["batches"]["changed"], changed as u64, "step {step}");
            assert_eq!(
                summary["transactions"]["new"].as_i64().unwrap(),
                transactions - before_transactions,
                "step {step}"
            );
        }
        previous = Some((now, transactions));
    }
}
