//! amounts.*: amounts are paisa strings, currencies ISO 4217 codes, and
//! net is gross minus the fee and the four taxes, on every row.

use aggpay_internal::syntax;
use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, first_of, rows_of, strings};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::FieldKind;
use crate::contract::subject::{Said, Subject};
use crate::http::show;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "amounts.paisa",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 3",
            claims: &[Claim {
                holds: "an amount is a decimal integer string",
                says: &[
                    "Amounts are decimal integer strings in the lowest currency denomination (paisa).",
                ],
            }],
            summary: "amounts are decimal integer strings in paisa",
            faults: &[Fault::DecimalAmounts],
            judges: &[
                Subject::Field(|k| k == FieldKind::Amount),
                Subject::Said(Said::Amounts),
            ],
            run: Run::EveryAnswer(paisa, Cases::Successes),
        },
        Rule {
            id: "amounts.net",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md PaymentCharges (net_amount) and Transaction (same meaning as in PaymentCharges)",
            claims: &[Claim {
                holds: "net_amount is gross_amount less the fee and the four taxes",
                says: &[
                    "amount credited to the merchant; equals gross_amount minus fee_amount and the four tax amounts below",
                ],
            }],
            summary: "net_amount equals gross_amount minus fee_amount and the four tax amounts, on every charges and every transaction of every answer, refunds included",
            faults: &[Fault::NetMismatch, Fault::RefundNetMismatch],
            judges: &[Subject::Said(Said::NetAmount)],
            run: Run::EveryAnswer(net, Cases::Successes),
        },
        Rule {
            id: "amounts.currency",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 3",
            claims: &[Claim {
                holds: "currency is an ISO 4217 code",
                says: &["`currency` is an ISO 4217 code."],
            }],
            summary: "currency is an ISO 4217 code",
            faults: &[Fault::LowercaseCurrency],
            judges: &[
                Subject::Field(|k| k == FieldKind::Currency),
                Subject::Said(Said::Amounts),
            ],
            run: Run::EveryAnswer(currency, Cases::Successes),
        },
    ]
}

fn paisa(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::Amount,
        |_, s| {
            if syntax::is_paisa(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an integer amount in paisa"))
            }
        },
    )
}

fn currency(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::Currency,
        |_, s| {
            if syntax::is_currency(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an ISO 4217 code"))
            }
        },
    )
}

/// Why `row`'s net is not gross minus the fee and the four taxes, if so;
/// unparsable amounts are `amounts.paisa`'s business.
fn net_of(row: &Value) -> Option<String> {
    let amount = |f: &str| {
        row[f]
            .as_str()
            .filter(|s| syntax::is_paisa(s))
            .and_then(|s| s.parse::<i128>().ok())
    };
    let p: Vec<i128> = [
        "gross_amount",
        "fee_amount",
        "sales_tax_on_fee_amount",
        "sales_tax_withholding_amount",
        "income_tax_withholding_amount",
        "digital_tax_amount",
        "net_amount",
    ]
    .iter()
    .map(|f| amount(f))
    .collect::<Option<_>>()?;
    let expected = p[0] - p[1] - p[2] - p[3] - p[4] - p[5];
    (expected != p[6]).then(|| {
        format!(
            "net_amount {} but gross minus fee and taxes is {expected} ({} {})",
            p[6],
            show(row.get("transaction_type").or(row.get("payment_id"))),
            show(row.get("token"))
        )
    })
}

fn net(e: &Observed<'_>) -> Option<String> {
    let charges = e
        .op()
        .filter(|o| o.name == "charges")
        .and_then(|_| e.data())
        .and_then(net_of)
        .map(|why| format!("charges: {why}"));
    first_of(
        charges.into_iter().chain(
            rows_of(e, "transactions", "transactions")
                .filter_map(net_of)
                .map(|why| format!("transactions: {why}")),
        ),
    )
}
