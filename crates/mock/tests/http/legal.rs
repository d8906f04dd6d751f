//! Each legal choice changes the mock's answers the way it says (the
//! harness's legal mutation test shows that each still honours API.md).

use aggpay_mock::{Legal, MockConfig};
use serde_json::json;

use crate::support::*;

fn with(legal: Legal) -> Api {
    Api::start(MockConfig::new().legal(legal))
}

fn rows(answer: &Answer, key: &str) -> usize {
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
            .header(aggpay_internal::rules::KEY_HEADER, &api.key)
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
    let old = api.get("/keys", &[("limit", "100")]).data()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str() || k["token"] == id.as_str())
        .map(|k| s(k, "secret").to_owned())
        .unwrap();
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
