//! The mock over real HTTP on loopback, judged with ureq and
//! `serde_json::Value` only: independent of the client's model types.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use aggpay_mock::{MockConfig, MockServer};
use proptest::prelude::*;
use serde_json::{Value, json};

use aggpay::rules::KEY_HEADER;

struct Api {
    server: MockServer,
    agent: ureq::Agent,
    key: String,
}

struct Answer {
    status: u16,
    body: Value,
    content_length: Option<String>,
    raw_len: usize,
    date: bool,
    content_type: Option<String>,
}

impl Answer {
    fn data(&self) -> &Value {
        assert_eq!(self.status, 200, "{}", self.body);
        assert_eq!(self.body["api_version"], "v1");
        &self.body["data"]
    }

    fn assert_bare(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{}",
            self.body
        );
        assert!(
            self.body.get("api_version").is_none(),
            "bare form: {}",
            self.body
        );
    }

    fn assert_envelope(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["api_version"], "v1");
        assert_eq!(self.body["error"]["code"], code, "{}", self.body);
        assert!(self.body["error"]["message"].is_string());
    }
}

impl Api {
    fn start(config: MockConfig) -> Self {
        let server = MockServer::start(config).unwrap();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(20)))
            .build()
            .into();
        let key = server.secret_key().expose().to_owned();
        Self { server, agent, key }
    }

    fn new() -> Self {
        Self::start(MockConfig::new())
    }

    fn url(&self, path: &str) -> String {
        format!(
            "{}/v1/aggregators/{}{path}",
            self.server.url(),
            self.server.aggregator_id()
        )
    }

    fn finish(mut response: ureq::http::Response<ureq::Body>) -> Answer {
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_length = header("content-length");
        let content_type = header("content-type");
        let date = header("date").is_some();
        let text = response.body_mut().read_to_string().unwrap();
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("status {status}: body is not JSON ({e}): {text}"));
        Answer {
            status,
            body,
            content_length,
            raw_len: text.len(),
            date,
            content_type,
        }
    }

    fn get_with(&self, path: &str, query: &[(&str, &str)], key: Option<&str>) -> Answer {
        let mut req = self.agent.get(self.url(path));
        for (k, v) in query {
            req = req.query(*k, *v);
        }
        if let Some(key) = key {
            req = req.header(KEY_HEADER, key);
        }
        Self::finish(req.call().unwrap())
    }

    fn get(&self, path: &str, query: &[(&str, &str)]) -> Answer {
        self.get_with(path, query, Some(&self.key))
    }

    fn get_raw(&self, path_and_query: &str) -> Answer {
        let url = format!("{}{path_and_query}", self.server.url());
        Self::finish(
            self.agent
                .get(url)
                .header(KEY_HEADER, &self.key)
                .call()
                .unwrap(),
        )
    }

    fn put(&self, path: &str, key: &str) -> Answer {
        Self::finish(
            self.agent
                .put(self.url(path))
                .header(KEY_HEADER, key)
                .send_empty()
                .unwrap(),
        )
    }

    fn post(&self, path: &str, body: &str, key: &str) -> Answer {
        let req = self
            .agent
            .post(self.url(path))
            .header(KEY_HEADER, key)
            .header("Content-Type", "application/json");
        Self::finish(req.send(body).unwrap())
    }
}

fn s<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} not a string in {v}"))
}

fn numeric(v: &Value, field: &str) -> u64 {
    s(v, field)
        .parse()
        .unwrap_or_else(|_| panic!("{field} not numeric in {v}"))
}

/// One operation with inputs that resolve: method, path, query.
type Operation = (&'static str, String, Vec<(&'static str, String)>);

/// Every operation of API.md.
fn operations(api: &Api) -> Vec<Operation> {
    let info = api.server.info();
    let batch = s(
        &api.get("/settlements/batches", &[("status", "2")]).data()["batches"][0],
        "token",
    )
    .to_owned();
    vec![
        ("GET", String::new(), vec![]),
        ("GET", "/keys".into(), vec![]),
        (
            "PUT",
            format!("/keys/{}/rotate", info.access_key_id.unwrap()),
            vec![],
        ),
        ("GET", "/merchants".into(), vec![]),
        ("GET", "/rail-merchants".into(), vec![]),
        (
            "GET",
            format!("/rail-merchants/{}", info.rail_merchant_id),
            vec![],
        ),
        ("GET", "/qrs".into(), vec![]),
        (
            "GET",
            format!("/payments/{}/charges", info.payment_id.unwrap()),
            vec![],
        ),
        ("GET", "/refunds".into(), vec![]),
        ("GET", "/settlements/batches".into(), vec![]),
        (
            "GET",
            format!("/settlements/batches/{batch}/transactions"),
            vec![],
        ),
        ("POST", "/settlements/report-exports".into(), vec![]),
        (
            "GET",
            "/account-info".into(),
            vec![("iban", info.iban.clone())],
        ),
        (
            "GET",
            "/title-fetch/alias".into(),
            vec![
                ("alias_type", "TILL_CODE".into()),
                ("alias_value", info.till_code.clone()),
            ],
        ),
        ("GET", format!("/alias/{}", info.alias_id), vec![]),
        ("GET", "/ledger/accounts".into(), vec![]),
        ("GET", "/webhooks".into(), vec![]),
    ]
}

fn call(
    api: &Api,
    method: &str,
    path: &str,
    query: &[(&str, String)],
    key: Option<&str>,
) -> Answer {
    let url = api.url(path);
    match method {
        "GET" => {
            let q: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
            api.get_with(path, &q, key)
        }
        "PUT" => {
            let mut req = api.agent.put(url);
            if let Some(k) = key {
                req = req.header(KEY_HEADER, k);
            }
            Api::finish(req.send_empty().unwrap())
        }
        _ => {
            let batch = s(
                &api.get("/settlements/batches", &[]).data()["batches"][0],
                "token",
            )
            .to_owned();
            let mut req = api.agent.post(url);
            if let Some(k) = key {
                req = req.header(KEY_HEADER, k);
            }
            let body = json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"});
            Api::finish(req.send(body.to_string()).unwrap())
        }
    }
}

#[test]
fn every_operation_answers_in_the_envelope_with_headers() {
    let api = Api::new();
    let ops = operations(&api);
    assert_eq!(ops.len(), 17);
    for (method, path, query) in &ops {
        let answer = call(&api, method, path, query, Some(&api.key));
        assert_eq!(answer.status, 200, "{method} {path}: {}", answer.body);
        assert_eq!(answer.body["api_version"], "v1");
        assert!(answer.body["data"].is_object(), "{method} {path}");
        assert_eq!(
            answer.content_length,
            Some(answer.raw_len.to_string()),
            "{method} {path}"
        );
        assert!(answer.date, "{method} {path}: Date header");
        assert_eq!(answer.content_type.as_deref(), Some("application/json"));
    }
}

#[test]
fn authentication_is_required_on_every_operation() {
    let api = Api::new();
    let inactive = api.get("/keys", &[("is_active", "false")]).data()["keys"][0]["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    for (method, path, query) in &operations(&api) {
        for key in [None, Some(""), Some("wrong-key"), Some(inactive.as_str())] {
            let answer = call(&api, method, path, query, key);
            answer.assert_envelope(401, "error.unauthorized_access");
            assert_eq!(
                answer.body["error"]["message"],
                "partner access key is required in request header"
            );
        }
    }
    // A valid key on another aggregator's path.
    let other = format!("{}/v1/aggregators/agg_someoneelse/keys", api.server.url());
    let answer = Api::finish(
        api.agent
            .get(other)
            .header(KEY_HEADER, &api.key)
            .call()
            .unwrap(),
    );
    answer.assert_envelope(401, "error.unauthorized_access");
}

/// Walks a cursor list to its end, bounded; returns the rows.
fn walk(
    api: &Api,
    path: &str,
    field: &str,
    extra: &[(&str, &str)],
) -> (Vec<Value>, Vec<usize>, Value) {
    let mut rows = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor = String::new();
    let mut count;
    for _ in 0..10_000 {
        let mut q: Vec<(&str, &str)> = extra.to_vec();
        if !cursor.is_empty() {
            q.push(("cursor", &cursor));
        }
        let answer = api.get(path, &q);
        let data = answer.data();
        let page = data[field].as_array().unwrap().clone();
        count = data["count"].clone();
        sizes.push(page.len());
        let next = s(data, "next_cursor").to_owned();
        if page.is_empty() {
            assert_eq!(next, "", "empty page ends with an empty cursor");
            return (rows, sizes, count);
        }
        assert_eq!(
            next,
            s(page.last().unwrap(), "id"),
            "next_cursor is the last id"
        );
        rows.extend(page);
        assert_ne!(next, cursor, "cursor repeated");
        cursor = next;
    }
    panic!("walk did not end");
}

fn assert_ordered(rows: &[Value], ascending: bool) {
    let ids: Vec<u64> = rows.iter().map(|r| numeric(r, "id")).collect();
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicates");
    assert!(
        ids.windows(2)
            .all(|w| if ascending { w[0] < w[1] } else { w[0] > w[1] }),
        "order {ascending}: {ids:?}"
    );
}

#[test]
fn batch_walks_are_complete_ordered_and_paged() {
    let api = Api::new();
    let (rows, sizes, count) = walk(&api, "/settlements/batches", "batches", &[]);
    assert_eq!(
        rows.len() as u64,
        count["filtered_count"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    );
    assert_eq!(count["total_count"], "240");
    assert!(
        sizes[..sizes.len() - 2].iter().all(|n| *n == 30),
        "default page 30: {sizes:?}"
    );
    assert_ordered(&rows, false);

    let (asc, sizes, _) = walk(
        &api,
        "/settlements/batches",
        "batches",
        &[("direction", "ASC"), ("limit", "1000")],
    );
    assert_eq!(asc.len(), 240);
    assert!(
        sizes.iter().all(|n| *n <= 100) && sizes[0] == 100,
        "{sizes:?}"
    );
    assert_ordered(&asc, true);

    for direction in ["asc", "", "sideways", "Asc", "DESC"] {
        let page = api.get(
            "/settlements/batches",
            &[("direction", direction), ("limit", "5")],
        );
        let rows = page.data()["batches"].as_array().unwrap().clone();
        assert_ordered(&rows, false);
        assert_eq!(
            rows[0]["id"],
            api.get("/settlements/batches", &[]).data()["batches"][0]["id"]
        );
    }
    for limit in ["0", "30"] {
        let page = api.get("/settlements/batches", &[("limit", limit)]);
        assert_eq!(page.data()["batches"].as_array().unwrap().len(), 30);
    }
    for limit in ["1", "100", "101", "99999999999999999999999"] {
        let n = api.get("/settlements/batches", &[("limit", limit)]).data()["batches"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(n as u64, limit.parse::<u64>().unwrap_or(u64::MAX).min(100));
    }
}

#[test]
fn batch_filters_are_honoured() {
    let api = Api::new();
    let names = [
        "BATCH_CREATED",
        "BATCH_PROCESSING",
        "BATCH_COMPLETED",
        "BATCH_FAILED",
    ];
    let mut total = 0;
    for (code, name) in names.iter().enumerate() {
        let code = code.to_string();
        let (rows, _, count) = walk(
            &api,
            "/settlements/batches",
            "batches",
            &[("status", &code), ("limit", "7")],
        );
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r["status"] == *name));
        assert_eq!(rows.len().to_string(), count["filtered_count"]);
        assert_ordered(&rows, false);
        total += rows.len();
    }
    assert_eq!(total, 240);
    let first = api.get("/settlements/batches", &[("limit", "3")]).data()["batches"][2].clone();
    let token = s(&first, "token");
    let one = api.get("/settlements/batches", &[("batch_id", token)]);
    assert_eq!(one.data()["batches"].as_array().unwrap().len(), 1);
    assert_eq!(one.data()["batches"][0], first);
    assert_eq!(one.data()["count"]["filtered_count"], "1");
    let unknown = format!("sb_{}", "0".repeat(36));
    let none = api.get("/settlements/batches", &[("batch_id", &unknown)]);
    assert_eq!(none.data()["batches"].as_array().unwrap().len(), 0);
    assert_eq!(none.data()["next_cursor"], "");
}

#[test]
fn malformed_list_queries_get_400_in_the_bare_form() {
    let api = Api::new();
    let good = "sb_0f8fad5b-d9cb-469f-a165-70867728950e";
    let mut bad: Vec<(&str, String)> = vec![
        ("limit", "-1".into()),
        ("limit", "abc".into()),
        ("limit", "1.5".into()),
        ("cursor", "abc".into()),
        ("cursor", "-3".into()),
        ("status", "4".into()),
        ("status", "-1".into()),
        ("status", "COMPLETED".into()),
        ("batch_id", good.replacen("sb_", "sx_", 1)),
        ("batch_id", good.to_uppercase()),
    ];
    for len in [0, 1, 3, 20, 38, 40, 60] {
        let token: String = format!("sb_{}", "a".repeat(36))
            .chars()
            .cycle()
            .take(len)
            .collect();
        if len != 39 {
            bad.push(("batch_id", token));
        }
    }
    for (name, value) in &bad {
        let answer = api.get("/settlements/batches", &[(name, value)]);
        answer.assert_bare(400, "error.bad_request");
        let message = answer.body["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid request parameters"),
            "{message}"
        );
        assert!(message.contains(name), "{name}: {message}");
    }
    for (path, q) in [
        ("/keys", ("limit", "-5")),
        ("/keys", ("offset", "x")),
        ("/keys", ("is_active", "yes")),
        ("/merchants", ("enabled", "1")),
        ("/merchants", ("merchant_identifiers", "am_ok,pm_wrong")),
        ("/rail-merchants", ("status", "active")),
        ("/qrs", ("type", "static")),
        ("/qrs", ("aggregator_merchant_id", "mer_x")),
        ("/refunds", ("start_date", "yesterday")),
        ("/webhooks", ("offset", "-1")),
        ("/account-info", ("alias_type", "EMAIL")),
        ("/title-fetch/alias", ("alias_type", "MOBILE")),
    ] {
        api.get(path, &[q]).assert_bare(400, "error.bad_request");
    }
    let agg = api.server.aggregator_id().to_string();
    for raw in [
        "/keys?limit=%zz",
        "/keys?names=%ff",
        "/keys?limit=1&limit=2",
    ] {
        api.get_raw(&format!("/v1/aggregators/{agg}{raw}"))
            .assert_bare(400, "error.bad_request");
    }
}

#[test]
fn transactions_walk_both_ways_and_switch_to_payouts() {
    let api = Api::start(
        MockConfig::new()
            .seed(3)
            .batches(20)
            .max_batch_transactions(250),
    );
    let batches = api.get("/settlements/batches", &[("status", "2"), ("limit", "100")]);
    let busy = batches.data()["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| s(b, "token").to_owned())
        .find(|t| {
            let c = api.get(&format!("/settlements/batches/{t}/transactions"), &[]);
            numeric(&c.data()["count"], "filtered_count") > 100
        })
        .expect("a completed batch with more than 100 transactions");
    let path = format!("/settlements/batches/{busy}/transactions");
    let (desc, _, count) = walk(&api, &path, "transactions", &[]);
    assert_eq!(desc.len().to_string(), count["filtered_count"]);
    assert_ordered(&desc, false);
    for limit in ["1", "30", "100"] {
        let (asc, sizes, _) = walk(
            &api,
            &path,
            "transactions",
            &[("direction", "ASC"), ("limit", limit)],
        );
        assert_eq!(asc.len(), desc.len());
        assert_ordered(&asc, true);
        assert!(
            sizes
                .iter()
                .all(|n| *n as u64 <= limit.parse::<u64>().unwrap())
        );
    }
    for t in &desc {
        assert_eq!(t["latest_batch_id"], busy.as_str());
        assert_eq!(
            t["refund_id"].is_null(),
            t["transaction_type"] == "TT_PAYMENT",
            "{t}"
        );
        let sum: i64 = [
            "fee_amount",
            "sales_tax_on_fee_amount",
            "sales_tax_withholding_amount",
            "income_tax_withholding_amount",
            "digital_tax_amount",
        ]
        .iter()
        .map(|f| s(t, f).parse::<i64>().unwrap())
        .sum();
        assert_eq!(
            s(t, "gross_amount").parse::<i64>().unwrap() - sum,
            s(t, "net_amount").parse::<i64>().unwrap()
        );
    }
    // Each transaction's payment has charges with the same amounts.
    let payment = desc
        .iter()
        .find(|t| t["transaction_type"] == "TT_PAYMENT")
        .unwrap();
    let charges = api.get(
        &format!("/payments/{}/charges", s(payment, "payment_id")),
        &[],
    );
    assert_eq!(charges.data()["net_amount"], payment["net_amount"]);

    let (payouts, _, pcount) = walk(
        &api,
        &path,
        "settlement_transactions",
        &[("only_settlement_txns", "true")],
    );
    assert!(!payouts.is_empty());
    assert_eq!(payouts.len().to_string(), pcount["filtered_count"]);
    let page = api.get(&path, &[("only_settlement_txns", "true")]);
    assert_eq!(page.data()["transactions"], json!([]));
    assert_eq!(page.data()["count"]["total_count"], count["total_count"]);
    assert!(payouts.iter().all(|p| s(p, "token").starts_with("stxn_")));

    api.get(&path, &[("only_settlement_txns", "yes")])
        .assert_bare(400, "error.bad_request");
    api.get("/settlements/batches/sb_short/transactions", &[])
        .assert_bare(400, "error.bad_request");
    let unknown = format!("/settlements/batches/sb_{}/transactions", "f".repeat(36));
    api.get(&unknown, &[]).assert_bare(404, "error.not_found");
}

#[test]
fn a_million_transactions_page_from_anywhere() {
    let api = Api::start(
        MockConfig::new()
            .batches(8)
            .large_batch_transactions(1_000_000),
    );
    let completed = api.get(
        "/settlements/batches",
        &[("status", "2"), ("direction", "ASC")],
    );
    let token = s(&completed.data()["batches"][0], "token").to_owned();
    let path = format!("/settlements/batches/{token}/transactions");
    let first = api.get(&path, &[("limit", "100"), ("direction", "ASC")]);
    assert_eq!(first.data()["count"]["filtered_count"], "1000000");
    let last = api.get(&path, &[("limit", "100")]);
    let top = numeric(&last.data()["transactions"][0], "id");
    let deep = api.get(&path, &[("limit", "100"), ("cursor", &top.to_string())]);
    let ids: Vec<u64> = deep.data()["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| numeric(t, "id"))
        .collect();
    assert_eq!(ids.len(), 100);
    assert!(ids.iter().all(|id| *id < top));
    let end = api.get(
        &path,
        &[
            ("limit", "100"),
            ("direction", "ASC"),
            ("cursor", &top.to_string()),
        ],
    );
    assert_eq!(end.data()["transactions"], json!([]));
}

#[test]
fn offset_lists_page_filter_and_count() {
    let api = Api::new();
    // Keys: integer count, default page 10, filters.
    let keys = api.get("/keys", &[]);
    assert!(keys.data()["count"].is_u64());
    let all = keys.data()["keys"].as_array().unwrap().clone();
    assert_eq!(all.len() as u64, keys.data()["count"].as_u64().unwrap());
    let shapes: HashSet<bool> = all.iter().map(|k| s(k, "id").starts_with("ak_")).collect();
    assert_eq!(shapes.len(), 2, "both access key shapes");
    let active = api.get("/keys", &[("is_active", "true")]);
    assert!(
        active.data()["keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k["is_active"] == true)
    );
    let named = api.get("/keys", &[("names", "prim,BACK")]);
    let names: Vec<&str> = named.data()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| s(k, "name"))
        .collect();
    assert_eq!(names, ["primary", "backup"]);
    let paged = api.get("/keys", &[("limit", "2"), ("offset", "3")]);
    assert_eq!(paged.data()["keys"].as_array().unwrap(), &all[3..5]);

    // Merchants: string count, pages consistent with the whole list.
    let whole = api.get("/merchants", &[("limit", "100")]);
    assert_eq!(whole.data()["count"], "24");
    let rows = whole.data()["merchants"].as_array().unwrap().clone();
    let default = api.get("/merchants", &[]);
    assert_eq!(default.data()["merchants"].as_array().unwrap(), &rows[..10]);
    let page = api.get("/merchants", &[("limit", "5"), ("offset", "20")]);
    assert_eq!(page.data()["merchants"].as_array().unwrap(), &rows[20..]);
    let beyond = api.get("/merchants", &[("offset", "99999999999999999999999")]);
    assert_eq!(beyond.data()["merchants"], json!([]));
    for enabled in ["true", "false"] {
        let f = api.get("/merchants", &[("enabled", enabled), ("limit", "100")]);
        let got = f.data()["merchants"].as_array().unwrap();
        assert!(!got.is_empty());
        assert!(got.iter().all(|m| m["enabled"] == (enabled == "true")));
        assert_eq!(f.data()["count"], got.len().to_string());
    }
    let ids = format!("{},{}", s(&rows[3], "token"), s(&rows[7], "token"));
    let by_id = api.get("/merchants", &[("merchant_identifiers", &ids)]);
    assert_eq!(by_id.data()["merchants"], json!([rows[3], rows[7]]));
    let by_name = api.get("/merchants", &[("names", s(&rows[5], "name"))]);
    assert!(
        by_name.data()["merchants"]
            .as_array()
            .unwrap()
            .contains(&rows[5])
    );

    // Rail merchants: every status, including the empty one.
    let rail = api.get("/rail-merchants", &[("limit", "100")]);
    let statuses: HashSet<&str> = rail.data()["merchants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| s(m, "status"))
        .collect();
    assert_eq!(
        statuses,
        HashSet::from(["Active", "Inactive", "Suspended", ""])
    );
    for status in ["Active", "Inactive", "Suspended"] {
        let f = api.get("/rail-merchants", &[("status", status), ("limit", "100")]);
        assert!(
            f.data()["merchants"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["status"] == status)
        );
    }
    let name = api.get("/rail-merchants", &[("name", "pending onboarding")]);
    assert_eq!(name.data()["count"], "3");

    // QR codes: STATIC by default.
    let qrs = api.get("/qrs", &[("limit", "100")]);
    assert!(
        qrs.data()["qr_codes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q["type"] == "STATIC")
    );
    let dynamic = api.get("/qrs", &[("type", "DYNAMIC"), ("limit", "100")]);
    let dynamic = dynamic.data()["qr_codes"].as_array().unwrap().clone();
    assert!(!dynamic.is_empty() && dynamic.iter().all(|q| q["type"] == "DYNAMIC"));
    let merchant = s(&dynamic[0], "aggregator_merchant_id");
    let mine = api.get(
        "/qrs",
        &[("type", "DYNAMIC"), ("aggregator_merchant_id", merchant)],
    );
    assert!(
        mine.data()["qr_codes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q["aggregator_merchant_id"] == merchant)
    );

    // Webhooks.
    let hooks = api.get("/webhooks", &[("limit", "100")]);
    for h in hooks.data()["endpoints"].as_array().unwrap() {
        let events: Vec<String> = serde_json::from_str(s(h, "event_filter_json")).unwrap();
        assert!(!events.is_empty());
    }
    assert_eq!(hooks.data()["count"], "9");
}

#[test]
fn refunds_filter_with_repeated_keys_dates_and_direction() {
    let api = Api::new();
    let all = api.get("/refunds", &[("limit", "100")]);
    assert_eq!(all.data()["count"], 45);
    let rows = all.data()["keys"].as_array().unwrap().clone();
    let created: Vec<i64> = rows
        .iter()
        .map(|r| {
            s(r, "created_at")
                .parse::<jiff::Timestamp>()
                .unwrap()
                .as_second()
        })
        .collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "DESC by default");
    let asc = api.get("/refunds", &[("limit", "100"), ("direction", "ASC")]);
    let mut reversed = rows.clone();
    reversed.reverse();
    assert_eq!(asc.data()["keys"].as_array().unwrap(), &reversed);
    let both = api.get(
        "/refunds",
        &[
            ("status", "R_FAILED"),
            ("status", "R_CANCELED"),
            ("limit", "100"),
        ],
    );
    let got = both.data()["keys"].as_array().unwrap();
    assert!(
        got.iter()
            .all(|r| r["status"] == "R_FAILED" || r["status"] == "R_CANCELED")
    );
    assert_eq!(
        got.len(),
        rows.iter()
            .filter(|r| r["status"] == "R_FAILED" || r["status"] == "R_CANCELED")
            .count()
    );
    for r in rows.iter().take(3) {
        for field in [
            "payment_id",
            "trace_reference",
            "msg_id",
            "return_id",
            "request_id",
        ] {
            let f = api.get("/refunds", &[(field, s(r, field))]);
            assert!(f.data()["keys"].as_array().unwrap().contains(r), "{field}");
        }
        let f = api.get("/refunds", &[("refund_id", s(r, "token"))]);
        assert_eq!(f.data()["keys"], json!([r]));
        assert_eq!(r["settle_at"].is_null(), r["status"] != "R_COMPLETED");
    }
    let (lo, hi) = (created[30], created[10]);
    let window = api.get(
        "/refunds",
        &[
            ("start_date", &lo.to_string()),
            ("end_date", &hi.to_string()),
            ("limit", "100"),
        ],
    );
    assert_eq!(window.data()["count"], 21, "inclusive on both ends");
}

#[test]
fn lookups_resolve_and_miss() {
    let api = Api::new();
    let info = api.server.info();
    let by_iban = api.get("/account-info", &[("iban", &info.iban)]);
    assert_eq!(by_iban.data()["iban"], info.iban.as_str());
    assert_eq!(by_iban.data()["account_title"], "");
    let titled = api.get(
        "/account-info",
        &[("iban", &info.iban), ("with_title_fetch", "true")],
    );
    assert_ne!(titled.data()["account_title"], "");
    let mobile = api.get(
        "/account-info",
        &[("alias_type", "MOBILE"), ("alias_value", &info.mobile)],
    );
    assert_eq!(mobile.data()["iban"], info.iban.as_str());
    api.get("/account-info", &[("alias_type", "MOBILE")])
        .assert_bare(400, "error.bad_request");
    api.get("/account-info", &[])
        .assert_bare(400, "error.bad_request");
    api.get("/account-info", &[("iban", "PK00NOPE0000000000000000")])
        .assert_bare(404, "error.not_found");
    let till = api.get(
        "/title-fetch/alias",
        &[
            ("alias_type", "TILL_CODE"),
            ("alias_value", &info.till_code),
        ],
    );
    assert_eq!(till.data()["iban"], info.iban.as_str());
    api.get("/title-fetch/alias", &[("alias_value", "1")])
        .assert_bare(404, "error.not_found");
    api.get("/title-fetch/alias", &[])
        .assert_bare(400, "error.bad_request");
    let alias = api.get(&format!("/alias/{}", info.alias_id), &[]);
    assert_eq!(alias.data()["alias_value"], info.till_code.as_str());
    assert_eq!(alias.data()["start_date"].as_str().unwrap().len(), 10);
}

#[test]
fn path_ids_of_the_wrong_shape_get_400_and_unknown_ones_404() {
    let api = Api::new();
    for (bad, unknown) in [
        (
            "/payments/txn_1/charges",
            "/payments/pm_0000000000000000/charges",
        ),
        (
            "/rail-merchants/am_1",
            "/rail-merchants/mer_0000000000000000",
        ),
        ("/alias/mer_1", "/alias/als_0000000000000000"),
        (
            "/settlements/batches/sb_1/transactions",
            "/settlements/batches/sb_00000000-0000-0000-0000-000000000000/transactions",
        ),
    ] {
        api.get(bad, &[]).assert_bare(400, "error.bad_request");
        api.get(unknown, &[]).assert_bare(404, "error.not_found");
    }
    api.put("/keys/ak_tok_1/rotate", &api.key.clone())
        .assert_bare(400, "error.bad_request");
    api.put("/keys/ak_unknown/rotate", &api.key.clone())
        .assert_bare(404, "error.not_found");
    api.get("/nothing-here", &[])
        .assert_bare(404, "error.not_found");
    api.get_raw("/v2/whatever")
        .assert_bare(404, "error.not_found");
    let wrong_method = Api::finish(
        api.agent
            .post(api.url("/keys"))
            .header(KEY_HEADER, &api.key)
            .send("")
            .unwrap(),
    );
    assert_eq!(wrong_method.status, 405);
    let bad_agg = format!("{}/v1/aggregators/merchant_1/keys", api.server.url());
    Api::finish(
        api.agent
            .get(bad_agg)
            .header(KEY_HEADER, &api.key)
            .call()
            .unwrap(),
    )
    .assert_bare(400, "error.bad_request");
}

#[test]
fn rotation_replaces_the_secret_at_once() {
    let api = Api::new();
    let info = api.server.info();
    let id = info.access_key_id.unwrap().to_string();
    let before = api.get("/keys", &[]).data()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str() || k["token"] == id.as_str())
        .unwrap()
        .clone();
    let old = s(&before, "secret").to_owned();
    let rotated = api.put(&format!("/keys/{id}/rotate"), &api.key.clone());
    let new = s(rotated.data(), "secret").to_owned();
    assert_ne!(new, old);
    assert_eq!(rotated.data()["name"], before["name"]);
    api.get_with("/keys", &[], Some(&old))
        .assert_envelope(401, "error.unauthorized_access");
    assert_eq!(api.get_with("/keys", &[], Some(&new)).status, 200);
    // The key in use can rotate itself too; its old secret dies with it.
    let own = api.server.info();
    let _ = own;
    let agg = api.get("", &[]);
    let listed: Vec<&str> = agg.data()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| s(k, "secret"))
        .collect();
    assert!(listed.contains(&new.as_str()));
}

#[test]
fn report_exports_are_seeded_and_validated() {
    let api = Api::new();
    let batch = s(
        &api.get("/settlements/batches", &[]).data()["batches"][0],
        "token",
    )
    .to_owned();
    let created = api.post(
        "/settlements/report-exports",
        &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}).to_string(),
        &api.key.clone(),
    );
    let export = &created.data()["report_export"];
    assert_eq!(export["status"], "REPORT_STATUS_SEEDED");
    assert_eq!(export["attempts"], 1);
    assert!(export["finished_at"].is_null());
    assert!(export["started_at"].is_string());
    assert_eq!(export["merchant_id"], "");
    assert_eq!(export["settlement_batch_id"], batch.as_str());
    assert!(s(export, "token").starts_with("rpt_"));
    let again = api.post(
        "/settlements/report-exports",
        &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}).to_string(),
        &api.key.clone(),
    );
    assert_ne!(
        again.data()["report_export"]["id"],
        export["id"],
        "a second POST makes a second export"
    );
    let mer = api.server.info().rail_merchant_id.to_string();
    let merchant = api.post(
        "/settlements/report-exports",
        &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": mer})
            .to_string(),
        &api.key.clone(),
    );
    assert_eq!(
        merchant.data()["report_export"]["merchant_id"],
        mer.as_str()
    );
    for body in [
        "not json".to_owned(),
        "[]".to_owned(),
        json!({"kind": "REPORT_KIND_BATCH"}).to_string(),
        json!({"settlement_batch_id": batch}).to_string(),
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_OTHER"}).to_string(),
        json!({"settlement_batch_id": "sb_1", "kind": "REPORT_KIND_BATCH"}).to_string(),
        json!({"settlement_batch_id": format!("sb_{}", "0".repeat(36)), "kind": "REPORT_KIND_BATCH"}).to_string(),
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT"}).to_string(),
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH", "merchant_id": mer}).to_string(),
        json!({"settlement_batch_id": 7, "kind": "REPORT_KIND_BATCH"}).to_string(),
    ] {
        api.post("/settlements/report-exports", &body, &api.key.clone()).assert_bare(400, "error.bad_request");
    }
}

#[test]
fn a_path_prefix_is_served_under_the_base_url() {
    let api = Api::start(MockConfig::new().path_prefix("/api/"));
    assert!(api.server.url().ends_with("/api"));
    assert_eq!(api.get("/ledger/accounts", &[]).status, 200);
    let without = format!(
        "http://{}/v1/aggregators/{}/keys",
        api.server.addr(),
        api.server.aggregator_id()
    );
    Api::finish(
        api.agent
            .get(without)
            .header(KEY_HEADER, &api.key)
            .call()
            .unwrap(),
    )
    .assert_bare(404, "error.not_found");
}

/// Sends raw bytes and reads the whole answer, bounded by timeouts.
fn raw_exchange(addr: std::net::SocketAddr, request: &[u8]) -> Option<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream.write_all(request).ok()?;
    let mut out = Vec::new();
    let _ = stream.take(4 * 1024 * 1024).read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| out[i + 4..].to_vec())?;
    Some((status, body))
}

fn assert_documented_error_shape(status: u16, body: &[u8]) {
    if status == 200 {
        return;
    }
    let value: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("{status}: not JSON: {}", String::from_utf8_lossy(body)));
    match status {
        401 | 500 => assert!(
            value["error"]["code"].is_string() && value["api_version"] == "v1",
            "{value}"
        ),
        _ => assert!(
            value["code"].is_string() && value["message"].is_string(),
            "{status} {value}"
        ),
    }
}

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
        if let Some((status, answer)) = raw_exchange(server.addr(), &request) {
            prop_assert!(status < 500, "{status} for {method} {path}: {}", String::from_utf8_lossy(&answer));
            if method != "HEAD" {
                assert_documented_error_shape(status, &answer);
            }
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
    let (status, body) = raw_exchange(api.server.addr(), request.as_bytes()).expect("an answer");
    assert!(status < 500, "{status}");
    assert_documented_error_shape(status, &body);
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

/// Rotations while others read: readers on another key never see a 401,
/// and every rotation takes effect at once (new secret in, old one out).
#[test]
fn rotation_is_atomic_under_concurrent_reads() {
    let api = Api::new();
    let id = api.server.info().access_key_id.unwrap().to_string();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut seen = 0;
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) && seen < 20_000 {
                        let a = api.get("/keys", &[]);
                        assert_eq!(a.status, 200, "a reader saw {}", a.body);
                        // The listing is consistent: each key appears once.
                        let n = a.body["data"]["keys"].as_array().unwrap().len();
                        assert_eq!(n as u64, a.body["data"]["count"].as_u64().unwrap());
                        seen += 1;
                    }
                    seen
                })
            })
            .collect();
        let mut old = None;
        for _ in 0..100 {
            let rotated = api.put(&format!("/keys/{id}/rotate"), &api.key.clone());
            let new = s_owned(rotated.data(), "secret");
            assert_eq!(
                api.get_with("/ledger/accounts", &[], Some(&new)).status,
                200,
                "new secret works at once"
            );
            if let Some(old) = old.replace(new) {
                api.get_with("/ledger/accounts", &[], Some(&old))
                    .assert_envelope(401, "error.unauthorized_access");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let reads: usize = readers.into_iter().map(|h| h.join().unwrap()).sum();
        assert!(reads > 0);
    });
}

fn s_owned(v: &Value, field: &str) -> String {
    s(v, field).to_owned()
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
