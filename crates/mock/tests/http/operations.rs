//! Every operation answers, authenticated, with the documented headers.

use aggpay_mock::MockConfig;

use crate::support::*;

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
