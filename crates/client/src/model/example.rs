//! `example()` on every model (the `test-util` feature; see the crate
//! documentation, "Testing code built on this crate").

use std::sync::LazyLock;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    AccessKey, AccountInfo, Aggregator, AggregatorMerchant, Alias, LedgerAccount, PaymentCharges,
    QrCode, RailMerchant, Refund, ReportExport, SettlementBatch, SettlementPayout, Transaction,
    WebhookEndpoint,
};

/// One record of each model, as the service sends them (secrets are
/// placeholders).
static EXAMPLES: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(include_str!("examples.json")).unwrap_or(Value::Null));

/// The example of `name`, decoded.
fn example<T: DeserializeOwned>(name: &str) -> T {
    // The examples are this crate's own data; the unit test below
    // decodes every one of them.
    serde_json::from_value(EXAMPLES[name].clone())
        .unwrap_or_else(|e| panic!("the built-in example of {name} does not decode: {e}"))
}

macro_rules! examples {
    ($($model:ident),* $(,)?) => {
        $(
            impl $model {
                #[doc = concat!("A plausible `", stringify!($model), "`, for tests: set the fields a test needs.")]
                pub fn example() -> Self {
                    example(stringify!($model))
                }
            }
        )*

        #[cfg(test)]
        mod tests {
            use super::*;

            #[test]
            fn every_example_decodes() {
                $( let _ = $model::example(); )*
                let names = EXAMPLES.as_object().map(|o| o.len());
                assert_eq!(names, Some([$(stringify!($model)),*].len()));
            }
        }
    };
}

examples!(
    AccessKey,
    AccountInfo,
    Aggregator,
    AggregatorMerchant,
    Alias,
    LedgerAccount,
    PaymentCharges,
    QrCode,
    RailMerchant,
    Refund,
    ReportExport,
    SettlementBatch,
    SettlementPayout,
    Transaction,
    WebhookEndpoint,
);
