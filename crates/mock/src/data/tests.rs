use super::*;
use crate::config::MockConfig;
use aggpay_internal::syntax;

/// The client's reading of a row the mock wrote.
fn read<M: serde::de::DeserializeOwned>(row: &impl serde::Serialize) -> M {
    serde_json::from_value(serde_json::to_value(row).unwrap()).unwrap()
}

fn data() -> Dataset {
    Dataset::new(
        7,
        MockConfig::new().large_batch_transactions(1_000_000).sizes,
    )
}

#[test]
fn every_generated_row_serializes_with_valid_identifiers() {
    let d = data();
    for i in 0..d.sizes.batches {
        let b = d.batch(i);
        let token = d.batch_token(i);
        assert!(syntax::is_batch_token(b.token.as_str()));
        assert_eq!(View::fixed(&d).batch_index(b.token.as_str()), Some(i));
        for j in 0..d.transaction_count(i).min(40) {
            let t = d.transaction_of(i, &token, j);
            let model: aggpay::Transaction = read(&t);
            assert_eq!(model.expected_net(), Some(t.net_amount));
            assert_eq!(*t.latest_batch_id, b.token);
            assert_eq!(t.refund_id.is_some(), j % 16 == 15);
            let (pb, pj) = View::fixed(&d)
                .payment_location(t.payment_id.as_str())
                .unwrap();
            assert_eq!(d.charges(pb, pj).net_amount, t.net_amount);
        }
        for k in 0..d.payout_count(i) {
            let _ = serde_json::to_value(d.payout(i, k, d.transaction_count(i))).unwrap();
        }
    }
    for i in 0..d.sizes.merchants {
        let m = d.merchant(i);
        assert_eq!(d.merchant_index(m.token.as_str()), Some(i));
        assert_eq!(d.rail_merchant_index(m.merchant_id.as_str()), Some(i));
        assert_eq!(d.alias_index(d.alias(i).token.as_str()), Some(i));
        assert_eq!(d.account_by_iban(&d.merchant_iban(i)), Some(i));
        assert_eq!(d.account_by_till(&d.till_code(i)), Some(i));
        assert_eq!(d.account_by_mobile(&d.rail_mobile(i)), Some(i));
    }
    for i in 0..d.rail_merchant_count() {
        let _ = serde_json::to_value(d.rail_merchant(i)).unwrap();
    }
    for i in 0..d.sizes.refunds {
        let r = d.refund(i);
        assert!(
            View::fixed(&d)
                .payment_location(r.payment_id.as_str())
                .is_some()
        );
        assert_eq!(
            r.settle_at.is_some(),
            r.status == aggpay::RefundStatus::Completed
        );
    }
    for i in 0..d.sizes.webhooks {
        let hook: aggpay::WebhookEndpoint = read(&d.webhook(i));
        assert!(!hook.event_filter().unwrap().is_empty());
    }
    let keys = d.initial_keys();
    assert!(
        keys.iter()
            .any(|k| matches!(k.id, aggpay::AccessKeyRecordId::Numeric(_)))
    );
    assert!(
        keys.iter()
            .any(|k| matches!(k.id, aggpay::AccessKeyRecordId::Key(_)))
    );
    assert!(keys.iter().any(|k| !k.is_active));
    // The key in use and two more to rotate (`MockInfo`'s samples).
    assert!(
        keys[..3]
            .iter()
            .all(|k| k.is_active && k.access_key_id().is_some())
    );
    let _ = serde_json::to_value(d.aggregator(keys)).unwrap();
    let _ = serde_json::to_value(d.ledger_account()).unwrap();
}

#[test]
fn unknown_identifiers_are_not_found() {
    let d = data();
    let mut other = d.batch_token(3).into_string();
    other.replace_range(38.., if other.ends_with('0') { "1" } else { "0" });
    assert_eq!(View::fixed(&d).batch_index(&other), None);
    assert_eq!(
        View::fixed(&d).batch_index("sb_zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"),
        None
    );
    assert_eq!(
        View::fixed(&d).payment_location("pm_0000000000000000"),
        None
    );
    // A refund transaction's index is not a payment.
    let b = d.large_batch().unwrap();
    assert_eq!(
        View::fixed(&d).payment_location(d.payment_id(b, 15).as_str()),
        None
    );
    assert!(
        View::fixed(&d)
            .payment_location(d.payment_id(b, 14).as_str())
            .is_some()
    );
}

#[test]
fn statuses_are_dealt_so_filters_need_no_scan() {
    let d = data();
    let n = d.sizes.batches;
    for status in 0..4u8 {
        let seq = BatchSeq::with_status(View::fixed(&d), status);
        let expected: Vec<u64> = (0..n).filter(|i| d.batch_status(*i) == status).collect();
        let got: Vec<u64> = (0..seq.len()).map(|k| seq.index_at(k)).collect();
        assert_eq!(got, expected, "status {status}");
    }
    assert_eq!(d.batch_status(d.large_batch().unwrap()), 2);
}

#[test]
fn deep_pages_are_cheap_and_ordered() {
    let d = data();
    let b = d.large_batch().unwrap();
    let rows = View::fixed(&d).rows(b, false);
    let last = rows.id_at(rows.len() - 1);
    let page = cursor_page(&rows, last, 100, false);
    assert_eq!(page.len(), 100);
    assert_eq!(page[0], rows.len() - 2);
    let ids: Vec<u64> = page.iter().map(|k| rows.id_at(*k)).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
}

/// What the mock writes, the client reads, and the client's model writes
/// back the very same JSON: the two sides agree on every field (but the
/// secrets, which the client's models serialize as `<redacted>`).
#[test]
fn the_client_reads_every_row_exactly() {
    fn redact(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if k == "secret" {
                        *v = serde_json::Value::from("<redacted>");
                    } else {
                        redact(v);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(redact),
            _ => {}
        }
    }
    fn round<M: serde::de::DeserializeOwned + serde::Serialize>(row: impl serde::Serialize) {
        let mut wire = serde_json::to_value(&row).unwrap();
        let model: M = serde_json::from_value(wire.clone()).unwrap();
        redact(&mut wire);
        assert_eq!(serde_json::to_value(&model).unwrap(), wire);
    }
    let d = data();
    for i in 0..20 {
        round::<aggpay::SettlementBatch>(d.batch(i));
        if d.transaction_count(i) > 16 {
            let token = d.batch_token(i);
            round::<aggpay::Transaction>(d.transaction_of(i, &token, 15));
            round::<aggpay::Transaction>(d.transaction_of(i, &token, 3));
            round::<aggpay::SettlementPayout>(d.payout(i, 0, d.transaction_count(i)));
            round::<aggpay::PaymentCharges>(d.charges(i, 3));
        }
        round::<aggpay::AggregatorMerchant>(d.merchant(i % d.sizes.merchants));
        round::<aggpay::RailMerchant>(d.rail_merchant(i % d.rail_merchant_count()));
        round::<aggpay::QrCode>(d.qr_code(i));
        round::<aggpay::Refund>(d.refund(i));
        round::<aggpay::WebhookEndpoint>(d.webhook(i % d.sizes.webhooks));
        round::<aggpay::Alias>(d.alias(i % d.sizes.merchants));
        round::<aggpay::AccountInfo>(d.account_info(i % d.sizes.merchants, i % 2 == 0, i % 3 == 0));
    }
    round::<aggpay::Aggregator>(d.aggregator(d.initial_keys()));
    // The secrets themselves are read in clear.
    let keys = d.initial_keys();
    let wire = serde_json::to_value(d.aggregator(keys.clone())).unwrap();
    let model: aggpay::Aggregator = serde_json::from_value(wire.clone()).unwrap();
    for (k, w) in model.keys.iter().zip(wire["keys"].as_array().unwrap()) {
        assert_eq!(k.secret.expose(), w["secret"].as_str().unwrap());
    }
    round::<aggpay::LedgerAccount>(d.ledger_account());
}

/// Payouts reconcile with transactions, as a real service's do: for every
/// batch of the default data, each merchant's payout carries exactly the
/// sums of its transactions (refunds taken away), amount by amount; the
/// merchants paid are those with transactions; the sums keep the net
/// relation; a refund belongs to its payment's merchant.
#[test]
fn payouts_reconcile_with_the_transactions_of_every_batch() {
    let d = data();
    let mut paid = 0;
    for b in 0..d.sizes.batches {
        let n = d.transaction_count(b);
        let token = d.batch_token(b);
        let mut expected: std::collections::BTreeMap<String, [i64; 7]> = Default::default();
        for j in 0..n {
            let t = d.transaction_of(b, &token, j);
            let sign = if t.refund_id.is_some() { -1 } else { 1 };
            if t.refund_id.is_some() {
                let payment = d.transaction_of(b, &token, j - 1);
                assert_eq!(t.aggregator_merchant_id, payment.aggregator_merchant_id);
                assert_eq!(t.payment_id, payment.payment_id);
            }
            let amounts = [
                &t.gross_amount,
                &t.fee_amount,
                &t.net_amount,
                &t.sales_tax_on_fee_amount,
                &t.sales_tax_withholding_amount,
                &t.income_tax_withholding_amount,
                &t.digital_tax_amount,
            ];
            let sum = expected
                .entry(t.aggregator_merchant_id.to_string())
                .or_default();
            for (s, a) in sum.iter_mut().zip(amounts) {
                *s += sign * a.get();
            }
        }
        let payouts: Vec<_> = (0..d.payout_count(b)).map(|k| d.payout(b, k, n)).collect();
        assert_eq!(payouts.len(), expected.len(), "batch {b}");
        for p in &payouts {
            let want = expected
                .get(p.aggregator_merchant_id.as_str())
                .unwrap_or_else(|| panic!("batch {b}: a payout to a merchant without rows"));
            let got = [
                &p.gross_amount,
                &p.fee_amount,
                &p.net_amount,
                &p.sales_tax_on_fee_amount,
                &p.sales_tax_withholding_amount,
                &p.income_tax_withholding_amount,
                &p.digital_tax_amount,
            ]
            .map(|a| a.get());
            assert_eq!(&got, want, "batch {b}, payout {}", p.token);
            assert_eq!(got[2], got[0] - got[1] - got[3] - got[4] - got[5] - got[6]);
            assert!(got[0] >= 0, "batch {b}: a negative payout");
        }
        paid += u64::from(!payouts.is_empty());
    }
    assert!(paid > 10, "only {paid} batches have payouts");
}
