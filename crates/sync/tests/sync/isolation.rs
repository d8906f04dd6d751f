//! Servers with one bug in one batch: that batch is set aside and named,
//! every other batch is mirrored and verified, the run exits non-zero, and
//! the next run against an honest server completes the mirror. Rows that
//! name another aggregator are an integrity error, never stored.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::TempDir;
use serde_json::Value;

use crate::support::{Db, command, finish, on_both, proxy, sync};

fn server() -> MockServer {
    MockServer::start(
        MockConfig::new()
            .seed(31)
            .batches(14)
            .max_batch_transactions(400),
    )
    .unwrap()
}

/// The batches of a server with at least two pages of transactions,
/// final ones (their walks must end verified), after a sync of `db` one
/// batch at a time (the runs under test walk several at once).
fn batches_with_pages(server: &MockServer, db: &Db) -> Vec<String> {
    let (code, _, err) = finish(command(server, db).args(["--jobs", "1"]).output().unwrap());
    assert_eq!(code, 0, "{err}");
    let rows = db.rows(
        "SELECT b.token FROM batches b WHERE b.status IN ('BATCH_COMPLETED', 'BATCH_FAILED')
         AND (SELECT count(*) FROM transactions t WHERE t.batch_id = b.id) > 100 ORDER BY b.id",
    );
    rows.into_iter().map(|r| r[0].clone()).collect()
}

#[test]
fn one_bad_batch_is_set_aside_and_the_others_are_mirrored() {
    let server = server();
    let dir = TempDir::new("aggpay-sync-reference");
    let reference = Db::sqlite(dir.join("reference.db"));
    let bad = batches_with_pages(&server, &reference);
    assert!(
        bad.len() >= 3,
        "the dataset lacks batches of two pages: {bad:?}"
    );
    let (fails, loops, garbles) = (bad[0].clone(), bad[1].clone(), bad[2].clone());
    let want = reference.dump();
    on_both("aggpay-sync-isolation", &server, |db| {
        let (f, l, g) = (fails.clone(), loops.clone(), garbles.clone());
        let faulty = proxy(&server, move |target, status, body| {
            let later = target.contains("cursor=");
            if target.contains(&f) && later {
                // A 500 at the end of the walk, on every retry.
                *status = 500;
                *body = serde_json::json!({"api_version": "v1", "error": {"code": "error.internal_server_error", "message": "boom"}});
            } else if target.contains(&l) && later {
                // A loop: the same cursor, forever.
                let cursor = target
                    .split("cursor=")
                    .nth(1)
                    .unwrap_or("")
                    .split('&')
                    .next()
                    .unwrap_or("");
                body["data"]["next_cursor"] = Value::from(cursor);
            } else if target.contains(&g) && later {
                *body = Value::String(
                    "{\"api_version\": \"v1\", \"data\": {\"transactions\": [tr".into(),
                );
            }
        });
        let out = command(&server, db)
            .env("AGGPAY_BASE_URL", faulty.url())
            .args(["--max-wait", "3"])
            .output()
            .unwrap();
        let (code, summary, err) = finish(out);
        assert_eq!(code, 1, "{err}\n{summary}");
        let left: Vec<String> = summary["left"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["subject"].as_str().unwrap().to_owned())
            .collect();
        for token in [&fails, &loops, &garbles] {
            assert!(left.contains(token), "{token} not named: {summary}");
            assert!(err.contains(token.as_str()), "{err}");
        }
        assert!(
            summary["left"]
                .as_array()
                .unwrap()
                .iter()
                .all(|l| l["transient"] == false),
            "{summary}"
        );
        // Every other final batch is mirrored and verified.
        assert_eq!(db.unverified_final_batches(), 3, "{summary}");
        // The honest server: the mirror completes, equal to a clean one.
        let (code, summary, err) = sync(&server, db);
        assert_eq!(code, 0, "{err}\n{summary}");
        assert_eq!(db.dump(), want);
    });
}

#[test]
fn rows_of_another_aggregator_are_an_integrity_error_and_never_stored() {
    let server = server();
    let ours = server.aggregator_id().to_string();
    on_both("aggpay-sync-foreign", &server, |db| {
        // Pages after the first carry another aggregator's id on every row.
        let foreign = proxy(&server, |target, _, body| {
            if target.contains("/transactions")
                && target.contains("cursor=")
                && let Some(rows) = body["data"]["transactions"].as_array_mut()
            {
                for row in rows {
                    row["aggregator_id"] = Value::from("agg_someone0else");
                }
            }
        });
        let out = command(&server, db)
            .env("AGGPAY_BASE_URL", foreign.url())
            .output()
            .unwrap();
        let (code, summary, err) = finish(out);
        assert_eq!(code, 1, "{err}\n{summary}");
        let errors = summary["integrity_errors"].as_array().unwrap();
        assert!(
            errors
                .iter()
                .any(|e| e.as_str().unwrap().contains("agg_someone0else")),
            "{summary}"
        );
        assert_eq!(
            db.scalar(&format!(
                "SELECT count(*) FROM transactions WHERE aggregator_id <> '{ours}'"
            )),
            0,
            "another aggregator's rows were stored"
        );
        assert!(db.scalar("SELECT count(*) FROM integrity_errors") > 0);
    });
}
