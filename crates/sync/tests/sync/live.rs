//! Live data: between runs a batch arrives, others move on and fill, a
//! refund arrives and an earlier one completes. Each incremental run ends
//! with the mirror a fresh full sync would make, on either backend, and
//! its summary counts exactly what changed.

use std::collections::BTreeMap;

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::{PgCluster, TempDir};

use crate::support::{Db, sync};

fn live() -> MockServer {
    MockServer::start(
        MockConfig::new()
            .seed(13)
            .batches(8)
            .max_batch_transactions(150)
            .live(true),
    )
    .unwrap()
}

fn statuses(db: &Db, table: &str) -> BTreeMap<String, String> {
    db.rows(&format!("SELECT token, status FROM {table}"))
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect()
}

#[test]
fn incremental_runs_pick_up_exactly_the_new_and_changed_rows() {
    let dir = TempDir::new("aggpay-sync-live");
    steps(&live(), &|name| Db::sqlite(dir.join(&format!("{name}.db"))));
    if let Some(pg) = PgCluster::shared() {
        let server = live();
        steps(&server, &|name| Db::pg(pg, name, &server));
    }
}

/// What a step's fresh mirror held: batch statuses, the transactions,
/// refund statuses.
struct Held {
    batches: BTreeMap<String, String>,
    transactions: i64,
    refunds: BTreeMap<String, String>,
}

/// Six steps of live data, an incremental mirror against a fresh one at
/// each; `db` makes a new mirror of a name.
fn steps(server: &MockServer, db: &dyn Fn(&str) -> Db) {
    let incremental = db("incremental");
    let mut previous: Option<Held> = None;
    let mut completed_refunds = 0;
    for step in 0..6 {
        if step > 0 {
            server.advance(1);
        }
        let (code, summary, err) = sync(server, &incremental);
        assert_eq!(code, 0, "step {step}: {err}");
        let fresh = db(&format!("fresh{step}"));
        let (code, _, err) = sync(server, &fresh);
        assert_eq!(code, 0, "step {step}: {err}");
        assert_eq!(incremental.dump(), fresh.dump(), "step {step}");

        let now = statuses(&fresh, "batches");
        let refunds = statuses(&fresh, "refunds");
        let transactions = fresh.scalar("SELECT count(*) FROM transactions");
        if let Some(Held {
            batches: before,
            transactions: before_transactions,
            refunds: before_refunds,
        }) = &previous
        {
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
            assert_eq!(summary["refunds"]["new"], 1, "one refund arrives a step");
            completed_refunds += refunds
                .iter()
                .filter(|(t, s)| {
                    before_refunds.get(*t).is_some_and(|b| b != *s) && *s == "R_COMPLETED"
                })
                .count();
        }
        previous = Some(Held {
            batches: now,
            transactions,
            refunds,
        });
    }
    assert!(
        completed_refunds >= 2,
        "refunds that completed between runs were mirrored ({completed_refunds})"
    );
}
