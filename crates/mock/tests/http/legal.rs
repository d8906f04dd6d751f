//! Each legal choice changes the mock's answers the way it says (the
//! harness's legal mutation test shows that each still honours API.md).

use aggpay_mock::{Legal, MockConfig};
use serde_json::{Value, json};

use crate::support::*;

fn with(legal: Legal) -> Api {
    Api::start(MockConfig::new().legal(legal))
}

/// The secret of key `id` (its `id` or its `token`, by its shape) in a
/// key list's rows.
fn secret_of(keys: &Value, id: &str) -> String {
    keys.as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id || k["token"] == id)
        .map(|k| s(k, "secret").to_owned())
        .unwrap()
}

fn rows(answer: &Response, key: &str) -> usize {
    answer.data()[key].as_array().unwrap().len()
}

#[test]
fn page_sizes_of_the_offset_lists() {
    let faithful = Api::new();
    let api = with(Legal::OffsetMax7);
    let all = rows(
        &faithful.get("/merchants", &[("limit", "100")]),
        "merchants",
    );
    assert!(
        all > 7,
        "the dataset must have more than 7 merchants: {all}"
    );
    assert_eq!(
        rows(&api.get("/merchants", &[("limit", "100")]), "merchants"),
        7
    );
    // The access-key list keeps API.md's maximum.
    let keys = rows(&faithful.get("/keys", &[("limit", "100")]), "keys");
    assert_eq!(rows(&api.get("/keys", &[("limit", "100")]), "keys"), keys);

    let api = with(Legal::OffsetDefault20);
    assert_eq!(rows(&faithful.get("/merchants", &[]), "merchants"), 10);
    assert_eq!(rows(&api.get("/merchants", &[]), "merchants"), 20);
}

#[test]
fn a_limit_above_the_maximum_is_refused() {
    let api = with(Legal::LimitAboveMax400);
    api.get("/settlements/batches", &[("limit", "101")])
        .assert_bare(400, "error.bad_request");
    api.get("/keys", &[("limit", "101")])
        .assert_bare(400, "error.bad_request");
    assert_eq!(
        api.get("/settlements/batches", &[("limit", "100")]).status,
        200
    );
}

#[test]
fn bodies_take_other_legal_forms() {
    let api = with(Legal::ExtraFields);
    let (a, b) = (api.get("", &[]), api.get("", &[]));
    assert_ne!(a.data()["x_served_seq"], b.data()["x_served_seq"]);
    assert!(a.data()["bank_account"]["x_served_seq"].is_u64());

    let api = with(Legal::PrettyJson);
    let answer = api.get("", &[]);
    assert!(answer.raw_len > answer.body.to_string().len());

    let api = with(Legal::TimestampMicros);
    let created = api.get("", &[]).data()["created_at"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        created.len(),
        "2024-01-01T00:00:00.000000Z".len(),
        "{created}"
    );
    assert!(created.ends_with('Z'));
}

#[test]
fn connections_status_and_keys_take_other_legal_choices() {
    let api = with(Legal::ConnectionClose);
    assert_eq!(api.get("", &[]).connection.as_deref(), Some("close"));

    let api = with(Legal::UnknownAggregator404);
    let other = format!(
        "{}/v1/aggregators/agg_0000000000000000000000",
        api.server.url()
    );
    let answer = Api::finish(
        api.agent
            .get(other)
            .header(aggpay_internal::syntax::KEY_HEADER, &api.key)
            .call()
            .unwrap(),
    );
    answer.assert_bare(404, "error.not_found");

    let api = with(Legal::Created201);
    let batch = api.get("/settlements/batches", &[("limit", "1")]).data()["batches"][0]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}).to_string();
    assert_eq!(
        api.post("/settlements/report-exports", &body, &api.key.clone())
            .status,
        201
    );

    let api = with(Legal::OldSecretGrace);
    let id = api.server.info().access_key_id.unwrap().to_string();
    let old = secret_of(&api.get("/keys", &[("limit", "100")]).data()["keys"], &id);
    assert_eq!(
        api.put(&format!("/keys/{id}/rotate"), &api.key.clone())
            .status,
        200
    );
    assert_eq!(api.get_with("/keys", &[], Some(&old)).status, 200);
}

#[test]
fn lists_and_errors_take_other_legal_readings() {
    let api = Api::start(MockConfig::new().batches(30).legal(Legal::CursorEndEmpty));
    let page = api.get("/settlements/batches", &[("limit", "100")]);
    let data = page.data();
    assert!(data["batches"].as_array().unwrap().len() < 100);
    assert_eq!(data["next_cursor"], "");
    let full = api.get("/settlements/batches", &[("limit", "1")]);
    assert_ne!(full.data()["next_cursor"], "");

    let api = with(Legal::MerchantNamesExact);
    let name = s(
        &api.get("/merchants", &[("limit", "1")]).data()["merchants"][0],
        "name",
    )
    .to_owned();
    let fragment: String = name.chars().take(name.chars().count() - 1).collect();
    assert!(rows(&api.get("/merchants", &[("names", &name)]), "merchants") >= 1);
    assert_eq!(
        rows(&api.get("/merchants", &[("names", &fragment)]), "merchants"),
        0
    );

    let api = with(Legal::CountPage);
    assert_eq!(
        api.get("/merchants", &[("limit", "3")]).data()["count"],
        "3"
    );

    let api = with(Legal::OtherErrorWords);
    let refused = api.get_with("/keys", &[], Some("wrong"));
    refused.assert_envelope(401, "error.unauthorized_access");
    assert_ne!(
        refused.body["error"]["message"],
        "partner access key is required in request header"
    );
}

/// What a fixed set of requests, touching every room a legal choice
/// reads otherwise, gets: status, the headers a choice may change, and
/// the body (exactly, for reads; the fields a choice may change, for the
/// export, whose timestamps are the clock's). Rotation comes last: it
/// changes the keys.
fn probe(api: &Api) -> Vec<String> {
    let send = |method: &str, path: &str, query: &[(&str, &str)], key: &str, body: &str| {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            api.url(path)
        };
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(url)
            .header(KEY_HEADER, key);
        if !body.is_empty() {
            req = req.header("Content-Type", "application/json");
        }
        let mut url_query = String::new();
        for (k, v) in query {
            url_query.push_str(&format!("&{k}={}", v.replace(' ', "%20")));
        }
        if !url_query.is_empty() {
            let uri = format!("{}?{}", req.uri_ref().unwrap(), &url_query[1..]);
            req = req.uri(uri);
        }
        let mut response = api.agent.run(req.body(body.to_owned()).unwrap()).unwrap();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned()
        };
        let coding = header("content-encoding");
        let heads = format!(
            "{} {} {} {} {coding}",
            header("content-type"),
            header("connection"),
            header("cache-control"),
            header("x-request-id") != "-"
        );
        let status = response.status().as_u16();
        let bytes = response.body_mut().read_to_vec().unwrap();
        let coding = (coding != "-").then_some(coding.as_str());
        let bytes = aggpay_internal::coding::decode(coding, bytes, u64::MAX).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let body = if method == "POST" {
            let v: Value = serde_json::from_str(&text).unwrap();
            let e = &v["data"]["report_export"];
            format!("{} {} {}", e["status"], e["attempts"], v["code"])
        } else {
            text
        };
        let label = if path.starts_with("http") {
            "another aggregator"
        } else {
            path
        };
        format!("{method} {label} {query:?}: {status} {heads} {body}")
    };
    let key = api.key.clone();
    let keys = api.get("/keys", &[("limit", "100")]).data()["keys"].clone();
    let inactive = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["is_active"] == false)
        .map(|k| s(k, "secret").to_owned())
        .expect("the mock has an inactive key");
    let upper_name = s(&keys[0], "name").to_uppercase();
    let merchant = s(
        &api.get("/merchants", &[("limit", "1")]).data()["merchants"][0],
        "name",
    )
    .to_owned();
    let fragment: String = merchant.chars().skip(1).collect();
    let batch = s(
        &api.get("/settlements/batches", &[("limit", "1")]).data()["batches"][0],
        "token",
    )
    .to_owned();
    let info = api.server.info();
    let other = format!(
        "{}/v1/aggregators/agg_0000000000000000000000",
        api.server.url()
    );
    let export = json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}).to_string();
    let no_kind = json!({"settlement_batch_id": batch}).to_string();
    let transactions = format!("/settlements/batches/{batch}/transactions");
    let mut seen = vec![
        send("GET", "", &[], &key, ""),
        send("GET", "/keys", &[("limit", "0")], &key, ""),
        send("GET", "/keys", &[("limit", "-1")], &key, ""),
        send("GET", "/keys", &[("names", &upper_name)], &key, ""),
        send("GET", "/keys", &[], &inactive, ""),
        send("GET", "/keys", &[], "wrong", ""),
        send("GET", "/merchants", &[], &key, ""),
        send("GET", "/merchants", &[("limit", "3")], &key, ""),
        send("GET", "/merchants", &[("limit", "100")], &key, ""),
        send("GET", "/merchants", &[("names", &fragment)], &key, ""),
        send("GET", "/merchants", &[("names", "a_b")], &key, ""),
        send("GET", "/keys", &[("offset", "2147483648")], &key, ""),
        send(
            "GET",
            "/refunds",
            &[("limit", "2"), ("offset", "1")],
            &key,
            "",
        ),
        send("GET", "/settlements/batches", &[("limit", "100")], &key, ""),
        send("GET", "/settlements/batches", &[("limit", "101")], &key, ""),
        send("GET", &transactions, &[("limit", "100")], &key, ""),
        send(
            "GET",
            &transactions,
            &[("only_settlement_txns", "true")],
            &key,
            "",
        ),
        send(
            "GET",
            "/account-info",
            &[("iban", &info.iban), ("with_title_fetch", "true")],
            &key,
            "",
        ),
        send("GET", &other, &[], &key, ""),
        // A bad parameter on another aggregator's list: which is checked
        // first.
        send("GET", &format!("{other}/keys"), &[("limit", "x")], &key, ""),
        send("POST", "/settlements/report-exports", &[], &key, &export),
        send("POST", "/settlements/report-exports", &[], &key, &no_kind),
        send("GET", "/settlements/batches", &[("limit", "1")], &key, ""),
        send("GET", "/rail-merchants/mer_1", &[], &key, ""),
        send(
            "GET",
            "/refunds",
            &[("payment_id", "pm_a"), ("payment_id", "pm_b")],
            &key,
            "",
        ),
        send(
            "GET",
            "/account-info",
            &[("iban", &info.iban.to_lowercase())],
            &key,
            "",
        ),
    ];
    let id = info.access_key_id.unwrap().to_string();
    let old = secret_of(&keys, &id);
    let rotate = format!("/keys/{id}/rotate");
    assert_eq!(api.put(&rotate, &key).status, 200);
    seen.push(send("GET", "/webhooks", &[], &old, ""));
    // The keys' identifiers and flags after the rotation (its time is
    // the clock's, not the probe's).
    let after = api.get("/keys", &[("limit", "100")]).data()["keys"].clone();
    seen.push(format!(
        "keys after the rotation: {:?}",
        after
            .as_array()
            .unwrap()
            .iter()
            .map(|k| format!("{} {}", k["key_id"], k["is_active"]))
            .collect::<Vec<_>>()
    ));
    seen.extend(raw_probe(api));
    seen
}

/// What raw requests see of the connection and the head, which a client
/// library hides: field names as written, interim answers, the Date's
/// distance from now, validators, HTTP/1.0, and when the connection
/// ends. Last in the probe: it leaves the connection idle a while.
fn raw_probe(api: &Api) -> Vec<String> {
    let summary = |answer: Option<RawAnswer>| match answer {
        None => "no answer".to_owned(),
        Some(a) => {
            let fields: Vec<String> = a
                .fields
                .iter()
                .map(|(n, v)| match n.to_ascii_lowercase().as_str() {
                    "date" => {
                        let skew = date_skew(v);
                        let when = if skew < -10.0 {
                            "behind"
                        } else if skew > 10.0 {
                            "ahead"
                        } else {
                            "now"
                        };
                        format!("{n}: {when}")
                    }
                    "x-request-id" => n.clone(),
                    _ => format!("{n}: {v}"),
                })
                .collect();
            format!(
                "{:?} {} {fields:?} {} bytes",
                a.interim,
                a.status,
                a.body.len()
            )
        }
    };
    let mut seen = Vec::new();
    let mut conn = RawConn::open(api.server.addr());
    conn.send(&api.raw_get("/merchants?limit=3", ""));
    let first = conn.answer("GET");
    let tag = first
        .as_ref()
        .and_then(|a| a.field("etag"))
        .unwrap_or("\"none\"")
        .to_owned();
    seen.push(summary(first));
    conn.send(&api.raw_get("/merchants?limit=3", &format!("If-None-Match: {tag}\r\n")));
    seen.push(summary(conn.answer("GET")));
    for _ in 0..2 {
        conn.send(&api.raw_get("/ledger/accounts", ""));
        seen.push(summary(conn.answer("GET")));
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    seen.push(format!(
        "closed when idle: {}",
        conn.closed_within(std::time::Duration::from_millis(50))
    ));
    let mut old = RawConn::open(api.server.addr());
    old.send(&api.request("GET", "/ledger/accounts", "1.0", "", b""));
    seen.push(format!("HTTP/1.0: {}", summary(old.answer("GET"))));
    seen
}

/// No legal choice is a no-op: each changes at least one answer of the
/// probe, so the harness's legal mutation test runs against something
/// other than the mock's own reading.
#[test]
fn every_legal_choice_changes_an_answer() {
    let start = |legal: Option<Legal>| {
        let config = MockConfig::new().batches(30);
        Api::start(match legal {
            Some(l) => config.legal(l),
            None => config,
        })
    };
    let faithful = probe(&start(None));
    let again = probe(&start(None));
    let moved: Vec<_> = again
        .iter()
        .zip(&faithful)
        .filter(|(a, b)| a != b)
        .collect();
    assert!(
        moved.is_empty(),
        "the probe is not deterministic: {moved:#?}"
    );
    for legal in Legal::ALL {
        let seen = probe(&start(Some(*legal)));
        assert!(
            seen.iter().zip(&faithful).any(|(a, b)| a != b),
            "{legal}: no answer of the probe changed"
        );
    }
}
