//! The cursor lists: walks, filters, pages from anywhere.

use aggpay_mock::MockConfig;
use serde_json::json;

use crate::support::*;

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
