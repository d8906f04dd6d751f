//! The faults of the mock's state, each at its places against a faithful
//! mock of the same seed: reads that write (`reads-write`), a write that
//! answers another (`export-upsert`), a request that inherits the previous
//! one's state (`export-body-pooled`), a list answer kept across queries
//! (`rail-merchant-list-cache`), a write answered as failed but committed
//! (`rotation-error-commits`) and a lost update (`rotations-lost-update`).

use aggpay_mock::{Fault, MockConfig};
use serde_json::{Value, json};

use crate::support::*;

fn with_fault(fault: Fault) -> Api {
    Api::start(MockConfig::new().seed(9).fault(fault))
}

fn faithful() -> Api {
    Api::start(MockConfig::new().seed(9))
}

const EXPORTS: &str = "/settlements/report-exports";

/// The first two batches' tokens.
fn batches(api: &Api) -> (String, String) {
    let list = api.get("/settlements/batches", &[("limit", "2")]);
    let rows = &list.data()["batches"];
    (
        s(&rows[0], "token").to_owned(),
        s(&rows[1], "token").to_owned(),
    )
}

fn export(api: &Api, body: &Value) -> Response {
    api.post(EXPORTS, &body.to_string(), &api.key.clone())
}

fn exported(api: &Api, body: &Value) -> Value {
    export(api, body).data()["report_export"].clone()
}

/// `record` without its updated_at.
fn but_updated_at(record: &Value) -> Value {
    let mut record = record.clone();
    record
        .as_object_mut()
        .unwrap()
        .remove("updated_at")
        .expect("the record has an updated_at");
    record
}

/// A timestamp of the mock's usual form: RFC 3339 in UTC, `Z`, at most
/// milliseconds.
fn assert_usual_timestamp(value: &Value) {
    let text = value.as_str().unwrap_or_else(|| panic!("{value}"));
    let (second, fraction) = text
        .strip_suffix('Z')
        .unwrap_or_else(|| panic!("{text}"))
        .split_once('.')
        .unwrap_or((text.trim_end_matches('Z'), ""));
    assert_eq!(second.len(), 19, "{text}");
    assert_eq!(&second[10..11], "T", "{text}");
    assert!(fraction.len() <= 3, "{text}");
    assert!(fraction.bytes().all(|b| b.is_ascii_digit()), "{text}");
}

// reads-write

#[test]
fn reads_write_stamps_the_alias_at_every_read() {
    let api = with_fault(Fault::ReadsWrite);
    let alias = format!("/alias/{}", api.server.info().alias_id);
    let first = api.get(&alias, &[]).data().clone();
    let second = api.get(&alias, &[]).data().clone();
    assert_ne!(first["updated_at"], second["updated_at"]);
    assert_eq!(but_updated_at(&first), but_updated_at(&second));
    assert_usual_timestamp(&first["updated_at"]);
    assert_usual_timestamp(&second["updated_at"]);
    // Nothing else of the alias differs from a faithful read.
    let honest = faithful();
    let read = honest.get(&alias, &[]).data().clone();
    assert_ne!(read["updated_at"], first["updated_at"]);
    assert_eq!(but_updated_at(&read), but_updated_at(&first));
}

#[test]
fn reads_write_saves_the_aggregator_at_a_ledger_read() {
    let api = with_fault(Fault::ReadsWrite);
    let before = api.get("", &[]).data().clone();
    // The aggregator's own read writes nothing.
    assert_eq!(api.get("", &[]).data(), &before);
    let ledger = api.get("/ledger/accounts", &[]).data().clone();
    let after = api.get("", &[]).data().clone();
    assert_ne!(before["updated_at"], after["updated_at"]);
    assert_eq!(but_updated_at(&before), but_updated_at(&after));
    assert_usual_timestamp(&after["updated_at"]);
    api.get("/ledger/accounts", &[]);
    let again = api.get("", &[]).data().clone();
    assert_ne!(after["updated_at"], again["updated_at"]);
    // The ledger's own answer, the aggregator before any ledger read and
    // the other operations are the faithful mock's.
    let honest = faithful();
    assert_eq!(honest.get("/ledger/accounts", &[]).data(), &ledger);
    assert_eq!(honest.get("", &[]).data(), &before);
    let info = api.server.info();
    for path in [
        format!("/rail-merchants/{}", info.rail_merchant_id),
        "/merchants".to_owned(),
        "/keys".to_owned(),
        "/webhooks".to_owned(),
    ] {
        assert_eq!(
            api.get(&path, &[]).body,
            honest.get(&path, &[]).body,
            "{path}"
        );
    }
}

#[test]
fn faithful_reads_write_nothing() {
    let api = faithful();
    let alias = format!("/alias/{}", api.server.info().alias_id);
    let first = api.get(&alias, &[]).body;
    assert_eq!(api.get(&alias, &[]).body, first);
    let before = api.get("", &[]).body;
    api.get("/ledger/accounts", &[]);
    assert_eq!(api.get("", &[]).body, before);
}

// export-upsert

#[test]
fn export_upsert_answers_the_scopes_earlier_export() {
    let api = with_fault(Fault::ExportUpsert);
    let (batch, other) = batches(&api);
    let merchant = api.server.info().rail_merchant_id.to_string();
    let scopes = [
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}),
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant}),
    ];
    let mut ids = Vec::new();
    for body in &scopes {
        let first = exported(&api, body);
        let second = exported(&api, body);
        assert_eq!(first["attempts"], 1, "{first}");
        assert_eq!(second["attempts"], 2, "{second}");
        assert_eq!(first["id"], second["id"]);
        assert_eq!(first["token"], second["token"]);
        ids.push(first["id"].clone());
    }
    // The two kinds are two scopes.
    assert_ne!(ids[0], ids[1]);
    // Another batch is another scope: a new export.
    let elsewhere = exported(
        &api,
        &json!({"settlement_batch_id": other, "kind": "REPORT_KIND_BATCH"}),
    );
    assert_eq!(elsewhere["attempts"], 1);
    assert!(!ids.contains(&elsewhere["id"]), "{elsewhere}");
    assert_eq!(api.server.writes().exports, 3);
}

#[test]
fn faithful_exports_of_one_scope_are_two() {
    let api = faithful();
    let (batch, _) = batches(&api);
    let merchant = api.server.info().rail_merchant_id.to_string();
    for body in [
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}),
        json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant}),
    ] {
        let first = exported(&api, &body);
        let second = exported(&api, &body);
        assert_ne!(first["id"], second["id"]);
        assert_ne!(first["token"], second["token"]);
        assert_eq!(second["attempts"], 1);
    }
}

// export-body-pooled

#[test]
fn export_body_pooled_inherits_the_merchant_id() {
    let merchant_then_batch = |api: &Api| {
        let (batch, _) = batches(api);
        let merchant = api.server.info().rail_merchant_id.to_string();
        let first = exported(
            api,
            &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant}),
        );
        assert_eq!(first["merchant_id"], merchant.as_str());
        let second = exported(
            api,
            &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"}),
        );
        assert_eq!(second["kind"], "REPORT_KIND_BATCH");
        (merchant, second["merchant_id"].clone())
    };
    let (merchant, answered) = merchant_then_batch(&with_fault(Fault::ExportBodyPooled));
    assert_eq!(answered, merchant.as_str());
    let (_, answered) = merchant_then_batch(&faithful());
    assert_eq!(answered, "");
}

#[test]
fn export_body_pooled_inherits_the_batch() {
    let api = with_fault(Fault::ExportBodyPooled);
    let (_, other) = batches(&api);
    exported(
        &api,
        &json!({"settlement_batch_id": other, "kind": "REPORT_KIND_BATCH"}),
    );
    let inherited = exported(&api, &json!({"kind": "REPORT_KIND_BATCH"}));
    assert_eq!(inherited["settlement_batch_id"], other.as_str());
    // A member given is taken: the pool does not override it.
    let (batch, _) = batches(&api);
    let given = exported(
        &api,
        &json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH", "merchant_id": ""}),
    );
    assert_eq!(given["settlement_batch_id"], batch.as_str());
    assert_eq!(given["merchant_id"], "");

    let honest = faithful();
    exported(
        &honest,
        &json!({"settlement_batch_id": other, "kind": "REPORT_KIND_BATCH"}),
    );
    export(&honest, &json!({"kind": "REPORT_KIND_BATCH"})).assert_bare(400, "error.bad_request");
}

// rail-merchant-list-cache

/// Rail-merchant list queries that answer differently on a faithful mock.
const LIST_QUERIES: [&[(&str, &str)]; 4] = [
    &[("status", "Active")],
    &[("status", "Inactive")],
    &[("name", "zz-no-such-name")],
    &[("limit", "1"), ("offset", "2")],
];

#[test]
fn rail_merchant_list_cache_answers_the_previous_query() {
    let api = with_fault(Fault::RailMerchantListCache);
    let first = api.get("/rail-merchants", LIST_QUERIES[0]);
    let listed = first.data().clone();
    for query in &LIST_QUERIES[1..] {
        assert_eq!(
            api.get("/rail-merchants", query).body,
            first.body,
            "{query:?}"
        );
    }
    assert!(
        listed["merchants"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["status"] == "Active")
    );
    // A single rail merchant's read is not kept.
    let info = api.server.info();
    let one = api.get(&format!("/rail-merchants/{}", info.rail_merchant_id), &[]);
    assert_eq!(s(one.data(), "token"), info.rail_merchant_id.to_string());
}

#[test]
fn faithful_rail_merchant_lists_follow_their_query() {
    let api = faithful();
    let bodies: Vec<Value> = LIST_QUERIES
        .iter()
        .map(|query| api.get("/rail-merchants", query).data().clone())
        .collect();
    for (i, body) in bodies.iter().enumerate() {
        for other in &bodies[i + 1..] {
            assert_ne!(body, other);
        }
    }
}

// rotation-error-commits and rotations-lost-update

/// The two keys a client may rotate (`MockInfo`'s samples).
fn rotatable(api: &Api) -> [String; 2] {
    let info = api.server.info();
    [
        info.access_key_id.unwrap().to_string(),
        info.second_access_key_id.unwrap().to_string(),
    ]
}

fn rotate(api: &Api, id: &str) -> Response {
    api.put(&format!("/keys/{id}/rotate"), &api.key.clone())
}

/// Key `id`'s secret in `keys`, a list of key records.
fn secret_in(keys: &Value, id: &str) -> String {
    let key = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id || k["token"] == id)
        .unwrap_or_else(|| panic!("{id} not in {keys}"));
    s_owned(key, "secret")
}

/// Key `id`'s secret as the key list shows it.
fn listed_secret(api: &Api, id: &str) -> String {
    secret_in(&api.get("/keys", &[]).data()["keys"], id)
}

/// Rotates `ids` at the same time, each from a thread of its own on a
/// connection of its own, opened beforehand so that the requests leave
/// together; the answers, in `ids`' order.
fn rotate_at_once(api: &Api, ids: &[String]) -> Vec<RawAnswer> {
    let start = std::sync::Barrier::new(ids.len());
    std::thread::scope(|scope| {
        let threads: Vec<_> = ids
            .iter()
            .map(|id| {
                let mut conn = RawConn::open(api.server.addr());
                let path = format!("/keys/{id}/rotate");
                let request = api.request("PUT", &path, "1.1", "Content-Length: 0\r\n", b"");
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    assert!(conn.send(&request));
                    conn.answer("PUT")
                        .unwrap_or_else(|| panic!("no answer to the rotation of {id}"))
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

/// The new secret a rotation answered.
fn answered_secret(answer: &RawAnswer) -> String {
    let body = answer.json();
    assert_eq!(answer.status, 200, "{body}");
    s_owned(&body["data"], "secret")
}

#[test]
fn rotation_error_commits_fails_from_a_keys_second_rotation_on() {
    let api = with_fault(Fault::RotationErrorCommits);
    for id in rotatable(&api) {
        let before = listed_secret(&api, &id);
        let first = s_owned(rotate(&api, &id).data(), "secret");
        assert_ne!(first, before);
        assert_eq!(listed_secret(&api, &id), first);
        let mut known = vec![before, first.clone()];
        for _ in 0..2 {
            rotate(&api, &id).assert_envelope(500, "error.internal_server_error");
            // Committed all the same: a secret no answer gave.
            let committed = listed_secret(&api, &id);
            assert!(!known.contains(&committed), "{committed} was known");
            assert_eq!(secret_in(&api.get("", &[]).data()["keys"], &id), committed);
            assert_eq!(api.get_with("/keys", &[], Some(&committed)).status, 200);
            known.push(committed);
        }
        // The secret the only success answered is dead.
        api.get_with("/keys", &[], Some(&first))
            .assert_envelope(401, "error.unauthorized_access");
    }
    assert_eq!(api.server.writes().rotations, 6);
    // An unknown key names nothing to rotate, however often.
    for _ in 0..2 {
        rotate(&api, "ak_unknown").assert_bare(404, "error.not_found");
    }
    assert_eq!(api.server.writes().rotations, 6);
}

#[test]
fn rotations_lost_update_loses_one_of_two_rotations_at_once() {
    let api = with_fault(Fault::RotationsLostUpdate);
    let ids = rotatable(&api);
    // A thread starved for longer than the mock's pause sends its rotation
    // after the other's write, and then nothing is lost: such a round is
    // tried again.
    for _ in 0..5 {
        let before: Vec<String> = ids.iter().map(|id| listed_secret(&api, id)).collect();
        let answered: Vec<String> = rotate_at_once(&api, &ids)
            .iter()
            .map(answered_secret)
            .collect();
        for (new, old) in answered.iter().zip(&before) {
            assert_ne!(new, old);
        }
        let listed: Vec<String> = ids.iter().map(|id| listed_secret(&api, id)).collect();
        let shown: Vec<bool> = listed.iter().zip(&answered).map(|(l, a)| l == a).collect();
        if shown == [true, true] {
            continue;
        }
        let lost = shown
            .iter()
            .position(|shown| !shown)
            .expect("one rotation shows");
        assert!(shown[1 - lost], "both rotations were lost: {shown:?}");
        // The later write put back the other key's old secret: the new
        // one it answered is refused.
        assert_eq!(listed[lost], before[lost]);
        api.get_with("/keys", &[], Some(&answered[lost]))
            .assert_envelope(401, "error.unauthorized_access");
        assert_eq!(api.get_with("/keys", &[], Some(&before[lost])).status, 200);
        return;
    }
    panic!("no two rotations overlapped in five rounds");
}

#[test]
fn rotations_lost_update_keeps_rotations_one_after_another() {
    let api = with_fault(Fault::RotationsLostUpdate);
    let [first, second] = rotatable(&api);
    let a = s_owned(rotate(&api, &first).data(), "secret");
    let b = s_owned(rotate(&api, &second).data(), "secret");
    assert_eq!(listed_secret(&api, &first), a);
    assert_eq!(listed_secret(&api, &second), b);
    // One key twice in a row: the second rotation's secret is new, and
    // it stays.
    let again = s_owned(rotate(&api, &first).data(), "secret");
    assert_ne!(again, a);
    assert_eq!(listed_secret(&api, &first), again);
}

#[test]
fn faithful_rotations_at_once_both_show() {
    let api = faithful();
    let ids = rotatable(&api);
    let answered: Vec<String> = rotate_at_once(&api, &ids)
        .iter()
        .map(answered_secret)
        .collect();
    for (id, secret) in ids.iter().zip(&answered) {
        assert_eq!(&listed_secret(&api, id), secret);
    }
}

#[test]
fn faithful_rotations_of_one_key_in_a_row_both_succeed() {
    let api = faithful();
    let [id, _] = rotatable(&api);
    let first = s_owned(rotate(&api, &id).data(), "secret");
    let second = s_owned(rotate(&api, &id).data(), "secret");
    assert_ne!(first, second);
    assert_eq!(listed_secret(&api, &id), second);
    assert_eq!(api.server.writes().rotations, 2);
}
