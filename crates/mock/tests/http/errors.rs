//! Malformed queries and path ids: 400 and 404 in the bare form.

use crate::support::*;

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
