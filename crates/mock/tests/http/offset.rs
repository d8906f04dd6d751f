//! The offset lists: pages, filters, counts.

use std::collections::HashSet;

use serde_json::json;

use crate::support::*;

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
