//! client.decodes: the typed aggpay client reads what the server sends,
//! in every answer of the run.

use aggpay_mock::Fault;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::observe::{Cases, Observed};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::OpId;
use crate::contract::subject::{Subject, on};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "client.decodes",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Resources (the aggpay client's models follow them)",
        claims: &[Claim {
            holds: "every record decodes as the typed client reads API.md",
            says: &["## Resources and their fields"],
        }],
        summary: "the typed aggpay client decodes every record of every answer",
        faults: &[
            Fault::MissingField,
            Fault::WrongTxnPrefix,
            Fault::NumericIdAsNumber,
            Fault::ShortBatchToken,
            Fault::DecimalAmounts,
            Fault::LowercaseCurrency,
            Fault::EmptyStringNull,
            Fault::DatetimeAliasDates,
            Fault::UnlinkedMerchantBadTimestamp,
            Fault::DynamicQrPrefix,
            Fault::AliasRecordIdBad,
            Fault::LaterPagesDropField,
        ],
        judges: &[Subject::Answer(on::every_op)],
        run: Run::EveryAnswer(decodes, Cases::Successes),
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

fn decodes(e: &Observed<'_>) -> Option<String> {
    use aggpay::{
        AccessKey, AccountInfo, Aggregator, AggregatorMerchant, Alias, LedgerAccount,
        PaymentCharges, QrCode, RailMerchant, Refund, ReportExport, SettlementBatch, Transaction,
        WebhookEndpoint,
    };
    let (op, data) = (e.op()?, e.data()?);
    let result = match op.id {
        OpId::Aggregator => decode::<Aggregator>(data),
        OpId::Keys => rows::<AccessKey>(data, "keys"),
        OpId::Rotate => decode::<AccessKey>(data),
        OpId::Merchants => rows::<AggregatorMerchant>(data, "merchants"),
        OpId::RailMerchants => rows::<RailMerchant>(data, "merchants"),
        OpId::RailMerchant => decode::<RailMerchant>(data),
        OpId::Qrs => rows::<QrCode>(data, "qr_codes"),
        OpId::Charges => decode::<PaymentCharges>(data),
        OpId::Refunds => rows::<Refund>(data, "keys"),
        OpId::Batches => rows::<SettlementBatch>(data, "batches"),
        OpId::Transactions => rows::<Transaction>(data, "transactions"),
        OpId::ReportExport => decode::<ReportExport>(&data["report_export"]),
        OpId::AccountInfo | OpId::TitleFetch => decode::<AccountInfo>(data),
        OpId::Alias => decode::<Alias>(data),
        OpId::Ledger => decode::<LedgerAccount>(data),
        OpId::Webhooks => rows::<WebhookEndpoint>(data, "endpoints"),
    };
    // Payout elements are not shown by API.md: `wire.payout-shape`.
    result
        .err()
        .map(|why| format!("{}: the aggpay client cannot decode it: {why}", op.name))
}
