//! Every operation against the mock, filters end to end, and the exact
//! query strings on the wire.

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};

use crate::support::{Scripted, ScriptedClient, json, mock, token};

#[test]
fn every_operation_decodes_the_mock() {
    let (server, client) = mock();
    let info = server.info();
    let aggregator = client.get_aggregator().unwrap();
    assert_eq!(&aggregator.token, server.aggregator_id());
    assert!(!aggregator.keys.is_empty());
    let keys = client.list_access_keys(&KeyQuery::new()).unwrap();
    assert_eq!(keys.count as usize, keys.items.len());
    assert_eq!(keys.total_count, None);
    let merchants = client
        .list_merchants(&MerchantQuery::new().limit(5))
        .unwrap();
    assert_eq!(merchants.items.len(), 5);
    let rail = client
        .list_rail_merchants(&RailMerchantQuery::new())
        .unwrap();
    assert!(!rail.items.is_empty());
    let one = client.get_rail_merchant(&info.rail_merchant_id).unwrap();
    assert_eq!(one.token, info.rail_merchant_id);
    let qrs = client.list_qr_codes(&QrCodeQuery::new()).unwrap();
    assert!(qrs.items.iter().all(|q| q.qr_type == QrType::Static));
    let payment = info.payment_id.clone().unwrap();
    let charges = client.get_payment_charges(&payment).unwrap();
    assert_eq!(charges.expected_net(), Some(charges.net_amount));
    let refunds = client.list_refunds(&RefundQuery::new()).unwrap();
    assert_eq!(refunds.items.len(), 10);
    let batches = client.list_settlement_batches(&BatchQuery::new()).unwrap();
    assert_eq!(batches.items.len(), 30);
    assert!(batches.total_count.is_some() && batches.next_cursor.is_some());
    let busy = batches
        .items
        .iter()
        .find(|b| {
            client
                .list_batch_transactions(&b.token, &TransactionQuery::new())
                .unwrap()
                .count
                > 0
        })
        .unwrap();
    let page = client
        .list_batch_transactions(&busy.token, &TransactionQuery::new())
        .unwrap();
    assert!(!page.items.is_empty());
    let payouts = client
        .list_batch_payouts(&busy.token, &TransactionQuery::new())
        .unwrap();
    assert!(!payouts.items.is_empty());
    assert!(payouts.items.iter().all(|p| {
        p.token
            .as_ref()
            .is_some_and(|t| t.as_str().starts_with("stxn_"))
    }));
    // A batch's row counts without a walk: what a walk finds.
    let all = TransactionQuery::new();
    let walked = client.batch_transactions(&busy.token, &all).count() as u64;
    assert_eq!(
        client.count_batch_transactions(&busy.token, &all).unwrap(),
        walked
    );
    let paid = client.batch_payouts(&busy.token, &all).count() as u64;
    assert_eq!(client.count_batch_payouts(&busy.token, &all).unwrap(), paid);
    let export = client
        .create_report_export(&NewReportExport::batch(batches.items[0].token.clone()))
        .unwrap();
    assert_eq!(export.status, ReportStatus::Seeded);
    assert_eq!(export.attempts, 1);
    assert_eq!(export.finished_at, None);
    assert_eq!(export.merchant_id, None);
    assert_eq!(export.record_count, 0);
    let by_merchant = client
        .create_report_export(&NewReportExport::merchant(
            batches.items[0].token.clone(),
            info.rail_merchant_id.clone(),
        ))
        .unwrap();
    assert_eq!(
        by_merchant.merchant_id.as_ref(),
        Some(&info.rail_merchant_id)
    );
    let account = client
        .get_account_info(&AccountQuery::iban(&info.iban).with_title(true))
        .unwrap();
    assert_eq!(account.iban, info.iban);
    assert!(!account.account_title.is_empty());
    let mobile = client
        .get_account_info(&AccountQuery::mobile(&info.mobile))
        .unwrap();
    assert_eq!(mobile.info_type, AccountInfoType::AliasTypeUnspecified);
    let till = client
        .fetch_till_code_title(&TillCodeQuery::new(&info.till_code))
        .unwrap();
    assert_eq!(till.iban, info.iban);
    assert!(till.account_title.is_empty());
    let titled = client
        .fetch_till_code_title(&TillCodeQuery::new(&info.till_code).with_title(true))
        .unwrap();
    assert!(!titled.account_title.is_empty());
    let alias = client.get_alias(&info.alias_id).unwrap();
    assert_eq!(alias.alias_value, info.till_code);
    let ledger = client.get_ledger_account().unwrap();
    assert_eq!(ledger.currency, Currency::PKR);
    let hooks = client.list_webhooks(&WebhookQuery::new()).unwrap();
    assert!(hooks.items.iter().all(|h| h.event_filter().is_ok()));
    let rotated = client
        .rotate_access_key(info.access_key_id.as_ref().unwrap())
        .unwrap();
    assert_ne!(rotated.secret.expose(), "");
    let stats = client.stats();
    assert!(
        stats.requests >= 20 && stats.bytes_received > 0,
        "{stats:?}"
    );
}

#[test]
fn filters_are_honoured_end_to_end() {
    let (_server, client) = mock();
    for status in [
        BatchStatus::Created,
        BatchStatus::Processing,
        BatchStatus::Completed,
        BatchStatus::Failed,
    ] {
        let page = client
            .list_settlement_batches(&BatchQuery::new().status(status.clone()).limit(100))
            .unwrap();
        assert!(page.items.iter().all(|b| b.status == status));
    }
    let first = client
        .list_settlement_batches(&BatchQuery::new())
        .unwrap()
        .items[3]
        .clone();
    let one = client
        .list_settlement_batches(&BatchQuery::new().batch_id(first.token.clone()))
        .unwrap();
    assert_eq!(one.items, vec![first]);
    let inactive: Vec<_> = client
        .access_keys(&KeyQuery::new().is_active(false))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!inactive.is_empty() && inactive.iter().all(|k| !k.is_active));
    let named = client
        .list_access_keys(&KeyQuery::new().names(["primary"]))
        .unwrap();
    assert_eq!(named.items.len(), 1);
    let disabled: Vec<_> = client
        .merchants(&MerchantQuery::new().enabled(false))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!disabled.is_empty() && disabled.iter().all(|m| !m.enabled));
    let ids = [disabled[0].token.clone()];
    let by_id = client
        .list_merchants(&MerchantQuery::new().identifiers(ids))
        .unwrap();
    assert_eq!(by_id.items, vec![disabled[0].clone()]);
    let by_name = client
        .list_merchants(&MerchantQuery::new().names([disabled[0].name.clone()]))
        .unwrap();
    assert!(by_name.items.contains(&disabled[0]));
    let suspended = client
        .list_rail_merchants(&RailMerchantQuery::new().status(RailMerchantStatus::Suspended))
        .unwrap();
    assert!(
        suspended
            .items
            .iter()
            .all(|m| m.status == RailMerchantStatus::Suspended)
    );
    let named = client
        .list_rail_merchants(&RailMerchantQuery::new().name("pending"))
        .unwrap();
    assert_eq!(named.count, 3);
    let dynamic: Vec<_> = client
        .qr_codes(&QrCodeQuery::new().qr_type(QrType::Dynamic))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!dynamic.is_empty() && dynamic.iter().all(|q| q.qr_type == QrType::Dynamic));
    let mine = client
        .list_qr_codes(
            &QrCodeQuery::new()
                .qr_type(QrType::Dynamic)
                .aggregator_merchant_id(dynamic[0].aggregator_merchant_id.clone()),
        )
        .unwrap();
    assert!(
        mine.items
            .iter()
            .all(|q| q.aggregator_merchant_id == dynamic[0].aggregator_merchant_id)
    );
    let all: Vec<Refund> = client
        .refunds(&RefundQuery::new().direction(Direction::Asc))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(all.windows(2).all(|w| w[0].created_at <= w[1].created_at));
    let failed = client
        .list_refunds(
            &RefundQuery::new()
                .statuses([RefundStatus::Failed, RefundStatus::Canceled])
                .limit(100),
        )
        .unwrap();
    assert!(
        failed
            .items
            .iter()
            .all(|r| matches!(r.status, RefundStatus::Failed | RefundStatus::Canceled))
    );
    let r = &all[5];
    for q in [
        RefundQuery::new().payment_ids([r.payment_id.clone()]),
        RefundQuery::new().trace_references([r.trace_reference.clone()]),
        RefundQuery::new().msg_ids([r.msg_id.clone()]),
        RefundQuery::new().return_ids([r.return_id.clone()]),
        RefundQuery::new().request_ids([r.request_id.clone()]),
        RefundQuery::new().refund_ids([r.token.clone()]),
        RefundQuery::new()
            .created_from(r.created_at)
            .created_to(r.created_at),
    ] {
        let got = client.list_refunds(&q.clone().limit(100)).unwrap();
        assert!(got.items.contains(r), "{q:?}");
    }
}

#[test]
fn a_prefixed_base_url_with_or_without_slash_works() {
    let server = MockServer::start(MockConfig::new().path_prefix("/pay/api")).unwrap();
    for base in [server.url().to_owned(), format!("{}/", server.url())] {
        let client = Client::builder(base, server.aggregator_id().clone(), server.secret_key())
            .build()
            .unwrap();
        client.get_ledger_account().unwrap();
    }
}

#[test]
fn invalid_input_is_refused_before_any_request() {
    assert!(matches!(
        PaymentId::parse("txn_123").map_err(Error::into_kind),
        Err(ErrorKind::InvalidInput { .. })
    ));
    assert!(BatchToken::parse("sb_0f8fad5b").is_err());
    // A server that would record anything sent.
    let server = Scripted::start(vec![json(200, "{}")]);
    let client = server.client(|b| b);
    // A merchant export without its merchant can only come from outside
    // (deserialized); it is refused all the same.
    let merchantless: NewReportExport = serde_json::from_value(serde_json::json!({
        "settlement_batch_id": token(),
        "kind": "REPORT_KIND_MERCHANT",
    }))
    .unwrap();
    for err in [
        client.create_report_export(&merchantless).unwrap_err(),
        client
            .list_access_keys(&KeyQuery::new().names(["a,b"]))
            .unwrap_err(),
        client
            .list_settlement_batches(&BatchQuery::new().status(BatchStatus::from("BATCH_NEW")))
            .unwrap_err(),
        client
            .fetch_till_code_title(&TillCodeQuery::new(""))
            .unwrap_err(),
        client
            .get_account_info(&AccountQuery::iban(""))
            .unwrap_err(),
    ] {
        assert!(
            matches!(err.kind(), ErrorKind::InvalidInput { .. }),
            "{err}"
        );
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[test]
fn queries_reach_the_wire_with_the_documented_names() {
    let empty_batch = r#"{"api_version":"v1","data":{"batches":[],"next_cursor":"","count":{"filtered_count":"0","total_count":"0"}}}"#;
    let server = Scripted::start(vec![json(200, empty_batch)]);
    server
        .client(|b| b)
        .list_settlement_batches(
            &BatchQuery::new()
                .cursor("77")
                .limit(100)
                .direction(Direction::Asc)
                .batch_id(token())
                .status(BatchStatus::Completed),
        )
        .unwrap();
    let head = &server.requests()[0];
    assert!(
        head.starts_with("GET /v1/aggregators/agg_test/settlements/batches?cursor=77&limit=100&direction=ASC&batch_id=sb_0f8fad5b-d9cb-469f-a165-70867728950e&status=2 HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("x-pay-aggregator-secret-key: s3cr3t-key-value")
    );
    assert!(head.contains("aggpay/"), "user agent: {head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("accept-encoding: gzip, deflate"),
        "{head}"
    );
    // Compression turned off: only the identity coding is asked for.
    let plain = Scripted::start(vec![json(200, empty_batch)]);
    plain
        .client(|b| b.compression(false))
        .list_settlement_batches(&BatchQuery::new())
        .unwrap();
    let head = plain.requests()[0].to_ascii_lowercase();
    assert!(head.contains("accept-encoding: identity"), "{head}");

    let refunds = Scripted::start(vec![json(
        200,
        r#"{"api_version":"v1","data":{"count":0,"keys":[]}}"#,
    )]);
    refunds
        .client(|b| b)
        .list_refunds(
            &RefundQuery::new()
                .statuses([RefundStatus::Completed, RefundStatus::Failed])
                .request_ids(["a b", "c&d"])
                .limit(5),
        )
        .unwrap();
    let head = &refunds.requests()[0];
    assert!(
        head.starts_with("GET /v1/aggregators/agg_test/refunds?limit=5&status=R_COMPLETED&status=R_FAILED&request_id=a%20b&request_id=c%26d HTTP"),
        "{head}"
    );

    let merchants = Scripted::start(vec![json(
        200,
        r#"{"api_version":"v1","data":{"merchants":[],"count":"0"}}"#,
    )]);
    merchants
        .client(|b| b)
        .list_merchants(&MerchantQuery::new().enabled(true).names(["A", "B"]))
        .unwrap();
    assert!(
        merchants.requests()[0]
            .starts_with("GET /v1/aggregators/agg_test/merchants?enabled=true&names=A%2CB HTTP"),
        "{}",
        merchants.requests()[0]
    );

    let payouts = Scripted::start(vec![json(
        200,
        r#"{"api_version":"v1","data":{"settlement_transactions":[],"transactions":[],"next_cursor":"","count":{"filtered_count":"0","total_count":"0"}}}"#,
    )]);
    payouts
        .client(|b| b)
        .list_batch_payouts(&token(), &TransactionQuery::new().limit(3))
        .unwrap();
    assert!(
        payouts.requests()[0].starts_with(
            "GET /v1/aggregators/agg_test/settlements/batches/sb_0f8fad5b-d9cb-469f-a165-70867728950e/transactions?limit=3&only_settlement_txns=true HTTP"
        ),
        "{}",
        payouts.requests()[0]
    );
}

#[test]
fn tolerant_reading_keeps_unknown_values_and_ignores_unknown_fields() {
    let server = Scripted::start(vec![json(200, crate::support::LEDGER)]);
    let ledger = server.client(|b| b).get_ledger_account().unwrap();
    assert_eq!(
        ledger.account_type,
        LedgerAccountType::Other("ACCT_NEW_KIND".into())
    );
    assert_eq!(ledger.running_balance, Paisa::new(-5));
    let counts = Scripted::start(vec![json(
        200,
        r#"{"api_version":"v1","data":{"count":"2","keys":[]}}"#,
    )]);
    assert_eq!(
        counts
            .client(|b| b)
            .list_access_keys(&KeyQuery::new())
            .unwrap()
            .count,
        2
    );
}

/// A server that gives the ids API.md does not call numeric as UUIDs
/// ("Most records carry a numeric `id`"): every such record is read, its
/// id kept as sent; the ids API.md calls numeric stay numbers.
#[test]
fn records_whose_ids_api_md_does_not_call_numeric_are_read_whatever_their_form() {
    let server =
        MockServer::start(MockConfig::new().seed(4).legal(aggpay_mock::Legal::UuidIds)).unwrap();
    let client = crate::support::client_for(&server);
    let info = server.info();
    let uuid = |id: &RecordId| {
        assert_eq!(id.as_numeric(), None, "{id}");
        assert_eq!(id.as_str().len(), 36, "{id}");
    };
    let aggregator = client.get_aggregator().unwrap();
    uuid(&aggregator.id);
    uuid(&aggregator.bank_account.id);
    let rail: Vec<RailMerchant> = client
        .rail_merchants(&RailMerchantQuery::new())
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!rail.is_empty());
    rail.iter().for_each(|m| uuid(&m.id));
    let one = client.get_rail_merchant(&rail[0].token).unwrap();
    assert_eq!(one.id, rail[0].id, "one record, one id, in every answer");
    let qrs = client.list_qr_codes(&QrCodeQuery::new()).unwrap();
    qrs.items.iter().for_each(|q| uuid(&q.id));
    uuid(&client.get_alias(&info.alias_id).unwrap().id);
    uuid(&client.get_ledger_account().unwrap().id);
    let batches = client.list_settlement_batches(&BatchQuery::new()).unwrap();
    assert!(batches.items.iter().all(|b| b.id.get() > 0));
}
