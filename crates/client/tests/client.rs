//! The client against `aggpay-mock` in-process, and against small scripted
//! servers on loopback where the mock cannot misbehave.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};

fn client_for(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().as_str(),
        server.secret_key(),
    )
    .timeout(Duration::from_secs(20))
    .build()
    .unwrap()
}

fn mock() -> (MockServer, Client) {
    let server = MockServer::start(MockConfig::new().seed(11)).unwrap();
    let client = client_for(&server);
    (server, client)
}

#[test]
fn every_operation_decodes_the_mock() {
    let (server, client) = mock();
    let info = server.info();
    let aggregator = client.get_aggregator().unwrap();
    assert_eq!(&aggregator.token, server.aggregator_id());
    assert!(!aggregator.keys.is_empty());
    let keys = client.list_access_keys(&KeyQuery::new()).unwrap();
    assert_eq!(keys.count.0 as usize, keys.keys.len());
    let merchants = client
        .list_merchants(&MerchantQuery::new().limit(5))
        .unwrap();
    assert_eq!(merchants.merchants.len(), 5);
    let rail = client
        .list_rail_merchants(&RailMerchantQuery::new())
        .unwrap();
    assert!(!rail.merchants.is_empty());
    let one = client.get_rail_merchant(&info.rail_merchant_id).unwrap();
    assert_eq!(one.token, info.rail_merchant_id);
    let qrs = client.list_qr_codes(&QrCodeQuery::new()).unwrap();
    assert!(qrs.qr_codes.iter().all(|q| q.qr_type == QrType::Static));
    let payment = info.payment_id.clone().unwrap();
    let charges = client.get_payment_charges(&payment).unwrap();
    assert_eq!(charges.expected_net(), Some(charges.net_amount));
    let refunds = client.list_refunds(&RefundQuery::new()).unwrap();
    assert_eq!(refunds.keys.len(), 10);
    let batches = client.list_settlement_batches(&BatchQuery::new()).unwrap();
    assert_eq!(batches.batches.len(), 30);
    let page = client
        .list_batch_transactions(&batches.batches[0].token, &TransactionQuery::new())
        .unwrap();
    assert!(page.settlement_transactions.is_empty());
    let export = client
        .create_report_export(&NewReportExport::batch(batches.batches[0].token.clone()))
        .unwrap();
    assert_eq!(export.status, ReportStatus::Seeded);
    assert_eq!(export.attempts, 1);
    assert_eq!(export.finished_at, None);
    assert_eq!(export.merchant_id, None);
    let by_merchant = client
        .create_report_export(&NewReportExport::merchant(
            batches.batches[0].token.clone(),
            info.rail_merchant_id.clone(),
        ))
        .unwrap();
    assert_eq!(
        by_merchant.merchant_id.as_ref(),
        Some(&info.rail_merchant_id)
    );
    let account = client
        .get_account_info(&AccountQuery::iban(&info.iban).with_title(true))
        .unwrap();
    assert_eq!(account.iban, info.iban);
    assert!(!account.account_title.is_empty());
    let mobile = client
        .get_account_info(&AccountQuery::mobile(&info.mobile))
        .unwrap();
    assert_eq!(mobile.info_type, AccountInfoType::AliasTypeUnspecified);
    let till = client
        .fetch_till_code_title(&info.till_code, false)
        .unwrap();
    assert_eq!(till.iban, info.iban);
    let alias = client.get_alias(&info.alias_id).unwrap();
    assert_eq!(alias.alias_value, info.till_code);
    let ledger = client.get_ledger_account().unwrap();
    assert_eq!(ledger.currency, Currency::PKR);
    let hooks = client.list_webhooks(&WebhookQuery::new()).unwrap();
    assert!(hooks.endpoints.iter().all(|h| h.event_filter().is_ok()));
    let rotated = client
        .rotate_access_key(info.access_key_id.as_ref().unwrap())
        .unwrap();
    assert_ne!(rotated.secret.expose(), "");
}

#[test]
fn filters_are_honoured_end_to_end() {
    let (_server, client) = mock();
    for status in [
        BatchStatus::Created,
        BatchStatus::Processing,
        BatchStatus::Completed,
        BatchStatus::Failed,
    ] {
        let page = client
            .list_settlement_batches(&BatchQuery::new().status(status.clone()).limit(100))
            .unwrap();
        assert!(page.batches.iter().all(|b| b.status == status));
    }
    let first = client
        .list_settlement_batches(&BatchQuery::new())
        .unwrap()
        .batches[3]
        .clone();
    let one = client
        .list_settlement_batches(&BatchQuery::new().batch_id(first.token.clone()))
        .unwrap();
    assert_eq!(one.batches, vec![first]);
    let inactive: Vec<_> = client
        .access_keys(KeyQuery::new().is_active(false))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!inactive.is_empty() && inactive.iter().all(|k| !k.is_active));
    let named = client
        .list_access_keys(&KeyQuery::new().names(["primary"]))
        .unwrap();
    assert_eq!(named.keys.len(), 1);
    let enabled: Vec<_> = client
        .merchants(MerchantQuery::new().enabled(false))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!enabled.is_empty() && enabled.iter().all(|m| !m.enabled));
    let ids = [enabled[0].token.clone()];
    let by_id = client
        .list_merchants(&MerchantQuery::new().identifiers(ids))
        .unwrap();
    assert_eq!(by_id.merchants, vec![enabled[0].clone()]);
    let by_name = client
        .list_merchants(&MerchantQuery::new().names([enabled[0].name.clone()]))
        .unwrap();
    assert!(by_name.merchants.contains(&enabled[0]));
    let suspended = client
        .list_rail_merchants(&RailMerchantQuery::new().status(RailMerchantStatus::Suspended))
        .unwrap();
    assert!(
        suspended
            .merchants
            .iter()
            .all(|m| m.status == RailMerchantStatus::Suspended)
    );
    let named = client
        .list_rail_merchants(&RailMerchantQuery::new().name("pending"))
        .unwrap();
    assert_eq!(named.count.0, 3);
    let dynamic: Vec<_> = client
        .qr_codes(QrCodeQuery::new().qr_type(QrType::Dynamic))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!dynamic.is_empty() && dynamic.iter().all(|q| q.qr_type == QrType::Dynamic));
    let mine = client
        .list_qr_codes(
            &QrCodeQuery::new()
                .qr_type(QrType::Dynamic)
                .aggregator_merchant_id(dynamic[0].aggregator_merchant_id.clone()),
        )
        .unwrap();
    assert!(
        mine.qr_codes
            .iter()
            .all(|q| q.aggregator_merchant_id == dynamic[0].aggregator_merchant_id)
    );
    let all: Vec<Refund> = client
        .refunds(RefundQuery::new().direction(Direction::Asc))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(all.windows(2).all(|w| w[0].created_at <= w[1].created_at));
    let failed = client
        .list_refunds(
            &RefundQuery::new()
                .statuses([RefundStatus::Failed, RefundStatus::Canceled])
                .limit(100),
        )
        .unwrap();
    assert!(
        failed
            .keys
            .iter()
            .all(|r| matches!(r.status, RefundStatus::Failed | RefundStatus::Canceled))
    );
    let r = &all[5];
    for q in [
        RefundQuery::new().payment_ids([r.payment_id.clone()]),
        RefundQuery::new().trace_references([r.trace_reference.clone()]),
        RefundQuery::new().msg_ids([r.msg_id.clone()]),
        RefundQuery::new().return_ids([r.return_id.clone()]),
        RefundQuery::new().request_ids([r.request_id.clone()]),
        RefundQuery::new().refund_ids([r.token.clone()]),
        RefundQuery::new()
            .created_from(r.created_at)
            .created_to(r.created_at),
    ] {
        let got = client.list_refunds(&q.clone().limit(100)).unwrap();
        assert!(got.keys.contains(r), "{q:?}");
    }
}

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
        .count
        .filtered_count
        .0;
    for (limit, direction) in [
        (1, Direction::Desc),
        (30, Direction::Asc),
        (100, Direction::Desc),
        (0, Direction::Asc),
    ] {
        let rows: Vec<SettlementBatch> = client
            .settlement_batches(BatchQuery::new().limit(limit).direction(direction))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len() as u64, total, "limit {limit}");
        let ids: HashSet<u64> = rows.iter().map(|b| b.id.get()).collect();
        assert_eq!(ids.len(), rows.len());
    }
    let busy = client
        .settlement_batches(BatchQuery::new().status(BatchStatus::Completed).limit(100))
        .map(Result::unwrap)
        .find(|b| {
            client
                .list_batch_transactions(&b.token, &TransactionQuery::new())
                .unwrap()
                .count
                .filtered_count
                .0
                > 150
        })
        .expect("a batch with more than 150 transactions");
    let count = client
        .list_batch_transactions(&busy.token, &TransactionQuery::new())
        .unwrap()
        .count;
    for (limit, direction) in [
        (1, Direction::Asc),
        (30, Direction::Desc),
        (100, Direction::Asc),
    ] {
        let rows: Vec<Transaction> = client
            .batch_transactions(
                busy.token.clone(),
                TransactionQuery::new().limit(limit).direction(direction),
            )
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len() as u64, count.filtered_count.0);
        assert!(rows.windows(2).all(|w| match direction {
            Direction::Asc => w[0].id < w[1].id,
            Direction::Desc => w[0].id > w[1].id,
        }));
    }
    let payouts: Vec<SettlementPayout> = client
        .batch_payouts(busy.token.clone(), TransactionQuery::new())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        payouts.len() as u64 + count.filtered_count.0,
        count.total_count.0
    );
    // Offset walks.
    let merchants: Vec<_> = client
        .merchants(MerchantQuery::new().limit(7))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(merchants.len(), 24);
    let keys: Vec<_> = client
        .access_keys(KeyQuery::new().limit(4))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(keys.len(), 6);
    let hooks: Vec<_> = client
        .webhooks(WebhookQuery::new())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(hooks.len(), 9);
    let rail: Vec<_> = client
        .rail_merchants(RailMerchantQuery::new().limit(5))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rail.len(), 27);
}

#[test]
fn a_prefixed_base_url_with_or_without_slash_works() {
    let server = MockServer::start(MockConfig::new().path_prefix("/pay/api")).unwrap();
    for base in [server.url().to_owned(), format!("{}/", server.url())] {
        let client = Client::builder(base, server.aggregator_id().as_str(), server.secret_key())
            .build()
            .unwrap();
        client.get_ledger_account().unwrap();
    }
}

#[test]
fn invalid_ids_are_refused_before_any_request() {
    assert!(matches!(
        PaymentId::parse("txn_123"),
        Err(Error::InvalidInput { .. })
    ));
    assert!(BatchToken::parse("sb_0f8fad5b").is_err());
    let (server, client) = mock();
    let batch = client
        .list_settlement_batches(&BatchQuery::new())
        .unwrap()
        .batches[0]
        .token
        .clone();
    let err = client
        .create_report_export(&NewReportExport {
            settlement_batch_id: batch,
            kind: ReportKind::Merchant,
            merchant_id: None,
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidInput {
                field: "merchant_id",
                ..
            }
        ),
        "{err}"
    );
    let err = client
        .list_access_keys(&KeyQuery::new().names(["a,b"]))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput { .. }));
    drop(server);
}

#[test]
fn api_errors_become_typed_values() {
    let (server, client) = mock();
    let unknown = PaymentId::parse("pm_0000000000000000").unwrap();
    let err = client.get_payment_charges(&unknown).unwrap_err();
    let api = err.api_error().expect("api error");
    assert_eq!(
        (api.status(), api.code(), api.shape()),
        (404, "error.not_found", ErrorShape::Bare)
    );
    assert!(!err.is_retryable());
    let wrong = Client::builder(server.url(), server.aggregator_id().as_str(), "not-the-key")
        .build()
        .unwrap();
    let err = wrong.get_ledger_account().unwrap_err();
    let api = err.api_error().unwrap();
    assert_eq!(
        (api.status(), api.code(), api.shape()),
        (401, "error.unauthorized_access", ErrorShape::Envelope)
    );
    let err = client
        .get_account_info(&AccountQuery::iban("PK00"))
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
}

// --- A scripted server ---------------------------------------------------

/// What the scripted server does with one request.
#[derive(Clone)]
enum Act {
    /// Answer with status, extra headers and body.
    Reply(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Send nothing for this long, then close.
    Stall(Duration),
    /// Close the connection without a word.
    Reset,
    /// Send the head and part of a body shorter than its Content-Length.
    Truncate(u16, Vec<u8>, usize),
    /// Send these bytes as the whole answer.
    Raw(Vec<u8>),
}

struct Scripted {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Scripted {
    /// Serves `script` one act per connection; the last act repeats. The
    /// thread ends after `max` connections or 30 s without one.
    fn start(script: Vec<Act>, max: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut served = 0;
            let mut idle_since = Instant::now();
            while served < max
                && idle_since.elapsed() < Duration::from_secs(30)
                && !stopped.load(std::sync::atomic::Ordering::SeqCst)
            {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let act = script.get(served).or(script.last()).cloned().unwrap();
                        served += 1;
                        idle_since = Instant::now();
                        serve_one(stream, act, &seen);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            url,
            requests,
            stop,
            handle: Some(handle),
        }
    }

    fn client(&self, configure: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
        let builder = Client::builder(&self.url, "agg_test", "s3cr3t-key-value")
            .timeout(Duration::from_secs(5))
            .retry(
                RetryPolicy::new()
                    .base_delay(Duration::from_millis(5))
                    .max_delay(Duration::from_millis(20)),
            );
        configure(builder).build().unwrap()
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.handle.take().map(JoinHandle::join);
    }
}

fn serve_one(stream: TcpStream, act: Act, seen: &Arc<Mutex<Vec<String>>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    if head.is_empty() {
        return;
    }
    seen.lock().unwrap().push(head);
    let mut stream = stream;
    match act {
        Act::Reply(status, headers, body) => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            let _ = stream.write_all(out.as_bytes());
            let _ = stream.write_all(&body);
        }
        Act::Stall(d) => std::thread::sleep(d),
        Act::Reset => {}
        Act::Raw(bytes) => {
            let _ = stream.write_all(&bytes);
        }
        Act::Truncate(status, body, claimed) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    }
    let _ = stream.flush();
}

fn json(status: u16, body: &str) -> Act {
    Act::Reply(
        status,
        vec![("Content-Type", "application/json".into())],
        body.as_bytes().to_vec(),
    )
}

const LEDGER: &str = r#"{"api_version":"v1","data":{"id":"1","token":"acct_1","account_type":"ACCT_NEW_KIND","account_name":"n","normal_balance":"SIDE_CREDIT","balance":"10","running_balance":"-5","currency":"PKR","vault_token":"lock_1","bank_acct_id":"acc_1","external_partner_id":"","external_aggregator_id":"","external_merchant_id":"","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00.5Z","unknown_field":{"x":1}}}"#;

#[test]
fn tolerant_reading_keeps_unknown_values_and_ignores_unknown_fields() {
    let server = Scripted::start(vec![json(200, LEDGER)], 1);
    let ledger = server.client(|b| b).get_ledger_account().unwrap();
    assert_eq!(
        ledger.account_type,
        LedgerAccountType::Other("ACCT_NEW_KIND".into())
    );
    assert_eq!(ledger.running_balance, Paisa::new(-5));
    let counts = Scripted::start(
        vec![json(
            200,
            r#"{"api_version":"v1","data":{"count":"2","keys":[]}}"#,
        )],
        1,
    );
    assert_eq!(
        counts
            .client(|b| b)
            .list_access_keys(&KeyQuery::new())
            .unwrap()
            .count,
        IntCount(2)
    );
}

#[test]
fn queries_reach_the_wire_with_the_documented_names() {
    let empty_batch = r#"{"api_version":"v1","data":{"batches":[],"next_cursor":"","count":{"filtered_count":"0","total_count":"0"}}}"#;
    let server = Scripted::start(vec![json(200, empty_batch)], 1);
    let token = BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e").unwrap();
    server
        .client(|b| b)
        .list_settlement_batches(
            &BatchQuery::new()
                .cursor("77")
                .limit(100)
                .direction(Direction::Asc)
                .batch_id(token)
                .status(BatchStatus::Completed),
        )
        .unwrap();
    let head = &server.requests()[0];
    assert!(
        head.starts_with("GET /v1/aggregators/agg_test/settlements/batches?cursor=77&limit=100&direction=ASC&batch_id=sb_0f8fad5b-d9cb-469f-a165-70867728950e&status=2 HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("x-pay-aggregator-secret-key: s3cr3t-key-value")
    );
    assert!(head.contains("aggpay/"), "user agent: {head}");

    let refunds = Scripted::start(
        vec![json(
            200,
            r#"{"api_version":"v1","data":{"count":0,"keys":[]}}"#,
        )],
        1,
    );
    refunds
        .client(|b| b)
        .list_refunds(
            &RefundQuery::new()
                .statuses([RefundStatus::Completed, RefundStatus::Failed])
                .request_ids(["a b", "c&d"])
                .limit(5),
        )
        .unwrap();
    let head = &refunds.requests()[0];
    assert!(
        head.starts_with("GET /v1/aggregators/agg_test/refunds?limit=5&status=R_COMPLETED&status=R_FAILED&request_id=a%20b&request_id=c%26d HTTP"),
        "{head}"
    );

    let merchants = Scripted::start(
        vec![json(
            200,
            r#"{"api_version":"v1","data":{"merchants":[],"count":"0"}}"#,
        )],
        1,
    );
    merchants
        .client(|b| b)
        .list_merchants(&MerchantQuery::new().enabled(true).names(["A", "B"]))
        .unwrap();
    assert!(
        merchants.requests()[0]
            .starts_with("GET /v1/aggregators/agg_test/merchants?enabled=true&names=A%2CB HTTP"),
        "{}",
        merchants.requests()[0]
    );
}

#[test]
fn error_shapes_map_to_variants() {
    type Check = fn(&Error) -> bool;
    let cases: Vec<(Act, Check)> = vec![
        (
            json(
                404,
                r#"{"code":"error.not_found","message":"requested resource not found"}"#,
            ),
            |e| {
                e.api_error()
                    .is_some_and(|a| a.shape() == ErrorShape::Bare && a.status() == 404)
            },
        ),
        (
            json(
                500,
                r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"boom"}}"#,
            ),
            |e| {
                e.api_error().is_some_and(|a| {
                    a.shape() == ErrorShape::Envelope && a.code() == "error.internal_server_error"
                })
            },
        ),
        (
            Act::Reply(
                502,
                vec![("Content-Type", "text/html".into())],
                b"<html>bad gateway</html>".to_vec(),
            ),
            |e| matches!(e, Error::Status { status: 502, snippet } if snippet.contains("bad gateway")),
        ),
        (
            json(200, "this is not json"),
            |e| matches!(e, Error::Decode { status: 200, snippet, .. } if snippet.contains("not json")),
        ),
        (
            json(200, r#"{"api_version":"v1","data":{"id":"x"}}"#),
            |e| matches!(e, Error::Decode { .. }),
        ),
        (
            Act::Truncate(200, br#"{"api_version":"v1","da"#.to_vec(), 500),
            |e| matches!(e, Error::Transport(_) | Error::Decode { .. }),
        ),
        (Act::Reset, |e| matches!(e, Error::Transport(_))),
    ];
    for (act, check) in cases {
        let server = Scripted::start(vec![act], 8);
        let err = server
            .client(|b| b.retry(RetryPolicy::none()))
            .get_ledger_account()
            .unwrap_err();
        assert!(check(&err), "{err:?}");
        assert!(!err.to_string().contains("s3cr3t-key-value"));
    }
}

#[test]
fn retries_happen_exactly_where_they_should() {
    let busy = json(
        503,
        r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"busy"}}"#,
    );
    let server = Scripted::start(vec![busy.clone(), busy.clone(), json(200, LEDGER)], 3);
    server.client(|b| b).get_ledger_account().unwrap();
    assert_eq!(server.requests().len(), 3);

    let bad = Scripted::start(
        vec![
            json(400, r#"{"code":"error.bad_request","message":"no"}"#),
            json(200, LEDGER),
        ],
        2,
    );
    assert_eq!(
        bad.client(|b| b).get_ledger_account().unwrap_err().status(),
        Some(400)
    );
    assert_eq!(bad.requests().len(), 1, "400 is never retried");

    let rotate = Scripted::start(vec![busy.clone(), json(200, "{}")], 2);
    let id = AccessKeyId::parse("ak_1").unwrap();
    assert_eq!(
        rotate
            .client(|b| b)
            .rotate_access_key(&id)
            .unwrap_err()
            .status(),
        Some(503)
    );
    assert_eq!(rotate.requests().len(), 1, "rotate is never retried");
    assert!(rotate.requests()[0].starts_with("PUT /v1/aggregators/agg_test/keys/ak_1/rotate "));

    let export = Scripted::start(vec![Act::Reset, json(200, "{}")], 2);
    let body = NewReportExport::batch(
        BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e").unwrap(),
    );
    assert!(export.client(|b| b).create_report_export(&body).is_err());
    assert_eq!(
        export.requests().len(),
        1,
        "export creation is never retried"
    );

    let exhausted = Scripted::start(vec![busy], 10);
    let err = exhausted
        .client(|b| {
            b.retry(
                RetryPolicy::new()
                    .max_attempts(3)
                    .base_delay(Duration::from_millis(1)),
            )
        })
        .get_ledger_account()
        .unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(exhausted.requests().len(), 3);
}

#[test]
fn retry_after_is_honoured_in_seconds_and_as_a_date() {
    let limited = |after: String| {
        Act::Reply(
            429,
            vec![
                ("Retry-After", after),
                ("Content-Type", "application/json".into()),
            ],
            br#"{"code":"rate_limited","message":"slow down"}"#.to_vec(),
        )
    };
    let server = Scripted::start(vec![limited("1".into()), json(200, LEDGER)], 2);
    let started = Instant::now();
    server.client(|b| b).get_ledger_account().unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);

    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2)))
        .unwrap();
    let server = Scripted::start(vec![limited(date), json(200, LEDGER)], 2);
    let started = Instant::now();
    server.client(|b| b).get_ledger_account().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // A wait beyond the policy's limit returns the 429 at once.
    let server = Scripted::start(vec![limited("3600".into())], 2);
    let started = Instant::now();
    let err = server.client(|b| b).get_ledger_account().unwrap_err();
    assert_eq!(err.status(), Some(429));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_stalled_server_hits_the_timeout_and_a_huge_body_the_limit() {
    let server = Scripted::start(vec![Act::Stall(Duration::from_secs(3))], 1);
    let started = Instant::now();
    let err = server
        .client(|b| {
            b.timeout(Duration::from_millis(300))
                .retry(RetryPolicy::none())
        })
        .get_ledger_account()
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(err.is_retryable());
    assert!(started.elapsed() < Duration::from_secs(3));

    let big = format!(
        r#"{{"api_version":"v1","data":{{"pad":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    let server = Scripted::start(vec![json(200, &big)], 1);
    let err = server
        .client(|b| b.max_body_size(64 * 1024))
        .get_ledger_account()
        .unwrap_err();
    assert!(
        matches!(err, Error::BodyTooLarge { limit: 65536 }),
        "{err:?}"
    );
}

#[test]
fn a_server_repeating_a_cursor_is_caught() {
    let page = r#"{"api_version":"v1","data":{"batches":[
        {"id":"20","token":"sb_0f8fad5b-d9cb-469f-a165-70867728950e","file_name":"","date":"2024-01-01T00:00:00Z","status":"BATCH_COMPLETED","version":1,"created_by_job_id":"job_1","partner_id":"partner_1","created_at":"2024-01-01T00:00:00Z"}
    ],"next_cursor":"20","count":{"filtered_count":"5","total_count":"5"}}}"#;
    let server = Scripted::start(vec![json(200, page)], 10);
    let out: Vec<_> = server
        .client(|b| b)
        .settlement_batches(BatchQuery::new().limit(1))
        .collect();
    assert!(
        matches!(out.last(), Some(Err(Error::Pagination(_)))),
        "{out:?}"
    );
    assert!(out.len() <= 3);
    assert!(server.requests().len() <= 3);
}

#[test]
fn no_secret_in_debug_or_errors() {
    let secret = "s3cr3t-key-value";
    let echo = json(
        401,
        &format!(
            r#"{{"api_version":"v1","error":{{"code":"error.unauthorized_access","message":"key {secret} rejected"}}}}"#
        ),
    );
    let html = Act::Reply(502, vec![], format!("<p>{secret}</p>").into_bytes());
    let server = Scripted::start(
        vec![echo, html, json(200, &format!("not json {secret}"))],
        3,
    );
    let client = server.client(|b| b.retry(RetryPolicy::none()));
    let mut texts = vec![
        format!("{client:?}"),
        format!("{:?}", Client::builder("http://x", "agg_1", secret)),
    ];
    for _ in 0..3 {
        let err = client.get_ledger_account().unwrap_err();
        texts.push(format!("{err} {err:?}"));
    }
    let (_mock, mock_client) = mock();
    let keys = mock_client.list_access_keys(&KeyQuery::new()).unwrap();
    let key_text = format!("{keys:?} {:?}", mock_client.get_aggregator().unwrap());
    for key in &keys.keys {
        assert!(!key_text.contains(key.secret.expose()));
    }
    for text in &texts {
        assert!(!text.contains(secret), "{text}");
    }
    assert!(texts[2].contains("<redacted>"), "{}", texts[2]);
}

/// One test per chaos fault: each ends in the right typed error, or in a
/// successful retry, within a bound; never a panic or a hang.
#[test]
fn chaos_faults_end_in_typed_errors_within_bounds() {
    let ledger_len = LEDGER.len();
    type Check = fn(&Result<LedgerAccount, Error>) -> bool;
    let cases: Vec<(&str, Vec<Act>, Check)> = vec![
        ("reset before the answer", vec![Act::Reset], |r| {
            matches!(r, Err(Error::Transport(_)))
        }),
        (
            "reset during the body",
            vec![Act::Truncate(
                200,
                LEDGER.as_bytes()[..40].to_vec(),
                LEDGER.len(),
            )],
            |r| matches!(r, Err(Error::Transport(_) | Error::Decode { .. })),
        ),
        (
            "stall past the timeout",
            vec![Act::Stall(Duration::from_secs(2))],
            |r| matches!(r, Err(Error::Timeout { .. })),
        ),
        (
            "truncated body",
            vec![Act::Truncate(
                200,
                LEDGER.as_bytes()[..ledger_len - 10].to_vec(),
                ledger_len,
            )],
            |r| matches!(r, Err(Error::Transport(_) | Error::Decode { .. })),
        ),
        (
            "Content-Length shorter than the body",
            vec![Act::Raw(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: 20\r\nConnection: close\r\n\r\n{LEDGER}"
                )
                .into_bytes(),
            )],
            |r| matches!(r, Err(Error::Decode { status: 200, .. })),
        ),
        ("non-JSON 200", vec![json(200, "<html>ok</html>")], |r| {
            matches!(r, Err(Error::Decode { status: 200, .. }))
        }),
        (
            "HTML 502",
            vec![Act::Reply(
                502,
                vec![],
                b"<html>bad gateway</html>".to_vec(),
            )],
            |r| matches!(r, Err(Error::Status { status: 502, .. })),
        ),
        (
            "503 then 200",
            vec![json(503, "{}"), json(200, LEDGER)],
            |r| r.is_ok(),
        ),
        (
            "429 with Retry-After seconds",
            vec![
                Act::Reply(429, vec![("Retry-After", "1".into())], b"{}".to_vec()),
                json(200, LEDGER),
            ],
            |r| r.is_ok(),
        ),
        (
            "oversized body",
            vec![json(
                200,
                &format!("{{\"pad\":\"{}\"}}", "x".repeat(100_000)),
            )],
            |r| matches!(r, Err(Error::BodyTooLarge { .. })),
        ),
    ];
    for (name, script, check) in cases {
        let server = Scripted::start(script, 4);
        let client = server.client(|b| {
            b.timeout(Duration::from_millis(500))
                .max_body_size(32 * 1024)
                .retry(
                    RetryPolicy::new()
                        .max_attempts(2)
                        .base_delay(Duration::from_millis(5)),
                )
        });
        let started = Instant::now();
        let result = client.get_ledger_account();
        assert!(check(&result), "{name}: {result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: {:?}",
            started.elapsed()
        );
    }
}
