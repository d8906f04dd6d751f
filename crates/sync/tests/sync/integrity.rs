//! A server whose count does not match its rows: an integrity error,
//! reported and recorded, and the batch walked again by the next run.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::{RawServer, TempDir, respond};
use serde_json::Value;

use crate::support::{command, finish, scalar, sync, unverified_final_batches};

/// A proxy to the mock that counts one transaction too many in every
/// transaction list.
fn lying_proxy(server: &MockServer) -> RawServer {
    let upstream = server.url().to_owned();
    let key = server.secret_key().expose().to_owned();
    RawServer::start(move |request, out| {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut answer = agent
            .get(format!("{upstream}{}", request.target))
            .header(aggpay::rules::KEY_HEADER, key.as_str())
            .call()
            .unwrap();
        let status = answer.status().as_u16();
        let mut body: Value =
            serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
        if request.target.contains("/transactions")
            && !request.target.contains("only_settlement_txns=true")
            && let Some(n) = body["data"]["count"]["filtered_count"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
        {
            body["data"]["count"]["filtered_count"] = Value::from((n + 1).to_string());
        }
        respond(out, status, &body.to_string());
    })
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
    let proxy = lying_proxy(&server);
    let dir = TempDir::new("aggpay-sync-integrity");
    let db = dir.join("m.db");
    let out = command(&server, &db)
        .env("AGGPAY_BASE_URL", proxy.url())
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
        scalar(&db, "SELECT count(*) FROM integrity_errors") as usize,
        errors.len()
    );
    assert!(unverified_final_batches(&db) > 0);
    // The honest server: the same data, walked again and verified.
    let (code, summary, err) = sync(&server, &db);
    assert_eq!(code, 0, "{err}\n{summary}");
    assert_eq!(unverified_final_batches(&db), 0);
}
