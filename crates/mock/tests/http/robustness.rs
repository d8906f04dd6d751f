//! Arbitrary input, large input and concurrent load.

use std::time::Duration;

use aggpay_mock::{MockConfig, MockServer};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary methods, paths, queries, headers and bodies: never a 5xx,
    /// always a JSON body of a documented shape.
    #[test]
    fn never_a_5xx_whatever_is_sent(
        method in prop::sample::select(vec!["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
        segments in prop::collection::vec(prop_oneof![
            Just("keys".to_owned()), Just("settlements".to_owned()), Just("batches".to_owned()),
            Just("transactions".to_owned()), Just("rotate".to_owned()), Just("payments".to_owned()),
            Just("charges".to_owned()), Just("alias".to_owned()), Just("sb_0f8fad5b-d9cb-469f-a165-70867728950e".to_owned()),
            "[a-zA-Z0-9_%.~-]{0,45}",
        ], 0..6),
        use_agg in any::<bool>(),
        query in prop::collection::vec((
            prop_oneof![
                Just("limit".to_owned()), Just("cursor".to_owned()), Just("offset".to_owned()),
                Just("batch_id".to_owned()), Just("status".to_owned()), Just("direction".to_owned()),
                "[a-z_]{1,12}",
            ],
            prop_oneof!["[ -~]{0,30}", "%[0-9a-fA-F]{0,2}", "[0-9]{1,40}", "-[0-9]{1,5}", "[0-9a-z]{2000,6000}"],
        ), 0..5),
        header_value in "[ -~]{0,80}",
        body in prop_oneof![
            Just(Vec::new()),
            prop::collection::vec(any::<u8>(), 0..300),
            Just(b"{\"settlement_batch_id\": 5}".to_vec()),
            Just(b"{\"settlement_batch_id\": [], \"kind\": {}, \"merchant_id\": true}".to_vec()),
            Just(b"{\"kind\": \"REPORT_KIND_BATCH\"".to_vec()),
            Just(format!("{{\"settlement_batch_id\": \"{}\", \"kind\": \"REPORT_KIND_BATCH\"}}", "s".repeat(1024 * 1024)).into_bytes()),
        ],
        with_key in any::<bool>(),
    ) {
        let server = MockServer::start(MockConfig::new().batches(12)).unwrap();
        let mut path = if use_agg { format!("/v1/aggregators/{}", server.aggregator_id()) } else { "/v1/aggregators".to_owned() };
        for s in &segments {
            path.push('/');
            path.push_str(&s.replace(' ', "%20"));
        }
        let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={}", v.replace([' ', '#', '&'], "+"))).collect();
        if !q.is_empty() {
            path.push('?');
            path.push_str(&q.join("&"));
        }
        let key = if with_key { server.secret_key().expose().to_owned() } else { header_value.clone() };
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Custom: {header_value}\r\n{KEY_HEADER}: {key}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ).into_bytes();
        request.extend_from_slice(&body);
        // No answer at all is a failure too: the server must answer.
        let answered = raw_exchange(server.addr(), &request);
        prop_assert!(answered.is_some(), "no answer to {} {}", method, path);
        let (status, answer) = answered.unwrap_or_default();
        prop_assert!(status < 500, "{status} for {method} {path}: {}", String::from_utf8_lossy(&answer));
        if method != "HEAD" {
            assert_documented_error_shape(status, &answer);
        }
    }
}

#[test]
fn huge_query_values_and_bodies_are_refused_cleanly() {
    let api = Api::new();
    let big = "9".repeat(60_000);
    assert_eq!(api.get("/keys", &[("names", &big)]).data()["count"], 0);
    api.get("/settlements/batches", &[("batch_id", &big)])
        .assert_bare(400, "error.bad_request");
    let path = format!(
        "/v1/aggregators/{}/keys?names={}",
        api.server.aggregator_id(),
        "9".repeat(1_000_000)
    );
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{KEY_HEADER}: {}\r\n\r\n",
        api.key
    );
    // A head over the limit is the HTTP layer's 431, and the server goes on.
    let (status, _) = raw_exchange(api.server.addr(), request.as_bytes()).expect("an answer");
    assert_eq!(status, 431);
    assert_eq!(api.get("/keys", &[]).status, 200);
    let huge = format!(
        "{{\"settlement_batch_id\": \"{}\"}}",
        "x".repeat(2 * 1024 * 1024)
    );
    api.post("/settlements/report-exports", &huge, &api.key.clone())
        .assert_bare(400, "error.bad_request");
}

/// 8 threads x 2,000 requests over every operation: no transport error, no
/// 5xx, every body JSON of a documented shape.
#[test]
fn the_mock_holds_under_concurrent_load() {
    let api = Api::start(MockConfig::new().workers(4));
    let ops = operations(&api);
    let key = api.key.clone();
    let (errors, fivexx, bad) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let (api, ops, key) = (&api, &ops, key.clone());
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .timeout_global(Some(Duration::from_secs(20)))
                        .build()
                        .into();
                    let (mut errors, mut fivexx, mut bad) = (0, 0, 0);
                    for i in 0..2_000usize {
                        // Rotation is exercised by its own test: rotating
                        // here would invalidate the others' samples.
                        let (method, path, query) = &ops[(i * 7 + t) % ops.len()];
                        if *method == "PUT" {
                            continue;
                        }
                        let url = api.url(path);
                        let sent = if *method == "GET" {
                            let mut r = agent.get(url).header(KEY_HEADER, &key);
                            for (k, v) in query {
                                r = r.query(*k, v);
                            }
                            r.call()
                        } else {
                            let batch = "sb_00000000-0000-0000-0000-000000000000";
                            agent.post(url).header(KEY_HEADER, &key).send(
                                json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"})
                                    .to_string(),
                            )
                        };
                        match sent {
                            Err(_) => errors += 1,
                            Ok(mut r) => {
                                let status = r.status().as_u16();
                                if status >= 500 {
                                    fivexx += 1;
                                }
                                let body = r.body_mut().read_to_vec().unwrap_or_default();
                                let ok = match serde_json::from_slice::<Value>(&body) {
                                    Ok(v) if status == 200 => {
                                        v["api_version"] == "v1" && v["data"].is_object()
                                    }
                                    Ok(v) => {
                                        v["code"].is_string() || v["error"]["code"].is_string()
                                    }
                                    Err(_) => false,
                                };
                                if !ok {
                                    bad += 1;
                                }
                            }
                        }
                    }
                    (errors, fivexx, bad)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
    });
    assert_eq!(
        (errors, fivexx, bad),
        (0, 0, 0),
        "transport errors, 5xx, invalid bodies"
    );
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~]{0,40}".prop_map(Value::from),
        Just(Value::from("REPORT_KIND_BATCH")),
        Just(Value::from("sb_00000000-0000-0000-0000-000000000000")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("settlement_batch_id".to_owned()),
                    Just("kind".to_owned()),
                    Just("merchant_id".to_owned()),
                    "[a-z_]{1,10}"
                ],
                inner,
                0..4,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary JSON (wrong types, nesting, unknown fields) to the one
    /// operation with a body: a 200 or a bare 400, nothing else.
    #[test]
    fn report_export_bodies_get_200_or_a_bare_400(body in json_value()) {
        let api = Api::start(MockConfig::new().batches(4));
        let answer = api.post("/settlements/report-exports", &body.to_string(), &api.key.clone());
        prop_assert!(answer.status == 200 || answer.status == 400, "{} for {body}", answer.status);
        if answer.status == 400 {
            prop_assert_eq!(&answer.body["code"], "error.bad_request");
        }
    }
}
