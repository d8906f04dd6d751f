//! client.decodes: the typed aggpay client reads what the server sends.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Level, Outcome, Rule};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "client.decodes",
        level: Level::Required,
        source: "API.md Resources (the aggpay client's models follow them)",
        summary: "the typed aggpay client decodes every sampled record",
        faults: &[
            "missing-field",
            "numeric-id-as-number",
            "wrong-txn-prefix",
            "short-batch-token",
            "decimal-amounts",
            "lowercase-currency",
            "empty-string-null",
            "datetime-alias-dates",
            "unlinked-merchant-bad-timestamp",
            "dynamic-qr-prefix",
            "bank-account-bad-id",
        ],
        check: client_decodes,
        observe: None,
    }]
}

/// `value` read with the client's model `T`.
fn decode<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    T::deserialize(value).map(|_| ()).map_err(|e| e.to_string())
}

/// Every record under `data[key]` read with the client's model `T`.
fn rows<T: DeserializeOwned>(data: &Value, key: &str) -> Result<(), String> {
    let items = data[key]
        .as_array()
        .ok_or_else(|| format!("no {key} array"))?;
    items
        .iter()
        .enumerate()
        .try_for_each(|(i, row)| decode::<T>(row).map_err(|e| format!("{key}[{i}]: {e}")))
}

fn client_decodes(c: &Check<'_>) -> Outcome {
    use aggpay::*;
    let mut judge = Judge::default();
    for sample in &c.ctx.samples {
        let Some(data) = sample.exchange.data() else {
            continue;
        };
        let result = match sample.op {
            "aggregator" => decode::<Aggregator>(data),
            "keys" => rows::<AccessKey>(data, "keys"),
            "rotate" => decode::<AccessKey>(data),
            "merchants" => rows::<AggregatorMerchant>(data, "merchants"),
            "rail-merchants" => rows::<RailMerchant>(data, "merchants"),
            "rail-merchant" => decode::<RailMerchant>(data),
            "qrs" | "qrs-dynamic" => rows::<QrCode>(data, "qr_codes"),
            "charges" => decode::<PaymentCharges>(data),
            "refunds" => rows::<Refund>(data, "keys"),
            "batches" => rows::<SettlementBatch>(data, "batches"),
            "transactions" => rows::<Transaction>(data, "transactions"),
            "report-export" | "report-export-merchant" => {
                decode::<ReportExport>(&data["report_export"])
            }
            "account-info" | "account-info-mobile" | "title-fetch" => decode::<AccountInfo>(data),
            "alias" => decode::<Alias>(data),
            "ledger" => decode::<LedgerAccount>(data),
            "webhooks" => rows::<WebhookEndpoint>(data, "endpoints"),
            // Payout elements are not shown by API.md: `wire.payout-shape`.
            _ => continue,
        };
        judge.check(result.is_ok(), || {
            c.fail(
                &sample.exchange,
                format!(
                    "{}: the aggpay client cannot decode it: {}",
                    sample.op,
                    result.err().unwrap_or_default()
                ),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped("no operation answered with a success to decode");
    }
    judge.outcome()
}
