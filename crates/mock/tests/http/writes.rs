//! The two writes: key rotation and report exports.

use serde_json::json;

use crate::support::*;

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

/// The info names two keys to rotate besides the key in use: both
/// active, all three different.
#[test]
fn the_info_names_two_other_active_keys_to_rotate() {
    let api = Api::new();
    let info = api.server.info();
    let first = info.access_key_id.unwrap().to_string();
    let second = info.second_access_key_id.unwrap().to_string();
    assert_ne!(first, second);
    let keys = api.get("/keys", &[]).data()["keys"].clone();
    let find = |id: &str| {
        keys.as_array()
            .unwrap()
            .iter()
            .find(|k| k["id"] == id || k["token"] == id)
            .unwrap_or_else(|| panic!("{id} not listed"))
            .clone()
    };
    let in_use = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["secret"] == api.key.as_str())
        .unwrap()
        .clone();
    for id in [&first, &second] {
        let key = find(id);
        assert_eq!(key["is_active"], true, "{key}");
        assert_ne!(key["id"], in_use["id"]);
        assert_ne!(key["secret"], in_use["secret"]);
    }
}
