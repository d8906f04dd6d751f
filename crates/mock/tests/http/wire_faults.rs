//! The answers' bytes, read raw off the wire: HEAD, pipelining, HTTP/1.0,
//! interim answers and malformed requests on a faithful mock; each fault
//! of the wire at its places and not elsewhere; each legal choice of the
//! connection and the head.

use std::time::{Duration, Instant};

use aggpay_mock::{Fault, Latency, Legal, MockConfig};
use serde_json::json;

use crate::support::*;

fn with_fault(fault: Fault) -> Api {
    Api::start(MockConfig::new().seed(9).fault(fault))
}

fn with_legal(legal: Legal) -> Api {
    Api::start(MockConfig::new().seed(9).legal(legal))
}

fn get(api: &Api, path: &str) -> RawAnswer {
    api.exchange("GET", &api.raw_get(path, ""))
}

/// A path of each kind of read the faults name.
fn paths(api: &Api) -> Vec<String> {
    let info = api.server.info();
    vec![
        String::new(),
        "/keys".into(),
        "/merchants".into(),
        "/rail-merchants".into(),
        format!("/rail-merchants/{}", info.rail_merchant_id),
        "/qrs".into(),
        "/refunds".into(),
        "/settlements/batches".into(),
        format!("/alias/{}", info.alias_id),
        "/ledger/accounts".into(),
        "/webhooks".into(),
    ]
}

fn export_body(api: &Api) -> String {
    let batch = get(api, "/settlements/batches?limit=1").json()["data"]["batches"][0]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}).to_string()
}

fn secrets(api: &Api) -> Vec<String> {
    get(api, "/keys?limit=100").json()["data"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["secret"].as_str().unwrap().to_owned())
        .collect()
}

// A faithful mock.

#[test]
fn a_faithful_head_is_hypers_own() {
    let api = Api::start(MockConfig::new().seed(9));
    let answer = get(&api, "/keys");
    let date = answer.field("date").unwrap().to_owned();
    assert_eq!(
        answer.head,
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\ndate: {date}\r\n\r\n",
            answer.body.len()
        )
    );
    assert!(answer.interim.is_empty());
    assert!(answer.date_skew().abs() < 5.0);
}

#[test]
fn head_is_answered_as_the_get_without_a_body() {
    let api = Api::start(MockConfig::new().seed(9).journal(100));
    for path in paths(&api) {
        let got = get(&api, &path);
        let mut conn = RawConn::open(api.server.addr());
        conn.send(&api.request("HEAD", &path, "1.1", "", b""));
        let head = conn.answer("HEAD").expect("an answer to HEAD");
        assert_eq!(head.status, got.status, "{path}");
        let names = |a: &RawAnswer| a.fields.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&head), names(&got), "{path}");
        assert_eq!(
            head.field("content-length"),
            Some(got.body.len().to_string().as_str()),
            "{path}: the GET's length"
        );
        assert_eq!(head.field("content-type"), got.field("content-type"));
        // No body: the next answer on the connection starts clean.
        conn.send(&api.raw_get("/ledger/accounts", ""));
        let next = conn.answer("GET").expect("a next answer");
        assert_eq!(next.status, 200, "{}", next.head);
    }
    // A HEAD is a read: it reaches no write, whose paths refuse it.
    let info = api.server.info();
    let rotate = format!("/keys/{}/rotate", info.access_key_id.unwrap());
    for path in [rotate.as_str(), "/settlements/report-exports"] {
        let answer = api.exchange("HEAD", &api.request("HEAD", path, "1.1", "", b""));
        assert_eq!(answer.status, 405, "{path}");
    }
    assert_eq!(api.server.writes().rotations, 0);
    assert_eq!(api.server.writes().exports, 0);
    let wrong = api.exchange(
        "POST",
        &api.request("POST", "/keys", "1.1", "Content-Length: 0\r\n", b""),
    );
    assert_eq!(wrong.status, 405);
    assert_eq!(wrong.field("allow"), Some("GET, HEAD"));
    let journal = api.server.journal();
    let heads: Vec<_> = journal.iter().filter(|s| s.method == "HEAD").collect();
    assert!(!heads.is_empty());
    assert!(heads.iter().all(|s| s.body.is_empty()));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let api = Api::start(MockConfig::new().seed(9));
    let mut conn = RawConn::open(api.server.addr());
    let mut both = api.raw_get("/keys", "");
    both.extend(api.raw_get("/qrs?limit=3", ""));
    both.extend(api.raw_get("/ledger/accounts", ""));
    conn.send(&both);
    let keys = conn.answer("GET").expect("the first answer");
    assert!(keys.json()["data"]["keys"].is_array());
    let qrs = conn.answer("GET").expect("the second answer");
    assert_eq!(
        qrs.json()["data"]["qr_codes"].as_array().map(Vec::len),
        Some(3),
        "{}",
        qrs.head
    );
    let ledger = conn.answer("GET").expect("the third answer");
    assert_eq!(ledger.status, 200);
}

#[test]
fn http10_is_answered_with_a_length_and_closed() {
    let api = Api::start(MockConfig::new().seed(9).fault(Fault::Chunked));
    let faithful = Api::start(MockConfig::new().seed(9));
    for api in [&faithful, &api] {
        let mut conn = RawConn::open(api.server.addr());
        conn.send(&api.request("GET", "/keys", "1.0", "", b""));
        let answer = conn.answer("GET").expect("an answer");
        assert!(
            answer.head.starts_with("HTTP/1.0 200 OK\r\n"),
            "{}",
            answer.head
        );
        assert!(answer.interim.is_empty());
        assert!(
            answer.field("transfer-encoding").is_none(),
            "{}",
            answer.head
        );
        assert!(answer.json()["data"]["keys"].is_array());
        assert!(conn.closed_within(Duration::from_secs(3)));
    }
}

#[test]
fn expect_continue_and_chunked_bodies_work() {
    let api = Api::start(MockConfig::new().seed(9));
    let body = export_body(&api);
    let mut conn = RawConn::open(api.server.addr());
    let fields = format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n",
        body.len()
    );
    conn.send(&api.request("POST", "/settlements/report-exports", "1.1", &fields, b""));
    // hyper sends 100 once the body is read: send it after a pause.
    std::thread::sleep(Duration::from_millis(100));
    conn.send(body.as_bytes());
    let answer = conn.answer("POST").expect("an answer");
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert_eq!(answer.interim.len(), 1, "{:?}", answer.interim);
    assert!(answer.interim[0].starts_with("HTTP/1.1 100 Continue"));

    let chunked = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let answer = api.exchange(
        "POST",
        &api.request(
            "POST",
            "/settlements/report-exports",
            "1.1",
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
            chunked.as_bytes(),
        ),
    );
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert!(answer.json()["data"]["report_export"]["token"].is_string());
}

#[test]
fn a_malformed_request_gets_the_documented_400_and_the_mock_goes_on() {
    let api = Api::start(MockConfig::new().seed(9));
    for garbage in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    ] {
        let answer = api.exchange("GET", garbage);
        assert_eq!(answer.status, 400, "{}", answer.head);
        assert_eq!(answer.field("content-type"), Some("application/json"));
        assert_documented_error_shape(400, &answer.body);
        assert_eq!(answer.json()["code"], "error.bad_request");
    }
    assert_eq!(get(&api, "/keys").status, 200);
}

// The faults, at their places and not elsewhere.

#[test]
fn date_twice_at_the_batch_and_key_lists() {
    let api = with_fault(Fault::DateTwice);
    for path in paths(&api) {
        let answer = get(&api, &path);
        let dates = answer.all("date");
        let twice = matches!(path.as_str(), "/settlements/batches" | "/keys");
        assert_eq!(
            dates.len(),
            if twice { 2 } else { 1 },
            "{path}: {}",
            answer.head
        );
        for date in dates {
            assert!(date_skew(date).abs() < 5.0, "{date}");
        }
    }
}

#[test]
fn content_type_twice_at_the_merchant_list_and_the_aggregator() {
    let api = with_fault(Fault::ContentTypeTwice);
    for path in paths(&api) {
        let answer = get(&api, &path);
        let expected: &[&str] = if matches!(path.as_str(), "/merchants" | "") {
            &["application/json", "text/plain"]
        } else {
            &["application/json"]
        };
        assert_eq!(answer.all("content-type"), expected, "{path}");
    }
}

#[test]
fn chunked_with_length_at_the_qr_and_webhook_lists() {
    let api = with_fault(Fault::ChunkedWithLength);
    for path in paths(&api) {
        let answer = get(&api, &path);
        let chunked = answer.field("transfer-encoding") == Some("chunked");
        let length = answer
            .field("content-length")
            .map(|l| l.parse::<usize>().unwrap());
        if matches!(path.as_str(), "/qrs" | "/webhooks") {
            assert!(chunked, "{path}: {}", answer.head);
            assert_eq!(length, Some(answer.body.len()), "{path}");
        } else {
            assert!(!chunked, "{path}: {}", answer.head);
            assert_eq!(length, Some(answer.body.len()), "{path}");
        }
        assert!(answer.json().is_object());
    }
}

#[test]
fn bare_lf_heads_at_the_refund_and_rail_merchant_lists() {
    let api = with_fault(Fault::BareLfHeads);
    for path in paths(&api) {
        let answer = get(&api, &path);
        if matches!(path.as_str(), "/refunds" | "/rail-merchants") {
            assert!(!answer.head.contains('\r'), "{path}: {:?}", answer.head);
            assert!(answer.head.ends_with("\n\n"));
        } else {
            assert!(
                answer
                    .head
                    .split_inclusive('\n')
                    .all(|l| l.ends_with("\r\n")),
                "{path}: {:?}",
                answer.head
            );
        }
        assert!(answer.json().is_object(), "{path}");
    }
}

#[test]
fn date_ahead_at_the_ledger_and_the_alias() {
    let api = with_fault(Fault::DateAhead);
    for path in paths(&api) {
        let answer = get(&api, &path);
        let skew = answer.date_skew();
        if path == "/ledger/accounts" || path.starts_with("/alias/") {
            assert!((skew - 5.0 * 3600.0).abs() < 10.0, "{path}: {skew}");
        } else {
            assert!(skew.abs() < 5.0, "{path}: {skew}");
        }
    }
}

#[test]
fn head_with_body_at_the_batch_and_merchant_lists() {
    let api = with_fault(Fault::HeadWithBody);
    for path in paths(&api) {
        let got = get(&api, &path);
        let mut conn = RawConn::open(api.server.addr());
        conn.send(&api.request("HEAD", &path, "1.1", "", b""));
        let head = conn.answer("HEAD").expect("an answer");
        assert_eq!(
            head.field("content-length"),
            Some(got.body.len().to_string().as_str())
        );
        conn.send(&api.raw_get("/ledger/accounts", ""));
        let with_body = matches!(path.as_str(), "/settlements/batches" | "/merchants");
        let skip = if with_body { got.body.len() } else { 0 };
        // Enough: the next answer's head after what the HEAD left.
        let after =
            conn.leftover(|b| b.len() > skip && b[skip..].windows(4).any(|w| w == b"\r\n\r\n"));
        if with_body {
            // The GET's body, then the next answer.
            assert!(
                after.starts_with(&got.body[..got.body.len().min(200)]),
                "{path}"
            );
            assert!(
                after[got.body.len()..].starts_with(b"HTTP/1.1 200 OK\r\n"),
                "{path}"
            );
        } else {
            assert!(after.starts_with(b"HTTP/1.1 200 OK\r\n"), "{path}");
        }
    }
}

#[test]
fn close_ignored_at_the_key_and_webhook_lists() {
    let api = with_fault(Fault::CloseIgnored);
    for path in paths(&api) {
        let mut conn = RawConn::open(api.server.addr());
        conn.send(&api.raw_get(&path, "Connection: close\r\n"));
        let answer = conn.answer("GET").expect("an answer");
        assert_eq!(answer.status, 200, "{path}");
        if matches!(path.as_str(), "/keys" | "/webhooks") {
            assert_eq!(answer.field("connection"), None, "{path}: {}", answer.head);
            assert!(!conn.closed_within(Duration::from_millis(300)), "{path}");
            conn.send(&api.raw_get("/ledger/accounts", ""));
            assert_eq!(conn.answer("GET").map(|a| a.status), Some(200), "{path}");
        } else {
            assert_eq!(answer.field("connection"), Some("close"), "{path}");
            assert!(conn.closed_within(Duration::from_secs(3)), "{path}");
        }
    }
}

#[test]
fn pipeline_drops_second_at_the_qr_list_and_the_ledger() {
    let api = with_fault(Fault::PipelineDropsSecond);
    for path in paths(&api) {
        let mut conn = RawConn::open(api.server.addr());
        let mut two = api.raw_get("/keys", "");
        two.extend(api.raw_get(&path, ""));
        conn.send(&two);
        assert_eq!(conn.answer("GET").map(|a| a.status), Some(200), "{path}");
        let second = conn.answer_within("GET", Duration::from_millis(700));
        if matches!(path.as_str(), "/qrs" | "/ledger/accounts") {
            assert!(second.is_none(), "{path}: answered");
            assert!(
                !conn.closed_within(Duration::from_millis(100)),
                "{path}: closed"
            );
        } else {
            assert_eq!(second.map(|a| a.status), Some(200), "{path}");
        }
        // Sent after the answer, the same request is served.
        let mut conn = RawConn::open(api.server.addr());
        conn.send(&api.raw_get("/keys", ""));
        assert!(conn.answer("GET").is_some());
        conn.send(&api.raw_get(&path, ""));
        assert_eq!(conn.answer("GET").map(|a| a.status), Some(200), "{path}");
    }
}

#[test]
fn chunked_body_empty_at_the_export_and_the_rotation() {
    let api = with_fault(Fault::ChunkedBodyEmpty);
    let faithful = Api::start(MockConfig::new().seed(9));
    let info = api.server.info();
    let batch_export = export_body(&api);
    let merchant_export = json!({
        "settlement_batch_id": serde_json::from_str::<serde_json::Value>(&batch_export).unwrap()["settlement_batch_id"],
        "kind": "REPORT_KIND_MERCHANT",
        "merchant_id": info.rail_merchant_id.to_string(),
    })
    .to_string();
    let post = |api: &Api, body: &str, chunked: bool| {
        let (fields, bytes) = if chunked {
            (
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n".to_owned(),
                format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()),
            )
        } else {
            (
                format!(
                    "Content-Type: application/json\r\nContent-Length: {}\r\n",
                    body.len()
                ),
                body.to_owned(),
            )
        };
        api.exchange(
            "POST",
            &api.request(
                "POST",
                "/settlements/report-exports",
                "1.1",
                &fields,
                bytes.as_bytes(),
            ),
        )
    };
    for body in [&batch_export, &merchant_export] {
        assert_eq!(post(&api, body, false).status, 200, "{body}");
        assert_eq!(post(&api, body, true).status, 400, "{body}");
        assert_eq!(post(&faithful, body, true).status, 200, "{body}");
    }
    let rotate = format!("/keys/{}/rotate", info.access_key_id.unwrap());
    let before = secrets(&api);
    let chunked = api.exchange(
        "PUT",
        &api.request(
            "PUT",
            &rotate,
            "1.1",
            "Transfer-Encoding: chunked\r\n",
            b"0\r\n\r\n",
        ),
    );
    assert_eq!(chunked.status, 200);
    assert!(
        before.contains(
            &chunked.json()["data"]["secret"]
                .as_str()
                .unwrap()
                .to_owned()
        )
    );
    assert_eq!(secrets(&api), before, "nothing rotated");
    let plain = api.exchange(
        "PUT",
        &api.request("PUT", &rotate, "1.1", "Content-Length: 0\r\n", b""),
    );
    assert_eq!(plain.status, 200);
    assert_ne!(secrets(&api), before, "rotated");
}

#[test]
fn continue_to_http10_at_the_rotation_export_and_key_list() {
    let api = with_fault(Fault::ContinueToHttp10);
    let info = api.server.info();
    let body = export_body(&api);
    let export_fields = format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    let rotate = format!("/keys/{}/rotate", info.access_key_id.unwrap());
    let at_places = [
        ("GET", "/keys".to_owned(), String::new(), String::new()),
        (
            "PUT",
            rotate,
            "Content-Length: 0\r\n".to_owned(),
            String::new(),
        ),
        (
            "POST",
            "/settlements/report-exports".to_owned(),
            export_fields,
            body,
        ),
    ];
    for (method, path, fields, body) in &at_places {
        for version in ["1.0", "1.1"] {
            let answer = api.exchange(
                method,
                &api.request(method, path, version, fields, body.as_bytes()),
            );
            assert_eq!(answer.status, 200, "{method} {path}");
            if version == "1.0" {
                assert_eq!(
                    answer.interim,
                    ["HTTP/1.1 100 Continue\r\n\r\n"],
                    "{method} {path}"
                );
                assert!(answer.head.starts_with("HTTP/1.0 200 OK"));
            } else {
                assert!(answer.interim.is_empty(), "{method} {path} 1.1");
            }
        }
    }
    for path in paths(&api).into_iter().filter(|p| p != "/keys") {
        let answer = api.exchange("GET", &api.request("GET", &path, "1.0", "", b""));
        assert!(answer.interim.is_empty(), "{path}");
    }
}

#[test]
fn etag_without_secrets_keeps_old_secrets_where_etags_do_not() {
    for (legal, fault) in [(true, false), (false, true)] {
        let mut config = MockConfig::new().seed(9);
        if legal {
            config = config.legal(Legal::Etags);
        }
        if fault {
            config = config.fault(Fault::EtagWithoutSecrets);
        }
        let api = Api::start(config);
        let first = get(&api, "/keys?limit=100");
        let tag = first.field("etag").expect("an ETag").to_owned();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "strong: {tag}");
        let again = api.exchange(
            "GET",
            &api.raw_get("/keys?limit=100", &format!("If-None-Match: {tag}\r\n")),
        );
        assert_eq!(again.status, 304);
        assert!(again.body.is_empty());
        assert_eq!(again.field("etag"), Some(tag.as_str()));
        let head = api.exchange(
            "HEAD",
            &api.request("HEAD", "/keys?limit=100", "1.1", "", b""),
        );
        assert_eq!(head.field("etag"), Some(tag.as_str()));
        let id = api.server.info().access_key_id.unwrap();
        let rotated = api.exchange(
            "PUT",
            &api.request(
                "PUT",
                &format!("/keys/{id}/rotate"),
                "1.1",
                "Content-Length: 0\r\n",
                b"",
            ),
        );
        assert_eq!(rotated.status, 200);
        let after = api.exchange(
            "GET",
            &api.raw_get("/keys?limit=100", &format!("If-None-Match: {tag}\r\n")),
        );
        if fault {
            // The rotation is not seen: the client keeps the old secret.
            assert_eq!(after.status, 304);
        } else {
            assert_eq!(after.status, 200);
            assert_ne!(after.field("etag"), Some(tag.as_str()));
        }
        let merchants = get(&api, "/merchants");
        assert_eq!(merchants.field("etag").is_some(), legal, "merchants");
        let aggregator = get(&api, "");
        assert!(aggregator.field("etag").is_some());
    }
}

#[test]
fn params_before_key_at_the_batch_transaction_and_key_lists() {
    let api = with_fault(Fault::ParamsBeforeKey);
    let faithful = Api::start(MockConfig::new().seed(9));
    let raw = |api: &Api, path: &str, key: Option<&str>| {
        let mut request = format!("GET {} HTTP/1.1\r\nHost: x\r\n", api.path(path));
        if let Some(key) = key {
            request.push_str(&format!("{KEY_HEADER}: {key}\r\n"));
        }
        request.push_str("\r\n");
        api.exchange("GET", request.as_bytes())
    };
    let bad = [
        "/settlements/batches?limit=-1",
        "/settlements/batches?status=9",
        "/settlements/batches/sb_nope/transactions",
        "/keys?limit=-1",
    ];
    for path in bad {
        for key in [None, Some("wrong")] {
            let answer = raw(&api, path, key);
            assert_eq!(answer.status, 400, "{path} {key:?}");
            assert_documented_error_shape(400, &answer.body);
            assert_eq!(raw(&faithful, path, key).status, 401, "{path} {key:?}");
        }
        assert_eq!(raw(&api, path, Some(&api.key)).status, 400, "{path}");
    }
    for path in ["/merchants?limit=-1", "/settlements/batches", "/keys"] {
        assert_eq!(raw(&api, path, None).status, 401, "{path}");
    }
}

// The legal choices of the connection and the head.

#[test]
fn request_cap_closes_after_the_third_answer() {
    let api = with_legal(Legal::RequestCap);
    let mut conn = RawConn::open(api.server.addr());
    for n in 1..=3 {
        conn.send(&api.raw_get("/ledger/accounts", ""));
        let answer = conn.answer("GET").expect("an answer");
        assert_eq!(answer.status, 200);
        let close = answer.field("connection") == Some("close");
        assert_eq!(close, n == 3, "answer {n}: {}", answer.head);
    }
    assert!(conn.closed_within(Duration::from_secs(3)));
}

#[test]
fn idle_close_closes_an_idle_connection_but_no_request_under_way() {
    let api = with_legal(Legal::IdleClose);
    let mut conn = RawConn::open(api.server.addr());
    conn.send(&api.raw_get("/keys", ""));
    assert_eq!(conn.answer("GET").map(|a| a.status), Some(200));
    let started = Instant::now();
    assert!(conn.closed_within(Duration::from_secs(3)));
    assert!(started.elapsed() < Duration::from_secs(1));

    // A request that takes longer than the idle time is answered whole.
    let slow = Api::start(
        MockConfig::new()
            .seed(9)
            .legal(Legal::IdleClose)
            .latency(Latency::fixed(Duration::from_millis(200))),
    );
    let mut conn = RawConn::open(slow.server.addr());
    for _ in 0..2 {
        conn.send(&slow.raw_get("/keys", ""));
        let answer = conn.answer("GET").expect("an answer");
        assert!(answer.json()["data"]["keys"].is_array());
    }
    // Before the first answer, the connection is not idle-closed.
    let mut fresh = RawConn::open(api.server.addr());
    assert!(!fresh.closed_within(Duration::from_millis(200)));
}

#[test]
fn title_case_fields() {
    let api = with_legal(Legal::TitleCaseFields);
    let answer = get(&api, "/keys");
    let names: Vec<&str> = answer.fields.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        ["Content-Type", "Content-Length", "Date"],
        "{}",
        answer.head
    );
    let faithful = get(&Api::start(MockConfig::new().seed(9)), "/keys");
    assert_eq!(faithful.fields[0].0, "content-type");
}

#[test]
fn early_hints_before_every_answer_to_http11() {
    let api = with_legal(Legal::EarlyHints);
    for path in ["/keys", "/nothing"] {
        let answer = get(&api, path);
        assert_eq!(
            answer.interim,
            ["HTTP/1.1 103 Early Hints\r\nLink: </v1>; rel=preload\r\n\r\n"],
            "{path}"
        );
    }
    let old = api.exchange("GET", &api.request("GET", "/keys", "1.0", "", b""));
    assert!(old.interim.is_empty());
    assert_eq!(old.status, 200);
}

#[test]
fn http10_refused_with_505() {
    let api = with_legal(Legal::Http10Refused);
    let mut conn = RawConn::open(api.server.addr());
    conn.send(&api.request("GET", "/keys", "1.0", "Connection: keep-alive\r\n", b""));
    let answer = conn.answer("GET").expect("an answer");
    assert_eq!(answer.status, 505, "{}", answer.head);
    assert_documented_error_shape(505, &answer.body);
    assert!(answer.json()["code"].is_string());
    assert!(conn.closed_within(Duration::from_secs(3)));
    assert_eq!(get(&api, "/keys").status, 200);
}

#[test]
fn date_behind_by_20_seconds() {
    let api = with_legal(Legal::DateBehind);
    for path in ["/keys", "/nothing"] {
        let skew = get(&api, path).date_skew();
        assert!((-25.0..=-15.0).contains(&skew), "{path}: {skew}");
    }
}
