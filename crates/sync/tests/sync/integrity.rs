//! A server whose count does not match its rows: an integrity error,
//! reported and recorded, and the batch walked again by the next run.

use aggpay_mock::{MockConfig, MockServer};
use serde_json::Value;

use crate::support::{Db, command, finish, on_both, proxy, sync};

/// One transaction too many in every transaction list's count.
fn one_more(target: &str, _: &mut u16, body: &mut Value) {
    if target.contains("/transactions")
        && !target.contains("only_settlement_txns=true")
        && let Some(n) = body["data"]["count"]["filtered_count"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
    {
        body["data"]["count"]["filtered_count"] = Value::from((n + 1).to_string());
    }
}

#[test]
fn a_count_mismatch_is_an_integrity_error_and_the_next_run_repairs_it() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(8)
            .batches(6)
            .max_batch_transactions(40),
    )
    .unwrap();
    on_both("aggpay-sync-integrity", &server, |db| mismatch(&server, db));
}

fn mismatch(server: &MockServer, db: &Db) {
    let lying = proxy(server, one_more);
    let out = command(server, db)
        .env("AGGPAY_BASE_URL", lying.url())
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 1, "{err}");
    let errors = summary["integrity_errors"].as_array().unwrap();
    assert!(!errors.is_empty(), "{summary}");
    assert!(err.contains("integrity error"), "{err}");
    assert!(
        errors[0].as_str().unwrap().contains("the server counts"),
        "{summary}"
    );
    assert_eq!(
        db.scalar("SELECT count(*) FROM integrity_errors") as usize,
        errors.len()
    );
    assert!(db.unverified_final_batches() > 0);
    // The honest server: the same data, walked again and verified.
    let (code, summary, err) = sync(server, db);
    assert_eq!(code, 0, "{err}\n{summary}");
    assert_eq!(db.unverified_final_batches(), 0);
}
