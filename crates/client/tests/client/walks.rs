//! Walking the lists: complete, ordered, bounded, page sizes, and
//! checkpoint and resume across clients.

use std::collections::HashSet;

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};

use crate::support::{Scripted, ScriptedClient, client_for, json, token};

#[test]
fn cursor_walks_match_the_counts_both_ways() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(70)
            .max_batch_transactions(260),
    )
    .unwrap();
    let client = client_for(&server);
    let total = client
        .list_settlement_batches(&BatchQuery::new())
        .unwrap()
        .count;
    for (limit, direction) in [
        (Some(1), Direction::Desc),
        (Some(30), Direction::Asc),
        (Some(100), Direction::Desc),
        (Some(0), Direction::Asc),
        (None, Direction::Desc),
    ] {
        let mut query = BatchQuery::new().direction(direction);
        if let Some(l) = limit {
            query = query.limit(l);
        }
        let rows: Vec<SettlementBatch> = client
            .settlement_batches(&query)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len() as u64, total, "limit {limit:?}");
        let ids: HashSet<u64> = rows.iter().map(|b| b.id.get()).collect();
        assert_eq!(ids.len(), rows.len());
    }
    let busy = client
        .settlement_batches(&BatchQuery::new().status(BatchStatus::Completed))
        .map(Result::unwrap)
        .find(|b| {
            client
                .list_batch_transactions(&b.token, &TransactionQuery::new())
                .unwrap()
                .count
                > 150
        })
        .expect("a batch with more than 150 transactions");
    let first = client
        .list_batch_transactions(&busy.token, &TransactionQuery::new())
        .unwrap();
    let (count, total) = (first.count, first.total_count.unwrap());
    for (limit, direction) in [
        (1, Direction::Asc),
        (30, Direction::Desc),
        (100, Direction::Asc),
    ] {
        let rows: Vec<Transaction> = client
            .batch_transactions(
                &busy.token,
                &TransactionQuery::new().limit(limit).direction(direction),
            )
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len() as u64, count);
        assert!(rows.windows(2).all(|w| match direction {
            Direction::Asc => w[0].id < w[1].id,
            _ => w[0].id > w[1].id,
        }));
    }
    let payouts: Vec<SettlementPayout> = client
        .batch_payouts(&busy.token, &TransactionQuery::new())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(payouts.len() as u64 + count, total);
    // Offset walks.
    let merchants: Vec<_> = client
        .merchants(&MerchantQuery::new().limit(7))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(merchants.len(), 24);
    let keys: Vec<_> = client
        .access_keys(&KeyQuery::new().limit(4))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(keys.len(), 6);
    let hooks: Vec<_> = client
        .webhooks(&WebhookQuery::new())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(hooks.len(), 9);
    let rail: Vec<_> = client
        .rail_merchants(&RailMerchantQuery::new().limit(5))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rail.len(), 27);
}

/// Cursor walks ask for 100 rows unless told otherwise; offset walks never
/// send `limit=0` (which used to leave the page size to the server while
/// the walk assumed 100).
#[test]
fn walks_ask_for_full_pages() {
    let empty_cursor = r#"{"api_version":"v1","data":{"batches":[],"transactions":[],"next_cursor":"","count":{"filtered_count":"0","total_count":"0"}}}"#;
    let server = Scripted::start(vec![json(200, empty_cursor)]);
    let client = server.client(|b| b);
    assert_eq!(client.settlement_batches(&BatchQuery::new()).count(), 0);
    assert_eq!(
        client
            .batch_transactions(&token(), &TransactionQuery::new().limit(7))
            .count(),
        0
    );
    let requests = server.requests();
    assert!(
        requests[0].contains("batches?limit=100 "),
        "{}",
        requests[0]
    );
    assert!(
        requests[1].contains("transactions?limit=7 "),
        "{}",
        requests[1]
    );

    let empty_offset = r#"{"api_version":"v1","data":{"count":0,"keys":[]}}"#;
    let server = Scripted::start(vec![json(200, empty_offset)]);
    let client = server.client(|b| b);
    assert_eq!(client.access_keys(&KeyQuery::new().limit(0)).count(), 0);
    assert_eq!(client.access_keys(&KeyQuery::new()).count(), 0);
    for head in server.requests() {
        assert!(head.contains("keys?limit=100&offset=0 "), "{head}");
    }

    // A million rows take 10,000 pages, not 33,334.
    let big =
        MockServer::start(MockConfig::new().batches(4).large_batch_transactions(2_000)).unwrap();
    let client = client_for(&big);
    let batch = big.info().large_batch.unwrap();
    let mut walk = client.batch_transactions(&batch, &TransactionQuery::new());
    assert_eq!(walk.by_ref().count(), 2_000);
    // 20 full pages, and the empty one that proves the end: the count is
    // not trusted to end a walk (WIRE.md's end rule).
    assert_eq!(walk.pages_fetched(), 21);
}

#[test]
fn a_server_repeating_a_cursor_is_caught() {
    let page = r#"{"api_version":"v1","data":{"batches":[
        {"id":"20","token":"sb_0f8fad5b-d9cb-469f-a165-70867728950e","file_name":"","date":"2024-01-01T00:00:00Z","status":"BATCH_COMPLETED","version":1,"created_by_job_id":"job_1","partner_id":"partner_1","created_at":"2024-01-01T00:00:00Z"}
    ],"next_cursor":"20","count":{"filtered_count":"5","total_count":"5"}}}"#;
    let server = Scripted::start(vec![json(200, page)]);
    let out: Vec<_> = server
        .client(|b| b)
        .settlement_batches(&BatchQuery::new().limit(1))
        .collect();
    assert!(
        matches!(
            out.last().map(|r| r.as_ref().map_err(Error::kind)),
            Some(Err(ErrorKind::Pagination(_)))
        ),
        "{out:?}"
    );
    assert!(out.len() <= 3);
    assert!(server.requests().len() <= 3);
}

/// A sync tool's crash: a walk stops midway (mid-page and at a page
/// boundary), its position is saved as text, and a new client in a fresh
/// walk resumes from it. Every row comes exactly once, both directions.
#[test]
fn a_walk_stopped_midway_resumes_in_a_new_client() {
    let server =
        MockServer::start(MockConfig::new().batches(4).large_batch_transactions(1_234)).unwrap();
    let probe = client_for(&server);
    let batch = server.info().large_batch.unwrap();
    for direction in [Direction::Asc, Direction::Desc] {
        let query = TransactionQuery::new().direction(direction).limit(50);
        let reference: Vec<u64> = probe
            .batch_transactions(&batch, &query)
            .map(|t| t.unwrap().id.get())
            .collect();
        assert_eq!(reference.len(), 1_234);
        for stop in [0, 1, 49, 50, 51, 600, 1_233, 1_234] {
            let first = client_for(&server);
            let mut walk = first.batch_transactions(&batch, &query);
            let mut got: Vec<u64> = walk
                .by_ref()
                .take(stop)
                .map(|t| t.unwrap().id.get())
                .collect();
            let saved = walk.position().to_string();
            drop(walk);
            drop(first);
            let second = client_for(&server);
            let resumed = second
                .batch_transactions(&batch, &query)
                .resume_from(&saved.parse().unwrap())
                .unwrap();
            got.extend(resumed.map(|t| t.unwrap().id.get()));
            assert_eq!(
                got, reference,
                "{direction:?}, stopped after {stop} at {saved}"
            );
        }
    }
    // Page by page, as a sync tool commits: rows and position together.
    let query = TransactionQuery::new().direction(Direction::Asc);
    let mut walk = probe.batch_transactions(&batch, &query);
    let first = walk.next_page().unwrap().unwrap();
    // The page says its counts.
    assert_eq!(first.count, 1_234);
    let mut committed: Vec<u64> = first.items.iter().map(|t| t.id.get()).collect();
    assert_eq!(
        walk.reported_count(),
        Some(1_234),
        "the filtered_count of the page"
    );
    let checkpoint = walk.position();
    let mut rest = probe
        .batch_transactions(&batch, &query)
        .resume_from(&checkpoint)
        .unwrap();
    assert_eq!(rest.reported_count(), None, "nothing fetched yet");
    committed.extend(rest.by_ref().map(|t| t.unwrap().id.get()));
    // A whole walk's rows against the server's count: the sync tool's
    // verification.
    assert_eq!(rest.reported_count(), Some(committed.len() as u64));
    assert_eq!(
        rest.reported_total(),
        Some(
            1_234
                + probe
                    .list_batch_payouts(&batch, &TransactionQuery::new())
                    .unwrap()
                    .count
        )
    );
    assert_eq!(committed.len(), 1_234);
    assert_eq!(committed.iter().collect::<HashSet<_>>().len(), 1_234);
    // Offset walks resume too.
    let all: Vec<_> = probe
        .merchants(&MerchantQuery::new().limit(5))
        .map(|m| m.unwrap().token)
        .collect();
    let mut walk = probe.merchants(&MerchantQuery::new().limit(5));
    let mut got: Vec<_> = walk.by_ref().take(7).map(|m| m.unwrap().token).collect();
    let pos = walk.position();
    got.extend(
        client_for(&server)
            .merchants(&MerchantQuery::new().limit(5))
            .resume_from(&pos)
            .unwrap()
            .map(|m| m.unwrap().token),
    );
    assert_eq!(got, all);
}

/// A server that codes every body (RFC 9110 section 12.5.3: with no
/// Accept-Encoding, any coding is acceptable; the client names gzip and
/// deflate, and decodes them): every walk is the same as against one that
/// does not.
#[test]
fn walks_against_a_server_that_codes_its_bodies_are_the_same() {
    let plain = MockServer::start(MockConfig::new().seed(8).batches(12)).unwrap();
    let coded = MockServer::start(
        MockConfig::new()
            .seed(8)
            .batches(12)
            .legal(aggpay_mock::Legal::CodedBodies),
    )
    .unwrap();
    let walk = |server: &MockServer| {
        let client = client_for(server);
        let batches: Vec<SettlementBatch> = client
            .settlement_batches(&BatchQuery::new())
            .collect::<Result<_, _>>()
            .unwrap();
        let rows: usize = batches
            .iter()
            .map(|b| {
                client
                    .batch_transactions(&b.token, &TransactionQuery::new())
                    .map(Result::unwrap)
                    .count()
            })
            .sum();
        let refunds = client
            .refunds(&RefundQuery::new())
            .map(Result::unwrap)
            .count();
        (batches.len(), rows, refunds)
    };
    let (batches, rows, refunds) = walk(&coded);
    assert!(batches > 0 && rows > 0 && refunds > 0);
    assert_eq!((batches, rows, refunds), walk(&plain));
}

/// A server whose payouts have another shape than the reference's (API.md
/// does not show it): every payout is walked, the elements kept as sent,
/// and the reference's members the server does not send are `None`.
#[test]
fn payouts_of_another_shape_are_walked_and_kept_as_sent() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(8)
            .batches(12)
            .legal(aggpay_mock::Legal::PayoutShape),
    )
    .unwrap();
    let reference = MockServer::start(MockConfig::new().seed(8).batches(12)).unwrap();
    let payouts = |server: &MockServer| {
        let client = client_for(server);
        let batches: Vec<SettlementBatch> = client
            .settlement_batches(&BatchQuery::new())
            .collect::<Result<_, _>>()
            .unwrap();
        batches
            .iter()
            .flat_map(|b| {
                client
                    .batch_payouts(&b.token, &TransactionQuery::new())
                    .map(Result::unwrap)
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let other = payouts(&server);
    let same = payouts(&reference);
    assert!(!other.is_empty());
    assert_eq!(other.len(), same.len());
    for (o, r) in other.iter().zip(&same) {
        assert_eq!(o.id, r.id, "ordered on the same ids");
        assert_eq!(o.token, None, "a po_ token is not the reference's");
        assert!(o.key().starts_with("po_"), "{}", o.key());
        assert_eq!(o.net_amount, None);
        assert_eq!(
            o.element()["amount"].as_str(),
            r.net_amount.map(|a| a.to_string()).as_deref()
        );
        assert!(r.token.is_some() && r.net_amount.is_some());
    }
}
