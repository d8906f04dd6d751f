//! Live data: what moves, what never does, and the two ways to move it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aggpay::{BatchQuery, Client, Direction, TransactionQuery, WalkPosition};
use aggpay_mock::{MockConfig, MockServer};
use serde_json::Value;

fn client(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().clone(),
        server.secret_key(),
    )
    .build()
    .unwrap()
}

/// Every batch (id → status and version) and every transaction (batch →
/// id → the row as JSON) a client sees now.
type Snapshot = (
    BTreeMap<u64, (String, i64)>,
    BTreeMap<String, BTreeMap<u64, Value>>,
);

fn snapshot(client: &Client) -> Snapshot {
    let mut batches = BTreeMap::new();
    let mut rows = BTreeMap::new();
    for b in client.settlement_batches(&BatchQuery::new().direction(Direction::Asc)) {
        let b = b.unwrap();
        batches.insert(b.id.get(), (b.status.to_string(), b.version));
        let txns: BTreeMap<u64, Value> = client
            .batch_transactions(&b.token, &TransactionQuery::new().direction(Direction::Asc))
            .map(|t| {
                let t = t.unwrap();
                (t.id.get(), serde_json::to_value(&t).unwrap())
            })
            .collect();
        rows.insert(b.token.to_string(), txns);
    }
    (batches, rows)
}

/// Runs between changes pick up exactly what changed: new batches after
/// every old id, statuses that moved forward, new transactions after every
/// old one, and nothing that was served before changes.
#[test]
fn runs_between_changes_see_exactly_the_new_and_changed_rows() {
    let server = MockServer::start(MockConfig::new().seed(4).batches(10).live(true)).unwrap();
    let client = client(&server);
    let mut before = snapshot(&client);
    let rank = |s: &str| match s {
        "BATCH_CREATED" => 0,
        "BATCH_PROCESSING" => 1,
        _ => 2,
    };
    let mut saw_new_rows = false;
    let mut saw_status_change = false;
    for step in 1..=6 {
        assert_eq!(server.advance(1), step);
        let after = snapshot(&client);
        assert_eq!(after.0.len(), before.0.len() + 1, "one new batch per step");
        let newest_old = *before.0.keys().last().unwrap();
        let newest = *after.0.keys().last().unwrap();
        assert!(newest > newest_old, "a new batch sorts after every old one");
        for (id, (status, version)) in &before.0 {
            let (now, now_version) = &after.0[id];
            assert!(
                rank(now) >= rank(status),
                "batch {id} went from {status} to {now}"
            );
            if now != status {
                saw_status_change = true;
                assert!(
                    now_version > version,
                    "batch {id} changed without a new version"
                );
            }
        }
        for (batch, rows) in &before.1 {
            let now = &after.1[batch];
            for (id, row) in rows {
                assert_eq!(
                    now.get(id),
                    Some(row),
                    "batch {batch}: row {id} changed or vanished"
                );
            }
            if let (Some(last_old), Some(last_new)) = (rows.keys().last(), now.keys().last())
                && now.len() > rows.len()
            {
                saw_new_rows = true;
                assert!(
                    now.keys()
                        .filter(|id| !rows.contains_key(id))
                        .all(|id| id > last_old)
                );
                assert!(last_new > last_old);
            }
        }
        before = after;
    }
    assert!(saw_new_rows, "no open batch gained transactions");
    assert!(saw_status_change, "no batch moved");
}

/// An incremental reader: a position saved at the end of a walk, resumed
/// after the data moved, yields exactly the transactions added since.
#[test]
fn a_resumed_walk_yields_exactly_what_was_added() {
    let server = MockServer::start(MockConfig::new().seed(8).batches(6).live(true)).unwrap();
    let client = client(&server);
    server.advance(1);
    let processing = client
        .settlement_batches(&BatchQuery::new().status(aggpay::BatchStatus::Processing))
        .map(Result::unwrap)
        .find(|b| {
            client
                .list_batch_transactions(&b.token, &TransactionQuery::new().limit(1))
                .unwrap()
                .count
                > 0
        })
        .expect("a processing batch with transactions");
    let query = TransactionQuery::new().direction(Direction::Asc);
    let mut walk = client.batch_transactions(&processing.token, &query);
    let first: Vec<u64> = walk.by_ref().map(|t| t.unwrap().id.get()).collect();
    let saved: WalkPosition = walk.position().to_string().parse().unwrap();
    server.advance(3);
    let all: Vec<u64> = client
        .batch_transactions(&processing.token, &query)
        .map(|t| t.unwrap().id.get())
        .collect();
    assert!(all.len() > first.len(), "the batch gained nothing");
    let added: Vec<u64> = client
        .batch_transactions(&processing.token, &query)
        .resume_from(&saved)
        .unwrap()
        .map(|t| t.unwrap().id.get())
        .collect();
    assert_eq!([first, added].concat(), all);
}

/// The control endpoint, outside `/v1`, and the timer.
#[test]
fn live_data_moves_on_request_and_on_a_timer() {
    let server = MockServer::start(MockConfig::new().batches(5).live(true)).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut answer = agent
        .post(format!("{}/_mock/advance?steps=3", server.url()))
        .send_empty()
        .unwrap();
    let body: Value = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["step"], 3);
    assert_eq!(body["batches"], 8);
    assert_eq!(server.live_step(), 3);
    let answer = agent
        .get(format!("{}/_mock/advance", server.url()))
        .call()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 405);

    let fixed = MockServer::start(MockConfig::new().batches(5)).unwrap();
    let answer = agent
        .post(format!("{}/_mock/advance", fixed.url()))
        .send_empty()
        .unwrap();
    assert_eq!(answer.status().as_u16(), 404, "off without live data");
    assert_eq!(fixed.advance(2), 0);

    let timed = MockServer::start(
        MockConfig::new()
            .batches(5)
            .live_every(Duration::from_millis(50)),
    )
    .unwrap();
    let started = Instant::now();
    while timed.live_step() < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the timer did not move"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
