//! A first run, an incremental one, the summary, and what is refused.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{Db, command, finish, on_both, sync};

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
    on_both("aggpay-sync-first", &server, |db| {
        first_and_second(&server, db)
    });
}

fn first_and_second(server: &MockServer, db: &Db) {
    let (code, first, err) = sync(server, db);
    assert_eq!(code, 0, "{err}");
    assert_eq!(first["batches"]["new"], 16);
    assert_eq!(first["batches"]["total"], 16);
    assert_eq!(first["exit_code"], 0);
    let transactions = first["transactions"]["total"].as_u64().unwrap();
    assert!(transactions > 100, "{first}");
    assert_eq!(first["transactions"]["new"], transactions);
    assert_eq!(
        db.scalar("SELECT count(*) FROM transactions") as u64,
        transactions
    );
    assert_eq!(db.unverified_final_batches(), 0);
    // The lists a reconciliation joins, whole and counted.
    assert_eq!(first["merchants"]["total"], 24, "{first}");
    assert_eq!(first["rail_merchants"]["total"], 27, "{first}");
    assert_eq!(first["refunds"]["total"], 45, "{first}");
    assert_eq!(first["left"].as_array().unwrap().len(), 0, "{first}");
    // Timestamps RFC 3339 text; amounts integers (a typed column on
    // PostgreSQL, checked on SQLite).
    assert_eq!(
        db.scalar("SELECT count(*) FROM transactions WHERE created_at NOT LIKE '____-__-__T%Z'"),
        0
    );
    if let Db::Sqlite(_) = db {
        assert_eq!(
            db.scalar("SELECT count(*) FROM transactions WHERE typeof(net_amount) <> 'integer'"),
            0
        );
    }
    // Net is gross minus the fee and taxes, as the server sent it.
    assert_eq!(
        db.scalar(
            "SELECT count(*) FROM transactions WHERE net_amount <> gross_amount - fee_amount
             - sales_tax_on_fee_amount - sales_tax_withholding_amount
             - income_tax_withholding_amount - digital_tax_amount"
        ),
        0
    );
    let before = db.dump();
    let (code, second, err) = sync(server, db);
    assert_eq!(code, 0, "{err}");
    assert_eq!(second["batches"]["new"], 0);
    assert_eq!(second["transactions"]["new"], 0);
    assert!(
        second["requests"].as_u64().unwrap() < first["requests"].as_u64().unwrap(),
        "incremental: {second} after {first}"
    );
    assert_eq!(db.dump(), before);
    assert_eq!(
        db.scalar("SELECT count(*) FROM runs WHERE exit_code = 0"),
        2
    );
}

#[test]
fn the_built_in_mock_is_mirrored_when_asked_for() {
    let dir = TempDir::new("aggpay-sync-demo");
    let db = dir.join("demo.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aggpay-sync"))
        .args([
            "--db",
            &db.display().to_string(),
            "--mock",
            "--json",
            "--quiet",
        ])
        .env_remove("AGGPAY_BASE_URL")
        .env_remove("AGGPAY_SECRET_KEY")
        .env_remove("AGGPAY_AGGREGATOR_ID")
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(summary["transactions"]["total"].as_u64().unwrap() > 1_000);
    assert!(
        summary["target"]
            .as_str()
            .unwrap()
            .ends_with("(built-in mock)"),
        "{summary}"
    );
    let db = Db::sqlite(&db);
    let recorded = db.rows("SELECT summary FROM runs");
    assert!(recorded[0][0].contains("built-in mock"), "{recorded:?}");
}

#[test]
fn runs_that_cannot_be_made_exit_2_and_never_print_the_key() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-refused");
    let db = Db::sqlite(dir.join("m.db"));
    // A wrong key.
    let out = command(&server, &db)
        .env("AGGPAY_SECRET_KEY", "aggsk_wrong_key_1234567890")
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the key was refused"), "{err}");
    assert!(!err.contains("aggsk_wrong_key_1234567890"), "{err}");
    assert!(
        !db.path_exists(),
        "nothing is created before the setup works"
    );
    // Nothing listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = command(&server, &db)
        .env("AGGPAY_BASE_URL", &url)
        .args(["--timeout", "2", "--max-wait", "2"])
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
    let db = Db::sqlite(dir.join("m.db"));
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

/// The queries of docs/sync.md, one statement each: those of the `sql` block of
/// its aggpay-sync section.
fn readme_queries() -> Vec<String> {
    let readme = include_str!("../../../../docs/sync.md");
    let section = &readme[readme.find("**Querying.**").expect("the Querying part")..];
    let block = section
        .split("```sql\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its sql block");
    let code: String = block
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    code.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_queries_run_on_both_backends() {
    let server = small();
    on_both("aggpay-sync-readme", &server, |db| {
        assert_eq!(sync(&server, db).0, 0);
        // A batch with refunded payments among its rows.
        let batch = db.rows(
            "SELECT b.token FROM batches b JOIN transactions t ON t.batch_id = b.id
             JOIN refunds r ON r.payment_id = t.payment_id ORDER BY b.token LIMIT 1",
        );
        assert!(!batch.is_empty(), "no refund of a mirrored payment");
        let queries = readme_queries();
        assert!(queries.len() >= 6, "{queries:?}");
        for sql in queries {
            if matches!(db, Db::Pg { .. }) && sql.contains("json_extract") {
                continue;
            }
            let sql = sql.replace("sb_…", &batch[0][0]);
            let rows = db.rows(&sql);
            if sql.contains("net_less_refunds_paisa") || sql.contains("WHERE b.token =") {
                assert!(!rows.is_empty(), "{sql}");
            }
        }
        // The net less refunds is the net, less the completed refunds of
        // its payments.
        let per_merchant = db.rows(&readme_queries()[0]);
        let column = |i: usize| -> i64 {
            per_merchant
                .iter()
                .map(|r| r[i].parse::<i64>().unwrap())
                .sum()
        };
        assert!(column(3) > 0, "nothing refunded: {per_merchant:?}");
        let net = column(4);
        let expected = db.scalar(
            "SELECT (SELECT sum(t.net_amount) FROM transactions t JOIN batches b ON b.id = t.batch_id
                     WHERE b.status = 'BATCH_COMPLETED')
                  - (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.status = 'R_COMPLETED'
                     AND r.payment_id IN (SELECT t.payment_id FROM transactions t JOIN batches b ON b.id = t.batch_id
                     WHERE b.status = 'BATCH_COMPLETED' AND t.transaction_type = 'TT_PAYMENT'))",
        );
        assert_eq!(net, expected);
    });
}

/// Servers that made other legal choices than the reference: payouts of
/// another shape (API.md does not show it) are mirrored as sent, every
/// final batch verified; a refund list whose paging parameters are named
/// otherwise is set aside with what was seen and what it likely means.
#[test]
fn other_legal_shapes_are_mirrored_and_unread_paging_is_explained() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(16)
            .max_batch_transactions(120)
            .legal(aggpay_mock::Legal::PayoutShape),
    )
    .unwrap();
    on_both("aggpay-sync-payout-shape", &server, |db| {
        let (code, summary, err) = sync(&server, db);
        assert_eq!(code, 0, "{err}");
        assert_eq!(db.unverified_final_batches(), 0);
        let payouts = db.scalar("SELECT count(*) FROM payouts");
        assert!(payouts > 0, "{summary}");
        assert_eq!(
            db.scalar("SELECT count(*) FROM payouts WHERE token LIKE 'po\\_%' ESCAPE '\\'"),
            payouts
        );
        assert_eq!(
            db.scalar("SELECT count(*) FROM payouts WHERE net_amount IS NULL AND element LIKE '%\"amount\"%'"),
            payouts
        );
    });
    let paged = MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(4)
            .max_batch_transactions(40)
            .legal(aggpay_mock::Legal::PageNames),
    )
    .unwrap();
    let dir = TempDir::new("aggpay-sync-page-names");
    let db = Db::sqlite(dir.join("m.db"));
    let (code, summary, err) = sync(&paged, &db);
    assert_eq!(code, 1, "{summary}");
    assert!(
        err.contains("likely does not read this list's `offset` and `limit`"),
        "{err}"
    );
    // Rail merchants whose ids are UUIDs (API.md calls them only strings):
    // mirrored as sent.
    let uuids = MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(4)
            .legal(aggpay_mock::Legal::UuidIds),
    )
    .unwrap();
    let dir = TempDir::new("aggpay-sync-uuid-ids");
    let db = Db::sqlite(dir.join("m.db"));
    let (code, summary, err) = sync(&uuids, &db);
    assert_eq!(code, 0, "{summary}\n{err}");
    let conn = rusqlite::Connection::open(dir.join("m.db")).unwrap();
    let id: String = conn
        .query_row("SELECT id FROM rail_merchants LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(id.len(), 36, "{id}");
    // Cursor lists that name their paging parameters otherwise: the
    // batches cannot be listed, and the error says why.
    let renamed = MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(4)
            .legal(aggpay_mock::Legal::CursorNames),
    )
    .unwrap();
    let dir = TempDir::new("aggpay-sync-cursor-names");
    let db = Db::sqlite(dir.join("m.db"));
    let (code, summary, err) = sync(&renamed, &db);
    assert_eq!(code, 2, "{summary}");
    assert!(
        err.contains("likely does not read the direction") && err.contains("by purpose only"),
        "{err}"
    );
}
