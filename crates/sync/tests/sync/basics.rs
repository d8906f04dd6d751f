//! A first run, an incremental one, the summary, and what is refused.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{command, dump, finish, scalar, sync, unverified_final_batches};

fn small() -> MockServer {
    MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(16)
            .max_batch_transactions(120),
    )
    .unwrap()
}

#[test]
fn a_first_run_mirrors_everything_and_a_second_adds_nothing() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-first");
    let db = dir.join("m.db");
    let (code, first, err) = sync(&server, &db);
    assert_eq!(code, 0, "{err}");
    assert_eq!(first["batches"]["new"], 16);
    assert_eq!(first["batches"]["total"], 16);
    assert_eq!(first["exit_code"], 0);
    let transactions = first["transactions"]["total"].as_u64().unwrap();
    assert!(transactions > 100, "{first}");
    assert_eq!(first["transactions"]["new"], transactions);
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM transactions") as u64,
        transactions
    );
    assert_eq!(unverified_final_batches(&db), 0);
    // Every field typed: amounts integers, timestamps RFC 3339 text.
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM transactions WHERE typeof(net_amount) <> 'integer'
             OR created_at NOT LIKE '____-__-__T%Z'"
        ),
        0
    );
    // Net is gross minus the fee and taxes, as the server sent it.
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM transactions WHERE net_amount <> gross_amount - fee_amount
             - sales_tax_on_fee_amount - sales_tax_withholding_amount
             - income_tax_withholding_amount - digital_tax_amount"
        ),
        0
    );
    let before = dump(&db);
    let (code, second, err) = sync(&server, &db);
    assert_eq!(code, 0, "{err}");
    assert_eq!(second["batches"]["new"], 0);
    assert_eq!(second["transactions"]["new"], 0);
    assert!(
        second["requests"].as_u64().unwrap() < first["requests"].as_u64().unwrap(),
        "incremental: {second} after {first}"
    );
    assert_eq!(dump(&db), before);
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM runs WHERE exit_code = 0"),
        2
    );
}

#[test]
fn the_built_in_mock_is_the_default() {
    let dir = TempDir::new("aggpay-sync-demo");
    let db = dir.join("demo.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aggpay-sync"))
        .args(["--db", &db.display().to_string(), "--json", "--quiet"])
        .env_remove("AGGPAY_BASE_URL")
        .env_remove("AGGPAY_SECRET_KEY")
        .env_remove("AGGPAY_AGGREGATOR_ID")
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(summary["transactions"]["total"].as_u64().unwrap() > 1_000);
}

#[test]
fn runs_that_cannot_be_made_exit_2_and_never_print_the_key() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-refused");
    let db = dir.join("m.db");
    // A wrong key.
    let out = command(&server, &db)
        .env("AGGPAY_SECRET_KEY", "aggsk_wrong_key_1234567890")
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("401"), "{err}");
    assert!(!err.contains("aggsk_wrong_key_1234567890"), "{err}");
    // Nothing listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = command(&server, &db)
        .env("AGGPAY_BASE_URL", &url)
        .args(["--timeout", "2"])
        .output()
        .unwrap();
    assert_eq!(finish(out).0, 2);
    // A value out of range.
    let out = command(&server, &db)
        .args(["--rate-limit", "1e-300"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A database of another aggregator.
    let (code, _, _) = sync(&server, &db);
    assert_eq!(code, 0);
    let other = MockServer::start(MockConfig::new().seed(77).batches(2)).unwrap();
    let (code, _, err) = sync(&other, &db);
    assert_eq!(code, 2);
    assert!(err.contains("use one database per aggregator"), "{err}");
}

#[test]
fn a_rate_limit_paces_the_run() {
    let server =
        MockServer::start(MockConfig::new().batches(4).max_batch_transactions(10)).unwrap();
    let dir = TempDir::new("aggpay-sync-rate");
    let db = dir.join("m.db");
    let started = std::time::Instant::now();
    let out = command(&server, &db)
        .args(["--rate-limit", "50"])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    let requests = summary["requests"].as_u64().unwrap();
    // n requests at 50/s take at least (n - 1) / 50 s.
    assert!(
        elapsed.as_secs_f64() >= (requests - 1) as f64 / 50.0,
        "{requests} requests in {elapsed:?}"
    );
}
